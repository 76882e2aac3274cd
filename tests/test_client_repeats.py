"""Servers whose bad reply repeats: a deterministic 500, or a 200 that is never a chat completion.

Client level: resolver.client against a scripted loopback server (attempt counts are
worked out by hand from the rule in docs/runner.md, *Retries and failures*: the same
bad reply four times in a row ends the request; anything else keeps the full budget).
Runner level: the real runner.py (in-process, with its retry waits cut short) against a
fake server that poisons one request, or answers every request with a malformed 200.
"""
from __future__ import annotations

import json

import pytest

from resolver.client.cache import request_key
from resolver.client.chat import RequestFailed
from tests.support.runner import read_folder, run_folders
from tests.test_client_chat import BODY, ScriptedServer, ask as ask_with, completion
from tests.test_client_hostile_server import (  # noqa: F401  (quick_waits: a fixture)
    MALFORMED_200,
    FakeServer,
    answer_ok,
    quick_waits,
    runner,
    with_message,
)

GOOD = completion("Final Answer: 4")
# llama.cpp with a small context answers some requests with this, every time.
BROADCAST = {"error": {"code": 500, "message": "could not broadcast input array from shape (128,) into shape (104,)",
                       "type": "server_error"}}
NO_KEYS = {"OPENAI_API_KEY": "", "AZURE_OPENAI_API_KEY": ""}


def ask(url, body=BODY, **kwargs):
    """One request through ChatClient, its back-off capped at 20 ms (these tests count attempts)."""
    return ask_with(url, body, backoff_cap=0.02, **kwargs)


@pytest.fixture
def no_keys(monkeypatch):
    """No API key in the environment (read when a run starts), so the runner skips its chat probe."""
    for name, value in NO_KEYS.items():
        monkeypatch.setenv(name, value)


def error(status, message, headers=None):
    return ("json", status, {"error": {"message": message}}, headers or {})


# ---------------------------------------------------------------- client: what repeats and what does not

def test_the_same_500_body_four_times_in_a_row_ends_the_request_early():
    with ScriptedServer([("json", 500, BROADCAST, {})] * 20) as srv:
        result, stats = ask(srv.url, max_retries=8)
    assert isinstance(result, RequestFailed) and result.kind == "failed"
    assert len(srv.times) == 4                                   # not 9: the budget is not used up
    assert "could not broadcast input array" in str(result) and "the same reply each time" in str(result)
    assert stats.failed == 1 and stats.retry_reasons == {"500": 3}


def test_500s_with_different_bodies_keep_the_full_budget():
    script = [error(500, f"Internal error, request id req_{i}") for i in range(20)]
    with ScriptedServer(script) as srv:
        result, _ = ask(srv.url, max_retries=6)
    assert isinstance(result, RequestFailed) and len(srv.times) == 7
    assert "the same reply" not in str(result)


def test_a_repeated_500_that_heals_before_the_limit_is_a_success():
    with ScriptedServer([("json", 500, BROADCAST, {})] * 3 + [("json", 200, GOOD, {})]) as srv:
        result, stats = ask(srv.url)
    assert result.content == "Final Answer: 4" and stats.retry_reasons == {"500": 3}


def test_a_different_reply_in_between_restarts_the_count():
    same = ("json", 500, BROADCAST, {})
    script = [same, same, same, error(500, "other"), same, same, same, same]
    with ScriptedServer(script) as srv:
        result, _ = ask(srv.url, max_retries=20)
    assert isinstance(result, RequestFailed) and len(srv.times) == 8


def test_gateway_statuses_rate_limits_and_asked_waits_keep_the_full_budget():
    cases = {
        "502": error(502, "Bad Gateway"),
        "504": error(504, "Gateway Timeout"),
        "503 not loading": error(503, "Service Unavailable"),
        "429": error(429, "Rate limit reached for requests"),
        "500 with Retry-After": error(500, "busy", {"Retry-After": "0"}),
    }
    for name, step in cases.items():
        with ScriptedServer([step] * 10) as srv:
            result, _ = ask(srv.url, max_retries=5)
        assert isinstance(result, RequestFailed) and len(srv.times) == 6, name


def test_the_same_malformed_shape_four_times_ends_the_request_and_says_what_came():
    shape = MALFORMED_200["message-as-string"]
    with ScriptedServer([shape] * 20) as srv:
        result, stats = ask(srv.url, max_retries=8)
    assert isinstance(result, RequestFailed) and len(srv.times) == 4
    assert "message is a str" in str(result) and stats.retry_reasons == {"malformed": 3}
    assert result.sent.startswith('{"id": "x"') and '"message": "Final Answer: 4"' in result.sent


