"""Extract a tar stream without trusting it: our own member checks, our own file writes.

Python's ``tarfile`` extraction filters had path-escape holes until the 2025 fixes
(CVE-2025-4517 and friends: a chain of symlinked directories whose resolved path
outgrows PATH_MAX, then a link through it). This machine's Python (3.11.7) predates
them, so nothing here calls ``tar.extract`` or relies on a filter. Instead:

* only two member types exist: plain directories and regular files (``pack`` never
  writes anything else). Symlinks, hard links, devices, FIFOs, sparse files and any
  unknown type are refused;
* a name is a relative POSIX path of plain parts (no ``/`` at the start, no ``..``,
  ``.``, empty or backslash parts, no control characters), under the one expected
  top-level entry, at most ``MAX_DEPTH`` parts of at most 255 bytes each;
* every parent of a member must be a directory member seen *earlier* in the archive
  (so no path can pass through a file or a link), and no name may appear twice;
* the archive may hold at most ``limits.files`` regular files totalling at most
  ``limits.bytes`` bytes, and the decompressed stream may be at most
  ``limits.stream_cap()`` bytes (the file bytes plus a documented margin for tar
  headers): a bomb stops at the cap, long before the disk fills;
* files are created by us, inside a fresh private temp directory, walking each
  parent with ``O_DIRECTORY | O_NOFOLLOW`` and creating with ``O_CREAT | O_EXCL |
  O_NOFOLLOW``, so even a link planted by someone else could not be followed.

Any refusal raises `UnsafeArchive` (a UserError) naming the member; the caller
deletes the temp directory, so nothing of a refused archive is left behind.
"""
from __future__ import annotations

import os
import tarfile
from dataclasses import dataclass
from typing import Callable, Protocol

from resolver.core import UserError

MAX_DEPTH = 64                   # path parts per member; run folders use 2-3
MAX_PART_BYTES = 255             # one path part (the usual NAME_MAX)
HEADER_MARGIN_PER_FILE = 4096    # tar header + PAX header + padding of one member, generously
HEADER_MARGIN_FIXED = 16 << 20   # directories and the end-of-archive blocks
CHUNK = 1 << 20

_FILE_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE)
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeArchive(UserError):
    """An archive member that is not plain data inside its target (nothing was kept)."""


@dataclass(frozen=True)
class Limits:
    """What an archive may unpack to (from the manifest entry that names it)."""

    bytes: int          # sum of regular file sizes
    files: int          # number of regular files

    def stream_cap(self) -> int:
        """The most decompressed tar bytes such an archive can need, margin included."""
        return self.bytes + HEADER_MARGIN_FIXED + HEADER_MARGIN_PER_FILE * (self.files + 1)


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class CappedReader:
    """A read-only stream that refuses to deliver more than `cap` bytes in total."""

    def __init__(self, stream: _Readable, cap: int | None, what: str):
        self.stream = stream
        self.cap = cap
        self.what = what
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        if self.cap is not None:
            room = self.cap - self.count + 1          # one byte past the cap proves it is exceeded
            size = room if size is None or size < 0 else min(size, room)
        data = self.stream.read(size)
        self.count += len(data)
        if self.cap is not None and self.count > self.cap:
            raise UnsafeArchive(f"{self.what} unpacks to more than {self.cap} bytes, the most its manifest "
                                f"entry allows; refused (a decompression bomb or a wrong manifest)")
        return data


def _refuse(name: str, why: str) -> UnsafeArchive:
    return UnsafeArchive(f"archive member {name[:200]!r} {why}; refused (nothing was kept)")


def vet_member(member: tarfile.TarInfo, root: str, kinds: dict) -> list:
    """The member's path parts, after every check; records its kind in `kinds`."""
    name = member.name
    if not name or name.startswith("/") or "\\" in name or any(ord(c) < 32 or c == "\x7f" for c in name):
        raise _refuse(name, "has an absolute, non-POSIX or control-character path")
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise _refuse(name, "has an empty, '.' or '..' path part")
    if len(parts) > MAX_DEPTH or any(len(p.encode("utf-8", "surrogateescape")) > MAX_PART_BYTES for p in parts):
        raise _refuse(name, f"is deeper than {MAX_DEPTH} parts or has a part longer than {MAX_PART_BYTES} bytes")
    if parts[0] != root:
        raise _refuse(name, f"is outside the expected top-level entry {root!r}")
    if member.issym() or member.islnk():
        raise _refuse(name, "is a link (blobs hold only plain files and directories)")
    if member.type == tarfile.DIRTYPE:
        kind = "dir"
    elif member.type in _FILE_TYPES and member.sparse is None:
        kind = "file"
    else:
        raise _refuse(name, "is a device, FIFO, sparse or other special file")
    if name in kinds:
        raise _refuse(name, "appears twice")
    for depth in range(1, len(parts)):
        parent = "/".join(parts[:depth])
        if kinds.get(parent) != "dir":
            raise _refuse(name, f"lies under {parent!r}, which is not a directory listed before it")
    kinds[name] = kind
    return parts


def _parent_fd(root_fd: int, parts: list) -> int:
    """An fd of the directory holding parts[-1], walked without following any link."""
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, _OPEN_DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_file(tar: tarfile.TarFile, member: tarfile.TarInfo, root_fd: int, parts: list, mode: int) -> None:
    source = tar.extractfile(member)
    assert source is not None, "vet_member lets through only directories and regular files"
    parent = _parent_fd(root_fd, parts)
    try:
        fd = os.open(parts[-1], _CREATE_FILE, mode, dir_fd=parent)
    finally:
        os.close(parent)
    with os.fdopen(fd, "wb") as out:
        remaining = member.size
        while remaining > 0:
            chunk = source.read(min(CHUNK, remaining))
            if not chunk:
                raise _refuse(member.name, "is cut short")
            out.write(chunk)
            remaining -= len(chunk)


def extract(tar: tarfile.TarFile, root: str, dest_dir: str | os.PathLike[str], limits: Limits | None, *,
            file_mode: int = 0o644, dir_mode: int = 0o755, progress: Callable[[], object] | None = None) -> int:
    """Extract every member of a streaming `tar` into the empty directory `dest_dir`.

    Returns the bytes of regular files written. `progress()` is called after each member.
    """
    kinds: dict = {}
    files = written = 0
    root_fd = os.open(dest_dir, _OPEN_DIR)
    try:
        for member in tar:
            parts = vet_member(member, root, kinds)
            if kinds[member.name] == "dir":
                parent = _parent_fd(root_fd, parts)
                try:
                    os.mkdir(parts[-1], dir_mode, dir_fd=parent)
                finally:
                    os.close(parent)
            else:
                files += 1
                written += member.size
                if limits is not None and (files > limits.files or written > limits.bytes):
                    raise _refuse(member.name, f"takes the archive past its manifest entry's {limits.files} "
                                               f"file(s) / {limits.bytes} bytes")
                _write_file(tar, member, root_fd, parts, file_mode)
            if progress is not None:
                progress()
    except OSError as exc:
        raise UnsafeArchive(f"cannot unpack archive into {dest_dir}: {exc.strerror or exc}; "
                            f"nothing was kept") from None
    except tarfile.TarError as exc:
        raise UnsafeArchive(f"archive is not a valid tar stream ({exc}); nothing was kept") from None
    finally:
        os.close(root_fd)
    return written
