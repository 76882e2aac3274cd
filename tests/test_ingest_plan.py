"""evaluate's build plan (resolver/ingest/bookkeeping.py): what a dataset run will do, item by item.

The plan is checked against facts the test sets up itself: which cohorts it wrote,
their files and sizes (os.stat), the labels it gave, the counts in the PointsDB's own
evals table; the DB is built in-process with one worker.
"""
import json
import os

import duckdb
from conftest import write_eval_entry

from resolver.catalog import load_dataset
from resolver.ingest import evaluate_dataset
from resolver.ingest.bookkeeping import Build, NoFiles, Relabel, plan_dataset

RECORD = {"base_task": "arithmetic", "params": {"length": 3, "count": 2}, "template": "zs", "sampler": "greedy",
          "answer": "Final Answer: 4", "usage": {"completion_tokens": 7, "prompt_tokens": 3},
          "is_valid": True, "is_correct": True, "is_truncated": False, "guess_chance": 0.0}


def _write_run(root, model: str, samples: int) -> list:
    folder = root / "data" / "p" / model / f"2026-01-01_00-00-00_p_{model}_zs_greedy"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "000_arithmetic_length-3.ndjson"
    path.write_text("".join(json.dumps(dict(RECORD, model=model, key=f"000_arithmetic_length-3-{i}")) + "\n"
                            for i in range(samples)))
    return [str(path)]


def _dataset(root, models) -> os.PathLike:
    path = root / "data" / "p.json"
    path.write_text(json.dumps({"name": "p", "db": "p.db", "cache": ".cache",
                                "cohorts": [{"path": f"p/{m}/evals.json"} for m in models]}))
    return path


def _cohort(root, model: str, label: str, groups=("arch:dense",)) -> None:
    write_eval_entry(root / "data" / "p" / model, model, "zs", "greedy", label=label, groups=groups)


def test_plan_items_follow_the_dataset_and_the_db(tmp_path):
    files = {m: _write_run(tmp_path, m, n) for m, n in (("ma", 2), ("mb", 3), ("mc", 1))}
    for model in files:
        _cohort(tmp_path, model, f"{model} label")
    path = _dataset(tmp_path, ["ma", "mb", "mc"])

    first = plan_dataset(load_dataset(path))       # no DB yet: build everything
    assert not first.reuse and first.meta is not None and first.touches_db()
    assert [type(b) for b in first.build] == [Build] * 3
    assert [(b.spec.model, b.files, b.sizes) for b in first.build] == [
        (m, files[m], [os.stat(f).st_size for f in files[m]]) for m in ("ma", "mb", "mc")]
    assert [b.row["label"] for b in first.build] == ["ma label", "mb label", "mc label"]
    assert len({b.row["fingerprint"] for b in first.build}) == 3
    evaluate_dataset(path, parallel=1, quiet=True)

    again = plan_dataset(load_dataset(path))       # built: nothing to do
    assert not again.touches_db() and again.reuse
    assert [s.model for s in again.unchanged] == ["ma", "mb", "mc"]

    # mb relabelled, mc's files gone (kept in the DB, with a new label too), ma's file grown
    _cohort(tmp_path, "mb", "renamed", groups=("arch:moe",))
    _cohort(tmp_path, "mc", "gone")
    os.remove(files["mc"][0])
    with open(files["ma"][0], "a") as fh:
        fh.write(json.dumps(dict(RECORD, model="ma", key="000_arithmetic_length-3-9")) + "\n")
    con = duckdb.connect(str(tmp_path / "data" / "p.db"), read_only=True)
    stored = {r[0]: r[1:] for r in con.execute("SELECT model, fingerprint, samples, points FROM evals").fetchall()}
    con.close()
    plan = plan_dataset(load_dataset(path))
    assert [b.spec.model for b in plan.build] == ["ma"]
    assert plan.build[0].row["fingerprint"] != stored["ma"][0]
    assert plan.no_files == [NoFiles(plan.no_files[0].spec, True)] and plan.no_files[0].spec.model == "mc"
    assert all(type(r) is Relabel for r in plan.relabel)
    relabelled = {r.spec.model: r for r in plan.relabel}
    assert set(relabelled) == {"mb", "mc"}
    mb = relabelled["mb"]
    assert (mb.row["label"], mb.row["fingerprint"], mb.row["samples"], mb.row["points"]) == ("renamed", *stored["mb"])
    assert mb.groups == ("arch:moe",) and json.loads(mb.facets_json) == {"arch": "moe"}
    assert plan.meta is None and plan.drop == []

    # cohorts left out of the dataset are dropped
    evaluate_dataset(path, parallel=1, quiet=True)
    con = duckdb.connect(str(tmp_path / "data" / "p.db"), read_only=True)
    others = sorted(r[0] for r in con.execute("SELECT eval_id FROM evals WHERE model <> 'ma'").fetchall())
    con.close()
    dropped = plan_dataset(load_dataset(_dataset(tmp_path, ["ma"])))
    assert len(others) == 2 and dropped.drop == others
    assert dropped.build == [] and dropped.relabel == [] and [s.model for s in dropped.unchanged] == ["ma"]
