"""Helpers shared by the runner and simulator tests (not a test module itself)."""
from __future__ import annotations

import json
import math
import sqlite3
from contextlib import contextmanager
from pathlib import Path

from scipy.optimize import brentq

from resolver.records.run_folders import iter_records
from resolver.sim.simulator import start_simulator_process

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "configs" / "tiny.yaml"
TEMPLATE = REPO / "templates" / "zerocot-nosys.json"
SAMPLER = REPO / "samplers" / "greedy-2k.json"


@contextmanager
def simulator(config=TINY, **kwargs):
    """A real simulator subprocess on a free loopback port."""
    sim = start_simulator_process(str(config) if config else None, port=0, **kwargs)
    try:
        yield sim
    finally:
        sim.stop()


def runner_args(url, tmp_path, *, model="sim-mid", output="results", cache="cache", extra=()):
    """Arguments of a runner.py api-mode command writing under tmp_path."""
    return ["--config", TINY, "--template", TEMPLATE, "--sampler", SAMPLER, "--model", model,
            "--apibase", url, "--output", tmp_path / output, "--cache", tmp_path / cache, "--quiet",
            *extra]


def run_folders(output: Path) -> list[Path]:
    return sorted(p for p in Path(output).iterdir() if p.is_dir())


def read_folder(folder: Path) -> list[dict]:
    """Every record of a run folder; fails the test on a malformed line."""
    records = []
    for path in sorted(Path(folder).glob("*.ndjson")):
        for line_no, record, error in iter_records(path):
            assert error is None, error
            records.append(record)
    return records


def comparable(records) -> dict:
    """key -> the fields that must agree between two runs of the same experiment."""
    fields = ("answer", "reasoning", "usage", "timings", "is_valid", "is_correct", "is_truncated",
              "extracted_answer", "input", "target", "messages")
    out = {}
    for r in records:
        assert r["key"] not in out, f"sample {r['key']} written twice"
        out[r["key"]] = {f: r.get(f) for f in fields}
    return out


def cache_keys(cache_dir: Path) -> set[str]:
    """Keys in the response cache, read with plain sqlite3 (independent of resolver.client.cache)."""
    path = Path(cache_dir) / "responses.sqlite"
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT key FROM responses")}


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------- the stopping rule's interval, by hand
Z95 = 1.96


def cc_bounds_by_root(s: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Continuity-corrected Wilson bounds found as the roots of the corrected score equation
    |p - pi| - 1/(2n) = z sqrt(pi (1 - pi) / n) (scipy's brentq; independent of resolver)."""
    p, half = s / n, 0.5 / n
    low = 0.0 if s == 0 else brentq(lambda q: p - half - q - z * math.sqrt(q * (1 - q) / n), 0.0, p - half)
    high = 1.0 if s == n else brentq(lambda q: q - p - half - z * math.sqrt(q * (1 - q) / n), p + half, 1.0)
    return low, high


def skill_by_root(c: int, m: int, guess: float) -> tuple[float, float, bool]:
    """(low, high, below_chance) of mode C_I (docs/statistics.md steps 2-6) on the root-found bounds."""
    raw_low, raw_high = cc_bounds_by_root(c, m)
    low, high = (raw_low * m - guess) / (m - guess), (raw_high * m - guess) / (m - guess)
    if high < 0:
        return 0.0, 0.0, True
    return max(low, 0.0), min(high, raw_high), False


class LoopbackServer:
    """An aiohttp app on a loopback socket, served from a thread; `with` starts and stops it.

    Subclasses define `chat` (POST /v1/chat/completions) and `list_models` (GET /v1/models)
    handlers, and may override `on_start` / `on_stop` (run inside the server's loop).
    The socket is bound in __init__, so `url` is known before the server starts.
    """

    backlog = 64
    ssl_context = None           # an ssl.SSLContext to serve https
    keepalive_timeout = 75.0     # seconds an idle connection is kept open (aiohttp's default)
    handler_cancellation = False  # True: a handler still running when its client hangs up is cancelled

    def __init__(self):
        import socket

        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(self.backlog)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def add_routes(self, app):
        """More routes (e.g. an Azure deployment path); none by default."""

    async def on_start(self):
        pass

    async def on_stop(self):
        pass

    def __enter__(self):
        import asyncio
        import threading

        from aiohttp import web

        ready = threading.Event()

        async def main():
            await self.on_start()
            app = web.Application()
            app.router.add_post("/v1/chat/completions", self.chat)
            app.router.add_get("/v1/models", self.list_models)
            self.add_routes(app)
            runner = web.AppRunner(app, access_log=None, keepalive_timeout=self.keepalive_timeout,
                                   handler_cancellation=self.handler_cancellation)
            await runner.setup()
            await web.SockSite(runner, self._sock, ssl_context=self.ssl_context).start()
            self._stop = asyncio.Event()
            ready.set()
            await self._stop.wait()
            await runner.cleanup()
            await self.on_stop()

        def run():
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(main())

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc):
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


def simulated_cohort(tmp_path: Path, model: str = "sim-mid") -> Path:
    """tmp_path/data/demo/<model> holding one runner.py run of configs/tiny.yaml against the
    simulator (the config copied to tmp_path/configs), as a user's project would."""
    import shutil

    from tests.conftest import run_script

    cohort = tmp_path / "data" / "demo" / model
    cohort.mkdir(parents=True)
    config = tmp_path / "configs" / "tiny.yaml"
    config.parent.mkdir()
    shutil.copy(REPO / "configs" / "tiny.yaml", config)
    with simulator() as sim:
        run_script("runner.py", *runner_args(sim.url, tmp_path, model=model, output=f"data/demo/{model}"), check=True, timeout=600)
    return cohort


def first_case(sampler: str = "greedy-4k.json"):
    """(experiment, step, index, case): the first sample of configs/tiny.yaml's first step."""
    from resolver.run import RunOptions, build_experiment

    opts = RunOptions(config=str(TINY), template=str(TEMPLATE), sampler=str(REPO / "samplers" / sampler),
                      model="m", offline=1).checked()
    experiment = build_experiment(opts)
    step = experiment.steps[0]
    (index, case), = experiment.cases(step, 0, 1)
    return experiment, step, index, case


def options(parallel: int = 16, threads: int = 1):
    """API-mode RunOptions with --parallel and --threads (the rest placeholders: nothing is read)."""
    from resolver.run import RunOptions

    return RunOptions(config="c", template="t", sampler="s", model="m", apibase="http://x",
                      parallel=parallel, threads=threads)
