"""What an API-mode run did: samples, cache hits, retries, failures, as counts and the
lines runner.py prints at the end (docs/runner.md).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import field
from pathlib import Path

from pydantic.dataclasses import dataclass


# ================================================================ run summary
# A pydantic dataclass: typed and checked when made, with a JSON Schema (docs/schemas/run-summary.json),
# while counting stays plain attribute updates, once per record (docs/decisions.md, issue 37 part 1).
@dataclass
class RunSummary:
    folder: Path | None = None
    steps_total: int = 0
    steps_done: int = 0
    samples: int = 0                 # records written
    from_cache: int = 0
    answered: int = 0                # answers received from the server in this run
    correct: int = 0
    truncated: int = 0
    prompt_too_long: int = 0         # of the truncated: the server refused the prompt as too long
    invalid: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    resent: int = 0                  # requests sent again at once: a pooled connection the server had closed
    retry_reasons: dict[str, int] = field(default_factory=dict)
    failures: Counter[str] = field(default_factory=Counter)    # failure message -> samples
    incomplete: list[tuple[str, int, int]] = field(default_factory=list)   # (step name, round, missing samples)
    interrupted: bool = False
    loops_stopped: int = 0           # answers closed early on a loop (the sampler's stop_loops)
    tokens_saved: int = 0            # their max_tokens minus the tokens streamed before the stop
    answered_tokens: int = 0         # completion tokens of the answers received in this run
    server_generated: int | None = None   # the server's own count over the run (vLLM's /metrics), if it has one
    wall: float = 0.0
    cpu: float = 0.0                 # CPU seconds of this process during the loop

    def count(self, record: dict, cached: bool) -> None:
        self.samples += 1
        self.from_cache += cached
        self.correct += bool(record["is_correct"])
        self.truncated += bool(record["is_truncated"])
        self.prompt_too_long += record.get("prompt_too_long") is True
        self.invalid += (not record["is_valid"]) and not record["is_truncated"]
        usage = record.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        loop = (record.get("timings") or {}).get("loop")
        if loop is not None:
            self.loops_stopped += 1
            self.tokens_saved += max(0, int(loop.get("max_tokens") or 0) - int(usage.get("completion_tokens") or 0))

    def _saved_line(self) -> str:
        """What the loop stops saved: by the server's own counter where it has one (the tokens it
        generated after the client closed the streams are not saved), else the client's estimate
        (docs/runner.md, *Loops stopped early*)."""
        start = f"loops stopped: {self.loops_stopped} (of the truncated), tokens saved: "
        if self.server_generated is None:
            return start + (f"{self.tokens_saved} (the client's estimate: their max_tokens minus the tokens "
                            "streamed before the stop)")
        after = max(0, self.server_generated - self.answered_tokens)
        return start + (f"{max(0, self.tokens_saved - after)} by the server's count (vllm:generation_tokens_total: "
                        f"{self.server_generated} generated in this run, {after} of them after the streams were "
                        f"closed; the client's estimate: {self.tokens_saved})")

    def lines(self) -> list[str]:
        rate = self.samples / self.wall if self.wall > 0 else 0.0
        out = [
            f"samples: {self.samples} written ({self.from_cache} from cache, {self.answered} answered now) "
            f"in {self.steps_done}/{self.steps_total} steps",
            f"outcomes: {self.correct} correct, {self.truncated} truncated, {self.invalid} invalid, "
            f"{self.failed} failed" + (f"; {self.prompt_too_long} of the truncated: prompt too long for the "
                                       f"model's context" if self.prompt_too_long else ""),
            f"tokens: {self.prompt_tokens} prompt, {self.completion_tokens} completion",
            *([self._saved_line()] if self.loops_stopped else []),
            f"wall time: {self.wall:.1f} s ({rate:.1f} samples/s, {self.cpu:.1f} s CPU); retries: {self.retries}"
            + (f" ({', '.join(f'{k}: {v}' for k, v in sorted(self.retry_reasons.items()))})"
               if self.retry_reasons else "")
            + (f"; sent again at once: {self.resent} (the server had closed the idle connection)"
               if self.resent else ""),
        ]
        if self.folder:
            out.append(f"results: {self.folder}")
        for message, n in self.failures.most_common(5):
            out.append(f"failed x{n}: {message}")
        return out
