"""Every error path ends (issue 46): bad inputs and Ctrl-C, many times, with the CPU busy.

A hang is rare by nature (evaluate.py's pool once hung in about 1 run of 30 to 1 of 80, when a
worker was killed halfway through writing its result), so each path is run many times with both
cores loaded: busy-loop processes (they stop by themselves) fill the cores the machine leaves
idle. ``LIMIT`` is a hang detector, not a timing test: a run that has not ended by then is
reported with every thread's stack (faulthandler). The fast tier stops worker pools at random moments in one process; the
slow tier runs every bad-input case of every command (tests/test_cli_bad_inputs.py's table, the
web apps' own) in-process, evaluate.py's error paths with its workers busy at least 50 times,
and sends SIGINT to evaluate.py and runner.py at random moments, 50 times each.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import psutil
import pytest

from resolver.core import child_options
from tests.conftest import REPO, free_port, run_script
from tests.test_cli_bad_inputs import CASES, DEEP, area  # noqa: F401  (area: the bad files, a fixture)
from tests.test_evaluate_pipeline import make_cohort, make_record, write_dataset, write_evals, write_run

# seconds: a hang detector, not a timing test (a machine shared with heavy jobs may set more)
LIMIT = float(os.environ.get("REASONSCAPE_HANG_LIMIT", "30"))
GONE_WITHIN = 10.0      # a process left after the run ended (workers end with their parent in ~1 s)
SEED = int(os.environ.get("REASONSCAPE_SWEEP_SEED", random.randrange(10 ** 6)))
ENV = dict(os.environ, PYTHONPATH=str(REPO), TQDM_DISABLE="1")
ENV.pop("REASONSCAPE_PARENT_PID", None)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and /proc: Linux only")


def busy_cores(seconds: float, cores: int = 2) -> list[subprocess.Popen]:
    """``cores`` CPU-bound processes beside the sweep; each stops by itself after ``seconds``."""
    code = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"
    return [subprocess.Popen([sys.executable, "-c", code], **child_options()) for _ in range(cores)]  # end with us


def idle_cores(sample: float = 0.5) -> int:
    """The cores nothing of normal priority keeps busy now. In the whole suite the other test worker
    usually keeps one busy already, and a second busy loop there would only burn CPU the other tests
    need; a niced background build (tests/run.sh) yields to the sweep, so it does not count as load."""
    cores = os.cpu_count() or 1
    share = psutil.cpu_times_percent(interval=sample)
    busy = (share.user + share.system + getattr(share, "irq", 0.0) + getattr(share, "softirq", 0.0)) / 100 * cores
    return max(0, min(cores, round(cores - busy)))


@pytest.fixture
def load():
    """Both cores busy for the test: busy loops fill the cores the machine leaves idle."""
    started: list[subprocess.Popen] = []
    yield lambda seconds: started.extend(busy_cores(seconds, idle_cores()))
    for proc in started:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------ fast: the pool itself

@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: evaluate.py starts no worker processes")
@pytest.mark.parametrize("rounds, cases", [(24, ["error", "ctrl-c", "item-error"]), (1, ["worker-dies"])],
                         ids=["stopped", "worker-dies"])
def test_the_pool_ends_when_stopped_at_random_moments(load, rounds, cases):
    """An error, a Ctrl-C or a failing item while workers write large results: the pool ends, no
    worker is left. A worker killed mid-write breaks the pool with an error (tests/support/pool_stress.py)."""
    load(60)
    # a dead worker is looked for every 0.5 s; the 2 s grace after it is a wait, not the check
    proc = subprocess.run([sys.executable, "-m", "tests.support.pool_stress", str(rounds), str(SEED), *cases,
                           "--dead-worker-grace", "0.3"],
                          cwd=REPO, env=ENV, capture_output=True, text=True, timeout=rounds * LIMIT + 60)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == f"ok {rounds}", \
        f"seed {SEED}\n{proc.stdout[-2000:]}\n{proc.stderr[-6000:]}"


# ------------------------------------------------------------------ slow: data the sweep runs on

def busy_dataset(root: Path) -> Path:
    """Two models, ~20 MB of NDJSON: enough that evaluate.py's two workers scan for a while."""
    for model in ("ModelA", "ModelB"):
        write_evals(make_cohort(root, model, seed=len(model)), model)
    rng = random.Random(11)
    for model in ("ModelA", "ModelB"):
        run = root / f"data/r1/{model}/2026-01-09_00-00-00_r1_{model}_zs_greedy"
        for step in range(12):
            records = [make_record(model, "zs", "greedy", "dates", {"length": step}, i, "incorrect", rng, step=step)
                       for i in range(150)]
            for record in records:
                record["answer"] += " ".join(str(rng.random()) for _ in range(250))
            write_run(run, records)
    # ModelC's records are of a task no generator knows: --offline (re-grading) fails in a worker
    bogus = root / "data" / "r1" / "ModelC"
    write_run(bogus / "2026-01-10_00-00-00_r1_ModelC_zs_greedy",
              [make_record("ModelC", "zs", "greedy", "no_such_task", {"length": 1}, i, "correct", rng) for i in range(8)])
    write_evals(bogus, "ModelC")
    dataset = write_dataset(root, ["ModelA", "ModelB"])
    body = json.loads(dataset.read_text())
    variants = {"nodir": {"db": "/proc/nope/x.db"},             # the reproduction
                "badconfig": {"db": "bad.db", "config": "../bad.yaml"},
                # ModelC first: its batch is scanned first and fails while the other worker is busy
                "offline": {"db": "offline.db", "cohorts": [{"path": "r1/ModelC/evals.json"}, *body["cohorts"]]},
                "nodb": {"db": "missing.db"},
                "onlya": {"cohorts": body["cohorts"][:1]}}
    for name, change in variants.items():
        (dataset.parent / f"{name}.json").write_text(json.dumps({**body, **change}))
    (root / "bad.yaml").write_text("name: bad\ntasks: 5\n")
    (root / "garbage.db").write_bytes(random.Random(5).randbytes(300_000))
    (dataset.parent / "garbage.json").write_text(json.dumps({**body, "db": "../garbage.db"}))
    return dataset


