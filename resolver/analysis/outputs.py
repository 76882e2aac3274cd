"""The `--format json` outputs of analyze.py and the leaderboard's JSON export, as pydantic models.

The computations build plain dicts (the markdown, PNG and web views read them); the JSON
text is the model validated from that dict and dumped (``output_json``), so a key the model
does not declare fails at once instead of shipping undocumented. docs/schemas/*-output.json
are these models' JSON Schemas (``OUTPUT_MODELS``; docs/schemas/generate.py writes them and
tests/test_json_schemas.py checks them against the models and against real outputs).

Numbers: NaN and infinities are written as null (resolver.analysis.common.to_json), so every
float a computation may leave undefined is ``float | None`` here. A value that is an integer
in one output and a fraction in another (a group's value, a dimension's value) is ``Scalar``.
"""
from __future__ import annotations

from typing import Any, ClassVar, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from resolver.analysis.common import to_json, to_plain
from resolver.catalog import json_schemas

__all__ = [
    "OUTPUT_MODELS", "AggregateOutput", "CapacityOutput", "ClusterOutput", "CompareOutput", "CompressionOutput",
    "EvalListing", "EvalScores", "EvalsOutput", "FailureOutput", "FftOutput", "HazardOutput", "LeaderboardExport",
    "PointsOutput", "RankOutput", "Rows", "ScoresOutput", "ShortcutsOutput", "SpiderwebOutput", "SurfaceOutput",
    "TasksOutput", "TokensOutput", "TruncationOutput", "output_json", "output_schema_texts",
]

Scalar: TypeAlias = str | int | float | bool | None
Real: TypeAlias = float | None      # a number, null where it is undefined (NaN)
Number: TypeAlias = int | float | None   # a table column's number: pandas makes an integer column float once one is missing
Num: TypeAlias = int | float         # a number that may be written as an integer (a guess chance of 0)


class _Output(BaseModel):
    """Refuses keys it does not declare; the declared order is the JSON's key order."""

    model_config = ConfigDict(extra="forbid")


def output_json(model: type[BaseModel], data: Any) -> str:
    """`data` (a computation's dict or list) as the JSON text of `model`: validated, dumped with
    the keys it was given (an optional key left out stays out), NaN as null, indent 2."""
    validated = model.model_validate(to_plain(data, finite=True))
    return to_json(validated.model_dump(mode="json", exclude_unset=True))


# ------------------------------------------------------------------ compare

class CompareCell(_Output):
    """One (tier, group) cell, or the overall row: B - A with its intervals and verdicts."""

    tier: str
    group: Scalar
    pairs: int
    points: int
    a: float
    b: float
    diff: float
    paired: list[float]
    unpaired: list[float]
    phi: Real
    discordant: int
    p_value: Real
    p_holm: Real
    verdict: str
    unpaired_verdict: str
    samples_needed: int | None
    only_a: int
    only_b: int


class ComparePoint(_Output):
    """A paired point among those where B - A is largest in size."""

    a_id: int
    b_id: int
    base_task: str
    params: str
    task_version: int
    tier: str
    group: Scalar
    pairs: int
    a: float
    b: float
    diff: float
    paired: list[float]
    unpaired: list[float]


class UnpairedSamples(_Output):
    only_a: int
    only_b: int
    only_a_points: int
    only_b_points: int


class VersionMismatch(_Output):
    base_task: str
    points: int
    a_versions: list[int]
    b_versions: list[int]


class CompareLabels(_Output):
    a: str
    b: str


class SamplingPlan(_Output):
    """What would decide the undecided cells (docs/analyze.md, "compare")."""

    target_per_point: int | None
    level: str | None
    commands: list[str]
    tasks: list[Scalar]
    note: str


class CompareOutput(_Output):
    """analyze.py compare --format json."""

    a: str
    b: str
    mode: str
    estimand: str
    difference: str
    group_by: str
    alpha: float
    correction: str
    family: int
    delta: float
    power: float
    cells: list[CompareCell]
    overall: CompareCell
    points: list[ComparePoint]
    unpaired_samples: UnpairedSamples
    version_mismatch: list[VersionMismatch]
    labels: CompareLabels
    sampling: SamplingPlan


# ------------------------------------------------------------------ scores

class ModeInterval(_Output):
    """One mode's calibrated 95% interval of a cell."""

    center: Real
    margin: Real
    low: Real
    high: Real
    below_chance: bool


