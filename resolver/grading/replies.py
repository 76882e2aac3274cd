"""What a chat message says: its answer text and its reasoning, whatever shape it came in.

Servers deliver one assistant message in several shapes:

* `content` as a string (the common case), possibly with a `<think>` block inside;
* reasoning in a separate `reasoning_content` (older vLLM) or `reasoning` field
  (newer vLLM, GPT-OSS through OpenAI-compatible servers);
* `content` as a list of typed parts (Magistral and other reasoning models):
  `[{"type": "thinking", "thinking": ...}, {"type": "text", "text": ...}]`, where a
  thinking part may itself carry a list of text parts.

`split_message` turns any of these into `(content, reasoning)` strings, and raises
`MalformedReply` for anything else, so the caller can treat it as a failed reply
(retried, never cached) instead of crashing on it later.
"""
from __future__ import annotations

_TEXT_TYPES = {"text", "output_text"}
_THINKING_TYPES = {"thinking", "reasoning", "reasoning_text"}


class MalformedReply(ValueError):
    """The message does not have a shape we know how to read."""


def _part_text(part: object, where: str) -> str:
    """The text inside one part value: a string, or a list of parts/strings."""
    if isinstance(part, str):
        return part
    if isinstance(part, list):
        return "".join(_part_text(p, where) for p in part)
    if isinstance(part, dict):
        for key in ("text", "thinking", "content", "reasoning"):
            if key in part:
                return _part_text(part[key], where)
        return ""
    if part is None:
        return ""
    raise MalformedReply(f"{where} holds a {type(part).__name__}, not text")


def _split_parts(parts: list) -> tuple[str | None, str | None]:
    texts: list[str] = []
    thoughts: list[str] = []
    for index, part in enumerate(parts):
        where = f"content part {index}"
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise MalformedReply(f"{where} is a {type(part).__name__}, not an object")
        kind = part.get("type", "text")
        if kind in _THINKING_TYPES:
            thoughts.append(_part_text(part, where))
        elif kind in _TEXT_TYPES:
            texts.append(_part_text(part, where))
        # other part types (images, tool calls, refusals) carry no answer text
    return ("".join(texts) if texts else None, "".join(thoughts) if thoughts else None)


def split_message(message: object) -> tuple[str | None, str | None]:
    """`(content, reasoning)` of one chat message; MalformedReply when unreadable."""
    if not isinstance(message, dict):
        raise MalformedReply(f"message is a {type(message).__name__}, not an object")
    content = message.get("content")
    reasoning_parts: list[str] = []
    if content is None or isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text, thought = _split_parts(content)
        if thought:
            reasoning_parts.append(thought)
    else:
        raise MalformedReply(f"message content is a {type(content).__name__}, not text")
    # vLLM renamed reasoning_content to reasoning; accept either.
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if value is None:
            continue
        if isinstance(value, (str, list)):
            piece = _part_text(value, key)
            if piece:
                reasoning_parts.insert(0, piece)
            break
        raise MalformedReply(f"message {key} is a {type(value).__name__}, not text")
    reasoning = "".join(reasoning_parts) or None
    return text, reasoning
