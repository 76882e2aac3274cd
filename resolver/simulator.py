"""The built-in simulated model server: OpenAI-compatible, on loopback, for demos and tests.

    python -m resolver.simulator --config configs/tiny.yaml --port 3333 [--seed 42]
        [--latency MS] [--fault-rate R | --faults 429=0.05,500=0.02,...] [--api-key KEY]

It regenerates the experiment's problems (same config, same seed), so it knows the
target of every prompt the runner sends, and answers as a named profile
(`sim-strong`, `sim-mid`, `sim-weak`, `sim-loopy`, `sim-thinker`; see
resolver.sim_profiles). A prompt is recognised by the problem text at the end of
its last user message — every template ends with `{input}`.

Endpoints: GET /v1/models, POST /v1/chat/completions (plain and streaming),
GET /stats (request counters; `?keys=1` adds per-request cache keys),
POST /stats/reset, GET /health.

Python API: `SimulatorServer` (in-process, background thread) and
`start_simulator_process` (a subprocess); both wait until the server answers and
have `.url` and `.stop()`.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from aiohttp import web

from resolver.cache import request_key
from resolver.client import fast_event_loop
from resolver.errors import UserError
from resolver.sim_profiles import PROFILES, Answer, Problem, compose_answer, count_tokens, unknown_problem

FAULT_KINDS = ("429", "500", "stall", "drop", "malformed")
THINK_STYLES = ("inline", "reasoning_content", "reasoning")
DEFAULT_MAX_TOKENS = 8192
_TAIL = 64          # characters of problem text used as the lookup key
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
REPO_ROOT = Path(__file__).resolve().parent.parent


# ================================================================ problem index
class ProblemIndex:
    """Maps the end of a prompt to the problem it contains.

    Keyed by the last 64 characters of each problem text; problems shorter than
    that are keyed whole and found by trying each short length that exists.
    """

    def __init__(self):
        self._long: dict[str, list[tuple[str, Problem]]] = {}
        self._short: dict[str, Problem] = {}
        self._short_lengths: set[int] = set()
        self.size = 0

    def add(self, text: str, problem: Problem) -> None:
        text = text.rstrip()
        if len(text) >= _TAIL:
            bucket = self._long.setdefault(text[-_TAIL:], [])
            if not any(existing == text for existing, _ in bucket):
                bucket.append((text, problem))
                self.size += 1
        elif text and text not in self._short:
            self._short[text] = problem
            self._short_lengths.add(len(text))
            self.size += 1

    def problems(self):
        """Every indexed problem (tests and diagnostics)."""
        for bucket in self._long.values():
            yield from (problem for _, problem in bucket)
        yield from self._short.values()

    def lookup(self, prompt: str) -> Problem | None:
        """The problem whose text the prompt ends with (the longest match), or None."""
        prompt = prompt.rstrip()
        best: tuple[int, Problem] | None = None
        for text, problem in self._long.get(prompt[-_TAIL:], ()):
            if prompt.endswith(text) and (best is None or len(text) > best[0]):
                best = (len(text), problem)
        if best:
            return best[1]
        for length in sorted(self._short_lengths, reverse=True):
            found = self._short.get(prompt[-length:])
            if found is not None:
                return found
        return None


def _problem_words(text: str) -> list[str]:
    words = list(dict.fromkeys(_WORD.findall(text)))
    return words[:60]


def _grader(task, case) -> callable:
    """A function grading an answer ending against this case (correct/wrong/invalid)."""
    from resolver.answers import grade

    fields = {"target": case.target, "response_enum": case.response_enum}

    def check(ending: str) -> str:
        verdict = grade(task, fields, ending, "stop")
        if not verdict["is_valid"]:
            return "invalid"
        return "correct" if verdict["is_correct"] else "wrong"

    return check


def simulator_steps(config_path: str, *, seed: int = 42, precision: str | None = None,
                    tokenizer: str | None = None, template=None, cache_dir: str = "cache"):
    """(steps, round size, deepest sample count) for indexing a config's problems.

    The depth is what a runner can ask for: count x maxrounds samples per step
    at the given precision level, or at the deepest level when none is given.

    All densities and degrees are covered: thinner grids are subsets of the
    normal grid and a step's problems depend only on its parameters and seed.
    Calibrated tasks are indexed only when a tokenizer (and template) is given.
    """
    from resolver.manifold import expand_steps, load_config

    config = load_config(config_path)
    steps = []
    for task in config.tasks:
        if task.mode == "calibrate" and not tokenizer:
            sys.stderr.write(f"simulator: skipping calibrated task {task.name!r} "
                             "(give --tokenizer and --template to recognise it)\n")
            continue
        steps += expand_steps(config, tasks=[task.name], seed=seed, tokenizer=tokenizer,
                              template=template, cache_dir=cache_dir)
    if precision is not None:
        _, level = config.precision_level(precision)
        return steps, level.count, level.count * level.maxrounds
    levels = list(config.precision.values())   # any level the runner may choose
    return steps, min(p.count for p in levels), max(p.count * p.maxrounds for p in levels)


class ExperimentProblems:
    """Regenerates the problems of one config and keeps them indexed.

    The index grows on demand: it starts with the first round of every step and
    deepens by a round whenever a prompt of this config is not found, up to
    count x maxrounds of the chosen precision level (default: the deepest).
    """

    def __init__(self, config_path: str, *, seed: int = 42, precision: str | None = None,
                 tokenizer: str | None = None, template=None, cache_dir: str = "cache"):
        self.index = ProblemIndex()
        self.steps, self.round_size, self.max_depth = simulator_steps(
            config_path, seed=seed, precision=precision, tokenizer=tokenizer, template=template,
            cache_dir=cache_dir)
        self.depth = 0
        self._task_texts: list[str] | None = None
        self._difficulty: dict[int, float] = {}
        self._lock = threading.Lock()
        self.deepen()

    def deepen(self) -> bool:
        """Index one more round of every step; False when already at full depth."""
        from resolver.experiment import cases_for
        from resolver.tasks import get_task

        with self._lock:
            if self.depth >= self.max_depth:
                return False
            start, stop = self.depth, min(self.max_depth, self.depth + self.round_size)
            per_step = {id(s): [case for _, case in cases_for(s, start, stop)]
                        for s in self.steps}
            if not self._difficulty:
                self._difficulty = _difficulties(self.steps, per_step)
            for step in self.steps:
                task = get_task(step.generator)
                d = self._difficulty[id(step)]
                for case in per_step[id(step)]:
                    self.index.add(case.input, Problem(
                        target=str(case.target), response_enum=case.response_enum,
                        difficulty=d, words=_problem_words(case.input), check=_grader(task, case),
                        input_text=case.input.rstrip()))
            self.depth = stop
            return True

    def lookup(self, prompt: str) -> Problem | None:
        """The problem at the end of `prompt`, deepening the index while that may help.

        Only prompts that carry one of this config's task descriptions or answer
        formats deepen it: a prompt from another benchmark costs nothing.
        """
        found = self.index.lookup(prompt)
        if found is None and self.depth < self.max_depth and self._looks_like_ours(prompt):
            while found is None and self.deepen():
                found = self.index.lookup(prompt)
        return found

    def _looks_like_ours(self, prompt: str) -> bool:
        if self._task_texts is None:
            from resolver.tasks import get_task

            texts = set()
            for step in self.steps:
                task = get_task(step.generator)
                texts |= {task.description_for(step.gen_params), task.answer_format_for(step.gen_params)}
            self._task_texts = [t for t in texts if t and len(t) >= 8]
        return any(text in prompt for text in self._task_texts)


def _difficulties(steps, cases_by_step) -> dict[int, float]:
    """Difficulty 0..1 of each step: its mean problem length, log-scaled within its task.

    Longer problems are harder in every task of the suite (more terms, more
    rows, more moves, more options), and this needs no per-task knowledge.
    """
    by_task: dict[str, list] = {}
    for step in steps:
        cases = cases_by_step[id(step)]
        mean_len = sum(len(c.input) for c in cases) / max(1, len(cases))
        by_task.setdefault(step.base_task, []).append((step, math.log(max(mean_len, 1.0))))
    result = {}
    for entries in by_task.values():
        low = min(v for _, v in entries)
        high = max(v for _, v in entries)
        for step, value in entries:
            result[id(step)] = 0.3 if high - low < 1e-9 else (value - low) / (high - low)
    return result


# ================================================================ faults and stats
@dataclass
class FaultPlan:
    """Rates (0..1) of each injected fault; drawn independently per request."""

    rates: dict = field(default_factory=dict)
    retry_after: float = 1.0
    stall_seconds: float = 30.0
    seed: int = 0

    def __post_init__(self):
        self._rng = random.Random(self.seed)
        self.total = sum(self.rates.values())
        if self.total > 1.0:
            raise UserError(f"fault rates add up to {self.total:g}; their sum must be at most 1")

    def draw(self) -> str | None:
        if not self.total:
            return None
        roll = self._rng.random()
        for kind in FAULT_KINDS:
            roll -= self.rates.get(kind, 0.0)
            if roll < 0:
                return kind
        return None


def parse_faults(spec: str | None, fault_rate: float | None = None) -> dict:
    """`429=0.05,500=0.02,stall=0.01,drop=0.01,malformed=0.01` and/or an even total rate."""
    rates: dict[str, float] = {}
    if fault_rate:
        if not 0 <= fault_rate <= 1:
            raise UserError(f"--fault-rate {fault_rate:g} must be between 0 and 1")
        rates = {k: fault_rate / len(FAULT_KINDS) for k in FAULT_KINDS}
    for item in filter(None, (p.strip() for p in (spec or "").split(","))):
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in FAULT_KINDS:
            raise UserError(f"--faults item {item!r} is not valid; use KIND=RATE with KIND one of "
                            f"{', '.join(FAULT_KINDS)}")
        try:
            rate = float(value)
        except ValueError:
            raise UserError(f"--faults item {item!r}: {value!r} is not a number") from None
        if not 0 <= rate <= 1:
            raise UserError(f"--faults item {item!r}: rate must be between 0 and 1")
        rates[name.strip()] = rate
    return rates


@dataclass
class SimStats:
    requests: int = 0             # POST /v1/chat/completions received
    completions: int = 0          # answered with a completion
    unrecognised: int = 0
    faults: Counter = field(default_factory=Counter)
    by_model: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)
    received_keys: Counter = field(default_factory=Counter)   # cache key -> times received
    answered_keys: Counter = field(default_factory=Counter)   # cache key -> times answered

    def to_json(self, with_keys: bool = False) -> dict:
        out = {"requests": self.requests, "completions": self.completions,
               "unrecognised": self.unrecognised, "faults": dict(self.faults),
               "by_model": dict(self.by_model), "outcomes": dict(self.outcomes)}
        if with_keys:
            out["received_keys"] = dict(self.received_keys)
            out["answered_keys"] = dict(self.answered_keys)
        return out


# ================================================================ the HTTP app
def _error(status: int, message: str, kind: str = "invalid_request_error", headers=None) -> web.Response:
    body = {"error": {"message": message, "type": kind, "code": status}}
    return web.json_response(body, status=status, headers=headers)


class SimulatorApp:
    """Request handling; one instance per server."""

    def __init__(self, problems: ExperimentProblems | None, *, seed: int = 42,
                 latency_ms: float = 0.0, faults: FaultPlan | None = None,
                 api_key: str | None = None, think_style: str = "inline"):
        self.problems = problems
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
        return app

    # ---- small endpoints -------------------------------------------------------
    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def get_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.to_json(request.query.get("keys") in ("1", "true")))

    async def reset_stats(self, request: web.Request) -> web.Response:
        self.stats = SimStats()
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
        profile = PROFILES.get(body.get("model"))
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
        answer, prompt_tokens = self._answer(profile, body)
        self.stats.completions += 1
        self.stats.answered_keys[key] += 1
        self.stats.by_model[profile.name] += 1
        self.stats.outcomes[answer.outcome.split(":")[0]] += 1
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": answer.completion_tokens,
                 "total_tokens": prompt_tokens + answer.completion_tokens}
        if body.get("stream"):
            return await self._stream(request, body, answer, usage)
        return web.Response(body=json.dumps(self._completion_object(body, answer, usage)),
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
            request.transport.close()  # the client sees the connection vanish
            raise asyncio.CancelledError()
        await asyncio.sleep(self.faults.stall_seconds)  # "stall": a reply far too late
        return None

    def _answer(self, profile, body: dict) -> tuple[Answer, int]:
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

    def _completion_object(self, body: dict, answer: Answer, usage: dict) -> dict:
        message = {"role": "assistant", "content": answer.content}
        if answer.reasoning is not None:
            message[self.think_style] = answer.reasoning
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion",
                "created": int(time.time()), "model": body["model"],
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": answer.finish_reason}],
                "usage": usage}

    async def _stream(self, request: web.Request, body: dict, answer: Answer, usage: dict):
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-cache"})
        await resp.prepare(request)
        base = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body["model"]}

        def event(delta: dict, finish=None, **extra) -> bytes:
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
            return b"data: " + json.dumps(chunk).encode() + b"\n\n"

        parts = [event({"role": "assistant", "content": ""})]
        if answer.reasoning:
            parts += [event({self.think_style: piece}) for piece in _pieces(answer.reasoning)]
        parts += [event({"content": piece}) for piece in _pieces(answer.content)]
        parts.append(event({}, answer.finish_reason))
        if (body.get("stream_options") or {}).get("include_usage"):
            parts.append(b"data: " + json.dumps({**base, "choices": [], "usage": usage}).encode() + b"\n\n")
        parts.append(b"data: [DONE]\n\n")
        try:
            for start in range(0, len(parts), 16):  # a few writes, not one per token
                await resp.write(b"".join(parts[start:start + 16]))
            await resp.write_eof()
        except ConnectionError:
            pass  # the client gave up (e.g. its timeout fired during a stall): nothing to do
        return resp


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


def _pieces(text: str, size: int = 80) -> list[str]:
    """Split text into stream deltas of about `size` characters (no text lost)."""
    return [text[i:i + size] for i in range(0, len(text), size)] if text else []


def _last_user_text(messages: list) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # content parts: join the text ones
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


# ================================================================ running it
def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0 = any free port); UserError when taken."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(f"warning: the simulator is listening on {host}, not only on loopback\n")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port") from None
    sock.listen(4096)
    sock.setblocking(False)
    return sock


async def serve(app: SimulatorApp, sock: socket.socket, ready=None, stop_event: asyncio.Event | None = None):
    """Serve until `stop_event` is set (or forever)."""
    runner = web.AppRunner(app.build(), access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    site = web.SockSite(runner, sock)
    await site.start()
    if ready:
        ready()
    try:
        await (stop_event.wait() if stop_event else asyncio.Event().wait())
    finally:
        await runner.cleanup()


class SimulatorServer:
    """The simulator in a background thread of this process.

        with SimulatorServer("configs/tiny.yaml", latency_ms=0) as sim:
            ... requests to sim.url ...   # http://127.0.0.1:<port>
    """

    def __init__(self, config: str | None, *, seed: int = 42, host: str = "127.0.0.1", port: int = 0,
                 latency_ms: float = 0.0, faults: dict | None = None, retry_after: float = 1.0,
                 stall_seconds: float = 30.0, api_key: str | None = None,
                 think_style: str = "inline", precision: str | None = None,
                 tokenizer: str | None = None, template=None):
        problems = (ExperimentProblems(config, seed=seed, precision=precision, tokenizer=tokenizer,
                                       template=template) if config else None)
        plan = FaultPlan(faults or {}, retry_after=retry_after, stall_seconds=stall_seconds, seed=seed)
        self.app = SimulatorApp(problems, seed=seed, latency_ms=latency_ms, faults=plan,
                                api_key=api_key, think_style=think_style)
        self._sock = bind_socket(host, port)
        self.host = host
        self.port = self._sock.getsockname()[1]
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def stats(self) -> SimStats:
        return self.app.stats

    def start(self, timeout: float = 30.0) -> "SimulatorServer":
        ready = threading.Event()

        def run():
            self._loop = asyncio.new_event_loop()
            self._stop = asyncio.Event()
            self._loop.run_until_complete(serve(self.app, self._sock, ready.set, self._stop))
            self._loop.close()

        self._thread = threading.Thread(target=run, name="simulator", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError("simulator did not start")
        return self

    def stop(self) -> None:
        if self._thread and self._loop and self._stop:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)
        self._thread = None

    def __enter__(self) -> "SimulatorServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class SimulatorProcess:
    """A simulator running as a subprocess (see start_simulator_process)."""

    def __init__(self, proc: subprocess.Popen, url: str):
        self.proc = proc
        self.url = url
        self.port = int(url.rsplit(":", 1)[1])

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stats(self, keys: bool = False) -> dict:
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/stats{'?keys=1' if keys else ''}", timeout=30) as resp:
            return json.loads(resp.read())

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> "SimulatorProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


READY_PREFIX = "simulator ready on "


def start_simulator_process(config: str | None, *, port: int = 0, seed: int = 42, latency_ms: float = 0.0,
                            faults: str | None = None, api_key: str | None = None,
                            extra_args=(), ready_timeout: float = 120.0,
                            python: str = sys.executable, cpu: int | None = None) -> SimulatorProcess:
    """Start `python -m resolver.simulator` and return once it is serving.

    `cpu` pins the process to one core (benchmarks). Raises RuntimeError with the
    server's own message when it exits before becoming ready.
    """
    args = [python, "-m", "resolver.simulator", "--port", str(port),
            "--seed", str(seed), "--latency", str(latency_ms)]
    if config:
        args += ["--config", str(config)]
    if faults:
        args += ["--faults", faults]
    if api_key:
        args += ["--api-key", api_key]
    args += list(map(str, extra_args))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    preexec = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, preexec_fn=preexec)
    deadline = time.monotonic() + ready_timeout
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line.rstrip())
        if line.startswith(READY_PREFIX):
            url = line[len(READY_PREFIX):].split()[0]
            threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
            return SimulatorProcess(proc, url)
    proc.kill()
    proc.wait()
    raise RuntimeError("simulator did not become ready: " + " | ".join(seen[-5:]))


def _drain(stream) -> None:
    """Keep reading a child's output so it never blocks on a full pipe."""
    for _ in stream:
        pass


