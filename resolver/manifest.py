"""data/manifest.json: which blob holds which run folder or database, and where blobs live.

The manifest is tracked in git, so it is written for reviewable diffs: sorted keys,
two-space indent, one trailing newline, and always atomically (temp file + rename)
so a crash never leaves half a manifest. Shape::

    {
      "format": 1,
      "remote": "s3://bucket/prefix",          # optional; default data/.remote
      "runs": {                                # run folders, keyed by path relative to data/
        "r12/Model/2026-01-02_03-04-05_r12_model_zeroshot_greedy": {
          "blob": "<sha256 of the .tar.zst>", "content": "<sha256 of the tar>",
          "size": 123, "bytes": 456, "files": 12,
          "cohort": "r12/Model", "eval_ids": ["1f0030"]
        }
      },
      "dbs": {                                 # PointsDB files, keyed the same way
        "pointsdb-r12.db": {"blob": ..., "content": ..., "size": ..., "bytes": ...,
                            "files": 1, "datasets": ["r12.json"]}
      }
    }

Updates go through `update_manifest`, which holds an exclusive lock on
``data/.blobs/.manifest.lock`` and re-reads the file, so two pushes at once both land.
"""
from __future__ import annotations

import fcntl
import json
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from resolver.atomic import write_text_atomic
from resolver.blobs import is_blob_name
from resolver.errors import UserError

FORMAT = 1
DEFAULT_PATH = Path("data") / "manifest.json"
KINDS = ("runs", "dbs")


@dataclass
class Entry:
    """One published item: the blob that holds it and what it contains."""

    blob: str
    content: str
    size: int
    bytes: int
    files: int
    cohort: str | None = None                       # runs: the cohort key
    eval_ids: list = field(default_factory=list)     # runs: evals whose glob matches it
    datasets: list = field(default_factory=list)     # dbs: dataset files naming it

    def to_json(self, kind: str) -> dict:
        data = asdict(self)
        drop = ("datasets",) if kind == "runs" else ("cohort", "eval_ids")
        for key in drop:
            data.pop(key)
        return data


@dataclass
class Manifest:
    path: Path
    remote: str | None = None
    runs: dict = field(default_factory=dict)
    dbs: dict = field(default_factory=dict)

    @property
    def data_dir(self) -> Path:
        """Keys and relative remote paths are relative to the manifest's directory."""
        return self.path.parent

    def entries(self, kind: str) -> dict:
        return self.runs if kind == "runs" else self.dbs

    def referenced_blobs(self) -> set:
        return {e.blob for kind in KINDS for e in self.entries(kind).values()}

    def to_json(self) -> dict:
        data = {"format": FORMAT,
                "runs": {k: e.to_json("runs") for k, e in self.runs.items()},
                "dbs": {k: e.to_json("dbs") for k, e in self.dbs.items()}}
        if self.remote:
            data["remote"] = self.remote
        return data


def _parse_entry(raw, where: str) -> Entry:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected an object with blob, content, size, bytes, files")
    try:
        entry = Entry(blob=raw["blob"], content=raw["content"], size=int(raw["size"]),
                      bytes=int(raw["bytes"]), files=int(raw["files"]), cohort=raw.get("cohort"),
                      eval_ids=list(raw.get("eval_ids", [])), datasets=list(raw.get("datasets", [])))
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{where}: missing or bad field {exc}; needs blob, content, size, bytes, files") from None
    if not (is_blob_name(entry.blob) and is_blob_name(entry.content)):
        raise UserError(f"{where}: blob and content must be 64-character lowercase sha256 hex digests")
    return entry


def _check_key(key: str, where: str) -> None:
    """Keys are relative POSIX paths inside data/: nothing absolute, no '..'."""
    parts = key.split("/")
    if not key or key.startswith("/") or ".." in parts or "" in parts or "\\" in key:
        raise UserError(f"{where}: key {key!r} must be a relative path inside the data directory")


def load_manifest(path=DEFAULT_PATH) -> Manifest:
    """Read a manifest; a missing file is an empty manifest (nothing published yet)."""
    path = Path(path)
    if not path.exists():
        return Manifest(path=path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}; fix it or restore it from git")
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise UserError(f"{path}: not a data manifest of format {FORMAT} (expected {{\"format\": 1, \"runs\": ..., \"dbs\": ...}})")
    remote = raw.get("remote")
    if remote is not None and not isinstance(remote, str):
        raise UserError(f"{path}: 'remote' must be a string such as s3://bucket/prefix")
    manifest = Manifest(path=path, remote=remote)
    for kind in KINDS:
        section = raw.get(kind, {})
        if not isinstance(section, dict):
            raise UserError(f"{path}: '{kind}' must be an object keyed by path")
        for key, value in section.items():
            _check_key(key, f"{path} {kind}")
            manifest.entries(kind)[key] = _parse_entry(value, f"{path} {kind}[{key!r}]")
    return manifest


def write_json_atomic(path: Path, data) -> None:
    """Write JSON with sorted keys via a temp file in the same directory + rename."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def save_manifest(manifest: Manifest) -> None:
    write_json_atomic(manifest.path, manifest.to_json())


@contextmanager
def update_manifest(path=DEFAULT_PATH):
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