@pytest.fixture(scope="module")
def sweep_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    dataset = busy_dataset(root)
    run_script("evaluate.py", "--dataset", root / "data" / "onlya.json", "--parallel", "2", "--quiet", check=True)
    shutil.copyfile(root / "data" / "pointsdb-r1.db", root / "stale.db")       # ModelA only
    run_script("evaluate.py", "--dataset", dataset, "--parallel", "2", "--quiet", check=True)
    shutil.copyfile(root / "data" / "pointsdb-r1.db", root / "complete.db")    # both models
    return root


def drive(cases: list[dict], tmp_path: Path) -> list[dict]:
    """Run ``cases`` in one process (tests/support/hang_driver.py); one dict per run."""
    spec = tmp_path / "cases.json"
    spec.write_text(json.dumps(cases))
    runs = sum(c["repeat"] for c in cases)
    proc = subprocess.run([sys.executable, "-m", "tests.support.hang_driver", str(spec)], cwd=REPO, env=ENV,
                          capture_output=True, text=True, timeout=runs * LIMIT + 60)
    assert proc.returncode == 0, f"a run did not end within {LIMIT} s:\n{proc.stderr[-8000:]}"
    return [json.loads(line) for line in proc.stdout.splitlines()]


def assert_one_line_exit_2(runs: list[dict], fragments: dict[str, str]) -> None:
    for run in runs:
        lines = run["stderr"]
        assert run["code"] == 2 and len(lines) == 1 and "Traceback" not in lines[0], run
        assert fragments[run["name"]] in lines[0], run


# ------------------------------------------------------------------ slow: bad inputs, repeated

