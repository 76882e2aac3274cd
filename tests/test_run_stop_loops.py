"""The sampler's "stop_loops": a looping stream is closed early and recorded honestly
(docs/runner.md, *Loops stopped early*).

A real aiohttp server on loopback plays the model: it answers a prompt either with a short
answer or, for about a third of the prompts (decided by a hash of the prompt), with one
4-character token repeated up to max_tokens, one token per server-sent event as vLLM,
SGLang and llama.cpp stream. After LOOP_PAUSE_AT tokens of a streamed loop it waits for
the client to hang up (unless the prompt says "no pause") (a causal wait, not a timing assertion), so whether the client
closed the connection is something the server sees.

Expected values are worked out by hand from the documented rule (resolver.grading.LoopRule's
defaults: the tail must be verbatim periodic over min_span_chars, checked each time the
text passes a multiple of check_every_chars), not read back from the code under test.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time

import pytest
from aiohttp import web

from resolver.client import ChatClient, request_key
from resolver.config import build_request, load_sampler
from resolver.core import UserError
from resolver.grading import LoopRule
from resolver.records import record_problems
from tests.support.runner import TEMPLATE, TINY, LoopbackServer, cache_keys, read_folder, run_folders, write_json

TOKEN = "ab, "                       # one looping token: 4 characters
MAX_TOKENS = 4096
LOOP_PAUSE_AT = 600                  # a streamed loop waits here for the client to hang up
ANSWER_TOKENS = ["The", " answer", " is", " 7", ".", "\n", "Final", " Answer:", " 7"]
PROMPT_TOKENS = 10
SERVER_STOP_TOKENS = 40              # where the stand-in for vLLM's repetition_detection ends a loop


def stop_point(rule: LoopRule, unit: int = len(TOKEN)) -> int:
    """Characters streamed when the rule first holds on a verbatim loop of `unit` characters
    from the first character (docs/loops.md): the first multiple of check_every_chars
    covering the span the unit needs (short_unit_span_chars for a unit of at most
    short_unit_chars, else min_span_chars) and min_copies copies."""
    span = rule.min_span_chars
    if unit <= rule.short_unit_chars:
        span = min(span, rule.short_unit_span_chars)
    need = max(span, rule.min_copies * unit)
    return math.ceil(need / rule.check_every_chars) * rule.check_every_chars


STOP_CHARS = stop_point(LoopRule())              # 1024 with the defaults (a 4-character unit is short)
STOP_TOKENS = STOP_CHARS // len(TOKEN)           # 256


def loops(prompt: str) -> bool:
    if prompt.startswith("please "):
        return prompt.startswith("please loop")
    return int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 3 == 0


class ModelServer(LoopbackServer):
    """Answers chat requests as described in the module docstring; keeps every body."""

    def __init__(self):
        super().__init__()
        self.bodies: list[dict] = []
        self.streams: list[dict] = []        # one per streamed loop: tokens sent, client hung up

    async def list_models(self, request):
        return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})

    async def chat(self, request):
        body = await request.json()
        self.bodies.append(body)
        prompt = body["messages"][-1]["content"]
        options = body.get("stream_options") or {}
        if "strict options" in prompt and "continuous_usage_stats" in options:
            # a server that validates stream_options strictly (one that knows only include_usage)
            return web.json_response({"error": {"message": "Unrecognized request argument supplied: "
                                                "stream_options.continuous_usage_stats"}}, status=400)
        # usage in every chunk, as vLLM and SGLang send it when asked (llama.cpp ignores the option)
        continuous = bool(options.get("continuous_usage_stats")) and not ("ignores options" in prompt or
                                                                          "no usage" in prompt)
        limit = body.get("max_tokens") or 16
        tokens = [TOKEN] * limit if loops(prompt) else ANSWER_TOKENS[:limit]
        server_stop = "repetition_detection" in body and loops(prompt)
        if server_stop:                      # vLLM's repetition_detection ends the loop itself
            tokens = tokens[:SERVER_STOP_TOKENS]
        if "two per event" in prompt:        # vLLM merges tokens into one event when its reader lags
            tokens = ["".join(tokens[i:i + 2]) for i in range(0, len(tokens), 2)]
            limit = len(tokens)
        finish = "repetition" if server_stop else "length" if len(tokens) == limit else "stop"
        per_event = 2 if "two per event" in prompt else 1
        usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": per_event * len(tokens),
                 "total_tokens": PROMPT_TOKENS + per_event * len(tokens)}
        if not body.get("stream"):
            return web.json_response({"id": "x", "object": "chat.completion", "model": body["model"],
                                      "choices": [{"index": 0, "finish_reason": finish,
                                                   "message": {"role": "assistant", "content": "".join(tokens)}}],
                                      "usage": usage})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        seen = {"sent": 0, "hung_up": False, "decided": False}
        if loops(prompt):
            self.streams.append(seen)

        def event(chunk) -> bytes:
            return b"data: " + json.dumps(chunk).encode() + b"\n\n"

        try:
            for i, token in enumerate(tokens):
                if i == LOOP_PAUSE_AT and loops(prompt) and "no pause" not in prompt:
                    seen["hung_up"] = await _hang_up(request)
                    if seen["hung_up"]:
                        return resp
                chunk: dict = {"choices": [{"index": 0, "delta": {"content": token}, "finish_reason": None}]}
                if continuous:
                    done = per_event * (i + 1)
                    chunk["usage"] = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": done,
                                      "total_tokens": PROMPT_TOKENS + done}
                await resp.write(event(chunk))
                seen["sent"] += 1
            await resp.write(event({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
            if "no usage" not in prompt:         # llama-cpp-python's server sends no usage chunk
                await resp.write(event({"choices": [], "usage": usage}))
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except (ConnectionError, RuntimeError):
            seen["hung_up"] = True
        except asyncio.CancelledError:          # aiohttp may cancel the handler of a closed connection
            seen["hung_up"] = True
            raise
        finally:
            seen["decided"] = True
        return resp


async def _hang_up(request, wait: float = 60.0) -> bool:
    """Whether the client closes the connection within `wait` seconds (polled; generous for a
    loaded machine: only a client that never hangs up waits it out)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        transport = request.transport
        if transport is None or transport.is_closing():
            return True
        await asyncio.sleep(0.01)
    return False


