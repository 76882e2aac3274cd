"""A reduced simulated r12 study for the seed tests, built once per test session.

`study_root(tmp_path_factory)` copies the shipped configs, templates, samplers, dataset
configs and cohort evals.json files into a sandbox, runs the documented
`python -m resolver.r12sim` there at corner density for three profiles (the shipped
datasets are trimmed to those cohorts and told their density), and adds datasets whose
eval_ids look like numbers. Later calls in the same session reuse the sandbox.

Identifier datasets live beside it in `ids_root(root)` (`<root>/ids-study`, so the
study's own data/ stays exactly the shipped layout for `cohort.py list/verify`); they
are the records of the r12 cohorts copied with only `model` renamed,
so each eval's data is identical and only its id changes):

* data/hexes.json  — the three simulated evals with their ordinary hex ids;
* data/digits.json — the same three, every eval_id all digits: 299587, 097274, 000000;
* data/oddids.json — digits plus an exponent-looking id, 3115e1 (a fourth copy).

The ids are sha256(model|template|sampler)[:6] of the names below (checked by the tests
with hashlib, independently of the code under test).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROFILES = ("sim-strong", "sim-mid", "sim-weak")
TEMPLATE, SAMPLER = "zerocot-nosys", "greedy-4k"
# renamed model -> (source profile, the eval_id it hashes to)
ID_MODELS = {
    "sim-id0": ("sim-strong", "299587"),
    "sim-id47": ("sim-mid", "097274"),
    "sim-id22500203": ("sim-weak", "000000"),
}
EXPONENT_MODEL = ("sim-id7", "sim-strong", "3115e1")
_DONE = "study-ready"


def env() -> dict:
    full = dict(os.environ, PYTHONPATH=str(REPO), TQDM_DISABLE="1", HF_HUB_DISABLE_TELEMETRY="1")
    full.pop("REASONSCAPE_REMOTE", None)
    return full


def study_root(tmp_path_factory) -> Path:
    """The sandbox holding the simulated study (built on first use in a test run).

    Under pytest-xdist (tests/run.sh) the workers share it: it lives beside their own
    temporary folders, and a lock makes the second worker wait for the first's build.
    """
    import fcntl

    reuse = os.environ.get("REASONSCAPE_SEED_STUDY")   # a sandbox built earlier (test development)
    if reuse:
        return _built(Path(reuse))
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    with open(base / "seed-study.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _built(base / "seed-study")


def _built(root: Path) -> Path:
    if (root / _DONE).exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    _copy_shipped(root)
    proc = subprocess.run([sys.executable, "-m", "resolver.r12sim", "--root", str(root), "--density", "corner",
                           "--profiles", ",".join(PROFILES), "--parallel", "32"],
                          cwd=root, env=env(), capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise AssertionError(f"r12sim failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    _identifier_datasets(root)
    for name in ("hexes", "digits", "oddids"):
        subprocess.run([sys.executable, str(REPO / "evaluate.py"), "--dataset", f"data/{name}.json", "--quiet"],
                       cwd=ids_root(root), env=env(), check=True, capture_output=True, timeout=300)
    (root / _DONE).write_text("ok\n")
    return root


def _copy_shipped(root: Path) -> None:
    for folder in ("configs", "templates", "samplers"):
        shutil.copytree(REPO / folder, root / folder)
    data = root / "data"
    data.mkdir(parents=True)
    for name in ("r12.json", "r12-leaderboard.json", "tables-16k.json"):
        dataset = json.loads((REPO / "data" / name).read_text())
        dataset["cohorts"] = [c for c in dataset["cohorts"] if Path(c["path"]).parent.name in PROFILES]
        dataset["density"] = "corner"
        (data / name).write_text(json.dumps(dataset, indent=2))
        for cohort in dataset["cohorts"]:
            target = data / cohort["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / "data" / cohort["path"], target)


def ids_root(root: Path) -> Path:
    """The sandbox of the identifier datasets (data/hexes.json, data/digits.json, data/oddids.json)."""
    return root / "ids-study"


def _copy_cohort(root: Path, source_profile: str, model: str) -> str:
    """data/ids/<model>/ of ids_root: the r12 cohort of `source_profile` with `model` renamed;
    returns its evals.json path relative to the datasets."""
    src = root / "data" / "r12" / source_profile
    dst = ids_root(root) / "data" / "ids" / model
    entry = json.loads((src / "evals.json").read_text())[0]
    for folder in src.glob("20*"):
        out = dst / folder.name.replace(source_profile, model)
        out.mkdir(parents=True, exist_ok=True)
        for path in folder.glob("*.ndjson"):
            with open(path, encoding="utf-8") as fin, open(out / path.name, "w", encoding="utf-8") as fout:
                for line in fin:
                    record = json.loads(line)
                    record["model"] = model
                    fout.write(json.dumps(record) + "\n")
    entry["evaluate"]["glob"] = f"data/ids/{model}/*_{model}_{TEMPLATE}_{SAMPLER}/*"
    entry["filters"]["model"] = model
    (dst / "evals.json").write_text(json.dumps([entry], indent=2))
    return f"ids/{model}/evals.json"


def _identifier_datasets(root: Path) -> None:
    base = json.loads((root / "data" / "r12.json").read_text())
    (ids_root(root) / "data").mkdir(parents=True, exist_ok=True)
    (ids_root(root) / "configs").symlink_to(root / "configs")

    def dataset(name, cohorts):
        (ids_root(root) / "data" / f"{name}.json").write_text(json.dumps(
            dict(base, name=name, db=f"pointsdb-{name}.db", cache=f"{name}/.cache",
                 cohorts=[{"path": c} for c in cohorts]), indent=2))

    digit_cohorts = [_copy_cohort(root, source, model) for model, (source, _) in ID_MODELS.items()]
    exponent = _copy_cohort(root, EXPONENT_MODEL[1], EXPONENT_MODEL[0])
    dataset("hexes", [f"../../data/r12/{p}/evals.json" for p in PROFILES])
    dataset("digits", digit_cohorts)
    dataset("oddids", digit_cohorts + [exponent])


def run(root: Path, argv, timeout=300, in_process: bool = False) -> subprocess.CompletedProcess:
    """One command line (a list; argv[0] a top-level script) as a real subprocess in the sandbox,
    or, with `in_process`, through the script's own `main` in this process (tests/support/in_process.py)."""
    script, *rest = argv
    if in_process:
        from tests.support.in_process import IN_PROCESS_SCRIPTS, run_in_process

        if script in IN_PROCESS_SCRIPTS:
            return run_in_process(REPO / script, [str(a) for a in rest], root, env())
    command = [sys.executable, str(REPO / script), *map(str, rest)] if script.endswith(".py") else list(argv)
    return subprocess.run(command, cwd=root, env=env(), capture_output=True, text=True, timeout=timeout)
