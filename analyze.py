#!/usr/bin/env python3
"""analyze.py: rank, cluster, chart and dissect the models in a dataset's PointsDB."""
from resolver.cli import analyze, run_main

main = analyze.main   # callable from tests: analyze.main(argv)

if __name__ == "__main__":
    run_main(main)
