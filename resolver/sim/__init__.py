"""The built-in simulated model server, its profiles, the simulated r12 study and the
quick-start demo (docs/simulator.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.sim.profiles import PROFILES
    from resolver.sim.r12study import missing_data_hint
    from resolver.sim.simulator import SimulatorServer, start_simulator_process

__all__ = [
    "missing_data_hint",
    "PROFILES",
    "SimulatorServer",
    "start_simulator_process",
]

_HOMES = {
    "PROFILES": "profiles",
    "SimulatorServer": "simulator",
    "missing_data_hint": "r12study",
    "start_simulator_process": "simulator",
}
_MODULES = {}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
