"""Async client for OpenAI-compatible chat completion servers, on aiohttp.

Why aiohttp and not the OpenAI SDK: the SDK's httpx transport collapses at a few
hundred requests in flight (see docs/performance.md); one aiohttp session with a
connection pool sized to the requests in flight (`--parallel` x `--threads`) keeps up with the server.

What a caller gets from `ChatClient.complete(body)`: a `Completion` (content,
reasoning, finish_reason, usage) whose every field has been type-checked, or a
`RequestFailed` with the server's message and a `kind`:

* transient trouble (connection errors, timeouts, malformed or cut-off replies of
  any shape, HTTP 408 / 409 / 429 / 5xx) is retried by tenacity, with the rules in
  resolver.client.retries: capped exponential backoff and full jitter, waiting at
  least as long as the server asks (`retry-after-ms`, `Retry-After`,
  `x-ratelimit-reset-*`); then kind "failed";
* except a reply that repeats: the same malformed shape, or the same 5xx body (500,
  501, 505... not the gateway statuses 502 / 503 / 504, and not when the server asks
  for a wait), 4 times in a row (retries.SAME_REPLY_ATTEMPTS) is the server's answer to this
  request, not bad luck: kind "failed" at once (llama.cpp's deterministic
  "could not broadcast input array" 500s, a server that never sends chat completions);
* a 503 "Loading model" is waited for up to `load_timeout` seconds;
* kind "prompt_too_long": the server says the prompt does not fit its context
  (not retried; the runner records the sample as prompt-too-long);
* kind "fatal": a rejected API key or exhausted quota (not retried; the run stops);
* other 4xx: kind "failed" at once.

Error bodies are classified by resolver.client.http_policy. A reply is checked before it
leaves this module, so nothing malformed reaches the cache.
"""
from __future__ import annotations

import asyncio
import json
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Callable, Mapping
from urllib.parse import urlsplit

import aiohttp
from aiohttp.helpers import basicauth_from_netrc, netrc_from_env
from tenacity import AsyncRetrying, RetryCallState, retry_if_result, stop_after_delay

from resolver.client.completions import Completion, completion_from_payload, parse_json_reply, reply_excerpt
from resolver.client.endpoints import Endpoint, parse_endpoint
from resolver.client.http_policy import classify_error, is_socks, proxy_for, retry_delay, server_message
from resolver.client.retries import RequestFailed, RequestRetries, Transient, loading_pause
from resolver.client.server_metrics import generated_tokens
from resolver.client.stats import ClientStats
from resolver.client.stream import StreamState
from resolver.client.timeouts import DEFAULT_LOAD_TIMEOUT, DEFAULT_TIMEOUT
from resolver.core import UserError
from resolver.grading import LoopRule, LoopWatch, MalformedReply

if TYPE_CHECKING:
    import ssl


GATEWAY_STATUSES = (502, 503, 504)   # a proxy's fixed page while the server restarts: keep retrying

# How long an idle pooled connection is kept: under the 5 s keep-alive after which uvicorn
# (vLLM, SGLang) and llama.cpp's server close an idle connection, with room for a client
# whose event loop is late on a busy machine (aiohttp's own default, 15 s, outlives it and
# sends requests into connections the server is closing; docs/runner.md, *Pooled connections*).
KEEPALIVE_SECONDS = 2.0


class _Reuse:
    """Per-request trace context: was the request sent on a pooled (reused) connection?"""

    __slots__ = ("reused",)

    def __init__(self) -> None:
        self.reused = False


async def _mark_reused(session: aiohttp.ClientSession, context: Any, params: object) -> None:
    reuse = context.trace_request_ctx
    if reuse is not None:            # None: a request that does not ask (GET /models, the probe)
        reuse.reused = True


_REUSE_TRACE = aiohttp.TraceConfig()
_REUSE_TRACE.on_connection_reuseconn.append(_mark_reused)
_REUSE_TRACE.freeze()

