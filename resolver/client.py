"""Async client for OpenAI-compatible chat completion servers, on aiohttp.

Why aiohttp and not the OpenAI SDK: the SDK's httpx transport collapses at a few
hundred requests in flight (see docs/performance.md); one aiohttp session with a
connection pool sized to `--parallel` keeps up with the server.

What a caller gets from `ChatClient.complete(body)`: a `Completion` (content,
reasoning, finish_reason, usage) or a `RequestFailed` with the server's message.
Transient trouble — connection errors, timeouts, malformed or cut-off replies,
HTTP 408 / 409 / 429 / 5xx — is retried with capped exponential backoff and full
jitter, waiting at least as long as a `Retry-After` header asks. Other 4xx replies
are the request's own fault and fail at once.
"""
from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import urlsplit

import aiohttp

from resolver.errors import UserError

RETRY_STATUSES = frozenset({408, 409, 429})
MAX_RETRY_AFTER_S = 600.0  # a server asking for longer than this is not honoured blindly


@dataclass
class Completion:
    """The parts of a chat completion the runner keeps (also the cache's value)."""

    content: str | None
    reasoning: str | None
    finish_reason: str | None
    usage: dict | None

    def to_json(self) -> dict:
        return {"content": self.content, "reasoning": self.reasoning,
                "finish_reason": self.finish_reason, "usage": self.usage}

    @classmethod
    def from_json(cls, data: dict) -> "Completion":
        return cls(data.get("content"), data.get("reasoning"),
                   data.get("finish_reason"), data.get("usage"))


class RequestFailed(Exception):
    """A request that will not succeed by retrying (or ran out of retries)."""

    def __init__(self, message: str, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


@dataclass
class ClientStats:
    """Counters shown in the progress bar and the summary."""

    sent: int = 0           # HTTP attempts made
    retries: int = 0        # attempts that were repeats of an earlier one
    failed: int = 0         # requests given up on
    retry_reasons: dict = field(default_factory=dict)

    def note_retry(self, reason: str) -> None:
        self.retries += 1
        self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + 1


def fast_event_loop() -> bool:
    """Use uvloop's event loop for asyncio.run when it is installed.

    It roughly doubles the requests per CPU-second of aiohttp servers and
    clients (see docs/performance.md); without it the standard loop works the same.
    """
    try:
        import uvloop
    except ImportError:
        return False
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return True


def normalize_apibase(url: str | None) -> str:
    """Validate `--apibase` and return it ending in /v1 (appended when missing)."""
    if not url:
        raise UserError("--apibase is required in api mode; e.g. --apibase http://localhost:3333")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"--apibase {url!r} is not an http(s) URL; e.g. http://localhost:3333")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise UserError(f"--apibase {url!r} has an invalid port; e.g. http://localhost:3333") from None
    base = url.strip().rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    return base


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, min(float(value), MAX_RETRY_AFTER_S))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, min(when.timestamp() - time.time(), MAX_RETRY_AFTER_S))


def completion_from_payload(payload) -> Completion:
    """Read a chat.completion object; ValueError when it has no usable choice."""
    if not isinstance(payload, dict):
        raise ValueError("reply is not a JSON object")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = payload.get("error")
        raise ValueError(f"reply has no choices{': ' + error_text(error) if error else ''}")
    choice = choices[0]
    message = choice.get("message") or {}
    # vLLM renamed reasoning_content to reasoning; accept either.
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    usage = payload.get("usage")
    return Completion(message.get("content"), reasoning or None,
                      choice.get("finish_reason"), usage if isinstance(usage, dict) else None)


def error_text(error) -> str:
    """The human part of an OpenAI-style error object (or whatever came back)."""
    if isinstance(error, dict):
        return str(error.get("message") or error.get("detail") or json.dumps(error))[:500]
    return str(error)[:500]


