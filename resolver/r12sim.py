"""`python -m resolver.r12sim`: runs resolver.sim.r12study (docs/architecture.md).

Entry shim kept so the documented command keeps working; the code lives in resolver/sim/r12study.py.
"""
import runpy

if __name__ == "__main__":
    runpy.run_module("resolver.sim.r12study", run_name="__main__", alter_sys=True)
