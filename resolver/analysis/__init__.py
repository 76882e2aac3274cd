"""analyze.py's computations: each subcommand returns data (frames, dicts) and its text
renderers; flags and output live in resolver.cli.analyze, figures in resolver/plots/ (docs/analyze.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.analysis.capacity import TARGET_DIM, logistic
    from resolver.analysis.cell import format_value
    from resolver.analysis.cluster import memberships
    from resolver.analysis.common import dimension_not_carried, eval_labels, evaluate_command, frame_to_markdown, open_dataset, to_json
    from resolver.analysis.compare import compare_evals
    from resolver.analysis.compression import LOOP_RATIO, PANELS, compression_samples, compression_summary
    from resolver.analysis.hazard import hazard_by, median_end_tokens
    from resolver.analysis.invalid_reasons import REASON_POINT_FIELDS, count_reasons, describe, reasons_by_point
    from resolver.analysis.scores import (
        BELOW_CHANCE_MARK,
        DEGREE_COLUMN,
        compute_scores,
        format_fraction,
        format_score,
        group_order,
        score_table_columns,
        tier_name,
    )
    from resolver.analysis.skill import NO_SKILL_MARK, NO_SKILL_NOTE, marked, skilled_first_key
    from resolver.analysis.spiderweb import spiderweb_from_aggregate, spiderweb_table
    from resolver.analysis.surface import COUNTERS, TaskView, config_views, select_views, surface_table, view_columns, view_points

__all__ = [
    "aggregate",
    "BELOW_CHANCE_MARK",
    "capacity",
    "cluster",
    "common",
    "compare",
    "compare_evals",
    "compare_text",
    "compression_samples",
    "compression_summary",
    "compute_scores",
    "config_views",
    "count_reasons",
    "COUNTERS",
    "DEGREE_COLUMN",
    "describe",
    "dimension_not_carried",
    "discovery",
    "eval_labels",
    "evaluate_command",
    "format_fraction",
    "format_score",
    "format_value",
    "frame_to_markdown",
    "group_order",
    "hazard_by",
    "logistic",
    "LOOP_RATIO",
    "marked",
    "median_end_tokens",
    "memberships",
    "modelinfo",
    "NO_SKILL_MARK",
    "NO_SKILL_NOTE",
    "open_dataset",
    "pairwise",
    "PANELS",
    "points",
    "rank",
    "REASON_POINT_FIELDS",
    "reasons_by_point",
    "score_table_columns",
    "scores",
    "select_views",
    "skilled_first_key",
    "spiderweb_from_aggregate",
    "spiderweb_table",
    "surface_table",
    "TARGET_DIM",
    "TaskView",
    "tier_name",
    "to_json",
    "tokens",
    "view_columns",
    "view_points",
]

_HOMES = {
    "BELOW_CHANCE_MARK": "scores",
    "COUNTERS": "surface",
    "DEGREE_COLUMN": "scores",
    "LOOP_RATIO": "compression",
    "NO_SKILL_MARK": "skill",
    "NO_SKILL_NOTE": "skill",
    "PANELS": "compression",
    "REASON_POINT_FIELDS": "invalid_reasons",
    "TARGET_DIM": "capacity",
    "TaskView": "surface",
    "compare_evals": "compare",
    "compression_samples": "compression",
    "compression_summary": "compression",
    "compute_scores": "scores",
    "config_views": "surface",
    "count_reasons": "invalid_reasons",
    "describe": "invalid_reasons",
    "dimension_not_carried": "common",
    "eval_labels": "common",
    "evaluate_command": "common",
    "format_fraction": "scores",
    "format_score": "scores",
    "format_value": "cell",
    "frame_to_markdown": "common",
    "group_order": "scores",
    "hazard_by": "hazard",
    "logistic": "capacity",
    "marked": "skill",
    "median_end_tokens": "hazard",
    "memberships": "cluster",
    "open_dataset": "common",
    "reasons_by_point": "invalid_reasons",
    "score_table_columns": "scores",
    "select_views": "surface",
    "skilled_first_key": "skill",
    "spiderweb_from_aggregate": "spiderweb",
    "spiderweb_table": "spiderweb",
    "surface_table": "surface",
    "tier_name": "scores",
    "to_json": "common",
    "view_columns": "surface",
    "view_points": "surface",
}
_MODULES = {
    'aggregate',
    'capacity',
    'cluster',
    'common',
    'compare',
    'compare_text',
    'discovery',
    'modelinfo',
    'pairwise',
    'points',
    'rank',
    'scores',
    'tokens',
}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
