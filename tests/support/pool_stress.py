"""Stop evaluate.py's worker pool at random moments, many times, in one process (issue 46).

Run as ``python -m tests.support.pool_stress ROUNDS SEED [case ...] [--dead-worker-grace S]``
(tests/test_hang_sweep.py does, with a grace of 0.3 s). Each round starts a ``Workers`` pool
whose items return large results (so that the workers spend most of their time writing to the
pool's result pipe, where a worker killed mid-write tears a message), then ends the ``with``
block at a random moment by one of the cases below. A round that has not ended within
``LIMIT`` seconds is a hang: faulthandler prints every thread's stack and the process exits
with status 1. After each round no worker may be left, and the round must have ended the way
its case stops it (a Ctrl-C as KeyboardInterrupt, a dead worker as its error). The last line is
``ok ROUNDS`` when every round ended.

Cases: ``error`` (an exception in the main process), ``ctrl-c`` (SIGINT to the main
process), ``item-error`` (an item raises in a worker while the others write results),
``worker-dies`` (a worker is killed halfway through writing its result: the pool must
break with an error, not wait). ``--dead-worker-grace`` sets how long the pool waits for a
dead worker to show before it tears itself down (``DEAD_WORKER_GRACE_SECONDS``, 2 s): each
``worker-dies`` round waits it out once.
"""
from __future__ import annotations

import argparse
import faulthandler
import multiprocessing
import os
import random
import signal
import sys
import time

from resolver.core import UserError
from resolver.ingest import pipeline
from resolver.ingest.pipeline import Workers

LIMIT = float(os.environ.get("REASONSCAPE_HANG_LIMIT", "30"))    # a hang detector, not a timing test
RESULT_BYTES = int(os.environ.get("POOL_STRESS_MB", "1")) << 20   # a write takes milliseconds: a kill lands in one
ITEMS = 12


class Stop(Exception):
    """The error that ends a round in the main process."""


def _payload(n: int) -> bytes:
    """A large result, made quickly (the worker then spends its time writing it)."""
    return bytes([n % 256]) * RESULT_BYTES


def _payload_or_error(n: int) -> bytes:
    if n == 3:
        time.sleep(random.uniform(0, 0.05))
        raise UserError("item 3 is bad")
    return _payload(n)


def _payload_then_die(n: int) -> bytes:
    """Item 2 is killed after writing half of its result (the worker's own pipe writer is patched:
    it runs in this forked worker only), so the pool's reader holds a torn message."""
    if n == 2:
        from multiprocessing.connection import Connection

        def send_half_then_die(self: Connection, buf: bytes, write=os.write) -> None:
            if len(buf) > 1 << 20:
                write(self.fileno(), bytes(buf[: len(buf) // 2]))
                os.kill(os.getpid(), signal.SIGKILL)
            Connection._send_whole(self, buf)  # type: ignore[attr-defined]

        Connection._send_whole = Connection._send  # type: ignore[attr-defined]
        Connection._send = send_half_then_die  # type: ignore[method-assign]
    return _payload(n)


ENDINGS = {"error": "error", "ctrl-c": "ctrl-c", "item-error": "item error", "worker-dies": "worker died"}


def one_round(case: str, rng: random.Random) -> str:
    """One pool stopped by ``case``; returns what ended it."""
    function = {"item-error": _payload_or_error, "worker-dies": _payload_then_die}.get(case, _payload)
    try:
        with Workers(2, ITEMS) as pool:
            getters = pool.map(function, range(ITEMS))
            if case in ("error", "ctrl-c"):
                deadline = time.monotonic() + rng.uniform(0.0, 0.3)
                for get in getters:               # read some results, as the pipeline does
                    get()
                    if time.monotonic() > deadline:
                        break
                if case == "ctrl-c":
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(5)                 # KeyboardInterrupt arrives here
                raise Stop()
            for get in getters:
                get()
    except Stop:
        return "error"
    except KeyboardInterrupt:
        return "ctrl-c"
    except UserError as exc:
        return "worker died" if "worker process died" in str(exc) else "item error"
    return "no error"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.pool_stress")
    parser.add_argument("rounds", type=int)
    parser.add_argument("seed", type=int)
    # checked below: argparse refuses an empty list against `choices` (the default cases apply)
    parser.add_argument("cases", nargs="*", metavar="case", help=", ".join(ENDINGS))
    parser.add_argument("--dead-worker-grace", type=float, metavar="S")
    args = parser.parse_args(argv)
    rounds, seed, cases = args.rounds, args.seed, args.cases or ["error", "ctrl-c", "item-error"]
    unknown = sorted(set(cases) - set(ENDINGS))
    if unknown:
        parser.error(f"unknown case {', '.join(unknown)}; valid: {', '.join(ENDINGS)}")
    if args.dead_worker_grace is not None:
        pipeline.DEAD_WORKER_GRACE_SECONDS = args.dead_worker_grace
    # Ctrl-C must raise KeyboardInterrupt here even when this process inherited SIGINT ignored
    # (a suite started in the background): else the ctrl-c rounds would end as plain errors.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rng = random.Random(seed)
    random.seed(seed)
    for number in range(rounds):
        case = cases[number % len(cases)]
        faulthandler.dump_traceback_later(LIMIT, exit=True)
        start = time.monotonic()
        ended = one_round(case, rng)
        faulthandler.cancel_dump_traceback_later()
        left = multiprocessing.active_children()
        print(f"round {number} {case}: {ended} in {time.monotonic() - start:.2f} s, {len(left)} workers left",
              flush=True)
        if left or ended != ENDINGS[case]:       # each round ends the way its case stops it
            return 1
    print(f"ok {rounds}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
