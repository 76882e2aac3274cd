"""Batch mode: the vLLM run-batch file formats, and write-batch -> "vLLM" -> read-batch rounds.

A small harness plays `vllm run-batch`: it answers every input line by sending its
body to the simulator and writes vLLM's output format (the current response.body
wrapper and the older bare shape), plus error lines, a non-200 status, blank
lines and an id that belongs to no request.
"""
from __future__ import annotations

import json
import urllib.request
import uuid

import pytest

from resolver.client.cache import request_key
from resolver.core.errors import UserError
from resolver.run.batch import batch_line, read_batch_output, write_batch_file
from tests.support.runner import TINY, cache_keys, comparable, read_folder, run_folders, runner_args, simulator

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore")]
INPUT_KEYS = {"custom_id", "method", "url", "body"}


def completion(content, finish="stop"):
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}


def wrapped(custom_id, body, status=200):
    return {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": custom_id,
            "response": {"status_code": status, "request_id": f"vllm-batch-{uuid.uuid4().hex}", "body": body},
            "error": None}


def test_input_lines_follow_vllms_format(tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}], "max_tokens": 5,
            "stream": True, "stream_options": {"include_usage": True}}
    line = batch_line("abc", body)
    assert set(line) == INPUT_KEYS and line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    assert "stream" not in line["body"] and "stream_options" not in line["body"]
    n = write_batch_file(tmp_path / "b.ndjson", [("abc", body), ("abc", body), ("def", {**body, "max_tokens": 6})])
    lines = (tmp_path / "b.ndjson").read_text().splitlines()
    assert n == 2 == len(lines) and [json.loads(l)["custom_id"] for l in lines] == ["abc", "def"]


def test_output_lines_in_every_shape(tmp_path):
    lines = [
        wrapped("new", completion("Final Answer: 1")),
        {"id": "vllm-2", "custom_id": "old", "response": completion("Final Answer: 2", "length"), "error": None},
        {"id": "vllm-3", "custom_id": "err", "response": None, "error": "prompt too long"},
        wrapped("bad-status", {"object": "error", "message": "model not found"}, status=404),
        wrapped("no-choices", {"object": "chat.completion", "choices": []}),
        wrapped("new", completion("Final Answer: again")),
    ]
    text = "\n".join(json.dumps(l) for l in lines[:3]) + "\n\n{not json\n" + "\n".join(json.dumps(l) for l in lines[3:]) + "\n"
    (tmp_path / "out.ndjson").write_text(text)
    out = read_batch_output(tmp_path / "out.ndjson")
    assert out.lines == 7 and set(out.answers) == {"new", "old"}
    assert out.answers["new"].content == "Final Answer: 1"        # the first answer is kept
    assert (out.answers["old"].content, out.answers["old"].finish_reason) == ("Final Answer: 2", "length")
    assert out.answers["old"].usage["total_tokens"] == 8
    problems = "\n".join(out.problems)
    for expected in ("line 3 (err): error: prompt too long", "line 5: not valid JSON", "status 404",
                     "model not found", "no-choices", "duplicate custom_id"):
        assert expected in problems
    with pytest.raises(UserError, match="--batch"):
        read_batch_output(tmp_path / "missing.ndjson")


