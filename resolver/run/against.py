"""runner.py --against: run B on A's problems and stop each cell once B - A is decided
(docs/runner.md, "Stopping on the decision"; the statistics: docs/statistics.md).

B's steps draw the same problems as A's (same config, seed, sample indices), so every
sample of B pairs with A's. After each round, the cell (tier x task, compare's default
cells) of the step that finished it is tested on its paired samples with the anytime-valid
confidence sequence of resolver.stats.sequential; Holm over every cell and the overall row
decides. A cell stops when it is decided, when its sequence (at alpha / family) lies inside
±margin (equivalent), when A has no next round for any of its points, or at maxrounds.
The rounds of a cell run in step: a step that finished round r waits until the cell's
other points have too (waiting holds no request slot).
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from resolver.core import UserError, write_text_atomic
from resolver.pointsdb.schema import outcome_of
from resolver.records import iter_records, read_run_metadata, sample_index_of
from resolver.run.rounds import Tally
from resolver.stats import PROCEDURE, PROCEDURES, SEQUENTIAL_NAME, Sequence, cells_and_overall, holm, pair_contributions
from resolver.tasks import get_task

if TYPE_CHECKING:
    from resolver.config import Step
    from resolver.run.experiment import Experiment, RunOptions
    from resolver.run.report import Reporter

__all__ = ["ALPHA", "MODE", "PairedStop", "Reference", "against_rule", "load_reference"]

ALPHA = 0.05
MODE = "C_P"                     # compare's default mode: its per-pair form is E_P's (docs/statistics.md)


@dataclass
class Reference:
    """A's samples: per step name, {sample index: (outcome code, guess chance, input text, task version)}."""

    folder: Path
    model: str
    samples: dict[str, dict[int, tuple[int, float, str, int]]]

    def has_round(self, step: str, start: int, stop: int) -> bool:
        have = self.samples.get(step, {})
        return all(i in have for i in range(start, stop))


def load_reference(folder: str, experiment: Experiment, density: str, degree: int | None) -> Reference:
    """A's run folder, checked against B's experiment (UserError naming what differs)."""
    path = Path(folder)
    if not path.is_dir():
        raise UserError(f"--against {folder}: no such run folder; give A's run folder (results/<run>/)")
    meta = read_run_metadata(path)
    if meta is not None:
        ours = {"config": experiment.config.name, "seed": experiment.seed, "density": density, "degree": degree}
        theirs = {"config": meta.config, "seed": meta.seed, "density": meta.density, "degree": meta.degree}
        for name, value in ours.items():
            if theirs[name] != value:
                raise UserError(f"--against {folder}: A ran with {name} {theirs[name]!r}, this run has {value!r}; "
                                f"B must draw A's problems: use A's --config, --seed, --density and --degree")
    samples: dict[str, dict[int, tuple[int, float, str, int]]] = {}
    model = meta.model if meta is not None else ""
    for file in sorted(path.glob("*.ndjson")):
        for _, record, _problem in iter_records(file):
            index = sample_index_of(record.get("key")) if record else None
            if record is None or index is None or record.get("answer") is None and record.get("usage") is None:
                continue                 # unreadable, or an offline placeholder: no answer to pair with
            model = model or str(record.get("model", ""))
            samples.setdefault(str(record.get("task")), {})[index] = (
                outcome_of(record), float(record.get("guess_chance") or 0.0), str(record.get("input")),
                int(record.get("task_version") or 1))
    if not samples:
        raise UserError(f"--against {folder}: no answered records in this folder; give the run folder of A's "
                        "api or read-batch run")
    return Reference(path, model, samples)


class PairedTally(Tally):
    """A step's tally that also keeps B's outcome per sample index (for the pairing)."""

    def __init__(self) -> None:
        super().__init__()
        self.outcomes: dict[int, tuple[int, str, int]] = {}

    def add(self, record: dict) -> None:
        super().add(record)
        index = sample_index_of(record.get("key"))
        if index is not None:
            self.outcomes[index] = (outcome_of(record), str(record.get("input")), int(record.get("task_version") or 1))


