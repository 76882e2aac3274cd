"""analyze.py's command layer: the argument parser, one module per subcommand (or per small
family of them), and the shared flags and output writers; the computations live in
resolver.analysis and the figures in resolver.plots (docs/analyze.md)."""
from __future__ import annotations

from typing import Sequence

from resolver.cli.analyze import flags, output, shared
from resolver.cli.base import ArgParser

__all__ = ["build_parser", "flags", "main", "output", "shared"]


def build_parser() -> ArgParser:
    """analyze.py's parser; the subcommands appear in --help in this order."""
    # Subcommand modules load here, not at import, so `import resolver.cli.analyze` stays cheap.
    from resolver.cli.analyze import (
        capacity,
        clusters,
        compare,
        compression,
        hazard,
        listing,
        modelinfo,
        pairwise,
        scores,
        spiderweb,
        surface,
    )

    parser = ArgParser(prog="analyze.py", description="Unified analysis CLI: analyze.py <subcommand> <dataset> [options]")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    for register in (listing.register_evals, listing.register_tasks, listing.register_tokens, listing.register_points,
                     modelinfo.register_modelinfo, scores.register_scores, clusters.register_cluster,
                     clusters.register_rank, pairwise.register_pairwise, clusters.register_aggregate,
                     spiderweb.register_spiderweb, surface.register_surface, compression.register_compression,
                     hazard.register_hazard, capacity.register_capacity, compare.register_compare):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse argv, run the chosen subcommand's handler and return its exit code."""
    args = build_parser().parse_args(argv)
    return args.handler(args)
