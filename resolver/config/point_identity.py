"""A point's identity: its parameters in canonical types, and the seed they give.

Both the config expansion (resolver.config.loader) and calibration (resolver.config.calibrate)
need the same seed for the same point, so the rule lives here and both import it;
neither imports the other's internals for it.

Canonical types come from the generator's schema: a float parameter written `0` in
a config is the float 0.0 and an int parameter written `3.0` is the int 3, so `0`
and `0.0` give one point, one seed and one set of problems.
"""
from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resolver.tasks import Task


def canonical_params(task: Task, params: dict) -> dict:
    """`params` (without count) with every value coerced to its parameter's type,
    in the order given; UserError when a value is not valid."""
    known = {p.name: p for p in task.params}
    return {k: known[k].check(v, task.name) if k in known else v for k, v in params.items()}


def identity_text(params: dict) -> str:
    """The sorted-key JSON text that names a point (and seeds it)."""
    return json.dumps(params, sort_keys=True)


# runner.py's --seed default (docs/runner.md); every tool that replays a run's problems uses it too
DEFAULT_SEED = 42


def step_seed(params_without_count: dict, base_seed: int = DEFAULT_SEED) -> int:
    """Seed of a step's random.Random: sha256 of the sorted-key JSON, last 8 hex digits, + seed."""
    digest = hashlib.sha256(identity_text(params_without_count).encode()).hexdigest()
    return int(digest[-8:], 16) + base_seed
