"""Which files an evaluate.py run reads, and how they are cut into scan batches.

Dataset mode takes each eval's files from its `evaluate.glob`
(``resolver.catalog.datasets.eval_files``); interview mode from ``--interview``. Files are
then grouped into batches - consecutive slices of an eval's sorted file list - so
that each batch is one DuckDB query and every worker has work.
"""
from __future__ import annotations

import glob as globlib
import os
from pathlib import Path
from typing import Callable, Sequence

from resolver.core import UserError

# A batch is at least this much NDJSON (one query's fixed cost stays small) and at
# most this much (memory); see plan_batches and docs/performance.md.
MIN_BATCH_BYTES = 16 * 2**20
MAX_BATCH_BYTES = 256 * 2**20


def expand_interview(spec_text: str, warn: Callable[[str], None]) -> list[str]:
    """Files named by --interview: comma-separated paths, globs or folders (-> their *.ndjson)."""
    files: list[str] = []
    for item in (p.strip() for p in spec_text.split(",")):
        if not item:
            continue
        matches = sorted(globlib.glob(os.path.expanduser(item), recursive=True))
        found = []
        for match in matches:
            path = Path(match)
            found.extend(sorted(path.rglob("*.ndjson")) if path.is_dir() else [path] if path.is_file() else [])
        if not found:
            warn(f"--interview {item!r} matched no NDJSON files")
        files.extend(str(Path(f).resolve()) for f in found)
    unique = sorted(set(files))
    if not unique:
        raise UserError(f"--interview {spec_text!r} matched no files; give NDJSON paths, globs or folders")
    return unique


def relative_names(files: Sequence[str | Path], base: str | Path | None) -> list[str]:
    """``os.path.relpath(f, base)`` of every file, one relpath per folder (not per file)."""
    folders: dict[str, str] = {}
    out = []
    for f in files:
        folder, name = os.path.split(str(f))
        rel = folders.get(folder)
        if rel is None:
            rel = folders[folder] = os.path.relpath(folder, base)
        out.append(name if rel == "." else os.path.join(rel, name))
    return out


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def plan_batches(sizes: list[list[int]], workers: int) -> list[tuple[int, int, int]]:
    """Cut each list of file sizes (an eval's files, in merge order) into batches.

    Returns (list index, first, end) slices, in the order they should be scanned.
    Guided scheduling: a batch takes about 1/workers of the bytes not yet batched,
    within [MIN_BATCH_BYTES, MAX_BATCH_BYTES] and never across lists. Early batches are
    large (each is one DuckDB query, whose ~15 ms of planning and set-up is paid per
    batch), the last ones small, so that no worker is left alone with a long batch at
    the end. A batch holds at least one file.
    """
    remaining = sum(map(sum, sizes))
    out = []
    for number, list_sizes in enumerate(sizes):
        first, count = 0, len(list_sizes)
        while first < count:
            target = max(MIN_BATCH_BYTES, min(MAX_BATCH_BYTES, remaining // max(1, workers)))
            end, taken = first + 1, list_sizes[first]
            while end < count and taken + list_sizes[end] <= target:
                taken += list_sizes[end]
                end += 1
            out.append((number, first, end))
            remaining -= taken
            first = end
    return out
