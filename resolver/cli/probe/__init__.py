"""probe.py's command layer: the argument parser and one module per subcommand (fft,
failure, truncation, shortcuts); the computations live in resolver.probe and
resolver.audit, the figures in resolver.plots (docs/analyze.md)."""
from __future__ import annotations

from typing import Sequence

from resolver.cli.base import ArgParser
from resolver.cli.probe import options

__all__ = ["build_parser", "main", "options"]


def build_parser() -> ArgParser:
    """probe.py's parser; the subcommands appear in --help in this order."""
    from resolver.cli.probe import failure, fft, shortcuts, truncation

    parser = ArgParser(prog="probe.py", description="Raw-trace forensics: probe.py <subcommand> <dataset> [options]. "
                                                    "Find point ids with: analyze.py points <dataset>. "
                                                    "Generator audit: probe.py shortcuts --config <config>")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    for register in (fft.register_fft, failure.register_failure, truncation.register_truncation,
                     shortcuts.register_shortcuts):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse argv, run the chosen subcommand's handler and return its exit code."""
    args = build_parser().parse_args(argv)
    return args.handler(args)
