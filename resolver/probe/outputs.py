"""probe.py's JSON outputs as models: failure, truncation and fft (docs/probe.md). The computations
beside them build them (failure, truncation, fft); docs/schemas/*-output.json are their schemas.
The shortcut audit's are resolver.audit.outputs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from resolver.analysis import to_plain
from resolver.core.typed import Number, OutputModel, Real, Scalar

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OUTPUT_MODELS", "BreakdownRow", "FailureOutput", "FailureSample", "FftOutput", "FftSpectrum", "ProbePoint",
           "TruncationOutput", "TruncationSample", "probe_points"]


class ProbePoint(OutputModel):
    """A PointsDB point as probe.py reports it."""

    id: int
    eval_id: str
    model: str
    template: str
    sampler: str
    base_task: str
    task: str
    task_version: Number
    params: dict[str, Any]
    manifold: dict[str, Any]
    correct: int
    incorrect: int
    invalid: int
    truncated: int
    invalid_reasons: dict[str, int] | None = None    # probe.py failure only


def probe_points(points: pd.DataFrame) -> list[ProbePoint]:
    """The point rows of a report (ingest's load_points, whose columns are these fields) as
    ProbePoints; the raw-file list (`sources`) stays out of the output."""
    rows = to_plain(points.drop(columns=["sources"]).to_dict(orient="records"), finite=True)
    return [ProbePoint.model_validate(row) for row in rows]


class FailureSample(OutputModel):
    point_id: int
    eval_id: str
    task: str
    key: str | None
    sample_index: int | None
    outcome: str
    truncated: bool
    target: Any
    extracted: Any
    normalized: Any
    answer: str | None
    completion_tokens: int | None
    genresult: dict[str, Any]
    invalid_reason: str | None


class BreakdownRow(OutputModel):
    field: str
    value: str
    samples: int
    failures: int
    failure_rate: Real


class FailureOutput(OutputModel):
    """probe.py failure --format json."""

    points: list[ProbePoint]
    samples: int
    failures: list[FailureSample]
    breakdown: list[BreakdownRow]


class TruncationSample(OutputModel):
    point_id: int
    key: str | None
    sample_index: Number
    completion_tokens: Number
    classification: str | None
    period: Number
    repeats: Number
    delta_tokens: Number
    coverage: Number
    start_token: Number
    start_fraction: Number
    severe: bool | None
    unit_text: str | None


class TruncationOutput(OutputModel):
    """probe.py truncation --format json; `distribution` counts the truncated samples per loop class."""

    points: list[ProbePoint]
    samples: list[TruncationSample]
    distribution: dict[str, int]


class FftSpectrum(OutputModel):
    base_task: str
    view: str
    dimension: str
    facet: Scalar
    eval_id: str
    value: Scalar
    points: int
    samples: int
    spectrum: list[Real]


class FftOutput(OutputModel):
    """probe.py fft --format json: the frequency axis and one spectrum per (task, view, facet, eval, value)."""

    frequencies: list[float]
    spectra: list[FftSpectrum]


# docs/schemas/<file>: (model, title); resolver.probe.schemas gathers every package's list.
OUTPUT_MODELS: dict[str, tuple[type[BaseModel], str]] = {
    "failure-output.json": (FailureOutput, "probe.py failure --format json (docs/probe.md)"),
    "truncation-output.json": (TruncationOutput, "probe.py truncation --format json (docs/probe.md)"),
    "fft-output.json": (FftOutput, "probe.py fft --format json (docs/probe.md)"),
}
