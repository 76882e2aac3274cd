"""Progress bars as the library sees them: the command layer hands a loop a tqdm-like
factory (`progress`), and with none the loop gets `NullBar`, which shows nothing
(docs/decisions.md, "One command layer"). Standard library only, like all of core.
"""
from __future__ import annotations

from types import TracebackType
from typing import Any, Callable, Protocol

__all__ = ["Bar", "NullBar", "open_bar"]


class Bar(Protocol):
    """What the library uses of a progress bar: the part of tqdm's interface that NullBar
    implements (the attribute types are tqdm's, so a tqdm bar is one)."""

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
    """A progress bar that shows nothing."""

    n = 0
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


def open_bar(progress: Callable[..., Any] | None, **kwargs: Any) -> Any:
    """A bar from `progress` (the factory a command hands in) with tqdm's arguments; no factory, no bar."""
    return progress(**kwargs) if progress is not None else NullBar()
