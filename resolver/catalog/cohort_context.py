"""cohort.py context: a context-limited variant of an eval, without re-running the model.

Every sample whose prompt + completion exceeds N tokens is turned into what the
model would have produced with a context window of N: its completion is cut after
N - prompt tokens, ``finish_reason`` becomes "length", and it is re-graded as
truncated (so never valid nor correct). Samples within the limit are copied
unchanged. Only the ``sampler`` field of every record changes, to
``<sampler>-<N/1024>k`` (``greedy-max`` at 12288 -> ``greedy-max-12k``), which gives
the variant its own eval_id.

Token counts: prompt and completion sizes come from the records' ``usage`` (the
server's own counts). The cut position uses a tokenizer when one loads (``--tokenizer``,
else the eval's ``hf_id``): the text is cut at the end of token number N - prompt.
Without a tokenizer the cut is proportional in characters: keep
``len(text) * (N - prompt) / completion_tokens`` characters. The completion text is
``reasoning`` (when the server returned it separately) followed by ``answer``.

The source folders are never touched. The variant is written to a hidden temporary
folder in the cohort and renamed to ``<now>_<config>_<model>_<template>_<sampler-Nk>``
when complete; then the new eval is appended to evals.json (atomic rewrite).
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from datetime import datetime
from os import PathLike
from pathlib import Path
from typing import Any, Callable, Iterable

from resolver.catalog.cohort_verify import config_name
from resolver.catalog.cohorts import EVALS_FILE, cohort_evals, datasets_naming, eval_folders
from resolver.catalog.datasets import EvalSpec, eval_files, eval_id as make_eval_id
from resolver.config import load_hf_tokenizer
from resolver.core import UserError, choices_text, display_path, write_text_atomic
from resolver.core.progress import NullBar
from resolver.grading import grade_record
from resolver.records import iter_records, run_folder_name, safe_name
from resolver.records.text_size import text_size
from resolver.tasks import task_of_record

USAGE = "usage"     # --tokenizer value that forces the records' own counts


@dataclass
class ContextResult:
    folder: Path
    eval_id: str
    sampler: str
    entry: dict
    samples: int = 0
    clipped: int = 0
    uncounted: int = 0          # had an answer but no usable token counts: copied unchanged
    skipped_lines: list = field(default_factory=list)
    counter: str = USAGE
    commands: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def limit_label(limit: int) -> str:
    """12288 -> '12k'; a limit that is not a multiple of 1024 keeps its exact fraction (10000 -> '9.765625k')."""
    return f"{limit // 1024}k" if limit % 1024 == 0 else f"{limit / 1024:.10g}k"


# ---------------------------------------------------------------- token counting and cutting

class UsageCounter:
    """Counts from the records' usage; cuts proportionally by characters."""

    name = USAGE

    def cut(self, text: str, keep_tokens: int, total_tokens: int) -> int:
        if total_tokens <= 0:
            return len(text)
        return math.floor(len(text) * max(0, keep_tokens) / total_tokens)

    def count(self, text: str) -> int | None:
        return None


class TokenizerCounter:
    """A Hugging Face tokenizer: exact token boundaries for the cut."""

    def __init__(self, tokenizer: Any, name: str):
        self.tokenizer, self.name = tokenizer, name

    def cut(self, text: str, keep_tokens: int, total_tokens: int) -> int:
        if keep_tokens <= 0:
            return 0
        encoded = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = encoded["offset_mapping"]
        return len(text) if keep_tokens >= len(offsets) else offsets[keep_tokens - 1][1]

    def count(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])


# how a cut counts tokens: the eval's tokenizer, or usage counts spread over characters
TextCounter = UsageCounter | TokenizerCounter


def _ignore(line: str) -> None:
    pass


def load_counter(choice: str | None, hf_id: str | None, warn: Callable[[str], object] = _ignore) -> TextCounter:
    """--tokenizer NAME|PATH|usage, else the eval's hf_id, else usage counts (`warn` gets a
    note when the eval's tokenizer cannot be used)."""
    name = choice or hf_id
    if not name or name == USAGE:
        return UsageCounter()
    try:
        tokenizer = load_hf_tokenizer(name)
    except UserError as exc:          # offline, gated, missing files: all mean "no tokenizer here"
        if choice:
            raise UserError(f"--tokenizer {choice!r} could not be loaded; give a local tokenizer "
                            f"directory, a reachable HF id, or 'usage' ({exc})") from None
        warn(f"cohort.py: note: tokenizer {name!r} not available; cutting proportionally by characters")
        return UsageCounter()
    if not getattr(tokenizer, "is_fast", False):
        warn(f"cohort.py: note: {name!r} has no fast tokenizer (no offsets); cutting by characters")
        return UsageCounter()
    return TokenizerCounter(tokenizer, name)


