"""What the benchmarks share: where results go, and the synthetic r12-sized dataset flags."""
from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "benchmarks" / "out"


def write_result(name: str, result: dict) -> Path:
    """tests/benchmarks/out/<name>.json (the machine-readable twin of the printed figures)."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def add_synth_db_args(parser) -> None:
    """Size of the synthetic PointsDB (defaults: 60 evals x 12 tasks x 90 points, about r12)."""
    parser.add_argument("--evals", type=int, default=60)
    parser.add_argument("--points-per-task", type=int, default=90)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)


def build_synth_dataset(tmp: Path, args) -> Path:
    """Write the synthetic PointsDB and its dataset file under `tmp`; returns the dataset file."""
    from synth_db import write_synth_db

    write_synth_db(Path(tmp) / "synth.db", evals=args.evals, points_per_task=args.points_per_task,
                   samples=args.samples, dataset=True)
    return Path(tmp) / "synth.json"
