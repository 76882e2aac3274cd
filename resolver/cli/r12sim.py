"""`python -m resolver.r12sim`: run the complete simulated r12 study (docs/simulator.md).

The study's cohorts, stand-ins and datasets are resolver/sim/r12study.py; this module runs
the simulator, runner.py once per profile and config, then evaluate.py, printing each command.
"""
from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Sequence

from resolver.cli.demo import say, show_and_run as run_shown
from resolver.core.bootstrap import REPO
from resolver.sim import r12study  # standard library only: this runs before the bootstrap

COMMAND, TEMPLATE, SAMPLER, TOKENIZER_DIR = r12study.COMMAND, r12study.TEMPLATE, r12study.SAMPLER, r12study.TOKENIZER_DIR


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from resolver.config import DENSITIES  # here, not at the top: this module loads before the bootstrap

    parser = argparse.ArgumentParser(prog=COMMAND, description=r12study.__doc__.split("\n\n")[0])
    names = [s.profile for s in r12study.STAND_INS]
    parser.add_argument("--profiles", default=",".join(names),
                        help=f"comma-separated simulator profiles (default: all: {','.join(names)})")
    parser.add_argument("--density", default="normal", choices=DENSITIES,
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
    run_shown(root, *cmd, prog=COMMAND)


def clear_runs(root: Path, study: str, profiles: list[str]) -> None:
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


def run_study(root: Path, config: str, study: str, profiles: list[str], args: argparse.Namespace, tokenizer: str | None = None) -> None:
    """The simulator on `config`, then runner.py for each profile into data/<study>/<profile>/."""
    from resolver.sim.simulator import start_simulator_process

    clear_runs(root, study, profiles)
    # the same tokenizer path for both, so the runner reuses the simulator's calibration cache
    calibrate = ["--tokenizer", str(root / tokenizer)] if tokenizer else []
    sim_extra = [*calibrate, "--template", str(root / TEMPLATE)] if tokenizer else []
    # the calibrated study's simulator knows only the runners' density: calibrating every point
    # was most of its start-up; r12's knows every point, as a thinner grid would also rescale
    # its problems' difficulties and so change the answers (docs/simulator.md, --density)
    if tokenizer:
        sim_extra += ["--density", args.density]
    simulator = start_simulator_process(str(root / config), port=0, ready_timeout=600, extra_args=sim_extra)
    shown = f" --density {args.density} --tokenizer {tokenizer} --template {TEMPLATE}" if tokenizer else ""
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


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    root = args.root.resolve()
    started = time.monotonic()
    print(f"Simulated r12 study: {len(args.profiles)} simulated profiles ({', '.join(args.profiles)}), "
          f"density {args.density}, precision {args.precision}. These are NOT real model results.")
    run_study(root, r12study.R12_CONFIG, "r12", args.profiles, args)
    datasets = ["data/r12.json", "data/r12-leaderboard.json"]
    tables = [p for p in args.profiles if p in r12study.TABLES_PROFILES]
    if not args.no_tables and tables:
        tokenizer = build_tokenizer(root)
        run_study(root, r12study.TABLES_CONFIG, "tables-16k", tables, args, tokenizer=tokenizer)
        datasets.append("data/tables-16k.json")
    for dataset in datasets:
        show_and_run(root, "evaluate.py", "--dataset", dataset, "--quiet")
    print(f"\nSimulated study ready in {time.monotonic() - started:.0f} s: "
          + ", ".join(datasets) + ". Try: python analyze.py scores data/r12.json")


def run() -> None:
    """`python -m resolver.r12sim`: into the project's virtualenv (installing it the first time), then main."""
    from resolver.core.bootstrap import reexec_in_venv

    reexec_in_venv("resolver.r12sim", say=say)
    main()


if __name__ == "__main__":             # python -m resolver.r12sim (resolver/r12sim.py)
    run()
