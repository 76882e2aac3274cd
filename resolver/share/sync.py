"""The data.py actions: push, pull, status and prune over a scope (see resolver/share/scopes.py).

* push: pack each item (skipped when its content equals the manifest's entry), upload
  the blobs the remote lacks, then record the item in the manifest (one atomic
  manifest update per item, so an interrupted push keeps what it finished).
* pull: for each manifest entry in scope, skip it when the local copy already has
  the recorded content; otherwise take the blob from the cache or download it
  (resumable), verify its sha256, and unpack it atomically into place.
* status: one row per item: local state, whether the remote and the cache hold the blob.
* prune: delete cached blobs (and stale partial files) the manifest does not reference.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from resolver.catalog.manifest import Entry, Manifest
from resolver.core import UserError
from resolver.share import blobs as blobs
from resolver.share.blobs import CorruptBlob
from resolver.share.manifest import update_manifest, write_json_atomic
from resolver.share.remote_base import Remote, part_path
from resolver.share.remotes import DEFAULT_REMOTE
from resolver.share.scopes import Item, Scope, local_items, manifest_items, never_pushed

CACHE_DIR = ".blobs"
KEEP_IN_CACHE = (".manifest.lock", ".content-hashes.json")    # bookkeeping files prune leaves alone

# Local states reported by `status` (docs/data.md explains each).
PRESENT, MODIFIED, MISSING, REMOTE_ONLY, LOCAL_ONLY = "present", "modified", "missing", "remote-only", "local-only"


def cache_dir(manifest: Manifest) -> Path:
    return manifest.data_dir / CACHE_DIR


@dataclass
class Outcome:
    """What an action did to one item (for the summary table)."""

    key: str
    action: str
    size: int = 0
    detail: str = ""


class HashMemo:
    """Content hashes of local items, reused while their names, sizes and mtimes are unchanged.

    Hashing a 100 GB corpus for every `status` would take minutes; like make, rsync and
    git, we trust a tree whose (name, size, mtime_ns) signature has not moved. Kept in
    data/.blobs/.content-hashes.json (gitignored with the cache).
    """

    NAME = ".content-hashes.json"

    def __init__(self, manifest: Manifest):
        self.path = cache_dir(manifest) / self.NAME
        self.dirty = False
        try:
            self.data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            self.data = {}
        if not isinstance(self.data, dict):
            self.data = {}

    def content(self, path: Path, progress: Callable[..., Any] | None) -> str:
        signature = blobs.tree_signature(path)
        hit = self.data.get(str(path.resolve()))
        if hit and hit.get("signature") == signature:
            return hit["content"]
        content = blobs.content_hash(path, progress)
        self._store(path, signature, content)
        return content

    def remember(self, path: Path, content: str) -> None:
        self._store(path, blobs.tree_signature(path), content)

    def _store(self, path: Path, signature: str, content: str) -> None:
        self.data[str(path.resolve())] = {"signature": signature, "content": content}
        self.dirty = True

    def save(self) -> None:
        if self.dirty:
            write_json_atomic(self.path, self.data)
            self.dirty = False


def local_matches(path: Path, entry: Entry, memo: HashMemo, progress: Callable[..., Any] | None = None) -> bool | None:
    """None when `path` is absent; else whether its content equals the manifest entry.

    File count and byte total are compared first (cheap); only when they agree is
    the content hash looked up (memo) or computed.
    """
    if not path.exists():
        return None
    try:
        if blobs.tree_summary(path) != (entry.files, entry.bytes):
            return False
        return memo.content(path, progress) == entry.content
    except UserError:
        return False


# ---------------------------------------------------------------- push

def _items_bar(items: list, verb: str, progress: Callable[..., Any] | None) -> Iterable[Any]:
    """The items, counted on a bar when the command handed in a `progress` factory."""
    return progress(iterable=items, desc=verb, unit="item", leave=False) if progress is not None else items


def push(scope: Scope, manifest: Manifest, remote: Remote, progress: Callable[..., Any] | None = None) -> list:
    """Publish the scope's local items; returns one Outcome per item.

    `progress`: the tqdm-like factory data.py hands in for its bars (none: no bars); the
    same for pull and status. Warnings (retries) go to the remote's `warn`.
    """
    if remote.read_only:
        raise UserError(f"remote {remote.url} is read-only (http/https); push to a directory or an s3:// bucket")
    items = local_items(scope, manifest.data_dir, require_db=scope.name == "dataset")
    if not items:
        raise UserError(f"nothing to push for {scope.label}: no run folders or DB files found locally")
    outcomes, memo = [], HashMemo(manifest)
    try:
        for item in _items_bar(items, "push", progress):
            outcomes.append(_push_item(item, manifest, remote, memo, progress))
    finally:
        memo.save()
    _remember_remote(manifest, remote)
    return outcomes


def _push_item(item: Item, manifest: Manifest, remote: Remote, memo: HashMemo, progress: Callable[..., Any] | None) -> Outcome:
    wal = item.path.with_name(item.path.name + ".wal")
    if item.kind == "dbs" and wal.exists():
        raise UserError(f"{item.path} has an unmerged write-ahead log ({wal.name}); let evaluate.py "
                        f"finish (or open and close the DB once) before pushing it")
    known = manifest.entries(item.kind).get(item.key)
    if known is not None and local_matches(item.path, known, memo, progress):
        entry = known
        if not remote.has(entry.blob):
            entry = _ensure_cached(item, entry, manifest, progress)
            remote.push(entry.blob, blobs.blob_path(cache_dir(manifest), entry.blob), progress)
            action = "uploaded"
        else:
            action = "unchanged"
    else:
        result = blobs.pack(item.path, cache_dir(manifest), progress)
        memo.remember(item.path, result.content)
        entry = Entry(blob=result.blob, content=result.content, size=result.size,
                      bytes=result.bytes, files=result.files)
        uploaded = not remote.has(entry.blob)
        if uploaded:
            remote.push(entry.blob, blobs.blob_path(cache_dir(manifest), entry.blob), progress)
        action = "published" if known is None else "updated"
    _record(manifest, item, entry)
    return Outcome(item.key, action, entry.size, f"blob {blobs.short(entry.blob)}")


def _ensure_cached(item: Item, entry: Entry, manifest: Manifest, progress: Callable[..., Any] | None) -> Entry:
    """The entry's blob in the cache, re-packing when needed (same content, maybe new blob name)."""
    if blobs.blob_path(cache_dir(manifest), entry.blob).is_file():
        return entry
    result = blobs.pack(item.path, cache_dir(manifest), progress)
    return Entry(blob=result.blob, content=result.content, size=result.size, bytes=result.bytes,
                 files=result.files, cohort=entry.cohort, eval_ids=entry.eval_ids, datasets=entry.datasets)


