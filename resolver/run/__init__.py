"""runner.py's work: the experiment and its records, API mode (adaptive rounds),
batch mode (vLLM run-batch files) and offline mode; what a run shows goes through the
Reporter the command hands in (resolver/cli/runner.py).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.run.api_runner import run_api
    from resolver.run.batch import import_batch, read_batch, replay_batch, run_write_batch
    from resolver.run.experiment import RunOptions, build_experiment, cases_for, messages_for, request_for
    from resolver.run.offline import run_offline
    from resolver.run.report import NullBar, Reporter

__all__ = [
    "build_experiment",
    "cases_for",
    "import_batch",
    "messages_for",
    "request_for",
    "run_api",
    "run_offline",
    "NullBar",
    "read_batch",
    "replay_batch",
    "Reporter",
    "run_write_batch",
    "RunOptions",
]

_HOMES = {
    "RunOptions": "experiment",
    "build_experiment": "experiment",
    "cases_for": "experiment",
    "messages_for": "experiment",
    "request_for": "experiment",
    "run_api": "api_runner",
    "run_offline": "offline",
    "import_batch": "batch",
    "read_batch": "batch",
    "replay_batch": "batch",
    "NullBar": "report",
    "Reporter": "report",
    "run_write_batch": "batch",
}
_MODULES = {}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
