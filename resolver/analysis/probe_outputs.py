"""probe.py's JSON outputs as models: failure, truncation, fft and the shortcut audit's --json
file (docs/probe.md, docs/tasks.md). They sit in analysis, below probe and audit, so that one
registry (resolver.analysis.outputs.OUTPUT_MODELS) sees every output.
"""
from __future__ import annotations

from typing import Any

from resolver.analysis.output_base import Num, Number, OutputModel, Real, Scalar

__all__ = ["FailureOutput", "FftOutput", "ShortcutsOutput", "TruncationOutput"]


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


class AuditRules(OutputModel):
    point_allowance: float
    pooled_allowance: float
    sigmas: float


class PooledAudit(OutputModel):
    """The best question-blind player of one (task, tier), its points pooled."""

    base_task: str
    tier: str
    player: str
    points: int
    samples: int
    accuracy: Num
    guess_rate: Num
    excess: Num
    allowance: Num
    flagged: bool


class PointAudit(OutputModel):
    step: str
    base_task: str
    tier: str
    params: dict[str, Any]
    samples: int
    guess_chance: Num
    best_player: str
    best_accuracy: Num
    excess: Num
    allowance: Num
    flagged: bool
    distinct_targets: int
    top_target_share: Num
    accuracy: dict[str, Num]


class ReaderAudit(OutputModel):
    """A task reader's check of one point (the movies task's film reader)."""

    step: str
    task: str
    tier: str
    cases: int
    single_liked: int
    determined: dict[str, int]
    determined_target: dict[str, int]
    genres_favour_wrong: int
    theme_alone_single_liked: int
    both_not_target: int


class ShortcutsOutput(OutputModel):
    """probe.py shortcuts --json PATH: the shortcut audit of a config (docs/tasks.md)."""

    config: str
    density: str
    samples: int
    seed: int
    rules: AuditRules
    passed: bool
    flagged_points: int
    flagged_pooled: int
    pooled: list[PooledAudit]
    points: list[PointAudit]
    readers: list[ReaderAudit]