def server_message(raw: bytes) -> str:
    """The message inside an error reply body, else its first bytes."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300] or "(empty body)"
    if isinstance(data, dict):
        if "error" in data:
            return error_text(data["error"])
        if "detail" in data:
            return error_text(data["detail"])
        if "message" in data:
            return error_text(data["message"])
    return text[:300]


class _StreamState:
    """Accumulates the deltas of a streamed completion."""

    def __init__(self):
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.finish_reason: str | None = None
        self.usage: dict | None = None
        self.done = False

    def feed(self, chunk: dict) -> None:
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        if "error" in chunk and not chunk.get("choices"):
            raise ValueError(f"error inside the stream: {error_text(chunk['error'])}")
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.content.append(delta["content"])
            piece = delta.get("reasoning_content") or delta.get("reasoning")
            if piece:
                self.reasoning.append(piece)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def completion(self) -> Completion:
        return Completion("".join(self.content) if self.content or self.finish_reason else None,
                          "".join(self.reasoning) or None, self.finish_reason, self.usage)


class _Transient(Exception):
    """Internal: an attempt failed in a way worth retrying."""

    def __init__(self, reason: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after


class ChatClient:
    """One pooled aiohttp session; use as `async with ChatClient(...) as client`."""

    def __init__(self, apibase: str, apikey: str | None = None, *, parallel: int = 16,
                 timeout: float = 3600.0, max_retries: int = 8, backoff_base: float = 0.5,
                 backoff_cap: float = 30.0, on_retry: Callable[[str], None] | None = None):
        self.base = normalize_apibase(apibase)
        self.apikey = apikey
        self.parallel = max(1, int(parallel))
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.on_retry = on_retry
        self.stats = ClientStats()
        self._session: aiohttp.ClientSession | None = None

    # ---- lifecycle ---------------------------------------------------------
    async def __aenter__(self) -> "ChatClient":
        connector = aiohttp.TCPConnector(limit=self.parallel, limit_per_host=self.parallel,
                                         ttl_dns_cache=300, enable_cleanup_closed=True)
        headers = {"Content-Type": "application/json"}
        if self.apikey:
            headers["Authorization"] = f"Bearer {self.apikey}"
        # trust_env: HTTP(S)_PROXY / NO_PROXY are honoured, as the OpenAI SDK does.
        self._session = aiohttp.ClientSession(
            connector=connector, headers=headers, trust_env=True,
            timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self

    async def __aexit__(self, *exc) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # ---- preflight -----------------------------------------------------------
    async def list_models(self) -> list[str] | None:
        """Model ids from GET /models; None when the server has no such endpoint.

        Raises UserError for the problems that would fail every request: nothing
        listening, not an HTTP server, a rejected API key.
        """
        url = f"{self.base}/models"
        try:
            async with self._session.get(url, timeout=aiohttp.ClientTimeout(total=min(self.timeout, 30))) as resp:
                raw = await resp.read()
                status = resp.status
        except aiohttp.ClientConnectorError as exc:
            why = "connection refused" if isinstance(exc.os_error, ConnectionRefusedError) else str(exc.os_error or exc)
            raise UserError(f"cannot connect to {self.base} ({why}); "
                            "is the server running? check --apibase") from None
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise UserError(f"{self.base} did not answer GET /models "
                            f"({type(exc).__name__}: {exc}); check --apibase") from None
        if status in (401, 403):
            raise UserError(f"{self.base} rejected the API key (HTTP {status}: {server_message(raw)}); "
                            "set --apikey or $OPENAI_API_KEY")
        if status != 200:
            return None
        try:
            data = json.loads(raw)
            return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]
        except (ValueError, AttributeError):
            return None

    # ---- requests ----------------------------------------------------------
    async def complete(self, body: dict, payload: bytes | None = None) -> Completion:
        """Send one chat completion request, retrying transient failures.

        `payload` is the body already serialised (e.g. the cache's canonical
        bytes); without it the body is serialised here.
        """
        if body.get("stream") and "stream_options" not in body:
            # Ask for the usage chunk: token counts are part of every record.
            body, payload = {**body, "stream_options": {"include_usage": True}}, None
        if payload is None:
            payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            try:
                self.stats.sent += 1
                return await self._attempt(body, payload)
            except _Transient as exc:
                if attempt >= self.max_retries:
                    self.stats.failed += 1
                    raise RequestFailed(f"gave up after {attempt + 1} attempts: {exc}",
                                        retryable=True) from None
                self.stats.note_retry(exc.reason)
                if self.on_retry:
                    self.on_retry(exc.reason)
                await asyncio.sleep(self._delay(attempt, exc.retry_after))
                attempt += 1
            except RequestFailed:
                self.stats.failed += 1
                raise

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, never shorter than Retry-After."""
        backoff = random.uniform(0, min(self.backoff_cap, self.backoff_base * 2 ** attempt))
        if retry_after is not None:
            return retry_after + random.uniform(0, 0.1 * retry_after + 0.05)
        return backoff

    async def _attempt(self, body: dict, payload: bytes) -> Completion:
        url = f"{self.base}/chat/completions"
        try:
            async with self._session.post(url, data=payload) as resp:
                if resp.status != 200:
                    await self._raise_for_status(resp)
                if body.get("stream"):
                    return await self._read_stream(resp)
                raw = await resp.read()
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise _Transient("connection", f"{type(exc).__name__}: {exc}") from None
        except asyncio.TimeoutError:
            raise _Transient("timeout", f"no complete reply within --timeout {self.timeout:g} s") from None
        try:
            return completion_from_payload(json.loads(raw))
        except ValueError as exc:
            raise _Transient("malformed", f"malformed reply: {exc}") from None

    async def _raise_for_status(self, resp: aiohttp.ClientResponse) -> None:
        raw = await resp.read()
        status = resp.status
        message = f"HTTP {status}: {server_message(raw)}"
        if status in RETRY_STATUSES or status >= 500:
            raise _Transient(str(status), message, parse_retry_after(resp.headers.get("Retry-After")))
        raise RequestFailed(message, status=status)

    async def _read_stream(self, resp: aiohttp.ClientResponse) -> Completion:
        """Parse server-sent events until [DONE]; a stream cut short is transient."""
        state = _StreamState()
        async for raw_line in resp.content:
            line = raw_line.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                state.done = True
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                raise _Transient("malformed", "malformed stream chunk") from None
            if not isinstance(chunk, dict):
                raise _Transient("malformed", "stream chunk is not an object")
            try:
                state.feed(chunk)
            except ValueError as exc:
                raise _Transient("malformed", str(exc)) from None
        if not state.done and state.finish_reason is None:
            raise _Transient("connection", "stream ended before the completion finished")
        return state.completion()
