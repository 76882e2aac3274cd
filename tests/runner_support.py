"""Helpers shared by the runner and simulator tests (not a test module itself)."""
from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path

from resolver.results import iter_records
from resolver.simulator import start_simulator_process

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "configs" / "tiny.yaml"
TEMPLATE = REPO / "templates" / "zerocot-nosys.json"
SAMPLER = REPO / "samplers" / "greedy-2k.json"


@contextmanager
def simulator(config=TINY, **kwargs):
    """A real simulator subprocess on a free loopback port."""
    sim = start_simulator_process(str(config) if config else None, port=0, **kwargs)
    try:
        yield sim
    finally:
        sim.stop()


def runner_args(url, tmp_path, *, model="sim-mid", output="results", cache="cache", extra=()):
    """Arguments of a runner.py api-mode command writing under tmp_path."""
    return ["--config", TINY, "--template", TEMPLATE, "--sampler", SAMPLER, "--model", model,
            "--apibase", url, "--output", tmp_path / output, "--cache", tmp_path / cache, "--quiet",
            *extra]


def run_folders(output: Path) -> list[Path]:
    return sorted(p for p in Path(output).iterdir() if p.is_dir())


def read_folder(folder: Path) -> list[dict]:
    """Every record of a run folder; fails the test on a malformed line."""
    records = []
    for path in sorted(Path(folder).glob("*.ndjson")):
        for line_no, record, error in iter_records(path):
            assert error is None, error
            records.append(record)
    return records


def comparable(records) -> dict:
    """key -> the fields that must agree between two runs of the same experiment."""
    fields = ("answer", "reasoning", "usage", "timings", "is_valid", "is_correct", "is_truncated",
              "extracted_answer", "input", "target", "messages")
    out = {}
    for r in records:
        assert r["key"] not in out, f"sample {r['key']} written twice"
        out[r["key"]] = {f: r.get(f) for f in fields}
    return out


def cache_keys(cache_dir: Path) -> set[str]:
    """Keys in the response cache, read with plain sqlite3 (independent of resolver.cache)."""
    path = Path(cache_dir) / "responses.sqlite"
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT key FROM responses")}


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
