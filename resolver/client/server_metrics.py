"""The server's own token counter, where it publishes one: vLLM's Prometheus /metrics
(`vllm:generation_tokens_total`). The runner reads it before and after a stop_loops run to
report the tokens a loop stop saved as the server counts them (docs/runner.md, *Loops
stopped early*); elsewhere it reports the client's estimate."""
from __future__ import annotations

import re

__all__ = ["GENERATED_COUNTER", "generated_tokens"]

GENERATED_COUNTER = "vllm:generation_tokens_total"
_SAMPLE = re.compile(r"^vllm:generation_tokens_total(?:\{[^}]*\})?\s+([0-9.eE+]+)\s*$", re.MULTILINE)


def generated_tokens(metrics_text: str) -> int | None:
    """The counter summed over its label sets (one per engine and model), or None without it."""
    values = _SAMPLE.findall(metrics_text)
    return round(sum(float(v) for v in values)) if values else None
