"""One eval's samples -> its PointsDB rows (main process).

The per-sample table of an eval (every worker's batch, in sorted file order) is
sorted once by (point, sample index, file, line) with numpy: the first occurrence of
a sample index of a point wins (file order, then line order), the rest are
duplicates; each point's counters, token sums (summed in sample-index order) and
per-sample arrays are segment reductions over that order. The point identity is
(base_task, params, task_version): samples of different task versions are never
pooled.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from resolver import pointsdb
from resolver.catalog import EvalSpec
from resolver.core import UserError
from resolver.grading import ALL_REASONS, UNKNOWN
from resolver.ingest.input_files import relative_names
from resolver.ingest.regrade import RegradeTally, add_regraded
from resolver.pointsdb import OUTCOME_INVALID, OUTCOME_TRUNCATED

if TYPE_CHECKING:
    from resolver.ingest.scan import ScanResult


@dataclass
class EvalStats:
    eval_id: str
    label: str
    files: int = 0
    records: int = 0
    samples: int = 0
    duplicates: int = 0
    unanswered: int = 0
    mismatched: int = 0
    points: int = 0
    problems: list[str] = field(default_factory=list)   # "file:line: message"
    regraded: RegradeTally = field(default_factory=dict)
    grader_versions: list[int] = field(default_factory=list)
    task_versions: dict[str, list[int]] = field(default_factory=dict)  # base_task -> sorted versions
    status: str = "built"

    def add_scan(self, result: ScanResult, files: list[str]) -> None:
        """Counts and problems of one worker batch (its samples go to the aggregation)."""
        self.records += sum(result.records)
        self.unanswered += sum(result.unanswered)
        self.mismatched += result.mismatched
        self.problems.extend(f"{files[f]}:{line}: {msg}" for f, line, msg in result.problems)
        add_regraded(self.regraded, result.regraded)

    def counts_row(self) -> dict:
        """The built eval's counts, as columns of its PointsDB ``evals`` row."""
        return {"files": self.files, "samples": self.samples, "points": self.points,
                "grader_version": min(self.grader_versions) if self.grader_versions else None,
                "task_versions": pointsdb.canonical_json(self.task_versions)}


def source_names(files: Sequence[str], source_base: Path | None) -> list[str]:
    """How `sources` names each file: relative to the DB's directory (absolute without a DB)."""
    return [str(f) for f in files] if source_base is None else relative_names(files, source_base)


def id_identity(base_task: str, params: str, task_version: int) -> tuple:
    """What a point id hashes: version-1 points keep the ids they had before versions existed."""
    return (base_task, params) if task_version == 1 else (base_task, params, task_version)


