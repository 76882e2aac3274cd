"""A remote that is a local directory (`file://` URLs and plain paths).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from resolver.share.blobs import CHUNK, blob_key
from resolver.share.remote_base import Remote, RemoteError, _check_announced, _download_bar, _keep, _upload_bar


class DirectoryRemote(Remote):
    """A directory laid out like the blob cache (local disk, NFS, a mounted share)."""

    def __init__(self, root: Path, url: str):
        self.root = Path(root)
        self.url = url
        self.retries, self.backoff = 1, 0.0   # local errors do not heal by waiting

    def _path(self, blob: str) -> Path:
        return self.root / blob_key(blob)

    def _has(self, blob: str) -> bool:
        return self._path(blob).is_file()

    def _download(self, blob: str, part: Path, offset: int, progress: Callable[..., Any] | None, limit: int | None = None) -> None:
        source = self._path(blob)
        if not source.is_file():
            raise RemoteError(f"blob {blob} is not on remote {self.url} (looked for {source})")
        size = source.stat().st_size
        _check_announced(size, limit, blob)
        if offset > size:
            offset = 0
        with open(source, "rb") as src, open(part, "r+b" if offset else "wb") as out, \
                _download_bar(size, blob, progress, offset) as bar:
            src.seek(offset)
            out.seek(offset)
            out.truncate()
            for chunk in iter(lambda: src.read(CHUNK), b""):
                _keep(out, chunk, bar, limit)

    def _upload(self, blob: str, source: Path, progress: Callable[..., Any] | None) -> None:
        target = self._path(blob)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".upload-", suffix=".tmp", dir=target.parent)
        try:
            with open(source, "rb") as src, os.fdopen(fd, "wb") as out, \
                    _upload_bar(source.stat().st_size, blob, progress) as bar:
                for chunk in iter(lambda: src.read(CHUNK), b""):
                    out.write(chunk)
                    bar.update(len(chunk))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
