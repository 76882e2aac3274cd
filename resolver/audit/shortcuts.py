"""The shortcut audit: can a rule that never solves the problem beat `guess_chance`?

For every point of a config (at a density, optionally one task / tier) the audit
draws `samples` cases exactly as the runner would (same step seed), lets every
question-blind player of resolver.audit.players answer them, plus

* one constant player per option / literal the point offers (`constant:(B)`,
  `constant:TRUE`), and
* `most_frequent_target`: the target that was most frequent in the *other* half
  of the point's samples (two-fold, so the rule is not fitted to the samples it is
  scored on); for open answers this is the best constant answer,

and grades every answer with the task's real grader (resolver.grading.answers.grade).

Tasks whose answer is a judgement over world facts also get a reader's check
(resolver.audit.film_reader for movies): an independent reader decides every case from
the facts alone; a case it finds unfair fails the audit like a flagged point.

A point is flagged when its best player's accuracy p exceeds the point's mean
`guess_chance` g by more than POINT_ALLOWANCE + 3 * sqrt(p (1 - p) / n). A
(task, tier) is flagged when one player pooled over all its points exceeds the
pooled guess rate by more than POOLED_ALLOWANCE + 3 standard errors of the pooled
accuracy. The standard error shrinks with more samples, so a small CI run (fewer
samples, lowdef density) keeps the same rule with a wider noise allowance.
"""
from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from resolver.audit import outputs
from resolver.audit.film_reader import READERS
from resolver.audit.players import PLAYERS
from resolver.config import DEFAULT_SEED, ExperimentConfig, Template, expand_steps
from resolver.grading import grade
from resolver.tasks import get_task

if TYPE_CHECKING:
    from resolver.audit.film_reader import PointReading
    from resolver.tasks import Task, TestCase

POINT_ALLOWANCE = 0.05
POOLED_ALLOWANCE = 0.03
SIGMAS = 3.0
MIN_SAMPLES = 16


@dataclass
class PointAudit:
    step: str
    base_task: str
    tier: str
    params: dict
    samples: int
    guess_chance: float
    correct: dict           # player -> correct answers
    distinct_targets: int = 0
    top_target_share: float = 0.0   # in-sample share of the most frequent target
    best_player: str = ""
    best_accuracy: float = 0.0
    allowance: float = 0.0
    flagged: bool = False

    def finish(self) -> "PointAudit":
        """Pick the player closest to (or furthest over) the bar; flag the point if it is over."""
        def margin(player: str) -> float:
            p = self.correct[player] / self.samples
            return p - SIGMAS * _se(p, self.samples)
        self.best_player = max(sorted(self.correct), key=margin) if self.correct else ""
        self.best_accuracy = self.correct.get(self.best_player, 0) / self.samples
        self.allowance = POINT_ALLOWANCE + SIGMAS * _se(self.best_accuracy, self.samples)
        self.flagged = self.best_accuracy - self.guess_chance > self.allowance + 1e-12
        return self

    @property
    def excess(self) -> float:
        return self.best_accuracy - self.guess_chance

    def output(self) -> outputs.PointAudit:
        """The point as the JSON output shows it (docs/tasks.md)."""
        return outputs.PointAudit(
            step=self.step, base_task=self.base_task, tier=self.tier, params=self.params, samples=self.samples,
            guess_chance=self.guess_chance, best_player=self.best_player, best_accuracy=self.best_accuracy,
            excess=self.excess, allowance=self.allowance, flagged=self.flagged,
            distinct_targets=self.distinct_targets, top_target_share=self.top_target_share,
            accuracy={p: c / self.samples for p, c in sorted(self.correct.items())})


@dataclass
class PooledAudit:
    base_task: str
    tier: str
    player: str
    samples: int
    correct: int
    guess_sum: float
    points: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.samples

    @property
    def guess_rate(self) -> float:
        return self.guess_sum / self.samples

    @property
    def allowance(self) -> float:
        return POOLED_ALLOWANCE + SIGMAS * _se(self.accuracy, self.samples)

    @property
    def flagged(self) -> bool:
        return self.accuracy - self.guess_rate > self.allowance + 1e-12

    def output(self) -> outputs.PooledAudit:
        """The pooled rule as the JSON output shows it."""
        return outputs.PooledAudit(
            base_task=self.base_task, tier=self.tier, player=self.player, points=self.points, samples=self.samples,
            accuracy=self.accuracy, guess_rate=self.guess_rate, excess=self.accuracy - self.guess_rate,
            allowance=self.allowance, flagged=self.flagged)


@dataclass
class AuditReport:
    config: str
    density: str
    samples: int
    seed: int
    points: list = field(default_factory=list)     # PointAudit
    pooled: list = field(default_factory=list)     # PooledAudit, the best player per (task, tier)
    readings: list[PointReading] = field(default_factory=list)   # for the tasks that have a reader

    @property
    def flagged_points(self) -> list:
        return [p for p in self.points if p.flagged]

    @property
    def flagged_pooled(self) -> list:
        return [p for p in self.pooled if p.flagged]

    @property
    def unfair_readings(self) -> list:
        return [r for r in self.readings if r.unfair]

    @property
    def passed(self) -> bool:
        return not self.flagged_points and not self.flagged_pooled and not self.unfair_readings

    def output(self) -> outputs.ShortcutsOutput:
        """probe.py shortcuts' JSON output (docs/tasks.md); the markdown reads this report."""
        return outputs.ShortcutsOutput(
            config=self.config, density=self.density, samples=self.samples, seed=self.seed,
            rules=outputs.AuditRules(point_allowance=POINT_ALLOWANCE, pooled_allowance=POOLED_ALLOWANCE,
                                     sigmas=SIGMAS),
            passed=self.passed, flagged_points=len(self.flagged_points), flagged_pooled=len(self.flagged_pooled),
            pooled=[p.output() for p in self.pooled], points=[p.output() for p in self.points],
            readers=[_reader_output(r) for r in self.readings])


