"""`python -m resolver.simulator`: runs resolver.sim.simulator (docs/architecture.md).

Entry shim kept so the documented command keeps working; the code lives in resolver/sim/simulator.py.
"""
import runpy

if __name__ == "__main__":
    runpy.run_module("resolver.sim.simulator", run_name="__main__", alter_sys=True)
