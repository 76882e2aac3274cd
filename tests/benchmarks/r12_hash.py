"""Hash every generated problem of configs/r12.yaml: the proof that a faster generator changed none.

    .venv/bin/python tests/benchmarks/r12_hash.py [--repo PATH] [--samples 64] [--tasks movies,tables]

Expands `configs/r12.yaml` of the tree at `--repo` (default: this one) at normal density,
draws `--samples` cases per point with that tree's generators and seeds (63,040 at 64), and
hashes every field of every case (input, target, response_enum, guess_chance, genresult;
JSON with sorted keys, one line per case, in step order) and, apart, every rendered prompt
(zerocot-nosys). Run it on the tree before a change and after: equal hashes mean the same
problems, so no task version moves (docs/decisions.md, issue 38). Prints one hash per
task, the generators' versions, and last the two overall hashes.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--tasks", default="", help="comma-separated config task names (default: all)")
    args = parser.parse_args()
    repo = args.repo.resolve()
    sys.path.insert(0, str(repo))
    from resolver.config.loader import expand_steps, load_config
    from resolver.config.prompts import load_template, render_messages
    from resolver.tasks import get_task

    only = {t for t in args.tasks.split(",") if t}
    template = load_template(repo / "templates" / "zerocot-nosys.json")
    cases, prompts = hashlib.sha256(), hashlib.sha256()
    per_task: dict[str, hashlib._Hash] = {}
    versions: dict[str, int] = {}
    count, cpu = 0, time.process_time()
    for step in expand_steps(load_config(repo / "configs" / "r12.yaml")):
        if only and step.base_task not in only:
            continue
        task = get_task(step.generator)
        versions[step.generator] = task.version
        mine = per_task.setdefault(step.base_task, hashlib.sha256())
        for case in task.generate_cases(step.gen_params, random.Random(step.seed), args.samples):
            line = json.dumps(dataclasses.asdict(case), sort_keys=True).encode() + b"\n"
            cases.update(line)
            mine.update(line)
            prompts.update(json.dumps(render_messages(template, task, step.gen_params, case)).encode() + b"\n")
            count += 1
    for name, digest in sorted(per_task.items()):
        print(f"  {name:<11} {digest.hexdigest()[:16]}")
    print(f"versions {json.dumps(versions, sort_keys=True)}")
    print(f"{count} cases in {time.process_time() - cpu:.1f} s CPU")
    print(f"prompts sha256 {prompts.hexdigest()}")
    print(f"cases sha256 {cases.hexdigest()}")


if __name__ == "__main__":
    main()
