"""evaluate.py end to end on hand-made runner NDJSON, run as a real subprocess.

The expected numbers come from `independent_counts`, a plain counter over the raw
files written by the test (it does not import the pipeline).
"""
import json
import os
import random
from pathlib import Path

import deflate
import duckdb
import pytest
from conftest import run_script

from resolver.catalog.datasets import eval_id
from resolver.grading.answers import GRADER_VERSION

pytestmark = pytest.mark.slow  # evaluate.py end to end: left out of the fast tier (docs/performance.md)

FIELDS = ("task", "version", "base_task", "key", "input", "target", "response_enum", "genresult", "messages",
          "answer", "usage", "timings", "step", "params", "model", "template", "sampler", "guess_chance",
          "normalized_answer", "extracted_answer", "is_valid", "is_correct", "is_truncated", "manifold")


def make_record(model, template, sampler, base_task, params, index, outcome, rng, step=0, count=8):
    """A runner-shaped record whose flags say `outcome` (correct/incorrect/invalid/truncated)."""
    name = f"{step:03d}_{base_task}_" + "_".join(f"{k}-{v}" for k, v in sorted(params.items()))
    target = str(rng.randint(0, 99))
    answers = {"correct": f"work... Final Answer: {target}", "incorrect": f"hmm Final Answer: {int(target) + 1}",
               "invalid": "I am not sure.", "truncated": "loop " * rng.randint(5, 50)}
    answer = answers[outcome] + " " + "x" * rng.randint(0, 300)
    rec = {
        "task": name, "version": 1, "base_task": base_task, "key": f"{name}-{index}", "input": "2+2?",
        "target": target, "response_enum": None, "genresult": {}, "messages": [{"role": "user", "content": "2+2?"}],
        "answer": answer,
        "usage": {"completion_tokens": rng.randint(10, 900), "prompt_tokens": rng.randint(20, 60), "total_tokens": 0},
        "timings": {"termination_reason": None, "finish_reason": "length" if outcome == "truncated" else "stop"},
        "step": step, "params": dict(params, count=count), "model": model, "template": template, "sampler": sampler,
        "guess_chance": rng.choice([0.0, 0.25, 0.5]), "normalized_answer": None, "extracted_answer": None,
        "is_valid": outcome in ("correct", "incorrect"), "is_correct": outcome == "correct",
        "is_truncated": outcome == "truncated", "manifold": {"id": "grid", "degree": params.get("length", 0) % 3},
    }
    return {k: rec[k] for k in FIELDS}


def write_run(folder, records):
    folder.mkdir(parents=True, exist_ok=True)
    by_task = {}
    for r in records:
        by_task.setdefault(r["task"], []).append(r)
    for task, recs in by_task.items():
        with open(folder / f"{task}.ndjson", "a") as fh:
            for r in recs:
                fh.write(json.dumps(r) + "\n")


OUTCOMES = ("correct", "incorrect", "invalid", "truncated")


def make_cohort(root, model, sampler="greedy", seed=0, runs=2):
    """A cohort folder with `runs` run folders; the second repeats some samples (duplicates)."""
    rng = random.Random(seed)
    cohort = root / "data" / "r1" / model
    for run in range(runs):
        records = []
        for step, (task, length) in enumerate([("arithmetic", 3), ("arithmetic", 8), ("boolean", 3)]):
            indices = range(0, 6) if run == 0 else range(4, 8)    # 4 and 5 are repeated
            for i in indices:
                records.append(make_record(model, "zs", sampler, task, {"length": length}, i,
                                           rng.choice(OUTCOMES), rng, step=step))
        write_run(cohort / f"2026-01-0{run + 1}_00-00-00_r1_{model}_zs_{sampler}", records)
    return cohort


def write_evals(cohort, model, samplers=("greedy",), groups=("arch:moe", "size:large"), tags=("leaderboard",)):
    entries = [{"evaluate": {"glob": f"*_{model}_zs_{s}/*"},
                "filters": {"model": model, "template": "zs", "sampler": s},
                "label": f"{model} {s}", "groups": list(groups), "tags": list(tags), "hf_id": f"org/{model}"}
               for s in samplers]
    (cohort / "evals.json").write_text(json.dumps(entries))


