"""Shared test fixtures: the repository root, the interpreter, running real scripts."""
from __future__ import annotations

import os
import signal
import subprocess as _subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# A suite started in the background by a non-interactive shell (`bash tests/run.sh &`, some CI
# runners) inherits SIGINT ignored, and so would every process it starts: the tests that send
# Ctrl-C would wait out their limits and check another ending instead. Ctrl-C interrupts here
# as it does in a terminal (docs/performance.md, "Byte code and Ctrl-C").
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


# The slow tier's end-to-end files keep real processes, but for those checked in-process
# (docs/performance.md, "The test suite"); every other test file calls scripts in-process.
SLOW_FILES_IN_PROCESS: frozenset[str] = frozenset({
    "test_analyze_compare.py",
    "test_analyze_position.py",
    "test_analyze_skill_evidence.py",
    "test_catalog_pointsdb_as_dataset.py",
    "test_config_fields.py",
    "test_evaluate_pipeline.py",
    "test_evaluate_runner_e2e.py",
    "test_grading_invalid_reasons_e2e.py",
    "test_output_schemas.py",
    "test_probe_fft_layout.py",
    "test_run_against.py",
    "test_run_api.py",
    "test_run_batch.py",
    "test_run_metadata.py",
    "test_run_stop_loops.py",
    "test_share_remotes.py",
    "test_tasks_audit.py",
    "test_tasks_configs.py",
})
_in_process_allowed = True


def pytest_runtest_setup(item):
    """Before the test's fixtures are set up, so its module's fixtures follow its file's rule."""
    global _in_process_allowed
    _in_process_allowed = not item.get_closest_marker("slow") or item.path.name in SLOW_FILES_IN_PROCESS


