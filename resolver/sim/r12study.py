"""A complete *simulated* r12 study: the data behind data/r12.json, data/r12-leaderboard.json
and data/tables-16k.json when the published results are not at hand.

    python -m resolver.r12sim                  # every r12 task x 5 simulated profiles, then evaluate.py
    python -m resolver.r12sim --density corner --profiles sim-strong,sim-weak   # a small one

Each simulator profile (resolver/sim/profiles.py) stands in for one model family; its
cohort is ``data/r12/<profile>/`` (and ``data/tables-16k/<profile>/`` for the calibrated
tables study), with a tracked evals.json whose label starts with "Simulated", whose
tags hold ``simulated`` and whose model name is the profile's ``sim-*`` name, so every
table, chart and web page shows that the numbers are not a real model's.

The command (resolver/cli/r12sim.py) runs the real scripts as subprocesses (as the demo does): the simulator,
``runner.py`` once per profile and config, then ``evaluate.py --dataset`` for the three
datasets. Earlier simulated run folders in those cohorts are replaced. tables-16k is
calibrated by prompt tokens; with no real tokenizer on an offline machine it uses a
small byte-level BPE trained here on table prompts (``cache/sim-tokenizer``), which is
one more reason its numbers are simulated. Timings: docs/simulator.md.
Real results instead: ``python data.py pull dataset data/r12.json``.
"""
from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path

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


def producing_command(dataset: str | PathLike[str]) -> str | None:
    """The command that fills a shipped dataset with simulated data (None for other datasets)."""
    name = Path(str(dataset)).name
    if name in {Path(d).name for d in DATASETS}:
        return COMMAND
    if name == "demo.json":
        return "python3 -m resolver.demo --no-serve"
    return None


def missing_data_hint(dataset: str | PathLike[str]) -> str:
    """What to run when a dataset has no data yet: the real pull (where a manifest lists the
    database), the simulated study, or evaluate.py."""
    from resolver.catalog.manifest import pull_hint

    parts = [pull_hint(dataset)]
    simulated = producing_command(dataset)
    if simulated:
        parts.append(f"or generate simulated data with: {simulated}")
    parts.append(f"or build it from your own runs with: python evaluate.py --dataset {dataset}")
    return "; ".join(parts)