def _wait_until_decided(seen: dict, wait: float = 90.0) -> None:
    """The server runs in its own thread and sees the hang-up a moment after the client
    returns: wait for its verdict (only a server that never decides waits this out)."""
    deadline = time.monotonic() + wait
    while not seen["decided"] and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.fixture(scope="module")
def server():
    with ModelServer() as s:
        yield s


def _complete(server, body, rule):
    async def go():
        async with ChatClient(server.url + "/v1", parallel=2) as client:
            return await client.complete(body, None, rule)
    return asyncio.run(go())


def _body(prompt: str, stream: bool = True) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": prompt}], "max_tokens": MAX_TOKENS,
            "stream": stream}


# ---------------------------------------------------------------- the client
def test_a_looping_stream_is_closed_at_the_rule_and_says_so(server):
    before = len(server.streams)
    completion = _complete(server, _body("please loop, ignores options"), LoopRule())
    seen = server.streams[before]
    _wait_until_decided(seen)
    assert seen["hung_up"], seen                                        # the server saw the client go
    assert STOP_TOKENS <= seen["sent"] <= LOOP_PAUSE_AT, seen
    assert completion.finish_reason == "length"
    assert completion.content == TOKEN * STOP_TOKENS
    assert completion.usage == {"completion_tokens": STOP_TOKENS}                  # one token per event
    assert completion.loop == {"period_chars": len(TOKEN), "copies": STOP_TOKENS, "span_chars": STOP_CHARS,
                               "at_chars": STOP_CHARS}