def _token_counts(record: dict, counter: TextCounter) -> tuple:
    """(prompt, completion) token counts from usage, or from the tokenizer when usage lacks them."""
    usage = record.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int):
        text = "".join(str(m.get("content") or "") for m in record.get("messages") or [] if isinstance(m, dict))
        prompt = counter.count(text)
    if not isinstance(completion, int):
        completion = counter.count((record.get("reasoning") or "") + (record.get("answer") or ""))
    return prompt, completion


def clip_record(record: dict, limit: int, counter: TextCounter, sampler: str) -> tuple:
    """(new record, status) with status 'kept', 'clipped' or 'uncounted'."""
    out = dict(record)
    out["sampler"] = sampler
    if record.get("answer") is None and record.get("reasoning") is None:
        return out, "kept"          # an offline record: nothing was generated
    prompt, completion = _token_counts(record, counter)
    if prompt is None or completion is None:
        return out, "uncounted"
    if prompt + completion <= limit:
        return out, "kept"
    budget = max(0, limit - prompt)
    reasoning, answer = record.get("reasoning") or "", record.get("answer") or ""
    cut = counter.cut(reasoning + answer, budget, completion)
    if "reasoning" in record:
        out["reasoning"] = reasoning[:cut]
    out["answer"] = answer[: max(0, cut - len(reasoning))]
    usage = dict(record.get("usage") or {})
    usage.update(prompt_tokens=prompt, completion_tokens=budget, total_tokens=prompt + budget)
    out["usage"] = usage
    out["timings"] = {**(record.get("timings") or {}), "finish_reason": "length",
                      "termination_reason": "context-limit"}
    if "text_size" in record:        # the sizes of the clipped text, not of the original
        out["text_size"] = text_size(out.get("reasoning"), out["answer"])
    out.update(_grade_truncated(out))
    return out, "clipped"


def _grade_truncated(record: dict) -> dict:
    """Grade as the runner would grade a completion that hit the length limit."""
    try:
        graded = grade_record(record, task_of_record(record))
    except UserError:                  # a base_task whose generator is not registered here
        graded = {"normalized_answer": None, "extracted_answer": None}
    graded.update(is_valid=False, is_correct=False, is_truncated=True)
    return graded


# ---------------------------------------------------------------- the variant

def find_eval(cohort_dir: Path, wanted: str) -> tuple[EvalSpec, list[EvalSpec]]:
    specs = cohort_evals(cohort_dir)
    if not specs:
        raise UserError(f"{cohort_dir} has no {EVALS_FILE}; a cohort is data/<set>/<Model>/ with an evals.json")
    for spec in specs:
        if spec.eval_id == wanted:
            return spec, specs
    raise UserError(f"--eval-id {wanted!r} is not in {cohort_dir / EVALS_FILE}; valid: "
                    f"{choices_text(s.eval_id for s in specs)}")


def make_context_variant(cohort_dir: str | PathLike[str], wanted_id: str, limit: int, tokenizer: str | None = None,
                         now: datetime | None = None, quiet: bool = True, warn: Callable[[str], object] = _ignore,
                         progress: Callable[..., Any] | None = None) -> ContextResult:
    """Write the context-limited copy of an eval and register it in evals.json (`warn`: as
    for load_counter; `progress`: a tqdm-like factory for a bar over the bytes copied)."""
    cohort_dir = Path(cohort_dir)
    if limit < 1:
        raise UserError(f"--context must be a positive number of tokens, got {limit}")
    spec, specs = find_eval(cohort_dir, wanted_id)
    sampler = f"{spec.sampler}-{limit_label(limit)}"
    new_id = make_eval_id(spec.model, spec.template, sampler)
    if any(s.eval_id == new_id for s in specs):
        raise UserError(f"{cohort_dir / EVALS_FILE} already has eval {new_id} ({spec.model} | {spec.template} | "
                        f"{sampler}); remove that entry and its run folder to rebuild it")
    folders = eval_folders(spec, cohort_dir)
    if not folders:
        raise UserError(f"eval {wanted_id} has no run folders in {cohort_dir}; "
                        f"pull them first: python data.py pull eval {wanted_id}")
    counter = load_counter(tokenizer, spec.hf_id, warn)
    names = [n for f in folders if (n := config_name(f.name, spec))]
    folder = cohort_dir / run_folder_name(names[0] if names else "ctx", spec.model, spec.template, sampler,
                                          now or datetime.now())
    if folder.exists():
        raise UserError(f"{folder} already exists; wait a second and run again")
    result = ContextResult(folder, new_id, sampler, {}, counter=counter.name)
    _write_variant(folders, folder, limit, counter, sampler, result, None if quiet else progress)
    result.entry = _register(cohort_dir, spec, sampler, limit, folder)
    result.commands, result.notes = evaluate_commands(cohort_dir, new_id, folder)
    result.notes.extend(_overlap_notes(specs, cohort_dir, folder))
    return result


