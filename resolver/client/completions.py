"""What a chat-completions reply holds once read: the completion, its usage counts, a
prompt-too-long verdict; and the checks that a reply's JSON is one (docs/runner.md).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from resolver.client.http_policy import error_text
from resolver.grading import MalformedReply, split_message

MAX_TOKEN_COUNT = 2**31 - 1    # usage counts must fit a 32-bit integer column


USAGE_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def check_usage(usage: object) -> dict | None:
    """A usage object whose token counts are non-negative 32-bit integers; MalformedReply otherwise."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise MalformedReply(f"usage is a {type(usage).__name__}, not an object")
    for name in USAGE_COUNTS:
        value = usage.get(name)
        if value is None:
            continue
        if type(value) is not int or not 0 <= value <= MAX_TOKEN_COUNT:
            raise MalformedReply(f"usage.{name} is {str(value)[:40]!r}, not a token count")
    # Keep scalars and one level of details ({"cached_tokens": 0}); drop anything deeper,
    # so a record never carries an arbitrarily nested structure from the server.
    return {k: v for k, v in usage.items() if isinstance(k, str) and (_scalar(v) or (
        isinstance(v, dict) and all(_scalar(x) for x in v.values())))}


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _text_or_none(value: object, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise MalformedReply(f"{name} is a {type(value).__name__}, not text")


@dataclass
class Completion:
    """The parts of a chat completion the runner keeps (also the cache's value)."""

    content: str | None
    reasoning: str | None
    finish_reason: str | None
    usage: dict | None
    # The stream was closed on a loop (ChatClient with a LoopWatch): FoundLoop.to_json();
    # finish_reason is then "length" and usage.completion_tokens the deltas streamed.
    loop: dict | None = None

    def __post_init__(self) -> None:
        """Every completion is checked on creation: a malformed one never exists, so is never cached."""
        _text_or_none(self.content, "content")
        _text_or_none(self.reasoning, "reasoning")
        _text_or_none(self.finish_reason, "finish_reason")
        check_usage(self.usage)
        if self.loop is not None and not (isinstance(self.loop, dict) and all(
                type(v) is int and 0 <= v <= MAX_TOKEN_COUNT for v in self.loop.values())):
            raise MalformedReply("loop is not an object of counts")

    def to_json(self) -> dict:
        data = {"content": self.content, "reasoning": self.reasoning,
                "finish_reason": self.finish_reason, "usage": self.usage}
        if self.loop is not None:
            data["loop"] = self.loop
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Completion":
        """A cached completion; MalformedReply when the stored value is not one."""
        if not isinstance(data, dict):
            raise MalformedReply(f"cached value is a {type(data).__name__}, not an object")
        return cls(data.get("content"), data.get("reasoning"), data.get("finish_reason"), data.get("usage"),
                   data.get("loop"))


@dataclass(frozen=True)
class PromptTooLong:
    """The server's answer that this prompt does not fit the model's context (a finished sample).

    API mode gets it from a RequestFailed of kind "prompt_too_long"; read-batch from a
    run-batch output line, and then keeps it in the cache's too_long table.
    """

    message: str


def cached_completion(data: dict) -> "Completion | None":
    """A cached completion, or None when the stored value is malformed (ask the server again)."""
    try:
        return Completion.from_json(data)
    except MalformedReply:
        return None


def reply_excerpt(raw: bytes, limit: int = 160) -> str:
    """The start of a reply body on one printable line (for saying what a server sent)."""
    text = " ".join(raw[:limit * 4].decode("utf-8", "replace").split())
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text[:limit] + ("..." if len(text) > limit else "")


def completion_from_payload(payload: object) -> Completion:
    """Read a chat.completion object; MalformedReply (a ValueError) for any shape we cannot read."""
    if not isinstance(payload, dict):
        raise MalformedReply("reply is not a JSON object")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = payload.get("error")
        raise MalformedReply(f"reply has no choices{': ' + error_text(error) if error else ''}")
    choice = choices[0]
    content, reasoning = split_message(choice.get("message"))
    return Completion(content, reasoning, _text_or_none(choice.get("finish_reason"), "finish_reason"),
                      check_usage(payload.get("usage")))


def parse_json_reply(raw: bytes) -> Any:
    """json.loads for a reply body; MalformedReply for bad JSON, bad UTF-8 or absurd nesting."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise MalformedReply("reply is nested too deeply to be read") from None
    except ValueError as exc:          # JSONDecodeError and UnicodeDecodeError
        raise MalformedReply(f"reply is not JSON ({str(exc)[:80]})") from None
