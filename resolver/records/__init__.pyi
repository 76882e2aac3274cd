# resolver.records's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import longlines as longlines
from . import schema as schema
from . import text_size as text_size
from .longlines import (
    CUT_LIMIT as CUT_LIMIT,
)
from .longlines import (
    RECORD_LIMIT as RECORD_LIMIT,
)
from .longlines import (
    LongLine as LongLine,
)
from .longlines import (
    bounded_lines as bounded_lines,
)
from .longlines import (
    cut_into_pieces as cut_into_pieces,
)
from .longlines import (
    long_line_problem as long_line_problem,
)
from .longlines import (
    piece_groups as piece_groups,
)
from .longlines import (
    raw_line_problem as raw_line_problem,
)
from .run_folders import (
    RecordWriter as RecordWriter,
)
from .run_folders import (
    iter_records as iter_records,
)
from .run_folders import (
    new_run_folder as new_run_folder,
)
from .run_folders import (
    run_folder_name as run_folder_name,
)
from .run_folders import (
    safe_name as safe_name,
)
from .run_folders import (
    sample_index_of as sample_index_of,
)
from .run_folders import (
    step_file as step_file,
)
from .schema import (
    OPTIONAL_FIELDS as OPTIONAL_FIELDS,
)
from .schema import (
    RECORD_FIELDS as RECORD_FIELDS,
)
from .schema import (
    RECORD_SCHEMA as RECORD_SCHEMA,
)
from .schema import (
    RECORD_VERSION as RECORD_VERSION,
)
from .schema import (
    Field as Field,
)
from .schema import (
    Record as Record,
)
from .schema import (
    markdown_table as markdown_table,
)
from .schema import (
    new_record as new_record,
)
from .schema import (
    record_problems as record_problems,
)
from .text_size import (
    GZIP_FRAMING as GZIP_FRAMING,
)
from .text_size import (
    GZIP_LEVEL as GZIP_LEVEL,
)
from .text_size import (
    TEXT_SIZE_METHOD as TEXT_SIZE_METHOD,
)
from .text_size import (
    gzip_size as gzip_size,
)
