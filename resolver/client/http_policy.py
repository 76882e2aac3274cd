"""What an OpenAI-compatible server's error reply means, how long it asks us to wait, which proxy to use.

Kept apart from the client so each rule can be read (and tested) on its own:

* `classify_error(status, body)`: one of
  - ``"prompt_too_long"``: the prompt (plus max_tokens) does not fit the model's
    context. vLLM, SGLang, llama.cpp, TGI and OpenAI each word it differently; the
    sample is a result (recorded as prompt-too-long), not a failure to retry;
  - ``"fatal"``: will never heal by waiting (a rejected or missing API key,
    ``insufficient_quota``, a deactivated account): the run stops at once;
  - ``"loading"``: a 503 while the server loads the model (llama.cpp's
    ``Loading model``, TGI's ``currently loading``): waited for up to the
    loading budget (``--load-timeout``), not counted as retries;
  - ``"retry"``: 408, 409, 429 and 5xx: retried with backoff;
  - ``"failed"``: any other 4xx: the request's own fault, failed at once.
* `retry_delay(headers)`: ``retry-after-ms``, then ``Retry-After`` (seconds or an
  HTTP date), then OpenAI's ``x-ratelimit-reset-requests`` / ``-tokens``
  (durations such as ``6m0s``, ``20ms``) for the limit that is exhausted.
* `proxy_for(url)`: the standard proxy variables as the standard library reads them
  (``https_proxy`` / ``http_proxy``, then ``all_proxy``, upper or lower case; ``no_proxy``
  respected), ``socks4://``, ``socks5://`` and ``socks5h://`` included.
"""
from __future__ import annotations

import email.utils
import json
import re
import time
import urllib.request
from typing import Mapping, TypeGuard
from urllib.parse import urlsplit

MAX_RETRY_AFTER_S = 600.0   # a server asking for longer than this is not honoured blindly

_CONTEXT = re.compile(
    r"maximum context length|context_length_exceeded|exceed_context_size|exceeds the available context size"
    r"|longer than the (?:model's context length|maximum model length)|context length of \d+"
    r"|max_new_tokens` must be <=|prompt is too long|input is too long|input is too large to process"
    r"|too many input tokens|reduce the length of the (?:messages|prompt)", re.IGNORECASE)
_FATAL = re.compile(r"insufficient_quota|invalid_api_key|billing_hard_limit|account_deactivated"
                    r"|exceeded your current quota|incorrect api key", re.IGNORECASE)
_LOADING = re.compile(r"loading", re.IGNORECASE)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def classify_error(status: int, body: str) -> str:
    """'prompt_too_long' | 'fatal' | 'loading' | 'retry' | 'failed' for a non-200 reply."""
    if 400 <= status < 600 and _CONTEXT.search(body):
        return "prompt_too_long"
    if status in (401, 403) or _FATAL.search(body):
        return "fatal"
    if status == 503 and _LOADING.search(body):
        return "loading"
    if status in (408, 409, 429) or status >= 500:
        return "retry"
    return "failed"


def _seconds(value: float) -> float:
    return max(0.0, min(value, MAX_RETRY_AFTER_S))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        number = float(value)
        return _seconds(number) if number == number else None      # NaN is no answer
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return _seconds(when.timestamp() - time.time())


def parse_duration(value: str | None) -> float | None:
    """OpenAI's reset durations ('1s', '6m0s', '20ms', '1h2m3.5s') or plain seconds, in seconds."""
    if not value:
        return None
    text = value.strip().lower()
    try:
        return _seconds(float(text))
    except ValueError:
        pass
    if not text or _DURATION.sub("", text):
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return _seconds(sum(float(n) * scale[unit] for n, unit in _DURATION.findall(text)))


def retry_delay(headers: Mapping[str, str]) -> float | None:
    """How long the server asks us to wait, from its headers; None when it does not say."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            number = float(ms)
            if number == number:
                return _seconds(number / 1000.0)
        except ValueError:
            pass
    after = parse_retry_after(headers.get("retry-after"))
    if after is not None:
        return after
    resets = {kind: parse_duration(headers.get(f"x-ratelimit-reset-{kind}")) for kind in ("requests", "tokens")}
    known_resets = {kind: value for kind, value in resets.items() if value is not None}
    exhausted = [value for kind, value in known_resets.items()
                 if (headers.get(f"x-ratelimit-remaining-{kind}") or "").strip() == "0"]
    known = exhausted or list(known_resets.values())
    return max(known) if known else None


def error_text(error: object) -> str:
    """The human part of an OpenAI-style error object (or whatever came back)."""
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail")
        code = error.get("code") or error.get("type")
        text = str(message) if message else json.dumps(error)[:500]
        if isinstance(code, str) and code and code not in text:
            text += f" ({code})"
        return text[:500]
    return str(error)[:500]


def server_message(raw: bytes) -> str:
    """The message inside an error reply body, else its first bytes."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text[:300] or "(empty body)"
    if isinstance(data, dict):
        for key in ("error", "detail", "message"):
            if key in data:
                return error_text(data[key])
    return text[:300]


# ---------------------------------------------------------------- proxies

SOCKS_SCHEMES = ("socks4", "socks4a", "socks5", "socks5h")


def proxy_for(url: str) -> str | None:
    """The proxy URL the standard environment variables choose for `url`, or None.

    The standard library reads the variables (lower case wins over upper case, an empty
    one unsets it) and applies ``no_proxy``; a scheme's own proxy wins over ``all_proxy``.
    """
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    # typeshed does not list proxy_bypass_environment, an undocumented helper of urllib.request
    if urllib.request.proxy_bypass_environment(parts.hostname or "", proxies):  # type: ignore[attr-defined]
        return None
    chosen = (proxies.get(parts.scheme) or proxies.get("all") or "").strip()
    return chosen or None


def is_socks(proxy: str | None) -> TypeGuard[str]:
    return bool(proxy) and urlsplit(proxy).scheme.lower() in SOCKS_SCHEMES