def test_a_stopped_stream_keeps_the_servers_counts_prompt_included(server):
    # usage in every chunk: the record counts what the server counted for the text read,
    # even where an event holds two tokens (the deltas would say half)
    before = len(server.streams)
    completion = _complete(server, _body("please loop, two per event"), LoopRule())
    _wait_until_decided(server.streams[before])
    assert server.bodies[-1]["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert completion.content == TOKEN * STOP_TOKENS and completion.loop is not None
    assert completion.usage == {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": STOP_TOKENS,
                                "total_tokens": PROMPT_TOKENS + STOP_TOKENS}


def test_a_server_that_refuses_continuous_usage_is_asked_again_without_it(server):
    before = len(server.bodies)
    completion = _complete(server, _body("please answer, strict options"), LoopRule())
    sent = [b.get("stream_options") for b in server.bodies[before:]]
    assert sent == [{"include_usage": True, "continuous_usage_stats": True}, {"include_usage": True}]
    assert completion.content == "".join(ANSWER_TOKENS) and completion.usage["prompt_tokens"] == PROMPT_TOKENS


def test_only_a_stop_loops_stream_asks_for_usage_in_every_chunk(server):
    before = len(server.bodies)
    _complete(server, _body("please answer"), None)
    assert server.bodies[before]["stream_options"] == {"include_usage": True}


def test_without_a_rule_the_whole_loop_is_read(server):
    completion = _complete(server, _body("please loop, no pause"), None)
    assert completion.content == TOKEN * MAX_TOKENS and completion.finish_reason == "length"
    assert completion.usage["completion_tokens"] == MAX_TOKENS and completion.loop is None


def test_an_answer_that_does_not_loop_is_read_to_the_end(server):
    completion = _complete(server, _body("please answer"), LoopRule())
    assert completion.content == "".join(ANSWER_TOKENS) and completion.finish_reason == "stop"
    assert completion.loop is None and completion.usage["completion_tokens"] == len(ANSWER_TOKENS)


def test_without_a_usage_chunk_the_deltas_are_the_tokens(server):
    watched = _complete(server, _body("please answer, no usage"), LoopRule())
    assert watched.usage == {"completion_tokens": len(ANSWER_TOKENS)} and watched.finish_reason == "stop"
    plain = _complete(server, _body("please answer, no usage"), None)
    assert plain.usage is None          # streaming without stop_loops is as it was


# ---------------------------------------------------------------- the sampler key
def _sampler(tmp_path, data, name="s"):
    return load_sampler(write_json(tmp_path / f"{name}.json", data))


def test_stop_loops_is_never_sent_and_streams(tmp_path):
    sampler = _sampler(tmp_path, {"max_tokens": 64, "stop_loops": True})
    body = build_request("m", [{"role": "user", "content": "q"}], sampler)
    assert body == {"model": "m", "messages": [{"role": "user", "content": "q"}], "max_tokens": 64, "stream": True}
    assert _sampler(tmp_path, {"max_tokens": 64, "stop_loops": False}).stop_loops is None


def test_the_rule_is_part_of_the_cache_key(tmp_path):
    plain = _sampler(tmp_path, {"max_tokens": 64}, "a")
    on = _sampler(tmp_path, {"max_tokens": 64, "stop_loops": True}, "b")
    explicit = _sampler(tmp_path, {"max_tokens": 64, "stop_loops": {"min_copies": 10}}, "c")
    other = _sampler(tmp_path, {"max_tokens": 64, "stop_loops": {"min_copies": 20}}, "d")
    messages = [{"role": "user", "content": "q"}]
    key = {s.name: request_key(build_request("m", messages, s), s.stop_loops) for s in (plain, on, explicit, other)}
    assert key["a"] != key["b"] and key["b"] != key["d"]
    assert key["b"] == key["c"]           # true is the default thresholds, written out or not
    assert key["a"] == request_key({"model": "m", "messages": messages, "max_tokens": 64, "stream": True})


@pytest.mark.parametrize("value, words", [
    ({"min_copies": 1}, "stop_loops.min_copies"),
    ({"copies": 10}, "unknown threshold 'copies'"),
    ("yes", "'stop_loops' must be true, false or an object"),
    ({"min_span_chars": "2000"}, "stop_loops.min_span_chars"),
])
def test_bad_stop_loops_values_are_one_line_errors(tmp_path, value, words):
    with pytest.raises(UserError) as err:
        _sampler(tmp_path, {"max_tokens": 64, "stop_loops": value})
    assert words in str(err.value) and "\n" not in str(err.value)


def test_stop_loops_needs_a_token_limit(tmp_path):
    with pytest.raises(UserError, match="needs max_tokens or max_completion_tokens"):
        _sampler(tmp_path, {"temperature": 0, "stop_loops": True})
    assert _sampler(tmp_path, {"max_completion_tokens": 8, "stop_loops": True}).stop_loops is not None


# ---------------------------------------------------------------- the runner, end to end
def _run(script, server, tmp_path, sampler, cache, output, *extra):
    proc = script("runner.py", "--config", TINY, "--template", TEMPLATE, "--sampler", sampler, "--model", "m",
                  "--apibase", server.url, "--cache", tmp_path / cache, "--output", tmp_path / output,
                  "--quiet", *extra)
    return proc


@pytest.fixture(scope="module")
def samplers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("samplers")
    return (write_json(folder / "long-loops.json", {"temperature": 0, "max_tokens": MAX_TOKENS, "stop_loops": True}),
            write_json(folder / "long.json", {"temperature": 0, "max_tokens": MAX_TOKENS}))


@pytest.fixture(scope="module")
def both_runs(server, samplers, tmp_path_factory):
    """(records with stop_loops, records without, stdout with, requests sent with) on one cache."""
    from conftest import run_script
    tmp = tmp_path_factory.mktemp("runs")
    before = len(server.bodies)
    on = run_script("runner.py", "--config", TINY, "--template", TEMPLATE, "--sampler", samplers[0], "--model", "m",
                    "--apibase", server.url, "--cache", tmp / "cache", "--output", tmp / "on", "--quiet")
    assert on.returncode == 0, on.stderr
    sent = server.bodies[before:]
    off = run_script("runner.py", "--config", TINY, "--template", TEMPLATE, "--sampler", samplers[1], "--model", "m",
                     "--apibase", server.url, "--cache", tmp / "cache", "--output", tmp / "off", "--quiet")
    assert off.returncode == 0, off.stderr
    [on_folder], [off_folder] = run_folders(tmp / "on"), run_folders(tmp / "off")
    return read_folder(on_folder), read_folder(off_folder), on.stdout, sent, tmp


@pytest.mark.slow
def test_loops_are_stopped_and_recorded_as_truncated(both_runs):
    records, _, _, sent, _ = both_runs
    assert sent and all("stop_loops" not in body and body["stream"] is True for body in sent)
    stopped = [r for r in records if loops(r["messages"][-1]["content"])]
    assert stopped and len(stopped) < len(records)
    for r in records:
        assert record_problems(r) == [] and r["timings"]["stop_loops"] is True
        if r in stopped:
            assert r["is_truncated"] is True and r["answer"] == TOKEN * STOP_TOKENS
            assert r["timings"]["finish_reason"] == "length" and r["timings"]["termination_reason"] == "loop"
            # the server's counts as of the text read, the prompt's included (usage in every chunk)
            assert r["usage"] == {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": STOP_TOKENS,
                                  "total_tokens": PROMPT_TOKENS + STOP_TOKENS}
            assert r["timings"]["loop"] == {"period_chars": 4, "copies": STOP_TOKENS, "span_chars": STOP_CHARS,
                                            "at_chars": STOP_CHARS, "max_tokens": MAX_TOKENS}
        else:
            assert "loop" not in r["timings"] and r["timings"]["termination_reason"] is None


@pytest.mark.slow
def test_grades_agree_with_the_run_without_stop_loops(both_runs):
    on, off, _, _, _ = both_runs
    off_by_key = {r["key"]: r for r in off}
    assert set(off_by_key) == {r["key"] for r in on}
    graded = ("is_valid", "is_correct", "is_truncated", "extracted_answer", "normalized_answer", "invalid_reason")
    for r in on:
        twin = off_by_key[r["key"]]
        assert "stop_loops" not in twin["timings"] and twin["usage"]["completion_tokens"] > 0
        if r["timings"]["termination_reason"] == "loop":
            # the run without stop_loops read the whole loop: the same sample, truncated there too
            assert twin["is_truncated"] and twin["answer"] == TOKEN * MAX_TOKENS
            assert twin["usage"]["completion_tokens"] == MAX_TOKENS
        else:
            assert {k: r[k] for k in graded} == {k: twin[k] for k in graded}
            assert r["answer"] == twin["answer"]


@pytest.mark.slow
def test_the_summary_says_what_the_stops_saved(both_runs):
    records, _, stdout, _, _ = both_runs
    stops = sum(loops(r["messages"][-1]["content"]) for r in records)
    assert f"loops stopped: {stops} (of the truncated), tokens saved: {stops * (MAX_TOKENS - STOP_TOKENS)} " in stdout


@pytest.mark.slow
def test_evaluate_counts_stopped_samples_at_max_tokens(both_runs, script):
    import duckdb

    records, _, _, _, tmp = both_runs
    stops = sum(loops(r["messages"][-1]["content"]) for r in records)
    db = tmp / "points.db"
    proc = script("evaluate.py", "--interview", *run_folders(tmp / "on"), "--db", db, "--quiet", "--parallel", "1")
    assert proc.returncode == 0, proc.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        total, stopped, saved, truncated_tokens = con.execute(
            "SELECT sum(completion_tokens_sum), sum(loops_stopped), sum(tokens_saved), sum(tokens_truncated) "
            "FROM points").fetchone()
    assert (stopped, saved) == (stops, stops * (MAX_TOKENS - STOP_TOKENS))
    assert total == stops * MAX_TOKENS + (len(records) - stops) * len(ANSWER_TOKENS)
    assert truncated_tokens == stops * MAX_TOKENS
    tokens = script("analyze.py", "tokens", db, "--format", "json", "--output-dir", tmp / "analysis")
    assert tokens.returncode == 0, tokens.stderr
    [written] = (tmp / "analysis").glob("*.json")
    rows = json.loads(written.read_text())
    assert sum(r["loops_stopped"] for r in rows) == stops
    assert sum(r["tokens_saved"] for r in rows) == stops * (MAX_TOKENS - STOP_TOKENS)


@pytest.mark.slow
def test_evaluate_refuses_an_eval_mixing_runs_with_and_without(both_runs, script, tmp_path):
    on, off, _, _, _ = both_runs
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name, records in (("on", on), ("off", off)):
        lines = [json.dumps({**r, "sampler": "same"}) for r in records]
        (folder / f"{name}.ndjson").write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = script("evaluate.py", "--interview", folder, "--db", tmp_path / "m.db", "--quiet", "--parallel", "1")
    assert proc.returncode == 2
    assert "stop_loops" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("first, second", [(0, 1), (1, 0)])
def test_the_cache_never_crosses_between_runs_with_and_without(server, samplers, script, tmp_path, first, second):
    """Whichever ran first, the other run asks the server for every sample again."""
    asked = []
    for which in (first, second):
        before = len(server.bodies)
        proc = _run(script, server, tmp_path, samplers[which], "cache", f"out{which}")
        assert proc.returncode == 0, proc.stderr
        asked.append(len(server.bodies) - before)
        assert "0 from cache" in proc.stdout
    assert asked[0] == asked[1] > 0
    assert len(cache_keys(tmp_path / "cache")) == asked[0] + asked[1]


def test_batch_modes_refuse_stop_loops(samplers, script, tmp_path):
    proc = script("runner.py", "--config", TINY, "--template", TEMPLATE, "--sampler", samplers[0], "--model", "m",
                  "--mode", "write-batch", "--cache", tmp_path / "cache", "--output", tmp_path / "out")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()] and "vllm run-batch cannot stream" in proc.stderr


