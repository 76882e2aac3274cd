"""Compression forensics: how much information is in an answer of a given length?

gzip removes repetition, so a loop of 8,000 tokens compresses to a few hundred bytes
while healthy reasoning of the same length stays large. Plotting completion tokens
against gzip size (computed once by evaluate.py: ``answer_bytes`` and
``compressed_bytes`` per sample) separates the two. Samples fall into three panels:
correct, incorrect (invalid answers included: they ended without being right) and
truncated.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

PANELS = ("correct", "incorrect", "truncated")
_PANEL_OF_OUTCOME = {0: "correct", 1: "incorrect", 2: "incorrect", 3: "truncated"}
#: compressed / raw below this in a long answer is the signature of a loop: healthy
#: English reasoning gzips to ~0.3-0.4 of its size (even the simulator's small-vocabulary
#: prose stays above 0.08), a verbatim loop filling the answer to < 0.05.
LOOP_RATIO = 0.08
#: ...but only answers with at least this many tokens count (short texts gzip badly).
LOOP_MIN_TOKENS = 256


def compression_samples(points: pd.DataFrame, dims: Sequence[str | None]) -> pd.DataFrame:
    """One row per sample: the `dims` columns of its point, tokens, bytes, ratio, panel."""
    dims = [d for d in dict.fromkeys(dims) if d]
    lengths = np.array([len(o) if o is not None else 0 for o in points["outcome"]])
    frame = pd.DataFrame({d: np.repeat(points[d].to_numpy(), lengths) for d in dims})
    frame["point_id"] = np.repeat(points["id"].to_numpy(), lengths) if "id" in points else -1
    frame["tokens"] = _flat(points["completion_tokens"])
    frame["answer_bytes"] = _flat(points["answer_bytes"])
    frame["compressed_bytes"] = _flat(points["compressed_bytes"])
    outcome = _flat(points["outcome"])
    frame["panel"] = [_PANEL_OF_OUTCOME.get(int(o), "incorrect") for o in outcome]
    raw = frame["answer_bytes"].to_numpy(dtype=float)
    frame["ratio"] = np.divide(frame["compressed_bytes"].to_numpy(dtype=float), raw,
                               out=np.full_like(raw, np.nan), where=raw > 0)
    frame["loop_like"] = (frame["ratio"] < LOOP_RATIO) & (frame["tokens"] >= LOOP_MIN_TOKENS)
    return frame


def _flat(column: Iterable[Any]) -> np.ndarray:
    parts = [np.asarray(v, dtype=np.int64) for v in column if v is not None and len(v)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def compression_summary(samples: pd.DataFrame, keys: Sequence[str | None]) -> pd.DataFrame:
    """Per keys x panel: samples, mean tokens, mean gzip bytes, median ratio, loop-like share."""
    keys = [k for k in dict.fromkeys(keys) if k]
    grouped = samples.groupby([*keys, "panel"], sort=True, dropna=False)
    summary = grouped.agg(samples=("tokens", "size"), tokens_mean=("tokens", "mean"),
                          compressed_mean=("compressed_bytes", "mean"), ratio_median=("ratio", "median"),
                          loop_like_share=("loop_like", "mean"))
    return summary.reset_index()