def _record(manifest: Manifest, item: Item, entry: Entry) -> None:
    """Write the item's entry into the manifest file (locked, atomic) and the in-memory copy."""
    if item.kind == "runs":
        entry.cohort, entry.eval_ids = item.cohort, sorted(item.eval_ids)
    else:
        entry.datasets = sorted(set(entry.datasets) | set(item.datasets))
    with update_manifest(manifest.path) as fresh:
        fresh.entries(item.kind)[item.key] = entry
    manifest.entries(item.kind)[item.key] = entry


def _remember_remote(manifest: Manifest, remote: Remote) -> None:
    """The first push to a non-default remote records it, so that pulls find it."""
    if manifest.remote or remote.url == DEFAULT_REMOTE:
        return
    with update_manifest(manifest.path) as fresh:
        if not fresh.remote:
            fresh.remote = remote.url
    manifest.remote = manifest.remote or remote.url


# ---------------------------------------------------------------- pull

def pull(scope: Scope, manifest: Manifest, remote: Remote, force: bool = False, progress: Callable[..., Any] | None = None) -> list:
    """Fetch and unpack the scope's manifest entries; returns one Outcome per item.

    A failure on one item (network, corrupt blob) does not stop the others: it is
    reported as an Outcome with action "failed", and the caller exits non-zero. What the
    scope names but nobody pushed (`dataset --full`) is an Outcome with action "missing".
    """
    items = manifest_items(scope, manifest)
    if not items:
        raise UserError(f"the manifest {manifest.path} has nothing for {scope.label}; "
                        f"has it been pushed? (python data.py push {scope.name} ...)")
    outcomes, memo = [], HashMemo(manifest)
    try:
        for item in _items_bar(items, "pull", progress):
            entry = manifest.entries(item.kind)[item.key]
            try:
                outcomes.append(_pull_item(item, entry, manifest, remote, memo, force, progress))
            except UserError as exc:          # RemoteError, CorruptBlob, UnsafeArchive, a refused replace
                outcomes.append(Outcome(item.key, "failed", entry.size, str(exc)))
    finally:
        memo.save()
    missing = never_pushed(scope, manifest)
    return outcomes + [Outcome(key, "missing", 0, f"never pushed: {what}") for key, what in missing]


