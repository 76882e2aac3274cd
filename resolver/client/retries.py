"""The chat client's retry policy for one request, run by tenacity (docs/runner.md,
*Retries and failures*).

tenacity runs the loop: which exceptions are retried (`Transient`), sleeping, stopping.
The rules it consults need memory across a request's attempts (a loading budget that
does not use up retries, the same bad reply several times in a row), so each request
that fails once gets a `RequestRetries` whose methods are tenacity's hooks:

* after a failed attempt, `_judge` decides: wait for a loading model (up to
  `load_timeout`, not counted against `max_retries`), give up (the same reply
  SAME_REPLY_ATTEMPTS times in a row, or `max_retries` used up), or back off
  (full-jitter exponential, never shorter than the server's `Retry-After`);
* before each sleep the retry is counted in the client's stats and reported
  to `on_retry` (the progress bar).

The first attempt of every request runs before any of this (ChatClient.complete):
nearly every request succeeds at once, and tenacity's loop costs ~27 us of CPU per
request, a few percent of the runner's CPU per sample (docs/performance.md).
"""
from __future__ import annotations

import random
import time
from typing import Awaitable, Callable, NoReturn, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type

from resolver.client.stats import ClientStats

_Result = TypeVar("_Result")

SAME_REPLY_ATTEMPTS = 4        # the same bad reply this many times in a row ends the request
LOADING_POLL_MIN_S = 0.5       # a loading server is asked again at most this often, whatever it asks


def loading_pause(asked: float | None, longest: float) -> float:
    """The wait before asking a loading server again: its Retry-After (2 s when it names none),
    kept within LOADING_POLL_MIN_S..`longest` (docs/runner.md, --load-timeout)."""
    return max(LOADING_POLL_MIN_S, min(2.0 if asked is None else asked, longest))


class RequestFailed(Exception):
    """A request that will not succeed by retrying (or ran out of retries).

    `kind`: "failed" (a failed sample), "prompt_too_long" (a finished sample: the
    prompt does not fit the model's context) or "fatal" (no request can succeed:
    bad API key, no quota).
    """

    def __init__(self, message: str, status: int | None = None, retryable: bool = False, kind: str = "failed",
                 sent: str | None = None):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.kind = kind
        self.sent = sent             # the start of a malformed reply, as the server sent it


class Transient(Exception):
    """An attempt failed in a way worth retrying.

    `reason`: the retry reason counted in the stats ("connection", "timeout",
    "malformed", "loading" or the HTTP status); `signature`: what makes two failed
    attempts "the same reply" (None: never the same, e.g. a timeout); `sent`: the
    start of a malformed reply.
    """

    def __init__(self, reason: str, message: str, retry_after: float | None = None, *,
                 signature: object = None, sent: str | None = None, status: int | None = None):
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after
        self.signature = signature
        self.sent = sent
        self.status = status


def _failure(state: RetryCallState) -> Transient:
    """The exception of the attempt tenacity is judging: always a Transient, since the hooks run
    only for attempts `retry_if_exception_type(Transient)` retries."""
    exc = state.outcome.exception() if state.outcome is not None else None
    assert isinstance(exc, Transient), f"tenacity hook called for {exc!r}"
    return exc


class RequestRetries:
    """One request's retry budget and the tenacity hooks that spend it."""

    __slots__ = ("max_retries", "backoff_base", "backoff_cap", "load_timeout", "stats", "on_retry",
                 "retries", "loading_since", "last_signature", "same_replies", "pause", "verdict")

    def __init__(self, *, max_retries: int, backoff_base: float, backoff_cap: float, load_timeout: float,
                 stats: ClientStats, on_retry: Callable[[str], None] | None):
        self.max_retries, self.backoff_base, self.backoff_cap = max_retries, backoff_base, backoff_cap
        self.load_timeout = load_timeout
        self.stats, self.on_retry = stats, on_retry
        self.retries = 0                  # retries spent from max_retries (loading waits are not)
        self.loading_since: float | None = None
        self.last_signature: object = None
        self.same_replies = 0
        self.pause = 0.0                  # the next sleep, decided by _judge
        self.verdict: RequestFailed | None = None

    async def run(self, attempt: Callable[[], Awaitable[_Result]], first: Transient) -> _Result:
        """Retry `attempt` after its first failure `first`, until it succeeds or the budget says stop.

        `first` is replayed as tenacity's first attempt, so one set of rules judges every failure.
        """
        pending = [first]

        async def next_attempt() -> _Result:
            if pending:
                raise pending.pop()
            return await attempt()

        retrying = AsyncRetrying(retry=retry_if_exception_type(Transient), after=self._judge,
                                 wait=self._wait, stop=self._stop, before_sleep=self._note,
                                 retry_error_callback=self._give_up)
        return await retrying(next_attempt)

    # ---- tenacity hooks, in the order tenacity calls them after a failed attempt
    def _judge(self, state: RetryCallState) -> None:
        exc = _failure(state)
        if exc.reason == "loading":
            now = time.monotonic()
            self.loading_since = self.loading_since or now
            waited = now - self.loading_since
            if waited < self.load_timeout:
                self.pause = min(self.load_timeout - waited, loading_pause(exc.retry_after, 10.0))
                return
        same = exc.signature is not None and exc.signature == self.last_signature
        self.last_signature, self.same_replies = exc.signature, (self.same_replies + 1 if same else 1)
        if self.same_replies >= SAME_REPLY_ATTEMPTS:
            # The server's answer to this request, not bad luck: the backoff budget would not change it.
            self.verdict = RequestFailed(f"gave up after {self.retries + 1} attempts, the same reply each time: {exc}",
                                         status=exc.status, sent=exc.sent)
        elif self.retries >= self.max_retries or exc.reason == "loading":
            self.verdict = RequestFailed(f"gave up after {self.retries + 1} attempts: {exc}",
                                         retryable=True, status=exc.status, sent=exc.sent)
        else:
            self.pause = self._backoff(exc.retry_after)
            self.retries += 1

    def _wait(self, state: RetryCallState) -> float:
        return self.pause

    def _stop(self, state: RetryCallState) -> bool:
        return self.verdict is not None

    def _note(self, state: RetryCallState) -> None:
        reason = _failure(state).reason
        self.stats.note_retry(reason)
        if self.on_retry:
            self.on_retry(reason)

    def _give_up(self, state: RetryCallState) -> NoReturn:
        assert self.verdict is not None, "tenacity gives up only when _stop saw a verdict"
        raise self.verdict from None

    def _backoff(self, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, never shorter than what the server asked."""
        if retry_after is not None:
            return retry_after + random.uniform(0, 0.1 * retry_after + 0.05)
        return random.uniform(0, min(self.backoff_cap, self.backoff_base * 2 ** self.retries))
