"""A hand-made dataset for the forensics and probe tests, built end to end.

Runner-format NDJSON run folders, evals.json, a config and data/forensics.json are
written here (not by the code under test); the real `evaluate.py --dataset` builds
the PointsDB. Two evals with designed traits:

* "Steady-7B": accuracy on tables falls with size as 1 / (1 + (rows / 40)^3), never
  truncates, answers with short varied reasoning;
* "Loopy-3B": the same curve with midpoint 20 rows; half of its failures are
  truncated, and each truncated answer ends in a designed loop (LOOP_KINDS cycle).

Tables prompts are CSV tables (a periodic token sequence: one row = ROW_CHARS
characters). genresult.operation is "sum" for samples 0-7 and "max" for 8-15; wrong
answers are assigned to "sum" first, so "sum" fails most.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import duckdb
import pytest
from conftest import evaluate_hand_dataset, write_eval_entry

from resolver.catalog.datasets import eval_id

CONFIG = textwrap.dedent("""\
    name: forensics
    precision:
      low: {count: 16, maxrounds: 1, target_margin: 0.2}
    tasks:
      - name: arithmetic
        label: Arithmetic
        generator: arithmetic
        mode: grid
        manifolds:
          - id: plain
            grid: {length: [4, 8, 16], max_depth: [1, 2]}
        views:
          - view: depth_length
            group_by: [params.max_depth, params.length]
          - view: length
            group_by: [params.length]
      - name: tables
        label: Tables
        generator: tables
        mode: grid
        manifolds:
          - id: csv
            grid: {num_rows: [10, 20, 40, 80, 160], format: csv}
        views:
          - view: rows
            group_by: [params.num_rows]
    """)

TEMPLATE, SAMPLER = "zerocot-nosys", "greedy-4k"
SAMPLES = 16
MIDPOINT = {"Steady-7B": 40.0, "Loopy-3B": 20.0}
ARITH_MIDPOINT = {"Steady-7B": 12.0, "Loopy-3B": 6.0}
SLOPE = 3.0
TABLE_SIZES = (10, 20, 40, 80, 160)
ROW_CHARS = 24
LOOP_KINDS = ("1-LOOP-STATIC", "1-LOOP-GROWING", "2-LOOP-STATIC", "DEGENERATE")
NAMES = ["alice", "bruno", "chen", "dara", "emeka", "farah", "goran", "hana", "ivo", "jun"]
CITIES = ["oslo", "lima", "kyiv", "rome", "pune", "lyon", "cork", "kobe"]


def model_eval_id(model: str) -> str:
    return eval_id(model, TEMPLATE, SAMPLER)


def correct_count(model: str, task: str, size: int) -> int:
    midpoint = (MIDPOINT if task == "tables" else ARITH_MIDPOINT)[model]
    return round(SAMPLES / (1 + (size / midpoint) ** SLOPE))


def tokens_of(text: str) -> int:
    """Completion tokens written into usage: the common four-characters-per-token rule."""
    return max(1, len(text) // 4)


def csv_table(rows: int, seed: int) -> str:
    lines = ["name,city,age,score"]
    for i in range(rows):
        line = f"{NAMES[(i + seed) % 10]},{CITIES[(i * 3 + seed) % 8]},{20 + (i * 7) % 60},{(i * 13 + seed) % 100}"
        lines.append(line.ljust(ROW_CHARS - 1, " "))
    return "\n".join(lines)


def loop_answer(kind: str, index: int) -> str:
    intro = ("I will read the table carefully and add the score column step by step.\n"
             "The first rows give small numbers, so the partial sums stay manageable.\n")
    if kind == "1-LOOP-STATIC":
        return intro + "Let me re-check the score column one more time to be sure.\n" * 120
    if kind == "1-LOOP-GROWING":
        return intro + "".join(f"Step {k}: verify the running total against the table again.\n" for k in range(120))
    if kind == "2-LOOP-STATIC":
        return intro + ("Maybe the total is wrong because I skipped a row.\n"
                        "No, every row was counted, so the total should be right.\n") * 60
    return intro + "The total is " + "0" * 3000


def healthy_answer(target: str, rows: int, correct: bool) -> str:
    final = target if correct else str(int(target) + 7)
    return (f"The table has {rows} rows. I add the score column in blocks of ten rows.\n"
            "After each block I write the partial sum and check it against the previous one.\n"
            f"Adding the blocks gives the total, which I compare with a rough estimate.\n"
            f"Final Answer: {final}")


def _outcomes(model: str, task: str, size: int) -> list[str]:
    good = correct_count(model, task, size)
    kinds = ["correct"] * good
    for i in range(SAMPLES - good):
        truncated = model == "Loopy-3B" and i % 2 == 0
        kinds.append("truncated" if truncated else "incorrect")
    # failures first to the "sum" samples (0-7): put correct ones last
    return kinds[::-1]


def _record(model, step, task, manifold, params, index, kind, prompt, target, genresult, loop_kind):
    name = f"{step:03d}_{task}_" + "_".join(f"{k}-{v}" for k, v in sorted(params.items()))
    size = params.get("num_rows", params.get("length"))
    if kind == "truncated":
        answer = loop_answer(loop_kind, index)
    else:
        answer = healthy_answer(target, size, kind == "correct")
    extracted = None if kind == "truncated" else answer.rsplit("Final Answer: ", 1)[-1]
    return {
        "task": name, "version": 1, "base_task": task, "key": f"{name}-{index}", "input": prompt,
        "target": target, "response_enum": None, "genresult": genresult,
        "messages": [{"role": "user", "content": "Answer with Final Answer: <integer>\n" + prompt}],
        "answer": answer,
        "usage": {"completion_tokens": tokens_of(answer), "prompt_tokens": tokens_of(prompt),
                  "total_tokens": tokens_of(answer) + tokens_of(prompt)},
        "timings": {"termination_reason": None, "finish_reason": "length" if kind == "truncated" else "stop"},
        "step": step, "params": dict(params, count=SAMPLES), "model": model, "template": TEMPLATE,
        "sampler": SAMPLER, "guess_chance": 0.0, "normalized_answer": extracted, "extracted_answer": extracted,
        "is_valid": kind != "truncated", "is_correct": kind == "correct", "is_truncated": kind == "truncated",
        "manifold": manifold,
    }


def steps():
    """(base_task, manifold, params, size) for every point, in step order."""
    out = []
    for depth in (1, 2):
        for length in (4, 8, 16):
            out.append(("arithmetic", {"id": "plain"}, {"length": length, "max_depth": depth}, length * depth))
    for rows in TABLE_SIZES:
        out.append(("tables", {"id": "csv", "target_tokens": rows * ROW_CHARS // 4},
                    {"num_rows": rows, "format": "csv"}, rows))
    return out


def write_cohort(data_dir: Path, model: str) -> None:
    cohort = data_dir / "forensics" / model
    run = cohort / f"2026-01-01_00-00-00_forensics_{model}_{TEMPLATE}_{SAMPLER}"
    run.mkdir(parents=True)
    loop_counter = 0
    for step, (task, manifold, params, size) in enumerate(steps()):
        lines = []
        for index, kind in enumerate(_outcomes(model, task, size)):
            if task == "tables":
                prompt = csv_table(params["num_rows"], index)
            else:
                prompt = "Evaluate: " + " + ".join(str((index + j) % 9 + 1) for j in range(params["length"]))
            genresult = {"operation": "sum" if index < 8 else "max", "columns": ["age", "score"]}
            loop_kind = LOOP_KINDS[loop_counter % len(LOOP_KINDS)]
            if kind == "truncated":
                loop_counter += 1
            lines.append(json.dumps(_record(model, step, task, manifold, params, index, kind, prompt,
                                            str(100 + index), genresult, loop_kind)))
        name = json.loads(lines[0])["task"]
        (run / f"{name}.ndjson").write_text("\n".join(lines) + "\n")
    write_eval_entry(cohort, model, TEMPLATE, SAMPLER, label=model,
                     groups=["arch:dense", f"size:{'small' if '3B' in model else 'mid'}"])


def build_forensics_dataset(root: Path) -> Path:
    """Write cohorts, config and data/forensics.json under root and run the real evaluate.py."""
    for model in MIDPOINT:
        write_cohort(root / "data", model)
    dataset = evaluate_hand_dataset(root, "forensics", CONFIG, MIDPOINT)
    return dataset


@pytest.fixture(scope="session")
def forensics_dataset(tmp_path_factory) -> Path:
    return build_forensics_dataset(tmp_path_factory.mktemp("forensics"))


def point_id_of(dataset: Path, model: str, task: str, **params) -> int:
    con = duckdb.connect(str(dataset.parent / "forensics.db"), read_only=True)
    try:
        rows = con.execute("SELECT id, params FROM points WHERE model = ? AND base_task = ?", [model, task]).fetchall()
    finally:
        con.close()
    for pid, text in rows:
        if all(json.loads(text).get(k) == v for k, v in params.items()):
            return int(pid)
    raise AssertionError(f"no point {model} {task} {params}")


def test_fixture_db_has_the_designed_points(forensics_dataset):
    con = duckdb.connect(str(forensics_dataset.parent / "forensics.db"), read_only=True)
    rows = con.execute("SELECT model, sum(correct), sum(truncated), count(*) FROM points "
                       "WHERE base_task = 'tables' GROUP BY model ORDER BY model").fetchall()
    con.close()
    expected = []
    for model in sorted(MIDPOINT):
        correct = sum(correct_count(model, "tables", s) for s in TABLE_SIZES)
        failures = [SAMPLES - correct_count(model, "tables", s) for s in TABLE_SIZES]
        truncated = sum((f + 1) // 2 for f in failures) if model == "Loopy-3B" else 0
        expected.append((model, correct, truncated, len(TABLE_SIZES)))
    assert [tuple(r) for r in rows] == expected
