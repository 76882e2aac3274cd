"""Which files an evaluate.py run reads, and how they are cut into scan batches.

Dataset mode takes each eval's files from its `evaluate.glob`
(``resolver.datasets.eval_files``); interview mode from ``--interview``. Files are
then grouped into batches - consecutive slices of an eval's sorted file list - so
that each batch is one DuckDB query and every worker has work.
"""
from __future__ import annotations

import glob as globlib
import os
from pathlib import Path

from resolver.errors import UserError

# A batch is at least this much NDJSON (one query's fixed cost stays negligible) and
# at most this much (memory and load balance); see docs/performance.md.
MIN_BATCH_BYTES = 16 * 2**20
MAX_BATCH_BYTES = 256 * 2**20


def expand_interview(spec_text: str, warn) -> list:
    """Files named by --interview: comma-separated paths, globs or folders (-> their *.ndjson)."""
    files = []
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


def relative_names(files, base) -> list:
    """``os.path.relpath(f, base)`` of every file, one relpath per folder (not per file)."""
    folders, out = {}, []
    for f in files:
        folder, name = os.path.split(str(f))
        rel = folders.get(folder)
        if rel is None:
            rel = folders[folder] = os.path.relpath(folder, base)
        out.append(name if rel == "." else os.path.join(rel, name))
    return out


def file_size(path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


BATCHES_PER_WORKER = 8    # small enough that no worker is left alone with a long last batch


def batch_bytes(total_bytes: int, workers: int) -> int:
    """Target batch size: about BATCHES_PER_WORKER batches per worker, within [MIN, MAX]_BATCH_BYTES."""
    return max(MIN_BATCH_BYTES, min(MAX_BATCH_BYTES, total_bytes // max(1, BATCHES_PER_WORKER * workers)))


def split_files(files, sizes, target: int) -> list:
    """Consecutive slices of ``files`` of about ``target`` bytes each (at least one file each)."""
    batches, current, size = [], [], 0
    for path, n in zip(files, sizes):
        if current and size + n > target:
            batches.append(current)
            current, size = [], 0
        current.append(path)
        size += n
    if current:
        batches.append(current)
    return batches