def test_a_bad_stop_loops_value_exits_2(script, tmp_path):
    sampler = write_json(tmp_path / "bad.json", {"max_tokens": 64, "stop_loops": {"min_copies": 0}})
    proc = script("runner.py", "--config", TINY, "--template", TEMPLATE, "--sampler", sampler, "--model", "m",
                  "--offline", "1", "--output", tmp_path / "out")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "stop_loops.min_copies" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- evaluate's reading, by hand
def _scanned(tmp_path, records):
    from resolver.ingest.scan import ScanJob, scan_batch

    path = tmp_path / "f.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return scan_batch(ScanJob((str(path),))).samples.to_pylist()


def _hand_record(i, timings, tokens, truncated):
    return {"task": "000_a", "base_task": "a", "key": f"000_a-{i}", "params": {"length": 3, "count": 8},
            "model": "m", "template": "t", "sampler": "s", "answer": "x", "usage": {"completion_tokens": tokens},
            "guess_chance": 0.0, "is_valid": not truncated, "is_correct": False, "is_truncated": truncated,
            "timings": timings}


@pytest.mark.parametrize("timings, tokens, counted, saved", [
    ({"termination_reason": "loop", "finish_reason": "length", "stop_loops": True,
      "loop": {"period_chars": 4, "copies": 600, "span_chars": 2400, "at_chars": 2560, "max_tokens": 4096}},
     640, 4096, 3456),
    ({"termination_reason": None, "finish_reason": "stop", "stop_loops": True}, 90, 90, None),
    ({"termination_reason": None, "finish_reason": "length"}, 4096, 4096, None),
    # a loop object without the "loop" termination reason, or with a max_tokens that is no count: not a stop
    ({"termination_reason": None, "loop": {"max_tokens": 4096}}, 70, 70, None),
    ({"termination_reason": "loop", "loop": {"max_tokens": "4096"}}, 70, 70, None),
    ("not an object", 70, 70, None),
])
def test_evaluate_reads_a_stopped_sample_at_its_max_tokens(tmp_path, timings, tokens, counted, saved):
    [row] = _scanned(tmp_path, [_hand_record(0, timings, tokens, timings != "not an object")])
    assert (row["ctoks"], row["loop_saved"]) == (counted, saved)
    assert row["stop_loops"] is (isinstance(timings, dict) and timings.get("stop_loops") is True)


