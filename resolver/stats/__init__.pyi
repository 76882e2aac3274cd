# resolver.stats's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import estimates as estimates, paired as paired, sequential as sequential
from .estimates import (
    MODE_DESCRIPTIONS as MODE_DESCRIPTIONS,
    MODE_ESTIMANDS as MODE_ESTIMANDS,
    SCORE_FLOOR as SCORE_FLOOR,
    SUMMED_COLUMNS as SUMMED_COLUMNS,
    Z95 as Z95,
    add_statistics as add_statistics,
    check_mode as check_mode,
    compare_modes as compare_modes,
    guess_sum_all as guess_sum_all,
    is_incomplete as is_incomplete,
    mapped_interval as mapped_interval,
    mode_interval as mode_interval,
    mode_map as mode_map,
    original_excess_interval as original_excess_interval,
    reasonscore as reasonscore,
    score_per_token as score_per_token,
)
from .intervals_light import skill_interval as skill_interval
from .modes import DEFAULT_MODE as DEFAULT_MODE, MODES as MODES
from .paired import compare_joint as compare_joint, holm as holm, joint_table as joint_table, samples_needed as samples_needed
from .sequential import (
    PROCEDURE as PROCEDURE,
    PROCEDURES as PROCEDURES,
    SEQUENTIAL_NAME as SEQUENTIAL_NAME,
    Sequence as Sequence,
    anytime_sequence as anytime_sequence,
    cells_and_overall as cells_and_overall,
    e_value as e_value,
    pair_contributions as pair_contributions,
)
