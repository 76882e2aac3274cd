"""The simulator's HTTP endpoints: /v1/models, /v1/chat/completions (plain and streaming),
/stats and /health, answering as a named profile (docs/simulator.md).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
import uuid
from collections.abc import Mapping
from functools import lru_cache

from aiohttp import web

from resolver.client import request_key
from resolver.config import DEFAULT_SEED
from resolver.sim.faults import FaultPlan, SimStats
from resolver.sim.gpuserve import GpuServing, StreamEvents, gpu_reply
from resolver.sim.problems import ExperimentProblems
from resolver.sim.profiles import PROFILES, Answer, Problem, Profile, compose_answer, count_tokens, token_pieces, unknown_problem

THINK_STYLES = ("inline", "reasoning_content", "reasoning")


DEFAULT_MAX_TOKENS = 8192


# ================================================================ the HTTP app
def _error(status: int, message: str, kind: str = "invalid_request_error",
           headers: Mapping[str, str] | None = None) -> web.Response:
    body = {"error": {"message": message, "type": kind, "code": status}}
    return web.json_response(body, status=status, headers=headers)


class SimulatorApp:
    """Request handling; one instance per server."""

    def __init__(self, problems: ExperimentProblems | None, *, seed: int = DEFAULT_SEED,
                 latency_ms: float = 0.0, faults: FaultPlan | None = None,
                 api_key: str | None = None, think_style: str = "inline", gpu: GpuServing | None = None):
        self.problems = problems
        self.gpu = gpu              # GPU mode (docs/simulator.md): replies paced by a batching engine
        self.seed = seed
        self.latency = max(0.0, latency_ms) / 1000.0
        self.faults = faults or FaultPlan()
        self.api_key = api_key
        self.think_style = think_style
        self.stats = SimStats()
        self.created = int(time.time())

    def build(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/stats", self.get_stats)
        app.router.add_post("/stats/reset", self.reset_stats)
        app.router.add_get("/health", self.health)
        if self.gpu:
            app.on_cleanup.append(self._stop_gpu)
        return app

    async def _stop_gpu(self, app: web.Application) -> None:
        if self.gpu:
            await self.gpu.close()

    # ---- small endpoints -------------------------------------------------------
    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def get_stats(self, request: web.Request) -> web.Response:
        out = self.stats.to_json(request.query.get("keys") in ("1", "true"))
        if self.gpu:
            out["gpu"] = self.gpu.stats_json()
        return web.json_response(out)

    async def reset_stats(self, request: web.Request) -> web.Response:
        self.stats = SimStats(in_flight=self.stats.in_flight, max_in_flight=self.stats.in_flight)
        if self.gpu:
            self.gpu.reset_stats()
        return web.json_response({"status": "reset"})

    def _unauthorised(self, request: web.Request) -> web.Response | None:
        if self.api_key and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "authentication_error")
        return None

    async def models(self, request: web.Request) -> web.Response:
        denied = self._unauthorised(request)
        if denied:
            return denied
        data = [{"id": name, "object": "model", "created": self.created,
                 "owned_by": "reasonscape-simulator", "description": p.description}
                for name, p in PROFILES.items()]
        return web.json_response({"object": "list", "data": data})

    # ---- chat completions --------------------------------------------------------
    async def chat(self, request: web.Request) -> web.StreamResponse:
        self.stats.in_flight += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        try:
            return await self._chat(request)
        finally:
            self.stats.in_flight -= 1     # a reset carries the count over (reset_stats)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.stats.requests += 1
        denied = self._unauthorised(request)
        if denied:
            return denied
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _error(400, "request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            return _error(400, "'messages' must be a non-empty list")
        model = body.get("model")
        profile = PROFILES.get(model) if isinstance(model, str) else None
        if profile is None:
            return _error(404, f"The model `{body.get('model')}` does not exist. "
                               f"Available: {', '.join(PROFILES)}", "NotFoundError")
        key = request_key(body)
        self.stats.received_keys[key] += 1
        fault = self.faults.draw()
        if fault:
            self.stats.faults[fault] += 1
            response = await self._inject(fault, request)
            if response is not None:
                return response
        if self.latency:
            await asyncio.sleep(self.latency)
        answer, prompt_tokens = self.answer(profile, body)
        self.stats.completions += 1
        self.stats.answered_keys[key] += 1
        self.stats.by_model[profile.name] += 1
        self.stats.outcomes[answer.outcome.split(":")[0]] += 1
        usage = usage_of(answer, prompt_tokens)
        if self.gpu:
            return await gpu_reply(self.gpu, request, body, answer, usage,
                                   self.completion_object(body, answer, usage), self.think_style)
        if body.get("stream"):
            return await self._stream(request, body, answer, usage)
        return web.Response(body=json.dumps(self.completion_object(body, answer, usage)),
                            content_type="application/json")

    async def _inject(self, fault: str, request: web.Request) -> web.Response | None:
        if fault == "429":
            return _error(429, "Too many requests (simulated)", "rate_limit_error",
                          headers={"Retry-After": f"{self.faults.retry_after:g}"})
        # Random faults are transient: each carries its own number (as real servers put a
        # request id in a 500) or is cut at its own length, so no two in a row look alike.
        # A reply repeated identically is what the runner takes for a deterministic error.
        number = self.stats.faults[fault]
        if fault == "500":
            return _error(500, f"Internal server error (simulated, fault {number})", "server_error")
        if fault == "malformed":
            cut = b'{"id": "chatcmpl-broken", "choices": [' + b"0, " * (1 + number % 1000)  # JSON ends early
            return web.Response(body=cut, content_type="application/json")
        if fault == "drop":
            if request.transport is not None:    # None once the client has gone already
                request.transport.close()  # the client sees the connection vanish
            raise asyncio.CancelledError()
        await asyncio.sleep(self.faults.stall_seconds)  # "stall": a reply far too late
        return None

    def answer(self, profile: Profile, body: dict) -> tuple[Answer, int]:
        """(the completion, usage.prompt_tokens) for a chat request body, as served."""
        messages = body["messages"]
        prompt = _last_user_text(messages)
        problem = self.problems.lookup(prompt) if self.problems else None
        if problem is None:
            self.stats.unrecognised += 1
            problem = unknown_problem(prompt)
        digest = hashlib.sha256(f"{profile.name}|{self.seed}|{prompt}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
        answer = compose_answer(profile, problem, rng, int(max_tokens), self.think_style)
        return answer, prompt_tokens(messages, prompt, problem)

    def completion_object(self, body: dict, answer: Answer, usage: dict) -> dict:
        """The chat.completion object of an answer (plain replies and the run-batch stand-in)."""
        message = {"role": "assistant", "content": answer.content}
        if answer.reasoning is not None:
            message[self.think_style] = answer.reasoning
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion",
                "created": int(time.time()), "model": body["model"],
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": answer.finish_reason}],
                "usage": usage}

    async def _stream(self, request: web.Request, body: dict, answer: Answer, usage: dict) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-cache"})
        await resp.prepare(request)
        events = StreamEvents(body["model"], f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()))
        parts = [events.event({"role": "assistant", "content": ""})]
        if answer.reasoning:
            parts += [events.delta(self.think_style, piece) for piece in token_pieces(answer.reasoning)]
        parts += [events.delta("content", piece) for piece in token_pieces(answer.content)]
        include = (body.get("stream_options") or {}).get("include_usage")
        parts.append(events.ending(answer.finish_reason, usage if include else None))
        try:
            # one event per token, as vLLM, SGLang and llama.cpp stream (a client counting deltas
            # counts tokens: docs/simulator.md); a few writes, not one per token
            for start in range(0, len(parts), 256):
                await resp.write(b"".join(parts[start:start + 256]))
            await resp.write_eof()
        except ConnectionError:
            pass  # the client gave up (e.g. its timeout fired during a stall): nothing to do
        return resp


def usage_of(answer: Answer, prompt_tokens: int) -> dict:
    """The `usage` object of an answer."""
    return {"prompt_tokens": prompt_tokens, "completion_tokens": answer.completion_tokens,
            "total_tokens": prompt_tokens + answer.completion_tokens}


@lru_cache(maxsize=4096)
def _tokens_cached(text: str) -> int:
    """Token counts of message texts that repeat (system prompts, worked examples)."""
    return count_tokens(text)


def prompt_tokens(messages: list, last_user: str, problem: Problem) -> int:
    """usage.prompt_tokens: the simulator's token count over every message text.

    The last user message is template text + the problem; the problem's own
    count is cached on it, so only the (repeating) template part is counted,
    unless a word runs across the join (then the whole text is counted).
    """
    total = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            continue
        if content is last_user and problem.input_text:
            text = content.rstrip()
            cut = len(text) - len(problem.input_text)
            if cut >= 0 and text.endswith(problem.input_text) and not (
                    cut > 0 and text[cut - 1].isalnum() and text[cut].isalnum()):
                total += _tokens_cached(text[:cut]) + problem.input_tokens
                continue
        total += _tokens_cached(content) if len(content) < 50_000 else count_tokens(content)
    return total


def _last_user_text(messages: list) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # content parts: join the text ones
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""
