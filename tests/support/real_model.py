"""Support for the real-model tests: llama.cpp's server on SmolLM2, and a counting proxy.

The proxy stands between runner.py and the real server on loopback and counts what
crosses it, so a test can tell how often a request was asked without trusting the
runner's own counters. Not a test module itself.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

import pytest

from resolver.llamacpp import SMOLLM2_MODEL, LlamaServer, ServerDied, smollm2_gguf
from tests.conftest import REPO

# The marks of a real-model test module: left out by `tests/run.sh --fast`, run last, skipped
# with the one-line reason when llama.cpp is not usable (the `llama_cpp_ready` fixture of
# tests/conftest.py waits for tests/run.sh's background build first).
needs_llama = [pytest.mark.real_model, pytest.mark.usefixtures("llama_cpp_ready")]


def start_smollm2(n_ctx: int) -> LlamaServer:
    """SmolLM2 on llama.cpp; a server that dies while starting fails the test with its one line."""
    try:
        return LlamaServer(smollm2_gguf(), alias=SMOLLM2_MODEL, n_ctx=n_ctx)
    except ServerDied as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(autouse=True)
def server_alive(request):
    """A test that finds the module's server dead fails with the server's one line, not with
    whatever the dead server made go wrong further on (docs/runner.md, "A real model on the CPU").
    Autouse in the modules that import it; it looks for their `server` fixture."""
    server = request.getfixturevalue("server") if "server" in request.fixturenames else None
    if server is not None:
        server.check()
    yield
    if server is not None:
        server.check()


def run_watched(server: LlamaServer, script: str, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run a top-level script against `server` like tests.conftest.run_script, but fail the
    test at once with the server's one line if the server dies meanwhile."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.setdefault("TQDM_DISABLE", "1")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, str(REPO / script), *map(str, args)], cwd=REPO, env=env,
                                stdout=out, stderr=err, text=True)
        try:
            code = server.wait_for(proc, timeout=timeout)
        except ServerDied as exc:
            pytest.fail(str(exc), pytrace=False)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(proc.args, code, out.read(), err.read())


class CountingProxy:
    """Forwards every request to `upstream` and counts them by body digest.

    `.asked` counts requests by the sha256 of their body, `.answered` those whose
    reply was sent back in full, `.peak_in_flight` the most at once.
    """

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.asked: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("counting proxy did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def total_asked(self) -> int:
        with self._lock:
            return sum(self.asked.values())

    def reset(self) -> None:
        with self._lock:
            self.asked.clear()
            self.answered.clear()
            self.peak_in_flight = 0

    def _serve(self) -> None:
        from aiohttp import ClientSession, ClientTimeout, web

        async def forward(request: web.Request) -> web.StreamResponse:
            body = await request.read()
            digest = hashlib.sha256(body).hexdigest()
            with self._lock:
                if request.method == "POST":
                    self.asked[digest] += 1
                self.in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                async with self._session.request(request.method, self.upstream + request.path_qs, data=body,
                                                 headers={"Content-Type": "application/json"}) as reply:
                    payload = await reply.read()
                    response = web.Response(body=payload, status=reply.status,
                                            content_type=reply.content_type or "application/json")
            finally:
                with self._lock:
                    self.in_flight -= 1
            await response.prepare(request)
            await response.write_eof()
            if request.method == "POST" and response.status == 200:
                with self._lock:
                    self.answered[digest] += 1
            return response

        async def start():
            self._session = ClientSession(timeout=ClientTimeout(total=600))
            app = web.Application(client_max_size=64 * 2**20)
            app.router.add_route("*", "/{tail:.*}", forward)
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]
            self._ready.set()

        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(start())
        self._loop.run_forever()

    def stop(self) -> None:
        async def shutdown():
            await self._runner.cleanup()
            await self._session.close()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)


def records_written(output: Path) -> int:
    """Complete lines (ending in a newline) in the run folders under `output`: what a runner has flushed."""
    total = 0
    for path in Path(output).glob("*/*.ndjson"):
        with open(path, "rb") as lines:
            total += sum(1 for line in lines if line.endswith(b"\n"))
    return total
