"""The built-in simulated model server, its profiles and the simulated r12 study's cohorts
(docs/simulator.md; the commands that run them are in resolver/cli).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.sim.app import THINK_STYLES
    from resolver.sim.faults import parse_faults
    from resolver.sim.profiles import PROFILES
    from resolver.sim.r12study import missing_data_hint
    from resolver.sim.simulator import SimulatorServer, run_simulator, start_simulator_process

__all__ = [
    "agreement",
    "missing_data_hint",
    "parse_faults",
    "r12study",
    "run_simulator",
    "PROFILES",
    "SimulatorServer",
    "start_simulator_process",
    "THINK_STYLES",
]

_HOMES = {
    "PROFILES": "profiles",
    "THINK_STYLES": "app",
    "parse_faults": "faults",
    "run_simulator": "simulator",
    "SimulatorServer": "simulator",
    "missing_data_hint": "r12study",
    "start_simulator_process": "simulator",
}
_MODULES = {'agreement', 'r12study'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
