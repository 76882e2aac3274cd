"""The simulator's view of an experiment: every problem it may be asked, found again from the
last user message's text, with its target and difficulty (docs/simulator.md).
"""
from __future__ import annotations

import math
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from resolver.config import DEFAULT_SEED, expand_steps, load_config
from resolver.grading import grade
from resolver.run import CaseStreams
from resolver.sim.profiles import Problem, problem_latent
from resolver.tasks import get_task

if TYPE_CHECKING:
    from resolver.config import Step, Template
    from resolver.tasks import Task, TestCase

_TAIL = 64          # characters of problem text used as the lookup key


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")


REPO_ROOT = Path(__file__).resolve().parents[2]


# ================================================================ problem index
class ProblemIndex:
    """Maps the end of a prompt to the problem it contains.

    Keyed by the last 64 characters of each problem text; problems shorter than
    that are keyed whole and found by trying each short length that exists.
    """

    def __init__(self) -> None:
        self._long: dict[str, list[tuple[str, Problem]]] = {}
        self._short: dict[str, Problem] = {}
        self._short_lengths: set[int] = set()
        self.size = 0

    def add(self, text: str, problem: Problem) -> None:
        text = text.rstrip()
        if len(text) >= _TAIL:
            bucket = self._long.setdefault(text[-_TAIL:], [])
            if not any(existing == text for existing, _ in bucket):
                bucket.append((text, problem))
                self.size += 1
        elif text and text not in self._short:
            self._short[text] = problem
            self._short_lengths.add(len(text))
            self.size += 1

    def problems(self) -> Iterator[Problem]:
        """Every indexed problem (tests and diagnostics)."""
        for bucket in self._long.values():
            yield from (problem for _, problem in bucket)
        yield from self._short.values()

    def lookup(self, prompt: str) -> Problem | None:
        """The problem whose text the prompt ends with (the longest match), or None."""
        prompt = prompt.rstrip()
        best: tuple[int, Problem] | None = None
        for text, problem in self._long.get(prompt[-_TAIL:], ()):
            if prompt.endswith(text) and (best is None or len(text) > best[0]):
                best = (len(text), problem)
        if best:
            return best[1]
        for length in sorted(self._short_lengths, reverse=True):
            found = self._short.get(prompt[-length:])
            if found is not None:
                return found
        return None


def _problem_words(text: str) -> list[str]:
    words = list(dict.fromkeys(_WORD.findall(text)))
    return words[:60]


def _grader(task: Task, case: TestCase) -> Callable[[str], str]:
    """A function grading an answer ending against this case (correct/wrong/invalid)."""
    fields = {"target": case.target, "response_enum": case.response_enum}

    def check(ending: str) -> str:
        verdict = grade(task, fields, ending, "stop")
        if not verdict["is_valid"]:
            return "invalid"
        return "correct" if verdict["is_correct"] else "wrong"

    return check


def _ignore(line: str) -> None:
    pass


def simulator_steps(config_path: str, *, seed: int = DEFAULT_SEED, precision: str | None = None,
                    density: str = "normal", tokenizer: str | None = None, template: Template | None = None,
                    cache_dir: str = "cache",
                    warn: Callable[[str], object] = _ignore,
                    progress: Callable[..., Any] | None = None) -> tuple[list[Step], int, int]:
    """(steps, round size, deepest sample count) for indexing a config's problems.

    The depth is what a runner can ask for: count x maxrounds samples per step
    at the given precision level, or at the deepest level when none is given.

    `density` (default normal, the densest) bounds the grid: a runner at that density or a
    thinner one finds every problem, since thinner grids are subsets of denser ones and a
    step's problems depend only on its parameters and seed. A thinner density calibrates
    fewer points (docs/simulator.md). All degrees are covered.
    Calibrated tasks are indexed only when a tokenizer (and template) is given; `warn`
    gets one line for each task left out; `progress` (a tqdm-like factory) shows calibration's bar.
    """
    config = load_config(config_path)
    steps = []
    for task in config.tasks:
        if task.mode == "calibrate" and not tokenizer:
            warn(f"simulator: skipping calibrated task {task.name!r} "
                 "(give --tokenizer and --template to recognise it)")
            continue
        steps += expand_steps(config, density=density, tasks=[task.name], seed=seed, tokenizer=tokenizer,
                              template=template, cache_dir=cache_dir, progress=progress)
    if precision is not None:
        _, level = config.precision_level(precision)
        return steps, level.count, level.count * level.maxrounds
    levels = list(config.precision.values())   # any level the runner may choose
    return steps, min(p.count for p in levels), max(p.count * p.maxrounds for p in levels)