def _pull_item(item: Item, entry: Entry, manifest: Manifest, remote: Remote, memo: HashMemo, force: bool,
               progress: Callable[..., Any] | None) -> Outcome:
    state = local_matches(item.path, entry, memo, progress)
    if state:
        return Outcome(item.key, "present", entry.size)
    if state is False and not force:
        return Outcome(item.key, "skipped", entry.size, "local copy differs from the manifest; --force replaces it")
    if state is False:
        check_replaceable(item, manifest)
    expect = blobs.Expected(entry.content, entry.bytes, entry.files)
    blob_file = fetch_blob(entry.blob, manifest, remote, progress, entry.size)
    try:
        blobs.unpack(blob_file, entry.blob, item.path, progress, replace=force, origin=f"cache {blob_file}",
                     expect=expect)
    except CorruptBlob:
        # The cached copy went bad on disk (it is deleted by now): fetch once more.
        blob_file = fetch_blob(entry.blob, manifest, remote, progress, entry.size)
        blobs.unpack(blob_file, entry.blob, item.path, progress, replace=force, origin=str(remote), expect=expect)
    memo.remember(item.path, entry.content)
    return Outcome(item.key, "pulled" if state is None else "replaced", entry.size)


def check_replaceable(item: Item, manifest: Manifest) -> None:
    """Refuse to replace anything but exactly the run folder or DB file the entry names.

    `pull --force` swaps out a local copy that differs from the manifest. A runs entry
    may only replace a folder that is a run folder (no evals.json or manifest inside,
    no other manifest entry below it); a dbs entry only a file. Keys are checked on
    load too (resolver.share.manifest); this is the last guard before anything moves.
    """
    data_dir = manifest.data_dir.resolve()
    path = item.path
    if path.is_symlink() or path.resolve().parent != (data_dir / item.key).parent.resolve() \
            or path.resolve() == data_dir:
        raise UserError(f"{path} is a link or lies outside {data_dir}; refusing to replace it")
    if item.kind == "dbs":
        if path.is_dir():
            raise UserError(f"{path} is a directory, not the database file the manifest names; refusing to replace it")
        return
    if not path.is_dir():
        raise UserError(f"{path} is not a directory, not the run folder the manifest names; refusing to replace it")
    nested = [k for kind in ("runs", "dbs") for k in manifest.entries(kind) if k.startswith(item.key + "/")]
    marker = next((p for name in ("evals.json", "manifest.json") for p in path.rglob(name)), None)
    if nested or marker is not None:
        why = f"it holds {marker.name}" if marker is not None else f"it holds the manifest entry {nested[0]}"
        raise UserError(f"{path} is not a run folder ({why}); refusing to replace it")


