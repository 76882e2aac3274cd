"""Small pieces of the ingest pipeline: outcomes, gzip sizes, sample extraction, interview globs."""
import gzip
import random

import pytest
from isal import igzip

from resolver.errors import UserError
from resolver.ingest import RecordProblem, expand_interview, gzip_size, outcome_of, sample_from_record


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
        size = gzip_size(data)
        assert size == len(igzip.compress(data, compresslevel=1, mtime=0))
        assert gzip.decompress(igzip.compress(data, compresslevel=1, mtime=0)) == data


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


def test_sample_from_record_fields():
    triple, base_task, params, task, manifold, index, sample = sample_from_record(_record())
    assert triple == ("m", "t", "s") and base_task == "a" and task == "000_a_length-3"
    assert params == '{"length":3}' and manifold == '{"degree":1,"id":"g"}' and index == 17
    text = "think héllo".encode()
    assert sample == (1, 12, 30, 0.25, len(text), len(igzip.compress(text, 1, mtime=0)))


def test_unanswered_offline_records_are_not_samples():
    assert sample_from_record(_record(answer=None, usage=None)) is None


@pytest.mark.parametrize("overrides, needle", [
    ({"model": None}, "'model'"),
    ({"params": [1]}, "'params'"),
    ({"key": "no-index-here"}, "'key'"),
    ({"key": 5}, "'key'"),
])
def test_bad_records(overrides, needle):
    with pytest.raises(RecordProblem, match=needle):
        sample_from_record(_record(**overrides))


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


def test_fast_path_reads_clean_files_and_defers_bad_ones(tmp_path):
    import json

    from resolver.ingest import FileJob, scan_file_fast, scan_file_lines

    clean = tmp_path / "clean.ndjson"
    clean.write_text("".join(json.dumps(_record(key=f"000_a_length-3-{i}")) + "\n" for i in range(5)))
    fast = scan_file_fast(FileJob(str(clean)))
    assert fast is not None and fast.records == 5
    assert fast.parts == scan_file_lines(FileJob(str(clean))).parts
    assert scan_file_fast(FileJob(str(clean), ("m", "t", "other"))) is None     # another eval's records
    bad = tmp_path / "bad.ndjson"
    bad.write_text(clean.read_text() + '{"key": "000_a_length-3-9", "model": "m"')
    assert scan_file_fast(FileJob(str(bad))) is None
    missing = tmp_path / "missing.ndjson"
    missing.write_text(json.dumps(_record(template=None)) + "\n")
    assert scan_file_fast(FileJob(str(missing))) is None