@dataclass
class _Cell:
    degree: int | None
    base_task: str
    steps: set[str]
    active: set[str] = field(default_factory=set)
    arrived: dict[int, set[str]] = field(default_factory=dict)
    done: dict[int, asyncio.Event] = field(default_factory=dict)
    state: str = "open"              # open, decided, equivalent, a_exhausted, maxrounds
    rounds: int = 0

    def event(self, rounds: int) -> asyncio.Event:
        return self.done.setdefault(rounds, asyncio.Event())


class PairedStop:
    """The round rule of a run against A: RunLoop asks `more` after each round of a step."""

    def __init__(self, experiment: Experiment, reference: Reference, steps: list[Step], margin: float,
                 alpha: float = ALPHA):
        self.exp, self.ref, self.margin, self.alpha = experiment, reference, margin, alpha
        self.count, self.maxrounds = experiment.precision.count, experiment.precision.maxrounds
        self.cells: list[_Cell] = []
        self.cell_of: dict[str, int] = {}
        by_key: dict[tuple[Any, str], int] = {}
        for step in steps:
            key = (step.manifold.get("degree"), step.base_task)
            if key not in by_key:
                by_key[key] = len(self.cells)
                self.cells.append(_Cell(key[0], key[1], set()))
            self.cell_of[step.name] = by_key[key]
            self.cells[by_key[key]].steps.add(step.name)
            self.cells[by_key[key]].active.add(step.name)
        self.tallies: dict[str, PairedTally] = {}
        self.p_values = np.ones(len(self.cells) + 1)
        self.unpaired = 0                # B samples whose problem differs from A's (should not happen)

    @classmethod
    def runnable(cls, steps: list[Step], reference: Reference, count: int) -> tuple[list[Step], list[Step]]:
        """(steps A answered a whole first round of, the others): B never asks what A lacks."""
        keep = [s for s in steps if reference.has_round(s.name, 0, count)]
        return keep, [s for s in steps if s not in keep]

    def tally(self, step: Step) -> Tally:
        return self.tallies.setdefault(step.name, PairedTally())

    async def more(self, step: Step, tally: Tally, rounds: int) -> bool:
        """Whether this step runs another round; waits for the rest of its cell's round."""
        cell = self.cells[self.cell_of[step.name]]
        arrived = cell.arrived.setdefault(rounds, set())
        arrived.add(step.name)
        if cell.active <= arrived:
            self._evaluate(cell, rounds)
            cell.event(rounds).set()
        else:
            await cell.event(rounds).wait()
        return cell.state == "open" and step.name in cell.active

    def _evaluate(self, cell: _Cell, rounds: int) -> None:
        cell.rounds = rounds
        seq = self.sequence()
        last = seq.pairs.shape[0] - 1
        self.p_values = seq.p_value[last]
        rejected, _ = holm(self.p_values, self.alpha)
        for i, other in enumerate(self.cells):
            if other.state == "open" and rejected[i]:
                other.state = "decided"
        index = self.cells.index(cell)
        if cell.state == "open" and -self.margin < seq.eq_low[last, index] and seq.eq_high[last, index] < self.margin:
            cell.state = "equivalent"
        if cell.state != "open":
            return
        if rounds >= self.maxrounds:
            cell.state = "maxrounds"
            return
        start = rounds * self.count
        cell.active = {s for s in cell.active if self.ref.has_round(s, start, start + self.count)}
        if not cell.active:
            cell.state = "a_exhausted"

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(A outcome, B outcome, guess, [cell code, round]) of every paired sample so far."""
        rows = []
        self.unpaired = 0
        for name, tally in self.tallies.items():
            theirs = self.ref.samples.get(name, {})
            for index, (outcome, text, version) in tally.outcomes.items():
                a = theirs.get(index)
                if a is None or a[2] != text or a[3] != version:
                    self.unpaired += 1
                    continue
                rows.append((a[0], outcome, a[1], self.cell_of[name], index // self.count))
        table = np.array(rows, dtype=float).reshape(-1, 5)
        return table[:, 0], table[:, 1], table[:, 2], np.column_stack([table[:, 3], table[:, 4]]).astype(np.int64)

    def sequence(self) -> Sequence:
        """The anytime sequence of every cell and (last column) the overall row."""
        a, b, guess, codes = self.pairs()
        x, w = pair_contributions(a, b, guess, MODE)
        return cells_and_overall(x, w, codes[:, 0], codes[:, 1], len(self.cells), self.maxrounds, self.alpha,
                                 procedure=PROCEDURE, horizon=self.planned())

    def planned(self) -> list[int]:
        """Per cell, the pairs B may draw at most (its points x count x maxrounds): eb-horizon's
        horizon, fixed before any outcome (compare finds the same from the first round)."""
        return [len(cell.steps) * self.count * self.maxrounds for cell in self.cells]

    def report(self) -> dict:
        """sequential.json: the procedure and every cell's end (analyze.py compare reads it)."""
        seq = self.sequence()
        last = seq.pairs.shape[0] - 1
        rejected, adjusted = holm(seq.p_value[last], self.alpha)
        cells = []
        for i, cell in enumerate([*self.cells, None]):
            cells.append({
                "degree": None if cell is None else cell.degree, "base_task": None if cell is None else cell.base_task,
                "overall": cell is None, "stopped": "overall" if cell is None else cell.state,
                "rounds": None if cell is None else cell.rounds, "pairs": int(seq.pairs[last, i]),
                "diff": float(seq.diff[last, i]), "low": float(seq.low[last, i]), "high": float(seq.high[last, i]),
                "p_anytime": float(seq.p_value[last, i]), "p_holm": float(adjusted[i]),
                "verdict": ("b" if seq.direction[last, i] > 0 else "a") if rejected[i] else "none"})
        return {"against": str(self.ref.folder), "a_model": self.ref.model, "mode": MODE, "alpha": self.alpha,
                "margin": self.margin, "count": self.count, "maxrounds": self.maxrounds,
                "procedure": PROCEDURE, "method": PROCEDURES[PROCEDURE],
                "unpaired": self.unpaired, "cells": cells}

    def write(self, folder: Path, reporter: Reporter) -> None:
        """B's run folder gets sequential.json (the marker analyze.py compare reads); one line per cell."""
        report = self.report()
        write_text_atomic(folder / SEQUENTIAL_NAME, json.dumps(report, indent=2) + "\n")
        for line in self.lines(report):
            reporter.note(line)

    def lines(self, report: dict) -> list[str]:
        """One line per cell for the run's output."""
        out = []
        for c in report["cells"]:
            name = "overall" if c["overall"] else f"{c['base_task']} (degree {c['degree']})"
            rounds = "" if c["overall"] else f", {c['rounds']} round(s), stopped: {c['stopped']}"
            out.append(f"against {report['a_model'] or 'A'}: {name}: B - A {c['diff']:+.3f} "
                       f"[{c['low']:+.3f}, {c['high']:+.3f}] anytime 95%, verdict {c['verdict']}{rounds}")
        return out


