"""Lines too long to be records (a valid 50 MB record, a crash's 50 MB garbage tail).

Each is one refused record with its file:line; the run goes on and writes every good
record. The rule the expected numbers follow is written out here on its own: a line
whose text (surrounding whitespace not counted) is over 16 MiB is not a record.
"""
import io
import json
import random

import duckdb
import pytest
from conftest import run_script
from test_evaluate_pipeline import all_ndjson, check_against_raw, independent_counts, make_cohort, make_record, write_dataset, write_evals, write_run
from test_evaluate_units import _record

from resolver.ingest.scan import ScanJob, _scan_in_pieces, scan_batch
from resolver.records import longlines
from resolver.records.longlines import LongLine, Piece, bounded_lines, cut_into_pieces, piece_groups

LIMIT = 16 * 2**20          # bytes a record line may have
BIG = 50_000_000


def _line(**overrides) -> bytes:
    return (json.dumps(_record(**overrides)) + "\n").encode()


def _padded(key: str, size: int) -> bytes:
    """A valid record whose line is exactly ``size`` bytes before its newline."""
    bare = json.dumps(_record(key=key, answer=""))
    return bare.replace('"answer": ""', '"answer": "' + "a" * (size - len(bare)) + '"').encode()


# ---------------------------------------------------------------- the streaming reader

def test_bounded_lines_hand_worked(monkeypatch):
    monkeypatch.setattr(longlines, "READ_BYTES", 2)       # long lines arrive in many reads
    data = b"ab\n" + b"abcdef\n" + b"12345\n" + b"  \t    \n" + b"{xxxxx}  \n" + b"\n" + b"{tail-cut"
    streamed = []
    got = list(bounded_lines(io.BytesIO(data), 5, streamed.append))
    assert got == [b"ab\n", LongLine(6, True, False, False), b"12345\n", LongLine(7, True, False, True),
                   LongLine(9, True, True, False), b"\n", LongLine(9, False, False, False)]
    assert b"".join(streamed) == b"abcdef\n" + b"  \t    \n" + b"{xxxxx}  \n" + b"{tail-cut"
    assert list(bounded_lines(io.BytesIO(b"x\nabc"), 5)) == [b"x\n", b"abc"]       # a short cut tail
    assert list(bounded_lines(io.BytesIO(b"abcdef}"), 5)) == [LongLine(7, False, True, False)]


def test_cut_into_pieces_hand_worked(tmp_path):
    lines = [b'{"a":1}\n', b"\n", b'{"b":22}\n', b"x" * 30 + b"\n", b'{"c":3}\n', b"   " * 10 + b"\n", b'{"d":4}']
    path = tmp_path / "f.ndjson"
    path.write_bytes(b"".join(lines))
    folder = tmp_path / "pieces"
    folder.mkdir()
    pieces = cut_into_pieces(str(path), 3, str(folder), piece_bytes=12, limit=20)
    # worked by hand: a piece closes before the line that would take it over 12 bytes;
    # the 30-byte lines become '{}' and a blank line; offsets count lines / non-blank lines
    assert [(p.source, p.line_offset, p.record_offset, p.size, p.long_lines) for p in pieces] == [
        (3, 0, 0, 9, {}), (3, 2, 1, 12, {2: LongLine(30, True, False, False)}),
        (3, 4, 3, 9, {2: LongLine(30, True, False, True)}), (3, 6, 4, 7, {})]
    assert [open(p.path, "rb").read() for p in pieces] == [
        lines[0] + lines[1], lines[2] + b"{}\n", lines[4] + b"\n", lines[6]]
    assert list(piece_groups(pieces, 20)) == [(0, 1), (1, 2), (2, 4)]
    assert cut_into_pieces(str(path), 0, str(folder), piece_bytes=100) == [Piece(str(path), 0, 0, 0, 95, {})]


