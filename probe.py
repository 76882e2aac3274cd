#!/usr/bin/env python3
"""probe.py: deep inspection of raw traces -- prompt spectra, failures, repetition loops --
and the shortcut audit of a config's generators."""
from resolver.cli import ArgParser, run_main


def main(argv=None):
    from resolver.probe import cli

    parser = ArgParser(prog="probe.py", description="Raw-trace forensics: probe.py <subcommand> <dataset> [options]. "
                                                    "Find point ids with: analyze.py points <dataset>. "
                                                    "Generator audit: probe.py shortcuts --config <config>")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    cli.register(sub)
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    run_main(main)
