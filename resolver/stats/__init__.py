"""Statistics on evaluation counts: Wilson intervals, estimator modes, ReasonScore,
the runner's light interval, paired differences of two models, and interval coverage (docs/statistics.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.stats.estimates import (
        DEFAULT_MODE,
        MODE_DESCRIPTIONS,
        MODE_ESTIMANDS,
        MODES,
        SCORE_FLOOR,
        SUMMED_COLUMNS,
        Z95,
        add_statistics,
        check_mode,
        compare_modes,
        guess_sum_all,
        is_incomplete,
        mapped_interval,
        mode_interval,
        mode_map,
        original_excess_interval,
        reasonscore,
        score_per_token,
    )
    from resolver.stats.intervals_light import skill_interval
    from resolver.stats.paired import compare_joint, holm, joint_table, samples_needed

__all__ = [
    "add_statistics",
    "check_mode",
    "compare_joint",
    "compare_modes",
    "DEFAULT_MODE",
    "estimates",
    "guess_sum_all",
    "holm",
    "is_incomplete",
    "joint_table",
    "mapped_interval",
    "MODE_DESCRIPTIONS",
    "MODE_ESTIMANDS",
    "mode_interval",
    "mode_map",
    "MODES",
    "original_excess_interval",
    "paired",
    "reasonscore",
    "samples_needed",
    "SCORE_FLOOR",
    "score_per_token",
    "skill_interval",
    "SUMMED_COLUMNS",
    "Z95",
]

_HOMES = {
    "DEFAULT_MODE": "estimates",
    "MODES": "estimates",
    "MODE_DESCRIPTIONS": "estimates",
    "MODE_ESTIMANDS": "estimates",
    "SCORE_FLOOR": "estimates",
    "SUMMED_COLUMNS": "estimates",
    "Z95": "estimates",
    "add_statistics": "estimates",
    "check_mode": "estimates",
    "compare_modes": "estimates",
    "guess_sum_all": "estimates",
    "is_incomplete": "estimates",
    "mapped_interval": "estimates",
    "mode_interval": "estimates",
    "mode_map": "estimates",
    "original_excess_interval": "estimates",
    "reasonscore": "estimates",
    "score_per_token": "estimates",
    "skill_interval": "intervals_light",
    "compare_joint": "paired",
    "holm": "paired",
    "joint_table": "paired",
    "samples_needed": "paired",
}
_MODULES = {'estimates', 'paired'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