def test_malformed_in_different_ways_keeps_the_full_budget():
    shapes = [MALFORMED_200[k] for k in ("message-as-string", "content-as-number", "choices-empty")]
    with ScriptedServer(shapes * 5) as srv:
        result, _ = ask(srv.url, max_retries=6)
    assert isinstance(result, RequestFailed) and len(srv.times) == 7


def test_a_repeated_malformed_stream_chunk_ends_the_request_early():
    bad = [{"choices": [{"index": 0, "delta": {"content": 12}, "finish_reason": None}]}]
    with ScriptedServer([("sse", bad, True)] * 20) as srv:
        result, _ = ask(srv.url, {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True})
    assert isinstance(result, RequestFailed) and len(srv.times) == 4 and "content is a int" in str(result)


@pytest.mark.usefixtures("quick_waits")
def test_the_loading_wait_is_unchanged_by_the_repeat_rule():
    loading = ("json", 503, {"error": {"code": 503, "message": "Loading model"}}, {"Retry-After": "0"})
    with ScriptedServer([loading] * 6 + [("json", 200, GOOD, {})]) as srv:
        result, stats = ask(srv.url, max_retries=1)
    assert result.content == "Final Answer: 4" and stats.retry_reasons == {"loading": 6}


# ---------------------------------------------------------------- the real runner

@pytest.mark.usefixtures("no_keys", "quick_waits")
def test_a_request_that_always_gets_the_same_500_fails_alone_and_the_run_completes(tmp_path):
    poisoned = []

    def answer(body, attempt):
        key = request_key(body)
        if not poisoned:
            poisoned.append(key)                 # the first request the server sees is the bad one
        return (500, BROADCAST, {}) if key == poisoned[0] else answer_ok(body, attempt)

    with FakeServer(answer) as srv:
        proc = runner(srv.url, tmp_path)
        seen = dict(srv.seen)
    assert proc.returncode == 1, proc.stdout + proc.stderr                # exit 1: some samples failed
    assert seen[poisoned[0]] == 4                                        # given up after 4 attempts
    assert "1 sample(s) failed" in proc.stdout and "could not broadcast input array" in proc.stdout
    assert proc.stderr.count("could not broadcast") == 1 and "Traceback" not in proc.stderr
    records = read_folder(run_folders(tmp_path / "results")[0])
    asked_keys = {k for k in seen if k != poisoned[0]}
    assert len(records) == len(asked_keys) > 20                          # every other sample written
    assert all(r["answer"] == "Final Answer: 1" for r in records)
    # The failed sample is left out of the folder and the cache: a rerun asks for it alone.
    with FakeServer(answer_ok) as srv:
        again = runner(srv.url, tmp_path)
        assert again.returncode == 0 and list(srv.seen) == poisoned, again.stdout + again.stderr


@pytest.mark.usefixtures("no_keys", "quick_waits")
def test_a_server_that_sends_only_malformed_200s_stops_the_run_in_one_line(tmp_path):
    status, body = MALFORMED_200["message-as-string"][1:3]
    with FakeServer(lambda b, a: (status, body, {})) as srv:
        proc = runner(srv.url, tmp_path)
        seen, posts = dict(srv.seen), srv.chat_posts
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "not chat completions" in lines[0] and "message is a str" in lines[0]
    assert json.dumps(with_message("Final Answer: 4"))[:40] in lines[0]     # what the server sent
    assert max(seen.values()) == 4 and posts <= (10 + 4) * 4              # 10 failures, 4 in flight, 4 tries each
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_a_run_whose_first_requests_fail_for_other_reasons_keeps_its_message(tmp_path):
    # A real interpreter (env= runs the runner as its own process): the run's end to end, exit 2 and one line.
    with FakeServer(lambda b, a: (400, {"error": {"message": "top_k must be positive"}}, {})) as srv:
        proc = runner(srv.url, tmp_path, env=NO_KEYS)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "the first 10 requests all failed" in lines[0] and "top_k must be positive" in lines[0]


def test_requests_failing_after_the_stop_repeat_its_line():
    """Requests still in flight when the 10th failure stops the run fail too; each raises the
    line that stopped it, so the run says "the first 10" whichever failure is reported last."""
    from resolver.core import UserError
    from resolver.run import Reporter, RunSummary
    from resolver.run.failures import ABORT_AFTER_FAILURES, FailurePolicy

    policy = FailurePolicy(RunSummary(), Reporter(), in_flight=64)
    for _ in range(ABORT_AFTER_FAILURES - 1):
        policy.failed("HTTP 400: top_k must be positive")
    with pytest.raises(UserError) as stopped:
        policy.failed("HTTP 400: top_k must be positive")
    with pytest.raises(UserError) as in_flight:
        policy.failed("HTTP 400: top_k must be positive")
    assert "the first 10 requests all failed" in str(stopped.value)
    assert str(in_flight.value) == str(stopped.value)
