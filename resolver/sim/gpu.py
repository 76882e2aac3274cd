"""A cost model of one GPU serving a model, and a continuously batching engine that spends it
(docs/simulator.md, *GPU mode*).

The model: one decode step, which advances every running sequence by one token, takes

    step_ms = a + b * sequences + c * (sum of the sequences' context tokens)

(weights read once per step, a little work per sequence, attention reading every cached
token), and admitting prompts costs `prefill_ms_per_token` for each prompt token. The
presets are least-squares fits to the H200 curves the project measured (fit_step_model,
docs/simulator.md has each measured point against the model).

`BatchEngine` is the scheduler of a server such as vLLM reduced to what costs GPU time:
a FIFO of waiting sequences, up to `max_batch` running ones, prefill on admission, one
decode step per iteration. It keeps its own clock in simulated seconds; the live server
(resolver.sim.gpuserve) paces it against real time, the run-batch stand-in
(resolver.sim.runbatch) runs it in virtual time. Standard library only (see
resolver/sim/__init__.py).
"""
from __future__ import annotations

import heapq
import json
import math
from collections import deque
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Iterable

from resolver.core import UserError

__all__ = ["GpuModel", "GpuStats", "PRESETS", "Sequence", "BatchEngine", "fit_step_model", "fit_prefill", "gpu_preset",
           "fit_curves", "load_gpu_model", "DEFAULT_MAX_BATCH"]

DEFAULT_MAX_BATCH = 256     # vLLM's max_num_seqs default in the brief's setting (docs/simulator.md)


@dataclass(frozen=True)
class GpuModel:
    """Times of one GPU + model; steps in milliseconds, model load in seconds."""

    name: str
    a_ms: float                   # fixed cost of a decode step
    b_ms: float                   # per sequence in the batch
    c_ms: float                   # per context token (prompt + tokens so far) of every sequence
    prefill_ms_per_token: float   # per prompt token admitted
    model_load_s: float           # one server start (batch mode pays it per run-batch)

    def step_ms(self, sequences: int, context_tokens: int) -> float:
        """One decode step of `sequences` sequences holding `context_tokens` tokens in all."""
        return self.a_ms + self.b_ms * sequences + self.c_ms * context_tokens

    def prefill_ms(self, prompt_tokens: int) -> float:
        return self.prefill_ms_per_token * prompt_tokens

    def to_json(self) -> str:
        """The JSON object load_gpu_model reads back."""
        return json.dumps(asdict(self), indent=1) + "\n"


def fit_step_model(points: Iterable[tuple[float, float, float]],
                   context_ms: float | None = None) -> tuple[float, float, float]:
    """Least-squares (a, b, c) of step_ms = a + b*batch + c*batch*context over
    (batch, context, step_ms) points, each weighted by 1/step_ms so that every point's
    *relative* error counts alike (the small batches are as much part of the curve).
    With `context_ms`, c is held at that value and only a and b are fitted (a curve
    measured at one context length cannot tell b from c)."""
    free = 3 if context_ms is None else 2
    normal = [[0.0] * free for _ in range(free)]
    rhs = [0.0] * free
    for n, ctx, ms in points:
        x = (1.0, float(n), float(n * ctx))[:free]
        y = float(ms) - (0.0 if context_ms is None else context_ms * n * ctx)
        w = 1.0 / (float(ms) ** 2)
        for i in range(free):
            rhs[i] += w * x[i] * y
            for j in range(free):
                normal[i][j] += w * x[i] * x[j]
    coef = _solve(normal, rhs)
    return coef[0], coef[1], (coef[2] if context_ms is None else context_ms)


def _solve(m: list, v: list) -> list:
    """Gaussian elimination with partial pivoting (a small dense system)."""
    size = len(v)
    m = [row[:] + [val] for row, val in zip(m, v)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, size):
            f = m[r][col] / m[col][col]
            m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    out = [0.0] * size
    for r in reversed(range(size)):
        out[r] = (m[r][size] - sum(m[r][k] * out[k] for k in range(r + 1, size))) / m[r][r]
    return out


