"""Content-addressed blobs: deterministic tar + zstandard packing, hashing, safe unpacking.

A blob holds one run folder (or one DB file) as a tar archive compressed with
zstandard. Its name is the sha256 of the compressed bytes. Packing is deterministic
(entries sorted by path, mtime 0, owner 0/0 with empty names, modes 0644 / 0755,
PAX format, single-threaded zstd at a fixed level), so the same content gives the
same blob name on any machine running the same zstd library.

Because a different zstd release may compress the same tar differently, every blob
also records the sha256 of its *uncompressed* tar stream (the "content" hash):
that one depends only on file names and bytes, and is what ``data.py status`` uses
to decide whether a local folder still equals what was published.

Unpacking never trusts the archive: the blob's hash is checked before anything is
read; resolver.share.tarsafe vets every member (plain files and directories only, no
links of any kind, nothing outside the one expected top-level entry, sizes capped
by the manifest entry) and writes the files itself into a temporary sibling
directory; the unpacked tree's content hash must equal the manifest's before it
is renamed into place (docs/security.md).
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

import zstandard

from resolver.catalog.manifest import is_blob_name
from resolver.core import UserError
from resolver.core.progress import open_bar
from resolver.share import tarsafe as tarsafe
from resolver.share.tarsafe import UnsafeArchive

if TYPE_CHECKING:
    from resolver.core.progress import Bar

BLOB_SUFFIX = ".tar.zst"
ZSTD_LEVEL = 3
CHUNK = 1 << 20
FILE_MODE = 0o644
DIR_MODE = 0o755


class CorruptBlob(UserError):
    """A blob whose bytes do not hash to its name (it has been removed)."""


@dataclass(frozen=True)
class Expected:
    """What the manifest says a blob unpacks to: checked while and after unpacking."""

    content: str       # sha256 of the uncompressed deterministic tar of the unpacked tree
    bytes: int         # sum of file sizes (caps the unpacked size)
    files: int         # number of regular files


@dataclass(frozen=True)
class PackResult:
    """What packing produced: blob name, content hash, sizes and the file count."""

    blob: str          # sha256 of the compressed bytes = the blob's name
    content: str       # sha256 of the uncompressed tar stream
    size: int          # compressed bytes
    bytes: int         # sum of the packed files' sizes
    files: int         # number of regular files


# ---------------------------------------------------------------- names and paths

def blob_path(cache_dir: str | PathLike[str], blob: str) -> Path:
    """Where a blob lives in a cache or a directory remote: <xx>/<sha256>.tar.zst."""
    if not is_blob_name(blob):
        raise UserError(f"not a blob name: {blob!r}; a blob name is 64 lowercase hex digits")
    return Path(cache_dir) / blob[:2] / f"{blob}{BLOB_SUFFIX}"


def blob_key(blob: str) -> str:
    """The same layout as a relative POSIX key, for object stores and URLs."""
    return blob_path("", blob).as_posix()


def short(blob: str) -> str:
    return blob[:12]


# ---------------------------------------------------------------- walking a tree

def tree_entries(src: Path) -> list:
    """The (archive name, path, is_dir) entries of a folder or file, in packing order.

    Entries are sorted by their archive name so the order does not depend on the
    file system. Anything that is not a plain file or directory is refused: a blob
    carries data, and a symlink or device would mean something else on another machine.
    """
    src = Path(src)
    root = src.name
    if src.is_symlink() or not (src.is_dir() or src.is_file()):
        raise UserError(f"cannot pack {src}: only regular files and directories can be packed")
    if src.is_file():
        return [(root, src, False)]
    entries = [(root, src, True)]
    for dirpath, dirnames, filenames in os.walk(src):
        base = Path(dirpath)
        rel = PurePosixPath(root, base.relative_to(src).as_posix())
        for name in dirnames + filenames:
            path = base / name
            mode = path.lstat().st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise UserError(f"cannot pack {path}: not a regular file or directory (symlinks and devices are refused)")
            entries.append((str(rel / name), path, stat.S_ISDIR(mode)))
    entries.sort(key=lambda e: e[0])
    return entries


def tree_summary(src: Path) -> tuple:
    """(file count, total bytes) of a folder or file, without reading contents."""
    files = size = 0
    for _, path, is_dir in tree_entries(src):
        if not is_dir:
            files += 1
            size += path.stat().st_size
    return files, size


def tree_signature(src: Path) -> str:
    """A cheap fingerprint of a tree's names, sizes and nanosecond mtimes (no contents read)."""
    sha = hashlib.sha256()
    for arcname, path, is_dir in tree_entries(src):
        st = path.stat()
        sha.update(f"{arcname}|{is_dir}|{0 if is_dir else st.st_size}|{0 if is_dir else st.st_mtime_ns}\n".encode())
    return sha.hexdigest()


