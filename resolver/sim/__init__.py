"""The built-in simulated model server, its profiles and the simulated r12 study's cohorts
(docs/simulator.md; the commands that run them are in resolver/cli).
"""
from __future__ import annotations

import importlib
from types import ModuleType

# `python -m resolver.r12sim` imports resolver.sim.r12study from a bare python3, before any requirement
# (lazy_loader too) is installed: this package's public names are its modules, each loaded
# when first asked for (`from resolver.sim.simulator import SimulatorServer`; docs/architecture.md).
__all__ = ["agreement", "app", "faults", "gpu", "gpuserve", "problems", "profiles", "r12study", "runbatch", "simulator"]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
