"""`python -m resolver.sim.agreement`: how alike simulated profiles (or a PointsDB's models) are,
problem by problem, as a markdown table (docs/simulator.md, "Hard for everyone").

The measurement is resolver/sim/agreement.py; this module is its flags and its table.
"""
from __future__ import annotations

from typing import Sequence

from resolver.cli.base import ArgParser, positive_int, run_main
from resolver.config import DEFAULT_SEED
from resolver.core import UserError


def main(argv: Sequence[str] | None = None) -> int:
    from resolver.sim import agreement
    from resolver.sim.profiles import PROFILES
    parser = ArgParser(prog="python -m resolver.sim.agreement", description=agreement.__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/tiny.yaml", help="experiment config (default configs/tiny.yaml)")
    parser.add_argument("--template", default="templates/zerocot-nosys.json", help="template the prompts use")
    parser.add_argument("--sampler", default="samplers/greedy-4k.json", help="sampler (its max_tokens applies)")
    parser.add_argument("--samples", type=positive_int, default=200, help="samples per point (default 200)")
    parser.add_argument("--profiles", default=",".join(PROFILES),
                        help="comma-separated profiles (default: all)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the runner's --seed (default {DEFAULT_SEED})")
    parser.add_argument("--pointsdb", metavar="FILE",
                        help="measure the evals of this PointsDB instead of simulating (other flags ignored)")
    args = parser.parse_args(argv)
    if args.pointsdb:
        print_table(agreement.agreement_table(agreement.collected_correctness(args.pointsdb)))
        return 0
    names = [n.strip() for n in args.profiles.split(",") if n.strip()]
    unknown = [n for n in names if n not in PROFILES]
    if unknown or len(names) < 2:
        raise UserError(f"--profiles {args.profiles!r}: give two or more of {', '.join(PROFILES)}")
    correct = agreement.simulated_correctness(args.config, args.template, args.sampler, names, args.samples, args.seed)
    print_table(agreement.agreement_table(correct))
    return 0


def print_table(rows: list[dict]) -> None:
    print("| A | B | problems | accuracy A | accuracy B | phi (all) | phi (within points) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['a']} | {row['b']} | {row['n']} | {row['accuracy_a']:.3f} | {row['accuracy_b']:.3f} "
              f"| {row['phi']:.2f} | {row['phi_within_points']:.2f} |")


if __name__ == "__main__":
    run_main(main)
