#!/usr/bin/env python3
"""spiderweb.py: per-eval radar / bar profiles with archetypes in the browser (default :8051)."""
from resolver.cli import run_main
from resolver.cli.spiderweb import main

if __name__ == "__main__":
    run_main(main)
