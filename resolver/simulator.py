"""`python -m resolver.simulator`: the simulated model server (docs/simulator.md); the command is resolver/cli/simulator.py,
run as `__main__` as every `python -m` command is (resolver/llamacpp/__main__.py too).
"""
import runpy

if __name__ == "__main__":
    runpy.run_module("resolver.cli.simulator", run_name="__main__", alter_sys=True)
