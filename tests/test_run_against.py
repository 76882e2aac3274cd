"""runner.py --against (resolver/run/against.py; docs/runner.md, "Stopping on the decision"):
B asks only A's problems, a cell stops on its decision, equivalence or A running out, and
analyze.py compare shows only anytime-valid verdicts for such a run. The end-to-end test
runs the real runner, simulator, evaluate.py and analyze.py as subprocesses."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import REPO, run_script, write_eval_entry

from resolver.records import iter_records
from resolver.run.against import PairedStop, Reference
from resolver.sim.simulator import start_simulator_process
from resolver.stats import PROCEDURE, PROCEDURES

TINY = REPO / "configs" / "tiny.yaml"
COMMON = ["--config", TINY, "--template", REPO / "templates" / "zerocot-nosys.json",
          "--sampler", REPO / "samplers" / "greedy-4k.json", "--precision", "medium", "--quiet"]


# ------------------------------------------------------------------ the round rule, no server

def _step(name: str, degree: int, task: str) -> Any:
    return SimpleNamespace(name=name, base_task=task, manifold={"degree": degree}, generator=task)


def _experiment(count: int, maxrounds: int) -> Any:
    return SimpleNamespace(precision=SimpleNamespace(count=count, maxrounds=maxrounds))


def _record(step: str, index: int, correct: bool) -> dict:
    return {"key": f"{step}-{index}", "input": f"{step}/{index}", "task_version": 1, "is_truncated": False,
            "is_correct": correct, "is_valid": True, "guess_chance": 0.0}


async def _drive(rule: PairedStop, steps: list, answer: Any) -> dict[str, int]:
    """Run each step's rounds as RunLoop does (a round of `count` records, then `more`)."""
    count = rule.count

    async def one(step: Any) -> int:
        tally, rounds = rule.tally(step), 0
        while True:
            for i in range(rounds * count, (rounds + 1) * count):
                tally.add(_record(step.name, i, answer(step.name, i)))
            rounds += 1
            await asyncio.sleep(0)
            if not await rule.more(step, tally, rounds):
                return rounds
    done = await asyncio.gather(*(one(s) for s in steps))
    return {s.name: r for s, r in zip(steps, done)}


def _reference(samples: dict[str, int], a_correct: Any) -> Reference:
    return Reference(Path("A"), "a", {name: {i: (0 if a_correct(name, i) else 1, 0.0, f"{name}/{i}", 1)
                                             for i in range(n)} for name, n in samples.items()})


def test_a_large_difference_stops_after_the_first_round_and_an_open_cell_runs_on() -> None:
    steps = [_step("s1", 0, "t"), _step("s2", 0, "t"), _step("u1", 1, "t")]
    ref = _reference({"s1": 256, "s2": 256, "u1": 256}, lambda name, i: False)
    rule = PairedStop(_experiment(64, 4), ref, steps, margin=0.05)
    # B right on every s-problem (A never is); on u1 B is right on every other one
    rounds = asyncio.run(_drive(rule, steps, lambda name, i: name.startswith("s") or i % 2 == 0))
    assert rounds == {"s1": 1, "s2": 1, "u1": 1}          # u1 also decided: +0.5 over 64 pairs
    report = rule.report()
    assert [c["stopped"] for c in report["cells"]] == ["decided", "decided", "overall"]
    assert report["cells"][0]["verdict"] == "b" and report["cells"][0]["pairs"] == 128


def test_equal_models_run_until_a_runs_out_and_the_cell_stays_open() -> None:
    steps = [_step("s1", 0, "t"), _step("s2", 0, "t")]
    # A has 3 rounds of s1 but only 2 of s2: s2 stops after round 2, s1 goes on alone
    ref = _reference({"s1": 96, "s2": 64}, lambda name, i: i % 3 == 0)
    rule = PairedStop(_experiment(32, 8), ref, steps, margin=0.05)
    rounds = asyncio.run(_drive(rule, steps, lambda name, i: i % 3 == 0))   # B answers exactly as A
    assert rounds == {"s1": 3, "s2": 2}
    cell = rule.report()["cells"][0]
    assert cell["stopped"] == "a_exhausted" and cell["verdict"] == "none" and cell["pairs"] == 160
    assert cell["low"] < 0 < cell["high"]


def test_steps_without_a_whole_first_round_of_a_are_left_out() -> None:
    steps = [_step("s1", 0, "t"), _step("s2", 0, "t")]
    ref = _reference({"s1": 32, "s2": 31}, lambda name, i: True)
    keep, left = PairedStop.runnable(steps, ref, 32)
    assert [s.name for s in keep] == ["s1"] and [s.name for s in left] == ["s2"]


