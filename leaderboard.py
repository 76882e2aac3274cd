#!/usr/bin/env python3
"""leaderboard.py: browse ReasonScore rankings of a dataset in the browser (default :8050)."""
from resolver.cli import run_main
from resolver.cli.leaderboard import main

if __name__ == "__main__":
    run_main(main)
