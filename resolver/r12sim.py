"""`python -m resolver.r12sim`: the simulated r12 study (docs/simulator.md); the command is resolver/cli/r12sim.py,
run as `__main__` as every `python -m` command is (resolver/llamacpp/__main__.py too).
"""
import runpy

if __name__ == "__main__":
    runpy.run_module("resolver.cli.r12sim", run_name="__main__", alter_sys=True)
