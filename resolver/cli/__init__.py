"""The command layer: every script's flags, printed output, exit codes and output files.

One module per command (runner, evaluate, cohort, data, leaderboard, explorer, spiderweb,
the subpackages `analyze` and `probe` with a module per subcommand, and the `python -m`
commands demo, simulator, r12sim, llamacpp, agreement, theme_agreement), the
shared plumbing in `base` (one-line errors, exit 2 / 130) and the `reasonscape` dispatcher in
`commands`. It is the top layer: it may import every other package, and nothing in resolver/
imports it; the root scripts are a few lines that call a module's `main` through `run_main`, and
every `python -m` command runs its module as `__main__` (runpy; docs/architecture.md).
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from resolver.cli.base import EXIT_INTERRUPTED, EXIT_USAGE, ArgParser, positive_int, run_main

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "ArgParser",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "positive_int",
    "run_main",
    # the command modules, loaded on first use (PEP 562) so `import resolver.cli` stays cheap
    "agreement",
    "analyze",
    "cohort",
    "commands",
    "data",
    "demo",
    "evaluate",
    "explorer",
    "leaderboard",
    "llamacpp",
    "probe",
    "r12sim",
    "runner",
    "simulator",
    "spiderweb",
    "theme_agreement",
]
_COMMANDS = frozenset(__all__[5:])


def __getattr__(name: str) -> ModuleType:
    if name in _COMMANDS:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