def _overlap_notes(specs: list[EvalSpec], cohort_dir: Path, folder: Path) -> list:
    """Existing evals whose glob (e.g. a sampler wildcard, `*_model_template_*/*`) also takes the new folder."""
    notes = []
    for other in specs:
        if folder in eval_folders(other, cohort_dir):
            notes.append(f"eval {other.eval_id}'s glob {other.glob!r} also matches {folder.name}; evaluate.py "
                         f"will skip those records for it (their sampler differs) and verify will flag them: "
                         f"narrow it to end in _{safe_name(other.sampler)}/*")
    return notes


def _write_variant(folders: dict, folder: Path, limit: int, counter: TextCounter, sampler: str, result: ContextResult,
                   progress: Callable[..., Any] | None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.ctx-", dir=folder.parent))
    try:
        files = [(src, rel) for run, paths in sorted(folders.items()) for src in paths
                 for rel in [src.relative_to(run.resolve())]]
        total = sum(src.stat().st_size for src, _ in files)
        with (progress(total=total, unit="B", unit_scale=True, desc=f"context {limit}", leave=False)
              if progress else NullBar()) as bar:
            for src, rel in files:
                _clip_file(src, tmp / rel, limit, counter, sampler, result)
                bar.update(src.stat().st_size)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _clip_file(src: Path, dst: Path, limit: int, counter: TextCounter, sampler: str, result: ContextResult) -> None:
    """Append the clipped records of one source file (several runs may share a step name)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "a", encoding="utf-8") as out:
        for _, record, error in iter_records(src):
            if record is None:      # then `error` says why (iter_records)
                result.skipped_lines.append(error)
                continue
            clipped, status = clip_record(record, limit, counter, sampler)
            result.samples += 1
            result.clipped += status == "clipped"
            result.uncounted += status == "uncounted"
            out.write(json.dumps(clipped, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------- evals.json

def _register(cohort_dir: Path, spec: EvalSpec, sampler: str, limit: int, folder: Path) -> dict:
    """Append the variant's entry (a copy of the source entry, re-labelled) to evals.json."""
    path = cohort_dir / EVALS_FILE
    entries = json.loads(path.read_text(encoding="utf-8"))
    entry_number = re.search(r"\[(\d+)\]$", spec.source)
    assert entry_number is not None, f"an eval's source ends with its evals.json index: {spec.source}"
    index = int(entry_number.group(1))
    entry = json.loads(json.dumps(entries[index]))
    tag = f"ctx:{limit_label(limit)}"
    entry["evaluate"] = dict(entry.get("evaluate") or {}, glob=_variant_glob(spec, sampler, folder, cohort_dir))
    entry["filters"] = dict(entry["filters"], sampler=sampler)
    entry["label"] = f"{spec.label} ({tag})"
    groups = [g for g in _as_list(entry.get("groups")) if not str(g).startswith("ctx:")]
    entry["groups"] = groups + [tag]
    entries.append(entry)
    write_evals_atomic(path, entries)
    return entry


def _as_list(value: str | Iterable[str] | None) -> list:
    return [value] if isinstance(value, str) else list(value or [])


def _variant_glob(spec: EvalSpec, sampler: str, folder: Path, cohort_dir: Path) -> str:
    """Same style as the source glob (same directory prefix), checked to match the new folder."""
    pattern = f"*_{safe_name(spec.model)}_{safe_name(spec.template)}_{safe_name(sampler)}/*"
    prefix = spec.glob.rsplit("/", 2)[0] + "/" if spec.glob.count("/") >= 2 else ""
    for candidate in (prefix + pattern, pattern, f"{folder.name}/*"):
        files = eval_files(replace(spec, glob=candidate, sampler=sampler))
        if files and all(folder.resolve() in f.parents for f in files):
            return candidate
    return f"{folder.name}/*"


def write_evals_atomic(path: Path, entries: list) -> None:
    """Rewrite evals.json (indent 2, key order kept) via a temp file + rename."""
    write_text_atomic(path, json.dumps(entries, indent=2, ensure_ascii=False) + "\n")


def evaluate_commands(cohort_dir: Path, new_id: str, folder: Path) -> tuple:
    """(evaluate.py commands that bring the variant into a PointsDB, notes on datasets that filter it out)."""
    commands, notes = [], []
    for dataset in datasets_naming(cohort_dir):
        if any(spec.eval_id == new_id for spec in dataset.evals):   # the dataset's cohort filters admit it
            commands.append(f"python evaluate.py --dataset {display_path(dataset.path)}")
        else:
            notes.append(f"dataset {display_path(dataset.path)} names this cohort but its cohort filters "
                         f"leave out eval {new_id}; edit them to include it")
    if not commands:
        commands.append(f"python evaluate.py --interview '{display_path(folder)}/*.ndjson'")
    return commands, notes

