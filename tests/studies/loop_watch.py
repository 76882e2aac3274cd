"""The streaming loop rule against real and simulated answers (docs/loops.md).

Counts the answers the rule would stop among answers that end by themselves (it must be
none), how close those come to the rule (the longest verbatim-periodic tail at any check),
and, on sim-loopy's loop answers, where each loop kind is stopped and whether
resolver/probe/loops.py calls the stopped text a loop. From the repository root:

    .venv/bin/python -m tests.studies.loop_watch [--config configs/r12.yaml] [--seeds 1]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
from collections import defaultdict
from pathlib import Path

from resolver.grading import LoopRule, MalformedReply, find_loop, split_message
from resolver.grading.loop_watch import longest_periodic_tail

REPO = Path(__file__).resolve().parents[2]
PROFILES = ("sim-strong", "sim-mid", "sim-weak", "sim-thinker", "sim-loopy")


def corpus_answers() -> dict[str, list[str]]:
    """The complete (finish_reason stop) answers of each grading-corpus file, reasoning included."""
    out = {}
    for path in sorted((REPO / "tests" / "grading_corpus").glob("*.jsonl")):
        texts = []
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("finish_reason") != "stop":
                continue
            try:
                content, reasoning = split_message(row.get("message"))
            except MalformedReply:     # the corpus holds malformed replies on purpose
                continue
            texts.append((reasoning or "") + (content or ""))
        out[path.name] = texts
    return out


def sim_problems(config: str):
    from resolver.sim.problems import ExperimentProblems
    return list(ExperimentProblems(str(REPO / config), precision="low").index.problems())


def sim_answers(profile_name: str, problems, max_tokens: int, seed: int):
    """(outcome, text) of each problem's answer by the profile (reasoning before content)."""
    from resolver.sim.profiles import PROFILES, compose_answer
    profile = PROFILES[profile_name]
    rng = random.Random(f"{profile_name}|{seed}|{max_tokens}")
    for problem in problems:
        answer = compose_answer(profile, problem, rng, max_tokens)
        yield answer.outcome, (answer.reasoning or "") + answer.content


def closeness(text: str, rule: LoopRule) -> tuple[int, int]:
    """(span, copies) of the longest verbatim-periodic tail (2+ copies) at any check of `text`."""
    best = (0, 0)
    for at in [*range(rule.check_every_chars, len(text), rule.check_every_chars), len(text)]:
        best = max(best, longest_periodic_tail(text, at, rule))
    return best


def no_false_stops(name: str, texts, rule: LoopRule) -> dict:
    stops, near = 0, (0, 0)
    lengths = []
    for text in texts:
        lengths.append(len(text))
        stops += find_loop(text, rule) is not None
        near = max(near, closeness(text, rule))
    return {"source": name, "answers": len(lengths), "stopped": stops, "max_chars": max(lengths, default=0),
            "longest_periodic_tail": near[0], "its_copies": near[1]}


def detection(profile: str, problems, max_tokens: int, seed: int, rule: LoopRule, probe: bool) -> dict:
    """One profile's answers: no stop among those that are not loops; per loop kind, how many
    are stopped, where (characters, share of the answer) and whether probe.py calls the
    stopped text a loop (`probe`: ask it)."""
    from resolver.probe.loops import detect_loop
    by_kind: dict[str, dict] = defaultdict(lambda: {"answers": 0, "stopped": 0, "at": [], "share": [],
                                                    "probe_loop": 0})
    healthy = []
    for outcome, text in sim_answers(profile, problems, max_tokens, seed):
        if not outcome.startswith("loop:"):
            healthy.append(text)
            continue
        row = by_kind[outcome[5:]]
        row["answers"] += 1
        found = find_loop(text, rule)
        if found is None:
            continue
        row["stopped"] += 1
        row["at"].append(found.at_chars)
        row["share"].append(found.at_chars / len(text))
        if probe:
            row["probe_loop"] += detect_loop(text[:found.at_chars]).classification is not None
    table = {kind: {"answers": r["answers"], "stopped": r["stopped"],
                    "probe_agrees": r["probe_loop"] if probe else None,
                    "median_at_chars": statistics.median(r["at"]) if r["at"] else None,
                    "max_at_chars": max(r["at"]) if r["at"] else None,
                    "median_share": round(statistics.median(r["share"]), 3) if r["share"] else None,
                    "max_share": round(max(r["share"]), 3) if r["share"] else None}
             for kind, r in sorted(by_kind.items())}
    name = f"{profile} seed {seed} max_tokens {max_tokens}"
    return {"source": name, "healthy": no_false_stops(f"{name} (no loop)", healthy, rule), "loops": table}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/r12.yaml")
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    rule = LoopRule()
    for name, texts in corpus_answers().items():
        print(json.dumps(no_false_stops(name, texts, rule)))
    problems = sim_problems(args.config)
    print(json.dumps({"config": args.config, "problems": len(problems)}))
    for seed in range(args.seeds):
        for max_tokens in (4096, 8192):
            for profile in PROFILES:
                print(json.dumps(detection(profile, problems, max_tokens, seed, rule, profile == "sim-loopy")),
                      flush=True)


if __name__ == "__main__":
    main()
