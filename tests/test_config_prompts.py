"""Templates and samplers: loading, validation, rendering, request building."""
from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pytest

from resolver.config.prompts import build_request, load_sampler, load_template, render_messages, split_sampler
from resolver.core.errors import UserError
from resolver.tasks import Task, TestCase, param

TEMPLATE_NAMES = ["zeroshot", "zeroshot-nosys", "zerocot-nosys", "multishot",
                  "multishot-nosys", "multishot-cot", "unified-cot"]
SAMPLER_NAMES = ["greedy-2k", "greedy-4k", "greedy-8k", "greedy-16k", "greedy-max", "qwen3-think-max"]


@dataclass(frozen=True)
class EchoParams:
    size: int = param(10, low=1, high=100)


class Echo(Task[EchoParams]):
    """A tiny real task: 'repeat the number'. Not registered (test-local)."""

    name = "echo"
    answer_kind = "integer"
    description = "Repeat the number."
    answer_format = "Final Answer: <integer>"
    Params = EchoParams

    def generate(self, p, rng):
        n = rng.randint(0, p.size)
        return TestCase(input=f"Number: {n}", target=str(n))


ECHO = Echo()
CASE = TestCase(input="Number: 77 {not a placeholder}", target="77")


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_template_renders_and_ends_with_the_problem(repo, name):
    tpl = load_template(repo / "templates" / f"{name}.json")
    msgs = render_messages(tpl, ECHO, {"size": 10}, CASE)
    assert tpl.name == name
    assert msgs[-1]["role"] == "user" and msgs[-1]["content"].endswith(CASE.input)
    assert all(set(m) == {"role", "content"} and m["role"] in ("system", "user", "assistant") for m in msgs)
    text = json.dumps(msgs)
    assert "Repeat the number." in text and "Final Answer: <integer>" in text
    assert "{task_description}" not in text and "{input}" not in text
    assert ("nosys" in name) == (msgs[0]["role"] != "system")


def test_zerocot_nosys_matches_seed_004_shape(repo):
    msgs = render_messages(load_template(repo / "templates/zerocot-nosys.json"), ECHO, {}, CASE)
    assert msgs == [{"role": "user", "content":
                     "Repeat the number. Think step by step, then respond with Final Answer: <integer>\n"
                     "Number: 77 {not a placeholder}"}]


def test_multishot_turns_are_deterministic_examples(repo):
    tpl = load_template(repo / "templates/multishot.json")
    msgs = render_messages(tpl, ECHO, {"size": 10}, CASE)
    roles = [m["role"] for m in msgs]
    assert roles == ["system"] + ["user", "assistant"] * 3 + ["user"]
    # independent reconstruction of the documented example source
    import hashlib
    seed = int(hashlib.sha256(b"examples:echo").hexdigest()[-8:], 16)
    expected = ECHO.generate_cases({"size": 10}, random.Random(seed), 3)
    assert [m["content"] for m in msgs[1:-1:2]] == [c.input for c in expected]
    assert [m["content"] for m in msgs[2:-1:2]] == [f"Final Answer: {c.target}" for c in expected]


def test_multishot_nosys_examples_carry_instructions(repo):
    msgs = render_messages(load_template(repo / "templates/multishot-nosys.json"), ECHO, {}, CASE)
    assert all(m["content"].startswith("Repeat the number.") for m in msgs if m["role"] == "user")


def test_examples_placeholder_inline(tmp_path):
    p = tmp_path / "inline.json"
    p.write_text(json.dumps({"shots": 2, "messages": [{"role": "user", "content": "{examples}\n\n{input}"}]}))
    content = render_messages(load_template(p), ECHO, {}, CASE)[0]["content"]
    assert content.startswith("Example 1:\nNumber: ") and "Example 2:" in content and "Example 3" not in content


@pytest.mark.parametrize("body,fragment", [
    ({"messages": [{"role": "user", "content": "{question}"}]}, "unknown placeholder {question}"),
    ({"messages": [{"role": "user", "content": "{input} then"}]}, "ends with {input}"),
    ({"messages": [{"role": "robot", "content": "{input}"}]}, "messages[0].role"),
    ({"messages": []}, "non-empty list"),
    ({"messages": [{"role": "user", "content": "{input}"}], "shot": 2}, "unknown key 'shot'"),
    ({"messages": [{"role": "user", "content": "{inp"}]}, "bad placeholder syntax"),
])
def test_bad_templates(tmp_path, body, fragment):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(body))
    with pytest.raises(UserError) as err:
        load_template(p)
    assert fragment in str(err.value) and str(p) in str(err.value)


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_template(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text("{oops")
    with pytest.raises(UserError, match="not valid JSON"):
        load_sampler(tmp_path / "x.json")


@pytest.mark.parametrize("name", SAMPLER_NAMES)
def test_samplers_load(repo, name):
    s = load_sampler(repo / "samplers" / f"{name}.json")
    assert s.name == name and s.params["max_tokens"] >= 2048


def test_qwen3_sampler_split_and_request(repo):
    s = load_sampler(repo / "samplers/qwen3-think-max.json")
    standard, extra = split_sampler(s)
    assert standard == {"temperature": 0.6, "top_p": 0.95, "max_tokens": 32768}
    assert extra == {"top_k": 20, "min_p": 0.0}
    msgs = [{"role": "user", "content": "hi"}]
    assert build_request("m", msgs, s) == {"model": "m", "messages": msgs, "temperature": 0.6,
                                          "top_p": 0.95, "max_tokens": 32768, "top_k": 20, "min_p": 0.0}


def test_greedy_sizes(repo):
    sizes = {n: load_sampler(repo / f"samplers/greedy-{n}.json").params["max_tokens"] for n in ("2k", "4k", "8k", "16k")}
    assert sizes == {"2k": 2048, "4k": 4096, "8k": 8192, "16k": 16384}


def test_explicit_extra_body(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"temperature": 0, "extra_body": {"guided_choice": ["a"]}}))
    assert split_sampler(load_sampler(p)) == ({"temperature": 0}, {"guided_choice": ["a"]})


@pytest.mark.parametrize("body,fragment", [
    ({"temprature": 0}, "unknown sampler key 'temprature'"),
    ({"temperature": -1}, "'temperature' must be a number"),
    ({"max_tokens": 0}, "'max_tokens' must be a positive integer"),
    ({"top_k": 1.5}, "'top_k'"),
    ([1, 2], "must be a JSON object"),
])
def test_bad_samplers(tmp_path, body, fragment):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(body))
    with pytest.raises(UserError) as err:
        load_sampler(p)
    assert fragment in str(err.value)
