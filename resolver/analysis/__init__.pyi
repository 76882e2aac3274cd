# resolver.analysis's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import (
    aggregate as aggregate,
    archetypes as archetypes,
    capacity as capacity,
    cluster as cluster,
    common as common,
    compare as compare,
    compare_text as compare_text,
    inventory as inventory,
    leaderboard_scores as leaderboard_scores,
    modelinfo as modelinfo,
    outputs as outputs,
    pairwise as pairwise,
    points as points,
    rank as rank,
    scores as scores,
    token_usage as token_usage,
)
from .capacity import PROMPT_BUDGET as PROMPT_BUDGET, TARGET_DIM as TARGET_DIM, logistic as logistic
from .cell import format_value as format_value
from .cluster import memberships as memberships
from .common import (
    PointsDBMissing as PointsDBMissing,
    dimension_not_carried as dimension_not_carried,
    eval_labels as eval_labels,
    evaluate_command as evaluate_command,
    frame_to_markdown as frame_to_markdown,
    open_dataset as open_dataset,
    to_json as to_json,
    to_plain as to_plain,
)
from .compare import compare_evals as compare_evals
from .compression import (
    LOOP_RATIO as LOOP_RATIO,
    PANELS as PANELS,
    compression_samples as compression_samples,
    compression_summary as compression_summary,
)
from .hazard import hazard_by as hazard_by, median_end_tokens as median_end_tokens
from .invalid_reasons import (
    REASON_POINT_FIELDS as REASON_POINT_FIELDS,
    count_reasons as count_reasons,
    describe as describe,
    reasons_by_point as reasons_by_point,
)
from .outputs import (
    OUTPUT_MODELS as OUTPUT_MODELS,
    AggregateOutput as AggregateOutput,
    CapacityOutput as CapacityOutput,
    ClusterOutput as ClusterOutput,
    CompareLabels as CompareLabels,
    CompareOutput as CompareOutput,
    CompressionOutput as CompressionOutput,
    EvalsOutput as EvalsOutput,
    HazardOutput as HazardOutput,
    LeaderboardExport as LeaderboardExport,
    LeaderboardRow as LeaderboardRow,
    PointsOutput as PointsOutput,
    RankOutput as RankOutput,
    ScoresOutput as ScoresOutput,
    SpiderwebExport as SpiderwebExport,
    SpiderwebOutput as SpiderwebOutput,
    SurfaceOutput as SurfaceOutput,
    TasksOutput as TasksOutput,
    TokensOutput as TokensOutput,
    output_json as output_json,
)
from .scores import (
    BELOW_CHANCE_MARK as BELOW_CHANCE_MARK,
    DEGREE_COLUMN as DEGREE_COLUMN,
    compute_scores as compute_scores,
    format_fraction as format_fraction,
    format_score as format_score,
    group_order as group_order,
    score_table_columns as score_table_columns,
    tier_name as tier_name,
)
from .skill import NO_SKILL_MARK as NO_SKILL_MARK, NO_SKILL_NOTE as NO_SKILL_NOTE, marked as marked, skilled_first_key as skilled_first_key
from .spiderweb import spiderweb_from_aggregate as spiderweb_from_aggregate, spiderweb_table as spiderweb_table
from .surface import (
    COUNTERS as COUNTERS,
    TaskView as TaskView,
    config_views as config_views,
    select_views as select_views,
    surface_table as surface_table,
    view_columns as view_columns,
    view_points as view_points,
)
