"""Build real_smollm2.jsonl: real SmolLM2-135M-Instruct answers with a blind reader's labels.

    python tests/grading_corpus/real_build.py RECORDS.json LABELS.jsonl [LABELS.jsonl ...]

RECORDS.json holds `[{"id": ..., "record": <runner record>}]` from a real run (r12 at
`--density corner`, zerocot-nosys, max_tokens 160, llama.cpp's server on the CPU);
each LABELS file holds the reader's `{"id", "label", "reason", "answer_read", "note"}`.
The reader saw the prompt, the options, the target and the reply, never a grader
verdict (docs/grading.md, "Real answers"). ADJUDICATED lists the labels changed after
comparison, each with why; every other label is the reader's own.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# id -> (label, reason, why). Both are places where the reader's brief (written for this
# labelling, not the grading doc) departed from the documented policy, docs/grading.md.
ADJUDICATED = {
    # the brief called a list with missing items unreadable; the policy (Lists) calls it wrong
    "s0387": ("wrong", None, "brief contradicted the documented policy: a list missing items is wrong"),
    # the brief's marker list left out "will be"; the policy lists "The final answer will be"
    "s0135": ("wrong", None, "brief omitted the documented marker 'The final answer will be'; 0 is wrong"),
}
CASE_FIELDS = ("base_task", "input", "target", "response_enum", "params")


def build(records_path: Path, label_paths: list[Path]) -> list[dict]:
    records = {item["id"]: item["record"] for item in json.loads(records_path.read_text())}
    rows = []
    for path in label_paths:
        for line in path.read_text().splitlines():
            label = json.loads(line)
            record = records[label["id"]]
            verdict, reason, why = ADJUDICATED.get(label["id"], (label["label"], label.get("reason"), ""))
            rows.append({
                "id": label["id"],
                "case": {field: record.get(field) for field in CASE_FIELDS},
                "message": {"content": record["answer"]},
                "finish_reason": record["timings"]["finish_reason"],
                "label": verdict,
                "reason": reason if verdict == "invalid" else None,
                "why": why or label.get("note") or "",
            })
    return sorted(rows, key=lambda row: row["id"])


if __name__ == "__main__":
    rows = build(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
    with open(HERE / "real_smollm2.jsonl", "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} labelled answers -> real_smollm2.jsonl")
