"""A read-only remote over HTTP(S), for public pulls; resumes with Range requests.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from resolver.core import UserError
from resolver.share.blobs import blob_key
from resolver.share.remote_base import Remote, RemoteError, TransientError, _check_announced, _content_length, _download_bar, _keep

if TYPE_CHECKING:
    import httpx


class HttpRemote(Remote):
    """https://host/path (or http://) serving the blob layout; read-only."""

    read_only = True

    def __init__(self, url: str, retries: int, backoff: float):
        self.url = url
        self.base = url.rstrip("/")
        self.retries, self.backoff = retries, backoff

    def _url(self, blob: str) -> str:
        return f"{self.base}/{blob_key(blob)}"

    @staticmethod
    def _transport_errors() -> tuple[type[Exception], ...]:
        import httpx

        return (httpx.TransportError, httpx.StreamError)

    def _has(self, blob: str) -> bool:
        import httpx

        try:
            response = httpx.head(self._url(blob), timeout=30, follow_redirects=True)
        except self._transport_errors() as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        if response.status_code == 404:
            return False
        self._raise_for_status(response, blob)
        return True

    def _raise_for_status(self, response: httpx.Response, blob: str) -> None:
        status = response.status_code
        if status >= 500 or status == 429:
            raise TransientError(f"HTTP {status}")
        if status == 404:
            raise RemoteError(f"blob {blob} is not on remote {self.url} (HTTP 404)")
        if status >= 400:
            raise RemoteError(f"{self.url} refused blob {blob}: HTTP {status}")

    def _download(self, blob: str, part: Path, offset: int, progress: Callable[..., Any] | None, limit: int | None = None) -> None:
        import httpx

        headers = {"Range": f"bytes={offset}-"} if offset else {}
        try:
            with httpx.stream("GET", self._url(blob), headers=headers, timeout=60,
                              follow_redirects=True) as response:
                if response.status_code == 416:        # .part already complete or too long
                    part.unlink(missing_ok=True)
                    raise TransientError("partial download did not fit the blob; starting over")
                self._raise_for_status(response, blob)
                if response.status_code != 206:        # server ignored Range: start from zero
                    offset = 0
                length = _content_length(response.headers.get("content-length"))
                _check_announced(offset + length if length is not None else None, limit, blob)
                with open(part, "r+b" if offset else "wb") as out, \
                        _download_bar(offset + (length or 0) or None, blob, progress, offset) as bar:
                    out.seek(offset)
                    out.truncate()
                    for chunk in response.iter_bytes():     # as it arrives: a stall keeps what came
                        _keep(out, chunk, bar, limit)
        except self._transport_errors() as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from None

    def _upload(self, blob: str, source: Path, progress: Callable[..., Any] | None) -> None:
        raise UserError(f"remote {self.url} is read-only")
