"""Talking to OpenAI-compatible servers: the async chat client, what error replies
mean (retry policy), and the response cache.
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.client.cache import TRANSPORT_ONLY_FIELDS, ResponseCache, canonical_request, request_key
    from resolver.client.chat import DEFAULT_LOAD_TIMEOUT, ChatClient, RequestFailed, fast_event_loop
    from resolver.client.completions import Completion, PromptTooLong, cached_completion, completion_from_payload
    from resolver.client.endpoints import api_key_from_env, parse_endpoint
    from resolver.client.http_policy import classify_error, error_text
    from resolver.client.tls import ssl_context_for

__all__ = [
    "api_key_from_env",
    "cached_completion",
    "canonical_request",
    "ChatClient",
    "classify_error",
    "Completion",
    "completion_from_payload",
    "DEFAULT_LOAD_TIMEOUT",
    "error_text",
    "fast_event_loop",
    "parse_endpoint",
    "PromptTooLong",
    "request_key",
    "RequestFailed",
    "ResponseCache",
    "ssl_context_for",
    "TRANSPORT_ONLY_FIELDS",
]

_HOMES = {
    "ChatClient": "chat",
    "Completion": "completions",
    "DEFAULT_LOAD_TIMEOUT": "chat",
    "PromptTooLong": "completions",
    "RequestFailed": "chat",
    "ResponseCache": "cache",
    "TRANSPORT_ONLY_FIELDS": "cache",
    "api_key_from_env": "endpoints",
    "cached_completion": "completions",
    "canonical_request": "cache",
    "classify_error": "http_policy",
    "completion_from_payload": "completions",
    "error_text": "http_policy",
    "fast_event_loop": "chat",
    "parse_endpoint": "endpoints",
    "request_key": "cache",
    "ssl_context_for": "tls",
}
_MODULES = {}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