def fit_prefill(points: Iterable[tuple[float, float]]) -> float:
    """Milliseconds per prompt token through the origin over (prompt tokens, prefill ms)
    points, relative errors weighted alike."""
    ratios = [tokens / ms for tokens, ms in points]
    return sum(ratios) / sum(r * r for r in ratios)


# Fitted by fit_step_model to kernel_step_ms of the measured H200 curves (the context of a point
# is its prompt + the steps decoded before the profiled ones + half of those: prompt + steps + 7).
# 1.5B was measured at one context length only, so its per-token cost is the 8B one scaled by
# the two shapes' KV-cache bytes per token (28 layers x 2 KV heads against 32 x 8: 0.21875),
# then a and b fitted with it held fixed. Prefill: the marginal cost per prompt token of the
# batches of 64 and more (smaller ones are dominated by eager PyTorch's fixed overhead, which a
# server folds into its steps). docs/simulator.md, *How well the model fits*.
PRESETS: dict[str, GpuModel] = {m.name: m for m in (
    GpuModel("h200-8b", a_ms=6.6054, b_ms=0.017912, c_ms=9.4540e-5,
             prefill_ms_per_token=0.028949, model_load_s=120.0),
    GpuModel("h200-1.5b", a_ms=3.2487, b_ms=0.0054931, c_ms=2.0681e-5,
             prefill_ms_per_token=0.0074040, model_load_s=60.0),
)}


def gpu_preset(name: str) -> GpuModel:
    """The named preset, or the model in a JSON file (a name ending in .json, as
    fit_curves + GpuModel.to_json write it); UserError naming the valid ones otherwise."""
    if name.endswith(".json"):
        return load_gpu_model(name)
    if name not in PRESETS:
        raise UserError(f"--gpu {name!r} is not a known GPU preset; use one of {', '.join(PRESETS)} "
                        "or a .json file of a fitted model")
    return PRESETS[name]