# ---------------------------------------------------------------- writing the tar stream

class _Writer(Protocol):
    def write(self, data: bytes, /) -> object: ...


class _HashingSink:
    """A write-only file object that hashes what passes through and forwards it."""

    def __init__(self, forward: _Writer | None = None):
        self.sha = hashlib.sha256()
        self.count = 0
        self.forward = forward

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        self.count += len(data)
        if self.forward is not None:
            self.forward.write(data)
        return len(data)

    def flush(self) -> None:
        pass

    def tell(self) -> int:          # tarfile's seekless "w" mode only asks where it is
        return self.count


class _ProgressReader:
    """Wrap a binary file so reads advance a progress bar."""

    def __init__(self, handle: BinaryIO, bar: Bar | None):
        self.handle = handle
        self.bar = bar

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        if self.bar is not None:
            self.bar.update(len(data))
        return data


def _tarinfo(arcname: str, size: int, is_dir: bool) -> tarfile.TarInfo:
    info = tarfile.TarInfo(arcname)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if is_dir:
        info.type = tarfile.DIRTYPE
        info.mode = DIR_MODE
    else:
        info.size = size
        info.mode = FILE_MODE
    return info


def write_tar(src: Path, sink: _HashingSink, bar: Bar | None = None) -> tuple:
    """Write the deterministic tar stream of `src` into `sink`; returns (files, bytes)."""
    files = total = 0
    # typeshed asks a fileobj for read/seek/close too; the "w" mode only writes and asks tell()
    with tarfile.open(fileobj=sink, mode="w", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
        # large writes: the compressor is called per MB, not per 16 KB
        tar.copybufsize = CHUNK
        for arcname, path, is_dir in tree_entries(src):
            if is_dir:
                tar.addfile(_tarinfo(arcname, 0, True))
                continue
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                tar.addfile(_tarinfo(arcname, size, False), _ProgressReader(handle, bar))
            files += 1
            total += size
    return files, total


def _bar(total: int, desc: str, progress: Callable[..., Any] | None) -> Any:
    return open_bar(progress, total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc,
                    leave=False, dynamic_ncols=True)


# ---------------------------------------------------------------- hashing

def content_hash(src: Path, progress: Callable[..., Any] | None = None) -> str:
    """sha256 of the uncompressed deterministic tar stream of a folder or file."""
    files, size = tree_summary(src)
    with _bar(size, f"hash {Path(src).name[:40]}", progress) as bar:
        sink = _HashingSink()
        write_tar(Path(src), sink, bar)
    return sink.sha.hexdigest()


def file_sha256(path: Path, progress: Callable[..., Any] | None = None, desc: str = "verify") -> str:
    """sha256 of a file's bytes, read in chunks."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle, _bar(os.fstat(handle.fileno()).st_size, desc, progress) as bar:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            sha.update(chunk)
            bar.update(len(chunk))
    return sha.hexdigest()


def verify_blob(path: Path, blob: str, progress: Callable[..., Any] | None = None, origin: str = "") -> None:
    """Check a blob file's sha256 against its name; a mismatch deletes the file and raises."""
    actual = file_sha256(path, progress, desc=f"verify {short(blob)}")
    if actual != blob:
        Path(path).unlink(missing_ok=True)
        where = f" from {origin}" if origin else ""
        raise CorruptBlob(
            f"blob {blob}{where} is corrupt (its bytes hash to {short(actual)}...); "
            f"the bad copy was removed, pull again or re-push the original")


# ---------------------------------------------------------------- packing

def pack(src: str | PathLike[str], cache_dir: str | PathLike[str], progress: Callable[..., Any] | None = None) -> PackResult:
    """Pack a folder or file into the blob cache; returns the blob's name and sizes.

    The compressed stream goes to a temporary file in the cache which is renamed to
    its content address only when complete, so an interrupted pack leaves no blob.
    """
    src = Path(src)
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    _, size = tree_summary(src)
    fd, tmp_name = tempfile.mkstemp(prefix=".pack-", suffix=".tmp", dir=cache_dir)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, _bar(size, f"pack {src.name[:40]}", progress) as bar:
            compressed = _HashingSink(out)
            compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, threads=0)
            # zstandard's stubs ask for IO[bytes]; the writer calls only write() (and flush())
            with compressor.stream_writer(compressed, closefd=False) as zwriter:  # type: ignore[arg-type]
                content = _HashingSink(zwriter)
                files, total = write_tar(src, content, bar)
            out.flush()
            os.fsync(out.fileno())
        result = PackResult(blob=compressed.sha.hexdigest(), content=content.sha.hexdigest(),
                            size=compressed.count, bytes=total, files=files)
        final = blob_path(cache_dir, result.blob)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, final)
        return result
    finally:
        tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------- safe unpacking