def test_pieces_keep_every_file_record_and_line_number(tmp_path, monkeypatch):
    """The fallback's pieces, scanned in several queries, give the numbers of the whole files."""
    monkeypatch.setattr(longlines, "PIECE_BYTES", 1500)
    files, expected_samples, expected_problems = [], set(), []
    layouts = [["ok"] * 3 + ["blank"] + ["ok"] * 2 + ["junk"] + ["ok"] * 4, ["ok", "ok"],
               ["ok"] * 8 + ["bad"] + ["ok"] * 4 + ["blank", "blank"]]
    for file_no, layout in enumerate(layouts):
        body, ordinal = b"", 0
        for line_no, kind in enumerate(layout, 1):
            ordinal += kind != "blank"
            index = 100 * file_no + line_no
            body += {"ok": _line(key=f"k-{index}"), "blank": b"  \n", "junk": b"{not json}\n",
                     "bad": _line(key=f"k-{index}", is_valid="yes")}[kind]
            if kind == "ok":
                expected_samples.add((7 + file_no, ordinal, index))
            elif kind != "blank":
                expected_problems.append((7 + file_no, line_no))
        files.append(tmp_path / f"{file_no}.ndjson")
        files[-1].write_bytes(body)
    result = _scan_in_pieces(ScanJob(tuple(map(str, files)), first_file_no=7))
    got = set(zip(*(result.samples.column(c).to_pylist() for c in ("file_no", "ordinal", "sample_index"))))
    assert got == expected_samples
    assert [(f, line) for f, line, _ in result.problems] == expected_problems
    assert result.records == [10, 2, 13] and result.unanswered == [0, 0, 0]


def test_many_long_records_in_one_file_are_all_read(tmp_path):
    """Up to 2,048 rows of one file are DuckDB's chunk: 8 records of 15 MB each are more
    than a worker's DuckDB may hold (out of memory before); the fallback reads them in pieces."""
    path = tmp_path / "long.ndjson"
    with open(path, "wb") as fh:
        for i in range(8):
            fh.write(_line(key=f"k-{i}", answer="z" * 15_000_000))
    result = scan_batch(ScanJob((str(path),)))
    assert result.problems == [] and result.records == [8]
    assert result.samples.column("sample_index").to_pylist() == list(range(8))
    assert set(result.samples.column("abytes").to_pylist()) == {15_000_000 + len("think ")}


# ---------------------------------------------------------------- the scan

# Each long line is made when its case runs, not when the module is collected (by every worker).
LONG_LINES = [
    (lambda: _line(key="k-2", answer="x" * BIG), 2, "line of 50,000,"),                   # a valid record
    (lambda: b"g" * BIG + b"\n", 2, "line of 50,000,000 bytes is over the 16,777,216 bytes"),    # garbage, mid-file
    (lambda: b'{"key": "k-9", "answer": "' + b"g" * BIG, 4, "malformed JSON: the last line"),    # a crash's tail
]


@pytest.mark.parametrize("make_long_line, line_no, needle", LONG_LINES,
                         ids=[f"long_line{n}-{line_no}-{needle}" for n, (_, line_no, needle) in enumerate(LONG_LINES)])
def test_a_line_over_the_limit_is_one_refused_record(tmp_path, make_long_line, line_no, needle):
    long_line = make_long_line()
    lines = [_line(key="k-1"), long_line, _line(key="k-3")]
    if not long_line.endswith(b"\n"):
        lines = [lines[0], lines[2], b"\n", long_line]
    path = tmp_path / "f.ndjson"
    path.write_bytes(b"".join(lines))
    result = scan_batch(ScanJob((str(path),)))
    assert [(f, line) for f, line, _ in result.problems] == [(0, line_no)], result.problems
    assert needle in result.problems[0][2]
    assert ("truncated last line?" in result.problems[0][2]) == (not long_line.endswith(b"\n"))
    assert sorted(result.samples.column("sample_index").to_pylist()) == [1, 3]
    assert result.records == [3]


