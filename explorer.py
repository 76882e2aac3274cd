#!/usr/bin/env python3
"""explorer.py: 3-D accuracy surfaces, linked panels and point inspection in the browser (default :8051)."""
from resolver.cli import run_main
from resolver.cli.explorer import main

if __name__ == "__main__":
    run_main(main)