def run_script(script: str, *args, cwd=None, timeout=300, env=None, check=False, subprocess: bool = False):
    """Run one of the top-level scripts; returns a CompletedProcess (exit code, stdout, stderr).

    The command-line scripts run in this process through their own `main` and `run_main`
    (tests/support/in_process.py: a Python start-up is most of what a small command costs).
    A real interpreter runs (and `timeout` applies) with `subprocess=True` (the tests about the
    process itself, and a few true end-to-end runs per command), for a web app's script, and
    when `env` sets variables: libraries read some once, at import (aiohttp's TLS defaults,
    huggingface_hub's endpoint and folders), so only a new process sees them."""
    from tests.support.in_process import IN_PROCESS_SCRIPTS, run_in_process

    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO)
    full_env.setdefault("TQDM_DISABLE", "1")
    if env:
        full_env.update(env)
    if not subprocess and not env and script in IN_PROCESS_SCRIPTS and _in_process_allowed:
        proc = run_in_process(REPO / script, [str(a) for a in args], Path(cwd or REPO), full_env)
    else:
        proc = _subprocess.run(
            [sys.executable, str(REPO / script), *map(str, args)],
            cwd=cwd or REPO, capture_output=True, text=True, timeout=timeout, env=full_env,
        )
    if check and proc.returncode != 0:
        raise AssertionError(f"{script} {args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def script():
    return run_script


def write_eval_entry(cohort: Path, model: str, template: str, sampler: str, *, label: str, groups,
                     hf_id=None, tags=("leaderboard",)) -> None:
    """A cohort's evals.json holding one eval whose glob matches its run folders (docs/cohort.md shape)."""
    import json

    cohort.mkdir(parents=True, exist_ok=True)
    (cohort / "evals.json").write_text(json.dumps([{
        "evaluate": {"glob": f"*_{model}_{template}_{sampler}/*"},
        "filters": {"model": model, "template": template, "sampler": sampler},
        "label": label, "groups": list(groups), "tags": list(tags), "hf_id": hf_id,
    }], indent=1))


def evaluate_hand_dataset(root: Path, name: str, config_text: str, models, *, db: str | None = None,
                          parallel: int = 1) -> Path:
    """Write configs/<name>.yaml and data/<name>.json over the cohorts data/<name>/<model>/,
    then build the PointsDB with the real evaluate.py; returns the dataset file."""
    import json

    (root / "configs").mkdir(parents=True, exist_ok=True)
    (root / "configs" / f"{name}.yaml").write_text(config_text)
    dataset = root / "data" / f"{name}.json"
    dataset.write_text(json.dumps({"name": name, "db": db or f"{name}.db", "cache": f"{name}/.cache",
                                   "config": f"../configs/{name}.yaml",
                                   "cohorts": [{"path": f"{name}/{m}/evals.json"} for m in models]}, indent=1))
    run_script("evaluate.py", "--dataset", dataset, "--parallel", parallel, "--quiet", check=True)
    return dataset


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------- tiers and scheduling
# Markers (docs/performance.md, "The test suite"): `bash tests/run.sh --fast` leaves these out.
MARKERS = {
    "slow": "end-to-end tests that take long (simulated studies, demos, runner against the simulator)",
    "browser": "drives headless Chromium (tests/support/browser.py)",
    "real_model": "a real model behind llama.cpp's or vLLM's server; waits for tests/run.sh's background install",
    "seed_study": "uses the simulated r12 study of tests/support/r12_study.py (built once per run)",
}
# Set by tests/run.sh: the file its background `python -m resolver.llamacpp install` writes its
# exit code to when done, and that job's output.
LLAMA_BUILD_STATUS = "REASONSCAPE_LLAMA_BUILD_STATUS"
LLAMA_BUILD_LOG = "REASONSCAPE_LLAMA_BUILD_LOG"
LLAMA_BUILD_PID = "REASONSCAPE_LLAMA_BUILD_PID"
LLAMA_BUILD_WAIT = 40 * 60     # seconds; a cold portable build takes ~2 min of two idle cores
# Set by tests/run.sh when it installs Chromium in the background: the file apt's exit code lands
# in, and that job's process.
CHROMIUM_STATUS = "REASONSCAPE_CHROMIUM_STATUS"
CHROMIUM_PID = "REASONSCAPE_CHROMIUM_PID"
CHROMIUM_WAIT = 20 * 60        # seconds; apt takes about 1.5 minutes
# Set by tests/run.sh: the status file of its background `bash tests/install-vllm.sh` (vLLM's CPU
# build in .venv-vllm/, docs/vllm.md), that job's output and its process.
VLLM_INSTALL_STATUS = "REASONSCAPE_VLLM_INSTALL_STATUS"
VLLM_INSTALL_LOG = "REASONSCAPE_VLLM_INSTALL_LOG"
VLLM_INSTALL_PID = "REASONSCAPE_VLLM_INSTALL_PID"
VLLM_INSTALL_WAIT = 30 * 60    # seconds; a fresh install takes a few minutes


def pytest_configure(config):
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def _order(item, study_builder: str | None) -> int:
    """Slow tests first (the long ones start early, so two workers end together), then the
    real-model files, then the rest. The real-model files wait for tests/run.sh's llama.cpp
    build; handed out mid-run, after the slow files, they start about when a fresh build is
    done and one worker runs them while the other works through the quick files, instead of
    running alone at the end. Of the files that share the simulated r12 study, the first
    (`study_builder`) goes first of all and builds it; the others follow the other slow files,
    so no worker sits waiting for the build (docs/performance.md, "The test suite")."""
    if item.get_closest_marker("seed_study"):
        return 0 if item.nodeid.split("::")[0] == study_builder else 2
    if item.get_closest_marker("slow"):
        return 1
    return 3 if item.get_closest_marker("real_model") else 4


def pytest_collection_modifyitems(config, items):
    # stable: file order within each rank; tests/run.sh hands files to its two workers in
    # this order (--dist loadfile --no-loadscope-reorder: a module's fixtures are built once)
    study_files = sorted({item.nodeid.split("::")[0] for item in items if item.get_closest_marker("seed_study")})
    builder = study_files[0] if study_files else None
    items.sort(key=lambda item: _order(item, builder))


@pytest.fixture(scope="session")
def llama_cpp_ready():
    """Skip (with the one-line reason) unless llama.cpp's server and SmolLM2 can be used here;
    under tests/run.sh, first wait for its background build to end."""
    import importlib

    if not _background_install_ended(LLAMA_BUILD_STATUS, LLAMA_BUILD_PID, LLAMA_BUILD_WAIT):
        pytest.skip(f"the llama.cpp build started by tests/run.sh ended without a result or took over "
                    f"{LLAMA_BUILD_WAIT // 60} min (its output: {os.environ.get(LLAMA_BUILD_LOG)})")
    importlib.invalidate_caches()           # the packages may have appeared after this process started
    from resolver.llamacpp import unavailable_reason

    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def vllm_ready():
    """Skip (with the one-line reason) unless vLLM's CPU build and its SmolLM2 folder are
    installed (tests/support/vllm_server.py); under tests/run.sh, first wait for its
    background install to end."""
    from tests.support.vllm_server import unavailable_reason

    if not _background_install_ended(VLLM_INSTALL_STATUS, VLLM_INSTALL_PID, VLLM_INSTALL_WAIT):
        pytest.skip(f"the vLLM install started by tests/run.sh ended without a result or took over "
                    f"{VLLM_INSTALL_WAIT // 60} min (its output: {os.environ.get(VLLM_INSTALL_LOG)})")
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def browser_ready():
    """Skip (with the reason) unless Chromium and chromedriver can run here; under tests/run.sh,
    first wait for its background apt install of them (tests.support.browser.browser_marks)."""
    from tests.support.browser import browser_missing_reason

    _background_install_ended(CHROMIUM_STATUS, CHROMIUM_PID, CHROMIUM_WAIT)
    status = os.environ.get(CHROMIUM_STATUS)
    reason = browser_missing_reason()
    if reason and status and Path(status).exists() and Path(status).read_text().strip() != "0":
        output = Path(status).with_name("chromium-output")
        lines = [line.strip() for line in output.read_text(errors="replace").splitlines() if line.strip()] \
            if output.exists() else []
        reason = (f"tests/run.sh could not install chromium (apt-get exit {Path(status).read_text().strip()}): "
                  f"{lines[-1] if lines else 'no output'}")
    if reason:
        pytest.skip(reason)


def _background_install_ended(status_env: str, pid_env: str, wait: float) -> bool:
    """Wait for one of tests/run.sh's background installs to write its status file (named by
    the environment variable `status_env`); True when it has, or when none was started.
    False when its job (`pid_env`) ended without writing it or `wait` seconds passed."""
    import time

    status = os.environ.get(status_env)
    if not status:
        return True
    deadline = time.monotonic() + wait
    while not Path(status).exists():
        if time.monotonic() > deadline or not _job_alive(pid_env):
            return Path(status).exists()
        time.sleep(1)
    return True


def _job_alive(pid_env: str) -> bool:
    """Is the tests/run.sh background job named by `pid_env` still running (a zombie is not)?
    True when unknown."""
    import psutil

    pid = os.environ.get(pid_env)
    if not pid:
        return True
    try:
        return psutil.Process(int(pid)).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