def write_dataset(root, cohorts, name="r1"):
    path = root / "data" / f"{name}.json"
    path.write_text(json.dumps({"name": name, "db": f"pointsdb-{name}.db", "cache": ".cache",
                                "cohorts": [{"path": f"r1/{c}/evals.json"} for c in cohorts]}))
    return path


def independent_counts(files):
    """Per point (model, template, sampler, base_task, params without count): first sample per index wins."""
    points = {}
    for path in sorted(str(f) for f in files):
        with open(path, "rb") as fh:
            for raw in fh:
                try:
                    r = json.loads(raw)
                except ValueError:
                    continue
                if not all(k in r for k in ("params", "model", "template", "sampler", "key")):
                    continue
                params = {k: v for k, v in r["params"].items() if k != "count"}
                key = (r["model"], r["template"], r["sampler"], r["base_task"], json.dumps(params, sort_keys=True))
                index = int(r["key"].rsplit("-", 1)[1])
                samples = points.setdefault(key, {})
                if index in samples:
                    continue
                if r["is_truncated"]:
                    kind = "truncated"
                elif r["is_correct"]:
                    kind = "correct"
                elif not r["is_valid"]:
                    kind = "invalid"
                else:
                    kind = "incorrect"
                if r.get("answer") is None and r.get("usage") is None:
                    continue                                  # runner --offline: not answered yet
                data = ((r.get("reasoning") or "") + (r["answer"] or "")).encode()
                samples[index] = (kind, r["usage"]["completion_tokens"], r["usage"]["prompt_tokens"],
                                  r["guess_chance"], len(data), len(deflate.gzip_compress(data, 1)))
    return points


def db_points(db_path):
    con = duckdb.connect(str(db_path), read_only=True)
    rows = con.execute("""SELECT model, template, sampler, base_task, params, correct, incorrect, invalid, truncated,
                                 guess_sum, prompt_tokens, completion_tokens_sum, tokens_correct, tokens_truncated,
                                 completion_tokens, outcome, answer_bytes, compressed_bytes, sample_index, id, eval_id
                          FROM points ORDER BY id""").fetchall()
    con.close()
    return rows


def check_against_raw(db_path, files):
    expected = independent_counts(files)
    rows = db_points(db_path)
    assert len(rows) == len(expected)
    for row in rows:
        key = row[:4] + (json.dumps(json.loads(row[4]), sort_keys=True),)
        samples = expected[key]
        order = sorted(samples)
        kinds = [samples[i][0] for i in order]
        assert row[5:9] == tuple(kinds.count(k) for k in OUTCOMES)
        assert row[9] == pytest.approx(sum(samples[i][3] for i in order if samples[i][0] != "truncated"))
        assert row[10] == sum(samples[i][2] for i in order)
        assert row[11] == sum(samples[i][1] for i in order)
        assert row[12] == sum(samples[i][1] for i in order if samples[i][0] == "correct")
        assert row[13] == sum(samples[i][1] for i in order if samples[i][0] == "truncated")
        assert row[14] == [samples[i][1] for i in order]
        assert row[15] == [OUTCOMES.index(k) for k in kinds]
        assert row[16] == [samples[i][4] for i in order]
        assert row[17] == [samples[i][5] for i in order]
        assert row[18] == order
        assert row[20] == eval_id(*row[:3])


def all_ndjson(root):
    return sorted(Path(root).rglob("*.ndjson"))


@pytest.fixture
def dataset(tmp_path):
    for model in ("ModelA", "ModelB"):
        cohort = make_cohort(tmp_path, model, seed=len(model) + ord(model[-1]))
        write_evals(cohort, model)
    return write_dataset(tmp_path, ["ModelA", "ModelB"])