# ---------------------------------------------------------------- a loop the server stopped
@pytest.mark.parametrize("stop_loops", [False, True])      # a plain request; a stream the runner watches too
def test_a_loop_the_server_stopped_is_a_truncation_counted_at_max_tokens(server, script, tmp_path, stop_loops):
    import duckdb

    sampler = write_json(tmp_path / "server-loops.json", {
        "temperature": 0, "max_tokens": MAX_TOKENS, **({"stop_loops": True} if stop_loops else {}),
        "extra_body": {"repetition_detection": {"max_pattern_size": 8, "min_count": 20}}})
    proc = _run(script, server, tmp_path, sampler, "cache", "out")
    assert proc.returncode == 0, proc.stderr
    records = [r for folder in run_folders(tmp_path / "out") for r in read_folder(folder)]
    stopped = [r for r in records if loops(r["messages"][-1]["content"])]
    assert stopped and len(stopped) < len(records)
    for r in records:
        assert record_problems(r) == []
        if r in stopped:
            assert r["timings"] == {"termination_reason": "loop", "finish_reason": "repetition",
                                    "loop": {"by": "server", "max_tokens": MAX_TOKENS},
                                    **({"stop_loops": True} if stop_loops else {})}
            assert r["is_truncated"] is True and r["is_valid"] is False and r["invalid_reason"] == "truncated"
            assert r["usage"]["completion_tokens"] == SERVER_STOP_TOKENS and r["grader_version"] == 4
        else:
            assert r["timings"]["termination_reason"] is None and r["is_truncated"] is False
    db = tmp_path / "points.db"
    proc = script("evaluate.py", "--interview", *run_folders(tmp_path / "out"), "--db", db, "--quiet",
                  "--parallel", "1")
    assert proc.returncode == 0, proc.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        total, n_stopped, saved = con.execute(
            "SELECT sum(completion_tokens_sum), sum(loops_stopped), sum(tokens_saved) FROM points").fetchone()
    assert n_stopped == len(stopped) and saved == len(stopped) * (MAX_TOKENS - SERVER_STOP_TOKENS)
    assert total == len(stopped) * MAX_TOKENS + (len(records) - len(stopped)) * len(ANSWER_TOKENS)