def _clear_stale_temps(dest: Path) -> None:
    """Remove temp dirs left by an unpack that was killed (kill -9 skips `finally`)."""
    for stale in dest.parent.glob(f".{glob.escape(dest.name)}.unpack-*"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)


def unpack(blob_file: str | PathLike[str], blob: str, dest: str | PathLike[str], progress: Callable[..., Any] | None = None,
           replace: bool = False, origin: str = "", expect: Expected | None = None) -> int:
    """Verify a blob, then unpack it so that its single top-level entry becomes `dest`.

    `dest`'s name must equal the archive's top-level entry. Members are vetted and
    written by resolver.share.tarsafe into a hidden temp dir beside `dest`; with `expect`
    (the manifest entry) the unpacked size is capped and the unpacked tree's content
    hash must equal `expect.content` before anything is moved into place. With
    `replace`, an existing `dest` of the same kind (folder or file) is swapped out
    only after the new copy is whole and verified. Returns the bytes written.
    """
    blob_file, dest = Path(blob_file), Path(dest)
    if dest.name in ("", ".", ".."):
        raise UserError(f"cannot unpack into {dest}: the target must name one file or folder")
    verify_blob(blob_file, blob, progress, origin)
    if (dest.exists() or dest.is_symlink()) and not replace:
        raise UserError(f"{dest} already exists; refusing to overwrite it")
    dest.parent.mkdir(parents=True, exist_ok=True)
    _clear_stale_temps(dest)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.unpack-", dir=dest.parent))
    try:
        written = _extract_all(blob_file, blob, dest.name, tmp, progress, expect)
        staged = tmp / dest.name
        if not staged.exists():
            raise UnsafeArchive(f"blob {short(blob)} does not contain {dest.name!r}; refused")
        if expect is not None:
            actual = content_hash(staged, progress)
            if actual != expect.content:
                raise UnsafeArchive(f"blob {short(blob)} unpacks to content {short(actual)}..., not the "
                                    f"manifest's {short(expect.content)}...; refused (nothing was kept)")
        _swap_into_place(staged, dest, tmp)
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _extract_all(blob_file: Path, blob: str, root: str, tmp: Path, progress: Callable[..., Any] | None,
                 expect: Expected | None) -> int:
    limits = tarsafe.Limits(expect.bytes, expect.files) if expect is not None else None
    decompressor = zstandard.ZstdDecompressor()
    with open(blob_file, "rb") as raw, decompressor.stream_reader(raw) as reader, \
            _bar(os.fstat(raw.fileno()).st_size, f"unpack {root[:40]}", progress) as bar:
        capped = tarsafe.CappedReader(reader, limits.stream_cap() if limits else None, f"blob {short(blob)}")

        def advance() -> None:
            bar.n = raw.tell()
            bar.refresh()

        try:
            # typeshed asks every fileobj for seek/tell/write; a "r|" stream only reads
            with tarfile.open(fileobj=capped, mode="r|") as tar:  # type: ignore[call-overload]
                return tarsafe.extract(tar, root, tmp, limits, file_mode=FILE_MODE, dir_mode=DIR_MODE,
                                       progress=advance)
        except (tarfile.TarError, zstandard.ZstdError) as exc:
            raise UnsafeArchive(f"blob {short(blob)} is not a valid tar.zst archive ({exc}); refused") from None


def _swap_into_place(staged: Path, dest: Path, tmp: Path) -> None:
    if dest.exists() or dest.is_symlink():
        if dest.is_symlink() or dest.is_dir() != staged.is_dir():
            kind = "a link" if dest.is_symlink() else ("a folder" if dest.is_dir() else "a file")
            raise UserError(f"{dest} is {kind}, not what the blob holds; refusing to replace it")
        old = tmp / ".replaced"
        os.replace(dest, old)
        try:
            os.replace(staged, dest)
        except OSError:
            os.replace(old, dest)   # put the original back: never leave nothing behind
            raise
    else:
        os.replace(staged, dest)
