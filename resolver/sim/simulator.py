"""The built-in simulated model server: OpenAI-compatible, on loopback, for demos and tests.

    python -m resolver.simulator --config configs/tiny.yaml --port 3333 [--seed 42]
        [--latency MS] [--fault-rate R | --faults 429=0.05,500=0.02,...] [--api-key KEY]

It regenerates the experiment's problems (same config, same seed), so it knows the
target of every prompt the runner sends, and answers as a named profile
(`sim-strong`, `sim-mid`, `sim-weak`, `sim-loopy`, `sim-thinker`; see
resolver.sim.profiles). A prompt is recognised by the problem text at the end of
its last user message — every template ends with `{input}`.

Endpoints: GET /v1/models, POST /v1/chat/completions (plain and streaming),
GET /stats (request counters; `?keys=1` adds per-request cache keys),
POST /stats/reset, GET /health.

Python API: `SimulatorServer` (in-process, background thread) and
`start_simulator_process` (a subprocess, which ends when the process that started it
does); both wait until the server answers and have `.url` and `.stop()`.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable

from aiohttp import web

from resolver.client import fast_event_loop
from resolver.config import DEFAULT_SEED
from resolver.core import UserError, child_options
from resolver.sim.app import SimulatorApp
from resolver.sim.faults import FaultPlan, SimStats
from resolver.sim.gpu import DEFAULT_MAX_BATCH, gpu_preset
from resolver.sim.gpuserve import GpuServing
from resolver.sim.problems import REPO_ROOT, ExperimentProblems
from resolver.sim.profiles import PROFILES

if TYPE_CHECKING:
    from resolver.config import Template

LOOPBACK = ("127.0.0.1", "localhost", "::1")


# ================================================================ running it

def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0 = any free port); UserError when taken."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port") from None
    sock.listen(4096)
    sock.setblocking(False)
    return sock


async def serve(app: SimulatorApp, sock: socket.socket, ready: Callable[[], object] | None = None,
                stop_event: asyncio.Event | None = None) -> None:
    """Serve until `stop_event` is set (or forever)."""
    runner = web.AppRunner(app.build(), access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    site = web.SockSite(runner, sock)
    await site.start()
    if ready:
        ready()
    try:
        await (stop_event.wait() if stop_event else asyncio.Event().wait())
    finally:
        await runner.cleanup()


class SimulatorServer:
    """The simulator in a background thread of this process.

        with SimulatorServer("configs/tiny.yaml", latency_ms=0) as sim:
            ... requests to sim.url ...   # http://127.0.0.1:<port>
    """

    def __init__(self, config: str | None, *, seed: int = DEFAULT_SEED, host: str = "127.0.0.1", port: int = 0,
                 latency_ms: float = 0.0, faults: dict | None = None, retry_after: float = 1.0,
                 stall_seconds: float = 30.0, api_key: str | None = None,
                 think_style: str = "inline", precision: str | None = None, density: str = "normal",
                 tokenizer: str | None = None, template: Template | None = None, gpu: str | None = None,
                 max_batch: int = DEFAULT_MAX_BATCH, time_scale: float = 1.0):
        problems = (ExperimentProblems(config, seed=seed, precision=precision, density=density, tokenizer=tokenizer,
                                       template=template) if config else None)
        plan = FaultPlan(faults or {}, retry_after=retry_after, stall_seconds=stall_seconds, seed=seed)
        self.app = SimulatorApp(problems, seed=seed, latency_ms=latency_ms, faults=plan,
                                api_key=api_key, think_style=think_style,
                                gpu=gpu_serving(gpu, max_batch, time_scale))
        self._sock = bind_socket(host, port)
        self.host = host
        self.port = self._sock.getsockname()[1]
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def stats(self) -> SimStats:
        return self.app.stats

    def start(self, timeout: float = 30.0) -> "SimulatorServer":
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._stop = asyncio.Event()
            self._loop.run_until_complete(serve(self.app, self._sock, ready.set, self._stop))
            self._loop.close()

        self._thread = threading.Thread(target=run, name="simulator", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError("simulator did not start")
        return self

    def stop(self) -> None:
        if self._thread and self._loop and self._stop:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)
        self._thread = None

    def __enter__(self) -> "SimulatorServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SimulatorProcess:
    """A simulator running as a subprocess (see start_simulator_process)."""

    def __init__(self, proc: subprocess.Popen, url: str):
        self.proc = proc
        self.url = url
        self.port = int(url.rsplit(":", 1)[1])

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stats(self, keys: bool = False) -> dict:
        with urllib.request.urlopen(f"{self.url}/stats{'?keys=1' if keys else ''}", timeout=30) as resp:
            return json.loads(resp.read())

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> "SimulatorProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


READY_PREFIX = "simulator ready on "


def start_simulator_process(config: str | None, *, port: int = 0, seed: int = DEFAULT_SEED, latency_ms: float = 0.0,
                            faults: str | None = None, api_key: str | None = None,
                            extra_args: Iterable[object] = (), ready_timeout: float = 120.0,
                            python: str = sys.executable, cpu: int | None = None) -> SimulatorProcess:
    """Start `python -m resolver.simulator` and return once it is serving.

    `cpu` pins the process to one core (benchmarks). Raises RuntimeError with the
    server's own message when it exits before becoming ready.
    """
    args = [python, "-m", "resolver.simulator", "--port", str(port),
            "--seed", str(seed), "--latency", str(latency_ms)]
    if config:
        args += ["--config", str(config)]
    if faults:
        args += ["--faults", faults]
    if api_key:
        args += ["--api-key", api_key]
    args += list(map(str, extra_args))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    preexec = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    # it ends with this process, however this one dies (docs/architecture.md)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            **child_options(env=env, preexec=preexec))
    assert proc.stdout is not None      # stdout=PIPE
    deadline = time.monotonic() + ready_timeout
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line.rstrip())
        if line.startswith(READY_PREFIX):
            url = line[len(READY_PREFIX):].split()[0]
            threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
            return SimulatorProcess(proc, url)
    proc.kill()
    proc.wait()
    raise RuntimeError("simulator did not become ready: " + " | ".join(seen[-5:]))


def _drain(stream: IO[str]) -> None:
    """Keep reading a child's output so it never blocks on a full pipe."""
    for _ in stream:
        pass