def fetch_blob(blob: str, manifest: Manifest, remote: Remote, progress: Callable[..., Any] | None = None, limit: int | None = None) -> Path:
    """The blob in the local cache, downloading it (resumably) when absent; hash verified.

    `limit` is the manifest's recorded compressed size: a remote that sends more is cut off.
    A corrupt download is fetched once more, said through the remote's `warn`.
    """
    final = blobs.blob_path(cache_dir(manifest), blob)
    if final.is_file():
        return final
    for attempt in (1, 2):
        remote.fetch(blob, final, progress, limit)
        try:
            blobs.verify_blob(final, blob, progress, origin=str(remote))
            return final
        except CorruptBlob:
            if attempt == 2:
                raise
            remote.warn(f"warning: blob {blobs.short(blob)} from {remote} failed its hash check; downloading again")
    return final


# ---------------------------------------------------------------- status

@dataclass
class StatusRow:
    key: str
    kind: str
    eval_ids: list
    state: str
    remote: str
    cached: bool
    size: int
    files: int


def status(scope: Scope, manifest: Manifest, remote: Remote, check_remote: bool = True, progress: Callable[..., Any] | None = None) -> list:
    """One StatusRow per item in the scope, from the manifest and the local disk."""
    known = {(i.kind, i.key): i for i in manifest_items(scope, manifest)}
    local = {(i.kind, i.key): i for i in local_items(scope, manifest.data_dir)}
    rows, memo = [], HashMemo(manifest)
    try:
        for kind, key in sorted(set(known) | set(local)):
            entry = manifest.entries(kind).get(key)
            item = known.get((kind, key)) or local[(kind, key)]
            rows.append(_status_row(item, entry, manifest, remote, memo, check_remote, progress))
    finally:
        memo.save()
    return rows


def _status_row(item: Item, entry: Entry | None, manifest: Manifest, remote: Remote, memo: HashMemo,
                check_remote: bool, progress: Callable[..., Any] | None) -> StatusRow:
    if entry is None:
        files, size = blobs.tree_summary(item.path)
        names = item.eval_ids if item.kind == "runs" else item.datasets
        return StatusRow(item.key, item.kind, names, LOCAL_ONLY, "-", False, size, files)
    on_remote = _remote_state(remote, entry.blob) if check_remote else "?"
    cached = blobs.blob_path(cache_dir(manifest), entry.blob).is_file()
    match = local_matches(item.path, entry, memo, progress)
    if match is None:
        state = REMOTE_ONLY if (on_remote != "no" or cached) else MISSING
    else:
        state = PRESENT if match else MODIFIED
    return StatusRow(item.key, item.kind, entry.eval_ids if item.kind == "runs" else entry.datasets,
                     state, on_remote, cached, entry.size, entry.files)


def _remote_state(remote: Remote, blob: str) -> str:
    try:
        return "yes" if remote.has(blob) else "no"
    except UserError:
        return "unreachable"


# ---------------------------------------------------------------- prune

def prune(manifest: Manifest, dry_run: bool = False) -> tuple:
    """Delete cached blobs the manifest does not reference, and stale temp files.

    Partial downloads (.part) of referenced blobs are kept so a pull can resume.
    Returns (files removed, bytes freed).
    """
    root = cache_dir(manifest)
    if not root.is_dir():
        return 0, 0
    keep = manifest.referenced_blobs()
    removed = freed = 0
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name in KEEP_IN_CACHE:
            continue
        blob = path.name[:64]
        if blob in keep and (path.name.endswith(blobs.BLOB_SUFFIX) or path == part_path(blobs.blob_path(root, blob))):
            continue
        freed += path.stat().st_size
        removed += 1
        if not dry_run:
            path.unlink()
    if not dry_run:
        for folder in sorted(root.glob("??"), reverse=True):
            if folder.is_dir() and not any(folder.iterdir()):
                os.rmdir(folder)
    return removed, freed
