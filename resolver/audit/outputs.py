"""The shortcut audit's JSON output as models (probe.py shortcuts --json PATH; docs/tasks.md):
resolver.audit.shortcuts builds them, docs/schemas/shortcuts-output.json is their schema.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from resolver.core.typed import Num, OutputModel

__all__ = ["OUTPUT_MODELS", "AuditRules", "PointAudit", "PooledAudit", "ReaderAudit", "ShortcutsOutput"]


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


# docs/schemas/<file>: (model, title); resolver.probe.schemas gathers every package's list.
OUTPUT_MODELS: dict[str, tuple[type[BaseModel], str]] = {
    "shortcuts-output.json": (ShortcutsOutput, "probe.py shortcuts --json PATH (docs/tasks.md)"),
}
