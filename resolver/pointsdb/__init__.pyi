# resolver.pointsdb's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import schema as schema, writer as writer
from .filters import Filters as Filters, FiltersLike as FiltersLike, parse_filters as parse_filters, validate_dimension as validate_dimension
from .reader import PointsDB as PointsDB, open_pointsdb as open_pointsdb
from .schema import (
    COUNTER_COLUMNS as COUNTER_COLUMNS,
    OUTCOME_CORRECT as OUTCOME_CORRECT,
    OUTCOME_INCORRECT as OUTCOME_INCORRECT,
    OUTCOME_INVALID as OUTCOME_INVALID,
    OUTCOME_NAMES as OUTCOME_NAMES,
    OUTCOME_TRUNCATED as OUTCOME_TRUNCATED,
    SCHEMA_VERSION as SCHEMA_VERSION,
    canonical_json as canonical_json,
    outcome_of as outcome_of,
    point_ids as point_ids,
)
from .writer import PointsWriter as PointsWriter, points_batch as points_batch
