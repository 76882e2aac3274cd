"""Atomic file writes: readers see the old file or the new one, never half of either."""
from __future__ import annotations

import os


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` to a temp file beside `path`, fsync it, then rename it over `path`."""
    import tempfile
    from pathlib import Path  # here, not above: every script's --help imports resolver.core (docs/performance.md)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)   # only still there when something failed
