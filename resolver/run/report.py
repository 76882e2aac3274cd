"""What a run shows while it works, handed in by the command layer (resolver/cli/runner.py).

The run code decides which lines are worth showing and when; a Reporter decides how. The
command layer's writes them on stderr above a tqdm progress bar. This default shows
nothing, so a run started from Python (tests, benchmarks) is silent.
"""
from __future__ import annotations

from types import TracebackType
from typing import Protocol


class Bar(Protocol):
    """What the run code uses of a progress bar: the part of tqdm's interface that
    NullBar implements (the attribute types are tqdm's, so a tqdm bar is one)."""

    total: float | int | None
    disable: bool | None

    def update(self, n: float | None = 1) -> bool | None: ...

    def refresh(self) -> None: ...

    def close(self) -> None: ...

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None: ...

    def __enter__(self) -> Bar: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None: ...


class NullBar:
    """A progress bar that shows nothing (the tqdm methods the run code calls)."""

    total: float | int | None = 0
    disable: bool | None = True

    def update(self, n: float | None = 1) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def __enter__(self) -> NullBar:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


class Reporter:
    """Shows a run's progress: `bar(**tqdm_arguments)` makes a progress bar, `note` writes a
    line above it (per-step results, failed requests), `warn` a line of its own (warnings,
    "stopping: ...")."""

    def bar(self, **kwargs) -> Bar:
        return NullBar()

    def note(self, line: str) -> None:
        pass

    def warn(self, line: str) -> None:
        pass
