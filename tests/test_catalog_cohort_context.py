"""cohort.py context: clipped copies of an eval, checked record by record and through evaluate.py."""
from __future__ import annotations

import json
import math
import re
import shlex
import shutil

import duckdb
import pytest
from conftest import REPO, run_script

from resolver.catalog.cohort_context import UsageCounter, clip_record, limit_label, make_context_variant
from tests.support.cohort_factory import build_complete_cohort, eval_id, tree_bytes

LIMIT = 512


def records_of(folder) -> dict:
    """{key: record} over every NDJSON file of a run folder."""
    out = {}
    for path in sorted(folder.glob("*.ndjson")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                out[record["key"]] = record
    return out


def over_limit(record, limit=LIMIT) -> bool:
    return record["usage"]["prompt_tokens"] + record["usage"]["completion_tokens"] > limit


@pytest.fixture
def cohort(tmp_path):
    built = build_complete_cohort(tmp_path, REPO)
    built["root"] = tmp_path
    built["id"] = eval_id("gamma", "zeroshot-nosys", "greedy-max")
    return built


def variant_folder(cohort):
    return next(p for p in cohort["cohort"].glob("20*") if p.name.endswith("greedy-max-0.5k"))


def test_limit_labels():
    assert limit_label(12288) == "12k" and limit_label(1024) == "1k"
    assert limit_label(512) == "0.5k" and limit_label(10000) == "9.765625k"


def test_context_variant_clips_exactly_the_samples_over_the_limit(cohort):
    source = records_of(cohort["folder"])
    before = tree_bytes(cohort["folder"])
    proc = run_script("cohort.py", "context", "data/tiny-set/gamma", "--eval-id", cohort["id"],
                      "--context", LIMIT, "--quiet", cwd=cohort["root"], check=True)
    assert tree_bytes(cohort["folder"]) == before                     # the source is untouched
    new = records_of(variant_folder(cohort))
    assert set(new) == set(source)
    clipped = 0
    for key, old in source.items():
        rec = new[key]
        assert rec["sampler"] == "greedy-max-0.5k"
        if not over_limit(old):
            assert rec == dict(old, sampler="greedy-max-0.5k")
            continue
        clipped += 1
        prompt, completion = old["usage"]["prompt_tokens"], old["usage"]["completion_tokens"]
        keep = math.floor(len(old["answer"]) * (LIMIT - prompt) / completion)
        assert rec["answer"] == old["answer"][:keep]
        assert rec["usage"]["completion_tokens"] == LIMIT - prompt
        assert rec["usage"]["total_tokens"] == LIMIT
        assert rec["timings"]["finish_reason"] == "length"
        assert (rec["is_truncated"], rec["is_valid"], rec["is_correct"]) == (True, False, False)
        assert list(rec)[:len(old)] == list(old)                       # field order kept
    assert 0 < clipped < len(source)
    assert f"{clipped} of {len(source)} samples cut" in proc.stdout
    assert "python evaluate.py --dataset data/tiny-set.json" in proc.stdout


def test_context_registers_the_new_eval(cohort):
    original = json.loads((cohort["cohort"] / "evals.json").read_text())
    run_script("cohort.py", "context", str(cohort["cohort"]), "--eval-id", cohort["id"], "--context", LIMIT,
               cwd=cohort["root"], check=True)
    entries = json.loads((cohort["cohort"] / "evals.json").read_text())
    assert entries[:-1] == original
    new = entries[-1]
    assert new["filters"] == {"model": "gamma", "template": "zeroshot-nosys", "sampler": "greedy-max-0.5k"}
    assert new["label"] == "gamma (greedy-max) (ctx:0.5k)"
    assert new["groups"] == ["arch:dense", "size:small", "ctx:0.5k"]
    assert new["evaluate"]["glob"] == "data/tiny-set/gamma/*_gamma_zeroshot-nosys_greedy-max-0.5k/*"
    listing = run_script("cohort.py", "list", str(cohort["cohort"]), cwd=cohort["root"], check=True).stdout
    assert eval_id("gamma", "zeroshot-nosys", "greedy-max-0.5k") in listing and "orphans" not in listing
    verify = run_script("cohort.py", "verify", str(cohort["cohort"]), "--quiet", cwd=cohort["root"])
    assert verify.returncode == 0, verify.stdout
    again = run_script("cohort.py", "context", str(cohort["cohort"]), "--eval-id", cohort["id"],
                       "--context", LIMIT, cwd=cohort["root"])
    assert again.returncode == 2 and "already has eval" in again.stderr


def test_context_then_evaluate_raises_the_truncation_rate(cohort):
    source = records_of(cohort["folder"])
    proc = run_script("cohort.py", "context", "data/tiny-set/gamma", "--eval-id", cohort["id"],
                      "--context", LIMIT, "--quiet", cwd=cohort["root"], check=True)
    command = next(line.strip() for line in proc.stdout.splitlines() if "evaluate.py" in line)
    args = shlex.split(command)[2:]                                   # drop "python evaluate.py"
    run_script("evaluate.py", *args, "--parallel", "1", "--quiet", cwd=cohort["root"], check=True)
    db = duckdb.connect(str(cohort["data"] / "pointsdb-tiny-set.db"), read_only=True)
    rows = db.execute("SELECT sampler, sum(correct), sum(truncated), sum(correct + incorrect + invalid + truncated) "
                      "FROM points GROUP BY sampler").fetchall()
    db.close()
    got = {r[0]: r[1:] for r in rows}
    expected_truncated = sum(over_limit(r) for r in source.values())
    expected_correct = sum(r["is_correct"] and not over_limit(r) for r in source.values())
    total = len(source)
    assert got["greedy-max"] == (sum(r["is_correct"] for r in source.values()), 0, total)
    assert got["greedy-max-0.5k"] == (expected_correct, expected_truncated, total)
    assert got["greedy-max-0.5k"][1] / total > got["greedy-max"][1] / total


def test_reasoning_is_cut_before_the_answer():
    record = {"answer": "A" * 100, "reasoning": "R" * 100, "usage": {"prompt_tokens": 10, "completion_tokens": 100},
              "timings": {"finish_reason": "stop"}, "base_task": "arithmetic", "target": "1",
              "response_enum": None, "sampler": "s"}
    short, status = clip_record(record, 40, UsageCounter(), "s-x")
    assert status == "clipped" and short["reasoning"] == "R" * 60 and short["answer"] == ""
    longer, _ = clip_record(record, 90, UsageCounter(), "s-x")
    assert longer["reasoning"] == "R" * 100 and longer["answer"] == "A" * 60
    same, status = clip_record(record, 110, UsageCounter(), "s-x")
    assert status == "kept" and same == dict(record, sampler="s-x")


def test_a_local_tokenizer_cuts_at_a_token_boundary(cohort, tmp_path):
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    inner = Tokenizer(models.WordLevel(vocab={"[UNK]": 0}, unk_token="[UNK]"))
    inner.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=inner, unk_token="[UNK]").save_pretrained(tmp_path / "tok")
    source = records_of(cohort["folder"])
    limit = 300
    result = make_context_variant(cohort["cohort"], cohort["id"], limit, tokenizer=str(tmp_path / "tok"))
    assert result.counter == str(tmp_path / "tok")
    new = records_of(result.folder)
    checked = 0
    for key, old in source.items():
        if not over_limit(old, limit):
            assert new[key]["answer"] == old["answer"]
            continue
        budget = limit - old["usage"]["prompt_tokens"]
        # The Whitespace pre-tokenizer splits on \w+|[^\w\s]+; each piece is one token here.
        pieces = list(re.finditer(r"\w+|[^\w\s]+", old["answer"]))
        if len(pieces) < budget:          # usage said "too long" but the text has fewer tokens: kept whole
            assert new[key]["answer"] == old["answer"]
            continue
        assert new[key]["answer"] == old["answer"][:pieces[budget - 1].end()]
        assert new[key]["is_truncated"] is True
        checked += 1
    assert checked > 0