def _reader_output(reading: PointReading) -> outputs.ReaderAudit:
    """A reader's check of one point as the JSON output shows it (built here: the reader itself
    imports nothing of resolver, tests/test_tasks_movies_reader.py)."""
    return outputs.ReaderAudit(
        step=reading.step, task=reading.task, tier=reading.tier, cases=reading.cases, single_liked=reading.single,
        determined=dict(reading.determined), determined_target=dict(reading.right),
        genres_favour_wrong=reading.genres_favour_wrong, theme_alone_single_liked=reading.theme_alone_single,
        both_not_target=reading.both_not_target)


def _se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.0) / n) if n else 0.0


class _Grader:
    """The real grader, memoised on (answer, options, target)."""

    def __init__(self, task: Task):
        self.task = task
        self.memo: dict[tuple, bool] = {}

    def __call__(self, answer: str | None, case: TestCase) -> bool:
        if answer is None:
            return False
        text = answer if answer.lstrip().lower().startswith("final answer") else f"Final Answer: {answer}"
        enum = tuple(case.response_enum) if case.response_enum else None
        key = (text, enum, case.target)
        if key not in self.memo:
            fields = {"target": case.target, "response_enum": list(enum) if enum else None}
            self.memo[key] = bool(grade(self.task, fields, text, "stop")["is_correct"])
        return self.memo[key]


def _two_fold_mode(cases: list[TestCase]) -> list[str | None]:
    """For each case, the most frequent target of the other half of the samples."""
    half = len(cases) // 2
    folds = (cases[:half], cases[half:])
    modes = []
    for fold in folds:
        counts = Counter(c.target for c in fold)
        modes.append(min(counts, key=lambda t: (-counts[t], t)) if counts else None)
    return [modes[1]] * half + [modes[0]] * (len(cases) - half)


def audit_point(task: Task, params: dict, cases: list[TestCase], answer_format: str) -> dict:
    """{player: correct answers} over the cases of one point."""
    graded = _Grader(task)
    ctx = {"answer_format": answer_format, "params": params}
    correct: dict = {}
    for name, player in PLAYERS.items():
        answers = [player(c, ctx) for c in cases]
        if any(a is not None for a in answers):
            correct[name] = sum(graded(a, c) for a, c in zip(answers, cases))
    constants = sorted({v for c in cases for v in (c.response_enum or ())})
    for value in constants:
        correct[f"constant:{value}"] = sum(graded(value, c) for c in cases)
    correct["most_frequent_target"] = sum(graded(a, c) for a, c in zip(_two_fold_mode(cases), cases))
    return correct


def _tier(manifold: dict) -> str:
    return str(manifold.get("degree", manifold.get("id", "")))


def run_audit(config: ExperimentConfig, *, samples: int = 256, density: str = "normal", degree: int | None = None,
              tasks: Sequence[str] | None = None, seed: int = DEFAULT_SEED, tokenizer: str | None = None,
              template: Template | None = None, cache_dir: str | Path = "cache",
              progress: Callable[[int, int], object] | None = None,
              calibration_progress: Callable[..., Any] | None = None) -> AuditReport:
    """Audit every point of `config`; `progress` is called with (done, total) if given, and
    `calibration_progress` (a tqdm-like factory) shows calibration's bar."""
    steps = expand_steps(config, density=density, degree=degree, tasks=tasks, seed=seed,
                         tokenizer=tokenizer, template=template, cache_dir=cache_dir, progress=calibration_progress)
    report = AuditReport(config.path, density, samples, seed)
    pooled: dict = defaultdict(lambda: [0, 0, 0.0, 0])
    for done, step in enumerate(steps):
        task = get_task(step.generator)
        cases = task.generate_cases(step.gen_params, random.Random(step.seed), samples)
        correct = audit_point(task, step.gen_params, cases, task.answer_format_for(step.gen_params))
        guess = sum(c.guess_chance for c in cases) / samples
        targets = Counter(c.target for c in cases)
        point = PointAudit(step.name, step.base_task, _tier(step.manifold), step.params, samples, guess,
                           correct, len(targets), max(targets.values()) / samples).finish()
        report.points.append(point)
        if step.generator in READERS:
            report.readings.append(READERS[step.generator](step.name, step.base_task, point.tier, cases))
        for player, hits in correct.items():
            acc = pooled[(step.base_task, point.tier, player)]
            acc[0] += samples
            acc[1] += hits
            acc[2] += guess * samples
            acc[3] += 1
        if progress:
            progress(done + 1, len(steps))
    best: dict = {}
    for (base, tier, player), (n, hits, guess_sum, points) in sorted(pooled.items()):
        row = PooledAudit(base, tier, player, n, hits, guess_sum, points)
        key = (base, tier)
        if key not in best or (row.accuracy - row.guess_rate - row.allowance) > \
                (best[key].accuracy - best[key].guess_rate - best[key].allowance):
            best[key] = row
    report.pooled = [best[k] for k in sorted(best)]
    return report
