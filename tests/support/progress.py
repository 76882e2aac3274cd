"""A tqdm-like factory that records the bars the library asks for, for the tests that check
a progress factory handed in is used (and that nothing is shown without one)."""
from __future__ import annotations


class RecordedBar:
    """One bar: the arguments it was made with and how much it was advanced."""

    def __init__(self, iterable, kwargs: dict):
        self.iterable = iterable
        self.kwargs = kwargs
        self.counted = 0
        self.n = 0
        self.closed = False

    def __iter__(self):
        try:
            for item in self.iterable:
                yield item
                self.counted += 1
        finally:
            self.close()            # as tqdm does when the iteration ends

    def update(self, n: int = 1) -> None:
        self.counted += n

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> "RecordedBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class RecordingProgress:
    """Called as `progress(**tqdm_arguments)` (an iterable as `iterable=`); keeps every bar."""

    def __init__(self):
        self.bars: list[RecordedBar] = []

    def __call__(self, iterable=None, **kwargs) -> RecordedBar:
        bar = RecordedBar(iterable, kwargs)
        self.bars.append(bar)
        return bar

    def descs(self) -> list[str]:
        return [bar.kwargs.get("desc") for bar in self.bars]
