"""What a failed request means for an API-mode run (docs/runner.md, *Retries and failures*).

A request that fails for good leaves its sample out of the run folder and the cache, is counted
in the summary, and its message is shown once. Two guards stop a run that cannot succeed, with
one line: the first ABORT_AFTER_FAILURES requests all failing (a wrong model name, a sampler
value the server refuses, an --apibase that is not a chat server), and a streak of failures
2 x P x T long (at least ABORT_AFTER_FAILURES) with no answer in between (the server went away).
Until the server has answered once, failure lines are held back, so that a run stopped by its
first failures prints that one line.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.core import UserError

if TYPE_CHECKING:
    from resolver.run.report import Reporter
    from resolver.run.summary import RunSummary

__all__ = ["ABORT_AFTER_FAILURES", "FailurePolicy"]

ABORT_AFTER_FAILURES = 10    # this many failures before any success: the setup is wrong


class FailurePolicy:
    """Decides what each outcome of a request means: counts failures into `summary`, shows
    lines through `reporter`, and raises the UserError that stops the run. `in_flight` is
    P x T (the streak guard's length is twice that)."""

    def __init__(self, summary: RunSummary, reporter: Reporter, in_flight: int) -> None:
        self.summary = summary
        self.reporter = reporter
        self.streak_limit = max(ABORT_AFTER_FAILURES, 2 * in_flight)
        self.streak = 0                              # failures since the last answer
        self._held: list[str] | None = []            # failure lines held until the server answers once
        self._malformed = 0                          # failures whose replies were not chat completions
        # the line that stopped the run: requests in flight that fail after it raise the same line,
        # so the run ends with one message whichever of them is reported
        self._stop_line: str | None = None

    def server_answered(self) -> None:
        """The server answered (a completion, or "prompt too long"): it works. Ends the streak
        and shows the held lines. (summary.answered, which the first guard reads, counts only
        completions; the caller counts it.)"""
        self.streak = 0
        if self._held is not None:
            self.release()

    def fatal(self, message: str, key_hint: str) -> UserError:
        """The error that stops the run at once: a rejected key or exhausted quota."""
        return UserError(f"stopping: {message}; no request can succeed like this "
                         f"(check {key_hint} and the account's quota)")

    def failed(self, message: str, sent: str | None = None) -> None:
        """A request failed for good with `message` (`sent`: the start of a reply that was not a
        chat completion, if that was the reason). Raises UserError when a guard stops the run."""
        if self._stop_line is not None:
            raise UserError(self._stop_line)
        summary = self.summary
        summary.failed += 1
        self.streak += 1
        self._malformed += sent is not None
        first = message not in summary.failures
        summary.failures[message] += 1
        if summary.failed >= ABORT_AFTER_FAILURES and summary.answered == 0:
            self._stop_line = self._first_failures_line(message, sent)
            raise UserError(self._stop_line)
        if first:
            self._show(f"request failed: {message}")
        if self.streak >= self.streak_limit:
            self._stop_line = (f"stopping: the last {self.streak} requests all failed (last: {message}); "
                               "everything answered so far is saved: run the same command again to resume")
            raise UserError(self._stop_line)

    def release(self) -> None:
        """Show the held lines, and every later one at once (the server answered, or the run ends)."""
        held, self._held = self._held or [], None
        for line in held:
            self.reporter.note(line)

    def _first_failures_line(self, message: str, sent: str | None) -> str:
        """The one line that stops a run whose first requests all failed."""
        failed = self.summary.failed
        if self._malformed == failed and sent is not None:
            return (f"stopping: the first {failed} requests all came back as replies that are not chat "
                    f"completions (last: {message}; the server sent: {sent}); check that --apibase is an "
                    "OpenAI-compatible endpoint")
        return (f"stopping: the first {failed} requests all failed (last: {message}); "
                "check --model, --apibase and the sampler")

    def _show(self, line: str) -> None:
        if self._held is None:
            self.reporter.note(line)
        else:
            self._held.append(line)