# probe_chat's reply: (status, body, headers), or None when the connection failed.
_ProbeReply = tuple[int, bytes, Mapping[str, str]] | None


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
    """Validate `--apibase`; a URL without a path gets /v1, a URL with a path is used as given.

    So ``http://localhost:3333``, ``http://localhost:3333/v1`` and provider bases such
    as ``https://api.deepinfra.com/v1/openai`` all work (the preflight also tries
    ``<base>/v1`` when ``<base>/models`` is not found). An Azure OpenAI deployment URL
    gives its deployment base (its query is kept by resolver.client.endpoints.parse_endpoint).
    """
    return parse_endpoint(url).base


def _netrc_login(base: str) -> aiohttp.BasicAuth | None:
    """The $NETRC / ~/.netrc login for the server's host, as aiohttp's trust_env reads it; or None."""
    host = urlsplit(base).hostname
    try:
        return basicauth_from_netrc(netrc_from_env(), host) if host else None
    except LookupError:
        return None


def _refuses_continuous_usage(exc: RequestFailed) -> bool:
    """A 400 / 422 that names the continuous_usage_stats option: a server that validates
    stream_options strictly (vLLM, SGLang and llama.cpp accept or ignore it)."""
    return exc.status in (400, 422) and "continuous_usage_stats" in str(exc)


