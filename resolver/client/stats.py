"""The chat client's counters (attempts, retries, failures), in a module of their own so
that the client (chat.py) and its retry policy (retries.py) both import them without an
import circle between the two."""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ClientStats"]


@dataclass
class ClientStats:
    """Counters shown in the progress bar and the summary."""

    sent: int = 0           # HTTP attempts made
    retries: int = 0        # attempts that were repeats of an earlier one
    failed: int = 0         # requests given up on
    retry_reasons: dict = field(default_factory=dict)
    resent: int = 0         # requests sent again at once: a pooled connection the server had closed (docs/runner.md)

    def note_retry(self, reason: str) -> None:
        self.retries += 1
        self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + 1
