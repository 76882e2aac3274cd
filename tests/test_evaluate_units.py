"""Small pieces of the ingest pipeline: outcomes, gzip sizes, the scan and its record checks, interview globs."""
import gzip
import json
import random
from pathlib import Path

import deflate
import pytest

from resolver.core.errors import UserError
from resolver.ingest import expand_interview
from resolver.ingest.scan import ScanJob, scan_batch
from resolver.pointsdb.schema import outcome_of
from resolver.records import TEXT_SIZE_METHOD, gzip_size


@pytest.mark.parametrize("flags, expected", [
    (dict(is_truncated=True, is_correct=True, is_valid=True), 3),
    (dict(is_truncated=False, is_correct=True, is_valid=True), 0),
    (dict(is_truncated=False, is_correct=False, is_valid=False), 2),
    (dict(is_truncated=False, is_correct=False, is_valid=True), 1),
])
def test_outcome_codes(flags, expected):
    assert outcome_of(flags) == expected


def test_gzip_size_is_the_size_of_a_gzip_file():
    rng = random.Random(0)
    for data in (b"", b"x", "naïve ünïcode".encode(), bytes(rng.randrange(256) for _ in range(5000))):
        whole = deflate.gzip_compress(data, 1)        # libdeflate's own gzip file, header and trailer included
        assert gzip_size(data) == len(whole)
        assert gzip.decompress(whole) == data


def test_repetition_loops_compress_far_better_than_prose():
    rng = random.Random(1)
    words = [''.join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(3000)]
    prose = " ".join(rng.choice(words) for _ in range(2000)).encode()
    loop = (b"Let me check the count again: step 5 gives 12.\n" * 200)[: len(prose)]
    assert gzip_size(loop) < 0.1 * len(loop)
    assert gzip_size(prose) > 0.3 * len(prose)


def _record(**overrides):
    rec = {"task": "000_a_length-3", "base_task": "a", "key": "000_a_length-3-17", "params": {"length": 3, "count": 8},
           "model": "m", "template": "t", "sampler": "s", "answer": "héllo", "reasoning": "think ",
           "usage": {"completion_tokens": 12, "prompt_tokens": 30}, "guess_chance": 0.25,
           "is_valid": True, "is_correct": False, "is_truncated": False, "manifold": {"id": "g", "degree": 1}}
    rec.update(overrides)
    return rec


def _scan(tmp_path, lines, name="f.ndjson", expect=None):
    path = tmp_path / name
    path.write_bytes(b"".join(line if isinstance(line, bytes) else (json.dumps(line) + "\n").encode()
                              for line in lines))
    return scan_batch(ScanJob((str(path),), expect))


def test_sample_fields(tmp_path):
    result = _scan(tmp_path, [_record()])
    assert result.problems == [] and result.records == [1] and result.unanswered == [0]
    (row,) = result.samples.to_pylist()
    assert (row["model"], row["template"], row["sampler"]) == ("m", "t", "s")
    assert row["base_task"] == "a" and row["task"] == "000_a_length-3"
    assert row["params"] == '{"length":3}' and row["manifold"] == '{"degree":1,"id":"g"}'
    assert row["sample_index"] == 17 and row["ordinal"] == 1
    assert (row["task_version"], row["grader_version"]) == (1, 1)        # records from before versions
    text = "think héllo".encode()
    assert (row["outcome"], row["ctoks"], row["ptoks"], row["guess"]) == (1, 12, 30, 0.25)
    assert (row["abytes"], row["cbytes"]) == (len(text), len(deflate.gzip_compress(text, 1)))


