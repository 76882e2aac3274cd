"""A realistic r12-shaped results tree: real runner.py output against the simulator.

    .venv/bin/python tests/benchmarks/r12_tree.py [--dir tests/benchmarks/out/r12-tree]

One eval per simulator profile (sim-strong, sim-mid, sim-weak, sim-loopy,
sim-thinker), each a complete `runner.py --config configs/r12.yaml` run at normal
density and the config's default precision (16 samples per round, up to 2 rounds:
16-32 records per step, one NDJSON file per step, ~985 steps per eval), with the
zerocot-nosys template and the greedy-2k sampler. Everything is written by the real
runner against a real simulator process on loopback; the tree is built once (a
`.complete` marker naming the runner's record fields: a runner that writes other
fields rebuilds it) and reused. `scaled_copy` makes k-times larger trees from it by
adding evals whose records differ only in the model name; `legacy_copy` removes the
`text_size` field the runner records, as records of older runs or other tools lack it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

DEFAULT_DIR = REPO / "tests" / "benchmarks" / "out" / "r12-tree"
PROFILES = ("sim-strong", "sim-mid", "sim-weak", "sim-loopy", "sim-thinker")
TEMPLATE, SAMPLER = "zerocot-nosys", "greedy-2k"


def _format() -> str:
    """What a complete tree's marker holds: the record fields of the runner that wrote it."""
    from resolver.records.schema import RECORD_FIELDS

    return "fields " + ",".join(RECORD_FIELDS) + "\n"


def _write_evals(cohort: Path, model: str) -> str:
    cohort.mkdir(parents=True, exist_ok=True)
    (cohort / "evals.json").write_text(json.dumps([{
        "evaluate": {"glob": f"*_{model}_{TEMPLATE}_{SAMPLER}/*"},
        "filters": {"model": model, "template": TEMPLATE, "sampler": SAMPLER},
        "label": model, "groups": ["arch:sim"], "tags": ["leaderboard"]}]))
    return f"r12/{model}/evals.json"


def write_dataset(root: Path, models, name: str) -> Path:
    """<root>/data/<name>.json naming one cohort per model (evals.json files written too)."""
    cohorts = [{"path": _write_evals(root / "data" / "r12" / m, m)} for m in models]
    path = root / "data" / f"{name}.json"
    path.write_text(json.dumps({"name": name, "db": f"pointsdb-{name}.db", "cache": ".cache",
                                "config": str(REPO / "configs" / "r12.yaml"), "cohorts": cohorts}))
    return path


def build(root: Path = DEFAULT_DIR, profiles=PROFILES, parallel: int = 64, quiet: bool = False) -> Path:
    """Run the runner for every profile (once) and return the dataset file of the tree."""
    root = Path(root)
    marker = root / ".complete"
    if marker.exists() and marker.read_text() == _format():
        return root / "data" / "r12.json"
    if root.exists():
        shutil.rmtree(root)
    from resolver.sim.simulator import start_simulator_process

    env = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_DISABLE": "1"}
    sim = start_simulator_process(str(REPO / "configs" / "r12.yaml"))
    try:
        for model in profiles:
            started = time.perf_counter()
            out = root / "data" / "r12" / model
            args = [sys.executable, str(REPO / "runner.py"), "--config", REPO / "configs" / "r12.yaml",
                    "--template", REPO / "templates" / f"{TEMPLATE}.json",
                    "--sampler", REPO / "samplers" / f"{SAMPLER}.json", "--model", model,
                    "--apibase", sim.url, "--parallel", parallel, "--output", out,
                    "--cache", root / "cache" / model, "--quiet"]
            proc = subprocess.run(list(map(str, args)), capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                raise SystemExit(f"runner.py failed for {model}:\n{proc.stdout}\n{proc.stderr}")
            if not quiet:
                print(f"r12 tree: {model} written in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    finally:
        sim.stop()
    shutil.rmtree(root / "cache", ignore_errors=True)
    dataset = write_dataset(root, profiles, "r12")
    marker.write_text(_format())
    return dataset


def ndjson_files(root: Path, models=None) -> list:
    base = Path(root) / "data" / "r12"
    chosen = models or sorted(p.name for p in base.iterdir() if p.is_dir())
    return sorted(str(f) for m in chosen for f in (base / m).rglob("*.ndjson"))


def scaled_copy(source: Path, target: Path, factor: int, models=PROFILES) -> Path:
    """A tree with `factor` x the evals of `source`: copy k of model M is model `M-xk`.

    Only the model name differs (in the records, folder names and evals.json), so the
    shape of every file - sizes, records per file, answers - is the source's.
    """
    target = Path(target)
    marker = target / f".complete-{factor}"
    names = [m if k == 0 else f"{m}-x{k}" for k in range(factor) for m in models]
    if marker.exists() and marker.read_text() == _format():
        return target / "data" / f"r12x{factor}.json"
    if target.exists():
        shutil.rmtree(target)
    for k in range(factor):
        for model in models:
            new = model if k == 0 else f"{model}-x{k}"
            old_field, new_field = f'"model": "{model}"'.encode(), f'"model": "{new}"'.encode()
            for run in (Path(source) / "data" / "r12" / model).iterdir():
                if not run.is_dir():
                    continue
                dest = target / "data" / "r12" / new / run.name.replace(f"_{model}_", f"_{new}_")
                dest.mkdir(parents=True, exist_ok=True)
                for f in run.iterdir():
                    data = f.read_bytes()
                    (dest / f.name).write_bytes(data.replace(old_field, new_field) if k else data)
    dataset = write_dataset(target, names, f"r12x{factor}")
    marker.write_text(_format())
    return dataset


_TEXT_SIZE = re.compile(rb', "text_size": \{"bytes": [0-9]+, "gzip": [0-9]+, "method": "[^"]*"\}')


def legacy_copy(source: Path, target: Path, models=PROFILES) -> Path:
    """The tree without the runner's `text_size` fields (evaluate.py then deflates every text)."""
    target = Path(target)
    marker = target / ".complete"
    if marker.exists() and marker.read_text() == _format():
        return target / "data" / "r12.json"
    if target.exists():
        shutil.rmtree(target)
    for model in models:
        for f in (Path(source) / "data" / "r12" / model).rglob("*.ndjson"):
            dest = target / f.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            data, removed = _TEXT_SIZE.subn(b"", f.read_bytes())
            if removed != data.count(b"\n"):
                raise SystemExit(f"{f}: expected one text_size per answered record, removed {removed}")
            dest.write_bytes(data)
    dataset = write_dataset(target, models, "r12")
    marker.write_text(_format())
    return dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=str(DEFAULT_DIR))
    args = parser.parse_args()
    dataset = build(Path(args.dir))
    files = ndjson_files(Path(args.dir))
    print(f"{dataset}: {len(files)} files, {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
