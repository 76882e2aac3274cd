"""`python -m resolver.demo`: runs resolver.sim.demo (docs/architecture.md).

Entry shim kept so the documented command keeps working; the code lives in resolver/sim/demo.py.
"""
import runpy

if __name__ == "__main__":
    runpy.run_module("resolver.sim.demo", run_name="__main__", alter_sys=True)
