"""Children end with their parent, however it died (docs/architecture.md, *Child processes end
with their parent*).

Real processes throughout: a parent is started, its children found with psutil, the parent
killed with SIGKILL (as the out-of-memory killer does: only that process), and every child
must be gone 10 s later. A child that outlives its parent is killed by the test itself so a
failure leaves nothing running.
"""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from conftest import run_script
from test_evaluate_pipeline import all_ndjson, check_against_raw, make_cohort, make_record, write_dataset, write_evals, write_run

from tests.support.browser import free_port

REPO = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kill tests use Linux /proc"),
              pytest.mark.slow]  # real processes killed end to end: left out of the fast tier
GONE_WITHIN = 10.0


def _ended(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE     # dead, waiting for whichever process adopted it
    except psutil.NoSuchProcess:
        return True


def _still_running_after(procs, seconds: float = GONE_WITHIN) -> list:
    """The processes of `procs` still running `seconds` from now (killed by the test afterwards)."""
    deadline = time.monotonic() + seconds
    alive = list(procs)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if not _ended(p)]
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    return alive


def _wait_for(condition, proc: subprocess.Popen, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if proc.poll() is not None:
            pytest.fail(f"the parent ended (code {proc.returncode}) before {what}: {proc.stderr.read()}")
        time.sleep(0.01)
    proc.kill()
    pytest.fail(f"no {what} within {timeout} s")


@pytest.fixture
def start_parent():
    """start(code): `python -c code` with this checkout importable, stdout read line by line.

    A parent still running at the end (a test that failed before killing it) is killed
    with its children, so a failure leaves nothing behind.
    """
    started = []

    def start(code: str) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=str(REPO))
        env.pop("REASONSCAPE_PARENT_PID", None)
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            family = psutil.Process(proc.pid).children(recursive=True)
            proc.kill()
            proc.wait()
            _still_running_after(family, 0)