@pytest.mark.slow
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: evaluate.py starts no worker processes")
def test_evaluate_error_paths_with_busy_workers_end(sweep_root, tmp_path, load):
    """Errors raised while evaluate.py's workers scan: the issue's missing db folder, a config that
    is not valid (read while the workers scan), a worker's own error (--offline on records of a
    task that does not exist). 17 runs of each, two cores busy beside them."""
    data = sweep_root / "data"
    script = str(REPO / "evaluate.py")
    cases = [{"name": "nodir", "args": ["--dataset", str(data / "nodir.json")]},
             {"name": "badconfig", "args": ["--dataset", str(data / "badconfig.json")]},
             {"name": "worker-error", "args": ["--dataset", str(data / "offline.json"), "--offline"]}]
    cases = [dict(c, script=script, cwd=str(sweep_root), repeat=17, args=[*c["args"], "--parallel", "2"])
             for c in cases]
    load(90)
    runs = drive(cases, tmp_path)
    assert len(runs) == 51
    assert_one_line_exit_2(runs, {"nodir": "cannot write the PointsDB /proc/nope/x.db",
                                  "badconfig": "tasks: must be a list", "worker-error": "no_such_task"})


@pytest.mark.slow
def test_every_bad_input_case_ends_every_time(area, tmp_path, load):  # noqa: F811  (area is the imported fixture)
    """tests/test_cli_bad_inputs.py's table (every non-web command), three times each, in one process."""
    cases = [{"name": name, "script": str(REPO / script), "args": args, "cwd": str(area), "repeat": 3}
             for name, script, args, _ in CASES]
    load(60)
    runs = drive(cases, tmp_path)
    assert len(runs) == 3 * len(CASES)
    assert_one_line_exit_2(runs, {name: fragment for name, _, _, fragment in CASES})


def web_cases(root: Path, dataset: Path) -> list[tuple[str, str, list[str], str]]:
    """(name, script, args, fragment): each web app's bad inputs, including the three a loaded
    machine once saw time out (a deeply nested dataset, an SQL-looking --group-by, a garbage PointsDB)."""
    data = root / "data"
    deep = root / "deep.json"
    deep.write_text(DEEP)
    cases = []
    for app in ("leaderboard.py", "explorer.py", "spiderweb.py"):
        stem = app[:-3]
        cases += [(f"{stem}-missing", app, [str(data / "nope.json")], "dataset file not found"),
                  (f"{stem}-deep", app, [str(deep)], "nested too deeply"),
                  (f"{stem}-garbage-db", app, [str(data / "garbage.json")], "garbage.db"),
                  (f"{stem}-no-db", app, [str(data / "nodb.json")], "evaluate.py --dataset")]
    cases += [("leaderboard-sql-group-by", "leaderboard.py",
               [str(dataset), "--group-by", "params.x'); DROP TABLE points; --"], "params.x'); DROP TABLE points; --"),
              ("leaderboard-base-path", "leaderboard.py", [str(dataset), "--url-base-pathname", "/a b/"],
               "--url-base-pathname"),
              ("spiderweb-bad-group-by", "spiderweb.py", [str(dataset), "--group-by", "params.bogus"], "params.bogus"),
              ("explorer-bad-tokenizer", "explorer.py", [str(dataset), "--tokenizer", str(root / "no-tokenizer")],
               "tokenizer")]
    return [(name, app, [*args, "--port", str(free_port())], fragment) for name, app, args, fragment in cases]


@pytest.mark.slow
def test_web_apps_bad_inputs_end_every_time(sweep_root, tmp_path, load):
    """Each web app on each bad input, three times, in one process, two cores busy beside it."""
    cases = web_cases(sweep_root, sweep_root / "data" / "r1.json")
    spec = [{"name": name, "script": str(REPO / app), "args": args, "cwd": str(sweep_root), "repeat": 3}
            for name, app, args, _ in cases]
    load(60)
    runs = drive(spec, tmp_path)
    assert len(runs) == 3 * len(cases)
    assert_one_line_exit_2(runs, {name: fragment for name, _, _, fragment in cases})


# ------------------------------------------------------------------ slow: Ctrl-C at random moments

