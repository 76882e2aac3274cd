# resolver.pointsdb's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import schema as schema
from . import writer as writer
from .filters import parse_filters as parse_filters
from .filters import validate_dimension as validate_dimension
from .reader import open_pointsdb as open_pointsdb
from .schema import (
    COUNTER_COLUMNS as COUNTER_COLUMNS,
)
from .schema import (
    OUTCOME_CORRECT as OUTCOME_CORRECT,
)
from .schema import (
    OUTCOME_INCORRECT as OUTCOME_INCORRECT,
)
from .schema import (
    OUTCOME_INVALID as OUTCOME_INVALID,
)
from .schema import (
    OUTCOME_NAMES as OUTCOME_NAMES,
)
from .schema import (
    OUTCOME_TRUNCATED as OUTCOME_TRUNCATED,
)
from .schema import (
    SCHEMA_VERSION as SCHEMA_VERSION,
)
from .schema import (
    canonical_json as canonical_json,
)
from .schema import (
    outcome_of as outcome_of,
)
from .schema import (
    point_ids as point_ids,
)
from .writer import PointsWriter as PointsWriter
from .writer import points_batch as points_batch