def test_a_long_blank_line_is_no_record_like_a_short_one(tmp_path):
    path = tmp_path / "f.ndjson"
    path.write_bytes(_line(key="k-1") + b" \t" * (BIG // 2) + b"\n" + _line(key="k-3"))
    result = scan_batch(ScanJob((str(path),)))
    assert result.problems == [] and result.records == [2]
    assert result.samples.column("ordinal").to_pylist() == [1, 2]


def test_the_limit_is_exact_and_the_same_in_every_batch(tmp_path):
    """16 MiB of text is a record (whitespace around it not counted), one byte more is not,
    whether or not another file of the batch sends the scan to its fallback."""
    paths = {}
    for name, body in (("at", b"  " + _padded("k-1", LIMIT) + b" \n"), ("over", _padded("k-2", LIMIT + 1) + b"\n"),
                       ("tail", _line(key="k-3") + _padded("k-4", LIMIT + 1)),
                       ("huge", _line(key="k-5") + b"g" * (2 * LIMIT + 10) + b"\n" + _line(key="k-6"))):
        paths[name] = tmp_path / f"{name}.ndjson"
        paths[name].write_bytes(body)
    expected = {"at": ([1], []), "over": ([], [1]), "tail": ([3], [2]), "huge": ([5, 6], [2])}
    alone = {name: scan_batch(ScanJob((str(p),))) for name, p in paths.items()}
    together = scan_batch(ScanJob(tuple(str(p) for p in paths.values())))
    for file_no, (name, (indices, bad_lines)) in enumerate(expected.items()):
        assert alone[name].samples.column("sample_index").to_pylist() == indices, name
        assert [line for _, line, _ in alone[name].problems] == bad_lines, name
        mine = [row["sample_index"] for row in together.samples.to_pylist() if row["file_no"] == file_no]
        assert mine == indices, name
        assert [(line, msg) for f, line, msg in together.problems if f == file_no] == [
            (line, msg) for _, line, msg in alone[name].problems], name
    assert "line of 16,777,217 bytes is over" in alone["over"].problems[0][2]
    assert "line of 16,777,217 bytes is over" in alone["tail"].problems[0][2]      # it ends in '}': not "cut"


# ---------------------------------------------------------------- evaluate.py end to end

def _lines_under_the_limit(files, folder):
    """Copies of the files with only the lines the rule lets through (for independent_counts)."""
    folder.mkdir()
    kept = []
    for number, path in enumerate(files):
        *lines, tail = path.read_bytes().split(b"\n")     # the lines a file object would give, and a cut tail
        # a line no longer than the limit is under it stripped too: only the long ones need stripping
        body = b"".join(line + b"\n" for line in lines if len(line) <= LIMIT or len(line.strip()) <= LIMIT)
        if len(tail) <= LIMIT or len(tail.strip()) <= LIMIT:
            body += tail
        kept.append(folder / f"{number:04d}.ndjson")      # keeps the order of the originals
        kept[-1].write_bytes(body)
    return kept


def _dump(db):
    con = duckdb.connect(str(db), read_only=True)
    dump = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("points", "evals", "expected")}
    con.close()
    return dump


def test_evaluate_reports_long_lines_and_writes_every_good_record(tmp_path):
    for model in ("ModelA", "ModelB"):
        write_evals(make_cohort(tmp_path, model, seed=len(model)), model)
    dataset = write_dataset(tmp_path, ["ModelA", "ModelB"])
    rng = random.Random(8)
    valid = make_record("ModelA", "zs", "greedy", "arithmetic", {"length": 3}, 77, "correct", rng)
    valid["answer"] = "Final Answer: 1 " + "x" * BIG
    valid_line = json.dumps(valid).encode()
    victim_a = sorted((tmp_path / "data/r1/ModelA").rglob("*.ndjson"))[0]
    lines = victim_a.read_bytes().splitlines(keepends=True)
    with open(victim_a, "wb") as fh:                   # written piece by piece: no 100 MB joined copy
        for piece in (lines[0], valid_line, b"\n", lines[1], b"g" * BIG, b"\n", *lines[2:]):
            fh.write(piece)
    victim_b = sorted((tmp_path / "data/r1/ModelB").rglob("*.ndjson"))[-1]
    tail_line = len(victim_b.read_bytes().splitlines()) + 1
    with open(victim_b, "ab") as fh:
        fh.write(b'{"key": "')
        fh.write(b"g" * BIG)                                 # a crash mid-write: no newline
    proc = run_script("evaluate.py", "--dataset", dataset, "--parallel", "2", check=True)
    assert f"{victim_a}:2: line of {len(valid_line):,} bytes is over the 16,777,216 bytes" in proc.stderr
    assert f"{victim_a}:4: line of 50,000,000 bytes is over" in proc.stderr
    assert f"{victim_b}:{tail_line}: malformed JSON: the last line (50,000,009 bytes)" in proc.stderr
    assert "(truncated last line?)" in proc.stderr and "Traceback" not in proc.stderr
    assert "2 evals built" in proc.stdout and "3 bad records skipped" in proc.stdout
    db = tmp_path / "data" / "pointsdb-r1.db"
    kept = _lines_under_the_limit(all_ndjson(tmp_path / "data"), tmp_path / "kept")
    assert all(independent_counts([f]) for f in kept)      # every copy still holds records
    check_against_raw(db, kept)                      # every good record, counted apart from the pipeline
    before = _dump(db)
    again = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert "up to date" in again.stdout and _dump(db) == before
    db.unlink()                                      # rebuilt from nothing, in other batches: the same
    rebuilt = run_script("evaluate.py", "--dataset", dataset, "--parallel", "1", check=True)
    assert "3 bad records skipped" in rebuilt.stdout and _dump(db) == before


def test_offline_inplace_copies_long_lines_through_unchanged(tmp_path):
    rng = random.Random(4)
    folder = tmp_path / "run"
    write_run(folder, [make_record("M", "zs", "s", "arithmetic", {"length": 4}, i, "correct", rng) for i in range(3)])
    path = next(folder.glob("*.ndjson"))
    # loadable records for the grader, but too long to be records: never re-graded
    over = b'{"base_task": "arithmetic", "answer": "' + b"y" * (LIMIT + 100) + b'"}\n'
    huge = b'{"base_task": "arithmetic", "answer": "' + b"y" * (2 * LIMIT + 100) + b'"}\n'
    tail = b'{"key": "' + b"g" * BIG
    long_tail = over + huge + tail
    with open(path, "ab") as fh:
        fh.write(long_tail)
    run_script("evaluate.py", "--interview", path, "--offline", "--inplace", "--db", tmp_path / "a.db", check=True)
    after = path.read_bytes()
    assert after.endswith(long_tail)
    head = after[: -len(long_tail)].splitlines()
    assert len(head) == 3 and all(json.loads(line)["grader_version"] for line in head)


def test_offline_regrading_reads_the_pieces_too(tmp_path, monkeypatch):
    """--offline grades every record again from its line: in the fallback, from the pieces."""
    monkeypatch.setattr(longlines, "PIECE_BYTES", 300)              # about one record per piece
    wrong = dict(base_task="arithmetic", target="5", answer="Final Answer: 5", is_correct=False, is_valid=False)
    lines = [_line(key=f"k-{i}", **wrong) for i in range(4)]
    path = tmp_path / "f.ndjson"
    path.write_bytes(b"".join(lines[:2]) + b"g" * (2 * LIMIT + 10) + b"\n" + b"".join(lines[2:]))
    result = scan_batch(ScanJob((str(path),), regrade=True))
    assert [(f, line) for f, line, _ in result.problems] == [(0, 3)]
    assert result.samples.column("sample_index").to_pylist() == [0, 1, 2, 3]
    assert result.samples.column("ordinal").to_pylist() == [1, 2, 4, 5]
    assert result.samples.column("outcome").to_pylist() == [0, 0, 0, 0]      # correct, as graded now
    assert result.regraded == {"arithmetic": [4, 4]}


def test_record_readers_outside_evaluate_refuse_the_same_long_lines(tmp_path):
    """probe.py and cohort.py read records with iter_records: a line over 16 MiB is a problem there too."""
    from resolver.records.run_folders import iter_records

    path = tmp_path / "a.ndjson"
    with open(path, "w") as out:
        out.write('{"a": 1}\n')
        out.write('{"x": "' + "y" * (17 * 2**20) + '"}\n')       # a whole record, too long
        out.write(" " * (17 * 2**20) + "\n")                      # a long blank line: no record
        out.write('{"b": 2}\n')
        out.write('{"cut": "' + "z" * (20 * 2**20))               # a crash's tail
    got = [(n, r, p and p.split(": ", 1)[1]) for n, r, p in iter_records(path)]
    assert got == [
        (1, {"a": 1}, None),
        (2, None, "line of 17,825,801 bytes is over the 16,777,216 bytes (16 MB) a record may have; skipped"),
        (4, {"b": 2}, None),
        (5, None, "malformed JSON: the last line (20,971,529 bytes) stops mid-record (truncated last line?)"),
    ]
