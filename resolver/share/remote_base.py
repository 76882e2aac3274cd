"""What every data.py remote shares: its errors, retries with back-off (tenacity), resumable `.part`
downloads with progress bars, and the Remote interface (docs/data.md).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

from resolver.core import UserError
from resolver.core.progress import open_bar
from resolver.share.blobs import short

if TYPE_CHECKING:
    from tenacity import RetryCallState

    from resolver.core.progress import Bar

_Result = TypeVar("_Result")

RETRIES = 4                          # attempts per remote operation, the first included


BACKOFF = 0.5                        # seconds; doubles after every failed attempt


class RemoteError(UserError):
    """A remote could not be reached or refused an operation (after retrying)."""


class TransientError(Exception):
    """A failure worth retrying (connection reset, 5xx, throttling)."""


def _ignore(line: str) -> None:
    pass


def _retrying(action: Callable[[], _Result], what: str, retries: int, backoff: float,
              warn: Callable[[str], None] = _ignore) -> _Result:
    """Run `action` up to `retries` times while it raises TransientError (tenacity), then RemoteError.

    `warn(line)` hears of each retry (data.py writes it above the progress bars).

    This is the only retry layer for a remote call: S3Remote turns botocore's own retries
    off, and httpx's module-level calls do not retry (docs/data.md). Each attempt is
    a whole operation, so a download that broke off resumes from its .part file.
    """
    # Imported here, not at the top: `data.py --help` and local-only commands never retry.
    from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

    def say_retry(state: RetryCallState) -> None:
        assert state.outcome is not None, "tenacity calls its hooks after an attempt"
        warn(f"warning: {what}: {state.outcome.exception()}; retrying in {state.upcoming_sleep:.1f} s "
             f"({state.attempt_number}/{retries})")

    def give_up(state: RetryCallState) -> NoReturn:
        assert state.outcome is not None, "tenacity gives up after an attempt"
        raise RemoteError(f"{what}: {state.outcome.exception()} (gave up after {retries} attempts)") from None

    return Retrying(retry=retry_if_exception_type(TransientError), stop=stop_after_attempt(retries),
                    wait=wait_exponential(multiplier=backoff), before_sleep=say_retry, retry_error_callback=give_up)(action)


def _download_bar(total: int | None, blob: str, progress: Callable[..., Any] | None, initial: int = 0) -> Any:
    return open_bar(progress, total=total, initial=initial, unit="B", unit_scale=True, unit_divisor=1024,
                    desc=f"download {short(blob)}", leave=False, dynamic_ncols=True)


def _upload_bar(total: int | None, blob: str, progress: Callable[..., Any] | None) -> Any:
    return open_bar(progress, total=total, unit="B", unit_scale=True, unit_divisor=1024,
                    desc=f"upload {short(blob)}", leave=False, dynamic_ncols=True)


class TooLarge(RemoteError):
    """The remote sent (or announced) more bytes than the manifest records for the blob."""


def _keep(out: IO[bytes], chunk: bytes, bar: Bar, limit: int | None = None) -> None:
    """Append downloaded bytes to the .part file and flush, so an interruption keeps them.

    With `limit` (the manifest's recorded size), a download that grows past it is
    stopped at once: the hash check would refuse it anyway, but only after the disk
    had taken whatever a hostile remote chose to stream.
    """
    if limit is not None and out.tell() + len(chunk) > limit:
        raise TooLarge(f"the remote sent more than the {limit} bytes the manifest records for this blob; "
                       f"refused (the partial download was removed)")
    out.write(chunk)
    out.flush()
    bar.update(len(chunk))


def _check_announced(size: int | None, limit: int | None, blob: str) -> None:
    if limit is not None and size is not None and size > limit:
        raise TooLarge(f"blob {short(blob)} on the remote is {size} bytes, more than the {limit} the "
                       f"manifest records; refused before downloading")


def part_path(final: Path) -> Path:
    return final.with_name(final.name + ".part")


class Remote:
    """Common behaviour: retrying fetch into a resumable .part file."""

    url: str
    read_only = False
    # Hears of each retry; open_remote sets the caller's (data.py writes it above the bars).
    warn: Callable[[str], None] = staticmethod(_ignore)
    retries = RETRIES
    backoff = BACKOFF

    def __str__(self) -> str:
        return self.url

    # The transport, one per subclass (remote_dir, remote_http, remote_s3); one attempt each.
    def _has(self, blob: str) -> bool:
        raise NotImplementedError

    def _download(self, blob: str, part: Path, offset: int, progress: Callable[..., Any] | None, limit: int | None = None) -> None:
        raise NotImplementedError

    def _upload(self, blob: str, source: Path, progress: Callable[..., Any] | None) -> None:
        raise NotImplementedError

    def fetch(self, blob: str, final: Path, progress: Callable[..., Any] | None = None, limit: int | None = None) -> None:
        """Download a blob to `final` (via `final.part`, resuming a previous partial download).

        `limit` is the most bytes the blob may have (the manifest's recorded size);
        a remote that announces or sends more is refused and the .part removed.
        """
        final = Path(final)
        final.parent.mkdir(parents=True, exist_ok=True)
        part = part_path(final)

        def attempt() -> None:
            offset = part.stat().st_size if part.exists() else 0
            if limit is not None and offset > limit:
                part.unlink()
                offset = 0
            self._download(blob, part, offset, progress, limit)

        try:
            _retrying(attempt, f"cannot fetch blob {blob} from {self.url}", self.retries, self.backoff, self.warn)
        except TooLarge:
            part.unlink(missing_ok=True)
            raise
        os.replace(part, final)

    def push(self, blob: str, source: Path, progress: Callable[..., Any] | None = None) -> None:
        if self.read_only:
            raise UserError(f"remote {self.url} is read-only (http/https); push to a directory or an s3:// bucket")
        _retrying(lambda: self._upload(blob, Path(source), progress),
                  f"cannot upload blob {blob} to {self.url}", self.retries, self.backoff, self.warn)

    def has(self, blob: str) -> bool:
        return _retrying(lambda: self._has(blob), f"cannot query blob {blob} on {self.url}",
                         self.retries, self.backoff, self.warn)


def _content_length(value: str | None) -> int | None:
    """A Content-Length header as a number; None when absent or not a plain decimal."""
    return int(value) if value and value.strip().isascii() and value.strip().isdigit() else None
