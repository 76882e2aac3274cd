"""What API mode writes and when (resolver/run/outbox.py; docs/runner.md): a record reaches its
step's file only after the cache has committed its answer, so a crash never leaves a record the
cache lacks. Real files and a real ResponseCache; the cache's commits are read back with plain
sqlite3 (independent of resolver.client.cache)."""
from __future__ import annotations

import json
import sqlite3

import pytest

from resolver.client import Completion, PromptTooLong, ResponseCache
from resolver.config import Step
from resolver.run import RunSummary, messages_for
from resolver.run.experiment import blank_record
from resolver.run.outbox import Outbox, answer_record
from tests.support.runner import first_case

STEP_A = Step(0, "000_arithmetic_length-4", "arithmetic", "arithmetic", {}, {}, 1)
STEP_B = Step(1, "001_boolean_length-4", "boolean", "boolean", {}, {}, 2)
FILE_A, FILE_B = "arithmetic_000_length-4.ndjson", "boolean_001_length-4.ndjson"   # docs/runner.md's naming


def record(key: str, correct: bool = True, tokens: int = 5) -> dict:
    return {"key": key, "is_correct": correct, "is_valid": True, "is_truncated": False,
            "usage": {"prompt_tokens": 10, "completion_tokens": tokens}, "timings": {"finish_reason": "stop"}}


def committed(cache_path) -> set[str]:
    with sqlite3.connect(cache_path) as db:
        return {row[0] for row in db.execute("SELECT key FROM responses")}


def lines(path) -> list[str]:
    return [json.loads(line)["key"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_record_is_written_only_after_its_answer_is_committed(tmp_path):
    summary = RunSummary()
    with ResponseCache(tmp_path / "cache") as cache:
        outbox = Outbox(tmp_path / "run", cache, summary)
        cache.put("k1", {"content": "Final Answer: 4"})
        outbox.add(STEP_A, record("a-0"), cached=False)
        assert not (tmp_path / "run" / FILE_A).exists() and committed(cache.path) == set()
        assert summary.samples == 0                         # counted when written
        outbox.flush()
        assert committed(cache.path) == {"k1"}
        assert lines(tmp_path / "run" / FILE_A) == ["a-0"]
        assert (summary.samples, summary.from_cache, summary.completion_tokens) == (1, 0, 5)


class FailingCommit:
    """A ResponseCache whose next commit fails (a full disk), then works again."""

    def __init__(self, cache: ResponseCache):
        self.cache, self.fail = cache, True

    def flush(self) -> int:
        if self.fail:
            self.fail = False
            raise OSError("No space left on device")
        return self.cache.flush()


def test_a_failed_commit_writes_nothing_and_keeps_the_records(tmp_path):
    summary = RunSummary()
    with ResponseCache(tmp_path / "cache") as cache:
        outbox = Outbox(tmp_path / "run", FailingCommit(cache), summary)
        cache.put("k1", {"content": "x"})
        outbox.add(STEP_A, record("a-0"), cached=False)
        with pytest.raises(OSError):
            outbox.flush()
        assert not (tmp_path / "run" / FILE_A).exists() and summary.samples == 0
        outbox.flush()                                      # the next flush commits and writes them
        assert committed(cache.path) == {"k1"} and lines(tmp_path / "run" / FILE_A) == ["a-0"]
        assert summary.samples == 1


def test_records_go_to_their_steps_files_in_order_and_a_file_closes_after_its_last(tmp_path):
    summary = RunSummary()
    with ResponseCache(tmp_path / "cache") as cache:
        outbox = Outbox(tmp_path / "run", cache, summary)
        outbox.add(STEP_A, record("a-1"), cached=True)
        outbox.add(STEP_B, record("b-0", correct=False), cached=False)
        outbox.add(STEP_A, record("a-0"), cached=False)
        outbox.close_step(STEP_A)
        outbox.add(STEP_B, record("b-1"), cached=True)
        outbox.flush()
        assert lines(tmp_path / "run" / FILE_A) == ["a-1", "a-0"]
        assert lines(tmp_path / "run" / FILE_B) == ["b-0", "b-1"]
        assert (summary.samples, summary.from_cache, summary.correct) == (4, 2, 3)
        outbox.add(STEP_B, record("b-2"), cached=False)
        outbox.flush()                                      # the same file, appended
        assert lines(tmp_path / "run" / FILE_B) == ["b-0", "b-1", "b-2"]
        outbox.close()
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [FILE_A, FILE_B]


def test_a_step_with_no_record_gets_no_file(tmp_path):
    with ResponseCache(tmp_path / "cache") as cache:
        outbox = Outbox(tmp_path / "run", cache, RunSummary())
        outbox.close_step(STEP_A)
        outbox.flush()
        outbox.close()
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------- the record of an answer
@pytest.fixture(scope="module")
def blank():
    experiment, step, index, case = first_case("greedy-4k.json")
    return experiment, step, blank_record(experiment, step, index, case, messages_for(experiment, step, case), 4)


def test_a_prompt_too_long_is_the_documented_truncated_sample(blank):
    experiment, step, empty = blank
    rec = answer_record(dict(empty), PromptTooLong("maximum context length is 100"), step.generator,
                        experiment.sampler, stop_loops=False)
    # docs/runner.md, *Prompt too long*
    assert (rec["answer"], rec["usage"], rec["is_valid"], rec["is_correct"], rec["is_truncated"]) == (
        None, {"completion_tokens": 0}, False, False, True)
    assert rec["timings"] == {"termination_reason": "prompt_too_long", "finish_reason": "length"}
    assert rec["prompt_too_long"] is True


def test_an_answer_is_graded_and_a_stopped_loop_carries_the_samplers_max_tokens(blank):
    experiment, step, empty = blank
    target = empty["target"]
    right = answer_record(dict(empty), Completion(f"Final Answer: {target}", None, "stop", {"completion_tokens": 7}),
                          step.generator, experiment.sampler, stop_loops=False)
    assert right["is_correct"] is True and right["answer"] == f"Final Answer: {target}"
    assert "prompt_too_long" not in right and "loop" not in right["timings"]
    found = {"period_chars": 4, "copies": 300, "span_chars": 1200, "at_chars": 1300}
    looped = answer_record(dict(empty), Completion("ab, " * 325, None, "length", {"completion_tokens": 325}, found),
                           step.generator, experiment.sampler, stop_loops=True)
    assert looped["is_truncated"] is True and looped["timings"]["stop_loops"] is True
    assert looped["timings"]["loop"] == {**found, "max_tokens": 4096}      # samplers/greedy-4k.json