class TaskCell(_Output):
    """One (tier, group) cell of an eval: `tiers.{tier}.tasks.{group}`."""

    center: Real
    margin: Real
    truncated_ratio: Real
    completion_tokens_mean: Real
    adjusted_score: Real
    point_count: int
    expected_points: int | None
    is_incomplete: bool
    invalid_ratio: Real
    correct: int
    incorrect: int
    invalid: int
    truncated: int
    guess_sum: Real
    samples: Real
    adjusted_successes: Real
    adjusted_trials: Real
    prompt_tokens_mean: Real
    below_chance: bool
    neutral_score: Real
    modes: dict[str, ModeInterval]


class TierScores(_Output):
    reasonscore: Real
    reasonscore_neutral: Real
    any_incomplete: bool
    missing_tasks: list[Scalar]
    completion_tokens_mean: Real
    score_per_token: Real
    samples: int
    min_cell_samples: int
    tasks: dict[str, TaskCell]


class EvalScores(_Output):
    """One eval of analyze.py scores, ranked (1 = best)."""

    eval_id: str
    model: str
    label: str
    template: str | None
    sampler: str | None
    groups: list[str]
    reasonscore: Real
    reasonscore_neutral: Real
    completion_tokens_mean: Real
    score_per_token: Real
    any_incomplete: bool
    missing_cells: int
    samples: int
    min_cell_samples: int
    tiers: dict[str, TierScores]
    skill_evidence: bool
    rank: int
    invalid_reasons: dict[str, int] = {}


class ScoresOutput(RootModel[list[EvalScores]]):
    """analyze.py scores --format json: the evals, best first."""


# ------------------------------------------------------------------ cluster and rank

class ClusterMember(_Output):
    name: Scalar
    center: float
    margin: float
    low: float
    high: float
    below_chance: bool
    label: str | None = None          # only when the series are evals


class Cluster(_Output):
    rank: int
    members: list[ClusterMember]
    low: float
    high: float


class ClusterSeries(_Output):
    name: Scalar
    center: float
    margin: float
    points: int
    samples: float
    truncated_ratio: Real
    below_chance: bool
    label: str | None = None          # only when the series are evals


class ClusterFacet(_Output):
    facet: Scalar
    series: list[ClusterSeries]
    clusters: list[Cluster]


class ClusterOutput(_Output):
    """analyze.py cluster --format json (one file per --split-by value)."""

    group_by: str
    facet_by: str | None
    split_by: str | None
    split_value: Scalar
    mode: str
    facets: list[ClusterFacet]


class FacetPosition(_Output):
    facet: Scalar
    position: int | None


class RankRow(_Output):
    name: Scalar
    positions: list[FacetPosition]
    total: int | None
    missing: list[Scalar]
    skill_evidence: bool
    rank: int | None
    label: str | None = None          # only when the series are evals


class RankOutput(_Output):
    """analyze.py rank --format json."""

    group_by: str
    facet_by: str | None
    mode: str
    facets: list[Scalar]
    rows: list[RankRow]


# ------------------------------------------------------------------ evals and tasks

class EvalListing(_Output):
    """One eval of analyze.py evals."""

    eval_id: str
    label: str | None
    model: str | None
    template: str | None
    sampler: str | None
    groups: list[str]
    hf_id: str | None
    points: int
    samples: int
    grader_version: int | None
    task_versions: dict[str, list[int]]


class EvalsOutput(RootModel[list[EvalListing]]):
    """analyze.py evals --format json."""


class TaskViewListing(_Output):
    view: str
    dims: int
    group_by: list[str]
    filters: dict[str, Any]
    facet_by: list[str]
    description: str


class TaskManifold(_Output):
    id: str
    degree: int | None
    description: str


class TaskListing(_Output):
    base_task: str
    label: str
    generator: str | None
    points: int
    evals: int
    views: list[TaskViewListing]
    description: str
    manifolds: list[TaskManifold]


class TasksOutput(RootModel[list[TaskListing]]):
    """analyze.py tasks --format json."""


# ------------------------------------------------------------------ tables

def _missing_columns(rows: list[dict[str, Any]], required: tuple[str, ...], where: str) -> None:
    for i, row in enumerate(rows):
        missing = [c for c in required if c not in row]
        if missing:
            raise ValueError(f"{where} row {i} lacks {', '.join(missing)}")


def _rows_schema(schema: dict[str, Any], cls: Any) -> None:
    """The JSON Schema of a table: its rows must carry the REQUIRED columns."""
    schema["items"]["required"] = list(cls.REQUIRED)


