"""The installed llama.cpp itself: built portable, and named in one line when its server dies.

Portable: llama.cpp's own report of its compiled CPU features, and (where binutils'
objdump is installed) the machine code of libggml-cpu.so, hold no AMX and no AVX-512,
whatever CPU built it — a CPU may list AMX and still fault on it (docs/runner.md,
"A real model on the CPU"). A dying server: killed with SIGKILL under the runner, and
with SIGSEGV under the demo's real-model step, it is named within 10 s with its exit
signal and the tail of its log. Skips, like tests/test_real_model.py, with the one line
saying why llama-cpp-python could not be installed here.
"""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from resolver.llamacpp import ServerDied, compiled_cpu_features
from tests.conftest import REPO
from tests.support.real_model import needs_llama, records_written, start_smollm2

pytestmark = needs_llama
MODEL = "SmolLM2-135M-Instruct"
DEATH_BOUND_S = 10          # the bound for naming a dead server
# AMX tile instructions (Intel SDM vol. 2, "AMX") and any use of a 512-bit zmm register.
AMX_OR_AVX512 = re.compile(r"\b(ldtilecfg|sttilecfg|tileloadd\w*|tilestored|tilezero|tilerelease|tdp\w+)\b|%zmm\d|%tmm\d")
# The report lists features as "NAME = 1"; llama.cpp reports "AVX512", "AVX512_VNNI", "AMX_INT8", ...
FEATURE = re.compile(r"([A-Z][A-Z0-9_]*) = (\d+)")


def test_compiled_cpu_features_have_no_amx_and_no_avx512():
    report = compiled_cpu_features()
    features = {name: value for name, value in FEATURE.findall(report)}
    assert features, f"llama.cpp reported no features: {report!r}"
    unwanted = sorted(name for name, on in features.items() if on != "0" and re.match(r"AMX|AVX512", name))
    assert unwanted == [], (f"{unwanted} compiled in ({report.strip()}); a native build? "
                            "python -m resolver.llamacpp install rebuilds it portable")
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert features.get("AVX2") == "1", f"the portable x86-64 build keeps AVX2: {report.strip()}"


def _ggml_cpu_library() -> Path:
    import importlib.util

    package = Path(importlib.util.find_spec("llama_cpp").origin).parent
    found = sorted(package.rglob("libggml-cpu*.so")) or sorted(package.rglob("libggml*.so"))
    assert found, f"no libggml shared library under {package}"
    return found[0]


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 machine code only")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
def test_ggml_cpu_machine_code_has_no_amx_or_zmm_instruction():
    library = _ggml_cpu_library()
    proc = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", str(library)], stdout=subprocess.PIPE,
                            text=True)
    found, lines = [], 0
    for line in proc.stdout:
        lines += 1
        if AMX_OR_AVX512.search(line) and len(found) < 5:
            found.append(line.strip())
    assert proc.wait() == 0
    assert lines > 1000, f"objdump disassembled {library} to {lines} lines"
    assert found == [], f"{library} holds AMX or AVX-512 instructions: {found}"


def test_only_the_libraries_the_bindings_load_were_built():
    """resolver/llamacpp/without_common.cmake took effect: llama.cpp's `common` library (and the
    multimodal one) were neither built nor installed; libllama and ggml were."""
    import importlib.util

    site = Path(importlib.util.find_spec("llama_cpp").origin).parent.parent
    names = {path.name for folder in (site / "llama_cpp" / "lib", site / "lib") if folder.is_dir()
             for path in folder.iterdir()}
    assert "libllama.so" in names and "libggml-cpu.so" in names, sorted(names)
    assert not [name for name in names if "common" in name or "mtmd" in name], sorted(names)


def _wait_for(condition, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.1)


def test_a_server_killed_under_the_runner_is_named_within_10_s(tmp_path):
    (tmp_path / "sampler.json").write_text(json.dumps({"temperature": 0.0, "max_tokens": 64}))
    env = dict(os.environ, PYTHONPATH=str(REPO), TQDM_DISABLE="1")
    server = start_smollm2(n_ctx=1024)
    try:
        runner = subprocess.Popen(
            [sys.executable, str(REPO / "runner.py"), "--config", str(REPO / "configs" / "tiny.yaml"),
             "--template", str(REPO / "templates" / "zerocot-nosys.json"), "--sampler", str(tmp_path / "sampler.json"),
             "--model", MODEL, "--apibase", server.url, "--parallel", "2", "--output", str(tmp_path / "out"),
             "--cache", str(tmp_path / "cache"), "--quiet"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for(lambda: records_written(tmp_path / "out") >= 1 or runner.poll() is not None, "a first record")
        assert runner.poll() is None, "the run was still going when the server was killed"
        os.kill(server.proc.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        with pytest.raises(ServerDied) as died:
            server.wait_for(runner, timeout=300)
        took = time.monotonic() - killed_at
    finally:
        server.stop()
    assert runner.poll() is not None, "the runner was stopped, not left retrying a dead server"
    line = str(died.value)
    assert "\n" not in line
    assert line.startswith(f"llama.cpp server (pid {server.proc.pid}) killed by SIGKILL; its log ends: ")
    assert not line.endswith("(empty)"), line
    assert took < DEATH_BOUND_S, f"named {took:.1f} s after the kill"


def test_the_demo_names_a_segfaulted_server_in_one_line_within_10_s(tmp_path):
    """The demo's real-model step (resolver.cli.demo.run_real_model), its server killed by SIGSEGV."""
    for folder in ("configs", "templates", "samplers"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    step = ("import sys; from pathlib import Path; from resolver.cli.demo import run_real_model; "
            "run_real_model(Path(sys.argv[1]), None, 1024)")
    demo = subprocess.Popen([sys.executable, "-c", step, str(tmp_path)], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(REPO), TQDM_DISABLE="1"))
    try:
        def child(script: str):
            kids = psutil.Process(demo.pid).children(recursive=True)
            return next((k for k in kids if any(script in part for part in k.cmdline())), None)

        _wait_for(lambda: demo.poll() is not None or child("runner.py") is not None, "the runner started")
        cohort = tmp_path / "data" / "demo" / "real"
        _wait_for(lambda: demo.poll() is not None or records_written(cohort) >= 1, "a first record")
        server = child("llama_cpp.server")
        assert demo.poll() is None and server is not None, "the run was still going"
        server.send_signal(signal.SIGSEGV)
        killed_at = time.monotonic()
        out, err = demo.communicate(timeout=300)
        took = time.monotonic() - killed_at
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.communicate()
    assert demo.returncode == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"demo: llama.cpp server (pid {server.pid}) killed by SIGSEGV; its log ends: "), err[-2000:]
    assert not last.endswith("(empty)"), last
    assert took < DEATH_BOUND_S, f"named {took:.1f} s after the kill"
