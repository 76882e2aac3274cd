"""data/manifest.json: which blob holds which run folder or database, and where blobs live.

This module is the file's shape and its reader: cohort.py's listings (`cohorts`) read
what is published, and data.py (`resolver.share`, a layer above) writes it through
`resolver.share.manifest.update_manifest` (docs/architecture.md, "Layers"). Shape::

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

Blob names are sha256 hex digests of the packed bytes (docs/data.md).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from os import PathLike
from pathlib import Path

from resolver.catalog.datasets import load_dataset
from resolver.core import UserError, did_you_mean, read_json_file

FORMAT = 1
DEFAULT_PATH = Path("data") / "manifest.json"
KINDS = ("runs", "dbs")
_BLOB_NAME = re.compile(r"^[0-9a-f]{64}$")


def is_blob_name(text: str) -> bool:
    """A blob's name: the sha256 of its bytes, 64 lowercase hex digits."""
    return bool(_BLOB_NAME.match(text or ""))


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


_ENTRY_FIELDS = ("blob", "content", "size", "bytes", "files", "cohort", "eval_ids", "datasets")


def _count(raw: dict, name: str, where: str) -> int:
    value = raw.get(name)
    if type(value) is not int or value < 0:
        raise UserError(f"{where}: '{name}' must be a non-negative integer, got {str(value)[:40]!r}")
    return value


def _names(raw: dict, name: str, where: str) -> list:
    value = raw.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where}: '{name}' must be a list of strings")
    return list(value)


def _parse_entry(raw: object, where: str) -> Entry:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected an object with blob, content, size, bytes, files")
    unknown = sorted(set(raw) - set(_ENTRY_FIELDS))
    if unknown:
        raise UserError(f"{where}: unknown field {unknown[0]!r}{did_you_mean(unknown[0], _ENTRY_FIELDS)}; "
                        f"valid: {', '.join(_ENTRY_FIELDS)}")
    blob, content, cohort = raw.get("blob"), raw.get("content"), raw.get("cohort")
    if not (isinstance(blob, str) and isinstance(content, str) and is_blob_name(blob) and is_blob_name(content)):
        raise UserError(f"{where}: blob and content must be 64-character lowercase sha256 hex digests")
    if cohort is not None and not isinstance(cohort, str):
        raise UserError(f"{where}: 'cohort' must be a string such as r12/Model")
    return Entry(blob=blob, content=content, size=_count(raw, "size", where), bytes=_count(raw, "bytes", where),
                 files=_count(raw, "files", where), cohort=cohort, eval_ids=_names(raw, "eval_ids", where),
                 datasets=_names(raw, "datasets", where))


def _check_key(key: str, where: str) -> None:
    """Keys are relative POSIX paths inside data/ made of plain, visible parts."""
    parts = key.split("/") if isinstance(key, str) else [""]
    if (not key or "\\" in key or any(ord(c) < 32 or c == "\x7f" for c in key)
            or any(p in ("", ".", "..") or p.startswith(".") for p in parts)):
        raise UserError(f"{where}: key {key!r} must be a relative path inside the data directory "
                        f"(plain parts, none empty, hidden, '.' or '..')")


def _check_run_key(key: str, entry: Entry, where: str) -> None:
    """A runs key is exactly <cohort>/<run folder>, and its entry names that cohort."""
    parent, _, folder = key.rpartition("/")
    if not parent or not isinstance(entry.cohort, str) or entry.cohort != parent:
        raise UserError(f"{where}: a runs key must be <cohort>/<run folder> with 'cohort' equal to the part "
                        f"before the last '/' (key {key!r}, cohort {entry.cohort!r})")


def load_manifest(path: str | PathLike[str] = DEFAULT_PATH) -> Manifest:
    """Read a manifest; a missing file is an empty manifest (nothing published yet)."""
    path = Path(path)
    if not path.exists():
        return Manifest(path=path)
    raw = read_json_file(path, "data manifest", "fix it or restore it from git")
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise UserError(f"{path}: not a data manifest of format {FORMAT} (expected {{\"format\": 1, \"runs\": ..., \"dbs\": ...}})")
    unknown = sorted(set(raw) - {"format", "remote", *KINDS})
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], ('format', 'remote', *KINDS))}; "
                        f"valid: format, remote, runs, dbs")
    remote = raw.get("remote")
    if remote is not None and not isinstance(remote, str):
        raise UserError(f"{path}: 'remote' must be a string such as s3://bucket/prefix")
    manifest = Manifest(path=path, remote=remote)
    for kind in KINDS:
        section = raw.get(kind, {})
        if not isinstance(section, dict):
            raise UserError(f"{path}: '{kind}' must be an object keyed by path")
        for key, value in section.items():
            where = f"{path} {kind}[{key!r}]"
            _check_key(key, f"{path} {kind}")
            entry = _parse_entry(value, where)
            if kind == "runs":
                _check_run_key(key, entry, where)
            manifest.entries(kind)[key] = entry
    return manifest



def pull_hint(dataset_file: str | PathLike[str]) -> str:
    """What to say about `data.py pull` for a dataset file whose PointsDB is missing.

    A pull can only fetch what a manifest lists, so the pull line is suggested only when
    the manifest beside the dataset file (data/manifest.json for data/r12.json, the file
    data.py reads by default) names that database; otherwise the words say what has to be
    configured first (docs/data.md, "Remotes").
    """
    data_dir = Path(dataset_file).parent
    path = data_dir / DEFAULT_PATH.name
    db_path = Path(load_dataset(dataset_file).db_path)
    try:
        manifest = load_manifest(path)
        key = db_path.resolve().relative_to(data_dir.resolve()).as_posix()
    except (UserError, ValueError):     # an unreadable manifest or a DB outside data/: nothing to pull
        manifest, key = Manifest(path=path), ""
    if key in manifest.dbs:
        return f"fetch the published results with: python data.py pull dataset {dataset_file}"
    return (f"no published copy to pull ({path} lists no {db_path.name}): to share one, set a remote "
            f"(python data.py remote URL, or $REASONSCAPE_REMOTE) and push the database from a machine that "
            f"has it (python data.py push dataset {dataset_file})")