class Rows(RootModel[list[dict[str, Any]]]):
    """A table as a list of rows. Its columns follow the selected dimensions and flags (a
    --group-by dimension, params.* of a view), so a row is an open object; REQUIRED names
    the columns every row has, in the schema and in validation. Keys keep their order."""

    model_config = ConfigDict(json_schema_extra=_rows_schema)
    REQUIRED: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="after")
    def _has_required_columns(self) -> Rows:
        _missing_columns(self.root, self.REQUIRED, type(self).__name__)
        return self


class TokensOutput(Rows):
    """analyze.py tokens --format json: one row per (eval, group); the group dimension's column
    follows `label`."""

    REQUIRED = ("eval_id", "label", "points", "samples", "completion_tokens_mean", "loops_stopped", "tokens_saved")


class PointsOutput(Rows):
    """analyze.py points --format json (one file per --split-by value); the params of the
    points are columns of their own."""

    REQUIRED = ("id", "eval_id", "model", "base_task", "center", "margin", "correct", "incorrect", "invalid",
                "truncated")


class AggregateOutput(Rows):
    """analyze.py aggregate --format json: the dimensions' columns first (and `label` after
    eval_id), then the statistics; --compare-modes, --raw-counters and --tokens add columns."""

    REQUIRED = ("points", "samples")


class SpiderwebOutput(Rows):
    """analyze.py spiderweb --format json: one row per (eval, group)."""

    REQUIRED = ("eval_id", "label", "model", "group", "mode", "center", "margin", "low", "high", "below_chance",
                "truncated_ratio", "tokens_mean", "samples", "points")


class CompressionOutput(Rows):
    """analyze.py compression --format json: per (split keys, eval, panel)."""

    REQUIRED = ("eval_id", "panel", "samples", "tokens_mean", "compressed_mean", "ratio_median", "loop_like_share")


class HazardOutput(Rows):
    """analyze.py hazard --format json: per (split keys, series) the token buckets' hazards."""

    REQUIRED = ("series", "median_end_tokens", "buckets")


SURFACE_COLUMNS = ("eval_id", "points", "samples", "center", "margin", "low", "high", "below_chance")


def _surface_schema(schema: dict[str, Any]) -> None:
    schema["additionalProperties"]["additionalProperties"]["items"]["required"] = list(SURFACE_COLUMNS)


class SurfaceOutput(RootModel[dict[str, dict[str, list[dict[str, Any]]]]]):
    """analyze.py surface --format json: {split value: {task/view: rows}}, a row per (eval, grid
    cell) with the view's params.* columns after eval_id (SURFACE_COLUMNS in every row)."""

    model_config = ConfigDict(json_schema_extra=_surface_schema)

    @model_validator(mode="after")
    def _has_required_columns(self) -> SurfaceOutput:
        for split, views in self.root.items():
            for view, rows in views.items():
                _missing_columns(rows, SURFACE_COLUMNS, f"surface {split} {view}")
        return self


def _rows_field(required: tuple[str, ...], description: str) -> Any:
    """A list-of-rows field whose rows must carry `required` (in the schema; CapacityOutput checks it)."""
    return Field(description=description,
                 json_schema_extra={"items": {"type": "object", "required": list(required)}})


class CapacityOutput(_Output):
    """analyze.py capacity --format json (--frontier or --peak; their columns differ)."""

    summary: list[dict[str, Any]] = _rows_field(
        ("eval_id",), "per eval (and group): --frontier the logistic fit (x50, slope, x50_low, x50_high, r2, ...), "
                      "--peak the peak budget, effective capacity and accuracy")
    table: list[dict[str, Any]] = _rows_field(
        ("eval_id", "center", "margin", "low", "high", "below_chance"),
        "the aggregated cells the summary is fitted on, one per (eval, size or budget)")

    @model_validator(mode="after")
    def _has_required_columns(self) -> CapacityOutput:
        _missing_columns(self.summary, ("eval_id",), "capacity summary")
        _missing_columns(self.table, ("eval_id", "center", "margin", "low", "high", "below_chance"), "capacity table")
        return self


# ------------------------------------------------------------------ probe.py

class ProbePoint(_Output):
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


class FailureSample(_Output):
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


class BreakdownRow(_Output):
    field: str
    value: str
    samples: int
    failures: int
    failure_rate: Real