def test_dataset_numbers_match_raw_files_and_dedup(dataset, tmp_path):
    proc = run_script("evaluate.py", "--dataset", dataset, "--parallel", "2", check=True)
    db = tmp_path / "data" / "pointsdb-r1.db"
    check_against_raw(db, all_ndjson(tmp_path / "data"))
    assert "duplicate samples counted once" in proc.stdout
    rows = db_points(db)
    assert all(r[18] == list(range(8)) for r in rows)      # 0..5 from run 1, 4..7 from run 2, dups once
    con = duckdb.connect(str(db), read_only=True)
    evals = con.execute("SELECT eval_id, label, groups, facets, tags, hf_id, cohort, points FROM evals ORDER BY 1").fetchall()
    sources = con.execute("SELECT sources FROM points LIMIT 1").fetchone()[0]
    con.close()
    assert len(evals) == 2 and evals[0][2] == ["arch:moe", "size:large"] and json.loads(evals[0][3]) == {
        "arch": "moe", "size": "large"}
    assert evals[0][4] == ["leaderboard"] and evals[0][7] == 3
    assert len(sources) == 2 and all((db.parent / s).is_file() for s in sources)


def _table_dump(db):
    con = duckdb.connect(str(db), read_only=True)
    dump = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("points", "evals", "expected", "meta")}
    con.close()
    return dump


def test_idempotent_and_incremental(dataset, tmp_path):
    db = tmp_path / "data" / "pointsdb-r1.db"
    run_script("evaluate.py", "--dataset", dataset, "--parallel", "2", check=True)
    first, mtime = _table_dump(db), db.stat().st_mtime_ns
    second = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert "0 evals built, 2 unchanged" in second.stdout and "up to date" in second.stdout
    assert _table_dump(db) == first and db.stat().st_mtime_ns == mtime
    ids_b = {r[19] for r in db_points(db) if r[0] == "ModelB"}
    # a changed eval is rebuilt, the other one kept as is (ids included)
    rng = random.Random(5)
    write_run(tmp_path / "data/r1/ModelA/2026-01-03_00-00-00_r1_ModelA_zs_greedy",
              [make_record("ModelA", "zs", "greedy", "boolean", {"length": 9}, i, "correct", rng, step=5) for i in range(3)])
    third = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert "1 evals built, 1 unchanged" in third.stdout
    check_against_raw(db, all_ndjson(tmp_path / "data"))
    assert {r[19] for r in db_points(db) if r[0] == "ModelB"} == ids_b
    # a label-only edit updates metadata without rebuilding
    evals_path = tmp_path / "data/r1/ModelB/evals.json"
    entries = json.loads(evals_path.read_text())
    entries[0]["label"], entries[0]["groups"] = "renamed", ["arch:dense"]
    evals_path.write_text(json.dumps(entries))
    fourth = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert "0 evals built, 1 unchanged, 1 relabelled" in fourth.stdout
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT DISTINCT facets FROM points WHERE model='ModelB'").fetchall() == [('{"arch":"dense"}',)]
    assert con.execute("SELECT label FROM evals WHERE model='ModelB'").fetchone()[0] == "renamed"
    con.close()
    # removing a cohort from the dataset drops its eval
    write_dataset(tmp_path, ["ModelA"])
    fifth = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert "1 dropped" in fifth.stdout
    assert {r[0] for r in db_points(db)} == {"ModelA"}


def test_interview_and_dataset_modes_agree(dataset, tmp_path):
    run_script("evaluate.py", "--dataset", dataset, check=True)
    other = tmp_path / "interview.db"
    proc = run_script("evaluate.py", "--interview", f"{tmp_path}/data/r1/ModelA,{tmp_path}/data/r1/ModelB/*/*.ndjson",
                      "--db", other, "--parallel", "1", check=True)
    assert "2 evals built" in proc.stdout
    strip = lambda rows: [r[:19] for r in rows]
    assert strip(db_points(other)) == strip(db_points(tmp_path / "data" / "pointsdb-r1.db"))
    assert [r[19] for r in db_points(other)] == [r[19] for r in db_points(tmp_path / "data" / "pointsdb-r1.db")]


