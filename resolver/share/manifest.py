"""Writing data/manifest.json: data.py's push records what it published here.

The file's shape and its reader live one layer down, in `resolver.catalog.manifest`
(cohort.py reads what is published too; docs/architecture.md, "Layers"). The manifest
is tracked in git, so it is written for reviewable diffs: sorted keys, two-space indent,
one trailing newline, and always atomically (temp file + rename) so a crash never
leaves half a manifest. Updates go through `update_manifest`, which holds an exclusive
lock on ``data/.blobs/.manifest.lock`` and re-reads the file, so two pushes at once
both land.
"""
from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from os import PathLike
from pathlib import Path

from resolver.catalog.manifest import DEFAULT_PATH, Manifest, load_manifest
from resolver.core import write_text_atomic

# DEFAULT_PATH and load_manifest are also share's public names (data.py reads and writes).
__all__ = ["DEFAULT_PATH", "load_manifest", "save_manifest", "update_manifest", "write_json_atomic"]


def write_json_atomic(path: Path, data: object) -> None:
    """Write JSON with sorted keys via a temp file in the same directory + rename."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def save_manifest(manifest: Manifest) -> None:
    write_json_atomic(manifest.path, manifest.to_json())


@contextmanager
def update_manifest(path: str | PathLike[str] = DEFAULT_PATH) -> Iterator[Manifest]:
    """Lock, re-read, yield the manifest for changes, and save it atomically on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The lock lives in the (gitignored) blob cache so it never shows up in `git status`.
    lock_path = path.parent / ".blobs" / ".manifest.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        manifest = load_manifest(path)
        yield manifest
        save_manifest(manifest)
