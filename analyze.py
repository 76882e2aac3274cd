#!/usr/bin/env python3
"""analyze.py: rank, cluster, chart and dissect the models in a dataset's PointsDB."""
from resolver.cli import ArgParser, run_main


def main(argv=None):
    from resolver.analysis import compare_cli, forensics_cli, position_cli

    parser = ArgParser(prog="analyze.py", description="Unified analysis CLI: analyze.py <subcommand> <dataset> [options]")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    position_cli.register(sub)
    forensics_cli.register(sub)
    compare_cli.register(sub)
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    run_main(main)
