"""probe.py fft's on-disk cache of point spectra, in the dataset's `cache` directory (docs/probe.md).

Tokenising every prompt of every point is most of fft's time; a point's spectrum only
changes when its NDJSON files or the tokenizer do. One file per point,
``<cache>/fft/<key>.npz``, where the key hashes the tokenizer's name, the spectrum grid,
the point id and every source file's path, size and modification time -- so an edited,
re-pulled or re-run file gives a new key and the old entry is simply never read again.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SPECTRUM_CACHE_VERSION", "SpectrumCache"]

SPECTRUM_CACHE_VERSION = 1


class SpectrumCache:
    """Point spectra under `folder`/fft; `get` / `put` by the key of (point, tokenizer)."""

    def __init__(self, folder: str | PathLike[str]):
        self.folder = Path(folder) / "fft"

    def key(self, point: pd.Series, db_dir: str | PathLike[str], tokenizer_name: str, bins: int) -> str:
        files = []
        for source in sorted(point["sources"]):
            path = Path(db_dir) / source
            try:
                info = path.stat()
                files.append([source, info.st_size, info.st_mtime_ns])
            except OSError:
                files.append([source, None, None])      # missing now: never matches a later real file
        ident = [SPECTRUM_CACHE_VERSION, tokenizer_name, bins, int(point["id"]), files]
        return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:32]

    def get(self, key: str) -> tuple[np.ndarray, int] | None:
        """(spectrum, samples) stored under `key`, or None (absent or unreadable)."""
        try:
            with np.load(self.folder / f"{key}.npz") as stored:
                return stored["spectrum"], int(stored["samples"])
        except (OSError, KeyError, ValueError):
            return None

    def put(self, key: str, spectrum: np.ndarray, samples: int) -> None:
        """Store atomically (a temp file renamed into place): a reader never sees half a file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".spectrum-", suffix=".npz", dir=self.folder)
        try:
            with os.fdopen(fd, "wb") as out:
                np.savez(out, spectrum=spectrum, samples=np.int64(samples))
            os.replace(tmp, self.folder / f"{key}.npz")
        finally:
            Path(tmp).unlink(missing_ok=True)
