"""The simulator's fault mode (429s, 500s, stalls, dropped connections, malformed JSON) and
its request counters (docs/simulator.md).
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from resolver.core import UserError

FAULT_KINDS = ("429", "500", "stall", "drop", "malformed")


# ================================================================ faults and stats
@dataclass
class FaultPlan:
    """Rates (0..1) of each injected fault; drawn independently per request."""

    rates: dict = field(default_factory=dict)
    retry_after: float = 1.0
    stall_seconds: float = 30.0
    seed: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self.total = sum(self.rates.values())
        if self.total > 1.0:
            raise UserError(f"fault rates add up to {self.total:g}; their sum must be at most 1")

    def draw(self) -> str | None:
        if not self.total:
            return None
        roll = self._rng.random()
        for kind in FAULT_KINDS:
            roll -= self.rates.get(kind, 0.0)
            if roll < 0:
                return kind
        return None


def parse_faults(spec: str | None, fault_rate: float | None = None) -> dict:
    """`429=0.05,500=0.02,stall=0.01,drop=0.01,malformed=0.01` and/or an even total rate."""
    rates: dict[str, float] = {}
    if fault_rate:
        if not 0 <= fault_rate <= 1:
            raise UserError(f"--fault-rate {fault_rate:g} must be between 0 and 1")
        rates = {k: fault_rate / len(FAULT_KINDS) for k in FAULT_KINDS}
    for item in filter(None, (p.strip() for p in (spec or "").split(","))):
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in FAULT_KINDS:
            raise UserError(f"--faults item {item!r} is not valid; use KIND=RATE with KIND one of "
                            f"{', '.join(FAULT_KINDS)}")
        try:
            rate = float(value)
        except ValueError:
            raise UserError(f"--faults item {item!r}: {value!r} is not a number") from None
        if not 0 <= rate <= 1:
            raise UserError(f"--faults item {item!r}: rate must be between 0 and 1")
        rates[name.strip()] = rate
    return rates


@dataclass
class SimStats:
    requests: int = 0             # POST /v1/chat/completions received
    completions: int = 0          # answered with a completion
    unrecognised: int = 0
    faults: Counter = field(default_factory=Counter)
    by_model: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)
    received_keys: Counter = field(default_factory=Counter)   # cache key -> times received
    answered_keys: Counter = field(default_factory=Counter)   # cache key -> times answered
    in_flight: int = 0            # chat requests being handled now
    max_in_flight: int = 0        # the most at once

    def to_json(self, with_keys: bool = False) -> dict:
        out = {"requests": self.requests, "completions": self.completions,
               "unrecognised": self.unrecognised, "faults": dict(self.faults),
               "by_model": dict(self.by_model), "outcomes": dict(self.outcomes),
               "max_in_flight": self.max_in_flight}
        if with_keys:
            out["received_keys"] = dict(self.received_keys)
            out["answered_keys"] = dict(self.answered_keys)
        return out
