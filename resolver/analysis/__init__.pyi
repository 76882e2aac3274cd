# resolver.analysis's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import (
    aggregate as aggregate,
)
from . import (
    archetypes as archetypes,
)
from . import (
    cluster as cluster,
)
from . import (
    common as common,
)
from . import (
    compare as compare,
)
from . import (
    compare_cli as compare_cli,
)
from . import (
    compare_text as compare_text,
)
from . import (
    forensics_cli as forensics_cli,
)
from . import (
    inventory as inventory,
)
from . import (
    leaderboard_scores as leaderboard_scores,
)
from . import (
    modelinfo as modelinfo,
)
from . import (
    pairwise as pairwise,
)
from . import (
    points as points,
)
from . import (
    position_cli as position_cli,
)
from . import (
    rank as rank,
)
from . import (
    scores as scores,
)
from . import (
    token_usage as token_usage,
)
from .capacity import TARGET_DIM as TARGET_DIM
from .capacity import logistic as logistic
from .cell import format_value as format_value
from .cluster import memberships as memberships
from .common import (
    dimension_not_carried as dimension_not_carried,
)
from .common import (
    eval_labels as eval_labels,
)
from .common import (
    evaluate_command as evaluate_command,
)
from .common import (
    frame_to_markdown as frame_to_markdown,
)
from .common import (
    open_dataset as open_dataset,
)
from .common import (
    to_json as to_json,
)
from .common import (
    write_file as write_file,
)
from .compare import compare_evals as compare_evals
from .compression import LOOP_RATIO as LOOP_RATIO
from .compression import PANELS as PANELS
from .invalid_reasons import (
    REASON_POINT_FIELDS as REASON_POINT_FIELDS,
)
from .invalid_reasons import (
    count_reasons as count_reasons,
)
from .invalid_reasons import (
    describe as describe,
)
from .invalid_reasons import (
    reasons_by_point as reasons_by_point,
)
from .scores import (
    BELOW_CHANCE_MARK as BELOW_CHANCE_MARK,
)
from .scores import (
    DEGREE_COLUMN as DEGREE_COLUMN,
)
from .scores import (
    compute_scores as compute_scores,
)
from .scores import (
    format_fraction as format_fraction,
)
from .scores import (
    format_score as format_score,
)
from .scores import (
    group_order as group_order,
)
from .scores import (
    score_table_columns as score_table_columns,
)
from .scores import (
    tier_name as tier_name,
)
from .skill import (
    NO_SKILL_MARK as NO_SKILL_MARK,
)
from .skill import (
    NO_SKILL_NOTE as NO_SKILL_NOTE,
)
from .skill import (
    skilled_first_key as skilled_first_key,
)
from .spiderweb import spiderweb_from_aggregate as spiderweb_from_aggregate
from .surface import (
    COUNTERS as COUNTERS,
)
from .surface import (
    TaskView as TaskView,
)
from .surface import (
    config_views as config_views,
)
from .surface import (
    select_views as select_views,
)
from .surface import (
    surface_table as surface_table,
)
from .surface import (
    view_columns as view_columns,
)
from .surface import (
    view_points as view_points,
)