# ================================================================ command line
def build_parser():
    from resolver.cli import ArgParser

    parser = ArgParser(prog="python -m resolver.simulator",
                       description="Simulated OpenAI-compatible model server (models sim-*), for demos and tests.")
    parser.add_argument("--config", help="experiment config whose prompts it should recognise "
                        "(without it every prompt gets a plausible wrong answer)")
    parser.add_argument("--seed", type=int, default=42, help="the runner's --seed (default 42)")
    parser.add_argument("--precision", help="recognise only as many rounds as this precision level "
                        "can ask for (default: the config's deepest level)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=3333, help="port (default 3333; 0 = any free port)")
    parser.add_argument("--latency", type=float, default=0.0, metavar="MS",
                        help="added delay before every answer, in milliseconds (default 0)")
    parser.add_argument("--fault-rate", type=float, default=0.0, metavar="R",
                        help="total fault rate, split evenly over 429, 500, stall, drop, malformed")
    parser.add_argument("--faults", metavar="SPEC",
                        help="per-kind fault rates, e.g. 429=0.05,500=0.02,stall=0.01,drop=0.01,malformed=0.01")
    parser.add_argument("--retry-after", type=float, default=1.0, metavar="S",
                        help="Retry-After seconds sent with simulated 429s (default 1)")
    parser.add_argument("--stall-seconds", type=float, default=30.0, metavar="S",
                        help="how long a stalled request hangs before answering (default 30)")
    parser.add_argument("--api-key", help="require this bearer token (default: no auth)")
    parser.add_argument("--think-style", choices=THINK_STYLES, default="inline",
                        help="where sim-thinker puts its reasoning: inline <think> block (default), "
                             "or the reasoning_content / reasoning field")
    parser.add_argument("--tokenizer", help="tokenizer for calibrated tasks (as runner.py --tokenizer)")
    parser.add_argument("--template", help="template for calibrated tasks (as runner.py --template)")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.port < 0 or args.port > 65535:
        raise UserError(f"--port {args.port} is not valid; use 0..65535")
    faults = parse_faults(args.faults, args.fault_rate)
    started = time.monotonic()
    template = None
    if args.template:
        from resolver.prompts import load_template

        template = load_template(args.template)
    problems = (ExperimentProblems(args.config, seed=args.seed, precision=args.precision,
                                   tokenizer=args.tokenizer, template=template) if args.config else None)
    plan = FaultPlan(faults, retry_after=args.retry_after, stall_seconds=args.stall_seconds, seed=args.seed)
    app = SimulatorApp(problems, seed=args.seed, latency_ms=args.latency, faults=plan,
                       api_key=args.api_key, think_style=args.think_style)
    sock = bind_socket(args.host, args.port)
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host

    def ready():
        known = f"{problems.index.size} problems indexed" if problems else "no config: every answer is a guess"
        print(f"{READY_PREFIX}http://{host}:{port}  (models: {', '.join(PROFILES)}; {known}; "
              f"started in {time.monotonic() - started:.1f} s)", flush=True)

    try:
        fast_event_loop()
        asyncio.run(serve(app, sock, ready))
    except KeyboardInterrupt:
        pass
    return 0



if __name__ == "__main__":
    from resolver.cli import run_main

    run_main(main)