def gpu_serving(gpu: str | None, max_batch: int, time_scale: float) -> GpuServing | None:
    """GPU mode's engine for a preset name (None: answer at once, as without --gpu)."""
    if gpu is None:
        return None
    if not time_scale > 0:
        raise UserError(f"--time-scale {time_scale:g} is not valid; use a number above 0 "
                        "(simulated seconds per real second)")
    return GpuServing(gpu_preset(gpu), max_batch, time_scale)


# ================================================================ serving until stopped
def run_simulator(*, config: str | None, seed: int = DEFAULT_SEED, precision: str | None = None, density: str = "normal",
                  host: str = "127.0.0.1",
                  port: int = 3333, latency_ms: float = 0.0, faults: dict | None = None, retry_after: float = 1.0,
                  stall_seconds: float = 30.0, api_key: str | None = None, think_style: str = "inline",
                  tokenizer: str | None = None, template: Template | None = None,
                  say: Callable[[str], object] | None = None, warn: Callable[[str], object] | None = None,
                  progress: Callable[..., Any] | None = None,
                  gpu: str | None = None, max_batch: int = DEFAULT_MAX_BATCH, time_scale: float = 1.0) -> None:
    """Serve in this process until Ctrl-C (`python -m resolver.simulator`).

    `gpu` (a preset of resolver.sim.gpu) paces every reply by a continuously batching
    engine of `max_batch` sequences, `time_scale` simulated seconds per real second.
    `warn` gets the lines about what is not served (a non-loopback host, calibrated tasks
    left out), `say` the ready line (READY_PREFIX and the URL, which
    start_simulator_process waits for) once the socket answers; `progress` (a tqdm-like
    factory) shows calibration's bar.
    """
    warn = warn or (lambda line: None)
    if port < 0 or port > 65535:
        raise UserError(f"--port {port} is not valid; use 0..65535")
    started = time.monotonic()
    serving = gpu_serving(gpu, max_batch, time_scale)      # bad GPU flags fail before the slow part
    problems = (ExperimentProblems(config, seed=seed, precision=precision, density=density, tokenizer=tokenizer,
                                   template=template, warn=warn, progress=progress) if config else None)
    plan = FaultPlan(faults or {}, retry_after=retry_after, stall_seconds=stall_seconds, seed=seed)
    app = SimulatorApp(problems, seed=seed, latency_ms=latency_ms, faults=plan,
                       api_key=api_key, think_style=think_style, gpu=serving)
    if host not in LOOPBACK:
        warn(f"warning: the simulator is listening on {host}, not only on loopback")
    sock = bind_socket(host, port)
    shown = f"[{host}]" if ":" in host else host

    def ready() -> None:
        known = f"{problems.index.size} problems indexed" if problems else "no config: every answer is a guess"
        if say:
            say(f"{READY_PREFIX}http://{shown}:{sock.getsockname()[1]}  (models: {', '.join(PROFILES)}; {known}; "
                f"started in {time.monotonic() - started:.1f} s)")

    try:
        fast_event_loop()
        asyncio.run(serve(app, sock, ready))
    except KeyboardInterrupt:
        pass
