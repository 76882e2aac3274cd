"""Simulated r12 trees of many distinct evals, for the cost curve (bench_scale.py).

    .venv/bin/python tests/benchmarks/scale_tree.py --evals 51 [--dir tests/benchmarks/out/scale-tree]

Eval k (0-based) is simulator profile ``PROFILES[k % 5]`` answering with seed ``k // 5 + 1``
under the model name ``<profile>-s<seed>`` (sim-mid-s01, sim-weak-s01, ...): the seed goes
into every answer's random draw, so no two evals share an answer sequence, and the five
profiles give five accuracy and length shapes (sim-loopy and sim-thinker write the long,
often truncated answers). configs/r12.yaml at ``--density lowdef`` (522 steps, up to 2
rounds of 16), zerocot-nosys, greedy-2k: the r12 tree's template and sampler
(tests/benchmarks/r12_tree.py), whose records average ~7 KB.

No HTTP: each eval is the runner's own batch cycle. ``runner.py --mode write-batch``
writes the requests (once: every eval asks the same prompts, only the model name and
so the request key differ), this process answers them with the simulator's
SimulatorApp (as ``python -m resolver.simulator run-batch`` does, minus its GPU
pricing) and ``runner.py --mode read-batch`` writes the run folder, so the records are
the runner's, built by its own code. Each finished eval leaves a ``.done`` marker naming the record fields (a
runner writing other fields rebuilds it); the trees live under tests/benchmarks/out/,
which git ignores.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import r12_tree

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DIR = REPO / "tests" / "benchmarks" / "out" / "scale-tree"
# sim-mid first: the 1-eval dataset is a middling model, not an extreme one
PROFILES = ("sim-mid", "sim-strong", "sim-weak", "sim-loopy", "sim-thinker")
DENSITY = "lowdef"
CONFIG = REPO / "configs" / "r12.yaml"


def eval_names(count: int) -> list:
    """The model names of the first `count` evals, in build order."""
    return [f"{PROFILES[k % len(PROFILES)]}-s{k // len(PROFILES) + 1:02d}" for k in range(count)]


def profile_and_seed(name: str) -> tuple:
    profile, seed = name.rsplit("-s", 1)
    return profile, int(seed)


def _runner(name: str, root: Path, mode: str, extra=()) -> str:
    args = [sys.executable, str(REPO / "runner.py"), "--config", CONFIG, "--density", DENSITY,
            "--template", REPO / "templates" / f"{r12_tree.TEMPLATE}.json",
            "--sampler", REPO / "samplers" / f"{r12_tree.SAMPLER}.json", "--model", name, "--mode", mode,
            "--output", root / "data" / "r12" / name, "--cache", root / "cache" / name, "--quiet", *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_DISABLE": "1"}
    proc = subprocess.run(list(map(str, args)), capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"runner.py --mode {mode} failed for {name}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def _requests(root: Path) -> Path:
    """The run-batch input of the experiment, written once by ``runner.py --mode write-batch``.

    Every eval asks the same prompts (runner seed 42): only the body's model differs, and with
    it the request key (custom_id), which `_answer_file` recomputes as the runner does.
    """
    path = root / "requests.ndjson"
    if not path.exists():
        name = "request-template"
        written = _runner(name, root, "write-batch")
        batch = next(line.split(": ", 1)[1] for line in written.splitlines() if line.startswith("batch file: "))
        shutil.move(batch, path)
        shutil.rmtree(root / "data" / "r12" / name, ignore_errors=True)
        shutil.rmtree(root / "cache" / name, ignore_errors=True)
    return path


def _answer_file(source: Path, target: Path, name: str, app) -> int:
    """Answer the requests as model `name` as the simulator would, in vLLM's output format."""
    from resolver.client import request_key
    from resolver.sim.app import usage_of
    from resolver.sim.profiles import PROFILES as SIM_PROFILES

    profile = SIM_PROFILES[profile_and_seed(name)[0]]
    lines = 0
    with open(source, encoding="utf-8") as src, open(target, "w", encoding="utf-8") as out:
        for line in src:
            body = dict(json.loads(line)["body"], model=name)
            # the served name differs from the profile's (vLLM's --served-model-name)
            answer, prompt_tokens = app.answer(profile, body)
            reply = app.completion_object(body, answer, usage_of(answer, prompt_tokens))
            out.write(json.dumps({"id": f"vllm-{uuid.uuid4().hex}", "custom_id": request_key(body),
                                  "response": {"status_code": 200, "request_id": uuid.uuid4().hex, "body": reply},
                                  "error": None}, ensure_ascii=False) + "\n")
            lines += 1
    return lines


