# resolver.records's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import longlines as longlines, schema as schema, text_size as text_size
from .longlines import (
    CUT_LIMIT as CUT_LIMIT,
    RECORD_LIMIT as RECORD_LIMIT,
    LongLine as LongLine,
    bounded_lines as bounded_lines,
    cut_into_pieces as cut_into_pieces,
    long_line_problem as long_line_problem,
    piece_groups as piece_groups,
    raw_line_problem as raw_line_problem,
)
from .run_folders import (
    RecordWriter as RecordWriter,
    iter_records as iter_records,
    new_run_folder as new_run_folder,
    run_folder_name as run_folder_name,
    safe_name as safe_name,
    sample_index_of as sample_index_of,
    step_file as step_file,
)
from .run_metadata import (
    METADATA_NAME as METADATA_NAME,
    METADATA_VERSION as METADATA_VERSION,
    PrecisionLevel as PrecisionLevel,
    RunMetadata as RunMetadata,
    RunVersions as RunVersions,
    read_run_metadata as read_run_metadata,
    write_run_metadata as write_run_metadata,
)
from .schema import (
    OPTIONAL_FIELDS as OPTIONAL_FIELDS,
    RECORD_FIELDS as RECORD_FIELDS,
    RECORD_SCHEMA as RECORD_SCHEMA,
    RECORD_VERSION as RECORD_VERSION,
    Field as Field,
    Record as Record,
    markdown_table as markdown_table,
    new_record as new_record,
    record_problems as record_problems,
)
from .text_size import (
    GZIP_FRAMING as GZIP_FRAMING,
    GZIP_LEVEL as GZIP_LEVEL,
    TEXT_SIZE_METHOD as TEXT_SIZE_METHOD,
    gzip_size as gzip_size,
)