def test_context_input_errors(cohort):
    base = ["cohort.py", "context", str(cohort["cohort"])]
    wrong = run_script(*base, "--eval-id", "zzzzzz", "--context", 100, cwd=cohort["root"])
    assert wrong.returncode == 2 and f"valid: {cohort['id']}" in wrong.stderr
    zero = run_script(*base, "--eval-id", cohort["id"], "--context", 0, cwd=cohort["root"])
    assert zero.returncode == 2 and "positive" in zero.stderr
    text = run_script(*base, "--eval-id", cohort["id"], "--context", "12k", cwd=cohort["root"])
    assert text.returncode == 2 and len(text.stderr.strip().splitlines()) == 1
    bad_tok = run_script(*base, "--eval-id", cohort["id"], "--context", 100, "--tokenizer",
                         str(cohort["root"] / "no-such-tokenizer"), cwd=cohort["root"])
    assert bad_tok.returncode == 2 and "could not be loaded" in bad_tok.stderr
    shutil.rmtree(cohort["folder"])
    gone = run_script(*base, "--eval-id", cohort["id"], "--context", 100, cwd=cohort["root"])
    assert gone.returncode == 2 and f"python data.py pull eval {cohort['id']}" in gone.stderr
    assert [p.name for p in cohort["cohort"].iterdir()] == ["evals.json"]     # nothing half-made


def test_a_wildcard_glob_that_would_swallow_the_variant_is_pointed_out(cohort):
    entries = json.loads((cohort["cohort"] / "evals.json").read_text())
    entries[0]["evaluate"]["glob"] = "data/tiny-set/gamma/*_gamma_zeroshot-nosys_*/*"     # seed-style wildcard
    (cohort["cohort"] / "evals.json").write_text(json.dumps(entries))
    proc = run_script("cohort.py", "context", str(cohort["cohort"]), "--eval-id", cohort["id"], "--context", LIMIT,
                      "--quiet", cwd=cohort["root"], check=True)
    assert f"eval {cohort['id']}'s glob" in proc.stdout and "narrow it to end in _greedy-max/*" in proc.stdout
