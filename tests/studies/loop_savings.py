"""How many of sim-loopy's completion tokens the streaming loop rule saves, by token budget
(docs/loops.md, *Savings*).

Each first-round problem of the config is answered by the simulator's profile offline (the
simulator's own compose_answer and token count), and the rule is run over each answer as a
stream would feed it: a stopped answer costs the tokens up to the stop point instead of all
of them. The runner's own figure against the GPU-mode simulator at one budget is in
docs/performance.md (*GPU time*); this study gives the whole curve. From the repository root:

    .venv/bin/python -m tests.studies.loop_savings [--config configs/r12.yaml] [--profile sim-loopy]
"""
from __future__ import annotations

import argparse
import json

from resolver.grading import LoopRule, find_loop
from resolver.sim.profiles import count_tokens
from tests.studies.loop_watch import sim_answers, sim_problems

BUDGETS = (4096, 8192, 16384, 32768)


def savings(profile: str, problems, max_tokens: int, rule: LoopRule) -> dict:
    """Completion tokens of every answer, with and without stopping, and the loop answers' share."""
    total = kept = loop_tokens = stopped = loops = 0
    for outcome, text in sim_answers(profile, problems, max_tokens, 0):
        tokens = count_tokens(text)
        total += tokens
        if outcome.startswith("loop:"):
            loops += 1
            loop_tokens += tokens
        found = find_loop(text, rule)
        if found is None:
            kept += tokens
            continue
        stopped += 1
        kept += count_tokens(text[:found.at_chars])
    return {"profile": profile, "max_tokens": max_tokens, "answers": len(problems), "loop_answers": loops,
            "stopped": stopped, "tokens": total, "tokens_with_stop_loops": kept,
            "saved_share": round(1 - kept / total, 3), "loop_answers_token_share": round(loop_tokens / total, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/r12.yaml")
    parser.add_argument("--profile", default="sim-loopy")
    args = parser.parse_args()
    problems = sim_problems(args.config)
    for max_tokens in BUDGETS:
        print(json.dumps(savings(args.profile, problems, max_tokens, LoopRule())), flush=True)


if __name__ == "__main__":
    main()