def test_bad_against_options_exit_2(tmp_path: Path) -> None:
    base = [*COMMON, "--model", "sim-mid", "--output", tmp_path / "r", "--cache", tmp_path / "c"]
    cases = [
        ([*base, "--apibase", "http://127.0.0.1:9", "--against", tmp_path / "nowhere"], "no such run folder"),
        ([*base, "--apibase", "http://127.0.0.1:9", "--margin", "0.1"], "--margin goes with --against"),
        ([*base, "--mode", "write-batch", "--against", tmp_path], "--against works in api mode only"),
        ([*base, "--apibase", "http://127.0.0.1:9", "--against", tmp_path, "--margin", "2"], "--margin"),
    ]
    for args, words in cases:
        proc = run_script("runner.py", *args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ end to end on the simulator

def _samples(folder: Path) -> dict[tuple[str, str], str]:
    out = {}
    for file in folder.glob("*.ndjson"):
        for _, record, _ in iter_records(file):
            if record is not None:
                out[(record["task"], record["key"])] = record["input"]
    return out


@pytest.mark.slow
def test_against_end_to_end(tmp_path: Path) -> None:
    sim = start_simulator_process(str(TINY))
    try:
        url = f"http://127.0.0.1:{sim.port}"
        root = tmp_path / "data" / "ab"

        def run(model: str, *extra: object) -> Path:
            out = root / model
            proc = run_script("runner.py", *COMMON, "--model", model, "--apibase", url, "--output", out,
                              "--cache", tmp_path / "cache", *extra)
            assert proc.returncode == 0, proc.stderr
            return next(p for p in out.iterdir() if p.is_dir())

        a = run("sim-weak")
        b = run("sim-strong", "--against", a)
    finally:
        sim.stop()
    ours, theirs = _samples(b), _samples(a)
    assert ours and set(ours) <= set(theirs)                       # B asked only A's problems ...
    assert all(theirs[k] == text for k, text in ours.items())      # ... and the same ones
    marker = json.loads((b / "sequential.json").read_text())
    assert marker["mode"] == "C_P" and marker["unpaired"] == 0
    assert {c["stopped"] for c in marker["cells"]} <= {"decided", "equivalent", "a_exhausted", "maxrounds", "overall"}
    assert any(c["verdict"] == "b" for c in marker["cells"])       # sim-strong beats sim-weak somewhere

    for model in ("sim-weak", "sim-strong"):
        write_eval_entry(root / model, model, "zerocot-nosys", "greedy-4k", label=model, groups=["family:sim"])
    dataset = tmp_path / "data" / "ab.json"
    dataset.write_text(json.dumps({"name": "ab", "db": "ab.db", "config": str(TINY),
                                   "cohorts": [{"path": f"ab/{m}/evals.json"} for m in ("sim-weak", "sim-strong")]}))
    run_script("evaluate.py", "--dataset", dataset, "--quiet", check=True)
    evals = json.loads(run_script("analyze.py", "evals", dataset, "--format", "json", check=True).stdout)
    ids = {e["model"]: e["eval_id"] for e in evals}
    filters = json.dumps({"eval_id": [ids["sim-weak"], ids["sim-strong"]]})
    result = json.loads(run_script("analyze.py", "compare", dataset, "--filters", filters, "--format", "json",
                                   check=True).stdout)
    assert result["sequential"]["count"] == 8 and result["sequential"]["width_ratio"] > 1
    # compare recomputes the runner's verdicts from the PointsDB (tiny's guess chances are per point)
    by_cell = {(c["base_task"], c["degree"]): c["verdict"] for c in marker["cells"] if not c["overall"]}
    tiers = {"easy": 0, "medium": 1}
    for cell in result["cells"]:
        assert cell["anytime"][0] <= cell["anytime_diff"] <= cell["anytime"][1]
        assert cell["verdict"] == by_cell[(cell["group"], tiers[cell["tier"]])]
        assert cell["samples_needed"] is None and cell["unpaired_verdict"] == "none"
    text = run_script("analyze.py", "compare", dataset, "--filters", filters, check=True).stdout
    assert "stopped on the decision" in text and "Unpaired 95%" not in text and "more/point" not in text
    assert marker["procedure"] == PROCEDURE and result["sequential"]["method"] == PROCEDURES[PROCEDURE]

    # a sequential.json from before "procedure" existed is read with the procedure it stopped by ...
    path = b / "sequential.json"
    old = {k: v for k, v in marker.items() if k != "procedure"} | {"method": PROCEDURES["eb-mixture"]}
    path.write_text(json.dumps(old))
    older = json.loads(run_script("analyze.py", "compare", dataset, "--filters", filters, "--format", "json",
                                  check=True).stdout)
    assert older["sequential"]["method"] == PROCEDURES["eb-mixture"]
    assert older["cells"] != result["cells"]             # recomputed by the other procedure: other intervals
    # ... and one this version does not know is refused in one line
    path.write_text(json.dumps(marker | {"procedure": "eb-future"}))
    proc = run_script("analyze.py", "compare", dataset, "--filters", filters)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "eb-future" in lines[0] and "Traceback" not in proc.stderr