class ExperimentProblems:
    """Regenerates the problems of one config and keeps them indexed.

    The index grows on demand: it starts with the first round of every step and
    deepens by a round whenever a prompt of this config is not found, up to
    count x maxrounds of the chosen precision level (default: the deepest).
    """

    def __init__(self, config_path: str, *, seed: int = DEFAULT_SEED, precision: str | None = None,
                 density: str = "normal", tokenizer: str | None = None, template: Template | None = None,
                 cache_dir: str = "cache",
                 warn: Callable[[str], object] | None = None, progress: Callable[..., Any] | None = None):
        self.index = ProblemIndex()
        self.streams = CaseStreams()     # the same cases the runner draws (deterministic per step)
        self.steps, self.round_size, self.max_depth = simulator_steps(
            config_path, seed=seed, precision=precision, density=density, tokenizer=tokenizer, template=template,
            cache_dir=cache_dir, warn=warn or _ignore, progress=progress)
        self.depth = 0
        self._task_texts: list[str] | None = None
        self._difficulty: dict[int, float] = {}
        self._lock = threading.Lock()
        self.deepen()

    def deepen(self) -> bool:
        """Index one more round of every step; False when already at full depth."""
        with self._lock:
            if self.depth >= self.max_depth:
                return False
            start, stop = self.depth, min(self.max_depth, self.depth + self.round_size)
            per_step = {id(s): [case for _, case in self.streams.cases(s, start, stop)]
                        for s in self.steps}
            if not self._difficulty:
                self._difficulty = _difficulties(self.steps, per_step)
            for step in self.steps:
                task = get_task(step.generator)
                d = self._difficulty[id(step)]
                for case in per_step[id(step)]:
                    self.index.add(case.input, Problem(
                        target=str(case.target), response_enum=case.response_enum,
                        difficulty=d, words=_problem_words(case.input), check=_grader(task, case),
                        input_text=case.input.rstrip(), latent=problem_latent(case.input)))
            self.depth = stop
            return True

    def lookup(self, prompt: str) -> Problem | None:
        """The problem at the end of `prompt`, deepening the index while that may help.

        Only prompts that carry one of this config's task descriptions or answer
        formats deepen it: a prompt from another benchmark costs nothing.
        """
        found = self.index.lookup(prompt)
        if found is None and self.depth < self.max_depth and self._looks_like_ours(prompt):
            while found is None and self.deepen():
                found = self.index.lookup(prompt)
        return found

    def _looks_like_ours(self, prompt: str) -> bool:
        if self._task_texts is None:
            texts = set()
            for step in self.steps:
                task = get_task(step.generator)
                texts |= {task.description_for(step.gen_params), task.answer_format_for(step.gen_params)}
            self._task_texts = [t for t in texts if t and len(t) >= 8]
        return any(text in prompt for text in self._task_texts)


def _difficulties(steps: list[Step], cases_by_step: dict[int, list[TestCase]]) -> dict[int, float]:
    """Difficulty 0..1 of each step: its mean problem length, log-scaled within its task.

    Longer problems are harder in every task of the suite (more terms, more
    rows, more moves, more options), and this needs no per-task knowledge.
    """
    by_task: dict[str, list] = {}
    for step in steps:
        cases = cases_by_step[id(step)]
        mean_len = sum(len(c.input) for c in cases) / max(1, len(cases))
        by_task.setdefault(step.base_task, []).append((step, math.log(max(mean_len, 1.0))))
    result = {}
    for entries in by_task.values():
        low = min(v for _, v in entries)
        high = max(v for _, v in entries)
        for step, value in entries:
            result[id(step)] = 0.3 if high - low < 1e-9 else (value - low) / (high - low)
    return result