def test_recorded_text_sizes_are_used_only_when_they_fit_the_text(tmp_path):
    """A record's `text_size` (written by the runner) stands in for deflating its text only
    when it names this method and counts the text's bytes; otherwise the text is deflated."""
    text = "think héllo".encode()
    real = len(deflate.gzip_compress(text, 1))
    ok = {"bytes": len(text), "gzip": 7, "method": TEXT_SIZE_METHOD}     # 7: visibly the record's own number
    cases = [
        (ok, 7),
        ({**ok, "bytes": len(text) + 1}, real),            # another text's sizes (e.g. the answer was edited)
        ({**ok, "method": "gzip-zlib-9"}, real),           # another compressor
        ({**ok, "gzip": "7"}, real), ({**ok, "gzip": 0}, real), ({**ok, "bytes": str(len(text))}, real),
        ({"bytes": len(text), "gzip": 7}, real), ([len(text), 7], real), ("7", real), (None, real),
    ]
    result = _scan(tmp_path, [_record(key=f"k-{i}", text_size=size) for i, (size, _) in enumerate(cases)])
    assert result.problems == []
    assert result.samples.column("cbytes").to_pylist() == [want for _, want in cases]
    assert set(result.samples.column("abytes").to_pylist()) == {len(text)}


def test_runner_text_size_matches_what_evaluate_computes(tmp_path):
    """resolver.records.text_size (runner side) and the scan's own deflate give the same sizes."""
    from resolver.records.text_size import text_size

    texts = [("", ""), (None, "Final Answer: 3"), ("loop " * 4000, "x"), ("ünïcödé ✓ " * 50, "\u2028")]
    lines = [_record(key=f"k-{i}", reasoning=r, answer=a) for i, (r, a) in enumerate(texts)]
    computed = _scan(tmp_path, lines).samples
    recorded = _scan(tmp_path, [{**rec, "text_size": text_size(rec["reasoning"], rec["answer"])} for rec in lines],
                     name="g.ndjson").samples
    assert recorded.column("cbytes").to_pylist() == computed.column("cbytes").to_pylist()
    assert recorded.column("abytes").to_pylist() == computed.column("abytes").to_pylist() == [
        len(((r or "") + a).encode()) for r, a in texts]


def test_versions_and_defaults(tmp_path):
    rec = _record(task_version=3, grader_version=2, task="", manifold=None, guess_chance=None, usage=None)
    del rec["is_valid"]
    (row,) = _scan(tmp_path, [rec]).samples.to_pylist()
    assert (row["task_version"], row["grader_version"]) == (3, 2)
    assert row["task"] == "a" and row["manifold"] == "{}" and row["guess"] == 0.0
    assert (row["ctoks"], row["ptoks"], row["outcome"]) == (0, 0, 2)    # no usage: 0 tokens; is_valid missing: invalid


def test_answers_that_look_like_json_values_are_still_text(tmp_path):
    lines = [_record(key=f"k-{i}", answer=a) for i, a in enumerate(["42", "true", "[1, 2]", "{x}", "-3.5e2"])]
    result = _scan(tmp_path, lines)
    assert result.problems == [] and result.samples.column("abytes").to_pylist() == [
        len("think " + a) for a in ["42", "true", "[1, 2]", "{x}", "-3.5e2"]]


def test_unanswered_offline_records_are_not_samples(tmp_path):
    result = _scan(tmp_path, [_record(answer=None, usage=None)])
    assert result.samples.num_rows == 0 and result.unanswered == [1] and result.problems == []