def load_gpu_model(path: str | Path) -> GpuModel:
    """A GpuModel from a JSON object of its fields (docs/simulator.md, *A fitted engine from a
    file*); UserError with one line when the file is missing or not such an object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"--gpu {path}: cannot read a GPU model from it ({exc.__class__.__name__}); "
                        "give a preset name or a .json file of a fitted model") from None
    names = [f.name for f in fields(GpuModel)]
    if not isinstance(data, dict) or set(data) != set(names):
        raise UserError(f"--gpu {path}: not a GPU model; a JSON object with exactly the keys {', '.join(names)}")
    numbers = [data[key] for key in names[1:]]
    # b or c may come out of a fit slightly below 0 (docs/simulator.md); times and loads may not
    if not isinstance(data["name"], str) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers) \
            or min(data["a_ms"], data["prefill_ms_per_token"], data["model_load_s"]) < 0:
        raise UserError(f"--gpu {path}: name must be a string, {', '.join(names[1:])} numbers "
                        "(a_ms, prefill_ms_per_token and model_load_s 0 or more)")
    return GpuModel(data["name"], *(float(v) for v in numbers))


def fit_curves(curves: Iterable[dict], *, name: str, model_load_s: float) -> GpuModel:
    """A GpuModel fitted to measured decode curves in the reference data's shape: each curve has
    `prompt_len`, `steps` and `rows` of `batch`, `step_ms` (or `kernel_step_ms`, preferred when
    set), `prefill_s`. A row's context per sequence is its prompt + half the steps timed (the
    middle of the timed window); prefill is fitted through the origin over each row's
    batch x prompt_len tokens (docs/simulator.md, *Checked against vLLM's CPU build*)."""
    steps: list[tuple[float, float, float]] = []
    prefill: list[tuple[float, float]] = []
    for curve in curves:
        context = float(curve["prompt_len"]) + float(curve["steps"]) / 2.0
        for row in curve["rows"]:
            if "error" in row:
                continue
            step = row.get("kernel_step_ms") or row["step_ms"]
            steps.append((float(row["batch"]), context, float(step)))
            prefill.append((float(row["batch"]) * float(curve["prompt_len"]), float(row["prefill_s"]) * 1000.0))
    a, b, c = fit_step_model(steps)
    return GpuModel(name, a_ms=a, b_ms=b, c_ms=c, prefill_ms_per_token=fit_prefill(prefill),
                    model_load_s=model_load_s)


@dataclass(eq=False)
class Sequence:
    """One request in the engine: its prompt, the completion tokens it will decode."""

    prompt_tokens: int
    tokens: int
    start: int = -1            # the engine's step count when admitted (-1: waiting)
    finished: bool = False
    cancelled: bool = False
    owner: Any = None          # the live server's per-request state (resolver.sim.gpuserve)

    def produced(self, steps: int) -> int:
        """Tokens decoded so far, given the engine's step count."""
        return 0 if self.start < 0 else min(self.tokens, steps - self.start)


@dataclass
class GpuStats:
    """What the engine spent, in simulated seconds and tokens."""

    busy_seconds: float = 0.0       # decode steps with >= 1 sequence, plus prefill
    prefill_seconds: float = 0.0
    tokens_generated: int = 0       # decoded, including those of sequences cancelled later
    prompt_tokens: int = 0          # prefilled
    max_sequences: int = 0          # the most sequences running at once
    decode_steps: int = 0           # tokens_generated / decode_steps: the mean batch
    cancelled: int = 0              # sequences whose client left before their last token
    finished: int = 0


class BatchEngine:
    """Continuous batching: FIFO admission up to max_batch, prefill, decode steps."""

    def __init__(self, model: GpuModel, max_batch: int = DEFAULT_MAX_BATCH):
        if max_batch < 1:
            raise UserError(f"--max-batch {max_batch} is not valid; use 1 or more")
        self.model = model
        self.max_batch = max_batch
        self.clock = 0.0            # simulated seconds
        self.steps = 0              # decode steps so far
        self.stats = GpuStats()
        self.waiting: deque[Sequence] = deque()
        self.running: set[Sequence] = set()
        self._ends: list[tuple[int, int, Sequence]] = []   # (step it ends at, tie, seq); cancelled ones stay
        self._context = 0           # sum of the running sequences' context tokens
        self._tie = 0

    @property
    def idle(self) -> bool:
        return not self.running and not self.waiting

    def submit(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def cancel(self, seq: Sequence) -> None:
        """The client left: free the slot now; its remaining tokens are never decoded."""
        if seq.finished or seq.cancelled:
            return
        seq.cancelled = True
        self.stats.cancelled += 1
        if seq in self.running:
            self.running.discard(seq)
            self._context -= seq.prompt_tokens + seq.produced(self.steps)
        # a waiting one is skipped when its turn comes

    def iterate(self) -> list[Sequence]:
        """Admit, prefill, one decode step; returns the sequences that finished in it."""
        done: list[Sequence] = []
        prefill = 0
        while self.waiting and len(self.running) < self.max_batch:
            seq = self.waiting.popleft()
            if seq.cancelled:
                continue
            prefill += seq.prompt_tokens
            seq.start = self.steps
            if seq.tokens <= 0:
                self._finish(seq, done)
                continue
            self.running.add(seq)
            self._context += seq.prompt_tokens
            self._tie += 1
            heapq.heappush(self._ends, (self.steps + seq.tokens, self._tie, seq))
        spent = self.model.prefill_ms(prefill) / 1000.0
        self.stats.prefill_seconds += spent
        self.stats.prompt_tokens += prefill
        n = len(self.running)
        if n:
            self.stats.max_sequences = max(self.stats.max_sequences, n)
            spent += self.model.step_ms(n, self._context) / 1000.0
            self.steps += 1
            self.stats.decode_steps += 1
            self._context += n
            self.stats.tokens_generated += n
            while self._ends and self._ends[0][0] <= self.steps:
                seq = heapq.heappop(self._ends)[2]
                if seq in self.running:
                    self.running.discard(seq)
                    self._context -= seq.prompt_tokens + seq.tokens
                    self._finish(seq, done)
        self.clock += spent
        self.stats.busy_seconds += spent
        return done

    def _finish(self, seq: Sequence, done: list) -> None:
        seq.finished = True
        self.stats.finished += 1
        done.append(seq)

    def run_to_end(self) -> float:
        """Iterate until nothing waits or runs (virtual time); returns the clock."""
        while not self.idle:
            self.iterate()
        return self.clock
