"""A remote in an S3-compatible bucket (`s3://bucket/prefix`), through boto3 and the standard
AWS settings (docs/data.md).
"""
from __future__ import annotations

from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, TypeVar
from urllib.parse import urlparse

from resolver.core import UserError
from resolver.share.blobs import CHUNK, blob_key
from resolver.share.remote_base import Remote, RemoteError, TransientError, _check_announced, _download_bar, _keep, _upload_bar

if TYPE_CHECKING:
    from resolver.core.progress import Bar

_Result = TypeVar("_Result")


class S3Remote(Remote):
    """s3://bucket/prefix through boto3 (credentials and endpoint from the AWS environment)."""

    def __init__(self, url: str, retries: int, backoff: float):
        parsed = urlparse(url)
        if not parsed.netloc:
            raise UserError(f"bad remote {url!r}; use s3://bucket/optional/prefix")
        self.url, self.bucket = url, parsed.netloc
        self.prefix = parsed.path.strip("/")
        self.retries, self.backoff = retries, backoff
        self._client = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3
            from botocore import UNSIGNED
            from botocore.config import Config

            session = boto3.session.Session()
            # One retry layer per call: remote_base's (it resumes a broken download from
            # its .part), so botocore makes each request once (docs/data.md).
            config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=10, read_timeout=60)
            if session.get_credentials() is None:
                # No credentials anywhere: read a public bucket anonymously (pushes will be refused).
                config = config.merge(Config(signature_version=UNSIGNED))
            self._client = session.client("s3", config=config)
        return self._client

    def _key(self, blob: str) -> str:
        return f"{self.prefix}/{blob_key(blob)}" if self.prefix else blob_key(blob)

    def _call(self, action: Callable[[], _Result], blob: str) -> _Result:
        """Run one boto3 call, sorting its exceptions into retryable and final ones."""
        from boto3.exceptions import S3UploadFailedError
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return action()
        except S3UploadFailedError as exc:
            # upload_file wraps the real cause; classify that one.
            cause = exc.__context__
            if isinstance(cause, (ClientError, BotoCoreError)):
                raise self._classify(cause, blob) from None
            raise RemoteError(f"cannot upload blob {blob} to {self.url}: {exc}") from None
        except (ClientError, BotoCoreError, ConnectionError, TimeoutError) as exc:
            raise self._classify(exc, blob) from None

    def _classify(self, exc: Exception, blob: str) -> Exception:
        from botocore.exceptions import ClientError, NoCredentialsError

        if isinstance(exc, NoCredentialsError):
            return RemoteError(f"no AWS credentials for {self.url}; set AWS_ACCESS_KEY_ID and "
                               f"AWS_SECRET_ACCESS_KEY or AWS_PROFILE")
        if not isinstance(exc, ClientError):
            return TransientError(f"{type(exc).__name__}: {exc}")
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if code == "NoSuchBucket":
            return RemoteError(f"bucket {self.bucket!r} does not exist at {self.url}; create it first")
        if code in ("404", "NoSuchKey", "NotFound"):
            return FileNotFoundError(blob)
        if status >= 500 or code in ("SlowDown", "RequestTimeout", "Throttling", "ServiceUnavailable"):
            return TransientError(f"S3 error {code or status}")
        return RemoteError(f"{self.url} refused the request for blob {blob}: {code or status} {exc}")

    def _has(self, blob: str) -> bool:
        try:
            self._call(lambda: self.client.head_object(Bucket=self.bucket, Key=self._key(blob)), blob)
            return True
        except FileNotFoundError:
            return False

    def _download(self, blob: str, part: Path, offset: int, progress: Callable[..., Any] | None, limit: int | None = None) -> None:
        extra = {"Range": f"bytes={offset}-"} if offset else {}
        try:
            response = self._call(lambda: self.client.get_object(
                Bucket=self.bucket, Key=self._key(blob), **extra), blob)
        except FileNotFoundError:
            raise RemoteError(f"blob {blob} is not on remote {self.url}") from None
        except RemoteError as exc:
            if offset and "InvalidRange" in str(exc):   # the .part is already whole or longer
                part.unlink(missing_ok=True)
                raise TransientError("partial download was longer than the blob; starting over") from None
            raise
        total = offset + int(response.get("ContentLength", 0))
        _check_announced(total, limit, blob)
        body = response["Body"]
        with open(part, "r+b" if offset else "wb") as out, _download_bar(total, blob, progress, offset) as bar:
            out.seek(offset)
            out.truncate()
            self._call(lambda: self._copy_body(body, out, bar, limit), blob)

    @staticmethod
    def _copy_body(body: Any, out: IO[bytes], bar: Bar, limit: int | None = None) -> None:
        for chunk in iter(lambda: body.read(CHUNK), b""):
            _keep(out, chunk, bar, limit)

    def _upload(self, blob: str, source: Path, progress: Callable[..., Any] | None) -> None:
        with _upload_bar(source.stat().st_size, blob, progress) as bar:
            self._call(lambda: self.client.upload_file(
                str(source), self.bucket, self._key(blob), Callback=bar.update), blob)
