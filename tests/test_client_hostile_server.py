"""Hostile and quirky servers: every reply shape and real provider error body, over real loopback sockets.

Client level: resolver.client against a scripted aiohttp server (one script step per
request). Runner level: the real runner.py (run in-process, tests/support/in_process.py)
against a fake OpenAI-compatible server whose answer depends on the request. The bar: a reply of
any shape is either read correctly, or retried and then a failed sample with its
reason; never a crash, never a poisoned cache; a prompt the server calls too long
is a finished sample; a dead key or quota stops the run in one line.
"""
from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import threading

import pytest
from aiohttp import web

from resolver.client.cache import request_key
from resolver.client.chat import RequestFailed
from resolver.client.http_policy import classify_error, parse_duration, proxy_for, retry_delay
from tests.conftest import run_script
from tests.support.runner import LoopbackServer, read_folder, run_folders, runner_args
from tests.test_client_chat import BODY, ScriptedServer, ask, completion

GOOD = completion("Final Answer: 4")


def with_message(message, **extra):
    return {"id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], **extra}


# ---------------------------------------------------------------- reply shapes (HTTP 200)

MALFORMED_200 = {
    "message-as-string": ("json", 200, with_message("Final Answer: 4"), {}),
    "message-as-list": ("json", 200, with_message([{"content": "x"}]), {}),
    "content-as-number": ("json", 200, with_message({"role": "assistant", "content": 4}), {}),
    "content-as-object": ("json", 200, with_message({"role": "assistant", "content": {"text": "4"}}), {}),
    "reasoning-as-number": ("json", 200, with_message({"content": "x", "reasoning_content": 7}), {}),
    "usage-counts-as-strings": ("json", 200, {**GOOD, "usage": {"prompt_tokens": "3", "completion_tokens": "4"}}, {}),
    "usage-count-too-big": ("json", 200, {**GOOD, "usage": {"prompt_tokens": 3, "completion_tokens": 2**40}}, {}),
    "usage-as-list": ("json", 200, {**GOOD, "usage": [3, 4]}, {}),
    "finish-reason-number": ("json", 200, {**GOOD, "choices": [{**GOOD["choices"][0], "finish_reason": 1}]}, {}),
    "choices-empty": ("json", 200, {**GOOD, "choices": []}, {}),
    "choices-object": ("json", 200, {**GOOD, "choices": {"0": GOOD["choices"][0]}}, {}),
    "no-message": ("json", 200, {**GOOD, "choices": [{"index": 0, "finish_reason": "stop"}]}, {}),
    "nested-100000-deep": ("raw", b"[" * 100_000 + b"]" * 100_000),
    "deep-inside-content": ("raw", json.dumps(with_message({"content": "REPLACE"})).encode().replace(
        b'"REPLACE"', b"[" * 100_000 + b"]" * 100_000)),
    "not-utf8": ("raw", b'{"choices": "\xff\xfe"}'),
    "top-level-array": ("json", 200, [GOOD], {}),
    "usage-1e400": ("raw", json.dumps(GOOD).replace('"prompt_tokens": 3', '"prompt_tokens": 1e400').encode()),
}


@pytest.mark.parametrize("shape", sorted(MALFORMED_200))
def test_a_malformed_200_is_retried_then_read_from_the_healthy_reply(shape):
    with ScriptedServer([MALFORMED_200[shape], ("json", 200, GOOD, {})]) as srv:
        result, stats = ask(srv.url)
    assert not isinstance(result, RequestFailed), result
    assert result.content == "Final Answer: 4" and stats.retry_reasons == {"malformed": 1}


def test_a_server_that_only_sends_malformed_replies_gives_a_failed_request_with_the_reason():
    with ScriptedServer([MALFORMED_200["content-as-number"]] * 4) as srv:
        result, stats = ask(srv.url, max_retries=2)
    assert isinstance(result, RequestFailed) and result.kind == "failed"
    assert "content is a int" in str(result) and len(srv.times) == 3


def test_content_as_typed_parts_is_read_thinking_to_reasoning_text_to_answer():
    message = {"role": "assistant", "content": [
        {"type": "thinking", "thinking": [{"type": "text", "text": "Let me add. "}, {"type": "text", "text": "2+2=4."}]},
        {"type": "text", "text": "Final Answer: 4"}]}
    with ScriptedServer([("json", 200, with_message(message, usage={"prompt_tokens": 1}), {})]) as srv:
        result, stats = ask(srv.url)
    assert (result.content, result.reasoning) == ("Final Answer: 4", "Let me add. 2+2=4.")
    assert stats.retries == 0


def test_a_streamed_chunk_of_a_bad_shape_is_retried():
    bad = [{"choices": [{"index": 0, "delta": {"content": 12}, "finish_reason": None}]}]
    good = [{"choices": [{"index": 0, "delta": {"content": "Final Answer: 4"}, "finish_reason": "stop"}]}]
    with ScriptedServer([("sse", bad, True), ("sse", good, True)]) as srv:
        result, stats = ask(srv.url, {**BODY, "stream": True})
    assert result.content == "Final Answer: 4" and stats.retry_reasons == {"malformed": 1}


# ---------------------------------------------------------------- real providers' error bodies

CONTEXT_BODIES = {
    "vllm-old": (400, {"object": "error", "message": "This model's maximum context length is 4096 tokens. However, "
                       "you requested 5120 tokens (3072 in the messages, 2048 in the completion). Please reduce "
                       "the length of the messages or completion.", "type": "BadRequestError", "param": None,
                       "code": 400}),
    "vllm-new": (400, {"error": {"message": "'max_tokens' or 'max_completion_tokens' is too large: 2048. This "
                       "model's maximum context length is 4096 tokens and your request has 3000 input tokens "
                       "(2048 > 4096 - 3000). None", "type": "BadRequestError", "param": None, "code": 400}}),
    "vllm-decoder": (400, {"error": {"message": "The decoder prompt (length 5000) is longer than the maximum model "
                           "length of 4096. Make sure that `max_model_len` is no smaller than the number of text "
                           "tokens.", "type": "BadRequestError", "code": 400}}),
    "llama.cpp": (400, {"error": {"code": 400, "message": "request (4476 tokens) exceeds the available context size "
                        "(4096 tokens), try increasing it", "type": "exceed_context_size_error",
                        "n_prompt_tokens": 4476, "n_ctx": 4096}}),
    "sglang": (400, {"object": "error", "message": "The input (5000 tokens) is longer than the model's context "
                     "length (4096 tokens).", "type": "BadRequestError", "code": 400}),
    "openai": (400, {"error": {"message": "This model's maximum context length is 128000 tokens. However, your "
                     "messages resulted in 130000 tokens. Please reduce the length of the messages.",
                     "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
    "tgi": (422, {"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: "
                  "3000 `inputs` tokens and 2048 `max_new_tokens`", "error_type": "validation"}),
}


@pytest.mark.parametrize("provider", sorted(CONTEXT_BODIES))
def test_context_length_errors_are_prompt_too_long_and_not_retried(provider):
    status, body = CONTEXT_BODIES[provider]
    with ScriptedServer([("json", status, body, {})]) as srv:
        result, stats = ask(srv.url)
    assert isinstance(result, RequestFailed) and result.kind == "prompt_too_long", result
    assert len(srv.times) == 1 and stats.retries == 0 and stats.failed == 0


FATAL_BODIES = {
    "openai-insufficient-quota": (429, {"error": {"message": "You exceeded your current quota, please check your "
                                        "plan and billing details.", "type": "insufficient_quota", "param": None,
                                        "code": "insufficient_quota"}}),
    "openai-invalid-key": (401, {"error": {"message": "Incorrect API key provided: sk-abc.", "type":
                                 "invalid_request_error", "param": None, "code": "invalid_api_key"}}),
    "llama.cpp-invalid-key": (401, {"error": {"code": 401, "message": "Invalid API Key",
                                    "type": "authentication_error"}}),
    "forbidden": (403, {"detail": "Not authenticated"}),
}


@pytest.mark.parametrize("case", sorted(FATAL_BODIES))
def test_keys_and_quota_that_never_heal_are_not_retried(case):
    status, body = FATAL_BODIES[case]
    with ScriptedServer([("json", status, body, {})] * 3) as srv:
        result, stats = ask(srv.url)
    assert isinstance(result, RequestFailed) and result.kind == "fatal"
    assert len(srv.times) == 1 and stats.retries == 0


def test_an_ordinary_rate_limit_429_is_still_retried():
    body = {"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}
    with ScriptedServer([("json", 429, body, {"retry-after-ms": "10"}), ("json", 200, GOOD, {})]) as srv:
        result, stats = ask(srv.url)
    assert result.content == "Final Answer: 4" and stats.retry_reasons == {"429": 1}


@pytest.mark.usefixtures("quick_waits")
def test_a_loading_model_is_waited_for_without_using_up_retries():
    loading = ("json", 503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}},
               {"Retry-After": "0"})
    with ScriptedServer([loading] * 3 + [("json", 200, GOOD, {})]) as srv:
        result, stats = ask(srv.url, max_retries=1)       # 3 loading replies > 1 retry: the budget is separate
    assert result.content == "Final Answer: 4" and stats.retry_reasons == {"loading": 3}


def test_the_loading_budget_ends():
    loading = ("json", 503, {"error": {"message": "Loading model"}}, {"Retry-After": "0"})
    with ScriptedServer([loading] * 50) as srv:
        result, _ = ask(srv.url, load_timeout=0.3)
    assert isinstance(result, RequestFailed) and "Loading model" in str(result)


def test_retry_delay_headers():
    assert retry_delay({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_delay({"retry-after": "2"}) == 2.0
    headers = {"x-ratelimit-reset-requests": "1s", "x-ratelimit-remaining-requests": "0",
               "x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-remaining-tokens": "5000"}
    assert retry_delay(headers) == 1.0                       # only the exhausted limit counts
    assert retry_delay({"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-reset-requests": "20ms"}) == 360.0
    assert retry_delay({"retry-after-ms": "nan"}) is None and retry_delay({}) is None
    assert parse_duration("1h2m3.5s") == 600.0               # capped at MAX_RETRY_AFTER_S
    assert parse_duration("20ms") == pytest.approx(0.02) and parse_duration("soon") is None


def test_retry_after_ms_is_honoured_over_a_real_socket():
    with ScriptedServer([("json", 429, {"error": {"message": "slow"}}, {"retry-after-ms": "700"}),
                         ("json", 200, GOOD, {})]) as srv:
        result, _ = ask(srv.url)
    assert result.content == "Final Answer: 4" and srv.times[1] - srv.times[0] >= 0.65


def test_classification_table():
    assert classify_error(400, "bad value for top_k") == "failed"
    assert classify_error(500, "input is too large to process. increase the physical batch size") == "prompt_too_long"
    assert classify_error(503, "Service Unavailable") == "retry"
    assert classify_error(404, '{"error": "model not found"}') == "failed"


# ---------------------------------------------------------------- proxies

def test_proxy_choice_follows_the_standard_variables(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("http://h:1/v1") is None
    monkeypatch.setenv("ALL_PROXY", "socks5h://p:1080")
    assert proxy_for("https://api.example/v1") == "socks5h://p:1080"
    monkeypatch.setenv("https_proxy", "http://q:3128")
    assert proxy_for("https://api.example/v1") == "http://q:3128"
    monkeypatch.setenv("NO_PROXY", "api.example,localhost")
    assert proxy_for("https://api.example/v1") is None


class Socks5:
    """A minimal SOCKS5 server (no auth, CONNECT only) on loopback, counting the tunnels it opened."""

    def __init__(self):
        self.tunnels = 0
        self._ready = threading.Event()

    async def handle(self, reader, writer):
        head = await reader.readexactly(2)
        await reader.readexactly(head[1])                      # offered methods
        writer.write(b"\x05\x00")
        _, _, _, atyp = await reader.readexactly(4)
        if atyp == 1:
            host = socket.inet_ntoa(await reader.readexactly(4))
        else:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        port = int.from_bytes(await reader.readexactly(2), "big")
        up_reader, up_writer = await asyncio.open_connection(host, port)
        self.tunnels += 1
        writer.write(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + (0).to_bytes(2, "big"))

        async def pipe(src, dst):
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def __enter__(self):
        def run():
            self.loop = asyncio.new_event_loop()
            server = self.loop.run_until_complete(asyncio.start_server(self.handle, "127.0.0.1", 0))
            self.port = server.sockets[0].getsockname()[1]
            self._server = server
            self._ready.set()
            self.loop.run_forever()
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


def test_requests_go_through_a_socks5_proxy_from_all_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with Socks5() as proxy, ScriptedServer([("json", 200, GOOD, {})]) as srv:
        monkeypatch.setenv("ALL_PROXY", f"socks5://127.0.0.1:{proxy.port}")
        result, _ = ask(srv.url)
    assert result.content == "Final Answer: 4" and proxy.tunnels >= 1


def test_requests_go_through_an_http_proxy_from_all_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    # An HTTP proxy receives the absolute URL; this one answers itself and so proves the route.
    with ScriptedServer([("json", 200, GOOD, {})]) as proxy:
        monkeypatch.setenv("ALL_PROXY", proxy.url)
        result, _ = ask("http://upstream.invalid:9/v1")
    assert result.content == "Final Answer: 4" and len(proxy.times) == 1


# ---------------------------------------------------------------- the real runner against a fake server

class FakeServer(LoopbackServer):
    """An OpenAI-compatible server on loopback whose reply is `answer(body, attempt)` -> (status, payload, headers).

    `attempt` counts the requests seen for the same cache key, so a reply can be bad
    once and good after. Records every request's key.
    """

    def __init__(self, answer, models=("m",), models_status=200):
        self.answer, self.models, self.models_status = answer, list(models), models_status
        self.seen: dict = {}
        self.chat_posts = 0
        super().__init__()

    async def chat(self, request):
        body = json.loads(await request.read())
        self.chat_posts += 1
        key = request_key(body)
        self.seen[key] = self.seen.get(key, 0) + 1
        status, payload, headers = self.answer(body, self.seen[key])
        if isinstance(payload, bytes):
            return web.Response(body=payload, status=status, content_type="application/json", headers=headers)
        return web.json_response(payload, status=status, headers=headers)

    async def list_models(self, request):
        if self.models_status != 200:
            return web.json_response({"error": {"message": "nope"}}, status=self.models_status)
        return web.json_response({"object": "list", "data": [{"id": m} for m in self.models]})


def answer_ok(body, attempt):
    return 200, completion("Final Answer: 1"), {}


def cached_values(cache_dir):
    with sqlite3.connect(cache_dir / "responses.sqlite") as db:
        return [json.loads(row[0]) for row in db.execute("SELECT response FROM responses")]


def runner(url, tmp_path, *extra, env=None):
    return run_script("runner.py", *runner_args(url, tmp_path, model="m", extra=("--parallel", "4", *extra)),
                      timeout=240, env=env)


@pytest.fixture
def quick_waits(monkeypatch):
    """Retry back-off and loading polls cut short, for tests that count retries rather than time
    them: the in-process runner's ChatClient gets a back-off of at most 50 ms (its own
    backoff_base/backoff_cap parameters) and a loading server is polled every 20 ms
    (resolver.client.retries.LOADING_POLL_MIN_S)."""
    import functools

    import resolver.run.api_runner as api_runner
    from resolver.client import retries
    from resolver.client.chat import ChatClient

    monkeypatch.setattr(api_runner, "ChatClient", functools.partial(ChatClient, backoff_base=0.01, backoff_cap=0.05))
    monkeypatch.setattr(retries, "LOADING_POLL_MIN_S", 0.02)


@pytest.mark.usefixtures("quick_waits")
def test_runner_survives_every_bad_shape_and_caches_none_of_them(tmp_path):
    shapes = [MALFORMED_200[k] for k in sorted(MALFORMED_200)]

    def answer(body, attempt):
        if attempt == 1:                           # every request's first reply is a hostile shape
            step = shapes[int(request_key(body), 16) % len(shapes)]
            if step[0] == "raw":
                return 200, step[1], {}
            return step[1], step[2], step[3]
        return answer_ok(body, attempt)

    with FakeServer(answer) as srv:
        proc = runner(srv.url, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "malformed" in proc.stdout
    records = read_folder(run_folders(tmp_path / "results")[0])
    assert records and all(r["answer"] == "Final Answer: 1" for r in records)
    assert all(v["content"] == "Final Answer: 1" and v["usage"]["prompt_tokens"] == 3
               for v in cached_values(tmp_path / "cache"))


def test_a_poisoned_cache_from_an_older_version_is_asked_again_not_crashed_on(tmp_path):
    with FakeServer(answer_ok) as srv:
        assert runner(srv.url, tmp_path).returncode == 0
    poisons = [{"content": 4}, {"content": "x", "usage": {"prompt_tokens": "3"}}, "a string",
               {"content": "x", "reasoning": ["list"]}, {"content": "x", "finish_reason": {"why": 1}}]
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite") as db:   # what an older version could store
        all_keys = sorted(k for (k,) in db.execute("SELECT key FROM responses"))
        db.executemany("UPDATE responses SET response = ? WHERE key = ?",
                       [(json.dumps(poisons[i % len(poisons)]), k) for i, k in enumerate(all_keys)])
    with FakeServer(answer_ok) as srv:
        proc = runner(srv.url, tmp_path)
        asked = len(srv.seen)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert asked == len(all_keys)                   # every poisoned answer was asked again
    assert all(v["content"] == "Final Answer: 1" for v in cached_values(tmp_path / "cache"))   # and healed
    with FakeServer(answer_ok) as srv:
        assert runner(srv.url, tmp_path).returncode == 0 and not srv.seen    # a third run needs nothing


def test_prompts_too_long_are_finished_samples_even_when_every_request_is_one(tmp_path):
    status, body = CONTEXT_BODIES["vllm-old"]

    with FakeServer(lambda b, a: (status, body, {})) as srv:
        proc = runner(srv.url, tmp_path)
        posts = srv.chat_posts
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = read_folder(run_folders(tmp_path / "results")[0])
    assert len(records) > 10 and posts == len(records)                 # none retried
    for r in records:
        assert r["prompt_too_long"] is True and r["is_truncated"] is True and r["answer"] is None
        assert r["usage"] == {"completion_tokens": 0} and r["is_valid"] is False and r["is_correct"] is False
        assert r["timings"] == {"termination_reason": "prompt_too_long", "finish_reason": "length"}
    assert f"{len(records)} of the truncated: prompt too long" in proc.stdout
    assert not cached_values(tmp_path / "cache")                       # not cached: a bigger context may answer


def test_insufficient_quota_stops_the_run_in_one_line(tmp_path):
    status, body = FATAL_BODIES["openai-insufficient-quota"]
    with FakeServer(lambda b, a: (status, body, {})) as srv:
        proc = runner(srv.url, tmp_path)
        posts = srv.chat_posts
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "insufficient_quota" in lines[0] and "Traceback" not in proc.stderr
    assert posts <= 4 + 1                            # at most one wave of --parallel (+ nothing retried)
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_a_bad_key_behind_a_public_models_list_is_caught_by_the_preflight(tmp_path, monkeypatch):
    # llama.cpp answers GET /v1/models to anyone and checks the key only on chat requests.
    status, body = FATAL_BODIES["llama.cpp-invalid-key"]
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")        # read when the run starts: the runner runs in-process
    with FakeServer(lambda b, a: (status, body, {})) as srv:
        proc = runner(srv.url, tmp_path)
        posts = srv.chat_posts
    assert proc.returncode == 2 and posts == 1, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Invalid API Key" in proc.stderr
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
