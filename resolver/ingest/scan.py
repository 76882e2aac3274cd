"""The DuckDB scan: a batch of NDJSON files -> one Arrow table of samples (worker side).

A batch (a whole eval, or a slice of its sorted file list) is read by ONE DuckDB
query, ``read_ndjson_objects`` over all its files (``file_index`` names a row's
file), each line parsed once by ``from_json``; the per-record checks of
``record_checks.py`` run in the same query and its per-value rules on each Arrow batch of
the result. DuckDB keeps the order of files and lines, so a row's position within
its file is its record number; only for the rare records that need a message is the
file read again, by Python, to turn that number into a line number. Workers return
numbers per sample (never the texts): memory is bounded by one Arrow batch of rows
in a worker and one eval's samples in the main process. A batch DuckDB cannot read in
one query (a line far over 16 MB; long lines beyond its memory limit) is read again
in pieces of about 16 MB, lines over 32 MB cut out (longlines.py).
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from resolver.core import UserError
from resolver.grading import GRADER_VERSION, grade_record
from resolver.ingest.record_checks import (
    FIELDS,
    NO_PROBLEM,
    RANK,
    RECORD_QUERY,
    TEXT_FIELDS,
    ValueRules,
    diagnose_line,
    load_line,
    outcome_codes,
    text_problem,
)
from resolver.ingest.regrade import add_regraded
from resolver.pointsdb import outcome_of
from resolver.records import CUT_LIMIT, GZIP_FRAMING, GZIP_LEVEL, RECORD_LIMIT, cut_into_pieces, long_line_problem, piece_groups, raw_line_problem
from resolver.tasks import task_of_record

if TYPE_CHECKING:
    import duckdb

MAX_OBJECT_SIZE = RECORD_LIMIT    # DuckDB's maximum_object_size for the scan (its default, 16 MB)
ROWS_PER_BATCH = 2048            # Arrow rows held at once while scanning

# Per-sample columns a worker returns (file_no indexes ScanJob.files).
SAMPLE_SCHEMA = pa.schema([
    ("file_no", pa.int32()), ("ordinal", pa.int32()), ("model", pa.string()), ("template", pa.string()),
    ("sampler", pa.string()), ("base_task", pa.string()), ("task", pa.string()), ("params", pa.string()),
    ("manifold", pa.string()), ("task_version", pa.int32()), ("grader_version", pa.int32()),
    ("sample_index", pa.int32()), ("outcome", pa.uint8()), ("ctoks", pa.int32()), ("ptoks", pa.int64()),
    ("guess", pa.float64()), ("abytes", pa.int32()), ("cbytes", pa.int32()),
    ("invalid_reason", pa.string()),     # the record's reason (null: none recorded)
    ("loop_saved", pa.int32()),          # stopped in a loop: max_tokens - tokens streamed (else null)
    ("stop_loops", pa.bool_()),          # written by a run with the sampler's stop_loops
])


@dataclass(frozen=True)
class ScanJob:
    files: tuple                     # paths, in the order samples are merged
    expect: tuple | None = None      # the eval's triple (dataset mode); None = take it from records
    regrade: bool = False            # --offline: grade answers again with resolver.grading.answers
    first_file_no: int = 0           # file_no of files[0] within its eval


@dataclass
class ScanResult:
    samples: pa.Table
    records: list                    # per file: records read
    unanswered: list                 # per file: unanswered records
    problems: list = field(default_factory=list)   # (file_no, line, message)
    mismatched: int = 0
    regraded: dict = field(default_factory=dict)   # base_task -> [records re-graded, verdicts changed]


_worker_con = None


def _duckdb() -> duckdb.DuckDBPyConnection:
    """One single-threaded DuckDB connection per worker process (parallelism is by process)."""
    global _worker_con
    if _worker_con is None:
        import duckdb

        _worker_con = duckdb.connect(config={"threads": 1, "memory_limit": "256MB"})
    return _worker_con


# The raw rows, one parse per line: `from_json` pulls every field out of the line at once,
# the small ones as their raw JSON text (what record_checks.py checks; a JSON null is SQL NULL,
# like a missing key) and the two texts as text. On the r12 tree this costs 30% less than
# json_extract plus json_extract_string (two parses) and 40% less than read_json with one
# column per field; the rows are the same (checked on hostile lines by
# tests/test_evaluate_units.py). `file_index` is the file's position in $files; a line
# DuckDB cannot parse gives a row of NULLs (ignore_errors), so record numbers stay aligned;
# so does a line over RECORD_LIMIT bytes (DuckDB reads some such lines, not others: the
# limit is applied here, exactly, and the scan reports it; see longlines.py).
_STRUCTURE = json.dumps({name: "VARCHAR" if name in TEXT_FIELDS else "JSON" for name in FIELDS})


def _raw(max_object_size: int) -> str:
    return ("SELECT file, " + ", ".join(f"CAST(r.{name} AS VARCHAR) AS {name}" for name in FIELDS)
            + f" FROM (SELECT file_index AS file,"
            f" from_json(CASE WHEN strlen(json) <= {RECORD_LIMIT} THEN json END, '{_STRUCTURE}') AS r"
            f" FROM read_ndjson_objects($files, ignore_errors = true, maximum_object_size = {max_object_size}))")


_RAW = _raw(MAX_OBJECT_SIZE)
# The fallback reads pieces without lines over CUT_LIMIT (a line without its newline
# needs maximum_object_size >= its length).
_RAW_COPIES = _raw(CUT_LIMIT + 1024)


def _query(job: ScanJob, raw: str = _RAW) -> str:
    return f"WITH raw AS ({raw}), {RECORD_QUERY}"


def _params(job: ScanJob) -> dict:
    return {"files": list(job.files)}


def _utf8_offsets(column: pa.Array) -> np.ndarray:
    """The value offsets of an Arrow string / large_string array (len + 1 of them)."""
    width = np.int64 if column.type == pa.large_string() else np.int32
    return np.frombuffer(column.buffers()[1], dtype=width)[column.offset: column.offset + len(column) + 1]


def _utf8_views(column: pa.Array, offsets: np.ndarray) -> list[memoryview]:
    """Each value of an Arrow string array as a memoryview of its UTF-8 bytes (no copies)."""
    data = memoryview(column.buffers()[2] or b"")
    return [data[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]


def _gzip_sizes(recorded: pa.Array, text: pa.Array, compress: Callable[[memoryview, int], bytearray]) -> pa.Array:
    """Each row's gzip size: the record's own (``text_size``) or, where it has none, its text deflated."""
    if recorded.null_count == 0:
        return recorded.cast(pa.int32())
    if text.type not in (pa.string(), pa.large_string()):
        text = text.cast(pa.large_string())
    views = _utf8_views(text, _utf8_offsets(text))       # NULL (size recorded) = an empty view
    if recorded.null_count == len(recorded):
        return pa.array([len(compress(v, GZIP_LEVEL)) + GZIP_FRAMING for v in views], pa.int32())
    sizes = recorded.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    for i in np.flatnonzero(recorded.is_null().to_numpy(zero_copy_only=False)).tolist():
        sizes[i] = len(compress(views[i], GZIP_LEVEL)) + GZIP_FRAMING
    return pa.array(sizes.astype(np.int32), pa.int32())


def _ordinals(file_no: np.ndarray, counts: dict) -> np.ndarray:
    """Record number within its file (1-based) of each row; rows come file by file, in order."""
    out = np.empty(len(file_no), dtype=np.int32)
    starts = np.flatnonzero(np.r_[True, file_no[1:] != file_no[:-1]])
    ends = np.r_[starts[1:], len(file_no)]
    for a, b in zip(starts.tolist(), ends.tolist()):
        f = int(file_no[a])
        base = counts.get(f, 0)
        out[a:b] = np.arange(base + 1, base + 1 + b - a, dtype=np.int32)
        counts[f] = base + b - a
    return out


def scan_batch(job: ScanJob) -> ScanResult:
    """Scan the job's files in one DuckDB query and return their samples and problems.

    Two kinds of file stop that query: a line far over DuckDB's maximum_object_size,
    and a file whose lines are so long that 2,048 of them (DuckDB's chunk) exceed its
    memory limit. The batch is then read again as pieces (``_scan_in_pieces``); the
    first try is not slowed down by the rare case.
    """
    import duckdb

    try:
        return _scan_files(job)
    except (duckdb.InvalidInputException, duckdb.OutOfMemoryException, OSError) as exc:  # OSError: via Arrow
        if not any(sign in str(exc) for sign in _SIGNS_OF_LONG_LINES):
            raise
    return _scan_in_pieces(job)


_SIGNS_OF_LONG_LINES = ('"maximum_object_size"', "Out of Memory Error")


def _scan_in_pieces(job: ScanJob) -> ScanResult:
    """scan_batch over the files cut into pieces of whole lines without lines over CUT_LIMIT
    (longlines.py; temporary copies, deleted after), with the numbers of the original files."""
    with tempfile.TemporaryDirectory(prefix="evaluate-pieces-") as folder:
        pieces = [piece for source, path in enumerate(job.files) for piece in cut_into_pieces(path, source, folder)]
        # one query per ~16 MB of pieces: DuckDB's Arrow batches gather rows across files
        results = [_scan_files(replace(job, files=tuple(p.path for p in pieces[a:b]), first_file_no=a), _RAW_COPIES,
                               [p.long_lines for p in pieces[a:b]]) for a, b in piece_groups(pieces)]
    return _as_whole_files(job, pieces, _joined(results))


def _joined(results: list) -> ScanResult:
    """ScanResults of consecutive runs of files as one (file numbers already global)."""
    joined = ScanResult(pa.concat_tables([r.samples for r in results]), [], [])
    for result in results:
        joined.records += result.records
        joined.unanswered += result.unanswered
        joined.problems += result.problems
        joined.mismatched += result.mismatched
        add_regraded(joined.regraded, result.regraded)
    return joined


def _as_whole_files(job: ScanJob, pieces: list, result: ScanResult) -> ScanResult:
    """A scan of pieces as if of their original files: file numbers, record and line numbers, counts."""
    source = np.array([piece.source for piece in pieces], dtype=np.int32)
    record_offset = np.array([piece.record_offset for piece in pieces], dtype=np.int32)
    piece_no = result.samples.column("file_no").to_numpy()
    samples = result.samples.set_column(SAMPLE_SCHEMA.get_field_index("file_no"), "file_no",
                                        pa.array(source[piece_no] + job.first_file_no, pa.int32()))
    ordinal = result.samples.column("ordinal").to_numpy() + record_offset[piece_no]
    samples = samples.set_column(SAMPLE_SCHEMA.get_field_index("ordinal"), "ordinal", pa.array(ordinal, pa.int32()))
    records, unanswered = [0] * len(job.files), [0] * len(job.files)
    for piece, count, idle in zip(pieces, result.records, result.unanswered):
        records[piece.source] += count
        unanswered[piece.source] += idle
    problems = [(pieces[f].source + job.first_file_no, line + pieces[f].line_offset, message)
                for f, line, message in result.problems]
    return ScanResult(samples, records, unanswered, problems, result.mismatched, result.regraded)


def _scan_files(job: ScanJob, raw: str = _RAW, long_lines: list | None = None) -> ScanResult:
    """The scan proper; ``long_lines``: per file, {line number: LongLine} cut out of it."""
    from deflate import deflate_compress as compress
    records, unanswered = np.zeros(len(job.files), np.int64), np.zeros(len(job.files), np.int64)
    counts: dict[int, int] = {}
    tables, problems, unreadable = [], [], []
    rules = ValueRules()
    mismatched = 0
    reader = _duckdb().sql(_query(job, raw), params=_params(job)).to_arrow_reader(ROWS_PER_BATCH)
    for batch in reader:
        file_no = batch.column("file").to_numpy(zero_copy_only=False).astype(np.int32)
        ordinal = _ordinals(file_no, counts)
        np.add.at(records, file_no, 1)
        rank, messages, typed = rules.check(batch, job.expect)
        for i, message in sorted(messages.items()):
            if rank[i] == RANK["unreadable"]:
                unreadable.append((int(file_no[i]), int(ordinal[i])))
            else:
                mismatched += int(rank[i] == RANK["eval"])
                problems.append((int(file_no[i]), int(ordinal[i]), message))
        fine = rank == NO_PROBLEM
        is_unanswered = batch.column("unanswered").to_numpy(zero_copy_only=False)
        np.add.at(unanswered, file_no[fine & is_unanswered], 1)
        keep = fine & ~is_unanswered
        flagged = keep & batch.column("check_text").to_numpy(zero_copy_only=False)
        if flagged.any():
            keep = _check_texts(job, keep, flagged, file_no, ordinal, problems)
        if not keep.any():
            continue
        mask = pa.array(keep)
        sel = batch.filter(mask)
        chosen = {name: column.filter(mask) for name, column in typed.items()}
        task = pc.coalesce(chosen["task"], chosen["base_task"])
        sizes = _gzip_sizes(sel.column("cbytes"), sel.column("text"), compress)
        tables.append(pa.Table.from_arrays([
            pa.array(file_no[keep] + job.first_file_no, pa.int32()), pa.array(ordinal[keep], pa.int32()),
            chosen["model"], chosen["template"], chosen["sampler"], chosen["base_task"], task,
            chosen["params"], chosen["manifold"],
            chosen["task_version"], chosen["grader_version"], sel.column("sample_index").cast(pa.int32()),
            pa.array(outcome_codes(typed)[keep], pa.uint8()), sel.column("ctoks").cast(pa.int32()),
            sel.column("ptoks").cast(pa.int64()), chosen["guess_chance"], sel.column("abytes").cast(pa.int32()),
            sizes, chosen["invalid_reason"], sel.column("loop_saved").cast(pa.int32()),
            sel.column("stop_loops")], schema=SAMPLE_SCHEMA))
    samples = pa.concat_tables(tables) if tables else SAMPLE_SCHEMA.empty_table()
    if unreadable:
        problems.extend(_diagnose(job, unreadable, long_lines))
    result = ScanResult(samples, records.tolist(), unanswered.tolist(), problems, mismatched)
    if job.regrade and len(samples):
        result.samples, result.regraded = _regrade(job, samples, result.problems)
    result.problems = _with_line_numbers(job, result.problems)
    return result


def _check_texts(job: ScanJob, keep: np.ndarray, flagged: np.ndarray, file_no: np.ndarray, ordinal: np.ndarray,
                 problems: list) -> np.ndarray:
    """Rows whose answer / reasoning might not be text: their line's raw JSON decides (see record_checks.py)."""
    wanted: dict[int, dict[int, int]] = {}
    for flagged_row in np.flatnonzero(flagged).tolist():
        wanted.setdefault(int(file_no[flagged_row]), {})[int(ordinal[flagged_row])] = flagged_row
    keep = keep.copy()
    for f, by_number in wanted.items():
        for number, _, raw in _non_blank_lines(job.files[f]):
            row = by_number.get(number)
            message = text_problem(raw) if row is not None else None
            if message:
                problems.append((f, number, message))
                keep[row] = False
    return keep


def _non_blank_lines(path: str) -> Iterator[tuple[int, int, bytes]]:
    """(line number, raw line) of the lines DuckDB reads as records (blank lines are skipped)."""
    with open(path, "rb") as fh:
        number = 0
        for line_no, raw in enumerate(fh, 1):
            if raw.strip():
                number += 1
                yield number, line_no, raw


def _diagnose(job: ScanJob, unreadable: list, long_lines: list | None = None) -> list:
    """Messages for records DuckDB could not parse: Python's json says what is wrong
    (or the line is over RECORD_LIMIT, measured on the line or when it was cut out)."""
    wanted: dict[int, set[int]] = {}
    for file_no, ordinal in unreadable:
        wanted.setdefault(file_no, set()).add(ordinal)
    out = []
    for file_no, ordinals in sorted(wanted.items()):
        for number, line_no, raw in _non_blank_lines(job.files[file_no]):
            if number in ordinals:
                cut = long_lines[file_no].get(line_no) if long_lines else None
                message = (long_line_problem(cut.length, cut.newline, cut.closed) if cut
                           else raw_line_problem(raw) or diagnose_line(raw))
                out.append((file_no, number, message))
    return out


def _with_line_numbers(job: ScanJob, problems: list) -> list:
    """(file_no, record number, message) -> (file_no, line number, message), sorted."""
    by_file: dict[int, list[tuple[int, str]]] = {}
    for file_no, number, message in problems:
        by_file.setdefault(file_no, []).append((number, message))
    out = []
    for file_no, items in sorted(by_file.items()):
        lines = {number: line_no for number, line_no, _ in _non_blank_lines(job.files[file_no])}
        for number, message in sorted(items):
            out.append((file_no + job.first_file_no, lines.get(number, number), message))
    return out


def _regrade(job: ScanJob, samples: pa.Table, problems: list) -> tuple[pa.Table, dict[str, list[int]]]:
    """--offline: grade every sample's stored answer again; new outcomes and changed-verdict counts.

    A record Python's json cannot load cannot be re-graded: it is refused like a bad record.
    """
    wanted: dict[int, dict[int, int]] = {}
    file_no = samples.column("file_no").to_numpy() - job.first_file_no
    ordinal = samples.column("ordinal").to_numpy()
    for sample_row, (f, o) in enumerate(zip(file_no.tolist(), ordinal.tolist())):
        wanted.setdefault(f, {})[o] = sample_row
    outcome = samples.column("outcome").to_numpy().copy()
    reasons = samples.column("invalid_reason").to_pylist()
    regraded: dict[str, list[int]] = {}
    refused = np.ones(len(samples), dtype=bool)
    for f, rows in wanted.items():
        for number, _, raw in _non_blank_lines(job.files[f]):
            row = rows.get(number)
            if row is None:
                continue
            record, problem = load_line(raw)
            if not problem and record.get("target") is None:
                problem = "no target: the record cannot be re-graded"
            if problem:
                problems.append((f, number, problem))
                refused[row] = False
                continue
            graded = {**record, **grade_record(record, task_of_record(record))}
            new = outcome_of(graded)
            tally = regraded.setdefault(record["base_task"], [0, 0])
            tally[0] += 1
            tally[1] += int(new != outcome[row])
            outcome[row] = new
            reasons[row] = graded["invalid_reason"]
    samples = samples.set_column(samples.schema.get_field_index("invalid_reason"), "invalid_reason",
                                 pa.array(reasons, pa.string()))
    samples = samples.set_column(samples.schema.get_field_index("outcome"), "outcome", pa.array(outcome, pa.uint8()))
    version = pa.array(np.full(len(samples), GRADER_VERSION, dtype=np.int32))
    samples = samples.set_column(samples.schema.get_field_index("grader_version"), "grader_version", version)
    return samples.filter(pa.array(refused)), regraded


def scan_batch_safe(job: ScanJob) -> ScanResult | UserError:
    """Worker entry: a UserError (e.g. --offline on an unknown task) travels back as text."""
    try:
        return scan_batch(job)
    except UserError as exc:
        return UserError(f"{job.files[0] if len(job.files) == 1 else 'files of ' + os.path.dirname(job.files[0])}: "
                         f"{exc}")


