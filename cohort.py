#!/usr/bin/env python3
"""cohort.py: list, verify and post-process cohorts (data/<set>/<Model>/ + evals.json).

    python cohort.py list                         # every cohort under data/
    python cohort.py list data/r12/Qwen3-32B      # one cohort (a glob works too)
    python cohort.py list --search qwen           # regex over path, model, label, hf_id, groups
    python cohort.py info data/r12/Qwen3-32B      # the same with every run folder
    python cohort.py verify [path]                # problems with file:line; exit 1 when any
    python cohort.py context data/r12/Model --eval-id a1b2c3 --context 12288
"""
from resolver.cli import run_main
from resolver.cli.cohort import main

if __name__ == "__main__":
    run_main(main)