def _kill_parent(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL


# ------------------------------------------------------------------ evaluate.py's pool workers

def _big_first_build(root: Path) -> Path:
    """The hand-made two-model dataset plus enough ModelA data that a first build takes a while."""
    for model in ("ModelA", "ModelB"):
        write_evals(make_cohort(root, model, seed=len(model) + ord(model[-1])), model)
    rng = random.Random(11)
    run = root / "data/r1/ModelA/2026-01-09_00-00-00_r1_ModelA_zs_greedy"
    for step in range(40):
        recs = [make_record("ModelA", "zs", "greedy", "dates", {"length": step}, i, "incorrect", rng, step=step)
                for i in range(150)]
        for r in recs:
            r["answer"] += " ".join(str(rng.random()) for _ in range(300))
        write_run(run, recs)
    return write_dataset(root, ["ModelA", "ModelB"])


def _stopped_mid_build(dataset: Path, db: Path):
    """evaluate.py --parallel 2 frozen (SIGSTOP) mid-way through a first build: (Popen, its workers)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), TQDM_DISABLE="1")
    expected_workers = min(2, os.cpu_count() or 1)
    for _ in range(3):                  # a machine fast enough to finish first gets another try
        for stale in db.parent.glob("pointsdb-r1.db*"):
            stale.unlink()
        proc = subprocess.Popen([sys.executable, str(REPO / "evaluate.py"), "--dataset", str(dataset),
                                 "--parallel", "2", "--quiet"], env=env, text=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        main = psutil.Process(proc.pid)
        workers = []
        while proc.poll() is None:
            # the workers are forked when the scan starts; the temp DB is opened after that
            workers = main.children(recursive=True)
            if len(workers) >= expected_workers and list(db.parent.glob("pointsdb-r1.db.tmp-*")):
                main.suspend()
                break
            time.sleep(0.01)
        if proc.poll() is None and not db.exists():
            return proc, workers
        if proc.poll() is None:
            main.kill()
        proc.wait()
    pytest.skip("evaluate.py finished every first build before it could be stopped mid-way")


def test_evaluate_workers_end_when_the_main_process_is_killed_mid_build(tmp_path):
    dataset = _big_first_build(tmp_path)
    db = tmp_path / "data" / "pointsdb-r1.db"
    proc, workers = _stopped_mid_build(dataset, db)
    _kill_parent(proc)
    assert not db.exists()                          # it was a first build, and it did not finish
    left = _still_running_after(workers)
    assert not left, f"{len(left)} of {len(workers)} workers still running {GONE_WITHIN} s after the main process"
    rerun = run_script("evaluate.py", "--dataset", dataset, "--parallel", "2", check=True)
    assert "2 evals built" in rerun.stdout
    check_against_raw(db, all_ndjson(tmp_path / "data"))


def test_pool_workers_forked_from_a_thread_outlive_the_thread_but_not_the_process(start_parent):
    # The kernel's parent-death signal follows the forking thread: a pool first used from a
    # short-lived thread must keep its workers after that thread ends.
    proc = start_parent("""
        import os, threading, time
        from resolver.ingest.pipeline import Workers
        pool = Workers(2, 2)
        thread = threading.Thread(target=lambda: pool.map(time.sleep, [600, 600]))
        thread.start(); thread.join()
        print(" ".join(str(p.pid) for p in pool.executor._processes.values()), flush=True)
        time.sleep(600)
    """)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert pids, proc.stderr.read()
    workers = [psutil.Process(p) for p in pids]
    time.sleep(1.0)                                   # a death signal, had it been asked for, arrives at once
    assert not [w for w in workers if _ended(w)], "a worker ended with the thread that forked it"
    _kill_parent(proc)
    assert not _still_running_after(workers)


# ------------------------------------------------------------------ the simulator and the demo's scripts

def test_the_simulator_ends_when_its_parent_is_killed(start_parent):
    proc = start_parent("""
        import time
        from resolver.sim.simulator import start_simulator_process
        sim = start_simulator_process(None)
        print(sim.pid, flush=True)
        time.sleep(600)
    """)
    line = proc.stdout.readline()
    assert line.strip().isdigit(), proc.stderr.read()
    simulator = psutil.Process(int(line))
    _kill_parent(proc)
    assert not _still_running_after([simulator])


def test_a_simulator_started_from_a_thread_outlives_the_thread_but_not_the_process(start_parent):
    # The polling fallback (the one other systems use): no death signal is asked for here.
    proc = start_parent("""
        import json, threading, time, urllib.request
        from resolver.sim.simulator import start_simulator_process
        box = []
        thread = threading.Thread(target=lambda: box.append(start_simulator_process(None)))
        thread.start(); thread.join()
        time.sleep(1.0)
        with urllib.request.urlopen(box[0].url + "/v1/models", timeout=30) as resp:
            models = json.loads(resp.read())
        print(box[0].pid, len(models["data"]), flush=True)
        time.sleep(600)
    """)
    line = proc.stdout.readline().split()
    assert len(line) == 2, proc.stderr.read()
    assert int(line[1]) > 0                          # still serving after the thread that started it ended
    simulator = psutil.Process(int(line[0]))
    _kill_parent(proc)
    assert not _still_running_after([simulator])


def test_a_script_run_by_the_demo_ends_with_the_demo(start_parent):
    proc = start_parent("""
        from pathlib import Path
        from resolver.cli.demo import show_and_run
        show_and_run(Path("."), "-c", "import time; time.sleep(600)")
    """)
    parent = psutil.Process(proc.pid)
    children = _wait_for(lambda: parent.children(), proc, "the demo's child")
    assert proc.stdout.readline() == "\n" and proc.stdout.readline().startswith("$ python -c")
    _kill_parent(proc)
    assert not _still_running_after(children)


def test_the_leaderboard_served_by_the_demo_ends_with_the_demo(start_parent, tmp_path_factory):
    # The web apps start no processes of their own (werkzeug serves with threads); the demo
    # starts one as its last step, and it must not keep serving once the demo is gone.
    from tests.support.web_dataset import shared_web_dataset

    dataset = shared_web_dataset(tmp_path_factory)
    proc = start_parent(f"""
        from pathlib import Path
        from resolver.cli.demo import show_and_run
        show_and_run(Path({str(REPO)!r}), "leaderboard.py", {str(dataset)!r}, "--port", "{free_port()}")
    """)
    deadline = time.monotonic() + 120
    line = ""
    while "serving on" not in line:
        line = proc.stdout.readline()
        assert line or proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the leaderboard did not start"
    url = line.split("serving on ", 1)[1].split()[0]
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
    servers = psutil.Process(proc.pid).children(recursive=True)
    _kill_parent(proc)
    assert not _still_running_after(servers)


def test_a_parent_killed_between_fork_and_exec_is_noticed(start_parent):
    # The child checks its parent after asking for the death signal: a parent that died in
    # between (here: while the caller's own preexec step waits for it) is not missed.
    proc = start_parent("""
        import os, subprocess, sys, time
        from resolver.core import child_options
        parent = os.getpid()

        def wait_for_the_parent_to_die():
            while os.getppid() == parent:
                time.sleep(0.01)

        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         **child_options(preexec=wait_for_the_parent_to_die))
    """)
    parent = psutil.Process(proc.pid)
    children = _wait_for(lambda: parent.children(), proc, "the child, still before its exec")
    _kill_parent(proc)
    assert not _still_running_after(children)
