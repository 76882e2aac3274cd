"""probe.py computations: raw-trace forensics for chosen points (fft, failure, truncation).

Every function here returns plain data (DataFrames, dicts, dataclasses); rendering
lives in resolver/probe/render.py and resolver/plots/.
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.probe.fft import FREQUENCIES, fft_table
    from resolver.probe.tokens import eval_tokenizers
    from resolver.probe.traces import load_points, outcome_name, point_records, sample_index

__all__ = [
    "cli",
    "eval_tokenizers",
    "fft_table",
    "FREQUENCIES",
    "load_points",
    "loops",
    "outcome_name",
    "point_records",
    "sample_index",
]

_HOMES = {
    "FREQUENCIES": "fft",
    "eval_tokenizers": "tokens",
    "fft_table": "fft",
    "load_points": "traces",
    "outcome_name": "traces",
    "point_records": "traces",
    "sample_index": "traces",
}
_MODULES = {'cli', 'loops'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