class FailureOutput(_Output):
    """probe.py failure --format json."""

    points: list[ProbePoint]
    samples: int
    failures: list[FailureSample]
    breakdown: list[BreakdownRow]


class TruncationSample(_Output):
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


class TruncationOutput(_Output):
    """probe.py truncation --format json; `distribution` counts the truncated samples per loop class."""

    points: list[ProbePoint]
    samples: list[TruncationSample]
    distribution: dict[str, int]


class FftSpectrum(_Output):
    base_task: str
    view: str
    dimension: str
    facet: Scalar
    eval_id: str
    value: Scalar
    points: int
    samples: int
    spectrum: list[float]


class FftOutput(_Output):
    """probe.py fft --format json: the frequency axis and one spectrum per (task, view, facet, eval, value)."""

    frequencies: list[float]
    spectra: list[FftSpectrum]


class AuditRules(_Output):
    point_allowance: float
    pooled_allowance: float
    sigmas: float


class PooledAudit(_Output):
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


class PointAudit(_Output):
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


class ReaderAudit(_Output):
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


class ShortcutsOutput(_Output):
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


# ------------------------------------------------------------------ the leaderboard's export

class LeaderboardRow(BaseModel):
    """One ranked eval of the leaderboard's JSON download. Besides these keys, each task column
    `{group}` adds `{group} center`, `margin`, `ranking_score`, `truncated_ratio`,
    `below_chance` and `points` (null where the eval lacks the cell)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, int | float | bool | None]

    rank: int
    label: str
    model: str | None
    eval_id: str
    groups: str
    reasonscore: Real
    incomplete: bool
    completion_tokens_mean: Real
    score_per_token: Real
    grader_version: str
    mode: str
    skill_evidence: bool


class LeaderboardExport(_Output):
    """The leaderboard's "JSON" download: the rows shown, in the shown tier and mode."""

    tier: str
    mode: str
    group_by: str
    rows: list[LeaderboardRow]


# docs/schemas/<file>: (model, title). The input files' models are resolver.catalog.json_schemas'.
OUTPUT_MODELS: dict[str, tuple[type[BaseModel], str]] = {
    "compare-output.json": (CompareOutput, "analyze.py compare --format json (docs/analyze.md)"),
    "scores-output.json": (ScoresOutput, "analyze.py scores --format json (docs/analyze.md)"),
    "cluster-output.json": (ClusterOutput, "analyze.py cluster --format json (docs/analyze.md)"),
    "rank-output.json": (RankOutput, "analyze.py rank --format json (docs/analyze.md)"),
    "evals-output.json": (EvalsOutput, "analyze.py evals --format json (docs/analyze.md)"),
    "tasks-output.json": (TasksOutput, "analyze.py tasks --format json (docs/analyze.md)"),
    "tokens-output.json": (TokensOutput, "analyze.py tokens --format json (docs/analyze.md)"),
    "points-output.json": (PointsOutput, "analyze.py points --format json (docs/analyze.md)"),
    "aggregate-output.json": (AggregateOutput, "analyze.py aggregate --format json (docs/analyze.md)"),
    "spiderweb-output.json": (SpiderwebOutput, "analyze.py spiderweb --format json (docs/analyze.md)"),
    "surface-output.json": (SurfaceOutput, "analyze.py surface --format json (docs/analyze.md)"),
    "compression-output.json": (CompressionOutput, "analyze.py compression --format json (docs/analyze.md)"),
    "hazard-output.json": (HazardOutput, "analyze.py hazard --format json (docs/analyze.md)"),
    "capacity-output.json": (CapacityOutput, "analyze.py capacity --format json (docs/analyze.md)"),
    "failure-output.json": (FailureOutput, "probe.py failure --format json (docs/probe.md)"),
    "truncation-output.json": (TruncationOutput, "probe.py truncation --format json (docs/probe.md)"),
    "fft-output.json": (FftOutput, "probe.py fft --format json (docs/probe.md)"),
    "shortcuts-output.json": (ShortcutsOutput, "probe.py shortcuts --json PATH (docs/tasks.md)"),
    "leaderboard-export.json": (LeaderboardExport, "The leaderboard's JSON download (docs/webapps.md)"),
}


def output_schema_texts() -> dict[str, str]:
    """{file name: JSON Schema text} of every output model, as docs/schemas/ holds them."""
    return {name: json_schemas.schema_text(model, title) for name, (model, title) in OUTPUT_MODELS.items()}