BAD = [
    ({"model": None}, "'model' missing or not a string"),
    ({"model": 5}, "'model' missing or not a string"),
    ({"params": [1]}, "'params' missing or not an object"),
    ({"key": "no-index-here"}, "'key' must look like <step>-<sample index>"),
    ({"key": 5}, "'key' must look like"),
    ({"key": "000_a_length-3-\u00b2"}, "'key' must look like"),          # '²': isdigit() says yes, int() no
    ({"key": "000_a_length-3-3000000000"}, "sample index in 'key' is above 2^31-1"),
    ({"guess_chance": "abc"}, "'guess_chance' must be a number from 0 to 1, got \"abc\""),
    ({"guess_chance": 1.5}, "'guess_chance' must be a number from 0 to 1"),
    ({"usage": {"completion_tokens": "1e400"}}, "'usage.completion_tokens' must be an integer"),
    ({"usage": {"completion_tokens": 12, "prompt_tokens": 3000000000}}, "'usage.prompt_tokens' must be an integer"),
    ({"usage": {"completion_tokens": 12.0}}, "'usage.completion_tokens' must be an integer"),
    ({"usage": {"completion_tokens": -1}}, "'usage.completion_tokens' must be an integer"),
    ({"usage": [12]}, "'usage' must be an object"),
    ({"is_correct": "false"}, "'is_correct' must be true or false, got \"false\""),
    ({"is_truncated": 0}, "'is_truncated' must be true or false, got 0"),
    ({"is_valid": "true"}, "'is_valid' must be true or false"),
    ({"answer": 5}, "'answer' must be a string, got 5"),
    ({"answer": True}, "'answer' must be a string, got true"),
    ({"answer": [1, 2]}, "'answer' must be a string, got [1, 2]"),
    ({"reasoning": 2.5}, "'reasoning' must be a string, got 2.5"),
    ({"reasoning": {"a": 1}}, "'reasoning' must be a string"),
    ({"task": 7}, "'task' must be a string"),
    ({"manifold": "grid"}, "'manifold' must be an object"),
    ({"task_version": "2"}, "'task_version' must be a positive integer"),
    ({"grader_version": 0}, "'grader_version' must be a positive integer"),
]


@pytest.mark.parametrize("overrides, needle", BAD)
def test_bad_records_are_reported_with_their_line_and_skipped(tmp_path, overrides, needle):
    lines = [_record(key="000_a_length-3-1"), b"\n", _record(**overrides), _record(key="000_a_length-3-2")]
    if "key" in overrides and overrides["key"] == "000_a_length-3-\u00b2":
        lines[2] = (json.dumps(_record(), ensure_ascii=False).replace("length-3-17", "length-3-\u00b2") + "\n").encode()
    if overrides.get("usage") == {"completion_tokens": "1e400"}:          # a JSON number, not a string
        lines[2] = (json.dumps(_record()).replace('"completion_tokens": 12', '"completion_tokens": 1e400') + "\n").encode()
    result = _scan(tmp_path, lines)
    assert len(result.problems) == 1, result.problems
    file_no, line, message = result.problems[0]
    assert (file_no, line) == (0, 3) and needle in message, message
    assert sorted(result.samples.column("sample_index").to_pylist()) == [1, 2]     # the others are kept
    assert result.records == [3]


@pytest.mark.parametrize("raw, needle", [
    (b"{not json}\n", "malformed JSON"),
    (b"[1, 2]\n", "line is JSON but not an object"),
    (b"{}\n", "'model' missing or not a string"),
    (b'{"key": "000_a_length-3-9", "model": "m"', "truncated last line?"),
])
def test_lines_duckdb_cannot_read(tmp_path, raw, needle):
    lines = [_record(key="000_a_length-3-1"), raw]
    if raw.endswith(b"\n"):
        lines.append(_record(key="000_a_length-3-2"))
    result = _scan(tmp_path, lines)
    assert [(f, line) for f, line, _ in result.problems] == [(0, 2)] and needle in result.problems[0][2]
    assert result.samples.num_rows == len(lines) - 1


def test_lone_surrogate_is_reported_not_fatal(tmp_path):
    bad = (json.dumps(_record(key="000_a_length-3-5")).replace("h\\u00e9llo", "h\\ud800llo") + "\n").encode()
    assert b"\\ud800" in bad
    result = _scan(tmp_path, [_record(key="000_a_length-3-1"), bad])
    assert [(f, line) for f, line, _ in result.problems] == [(0, 2)]
    assert result.samples.column("sample_index").to_pylist() == [1]


def test_records_of_another_eval_are_refused_in_dataset_mode(tmp_path):
    result = _scan(tmp_path, [_record(), _record(sampler="other", key="x-2")], expect=("m", "t", "s"))
    assert result.mismatched == 1 and result.problems[0][:2] == (0, 2)
    assert "record is m|t|other, not this eval's m|t|s; skipped" in result.problems[0][2]


