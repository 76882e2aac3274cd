"""probe.py computations: raw-trace forensics for chosen points (fft, failure, truncation).

Every function here returns plain data (DataFrames, dicts, dataclasses); rendering
lives in resolver/probe/render.py and resolver/plots/.
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.probe.failure import failure_report
    from resolver.probe.fft import FREQUENCIES, fft_table
    from resolver.probe.render import failure_markdown, truncation_markdown
    from resolver.probe.tokens import ByteTokenizer, eval_tokenizers, load_tokenizer
    from resolver.probe.traces import load_points, outcome_name, point_records, sample_index
    from resolver.probe.truncation import truncation_report

__all__ = [
    "ByteTokenizer",
    "eval_tokenizers",
    "failure_markdown",
    "failure_report",
    "fft_table",
    "FREQUENCIES",
    "load_points",
    "load_tokenizer",
    "loops",
    "outcome_name",
    "point_records",
    "sample_index",
    "truncation_markdown",
    "truncation_report",
]

_HOMES = {
    "ByteTokenizer": "tokens",
    "FREQUENCIES": "fft",
    "eval_tokenizers": "tokens",
    "failure_markdown": "render",
    "failure_report": "failure",
    "fft_table": "fft",
    "load_points": "traces",
    "load_tokenizer": "tokens",
    "outcome_name": "traces",
    "point_records": "traces",
    "sample_index": "traces",
    "truncation_markdown": "render",
    "truncation_report": "truncation",
}
_MODULES = {'loops'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
