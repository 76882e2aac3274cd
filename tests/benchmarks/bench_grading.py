"""Benchmark: re-grading stored runner records (what `evaluate.py --offline` does).

Records are real ones: the tiny config's prompts with long answers (a ~12K-character
<think> block, some prose, then a Final Answer line; a quarter are wrong, a tenth
have no marker). Baseline measured in the same run: only `json.loads` of the same
NDJSON lines -- the unavoidable cost of reading a stored record.
RATIO = (parse + grade) throughput / parse-only throughput (1.0 = grading is free).

    .venv/bin/python tests/benchmarks/bench_grading.py
"""
from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from resolver.grading.answers import grade_record  # noqa: E402
from resolver.run.experiment import RunOptions, blank_record, build_experiment, graded_record, messages_for  # noqa: E402
from resolver.tasks import task_of_record  # noqa: E402

ROUNDS = 50  # tiny: 14 steps x 4 samples x ROUNDS records
WORDS = "so the value of this part is then we add carry check again wait yes".split()


def _answer(rng: random.Random, target: str) -> str:
    think = " ".join(rng.choice(WORDS) for _ in range(2400))
    tail = rng.random()
    final = target if tail < 0.65 else ("(Z)" if tail < 0.9 else None)
    body = "Working through it step by step, the answer follows.\n\n"
    return f"<think>{think}</think>\n{body}" + (f"**Final Answer:** {final}" if final else "I am not sure.")


def _lines() -> list[str]:
    opts = RunOptions(config=str(ROOT / "configs/tiny.yaml"), template=str(ROOT / "templates/zerocot-nosys.json"),
                      sampler=str(ROOT / "samplers/greedy-4k.json"), model="bench", offline=1).checked()
    exp = build_experiment(opts)
    rng = random.Random(5)
    count = exp.precision.count * ROUNDS
    lines = []
    for step in exp.steps:
        for i, case in exp.cases(step, 0, count):
            blank = blank_record(exp, step, i, case, messages_for(exp, step, case), count)
            usage = {"prompt_tokens": 90, "completion_tokens": 3000, "total_tokens": 3090}
            rec = graded_record(blank, _answer(rng, case.target), None, usage, "stop")
            lines.append(json.dumps(rec))
    return lines


def _rate(fn, lines) -> float:
    start = time.perf_counter()
    for line in lines:
        fn(line)
    return len(lines) / (time.perf_counter() - start)


def _regrade(record: dict) -> dict:
    """What evaluate.py --offline does per record: find its task, grade it again."""
    return grade_record(record, task_of_record(record))


def main() -> None:
    lines = _lines()
    mb = sum(len(l) for l in lines) / 1e6
    parse = _rate(json.loads, lines)
    graded = _rate(lambda line: _regrade(json.loads(line)), lines)
    ratio = graded / parse
    result = {"records": len(lines), "megabytes": round(mb, 1), "parse_per_s": round(parse),
              "parse_and_grade_per_s": round(graded), "ratio": round(ratio, 3)}
    out = ROOT / "tests/benchmarks/out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "grading.json").write_text(json.dumps(result, indent=2))
    print(f"records: {len(lines)} ({mb:.1f} MB of NDJSON)")
    print(f"json.loads only:      {parse:,.0f} records/s")
    print(f"json.loads + grading: {graded:,.0f} records/s")
    print(f"RATIO grading/parse-only = {ratio:.2f}")


if __name__ == "__main__":
    main()