def test_batching_does_not_change_the_numbers(tmp_path):
    rng = random.Random(3)
    paths = []
    for f in range(4):
        recs = [_record(key=f"000_a_length-3-{rng.randint(0, 9)}", answer="x" * rng.randint(0, 500),
                        is_correct=rng.random() < 0.5) for _ in range(6)]
        recs.insert(2, {"model": "m"})
        path = tmp_path / f"{f}.ndjson"
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
        paths.append(str(path))
    whole = scan_batch(ScanJob(tuple(paths)))
    parts = [scan_batch(ScanJob((p,), first_file_no=i)) for i, p in enumerate(paths)]
    assert whole.samples.to_pylist() == [row for p in parts for row in p.samples.to_pylist()]
    assert whole.problems == [pr for p in parts for pr in p.problems] == [(i, 3, "'template' missing or not a string")
                                                                            for i in range(4)]


def test_expand_interview(tmp_path):
    (tmp_path / "run").mkdir()
    for name in ("a.ndjson", "b.ndjson", "notes.txt"):
        (tmp_path / "run" / name).write_text("")
    warnings = []
    files = expand_interview(f"{tmp_path}/run, {tmp_path}/run/a.ndjson,{tmp_path}/nothing*", warnings.append)
    assert [f.rsplit("/", 1)[1] for f in files] == ["a.ndjson", "b.ndjson"]
    assert len(warnings) == 1 and "nothing*" in warnings[0]
    with pytest.raises(UserError, match="matched no files"):
        expand_interview(f"{tmp_path}/zzz", warnings.append)


def _die_or_square(n):
    import os
    import signal

    if n == 3:
        os.kill(os.getpid(), signal.SIGKILL)        # a worker killed (OOM killer, kill -9)
    return n * n


@pytest.mark.skipif((__import__("os").cpu_count() or 1) < 2, reason="one core: no worker processes")
def test_a_dead_worker_is_an_error_not_a_hang():
    from resolver.ingest.pipeline import Workers

    done = []
    with Workers(2, 6) as pool:
        with pytest.raises(UserError, match="a worker process died"):
            for get in pool.map(_die_or_square, range(6)):
                done.append(get())
    assert done == [n * n for n in range(len(done))] and len(done) <= 3


_CTRL_C_BEFORE_THE_WORKER_STARTS = """
import os, signal, sys, time
from resolver.ingest import pipeline

ignore_sigint = pipeline._start_worker


def ctrl_c_then_start():
    os.kill(os.getpid(), signal.SIGINT)   # a Ctrl-C that lands after the fork, before the worker ignores it
    time.sleep(0.2)
    ignore_sigint()


pipeline._start_worker = ctrl_c_then_start
before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
with pipeline.Workers(2, 4) as pool:
    squares = [get() for get in pool.map(abs, [-1, -2, -3, -4])]
print(squares, signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before)
"""