def test_truncated_and_malformed_lines_are_reported_and_skipped(dataset, tmp_path):
    victim = sorted((tmp_path / "data/r1/ModelA").rglob("*.ndjson"))[0]
    lines = victim.read_bytes().splitlines(keepends=True)
    with open(victim, "wb") as fh:
        fh.write(lines[0] + b"{not json}\n" + b'{"model": "ModelA"}\n' + b"".join(lines[1:]))
        fh.write(lines[1][: len(lines[1]) // 2])            # a crash mid-write: no newline
    proc = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert f"{victim}:2: malformed JSON" in proc.stderr
    assert f"{victim}:3: 'template' missing" in proc.stderr
    assert f"{victim}:{len(lines) + 3}: malformed JSON" in proc.stderr and "truncated last line" in proc.stderr
    assert "3 bad records skipped" in proc.stdout
    check_against_raw(tmp_path / "data" / "pointsdb-r1.db", all_ndjson(tmp_path / "data"))
    again = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert "up to date" in again.stdout


def test_records_contradicting_their_eval_are_reported(dataset, tmp_path):
    rng = random.Random(3)
    intruder = make_record("Imposter", "zs", "greedy", "arithmetic", {"length": 3}, 99, "correct", rng)
    victim = sorted((tmp_path / "data/r1/ModelA").rglob("*.ndjson"))[0]
    with open(victim, "a") as fh:
        fh.write(json.dumps(intruder) + "\n")
    proc = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert "record is Imposter|zs|greedy, not this eval's ModelA|zs|greedy" in proc.stderr
    assert "Imposter" not in {r[0] for r in db_points(tmp_path / "data" / "pointsdb-r1.db")}


def test_offline_refuses_a_record_without_a_target_instead_of_crashing(tmp_path):
    rng = random.Random(5)
    folder = tmp_path / "run"
    records = [make_record("M", "zs", "s", "arithmetic", {"length": 4}, i, "correct", rng) for i in range(3)]
    del records[1]["target"]
    write_run(folder, records)
    path = next(folder.glob("*.ndjson"))
    before = path.read_text()
    proc = run_script("evaluate.py", "--interview", path, "--offline", "--db", tmp_path / "a.db")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{path}:2: no target: the record cannot be re-graded" in proc.stderr
    proc = run_script("evaluate.py", "--interview", path, "--offline", "--inplace", "--db", tmp_path / "b.db")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert path.read_text().splitlines()[1] == before.splitlines()[1]     # copied through untouched


def test_offline_inplace_round_trip(tmp_path):
    rng = random.Random(11)
    folder = tmp_path / "run"
    records = [make_record("M", "zs", "s", "arithmetic", {"length": 4}, i, rng.choice(OUTCOMES), rng) for i in range(12)]
    for r in records:   # scramble the stored grades; --offline must recompute them from the answers
        r["is_correct"], r["is_valid"], r["is_truncated"] = (not r["is_correct"]), True, False
    write_run(folder, records)
    path = next(folder.glob("*.ndjson"))
    with open(path, "a") as fh:
        fh.write('{"broken": ')                               # kept verbatim by --inplace
    before = path.read_text()
    proc = run_script("evaluate.py", "--interview", path, "--offline", "--db", tmp_path / "a.db", check=True)
    assert path.read_text() == before                         # no --inplace: file untouched
    run_script("evaluate.py", "--interview", path, "--offline", "--inplace", "--quiet", check=True, cwd=tmp_path)
    assert (tmp_path / "pointsdb-interview.db").is_file()   # without --db: the default DB in the current directory
    after = path.read_text()
    assert after.endswith('{"broken": ')
    graded = [json.loads(line) for line in after.splitlines()[:-1]]
    for rec in graded:
        kind = "truncated" if rec["timings"]["finish_reason"] == "length" else None
        assert rec["is_truncated"] == (kind == "truncated")
        final = rec["answer"].split("Final Answer:")[-1].split()[0] if "Final Answer:" in rec["answer"] else None
        assert rec["is_correct"] == (final == rec["target"] and kind is None)
        # field order preserved; the reason (null unless invalid) and the grader's version added
        assert list(rec) == list(FIELDS) + ["invalid_reason", "grader_version"]
        assert rec["grader_version"] == GRADER_VERSION
    # the DB built with --offline equals the DB built from the re-graded file without --offline
    run_script("evaluate.py", "--interview", path, "--db", tmp_path / "b.db", check=True)
    assert [r[:19] for r in db_points(tmp_path / "a.db")] == [r[:19] for r in db_points(tmp_path / "b.db")]
    assert "1 bad records skipped" in proc.stdout


@pytest.mark.parametrize("args, needle", [
    (["--dataset", "x.json", "--interview", "y"], "not allowed with argument"),
    ([], "one of the arguments --dataset --interview is required"),
    (["--interview", "nothing-here/*.ndjson"], "matched no files"),
    (["--interview", "a.ndjson", "--inplace"], "--inplace requires --offline"),
    (["--dataset", "missing.json"], "dataset file not found"),
    (["--dataset", "x.json", "--offline", "--inplace"], "--inplace works with --interview only"),
    (["--interview", "a", "--parallel", "0"], "--parallel must be at least 1"),
])
def test_bad_command_lines(tmp_path, args, needle):
    proc = run_script("evaluate.py", *args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_malformed_evals_json_is_a_user_error(dataset, tmp_path):
    (tmp_path / "data/r1/ModelA/evals.json").write_text('[{"evaluate": {"glob": "*"}}]')
    proc = run_script("evaluate.py", "--dataset", dataset)
    assert proc.returncode == 2 and "evals.json[0]: missing required key 'filters'" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_glob_matching_nothing_warns_per_eval(dataset, tmp_path):
    cohort = tmp_path / "data/r1/ModelA"
    write_evals(cohort, "ModelA", samplers=("greedy", "hot"))
    proc = run_script("evaluate.py", "--dataset", dataset, check=True)
    hot = eval_id("ModelA", "zs", "hot")
    assert f"eval {hot} (ModelA hot): glob '*_ModelA_zs_hot/*' matched no NDJSON files; skipped" in proc.stderr


def test_reader_holding_db_open_is_not_blocked(dataset, tmp_path):
    db = tmp_path / "data" / "pointsdb-r1.db"
    run_script("evaluate.py", "--dataset", dataset, check=True)
    reader = duckdb.connect(str(db), read_only=True)
    before = reader.execute("SELECT count(*), sum(correct) FROM points").fetchone()
    rng = random.Random(8)
    write_run(tmp_path / "data/r1/ModelB/2026-01-05_00-00-00_r1_ModelB_zs_greedy",
              [make_record("ModelB", "zs", "greedy", "dates", {"length": 1}, i, "correct", rng, step=7) for i in range(4)])
    proc = run_script("evaluate.py", "--dataset", dataset)
    assert proc.returncode == 0, proc.stderr
    assert reader.execute("SELECT count(*), sum(correct) FROM points").fetchone() == before   # old snapshot
    reader.close()
    fresh = duckdb.connect(str(db), read_only=True)
    assert fresh.execute("SELECT count(*) FROM points").fetchone()[0] == before[0] + 1
    fresh.close()
    assert not [p for p in db.parent.iterdir() if ".tmp-" in p.name]


def test_one_scan_whatever_the_batching(dataset, tmp_path):
    # reasoning text, unanswered (runner --offline) records and blank lines; one worker (all files in
    # one batch) and two workers (several batches) give the same database, equal to the raw counts
    rng = random.Random(21)
    extra = [make_record("ModelA", "zs", "greedy", "cars", {"length": 2}, i, "correct", rng, step=9) for i in range(4)]
    extra[0]["reasoning"] = "thinking about it " * 30
    extra[1]["answer"], extra[1]["usage"] = None, None
    write_run(tmp_path / "data/r1/ModelA/2026-01-04_00-00-00_r1_ModelA_zs_greedy", extra)
    with open(next((tmp_path / "data/r1/ModelA/2026-01-04_00-00-00_r1_ModelA_zs_greedy").glob("*.ndjson")), "a") as fh:
        fh.write("\n\n")
    fast = tmp_path / "fast.db"
    slow = tmp_path / "slow.db"
    spec = f"{tmp_path}/data/r1"
    out_fast = run_script("evaluate.py", "--interview", spec, "--db", fast, "--parallel", "2", check=True)
    out_slow = run_script("evaluate.py", "--interview", spec, "--db", slow, "--parallel", "1", check=True)
    assert out_fast.stdout.replace("fast.db", "slow.db") == out_slow.stdout
    assert "1 unanswered records" in out_fast.stdout
    dump = lambda db: [r[:19] for r in db_points(db)]
    assert dump(fast) == dump(slow)
    check_against_raw(fast, all_ndjson(tmp_path / "data"))
    with_reasoning = [r for r in db_points(fast) if r[3] == "cars"][0]
    text = (extra[0]["reasoning"] + extra[0]["answer"]).encode()
    assert with_reasoning[16][0] == len(text) and with_reasoning[18] == [0, 2, 3]


def test_foreign_file_at_db_path_is_not_overwritten(dataset, tmp_path):
    db = tmp_path / "data" / "pointsdb-r1.db"
    db.write_bytes(b"not a database at all")
    proc = run_script("evaluate.py", "--dataset", dataset)
    assert proc.returncode == 2 and "not a readable PointsDB" in proc.stderr
    assert db.read_bytes() == b"not a database at all"


def test_older_schema_is_rebuilt_from_scratch(dataset, tmp_path):
    db = tmp_path / "data" / "pointsdb-r1.db"
    run_script("evaluate.py", "--dataset", dataset, check=True)
    first = _table_dump(db)
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    con.execute("UPDATE points SET correct = correct + 100")
    con.close()
    proc = run_script("evaluate.py", "--dataset", dataset, check=True)
    assert "2 evals built" in proc.stdout
    assert _table_dump(db) == first


def test_ctrl_c_during_a_rebuild_leaves_the_live_db_untouched(dataset, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    db = tmp_path / "data" / "pointsdb-r1.db"
    run_script("evaluate.py", "--dataset", dataset, check=True)
    before = _table_dump(db)
    rng = random.Random(4)
    run = tmp_path / "data/r1/ModelA/2026-01-09_00-00-00_r1_ModelA_zs_greedy"
    for step in range(40):                      # enough work that the rebuild is still running when interrupted
        recs = [make_record("ModelA", "zs", "greedy", "dates", {"length": step}, i, "incorrect", rng, step=step)
                for i in range(200)]
        for r in recs:
            r["answer"] += " ".join(str(rng.random()) for _ in range(300))
        write_run(run, recs)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parent.parent / "evaluate.py"), "--dataset",
                             str(dataset), "--parallel", "2", "--quiet"], stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    while proc.poll() is None and not list(db.parent.glob("pointsdb-r1.db.tmp-*")):
        time.sleep(0.005)
    if proc.poll() is not None:
        pytest.skip("the rebuild finished before it could be interrupted")
    os.killpg(proc.pid, signal.SIGINT)          # what Ctrl-C in a terminal does: the whole process group
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the rebuild finished before the interrupt arrived")
    assert proc.returncode == 130 and err.strip() == "evaluate.py: interrupted"
    assert _table_dump(db) == before
    assert not list(db.parent.glob("pointsdb-r1.db.tmp-*"))
    again = run_script("evaluate.py", "--dataset", dataset, check=True)    # and the next run completes the job
    assert "1 evals built" in again.stdout


def test_bad_records_are_reported_with_file_and_line_and_the_db_still_written(dataset, tmp_path):
    """Issue 16: type-confused records are skipped with file:line, never a traceback."""
    db = tmp_path / "data" / "pointsdb-r1.db"
    run_script("evaluate.py", "--dataset", dataset, check=True)
    before = db_points(db)
    victim = sorted((tmp_path / "data/r1/ModelA").rglob("*.ndjson"))[0]
    good = json.loads(victim.read_text().splitlines()[0])
    bad = [dict(good, key=good["key"].rsplit("-", 1)[0] + "-\u00b2"), dict(good, guess_chance="abc"),
           dict(good, is_correct="false"), dict(good, key=good["key"].rsplit("-", 1)[0] + "-4294967296"),
           dict(good, usage={"completion_tokens": 3000000000, "prompt_tokens": 1})]
    lines = [json.dumps(r, ensure_ascii=False) for r in bad]
    lines.append(json.dumps(good).replace('"completion_tokens": ', '"completion_tokens": 1e400, "x": '))
    n = len(victim.read_text().splitlines())
    with open(victim, "a") as fh:
        fh.write("\n".join(lines) + "\n")
    proc = run_script("evaluate.py", "--dataset", dataset, "--parallel", "2")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    for offset, needle in enumerate(["'key' must look like", "'guess_chance' must be a number",
                                     "'is_correct' must be true or false", "sample index in 'key' is above",
                                     "'usage.completion_tokens' must be an integer",
                                     "'usage.completion_tokens' must be an integer"]):
        assert f"{victim}:{n + 1 + offset}: {needle}" in proc.stderr, proc.stderr
    assert "6 bad records skipped" in proc.stdout
    assert db_points(db) == before          # the rest of the data is counted exactly as before


def test_task_versions_are_never_pooled(dataset, tmp_path):
    db = tmp_path / "data" / "pointsdb-r1.db"
    run_script("evaluate.py", "--dataset", dataset, check=True)
    ids_before = {r[19] for r in db_points(db)}
    rng = random.Random(9)
    newer = [dict(make_record("ModelA", "zs", "greedy", "arithmetic", {"length": 3}, i, "correct", rng),
                  task_version=2) for i in range(5)]
    write_run(tmp_path / "data/r1/ModelA/2026-01-07_00-00-00_r1_ModelA_zs_greedy", newer)
    run_script("evaluate.py", "--dataset", dataset, check=True)
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("""SELECT task_version, correct + incorrect + invalid + truncated, sample_index FROM points
                          WHERE model = 'ModelA' AND base_task = 'arithmetic' AND params = '{"length":3}'
                          ORDER BY task_version""").fetchall()
    versions = con.execute("SELECT task_versions FROM evals WHERE model = 'ModelA'").fetchone()[0]
    con.close()
    assert rows == [(1, 8, list(range(8))), (2, 5, list(range(5)))]          # two points, nothing pooled
    assert json.loads(versions) == {"arithmetic": [1, 2], "boolean": [1]}
    assert ids_before <= {r[19] for r in db_points(db)}                        # version-1 ids unchanged


def _outcome_name(rec):
    return "truncated" if rec["is_truncated"] else "correct" if rec["is_correct"] else (
        "invalid" if not rec["is_valid"] else "incorrect")


def test_dataset_offline_regrades_without_touching_files(dataset, tmp_path):
    from resolver.grading.answers import grade_record
    from resolver.tasks import task_of_record

    db = tmp_path / "data" / "pointsdb-r1.db"
    files = all_ndjson(tmp_path / "data")
    changed = {}
    for path in files:                       # scramble the stored verdicts of every other record
        recs = [json.loads(line) for line in path.read_text().splitlines()]
        for i, r in enumerate(recs):
            if i % 2 == 0:
                r["is_correct"], r["is_valid"], r["is_truncated"] = not r["is_correct"], True, False
            new = _outcome_name({**r, **grade_record(r, task_of_record(r))})
            tally = changed.setdefault(r["base_task"], [0, 0])
            tally[0] += 1
            tally[1] += new != _outcome_name(r)
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    stamps = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
    proc = run_script("evaluate.py", "--dataset", dataset, "--offline", "--parallel", "2", check=True)
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files} == stamps        # files untouched
    for task, (graded, moved) in changed.items():
        assert f"  {task}: {moved} of {graded} changed verdict" in proc.stdout, proc.stdout
    regraded_copy = tmp_path / "copy"        # the reference: the same files re-graded by hand
    for path in files:
        target = regraded_copy / path.relative_to(tmp_path / "data")
        target.parent.mkdir(parents=True, exist_ok=True)
        recs = [json.loads(line) for line in path.read_text().splitlines()]
        target.write_text("".join(json.dumps({**r, **grade_record(r, task_of_record(r))}) + "\n" for r in recs))
    check_against_raw(db, all_ndjson(regraded_copy))
    again = run_script("evaluate.py", "--dataset", dataset, "--offline", check=True)
    assert "up to date" in again.stdout
    plain = run_script("evaluate.py", "--dataset", dataset, check=True)          # stored verdicts again
    assert "2 evals built" in plain.stdout
    check_against_raw(db, files)


def test_the_ingest_path_imports_no_pandas(dataset, tmp_path):
    """Issue 19: checked the way the issue asks, with python -X importtime (main process and workers)."""
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.run([sys.executable, "-X", "importtime", str(Path(__file__).resolve().parent.parent / "evaluate.py"),
                           "--dataset", str(dataset), "--parallel", "2", "--quiet"], capture_output=True, text=True,
                          env=env, check=True)
    imported = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "duckdb" in imported and "pyarrow" in imported
    # pyarrow still *tries* `import pandas` (a failed attempt is listed too); nothing of pandas is loaded
    assert not {m for m in imported if m.split(".")[0] in ("pandas", "scipy", "matplotlib") and m != "pandas"}
