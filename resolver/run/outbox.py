"""What API mode writes, and when (docs/runner.md): a sample's record, made from its answer,
waits in the Outbox until the cache has committed that answer, then goes to its step's file.

So whatever a crash leaves in the run folder is also in the cache, and rerunning the same command
replays it without sending anything twice. Records are counted into the summary as they are
written; a step's file is closed after its last record.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from resolver.client import PromptTooLong
from resolver.records import RecordWriter, step_file
from resolver.run.experiment import graded_record, loop_record

if TYPE_CHECKING:
    from pathlib import Path

    from resolver.client import Completion, ResponseCache
    from resolver.config import Sampler, Step
    from resolver.run.summary import RunSummary

__all__ = ["FLUSH_INTERVAL_S", "Outbox", "answer_record", "prompt_too_long_record"]

FLUSH_INTERVAL_S = 0.025     # cache commit + record write cadence


def prompt_too_long_record(blank: dict, generator: str | None = None, stop_loops: bool = False) -> dict:
    """The record of a sample whose prompt the server refused as longer than its context.

    It is a finished, truncated sample (nothing could be generated): ``answer`` null,
    ``usage`` ``{"completion_tokens": 0}``, ``is_truncated`` true,
    ``timings.finish_reason`` "length" (so re-grading agrees), and two markers
    that say why: ``timings.termination_reason`` "prompt_too_long" and the top-level
    ``"prompt_too_long": true``.
    """
    # usage says "nothing was generated" (prompt size unknown): a record with neither usage nor
    # answer is an offline placeholder to evaluate.py, and this sample is a real outcome.
    record = graded_record(blank, None, None, {"completion_tokens": 0}, "length", generator=generator,
                           termination_reason="prompt_too_long", stop_loops=stop_loops)
    record["prompt_too_long"] = True
    return record


def answer_record(blank: dict, completion: Completion | PromptTooLong, generator: str | None,
                  sampler: Sampler, stop_loops: bool) -> dict:
    """The record of a sample: its `blank` record (run.experiment.blank_record) filled with the
    answer and graded. `stop_loops`: the sampler has a loop rule (the record says so)."""
    if isinstance(completion, PromptTooLong):
        return prompt_too_long_record(blank, generator, stop_loops)
    return graded_record(blank, completion.content, completion.reasoning, completion.usage,
                         completion.finish_reason, generator=generator, stop_loops=stop_loops,
                         loop=loop_record(completion.loop, sampler, completion.finish_reason))


class Outbox:
    """Records waiting for the cache to commit their answers, and the step files they go to
    (one RecordWriter per step, opened at its first record)."""

    def __init__(self, folder: Path, cache: ResponseCache, summary: RunSummary) -> None:
        self.folder = folder
        self.cache = cache
        self.summary = summary
        self._pending: list[tuple[Step, dict | None, bool]] = []   # a None record closes its step's file
        self._writers: dict[int, RecordWriter] = {}                 # id(step) -> its file

    def add(self, step: Step, record: dict, cached: bool) -> None:
        """`record` goes to `step`'s file at the next flush (`cached`: its answer came from the cache)."""
        self._pending.append((step, record, cached))

    def close_step(self, step: Step) -> None:
        """The step has no more records: its file closes after those already added."""
        self._pending.append((step, None, False))

    def flush(self) -> None:
        """Commit the cache, then write the records whose answers are now durable. If the commit
        fails, nothing is written and the records stay here."""
        self.cache.flush()
        pending, self._pending = self._pending, []
        batches: dict[int, tuple[Step, list[dict]]] = {}     # one write and flush per file
        closing = []                     # a step's close marker follows all its records
        for step, record, cached in pending:
            if record is None:
                closing.append(step)
                continue
            batches.setdefault(id(step), (step, []))[1].append(record)
            self.summary.count(record, cached)
        for key, (step, records) in batches.items():
            writer = self._writers.get(key)
            if writer is None:
                writer = self._writers[key] = RecordWriter(step_file(self.folder, step))
            writer.write_many(records)
        for step in closing:
            writer = self._writers.get(id(step))
            if writer:
                writer.close()

    async def flush_forever(self) -> None:
        """Flush every FLUSH_INTERVAL_S until cancelled."""
        while True:
            await asyncio.sleep(FLUSH_INTERVAL_S)
            self.flush()

    def close(self) -> None:
        """Close every step file (steps cut short by Ctrl-C have no close marker)."""
        for writer in self._writers.values():
            writer.close()
