#!/usr/bin/env python3
"""evaluate.py: turn runner NDJSON into a PointsDB (see docs/evaluate.md)."""
from resolver.cli import run_main
from resolver.cli.evaluate import main

if __name__ == "__main__":
    run_main(main, fast_exit=True)
