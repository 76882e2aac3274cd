"""Where blobs are published: a local directory, an S3-compatible bucket, or a read-only URL.

Every remote stores a blob under the same key as the local cache,
``<first 2 hex>/<sha256>.tar.zst``, below its root. Three kinds:

* ``file:///abs/dir``, ``file:rel/dir`` or a plain path: a directory (the default).
  Relative paths are relative to the manifest's directory.
* ``s3://bucket/prefix``: through boto3, so the standard AWS settings apply
  (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_PROFILE``, ``AWS_REGION``,
  and ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3`` for MinIO, R2 and other
  S3-compatible stores).
* ``https://host/path`` (and ``http://``): read-only, for public pulls.

Downloads go to ``<final>.part`` (flushed per chunk, so even ``kill -9`` keeps what
was received) and continue from its size after an interruption
(``Range`` requests over HTTP and S3, a seek for directories). Network errors are
retried with exponential back-off, then reported as a RemoteError naming the blob
and the remote.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from urllib.parse import urlparse

from resolver.core import UserError
from resolver.share.remote_base import BACKOFF, RETRIES, Remote
from resolver.share.remote_dir import DirectoryRemote
from resolver.share.remote_http import HttpRemote
from resolver.share.remote_s3 import S3Remote

ENV_REMOTE = "REASONSCAPE_REMOTE"


DEFAULT_REMOTE = ".remote"          # relative to the manifest's directory: data/.remote


def choose_remote_url(flag: str | None, manifest_remote: str | None) -> str:
    """The remote to use: --remote, else $REASONSCAPE_REMOTE, else the manifest's, else data/.remote."""
    for candidate in (flag, os.environ.get(ENV_REMOTE), manifest_remote):
        if candidate:
            return candidate
    return DEFAULT_REMOTE


def open_remote(url: str, base_dir: str | PathLike[str], retries: int = RETRIES, backoff: float = BACKOFF,
                warn: Callable[[str], None] | None = None) -> Remote:
    """Build the remote object for a URL; `base_dir` anchors relative directory paths and
    `warn(line)`, when given, hears of each retry."""
    remote = _remote_for(url, base_dir, retries, backoff)
    if warn is not None:
        remote.warn = warn
    return remote


def _remote_for(url: str, base_dir: str | PathLike[str], retries: int, backoff: float) -> Remote:
    try:
        parsed = urlparse(url)
        parsed.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise UserError(f"bad remote {url!r} ({exc}); valid: a directory path, file://, s3://bucket/prefix, "
                        f"https://host/path") from None
    scheme = parsed.scheme.lower()
    if scheme == "s3":
        return S3Remote(url, retries, backoff)
    if scheme in ("http", "https"):
        return HttpRemote(url, retries, backoff)
    if scheme == "file":
        path = parsed.path if parsed.netloc in ("", "localhost") else None
        if not path:
            raise UserError(f"bad remote {url!r}; use file:///absolute/dir, file:relative/dir or a plain path")
        return DirectoryRemote(Path(base_dir) / path, url)
    if scheme and len(scheme) > 1:
        raise UserError(f"unknown remote scheme in {url!r}; valid: a directory path, file://, s3://, https://")
    return DirectoryRemote(Path(base_dir) / url, url)
