# resolver.stats's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import (
    coverage as coverage,
)
from . import (
    estimates as estimates,
)
from . import (
    paired as paired,
)
from . import (
    paired_coverage as paired_coverage,
)
from .estimates import (
    DEFAULT_MODE as DEFAULT_MODE,
)
from .estimates import (
    MODE_DESCRIPTIONS as MODE_DESCRIPTIONS,
)
from .estimates import (
    MODE_ESTIMANDS as MODE_ESTIMANDS,
)
from .estimates import (
    MODES as MODES,
)
from .estimates import (
    SCORE_FLOOR as SCORE_FLOOR,
)
from .estimates import (
    SUMMED_COLUMNS as SUMMED_COLUMNS,
)
from .estimates import (
    Z95 as Z95,
)
from .estimates import (
    add_statistics as add_statistics,
)
from .estimates import (
    check_mode as check_mode,
)
from .estimates import (
    compare_modes as compare_modes,
)
from .estimates import (
    guess_sum_all as guess_sum_all,
)
from .estimates import (
    is_incomplete as is_incomplete,
)
from .estimates import (
    mapped_interval as mapped_interval,
)
from .estimates import (
    mode_interval as mode_interval,
)
from .estimates import (
    mode_map as mode_map,
)
from .estimates import (
    original_excess_interval as original_excess_interval,
)
from .estimates import (
    reasonscore as reasonscore,
)
from .estimates import (
    score_per_token as score_per_token,
)
from .intervals_light import skill_interval as skill_interval
from .paired import (
    compare_joint as compare_joint,
)
from .paired import (
    holm as holm,
)
from .paired import (
    joint_table as joint_table,
)
from .paired import (
    samples_needed as samples_needed,
)