def session_processes(sid: int) -> list[psutil.Process]:
    """Running processes of session ``sid`` (each interrupted command is started in its own)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if os.getsid(proc.pid) == sid and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (ProcessLookupError, psutil.NoSuchProcess, PermissionError):
            pass
    return found


def interrupt_at(args: list[str], delay: float, cwd: Path) -> tuple[int | None, str, list[psutil.Process]]:
    """Start ``args`` in a new session, SIGINT its process group after ``delay`` s (as a terminal's
    Ctrl-C does); returns (exit code or None if it did not end within LIMIT, stderr, processes left)."""
    proc = subprocess.Popen(args, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    try:
        _, err = proc.communicate(timeout=LIMIT)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code, err = None, ""
    deadline = time.monotonic() + GONE_WITHIN
    left = session_processes(proc.pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = session_processes(proc.pid)
    for straggler in left + ([psutil.Process(proc.pid)] if code is None else []):
        try:
            straggler.kill()
        except psutil.NoSuchProcess:
            pass
    proc.wait()
    return code, err, left


def db_contents(path: Path) -> tuple:
    with duckdb.connect(str(path), read_only=True) as con:
        return (con.execute("SELECT * FROM points ORDER BY ALL").fetchall(),
                con.execute("SELECT eval_id FROM evals ORDER BY 1").fetchall())


def timed(args: list[str], cwd: Path) -> float:
    start = time.monotonic()
    subprocess.run(args, cwd=cwd, env=ENV, capture_output=True, timeout=300, check=True)
    return time.monotonic() - start


def evaluate_interrupts(root: Path, runs: int, rng: random.Random, problems: list[str]) -> None:
    db, stale, complete = root / "data" / "pointsdb-r1.db", root / "stale.db", root / "complete.db"
    args = [sys.executable, str(REPO / "evaluate.py"), "--dataset", str(root / "data" / "r1.json"), "--parallel", "2"]
    shutil.copyfile(stale, db)
    span = timed(args, root)                            # one whole build, stale -> complete
    stale_bytes, wanted = stale.read_bytes(), db_contents(complete)
    for number in range(runs):
        shutil.copyfile(stale, db)
        delay = rng.uniform(0, span)
        code, err, left = interrupt_at(args, delay, root)
        what = f"evaluate.py run {number}, SIGINT after {delay:.2f} s (seed {SEED})"
        if code is None or left:
            problems.append(f"{what}: {'did not end' if code is None else f'left {left}'}\n{err[-1500:]}")
            continue
        leftovers = [p.name for p in db.parent.iterdir() if ".tmp-" in p.name]
        if leftovers:
            problems.append(f"{what}: left {leftovers}")
        if db.read_bytes() != stale_bytes and db_contents(db) != wanted:
            problems.append(f"{what}: the PointsDB is neither as it was nor complete (exit {code})")


def runner_interrupts(root: Path, runs: int, rng: random.Random, problems: list[str]) -> None:
    from tests.support.runner import runner_args, simulator  # scipy: only the slow tier needs it

    with simulator() as sim:
        def args(number: int) -> list[str]:
            return [sys.executable, str(REPO / "runner.py"),
                    *map(str, runner_args(sim.url, root, output=f"out{number}", cache=f"cache{number}"))]
        span = timed(args(-1), root)
        for number in range(runs):
            delay = rng.uniform(0, span)
            code, err, left = interrupt_at(args(number), delay, root)
            what = f"runner.py run {number}, SIGINT after {delay:.2f} s (seed {SEED})"
            if code is None or left:
                problems.append(f"{what}: {'did not end' if code is None else f'left {left}'}\n{err[-1500:]}")
            shutil.rmtree(root / f"out{number}", ignore_errors=True)
            shutil.rmtree(root / f"cache{number}", ignore_errors=True)


@pytest.mark.slow
def test_ctrl_c_at_random_moments_ends_cleanly(sweep_root, tmp_path):
    """SIGINT to evaluate.py and to runner.py (against the simulator) at random moments, 50 times
    each, the two side by side: every run ends within LIMIT, leaves no process behind, and
    evaluate.py leaves the PointsDB as it was or complete (never a temp copy)."""
    problems: list[str] = []
    runner_root = tmp_path / "runner"
    runner_root.mkdir()
    threads = [threading.Thread(target=evaluate_interrupts, args=(sweep_root, 50, random.Random(SEED), problems)),
               threading.Thread(target=runner_interrupts, args=(runner_root, 50, random.Random(SEED + 1), problems))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, "\n".join(problems)