def build_eval(root: Path, name: str, problems) -> dict:
    """One eval's run folder: its answers to the shared requests, then ``runner.py --mode
    read-batch``; returns the seconds of each phase."""
    from resolver.sim.app import SimulatorApp

    app = SimulatorApp(problems, seed=profile_and_seed(name)[1])
    folder = root / "data" / "r12" / name
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(root / "cache" / name, ignore_errors=True)
    (root / "cache").mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    answers = root / "cache" / f"{name}-answers.ndjson"
    _answer_file(_requests(root), answers, name, app)
    phases = {"answer": time.perf_counter() - clock}
    clock = time.perf_counter()
    read = _runner(name, root, "read-batch", ["--batch", answers])
    phases["read"] = time.perf_counter() - clock
    answers.unlink()
    if "steps still need rounds" in read:   # write-batch writes every round a step may need: never expected
        raise SystemExit(f"{name}: steps still incomplete after the batch:\n{read}")
    shutil.rmtree(root / "cache" / name, ignore_errors=True)
    return phases


def _claim(root: Path, name: str) -> bool:
    """Take eval `name` for this process (several processes may build one tree together):
    False when a live process holds it; a dead holder's claim is taken over."""
    path = root / "claims" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                holder = int(path.read_text())
                os.kill(holder, 0)
                return holder == os.getpid()
            except (FileNotFoundError, ValueError, ProcessLookupError):
                path.unlink(missing_ok=True)
                continue
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return True
    return False


def copy_eval(root: Path, source: str, target: str) -> None:
    """Eval `target` as a copy of eval `source` that differs only in the model name (the
    records' ``model`` field and the run folder's name), as r12_tree.scaled_copy makes them."""
    old, new = f'"model": "{source}"'.encode(), f'"model": "{target}"'.encode()
    base = root / "data" / "r12"
    shutil.rmtree(base / target, ignore_errors=True)
    for run in (p for p in (base / source).iterdir() if p.is_dir()):
        dest = base / target / run.name.replace(f"_{source}_", f"_{target}_")
        dest.mkdir(parents=True)
        for f in run.iterdir():
            (dest / f.name).write_bytes(f.read_bytes().replace(old, new))


def build(count: int, root: Path = DEFAULT_DIR, quiet: bool = False, distinct: int | None = None) -> list:
    """Build (or reuse) the first `count` evals under `root`; returns their names. Several
    processes may build one tree at once (each claims the evals it builds); the call
    returns when every eval is built.

    With `distinct` (a multiple of 5), only the first `distinct` evals are built; eval k
    beyond them, unless an earlier build made it, is a copy of eval k mod `distinct` (the
    same profile) under its own name (``copy_eval``): for a machine that cannot give the
    build its hours. `copies` tells which evals are copies."""
    from resolver.sim.problems import ExperimentProblems

    root = Path(root)
    names = eval_names(count)
    fields = r12_tree._format()
    if distinct is not None and distinct < count:
        if distinct % len(PROFILES) or distinct < 1:
            raise SystemExit(f"--distinct {distinct}: give a positive multiple of {len(PROFILES)}")
        build(distinct, root, quiet)
        for k, name in enumerate(names[distinct:], distinct):
            marker = root / "data" / "r12" / name / ".done"
            if not (marker.exists() and marker.read_text().endswith(fields)):   # built or copied before: kept
                copy_eval(root, names[k % distinct], name)
                marker.write_text(f"copy of {names[k % distinct]}\n" + fields)
        return names
    problems = None
    if _claim(root, "requests"):
        _requests(root)
    while not (root / "requests.ndjson").exists():     # another process is writing it
        time.sleep(5)
    markers = [root / "data" / "r12" / name / ".done" for name in names]
    for name, marker in zip(names, markers):
        if (marker.exists() and marker.read_text().endswith(fields)) or not _claim(root, name):
            continue
        if problems is None:        # the problems of the config, generated once for every eval
            problems = ExperimentProblems(str(CONFIG), seed=42)
        started = time.perf_counter()
        phases = build_eval(root, name, problems)
        marker.write_text(fields)
        if not quiet:
            spent = ", ".join(f"{k} {v:.0f} s" for k, v in phases.items())
            print(f"scale tree: {name} written by {os.getpid()} in {time.perf_counter() - started:.0f} s ({spent}; "
                  f"load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    while not all(m.exists() and m.read_text().endswith(fields) for m in markers):   # evals other processes build
        time.sleep(10)
    return names


def copies(root: Path, names) -> list:
    """The evals among `names` that are copies of another (their .done marker says so)."""
    return [n for n in names if (Path(root) / "data" / "r12" / n / ".done").read_text().startswith("copy of")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=51)
    parser.add_argument("--dir", default=str(DEFAULT_DIR))
    parser.add_argument("--distinct", type=int, default=None,
                        help="build only this many evals (a multiple of 5); copy them to the others")
    args = parser.parse_args()
    names = build(args.evals, Path(args.dir), distinct=args.distinct)
    files = r12_tree.ndjson_files(Path(args.dir), names)
    print(f"{len(names)} evals: {len(files)} files, {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
