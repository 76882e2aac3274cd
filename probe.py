#!/usr/bin/env python3
"""probe.py: deep inspection of raw traces -- prompt spectra, failures, repetition loops --
and the shortcut audit of a config's generators."""
from resolver.cli import probe, run_main

main = probe.main   # callable from tests: probe.main(argv)

if __name__ == "__main__":
    run_main(main)
