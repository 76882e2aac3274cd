#!/usr/bin/env python3
"""runner.py: generate an experiment's prompts and run them against a model.

    python runner.py --config configs/r12.yaml --template templates/zeroshot-nosys.json \\
        --sampler samplers/greedy-max.json --model your-model --apibase http://localhost:3333
    python runner.py ... --offline 1          # write the prompts only, no model
    python runner.py ... --mode write-batch   # requests for `vllm run-batch`
    python runner.py ... --mode read-batch --batch out.ndjson

Reference: docs/runner.md (flags) and docs/configs.md (configs, templates, samplers).
"""
from resolver.cli import run_main
from resolver.cli.runner import main

if __name__ == "__main__":
    run_main(main, fast_exit=True)