def check_versions(steps: list[Step], reference: Reference) -> None:
    """A's records of a step must come from B's generator version (else the problems differ)."""
    for step in steps:
        version = get_task(step.generator).version
        theirs = {v[3] for v in reference.samples.get(step.name, {}).values()}
        if theirs and theirs != {version}:
            raise UserError(f"--against {reference.folder}: A answered {step.base_task} at generator version(s) "
                            f"{sorted(theirs)}, this run asks version {version}: the problems differ")


def against_rule(experiment: Experiment, opts: RunOptions, steps: list[Step],
                 reporter: Reporter) -> tuple[list[Step], PairedStop]:
    """(the steps B runs, the rule) for runner.py --against FOLDER."""
    assert opts.against is not None
    reference = load_reference(opts.against, experiment, opts.density, opts.degree)
    check_versions(steps, reference)
    keep, left = PairedStop.runnable(steps, reference, experiment.precision.count)
    if left:
        reporter.note(f"--against: {len(left)} of {len(steps)} steps left out: A has no complete first round "
                      f"of {experiment.precision.count} samples there (first: {left[0].name})")
    if not keep:
        raise UserError(f"--against {opts.against}: A has no complete first round of any step at this "
                        f"--precision (count {experiment.precision.count}); use A's --precision and --tasks")
    return keep, PairedStop(experiment, reference, keep, opts.margin)
