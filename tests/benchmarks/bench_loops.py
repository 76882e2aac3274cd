"""Benchmark: the loop detector over 16K-token answers (answers/s).

Baseline measured in the same run: only tokenising the same answers with the
detector's fallback regex tokenizer -- the unavoidable first pass over the text.
RATIO = detector throughput / tokenise-only throughput (1.0 would mean the loop
analysis itself is free).

    .venv/bin/python tests/benchmarks/bench_loops.py
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchlib import write_result  # noqa: E402

from resolver.probe import loops as loops  # noqa: E402

TARGET_TOKENS = 16_000
WORDS = ("the table row value column total answer check count step option clue number "
         "first second third maybe wait so therefore because compute verify sum list").split()


def _healthy(rng: random.Random, tokens: int) -> str:
    lines, n = [], 0
    while n < tokens:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))) + f" {rng.randint(1, 999)}.\n"
        lines.append(line)
        n += len(loops._TOKEN_RE.findall(line))
    return "".join(lines)


def _fill(head: str, make_line, tokens: int) -> str:
    """Append make_line(k) for k = 0, 1, ... until the text holds `tokens` tokens."""
    parts, n, k = [head], len(loops._TOKEN_RE.findall(head)), 0
    while n < tokens:
        line = make_line(k)
        parts.append(line)
        n += len(loops._TOKEN_RE.findall(line))
        k += 1
    return "".join(parts)


def _answers(count: int) -> list[str]:
    """A quarter each: healthy, static loop, counter loop, character collapse."""
    rng = random.Random(7)
    out = []
    for i in range(count):
        head = _healthy(rng, TARGET_TOKENS // 3)
        kind = i % 4
        if kind == 0:
            out.append(_healthy(rng, TARGET_TOKENS))
        elif kind == 1:
            out.append(_fill(head, lambda k: "Let me re-check the second column once more.\n", TARGET_TOKENS))
        elif kind == 2:
            out.append(_fill(head, lambda k: f"Step {k}: check the remaining candidates again.\n", TARGET_TOKENS))
        else:
            out.append(_fill(head, lambda k: "!" * 100, TARGET_TOKENS))
    return out


def _rate(fn, answers) -> float:
    start = time.perf_counter()
    for text in answers:
        fn(text)
    return len(answers) / (time.perf_counter() - start)


def main() -> None:
    answers = _answers(40)
    mean_tokens = sum(len(loops._TOKEN_RE.findall(a)) for a in answers) / len(answers)
    baseline = _rate(lambda t: len(loops._TOKEN_RE.findall(t)), answers)
    detector = _rate(loops.detect_loop, answers)
    ratio = detector / baseline
    result = {"answers": len(answers), "mean_tokens": round(mean_tokens),
              "detector_answers_per_s": detector, "tokenise_only_answers_per_s": baseline,
              "ratio": ratio}
    write_result("loops", result)
    print(f"answers: {len(answers)} of ~{mean_tokens:.0f} tokens")
    print(f"tokenise only: {baseline:.1f} answers/s")
    print(f"loop detector: {detector:.1f} answers/s")
    print(f"RATIO detector/tokenise-only = {ratio:.3f}")


if __name__ == "__main__":
    main()