def test_a_ctrl_c_during_worker_start_up_prints_no_worker_traceback():
    """evaluate.py's workers are forked with SIGINT blocked, so a Ctrl-C between the fork and the
    worker's own SIG_IGN stays pending and is discarded (resolver/ingest/pipeline.py)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _CTRL_C_BEFORE_THE_WORKER_STARTS], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.strip() == "[1, 2, 3, 4] True"


def test_versions_text_for_analyze_evals():
    from resolver.analysis.inventory import versions_text

    assert versions_text({"grader_version": 1, "task_versions": {"a": [1], "b": [1]}}) == "grader v1, tasks v1"
    assert versions_text({"grader_version": 2, "task_versions": {"a": [1], "b": [1, 2]}}) == \
        "grader v2, b v1+v2 (other tasks v1)"
    assert versions_text({"grader_version": None, "task_versions": {}}) == "grader ?"


def test_deeply_nested_records_are_refused_not_a_crash(tmp_path):
    """Issue 16: JSON nested 100,000 deep (RecursionError in Python's json) is one bad record."""
    deep = "[" * 100000 + "]" * 100000
    genresult = (json.dumps(_record(key="k-2", base_task="arithmetic"))[:-1] + f', "genresult": {deep}}}\n').encode()
    answer = json.dumps(_record(key="k-3", base_task="arithmetic")).replace('"answer": "h\\u00e9llo"', f'"answer": {deep}').encode() + b"\n"
    assert deep.encode() in answer
    path = tmp_path / "deep.ndjson"
    first = _record(key="k-1", base_task="arithmetic", target="7")     # --offline grades against the target
    path.write_bytes((json.dumps(first) + "\n").encode() + genresult + answer)
    plain = scan_batch(ScanJob((str(path),)))
    assert plain.samples.column("sample_index").to_pylist() == [1, 2]        # DuckDB reads the deep genresult
    assert [(line, "nested too deeply" in msg) for _, line, msg in plain.problems] == [(3, True)]
    regraded = scan_batch(ScanJob((str(path),), regrade=True))              # --offline must load each record
    assert sorted(line for _, line, _ in regraded.problems) == [2, 3]


def test_fields_too_deep_for_python_are_refused_not_a_crash(tmp_path):
    """A params / manifold / model nested 100,000 deep (DuckDB reads it; Python's json
    cannot) is one refused record each, not a worker's traceback."""
    deep = "[" * 100000 + "]" * 100000
    base = json.dumps(_record(key="k-2"))
    lines = [_record(key="k-1")]
    for field, old in (("params", '{"length": 3, "count": 8}'), ("manifold", '{"id": "g", "degree": 1}'),
                       ("model", '"m"')):
        new = '{"a": ' + deep + "}" if field != "model" else deep
        assert old in base
        lines.append((base.replace(f'"{field}": {old}', f'"{field}": {new}') + "\n").encode())
    lines.append(_record(key="k-3"))
    result = _scan(tmp_path, lines)
    assert [line for _, line, _ in result.problems] == [2, 3, 4], result.problems
    assert sorted(result.samples.column("sample_index").to_pylist()) == [1, 3]


def test_the_scan_reads_lines_as_duckdbs_read_json_would(tmp_path):
    """The scan's raw rows (json_extract over read_ndjson_objects) equal read_json with one
    column per field, DuckDB's own reader, on hostile values of every field."""
    import duckdb

    from resolver.ingest.record_checks import FIELDS, TEXT_FIELDS
    from resolver.ingest.scan import _RAW, _params

    values = [None, True, False, 0, -1, 2**31, 2**63, 1.5, 1e300, "", "x", "true", "null", "5", "{}", [], [1], {},
              {"completion_tokens": "3"}, {"bytes": 3, "gzip": 2, "method": TEXT_SIZE_METHOD}, "é\u2028", "\\u00e9"]
    base = _record(grader_version=2, task_version=2)
    lines = []
    for name in FIELDS:
        lines += [json.dumps({**base, name: v}) for v in values]
        lines.append(json.dumps({k: v for k, v in base.items() if k != name}))
    lines += ['{"model": "m"', "[1,2]", '"s"', "5", "null", "{}", '{"answer": "a\\ud800b", "model": "m"}',
              '{"model": "m", "model": "n"}', '{"a": 1} {"b": 2}', "   "]
    path = tmp_path / "hostile.ndjson"
    path.write_text("\n".join(lines) + "\n")
    con = duckdb.connect()
    names = ", ".join(FIELDS)
    ours = con.sql(f"SELECT file, {names} FROM ({_RAW})", params={
        k: v for k, v in _params(ScanJob((str(path),))).items()}).fetchall()
    columns = {name: "VARCHAR" if name in TEXT_FIELDS else "JSON" for name in FIELDS}
    reference = con.sql(f"SELECT file_index, {names} FROM read_json($f, format = 'newline_delimited', "
                        "columns = $c, ignore_errors = true)", params={"f": [str(path)], "c": columns}).fetchall()
    assert len(ours) == len(reference) == len(lines) - 1          # the blank line is no record
    differ = [(a, b) for a, b in zip(ours, reference) if a != b]
    # the only difference: a number where a text belongs prints as 1e300 vs 1e+300 (both refused as not text)
    assert all(a[:9] + a[11:] == b[:9] + b[11:] and "1e" in str(a[9:11]) for a, b in differ), differ[:3]


# ---------------------------------------------------------------- the record rules, read by Python
# An independent reading of the rules in resolver/ingest/record_checks.py's docstring (evaluate
# runs that module's SQL and per-value verdicts); the grid test holds them to the same answers.
_INT32_MAX = 2**31 - 1
_ORDER = ("model", "template", "sampler", "base_task", "params", "key", "task", "manifold", "usage",
          "usage.completion_tokens", "usage.prompt_tokens", "guess_chance", "is_valid", "is_correct",
          "is_truncated", "task_version", "grader_version")


def _is_int(value, low):
    return type(value) is int and low <= value <= _INT32_MAX


def _reference(record: dict, expect=None):
    """('problem', field) | ('unanswered',) | ('sample', values) for one parsed record."""
    import re

    from resolver.records.text_size import gzip_size

    usage = record.get("usage")
    tokens = usage if isinstance(usage, dict) else {}
    key = record.get("key")
    digits = re.search(r"-([0-9]+)\Z", key) if isinstance(key, str) else None
    guess = record.get("guess_chance")
    broken = {
        "model": not (isinstance(record.get("model"), str) and record["model"]),
        "template": not (isinstance(record.get("template"), str) and record["template"]),
        "sampler": not (isinstance(record.get("sampler"), str) and record["sampler"]),
        "base_task": not (isinstance(record.get("base_task"), str) and record["base_task"]),
        "params": not isinstance(record.get("params"), dict),
        "key": digits is None or int(digits.group(1)) > _INT32_MAX,
        "task": record.get("task") is not None and not isinstance(record["task"], str),
        "manifold": record.get("manifold") is not None and not isinstance(record["manifold"], dict),
        "usage": usage is not None and not isinstance(usage, dict),
        "usage.completion_tokens": tokens.get("completion_tokens") is not None
        and not _is_int(tokens["completion_tokens"], 0),
        "usage.prompt_tokens": tokens.get("prompt_tokens") is not None and not _is_int(tokens["prompt_tokens"], 0),
        "guess_chance": guess is not None and not (type(guess) in (int, float) and 0 <= guess <= 1),
        **{name: record.get(name) is not None and type(record[name]) is not bool
           for name in ("is_valid", "is_correct", "is_truncated")},
        **{name: record.get(name) is not None and not _is_int(record[name], 1)
           for name in ("task_version", "grader_version")},
    }
    for name in _ORDER:
        if broken[name]:
            return ("problem", name)
    if record.get("answer") is None and usage is None:
        return ("unanswered",)
    for name in ("answer", "reasoning"):
        if record.get(name) is not None and not isinstance(record[name], str):
            return ("problem", name)
    if expect and (record["model"], record["template"], record["sampler"]) != expect:
        return ("problem", "record is")
    text = ((record.get("reasoning") or "") + (record.get("answer") or "")).encode()
    size = record.get("text_size")
    recorded = (isinstance(size, dict) and size.get("method") == TEXT_SIZE_METHOD and type(size.get("bytes")) is int
                and size["bytes"] == len(text) and _is_int(size.get("gzip"), 1))
    outcome = (3 if record.get("is_truncated") is True else 0 if record.get("is_correct") is True
               else 1 if record.get("is_valid") is True else 2)
    return ("sample", {
        "sample_index": int(digits.group(1)), "task": record.get("task") or record["base_task"],
        "ctoks": tokens.get("completion_tokens") or 0, "ptoks": tokens.get("prompt_tokens") or 0,
        "guess": float(guess or 0), "outcome": outcome, "task_version": record.get("task_version") or 1,
        "grader_version": record.get("grader_version") or 1, "abytes": len(text),
        "cbytes": size["gzip"] if recorded else gzip_size(text)})


_HOSTILE = [None, True, False, 0, 1, -1, 7, 2**31 - 1, 2**31, 2**63, 2**64 + 5, 0.0, 0.5, 1.0, 1.5, -2.5, 1e300,
            "", "x", "true", "false", "null", "5", "0.5", "{}", "[1]", [], [1], {}, {"a": 1}, "é\u2028", "\\u00e9",
            "a-1", "a-\u0661", "a-12\n", "-12", "x-007", "x-2147483647", "x-2147483648", 'x-3"', "x-3\\"]
_SUB = {"usage": ("completion_tokens", "prompt_tokens"), "text_size": ("bytes", "gzip", "method")}


def _hostile_records():
    text = "think héllo".encode()
    base = _record(grader_version=2, task_version=3,
                   text_size={"bytes": len(text), "gzip": 9, "method": TEXT_SIZE_METHOD})
    out = []
    for name in list(base) + ["text_size"]:
        out += [{**base, name: value} for value in _HOSTILE]
        out.append({k: v for k, v in base.items() if k != name})
    for name, subs in _SUB.items():
        for sub in subs:
            out += [{**base, name: {**base[name], sub: value}} for value in _HOSTILE + [TEXT_SIZE_METHOD]]
            out.append({**base, name: {k: v for k, v in base[name].items() if k != sub}})
    out += [{**base, "answer": None, "usage": None}, {**base, "answer": None, "usage": None, "reasoning": 5},
            {**base, "answer": None, "usage": None, "model": 5}, {**base, "answer": None}, {**base, "usage": None}]
    return out


@pytest.mark.parametrize("expect", [None, ("m", "t", "s")])
def test_the_sql_checks_agree_with_a_python_reading_of_the_rules(tmp_path, expect):
    """Every record of a hostile grid (each field, and each field of `usage` / `text_size`,
    set to ~40 awkward values) is refused for the same field, counted unanswered, or read
    with the same numbers by the scan as by _reference."""
    records = _hostile_records()
    result = _scan(tmp_path, records, expect=expect)
    by_line = {line: message for _, line, message in result.problems}
    samples = {row["ordinal"]: row for row in result.samples.to_pylist()}
    unanswered, mismatches = 0, []
    for line, record in enumerate(records, 1):
        want = _reference(record, expect)
        if want[0] == "problem":
            message = by_line.get(line, "")
            named = want[1] if want[1] == "record is" else (
                "sample index in 'key'" if want[1] == "key" and "above" in message else f"'{want[1]}'")
            if named not in message or line in samples:
                mismatches.append((line, record, want, message or samples.get(line)))
        elif want[0] == "unanswered":
            unanswered += 1
            if line in by_line or line in samples:
                mismatches.append((line, record, want, by_line.get(line) or samples.get(line)))
        else:
            got = samples.get(line)
            if got is None or {k: got[k] for k in want[1]} != want[1]:
                mismatches.append((line, record, want, by_line.get(line) or got))
    assert not mismatches, f"{len(mismatches)} of {len(records)} differ, e.g. {mismatches[:3]}"
    assert result.unanswered == [unanswered] and unanswered >= 2
    # the same rules for one record Python has parsed (what probe.py reads)
    from resolver.ingest.record_checks import record_problem

    for record in records:
        want, got = _reference(record), record_problem(record)
        if want[0] == "problem":
            named = "sample index in 'key'" if want[1] == "key" and "above" in (got or "") else f"'{want[1]}'"
            assert got is not None and named in got, (record, want, got)
        else:
            assert got is None, (record, want, got)
    assert len(result.problems) > 150 and len(samples) > 150


def test_guided_batches_cover_every_file_once_and_shrink_towards_the_end():
    """plan_batches: consecutive slices of each list, in order, never across lists; big
    batches first (whole lists while they fit), at least MIN_BATCH_BYTES unless a list runs out."""
    from resolver.ingest.input_files import MAX_BATCH_BYTES, MIN_BATCH_BYTES, plan_batches

    rng = random.Random(5)
    mb = 2**20
    sizes = [[rng.randint(mb // 8, 2 * mb) for _ in range(rng.randint(1, 400))] for _ in range(7)]
    batches = plan_batches(sizes, 2)
    covered = [(n, i) for n, first, end in batches for i in range(first, end)]
    assert covered == [(n, i) for n, lst in enumerate(sizes) for i in range(len(lst))]
    totals = [sum(sizes[n][first:end]) for n, first, end in batches]
    for (n, first, end), total in zip(batches, totals):
        assert end > first and (total <= MAX_BATCH_BYTES or end - first == 1)
        assert total >= MIN_BATCH_BYTES - 2 * mb or end == len(sizes[n])    # a list's last slice may be short
    assert max(totals[-3:]) < max(totals[:3])
    assert len(plan_batches([[10] * 5], 4)) == 1 and plan_batches([], 2) == []


def test_eval_files_keep_the_order_of_sorted_paths(tmp_path):
    """eval_file_paths sorts text paths component by component, as sorted(Path) did:
    'a-b/x' (with '-' < '/') after 'a/...'."""
    from pathlib import Path

    from resolver.catalog.datasets import EvalSpec, eval_file_paths

    cohort = tmp_path / "cohort"
    for rel in ("a/z.ndjson", "a-b/x.ndjson", "a/b/c.ndjson", "a.b/y.ndjson", "a/b-c.ndjson", "ab/q.ndjson"):
        (cohort / rel).parent.mkdir(parents=True, exist_ok=True)
        (cohort / rel).write_text("{}\n")
    spec = EvalSpec("abcdef", "m", "t", "s", "M", (), {}, (), None, "set/M", "**/*.ndjson", cohort, "test")
    found = eval_file_paths(spec)
    assert found == [str(p) for p in sorted(Path(f) for f in found)]
    assert found != sorted(found)                         # plain text order would differ here
    assert len(found) == 6


def test_probe_reads_exactly_the_records_evaluate_counts(tmp_path):
    """probe's point_records: a record evaluate.py refuses ("is_correct": "false") or one of
    another task version is not a sample of the point; the first copy of an index wins."""
    from resolver.ingest.raw_records import outcome_name, point_records

    lines = [_record(key="x-1", is_correct=True), _record(key="x-2", is_correct="false"),
             _record(key="x-3", task_version=2), _record(key="x-1", is_correct=False),
             _record(key="x-4", answer=None, usage=None), _record(key="x-5")]
    (tmp_path / "f.ndjson").write_text("".join(json.dumps(r) + "\n" for r in lines))
    point = {"id": 1, "model": "m", "template": "t", "sampler": "s", "base_task": "a", "task_version": 1,
             "params": {"length": 3}, "sources": ["f.ndjson"]}
    got = [(r["key"], outcome_name(r)) for r in point_records(point, tmp_path)]
    assert got == [("x-1", "correct"), ("x-5", "incorrect")]
    assert [r["key"] for r in point_records({**point, "task_version": 2}, tmp_path)] == ["x-3"]
    # evaluate.py counts the same two samples for this point
    rows = _scan(tmp_path, lines, name="g.ndjson").samples.to_pylist()
    assert sorted({r["sample_index"] for r in rows if r["task_version"] == 1}) == [1, 5]


def test_a_pool_stop_inside_a_finaliser_is_not_printed_and_other_errors_are(capsys, monkeypatch):
    """A stop the worker's signal handler raises inside a ``__del__`` reaches sys.unraisablehook:
    the worker's hook keeps it off stderr (it is the pool's own stop, docs/evaluate.md); any
    other ignored exception is still printed by Python's default hook."""
    import signal
    import sys

    from resolver.ingest import pipeline

    raised = []
    monkeypatch.setattr(signal, "setitimer", lambda which, seconds: raised.append((which, seconds)))
    monkeypatch.setattr(sys, "unraisablehook", pipeline._stop_reached_a_finaliser)

    class StopsWhenCollected:
        def __del__(self):
            raise pipeline.PoolStopped()

    class FailsWhenCollected:
        def __del__(self):
            raise ValueError("a real bug in a finaliser")

    StopsWhenCollected()                                 # collected at once: its __del__ raises
    assert capsys.readouterr().err == "" and raised == []     # not in an item: nothing to send again
    monkeypatch.setattr(pipeline, "_in_item", True)
    StopsWhenCollected()
    assert capsys.readouterr().err == "" and raised == [(signal.ITIMER_REAL, pipeline.RESTOP_SECONDS)]
    FailsWhenCollected()
    err = capsys.readouterr().err
    assert "a real bug in a finaliser" in err and "Traceback" in err
