"""What a run shows while it works, handed in by the command layer (resolver/cli/runner.py).

The run code decides which lines are worth showing and when; a Reporter decides how. The
command layer's writes them on stderr above a tqdm progress bar. This default shows
nothing, so a run started from Python (tests, benchmarks) is silent.
"""
from __future__ import annotations

from typing import Any

from resolver.core.progress import Bar, NullBar


class Reporter:
    """Shows a run's progress: `bar(**tqdm_arguments)` makes a progress bar, `note` writes a
    line above it (per-step results, failed requests), `warn` a line of its own (warnings,
    "stopping: ...")."""

    def bar(self, **kwargs: Any) -> Bar:
        return NullBar()

    def note(self, line: str) -> None:
        pass

    def warn(self, line: str) -> None:
        pass
