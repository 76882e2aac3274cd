"""One streamed chat completion as it arrives: its text deltas, finish_reason and usage,
watched for loops when the sampler asks for stop_loops (docs/runner.md, *Loops stopped early*)."""
from __future__ import annotations

from resolver.client.completions import Completion, _text_or_none, check_usage
from resolver.client.http_policy import error_text
from resolver.grading import FoundLoop, LoopWatch, MalformedReply, split_message

__all__ = ["StreamState"]


class StreamState:
    """Accumulates the deltas of a streamed completion."""

    def __init__(self, watch: LoopWatch | None = None):
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.finish_reason: str | None = None
        self.usage: dict | None = None
        self.done = False
        self.watch = watch
        self.deltas = 0              # content / reasoning deltas received (one token each on vLLM, SGLang, llama.cpp)
        self.loop: FoundLoop | None = None

    def feed(self, chunk: dict) -> None:
        """Add one chunk; MalformedReply for a chunk of a shape we cannot read."""
        if chunk.get("usage") is not None:
            self.usage = check_usage(chunk["usage"])
        if "error" in chunk and not chunk.get("choices"):
            raise MalformedReply(f"error inside the stream: {error_text(chunk['error'])}")
        choices = chunk.get("choices")
        choices = [] if choices is None else choices
        if not isinstance(choices, list):
            raise MalformedReply("stream chunk choices is not a list")
        for choice in choices:
            if not isinstance(choice, dict):
                raise MalformedReply("stream chunk choice is not an object")
            delta = choice.get("delta") or {}
            content, reasoning = split_message(delta)
            if reasoning:
                self.reasoning.append(reasoning)
            if content:
                self.content.append(content)
            self.deltas += bool(content) + bool(reasoning)
            if self.watch is not None and (content or reasoning):
                self.loop = self.watch.feed((reasoning or "") + (content or ""))
            finish = _text_or_none(choice.get("finish_reason"), "finish_reason")
            if finish:
                self.finish_reason = finish

    def completion(self) -> Completion:
        usage = self.usage
        if usage is None and self.watch is not None:
            # A stop_loops stream from a server that sends no usage (llama-cpp-python's server),
            # or one closed before its usage chunk: the deltas are the tokens (one each on
            # vLLM, SGLang, llama.cpp; docs/runner.md, *Loops stopped early*).
            usage = {"completion_tokens": self.deltas}
        if self.loop is not None:
            # Closed on a loop. A server that puts usage in every chunk (vLLM, SGLang with
            # continuous_usage_stats) counted the tokens of the text read so far, prompt included.
            return Completion("".join(self.content), "".join(self.reasoning) or None, "length",
                              usage, self.loop.to_json())
        return Completion("".join(self.content) if self.content or self.finish_reason else None,
                          "".join(self.reasoning) or None, self.finish_reason, usage)