def _segments(values: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values in a sorted array."""
    return np.flatnonzero(np.r_[True, values[1:] != values[:-1]]) if len(values) else np.zeros(0, np.int64)


def _list_column(values: np.ndarray, starts: np.ndarray, kind: pa.DataType) -> pa.Array:
    offsets = np.r_[starts, len(values)].astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(values, kind))


def eval_points(spec: EvalSpec, samples: pa.Table, sources: list, stats: EvalStats,
                triple_filter: bool = False) -> pa.Table:
    """The eval's points as an Arrow table in the PointsDB schema (sorted by id); fills ``stats``.

    ``samples`` come from the scan (file_no indexes ``sources``); with
    ``triple_filter`` only the rows of the spec's model/template/sampler are used.
    """
    if triple_filter:
        mask = pc.and_(pc.and_(pc.equal(samples.column("model"), spec.model),
                               pc.equal(samples.column("template"), spec.template)),
                       pc.equal(samples.column("sampler"), spec.sampler))
        samples = samples.filter(mask)
    point, by_id = _point_numbers(spec, samples)
    col = {name: samples.column(name).to_numpy() for name in
           ("file_no", "ordinal", "sample_index", "outcome", "ctoks", "ptoks", "guess", "abytes", "cbytes",
            "grader_version")}
    _refuse_mixed_stop_loops(spec, samples)
    saved = samples.column("loop_saved")
    col["loop_saved"] = saved.fill_null(-1).to_numpy() if len(saved) else np.zeros(0, np.int64)
    # the first row of each (point, sample index) in file then line order wins; the rest are duplicates
    order = np.lexsort((col["ordinal"], col["file_no"], col["sample_index"], point))
    first = np.r_[True, (point[order][1:] != point[order][:-1]) |
                  (col["sample_index"][order][1:] != col["sample_index"][order][:-1])] if len(order) else order
    keep = order[first.astype(bool)] if len(order) else order
    starts = _segments(point[keep])
    out = _counters(col, keep, starts)
    out["invalid_reasons"] = invalid_reason_counts(samples.column("invalid_reason"), col["outcome"], keep, starts)
    # task and manifold: the point's first row in file order (duplicates included); sources: every file
    seen = np.lexsort((col["ordinal"], col["file_no"], point))
    heads = seen[_segments(point[seen])]
    pairs = np.unique(point * (1 << 32) + col["file_no"])
    files_of: list[list[str]] = [[] for _ in by_id]
    for p, f in zip((pairs >> 32).tolist(), (pairs & 0xFFFFFFFF).tolist()):
        files_of[p].append(sources[f])
    n = len(by_id)
    out.update({
        "id": pa.array([i for i, _ in by_id], pa.int64()), "eval_id": [spec.eval_id] * n, "model": [spec.model] * n,
        "template": [spec.template] * n, "sampler": [spec.sampler] * n,
        "base_task": [k[0] for _, k in by_id], "params": [k[1] for _, k in by_id],
        "task_version": pa.array([k[2] for _, k in by_id], pa.int32()),
        "task": samples.column("task").take(pa.array(heads)), "manifold": samples.column("manifold").take(pa.array(heads)),
        "facets": [pointsdb.canonical_json(spec.facets)] * n, "groups": [list(spec.groups)] * n,
        "sources": [sorted(f) for f in files_of],
    })
    stats.points, stats.samples = n, len(keep)
    stats.duplicates += len(order) - len(keep)
    stats.files = stats.files or len(np.unique(col["file_no"]))
    stats.grader_versions = sorted(set(out["grader_version"].to_pylist()))
    versions: dict[str, list[int]] = {}
    for task, version in sorted({(k[0], k[2]) for _, k in by_id}):
        versions.setdefault(task, []).append(version)
    stats.task_versions = versions
    return pointsdb.points_batch(out)


def _refuse_mixed_stop_loops(spec: EvalSpec, samples: pa.Table) -> None:
    """An eval is runs with the sampler's stop_loops or runs without, never both: their
    truncation and token figures mean different things (docs/runner.md)."""
    flags = samples.column("stop_loops")
    on = pc.sum(flags.cast(pa.int64())).as_py() or 0
    if 0 < on < len(flags):
        raise UserError(f"eval {spec.label or spec.eval_id} mixes records written with the sampler's \"stop_loops\" "
                        f"({on}) and without ({len(flags) - on}); give the runs different sampler names "
                        "(or evaluate them apart)")


def _point_numbers(spec: EvalSpec, samples: pa.Table) -> tuple:
    """(point number of each row, [(id, identity)] sorted by id): points are numbered in id order."""
    codes, uniques = [], []
    for name in ("base_task", "params"):
        encoded = samples.column(name).combine_chunks().dictionary_encode() if samples.num_rows else None
        codes.append(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64) if encoded else
                     np.zeros(0, np.int64))
        uniques.append(encoded.dictionary.to_pylist() if encoded else [])
    version = samples.column("task_version").to_numpy().astype(np.int64)
    combined = (codes[0] * max(1, len(uniques[1])) + codes[1]) * (1 << 31) + version
    distinct, inverse = np.unique(combined, return_inverse=True)
    identities = [(uniques[0][int(c // (1 << 31)) // max(1, len(uniques[1]))],
                   uniques[1][int(c // (1 << 31)) % max(1, len(uniques[1]))], int(c % (1 << 31))) for c in distinct]
    ids = pointsdb.point_ids(spec.eval_id, [id_identity(*k) for k in identities])
    rank = np.argsort(np.argsort(np.array(ids, dtype=np.int64)))
    by_id = sorted(zip(ids, identities))
    return rank[inverse].astype(np.int64), by_id


def _counters(col: dict, keep: np.ndarray, starts: np.ndarray) -> dict:
    """Counters, sums and per-sample arrays of each point from its kept rows (sorted by sample index)."""
    if not len(keep):
        empty = pa.array([], pa.int32())
        return {name: empty for name in ("correct", "incorrect", "invalid", "truncated", "grader_version")} | {
            name: pa.array([], pa.float64()) for name in ("guess_sum", "guess_sum_all")} | {
            name: pa.array([], pa.int64()) for name in ("prompt_tokens", "completion_tokens_sum", "tokens_correct",
                                                        "tokens_incorrect", "tokens_invalid", "tokens_truncated",
                                                        "tokens_saved")} | {
            "loops_stopped": pa.array([], pa.int32())} | {
            name: pa.array([], pa.list_(pa.int32())) for name in ("completion_tokens", "answer_bytes",
                                                                  "compressed_bytes", "sample_index")} | {
            "outcome": pa.array([], pa.list_(pa.uint8()))}
    outcome, ctoks = col["outcome"][keep], col["ctoks"][keep].astype(np.int64)
    guess = col["guess"][keep]
    out = {}
    for code, name in enumerate(("correct", "incorrect", "invalid", "truncated")):
        hit = outcome == code
        out[name] = pa.array(np.add.reduceat(hit.astype(np.int64), starts), pa.int32())
        out[f"tokens_{name}"] = pa.array(np.add.reduceat(np.where(hit, ctoks, 0), starts), pa.int64())
    out["guess_sum"] = pa.array(np.add.reduceat(np.where(outcome != OUTCOME_TRUNCATED, guess, 0.0), starts))
    out["guess_sum_all"] = pa.array(np.add.reduceat(guess, starts))
    out["prompt_tokens"] = pa.array(np.add.reduceat(col["ptoks"][keep].astype(np.int64), starts), pa.int64())
    out["completion_tokens_sum"] = pa.array(np.add.reduceat(ctoks, starts), pa.int64())
    saved = col["loop_saved"][keep].astype(np.int64)      # -1: not stopped in a loop
    out["loops_stopped"] = pa.array(np.add.reduceat((saved >= 0).astype(np.int64), starts), pa.int32())
    out["tokens_saved"] = pa.array(np.add.reduceat(np.maximum(saved, 0), starts), pa.int64())
    out["grader_version"] = pa.array(np.minimum.reduceat(col["grader_version"][keep], starts), pa.int32())
    out["completion_tokens"] = _list_column(col["ctoks"][keep], starts, pa.int32())
    out["outcome"] = _list_column(outcome, starts, pa.uint8())
    out["answer_bytes"] = _list_column(col["abytes"][keep], starts, pa.int32())
    out["compressed_bytes"] = _list_column(col["cbytes"][keep], starts, pa.int32())
    out["sample_index"] = _list_column(col["sample_index"][keep], starts, pa.int32())
    return out


def invalid_reason_counts(reasons: pa.ChunkedArray | pa.Array, outcome: np.ndarray, keep: np.ndarray,
                          starts: np.ndarray) -> list[str]:
    """Each point's invalid samples counted by reason, as canonical JSON ({} when none).

    Only samples whose outcome is invalid count (a truncated one is counted as
    truncated); an invalid sample without a recorded reason counts as "unknown".
    """
    if not len(keep):
        return []
    encoded = pc.dictionary_encode(reasons.combine_chunks() if isinstance(reasons, pa.ChunkedArray) else reasons,
                                   null_encoding="encode")
    code_of = np.array([ALL_REASONS.index(r) if r in ALL_REASONS else ALL_REASONS.index(UNKNOWN)
                        for r in encoded.dictionary.to_pylist()] or [0], dtype=np.int64)
    codes = code_of[encoded.indices.to_numpy(zero_copy_only=False)[keep]]
    invalid = outcome[keep] == OUTCOME_INVALID
    counts = np.stack([np.add.reduceat((invalid & (codes == i)).astype(np.int64), starts)
                       for i in range(len(ALL_REASONS))], axis=1)
    return [pointsdb.canonical_json({ALL_REASONS[i]: int(n) for i, n in enumerate(row) if n})
            for row in counts.tolist()]