class ChatClient:
    """One pooled aiohttp session; use as `async with ChatClient(...) as client`."""

    def __init__(self, apibase: str, apikey: str | None = None, *, parallel: int = 16,
                 timeout: float = DEFAULT_TIMEOUT, max_retries: int = 8, backoff_base: float = 0.5,
                 backoff_cap: float = 30.0, on_retry: Callable[[str], None] | None = None,
                 load_timeout: float = DEFAULT_LOAD_TIMEOUT, ssl_context: ssl.SSLContext | None = None):
        self.endpoint: Endpoint = parse_endpoint(apibase)
        self.chat_url = self.endpoint.url("chat/completions")
        self.ssl_context = ssl_context       # None: aiohttp's default (the system's CAs); see resolver.client.tls
        self.apikey = apikey
        self.parallel = max(1, int(parallel))
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.on_retry = on_retry
        self.load_timeout = float(load_timeout)
        self.stats = ClientStats()
        self.continuous_usage = True          # ask for usage in every chunk of a stop_loops stream
        self.proxy = proxy_for(self.base)
        self._session: aiohttp.ClientSession | None = None
        self._netrc_headers: dict[str, str] | None = None

    @property
    def base(self) -> str:
        return self.endpoint.base

    # ---- lifecycle ---------------------------------------------------------
    async def __aenter__(self) -> "ChatClient":
        headers = {"Content-Type": "application/json", **self.endpoint.auth_headers(self.apikey)}
        options: dict[str, Any] = dict(limit=self.parallel, limit_per_host=self.parallel, ttl_dns_cache=300,
                                       keepalive_timeout=KEEPALIVE_SECONDS)
        if self.ssl_context is not None:
            options["ssl"] = self.ssl_context
        connector: aiohttp.BaseConnector
        if is_socks(self.proxy):
            try:
                from aiohttp_socks import ProxyConnector
            except ImportError:
                raise UserError(f"the proxy {self.proxy} is a SOCKS proxy, which needs the aiohttp-socks "
                                "package (pip install aiohttp-socks)") from None
            try:
                remote_dns = self.proxy.lower().startswith(("socks5h", "socks4a"))
                connector = ProxyConnector.from_url(self.proxy, rdns=remote_dns, **options)
            except ValueError as exc:
                raise UserError(f"bad SOCKS proxy URL {self.proxy!r}: {exc}") from None
        else:
            connector = aiohttp.TCPConnector(**options)
        # Proxies come from resolver.client.http_policy.proxy_for (http(s)_proxy, then all_proxy,
        # no_proxy respected) and the .netrc login is read here once: aiohttp's trust_env would
        # look both up again in a worker thread for every request (docs/performance.md).
        # An explicit key wins: the .netrc login is for servers the user gave no key for.
        login = None if is_socks(self.proxy) or self.apikey else _netrc_login(self.base)
        self._netrc_headers = None if login is None else {"Authorization": login.encode()}
        self._session = aiohttp.ClientSession(
            connector=connector, headers=headers, timeout=aiohttp.ClientTimeout(total=self.timeout),
            trace_configs=[_REUSE_TRACE])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _request(self, method: str, url: str, **kwargs: Any) -> AbstractAsyncContextManager[aiohttp.ClientResponse]:
        if self.proxy and not is_socks(self.proxy):
            kwargs["proxy"] = self.proxy
        if self._netrc_headers is not None:
            kwargs["headers"] = self._netrc_headers   # per request: aiohttp drops it on a redirect to another host
        assert self._session is not None, "ChatClient requests run inside `async with`"
        return self._session.request(method, url, **kwargs)

    # ---- preflight -----------------------------------------------------------
    async def _get_models(self, base: str) -> tuple:
        url = f"{base}/models"
        try:
            async with self._request("GET", url, timeout=aiohttp.ClientTimeout(total=min(self.timeout, 30))) as resp:
                return resp.status, await resp.read()
        except aiohttp.ClientConnectorError as exc:
            raise self._cannot_connect(exc) from None
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as exc:
            raise UserError(f"{self.base} did not answer GET /models "
                            f"({type(exc).__name__}: {exc}); check --apibase") from None

    def _cannot_connect(self, exc: aiohttp.ClientConnectorError) -> UserError:
        if isinstance(exc, aiohttp.ClientConnectorCertificateError):
            return UserError(f"{self.base}: the server's TLS certificate is not trusted "
                             f"({exc.certificate_error}); give its CA with --ca-bundle FILE "
                             "(or $REQUESTS_CA_BUNDLE / $SSL_CERT_FILE)")
        why = "connection refused" if isinstance(exc.os_error, ConnectionRefusedError) else str(exc.os_error or exc)
        return UserError(f"cannot connect to {self.base} ({why}); is the server running? check --apibase")

    @property
    def key_hint(self) -> str:
        return "--apikey / $AZURE_OPENAI_API_KEY" if self.endpoint.azure_deployment else "--apikey / $OPENAI_API_KEY"

    async def list_models(self) -> list[str] | None:
        """Model ids from GET /models; None when the server has no such endpoint.

        Raises UserError for the problems that would fail every request: nothing
        listening, not an HTTP server, a rejected API key. When ``<base>/models`` is
        not found but ``<base>/v1/models`` is, the base moves to ``<base>/v1``.
        """
        if self.endpoint.azure_deployment:
            return None              # a deployment has no model list; probe_chat checks it
        status, raw = await self._get_models(self.base)
        if status == 404 and not self.base.endswith("/v1"):
            other, other_raw = await self._get_models(self.base + "/v1")
            if other == 200:
                self.endpoint = self.endpoint.moved_to(self.base + "/v1")
                self.chat_url = self.endpoint.url("chat/completions")
                status, raw = other, other_raw
        if status >= 400 and classify_error(status, raw.decode("utf-8", "replace")) == "fatal":
            raise UserError(f"{self.base} rejected the API key (HTTP {status}: {server_message(raw)}); "
                            f"set {self.key_hint}")
        if status != 200:
            return None
        try:
            data = parse_json_reply(raw)
            return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]
        except (ValueError, AttributeError, TypeError):
            return None

    async def probe_chat(self, model: str) -> None:
        """One minimal chat request (max_tokens 1), for what GET /models cannot tell.

        llama.cpp serves /v1/models without checking the key, and some servers have no
        /models at all; this finds a rejected key, an unknown model or a wrong base
        before any run folder exists. A loading model is waited for (load_timeout).
        """
        body = {"model": model, "messages": [{"role": "user", "content": "Reply with OK."}], "max_tokens": 1}

        async def probe() -> _ProbeReply:
            try:
                async with self._request("POST", self.chat_url, json=body,
                                         timeout=aiohttp.ClientTimeout(total=min(self.timeout, 120))) as resp:
                    return resp.status, await resp.read(), resp.headers
            except aiohttp.ClientConnectorError as exc:
                raise self._cannot_connect(exc) from None
            except (aiohttp.ClientError, asyncio.TimeoutError):
                return None          # the run's own retries deal with a flaky connection

        def kind_of(reply: tuple[int, bytes, Mapping[str, str]]) -> str:
            status, raw, _ = reply
            return classify_error(status, raw.decode("utf-8", "replace")) if status != 200 else "ok"

        def last_reply(state: RetryCallState) -> _ProbeReply:
            assert state.outcome is not None, "tenacity calls its hooks after an attempt"
            return state.outcome.result()

        def pause(state: RetryCallState) -> float:
            reply = last_reply(state)
            assert reply is not None, "only a loading reply is retried"
            return loading_pause(retry_delay(reply[2]), 5.0)

        # Wait while the server says it is loading, up to load_timeout; then judge the last reply.
        retrying = AsyncRetrying(retry=retry_if_result(lambda r: r is not None and kind_of(r) == "loading"),
                                 stop=stop_after_delay(self.load_timeout), wait=pause,
                                 retry_error_callback=last_reply)
        reply: _ProbeReply = await retrying(probe)
        if reply is None:
            return
        status, raw, _ = reply
        kind = kind_of(reply)
        where = self.chat_url
        if kind == "fatal":
            raise UserError(f"{where} refused the request (HTTP {status}: {server_message(raw)}); "
                            f"check {self.key_hint} and the account's quota")
        if kind == "loading":
            raise UserError(f"{self.base} was still loading the model after {self.load_timeout:g} s "
                            "(--load-timeout); wait for it or raise --load-timeout")
        if status == 404:
            raise UserError(f"{where} answered HTTP 404 ({server_message(raw)}); check --model and --apibase")

    async def server_generated_tokens(self) -> int | None:
        """vLLM's `vllm:generation_tokens_total` from the server's /metrics (the server's root,
        without /v1), or None where there is no such counter (resolver.client.server_metrics)."""
        root = self.base[:-3] if self.base.endswith("/v1") else self.base
        try:
            async with self._request("GET", f"{root}/metrics", timeout=aiohttp.ClientTimeout(total=10)) as resp:
                text = await resp.text() if resp.status == 200 else ""
        except (aiohttp.ClientError, asyncio.TimeoutError, UnicodeDecodeError):
            return None
        return generated_tokens(text)

    # ---- requests ----------------------------------------------------------
    async def complete(self, body: dict, payload: bytes | None = None, stop_loops: LoopRule | None = None) -> Completion:
        """Send one chat completion request, retrying transient failures.

        `payload` is the body already serialised (e.g. the cache's canonical
        bytes); without it the body is serialised here. With `stop_loops` (a streamed
        request) each attempt's stream is watched by a LoopWatch of that rule and closed
        as soon as it finds a loop (the Completion's `loop`; docs/runner.md).
        """
        continuous = False
        if body.get("stream") and "stream_options" not in body:
            # Ask for the usage chunk: token counts are part of every record. A stream that may
            # be closed early asks for usage in every chunk too, so a stopped answer keeps the
            # server's counts (vLLM and SGLang honour it; llama.cpp ignores it; a server that
            # refuses it is asked again without it: _refuses_continuous_usage).
            continuous = stop_loops is not None and self.continuous_usage
            options = {"include_usage": True, "continuous_usage_stats": True} if continuous else {"include_usage": True}
            body, payload = {**body, "stream_options": options}, None
        if payload is None:
            payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        try:
            try:
                self.stats.sent += 1
                return await self._attempt(body, payload, stop_loops)
            except Transient as first:
                # Only a request that failed once pays for the retry machinery (resolver.client.retries).
                return await self._retries().run(lambda: self._counted_attempt(body, payload, stop_loops), first)
        except RequestFailed as exc:
            if continuous and _refuses_continuous_usage(exc):
                self.continuous_usage = False
                plain = {**body, "stream_options": {"include_usage": True}}
                return await self.complete(plain, None, stop_loops)
            if exc.kind != "prompt_too_long":
                self.stats.failed += 1
            raise

    def _retries(self) -> RequestRetries:
        return RequestRetries(max_retries=self.max_retries, backoff_base=self.backoff_base,
                              backoff_cap=self.backoff_cap, load_timeout=self.load_timeout,
                              stats=self.stats, on_retry=self.on_retry)

    async def _counted_attempt(self, body: dict, payload: bytes, stop_loops: LoopRule | None = None) -> Completion:
        self.stats.sent += 1
        return await self._attempt(body, payload, stop_loops)

    async def _send(self, payload: bytes) -> aiohttp.ClientResponse:
        """POST the request and read the reply's status and headers.

        A pooled connection that the server closed while it sat idle (its keep-alive ran out
        while this client's event loop was busy) fails before any byte of a reply: the server
        never saw the request. Such a request is sent again at once, with no pause and no
        retry spent, and counted in ``stats.resent``; once per attempt, as RFC 9112 (9.3.1)
        lets a client resend on a persistent connection that closed before it answered. A
        server that reads a request and drops it cannot be told apart on a pooled connection,
        so a second such failure, and any on a fresh connection, goes to the retry rules
        (docs/runner.md, *Pooled connections*).
        """
        reuse = _Reuse()
        try:
            # entering aiohttp's request context is awaiting the response; `async with` on
            # the response releases it as leaving the context would
            return await self._request("POST", self.chat_url, data=payload, trace_request_ctx=reuse).__aenter__()
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
            if not reuse.reused:
                raise
        self.stats.resent += 1
        return await self._request("POST", self.chat_url, data=payload).__aenter__()

    async def _attempt(self, body: dict, payload: bytes, stop_loops: LoopRule | None = None) -> Completion:
        try:
            async with await self._send(payload) as resp:
                if resp.status != 200:
                    await self._raise_for_status(resp)
                if body.get("stream"):
                    return await self._read_stream(resp, None if stop_loops is None else LoopWatch(stop_loops))
                raw = await resp.read()
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise Transient("connection", f"{type(exc).__name__}: {exc}") from None
        except asyncio.TimeoutError:
            raise Transient("timeout", f"no complete reply within --timeout {self.timeout:g} s") from None
        try:
            return completion_from_payload(parse_json_reply(raw))
        except MalformedReply as exc:
            message = f"malformed reply: {exc}"
            raise Transient("malformed", message, signature=message, sent=reply_excerpt(raw)) from None

    async def _raise_for_status(self, resp: aiohttp.ClientResponse) -> None:
        raw = await resp.read()
        status = resp.status
        message = f"HTTP {status}: {server_message(raw)}"
        kind = classify_error(status, raw.decode("utf-8", "replace"))
        if kind in ("retry", "loading"):
            asked = retry_delay(resp.headers)
            # A server error that would repeat for this request: the whole body is its identity.
            # Gateways and servers that ask for a wait expect the retry to work: no signature.
            repeatable = status >= 500 and status not in GATEWAY_STATUSES and asked is None and kind == "retry"
            raise Transient("loading" if kind == "loading" else str(status), message, asked,
                             signature=(status, raw) if repeatable else None, status=status)
        raise RequestFailed(message, status=status, kind=kind)

    async def _read_stream(self, resp: aiohttp.ClientResponse, watch: LoopWatch | None = None) -> Completion:
        """Parse server-sent events until [DONE]; a stream cut short is transient.

        With a `watch`, a loop it finds ends the reading at once: the connection is closed
        (not read to its end, not returned to the pool), which is how vLLM, SGLang and
        llama.cpp's server learn to stop generating (docs/runner.md, *Loops stopped early*).
        """
        state = StreamState(watch)
        async for raw_line in resp.content:
            line = raw_line.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                state.done = True
                break
            try:
                chunk = parse_json_reply(data)
                if not isinstance(chunk, dict):
                    raise MalformedReply("stream chunk is not an object")
                state.feed(chunk)
            except MalformedReply as exc:
                message = f"malformed stream: {exc}"
                raise Transient("malformed", message, signature=message, sent=reply_excerpt(data)) from None
            if state.loop is not None:
                resp.close()
                return state.completion()
        if not state.done and state.finish_reason is None:
            raise Transient("connection", "stream ended before the completion finished")
        return state.completion()
