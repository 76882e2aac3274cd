"""The JSON outputs of analyze.py and the leaderboard's and spiderweb's downloads, as pydantic models.

The computations build these models themselves, each field written once (the markdown, PNG
and web views read the model's dump); the JSON text is the model dumped (``output_json``).
Tables of frame columns are validated from their rows when written, so a key the model does
not declare fails at once instead of shipping undocumented (docs/decisions.md, issue 45).
docs/schemas/*-output.json are these models' JSON Schemas (``OUTPUT_MODELS``, this package's
list; resolver.probe.schemas gathers it with probe.py's and the shortcut audit's,
docs/schemas/generate.py writes them,
tests/test_json_schemas.py checks them against the models and tests/test_output_schemas.py
real outputs against them). This module holds the fixed shapes of analyze.py and the
leaderboard; the tables are in output_tables. Each output model lives beside what it
describes: probe.py's in resolver.probe.outputs, the shortcut audit's in resolver.audit.outputs.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, RootModel

from resolver.analysis.output_base import OutputModel, Real, Scalar, output_json
from resolver.analysis.output_tables import (
    AggregateOutput,
    CapacityOutput,
    CompressionOutput,
    HazardOutput,
    PointsOutput,
    Rows,
    SpiderwebExportRows,
    SpiderwebOutput,
    SurfaceOutput,
    TokensOutput,
)

__all__ = [
    "OUTPUT_MODELS", "AggregateOutput", "CapacityOutput", "Cluster", "ClusterFacet", "ClusterMember", "ClusterOutput",
    "ClusterSeries", "CompareCell", "CompareLabels", "CompareOutput", "ComparePoint", "CompareSequential",
    "CompressionOutput", "EvalListing", "EvalScores", "EvalsOutput", "FacetPosition",
    "HazardOutput", "LeaderboardExport", "LeaderboardRow", "ModeInterval", "PointsOutput", "RankOutput", "RankRow",
    "Rows", "SamplingPlan", "ScoresOutput", "SpiderwebExport", "SpiderwebOutput", "SurfaceOutput",
    "TaskCell", "TaskListing", "TaskManifold", "TaskViewListing", "TasksOutput", "TierScores", "TokensOutput",
    "UnpairedSamples", "VersionMismatch", "output_json",
]


# ------------------------------------------------------------------ compare

class CompareCell(OutputModel):
    """One (tier, group) cell, or the overall row: B - A with its intervals and verdicts."""

    tier: str
    group: Scalar
    pairs: int
    points: int
    a: Real
    b: Real
    diff: Real
    paired: list[Real]
    unpaired: list[Real]
    phi: Real
    discordant: int
    p_value: Real
    p_holm: Real
    verdict: str
    unpaired_verdict: str
    samples_needed: int | None
    only_a: int
    only_b: int
    # a run that stopped on its decision (runner.py --against) only; p_value, p_holm and
    # verdict are then the anytime-valid ones (docs/statistics.md, "Stopping on the decision")
    anytime: list[Real] | None = None
    anytime_diff: Real = None
    equivalent: bool | None = None
    stopped: str | None = None
    rounds: int | None = None


class CompareSequential(OutputModel):
    """How the run stopped on its decision, and the price of looking after every round."""

    against: str
    a_model: str
    method: str
    alpha: float
    margin: float
    count: int
    maxrounds: int
    stopped_early: int
    width_ratio: Real


class ComparePoint(OutputModel):
    """A paired point among those where B - A is largest in size."""

    a_id: int
    b_id: int
    base_task: str
    params: str
    task_version: int
    tier: str
    group: Scalar
    pairs: int
    a: Real
    b: Real
    diff: Real
    paired: list[Real]
    unpaired: list[Real]


class UnpairedSamples(OutputModel):
    only_a: int
    only_b: int
    only_a_points: int
    only_b_points: int


class VersionMismatch(OutputModel):
    base_task: str
    points: int
    a_versions: list[int]
    b_versions: list[int]


class CompareLabels(OutputModel):
    a: str
    b: str


class SamplingPlan(OutputModel):
    """What would decide the undecided cells (docs/analyze.md, "compare")."""

    target_per_point: int | None
    level: str | None
    commands: list[str]
    tasks: list[Scalar]
    note: str


class CompareOutput(OutputModel):
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
    sequential: CompareSequential | None = None


# ------------------------------------------------------------------ scores

class ModeInterval(OutputModel):
    """One mode's calibrated 95% interval of a cell."""

    center: Real
    margin: Real
    low: Real
    high: Real
    below_chance: bool


class TaskCell(OutputModel):
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


class TierScores(OutputModel):
    reasonscore: Real
    reasonscore_neutral: Real
    any_incomplete: bool
    missing_tasks: list[Scalar]
    completion_tokens_mean: Real
    score_per_token: Real
    samples: int
    min_cell_samples: int
    tasks: dict[str, TaskCell]


class EvalScores(OutputModel):
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

class ClusterMember(OutputModel):
    name: Scalar
    center: Real
    margin: Real
    low: Real
    high: Real
    below_chance: bool
    label: str | None = None          # only when the series are evals


class Cluster(OutputModel):
    rank: int
    members: list[ClusterMember]
    low: Real
    high: Real


class ClusterSeries(OutputModel):
    name: Scalar
    center: Real
    margin: Real
    points: int
    samples: float
    truncated_ratio: Real
    below_chance: bool
    label: str | None = None          # only when the series are evals


class ClusterFacet(OutputModel):
    facet: Scalar
    series: list[ClusterSeries]
    clusters: list[Cluster]


class ClusterOutput(OutputModel):
    """analyze.py cluster --format json (one file per --split-by value)."""

    group_by: str
    facet_by: str | None
    split_by: str | None
    split_value: Scalar
    mode: str
    facets: list[ClusterFacet]


class FacetPosition(OutputModel):
    facet: Scalar
    position: int | None


class RankRow(OutputModel):
    name: Scalar
    positions: list[FacetPosition]
    total: int | None
    missing: list[Scalar]
    skill_evidence: bool
    rank: int | None
    label: str | None = None          # only when the series are evals


class RankOutput(OutputModel):
    """analyze.py rank --format json."""

    group_by: str
    facet_by: str | None
    mode: str
    facets: list[Scalar]
    rows: list[RankRow]


# ------------------------------------------------------------------ evals and tasks

class EvalListing(OutputModel):
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


class TaskViewListing(OutputModel):
    view: str
    dims: int
    group_by: list[str]
    filters: dict[str, Any]
    facet_by: list[str]
    description: str


class TaskManifold(OutputModel):
    id: str
    degree: int | None
    description: str


class TaskListing(OutputModel):
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


class LeaderboardExport(OutputModel):
    """The leaderboard's "JSON" download: the rows shown, in the shown tier and mode."""

    tier: str
    mode: str
    group_by: str
    rows: list[LeaderboardRow]


class SpiderwebExport(OutputModel):
    """The spiderweb's "JSON" download: the radar numbers of the evals shown, in the shown mode."""

    mode: str
    group_by: str
    rows: SpiderwebExportRows


# docs/schemas/<file>: (model, title), this package's outputs; resolver.probe.schemas gathers every
# package's list. The input files' models are resolver.catalog.json_schemas'.
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
    "leaderboard-export.json": (LeaderboardExport, "The leaderboard's JSON download (docs/webapps.md)"),
    "spiderweb-export.json": (SpiderwebExport, "The spiderweb's JSON download (docs/webapps.md)"),
}

