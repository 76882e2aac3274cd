"""A complete *simulated* r12 study: the data behind data/r12.json, data/r12-leaderboard.json
and data/tables-16k.json when the published results are not at hand.

    python -m resolver.r12sim                  # every r12 task x 5 simulated profiles, then evaluate.py
    python -m resolver.r12sim --density corner --profiles sim-strong,sim-weak   # a small one

Each simulator profile (resolver/sim/profiles.py) stands in for one model family; its
cohort is ``data/r12/<profile>/`` (and ``data/tables-16k/<profile>/`` for the calibrated
tables study), with a tracked evals.json whose label starts with "Simulated", whose
tags hold ``simulated`` and whose model name is the profile's ``sim-*`` name, so every
table, chart and web page shows that the numbers are not a real model's.

The command runs the real scripts as subprocesses (as the demo does): the simulator,
``runner.py`` once per profile and config, then ``evaluate.py --dataset`` for the three
datasets. Earlier simulated run folders in those cohorts are replaced. tables-16k is
calibrated by prompt tokens; with no real tokenizer on an offline machine it uses a
small byte-level BPE trained here on table prompts (``cache/sim-tokenizer``), which is
one more reason its numbers are simulated. Timings: docs/simulator.md.
Real results instead: ``python data.py pull dataset data/r12.json``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from resolver.core.bootstrap import REPO

COMMAND = "python -m resolver.r12sim"
TEMPLATE = "templates/zerocot-nosys.json"
SAMPLER = "samplers/greedy-4k.json"
R12_CONFIG = "configs/r12.yaml"
TABLES_CONFIG = "configs/tables-16k.yaml"
TOKENIZER_DIR = "cache/sim-tokenizer"
DATASETS = ("data/r12.json", "data/r12-leaderboard.json", "data/tables-16k.json")


@dataclass(frozen=True)
class StandIn:
    """A simulator profile standing in for one model family in the simulated study."""

    profile: str
    family: str
    description: str
    groups: tuple
    leaderboard: bool = True


STAND_INS = (
    StandIn("sim-strong", "qwen3", "strong model", ("family:qwen3", "arch:moe", "size:large")),
    StandIn("sim-thinker", "seedoss", "reasoning (thinking) model", ("family:seedoss", "arch:dense", "size:large")),
    StandIn("sim-mid", "llama", "mid-size model", ("family:llama", "arch:dense", "size:mid")),
    StandIn("sim-weak", "phi4", "weak small model", ("family:phi4", "arch:dense", "size:small")),
    StandIn("sim-loopy", "granite", "loop-prone model", ("family:granite", "arch:moe", "size:small"),
            leaderboard=False),
)
TABLES_PROFILES = ("sim-strong", "sim-mid", "sim-weak")


def template_name() -> str:
    return Path(TEMPLATE).stem


def sampler_name() -> str:
    return Path(SAMPLER).stem


def eval_entry(stand_in: StandIn, study: str, cohort_dir: str) -> dict:
    """The evals.json entry of one simulated cohort (`cohort_dir` relative to the repository)."""
    return {
        "evaluate": {"glob": f"{cohort_dir}/*_{study}_{stand_in.profile}_{template_name()}_{sampler_name()}/*"},
        "filters": {"model": stand_in.profile, "template": template_name(), "sampler": sampler_name()},
        "label": f"Simulated {stand_in.description} ({stand_in.family} stand-in, {study})",
        "groups": list(stand_in.groups),
        "tags": (["leaderboard"] if stand_in.leaderboard else []) + ["simulated"],
        "hf_id": None,
    }


def producing_command(dataset) -> str | None:
    """The command that fills a shipped dataset with simulated data (None for other datasets)."""
    name = Path(str(dataset)).name
    if name in {Path(d).name for d in DATASETS}:
        return COMMAND
    if name == "demo.json":
        return "python3 -m resolver.demo --no-serve"
    return None


def missing_data_hint(dataset) -> str:
    """What to run when a dataset has no data yet: the real pull, the simulated study, or evaluate.py."""
    parts = [f"fetch the published results with: python data.py pull dataset {dataset}"]
    simulated = producing_command(dataset)
    if simulated:
        parts.append(f"or generate simulated data with: {simulated}")
    parts.append(f"or build it from your own runs with: python evaluate.py --dataset {dataset}")
    return "; ".join(parts)


# ------------------------------------------------------------------------- running

def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    names = [s.profile for s in STAND_INS]
    parser.add_argument("--profiles", default=",".join(names),
                        help=f"comma-separated simulator profiles (default: all: {','.join(names)})")
    parser.add_argument("--density", default="normal", choices=("normal", "lowdef", "corner"),
                        help="runner --density (default normal: the complete study)")
    parser.add_argument("--precision", default="low", help="runner --precision (default low)")
    parser.add_argument("--parallel", type=int, default=64, help="runner --parallel (default 64)")
    parser.add_argument("--no-tables", action="store_true", help="skip the calibrated tables-16k study")
    parser.add_argument("--root", type=Path, default=REPO,
                        help="folder holding configs/, templates/, samplers/ and data/ (default: this checkout)")
    args = parser.parse_args(argv)
    args.profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    unknown = [p for p in args.profiles if p not in names]
    if unknown or not args.profiles:
        parser.error(f"--profiles: unknown {', '.join(unknown) or '(none given)'}; valid: {', '.join(names)}")
    return args


def show_and_run(root: Path, *cmd: str) -> None:
    """Print a command as a user would type it, run it in `root`; stop on failure (as the demo does)."""
    from resolver.sim.demo import show_and_run as run_shown

    run_shown(root, *cmd, prog=COMMAND)


def clear_runs(root: Path, study: str, profiles) -> None:
    """Remove earlier simulated run folders of these cohorts (this command's own output)."""
    for profile in profiles:
        for folder in sorted((root / "data" / study / profile).glob(f"20*_{study}_{profile}_*")):
            if folder.is_dir():
                shutil.rmtree(folder)


def build_tokenizer(root: Path) -> str:
    """A small byte-level BPE trained on table prompts (deterministic), saved once under cache/."""
    target = root / TOKENIZER_DIR
    if (target / "tokenizer.json").is_file():
        return TOKENIZER_DIR
    from resolver.config import train_table_tokenizer

    train_table_tokenizer(target)
    print(f"\n(trained a simulated tokenizer for the calibrated tables study: {TOKENIZER_DIR})", flush=True)
    return TOKENIZER_DIR


def run_study(root: Path, config: str, study: str, profiles, args, tokenizer: str | None = None) -> None:
    """The simulator on `config`, then runner.py for each profile into data/<study>/<profile>/."""
    from resolver.sim.simulator import start_simulator_process

    clear_runs(root, study, profiles)
    # the same tokenizer path for both, so the runner reuses the simulator's calibration cache
    calibrate = ["--tokenizer", str(root / tokenizer)] if tokenizer else []
    sim_extra = [*calibrate, "--template", str(root / TEMPLATE)] if tokenizer else []
    simulator = start_simulator_process(str(root / config), port=0, ready_timeout=600, extra_args=sim_extra)
    shown = f" --tokenizer {tokenizer} --template {TEMPLATE}" if tokenizer else ""
    print(f"\n$ python -m resolver.simulator --config {config} --port {simulator.port}{shown} &", flush=True)
    try:
        for profile in profiles:
            show_and_run(root, "runner.py", "--config", config, "--template", TEMPLATE, "--sampler", SAMPLER,
                         "--model", profile, "--apibase", f"http://127.0.0.1:{simulator.port}",
                         "--precision", args.precision, "--density", args.density,
                         "--parallel", str(args.parallel), "--output", f"data/{study}/{profile}", "--quiet",
                         *calibrate)
    finally:
        simulator.stop()


def main(argv=None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    root = args.root.resolve()
    started = time.monotonic()
    print(f"Simulated r12 study: {len(args.profiles)} simulated profiles ({', '.join(args.profiles)}), "
          f"density {args.density}, precision {args.precision}. These are NOT real model results.")
    run_study(root, R12_CONFIG, "r12", args.profiles, args)
    datasets = ["data/r12.json", "data/r12-leaderboard.json"]
    tables = [p for p in args.profiles if p in TABLES_PROFILES]
    if not args.no_tables and tables:
        tokenizer = build_tokenizer(root)
        run_study(root, TABLES_CONFIG, "tables-16k", tables, args, tokenizer=tokenizer)
        datasets.append("data/tables-16k.json")
    for dataset in datasets:
        show_and_run(root, "evaluate.py", "--dataset", dataset, "--quiet")
    print(f"\nSimulated study ready in {time.monotonic() - started:.0f} s: "
          + ", ".join(datasets) + ". Try: python analyze.py scores data/r12.json")


if __name__ == "__main__":
    from resolver.core.bootstrap import reexec_in_venv

    reexec_in_venv("resolver.sim.r12study")
    main()