def play_vllm(batch_file, url, out_file, *, errors=0, unknown=False):
    """Answer a run-batch input file through the simulator, in vLLM's output format."""
    out = []
    for n, line in enumerate(batch_file.read_text().splitlines()):
        request = json.loads(line)
        assert set(request) == INPUT_KEYS and request["custom_id"] == request_key(request["body"])
        if n < errors:
            if n % 2:
                out.append({"id": f"vllm-{n}", "custom_id": request["custom_id"], "response": None,
                            "error": "CUDA out of memory"})
            else:
                out.append(wrapped(request["custom_id"], {"object": "error", "message": "overloaded"}, 503))
            continue
        req = urllib.request.Request(f"{url}/v1/chat/completions", data=json.dumps(request["body"]).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.loads(resp.read())
        # Every third answer in the older bare shape.
        out.append({"id": f"vllm-{n}", "custom_id": request["custom_id"], "response": body, "error": None}
                   if n % 3 == 0 else wrapped(request["custom_id"], body))
    if unknown:
        out.append(wrapped("0" * 64, completion("Final Answer: 9")))
    out_file.write_text("\n".join(json.dumps(o) for o in out) + "\n\n")
    return len(out)


def batch_args(tmp_path):
    """The api-mode arguments without --apibase (batch modes need no server)."""
    args = runner_args("unused", tmp_path)
    at = args.index("--apibase")
    return args[:at] + args[at + 2:]


def _runner(*args):
    from conftest import run_script
    return run_script("runner.py", *args)


def requests_of(records, model):
    """The distinct cache keys of records' requests, rebuilt from their messages and the sampler file."""
    return {request_key({"model": model, "messages": r["messages"], **sampler_fields()}) for r in records}


def offline_requests(tmp_path, model, rounds):
    """The distinct requests of `rounds` rounds of every step, from --offline's prompts (its own
    path through the config): what one write-batch must ask for."""
    proc = _runner(*batch_args(tmp_path / "offline"), "--offline", rounds)
    assert proc.returncode == 0, proc.stderr
    [folder] = run_folders(tmp_path / "offline" / "results")
    return requests_of(read_folder(folder), model)


def test_one_batch_cycle_completes_the_run_like_an_api_run(tmp_path):
    """The default: write-batch writes every round up to maxrounds (tiny's low level: 2 rounds of
    4), so one write-batch -> run-batch -> read-batch cycle finishes; read-batch keeps the answers
    beyond the rounds adaptive stopping takes out of the folder and says how many."""
    model = "sim-weak"                                       # some of its steps stop after round 1
    with simulator(TINY) as sim:
        api = _runner(*runner_args(sim.url, tmp_path / "api", model=model))
        assert api.returncode == 0, api.stderr
        reference = read_folder(run_folders(tmp_path / "api" / "results")[0])
        base = batch_args(tmp_path)
        base[base.index("--model") + 1] = model
        wrote = _runner(*base, "--mode", "write-batch")
        assert wrote.returncode == 0, wrote.stderr
        [batch] = sorted((tmp_path / "results").glob("*-offline.ndjson"))
        asked = {json.loads(line)["custom_id"] for line in batch.read_text().splitlines()}
        assert asked == offline_requests(tmp_path, model, 2)
        assert f"write-batch: {len(asked)} requests, 28 rounds for 14 of 14 steps (rounds 1-2: 14 steps)" in wrote.stdout
        assert "next: vllm run-batch -i" in wrote.stdout
        play_vllm(batch, sim.url, tmp_path / "out.ndjson")
        read = _runner(*base, "--mode", "read-batch", "--batch", tmp_path / "out.ndjson")
        assert read.returncode == 0, read.stderr
        assert "all steps complete" in read.stdout and "still need rounds" not in read.stdout
        again = _runner(*base, "--mode", "write-batch")
        assert again.returncode == 0 and "nothing to write" in again.stdout, again.stdout
        assert len(sorted((tmp_path / "results").glob("*-offline.ndjson"))) == 1
    [folder] = run_folders(tmp_path / "results")
    final = read_folder(folder)
    assert comparable(final) == comparable(reference)
    left_out = asked - requests_of(final, model)
    assert left_out and len(final) < 14 * 8                  # adaptive stopping left some answers unused
    assert f"read-batch: {len(left_out)} answers left out of the run folder" in read.stdout
    assert left_out <= cache_keys(tmp_path / "cache")        # ...and the cache keeps them


def test_round_at_a_time_batch_cycles_match_an_api_run(tmp_path):
    """--rounds 1: one round per step per cycle (today's cycle), with failed lines and an unknown id
    in the first output; it takes more than one cycle and ends equal to an API run."""
    with simulator(TINY) as sim:
        api = _runner(*runner_args(sim.url, tmp_path / "api"))
        assert api.returncode == 0, api.stderr
        reference = read_folder(run_folders(tmp_path / "api" / "results")[0])
        base = [*batch_args(tmp_path), "--rounds", "1"]
        batches = []
        for attempt in range(6):
            wrote = _runner(*base, "--mode", "write-batch")
            assert wrote.returncode == 0, wrote.stderr
            if "nothing to write" in wrote.stdout:
                break
            assert "rounds 1-" not in wrote.stdout and "rounds 2-" not in wrote.stdout    # one round per step
            batch = sorted((tmp_path / "results").glob("*-offline.ndjson"))[-1]
            assert batch not in batches and batch.name.endswith("_tiny_sim-mid_zerocot-nosys_greedy-2k-offline.ndjson")
            batches.append(batch)
            for line in batch.read_text().splitlines():       # checked line by line
                request = json.loads(line)
                assert request["body"]["model"] == "sim-mid" and request["body"]["max_tokens"] == 2048
                assert all(set(m) == {"role", "content"} for m in request["body"]["messages"])
            if attempt == 0:
                assert {json.loads(line)["custom_id"] for line in batch.read_text().splitlines()} == \
                    offline_requests(tmp_path, "sim-mid", 1)
            out = tmp_path / f"out{attempt}.ndjson"
            play_vllm(batch, sim.url, out, errors=3 if attempt == 0 else 0, unknown=attempt == 0)
            read = _runner(*base[:-2], "--mode", "read-batch", "--batch", out)
            assert read.returncode == 0, read.stderr
            assert "answers left out of the run folder" not in read.stdout     # nothing beyond the rule asked
            if attempt == 0:
                assert "CUDA out of memory" in read.stderr and "status 503" in read.stderr
                assert "1 answers have a custom_id that is not a request of this experiment" in read.stderr
                assert "steps still need rounds" in read.stdout
        else:
            pytest.fail("batch rounds never completed")
        assert len(batches) >= 2                                 # adaptive: a second round was needed
        assert "all steps complete" in read.stdout
    final = read_folder(max(p for p in run_folders(tmp_path / "results")))
    assert comparable(final) == comparable(reference)


def test_read_batch_needs_its_file(tmp_path):
    base = batch_args(tmp_path)
    missing = _runner(*base, "--mode", "read-batch", "--batch", tmp_path / "nope.ndjson")
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr


# ---------------------------------------------------------------- prompts too long for the context
# What vLLM's run-batch writes when a prompt does not fit max_model_len, in its three shapes
# (vllm/entrypoints/openai/run_batch.py): an ErrorResponse with the status in `response`
# (current), the exception path (status 400, the message as a string), and the older
# ErrorResponse with `"response": null` and the status as the error's code.
CONTEXT_MESSAGE = ("This model's maximum context length is 2048 tokens. However, your request has 2301 input "
                   "tokens. Please reduce the length of the input messages.")
DECODER_MESSAGE = ("The decoder prompt (length 2301) is longer than the maximum model length of 2048. Make sure "
                   "that `max_model_len` is no smaller than the number of text tokens.")


def too_long_line(custom_id, shape):
    request_id = f"vllm-batch-{uuid.uuid4().hex}"
    if shape == 0:
        return {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": custom_id,
                "response": {"status_code": 400, "request_id": request_id, "body": None},
                "error": {"error": {"message": CONTEXT_MESSAGE, "type": "BadRequestError", "param": None,
                                    "code": 400}}}
    if shape == 1:
        return {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": custom_id,
                "response": {"status_code": 400, "request_id": request_id, "body": None}, "error": DECODER_MESSAGE}
    return {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": custom_id, "response": None,
            "error": {"object": "error", "message": CONTEXT_MESSAGE, "type": "BadRequestError", "param": None,
                      "code": 400}}


def test_context_length_lines_are_prompt_too_long_not_problems(tmp_path):
    lines = [too_long_line("cur", 0), too_long_line("exc", 1), too_long_line("old", 2),
             # a 400 that is not about the context stays a problem line (asked again next time)
             {"id": "v4", "custom_id": "bad-param", "response": {"status_code": 400, "request_id": "r", "body": None},
              "error": {"error": {"message": "temperature must be non-negative", "type": "BadRequestError",
                                  "code": 400}}},
             # the context wording with no status anywhere: not classified, a problem line
             {"id": "v5", "custom_id": "no-status", "response": None, "error": CONTEXT_MESSAGE},
             # the context wording on a 200 body is an answer with no choices, not a prompt too long
             wrapped("ok-status", {"object": "error", "message": CONTEXT_MESSAGE}),
             too_long_line("cur", 2),                                    # duplicate: the first line counts
             wrapped("answered", completion("Final Answer: 3"))]
    (tmp_path / "out.ndjson").write_text("\n".join(json.dumps(l) for l in lines) + "\n")
    out = read_batch_output(tmp_path / "out.ndjson")
    assert set(out.too_long) == {"cur", "exc", "old"} and set(out.answers) == {"answered"}
    assert out.too_long["cur"] == CONTEXT_MESSAGE and out.too_long["exc"] == DECODER_MESSAGE
    problems = "\n".join(out.problems)
    assert "(bad-param): status 400: temperature must be non-negative" in problems
    assert "(no-status): error: This model's maximum context length" in problems
    assert "(ok-status): reply has no choices" in problems and "(cur): duplicate custom_id" in problems
    assert len(out.problems) == 4


def context_limited(limit):
    """A server with a small context: prompts longer than `limit` characters are refused with
    vLLM's HTTP 400 body, the others answered "Final Answer: 1"."""
    def answer(body, attempt=1):
        size = sum(len(m["content"]) for m in body["messages"])
        if size > limit:
            return 400, {"error": {"message": CONTEXT_MESSAGE, "type": "BadRequestError", "param": None,
                                   "code": 400}}, {}
        return 200, completion("Final Answer: 1"), {}
    return answer


def play_small_context_vllm(batch_file, answer, out_file):
    """run-batch against the small-context model: refused prompts as vLLM's error lines."""
    out = []
    for n, line in enumerate(batch_file.read_text().splitlines()):
        request = json.loads(line)
        status, payload, _ = answer(request["body"])
        out.append(wrapped(request["custom_id"], payload) if status == 200 else too_long_line(request["custom_id"], n % 3))
    out_file.write_text("\n".join(json.dumps(o) for o in out) + "\n")


def batch_cycle(base, answer, tmp_path, tag):
    """write-batch -> small-context run-batch -> read-batch until complete; the last read's stdout and folder."""
    read = None
    for attempt in range(6):
        wrote = _runner(*base, "--mode", "write-batch")
        assert wrote.returncode == 0, wrote.stderr
        if "nothing to write" in wrote.stdout:
            assert read is not None, "the first write-batch already had nothing to write"
            return read
        batch = sorted((tmp_path / "results").glob("*-offline.ndjson"))[-1]
        out = tmp_path / f"{tag}{attempt}.ndjson"
        play_small_context_vllm(batch, answer, out)
        read = _runner(*base, "--mode", "read-batch", "--batch", out)
        assert read.returncode == 0 and "Traceback" not in read.stderr, read.stderr
        assert "problem lines" in read.stdout and "batch: line" not in read.stderr     # no problem line
    pytest.fail("batch rounds never completed")


def prompt_sizes(batch_file):
    return sorted(sum(len(m["content"]) for m in json.loads(l)["body"]["messages"])
                  for l in batch_file.read_text().splitlines())


def test_read_batch_writes_prompts_too_long_like_api_mode(tmp_path):
    import sqlite3

    from tests.test_client_hostile_server import FakeServer

    base = [*batch_args(tmp_path)]
    at = base.index("--model")
    base[at + 1] = "m"
    first = _runner(*base, "--mode", "write-batch")
    assert first.returncode == 0, first.stderr
    sizes = prompt_sizes(sorted((tmp_path / "results").glob("*-offline.ndjson"))[-1])
    limit = sizes[len(sizes) // 2]                          # about half the prompts do not fit
    answer = context_limited(limit)

    # API mode against a server with the same context: the reference folder.
    api_args = runner_args("x", tmp_path / "api", model="m")
    with FakeServer(answer) as srv:
        api_args[api_args.index("--apibase") + 1] = srv.url
        api = _runner(*api_args)
    assert api.returncode == 0, api.stdout + api.stderr
    reference = read_folder(run_folders(tmp_path / "api" / "results")[0])

    read = batch_cycle(base, answer, tmp_path, "out")
    assert "all steps complete" in read.stdout
    folder = max(run_folders(tmp_path / "results"))
    final = read_folder(folder)
    too_long = [r for r in final if r.get("prompt_too_long")]
    assert 0 < len(too_long) < len(final)
    for r in too_long:
        assert r["answer"] is None and r["usage"] == {"completion_tokens": 0}
        assert (r["is_valid"], r["is_correct"], r["is_truncated"]) == (False, False, True)
        assert r["timings"] == {"termination_reason": "prompt_too_long", "finish_reason": "length"}
    assert f"{len(too_long)} of the truncated: prompt too long" in read.stdout

    def same(records):
        return {k: {**v, "prompt_too_long": r.get("prompt_too_long")}
                for (k, v), r in zip(comparable(records).items(), records)}
    assert same(final) == same(reference)                  # sample for sample what API mode wrote

    # The cache: real answers only in `responses`; the refused keys in `too_long`.
    too_long_keys = {request_key({"model": "m", "messages": r["messages"], **sampler_fields()}) for r in too_long}
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite") as db:
        answered = {k for (k,) in db.execute("SELECT key FROM responses")}
        marked = {k for (k,) in db.execute("SELECT key FROM too_long")}
    assert marked == too_long_keys and not answered & marked

    # Re-reading the last batch output writes the same folder again.
    last = sorted(tmp_path.glob("out*.ndjson"))[-1]
    again = _runner(*base, "--mode", "read-batch", "--batch", last)
    assert again.returncode == 0 and "all steps complete" in again.stdout
    assert same(read_folder(max(run_folders(tmp_path / "results")))) == same(final)

    # API mode does not trust the markers: a server with a bigger context is asked those again
    # (only those: everything else comes from the cache). Now answered, some steps may need
    # fewer rounds, so the asked set can be smaller than the marked one.
    api_again = runner_args("x", tmp_path, model="m")
    with FakeServer(context_limited(10 ** 9)) as big:
        api_again[api_again.index("--apibase") + 1] = big.url
        proc = _runner(*api_again)
        asked = set(big.seen)
    assert proc.returncode == 0, proc.stderr
    assert asked and asked <= too_long_keys
    assert not any(r.get("prompt_too_long") for r in read_folder(max(run_folders(tmp_path / "results"))))


def sampler_fields():
    from tests.support.runner import SAMPLER
    return json.loads(SAMPLER.read_text())
