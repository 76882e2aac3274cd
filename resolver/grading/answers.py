"""Grading model answers (docs/grading.md); the rules are in docs/grading.md.

The pipeline for one completion is always the same, whoever calls it (the API
runner, batch import, the simulator's self-checks, `evaluate.py --offline`):

1. `strip_reasoning`: drop `<think>...</think>`; an unclosed `<think>` means the
   model never reached an answer (None). Reasoning delivered in a separate field
   (`resolver.grading.replies.split_message`) is never graded.
2. `final_answer_text`: the text after the LAST final-answer marker ("Final Answer:",
   a "Final Answer" header or bold line, "The final answer is", "Answer:" at a line
   start), or from a `\\boxed{}` when there is no marker. This is `normalized_answer`.
3. the task's `extract` (by default `extract_by_kind` of its answer kind): the
   canonical answer, or None when no single answer of the right shape is there
   (hedges, echoed format lines). This is `extracted_answer`.
4. `is_valid` = something was extracted (and, for closed tasks, it is one of the
   `response_enum` options); `is_correct` = valid and the task says it matches the
   target; `is_truncated` = finish_reason "length", or "repetition" (a loop the server
   stopped; TRUNCATING_FINISH_REASONS) (never valid nor correct).
5. `invalid_reason`: null for a valid answer, else which step found nothing
   (`resolver.grading.answer_reasons.INVALID_REASONS`).

Every function here is pure, so re-grading stored text gives the runner's verdicts.
The caller hands over the task object: grading sits a layer below tasks (tasks.base reads
answers with answer_kinds), so it never imports the registry (docs/architecture.md, "Layers").
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

from resolver.grading.answer_kinds import canonical_target, choice_options, extract_by_kind
from resolver.grading.answer_reasons import INVALID_REASONS, invalid_reason
from resolver.grading.answer_text import clean_line, final_answer_text, first_line, strip_reasoning

# Bumped whenever a grading rule changes a verdict; records carry it as
# `grader_version`, and `evaluate.py --offline` re-grades older records.
# 2: hedges and echoes invalid, option texts, markers without colon, ...
# 3: lists boxed over several lines, brackets in \( \); invalid answers carry a reason.
# 4: a server's loop stop (vLLM's finish_reason "repetition") is a truncation, like "length".
GRADER_VERSION = 4

# finish_reasons of an answer the server cut off before the model ended it (docs/grading.md,
# *Truncation*): the token limit, and a loop the server stopped (vLLM's repetition_detection).
# vLLM's other reasons are "stop" (a natural end), "abort" and "error" (never an answer: the
# client went away, or a 500); SGLang's are "stop", "length" and "abort".
SERVER_LOOP_FINISH_REASONS = ("repetition",)
TRUNCATING_FINISH_REASONS = ("length", *SERVER_LOOP_FINISH_REASONS)

__all__ = ["GRADER_VERSION", "INVALID_REASONS", "SERVER_LOOP_FINISH_REASONS", "TRUNCATING_FINISH_REASONS",
            "canonical_target", "extract_by_kind", "final_answer_text",
           "strip_reasoning", "grade", "grade_record", "echoes_format", "verdict", "GradedTask"]


class GradedTask(Protocol):
    """What grading reads of a task (a `resolver.tasks.Task`, which sits a layer above)."""

    answer_kind: str

    def extract(self, text: str, response_enum: Sequence[str] | None,
                options: dict[str, str] | None = None) -> str | None: ...

    def matches(self, extracted: str, target: str) -> bool: ...


@lru_cache(maxsize=256)
def _placeholder(answer_format: str) -> str:
    """"Final Answer: <integer>" -> "<integer>", folded; "" when it has no words."""
    placeholder = re.sub(r"^\s*final\s+answer\s*:\s*", "", answer_format, flags=re.IGNORECASE)
    return " ".join(placeholder.casefold().split()) if re.search(r"[A-Za-z]", placeholder) else ""


def echoes_format(task: GradedTask, normalized: str) -> bool:
    """Is the answer line the task's answer-format placeholder copied out?"""
    placeholder = _placeholder(getattr(task, "answer_format", "") or "")
    if not placeholder:
        return False
    line = clean_line(first_line(normalized))
    return " ".join(line.casefold().split()).startswith(placeholder)


def grade(task: GradedTask, case_fields: dict, answer: str | None, finish_reason: str | None,
          reasoning: str | None = None) -> dict:
    """Grade one completion of one test case.

    `task` is a Task (`resolver.tasks.get_task(name)`); `case_fields` needs `target`
    and `response_enum`, and `input` (the problem) for choice tasks, whose option
    texts are read from it. `reasoning` (a separate reasoning field) is never graded;
    it only tells a reasoning-only reply from an empty one. Returns the grading
    fields of the runner record: the five verdict fields and `invalid_reason`.
    """
    enum = case_fields.get("response_enum")
    truncated = finish_reason in TRUNCATING_FINISH_REASONS
    visible = strip_reasoning(answer)
    normalized = final_answer_text(visible)
    echoed = normalized is not None and echoes_format(task, normalized)
    extracted = None
    options = choice_options(case_fields.get("input"), enum) if task.answer_kind == "choice" else {}
    if normalized is not None and not echoed:
        extracted = task.extract(normalized, enum, options=options) if options else task.extract(normalized, enum)
    valid = extracted is not None and (not enum or extracted in enum) and not truncated
    correct = valid and extracted is not None and bool(task.matches(extracted, str(case_fields["target"])))
    reason = None if valid else invalid_reason(
        task.answer_kind, answer, visible, normalized, echoed=echoed, extracted=extracted, response_enum=enum,
        options=options, truncated=truncated, reasoning=reasoning)
    return {
        "normalized_answer": normalized,
        "extracted_answer": extracted,
        "is_valid": valid,
        "is_correct": correct,
        "is_truncated": truncated,
        "invalid_reason": reason,
    }


def verdict(graded: dict) -> str:
    """"correct" | "wrong" | "invalid" of a graded record (or `grade`'s result).

    For counting what a re-grade changed: compare `verdict(old)` with `verdict(new)`.
    """
    if not graded.get("is_valid"):
        return "invalid"
    return "correct" if graded.get("is_correct") else "wrong"


def grade_record(record: dict, task: GradedTask) -> dict:
    """Re-grade a stored runner record with the current rules, as `task` grades it.

    The task of a record is `resolver.tasks.task_of_record(record)`: its base_task's
    generator, unless the caller knows a config renamed it.
    """
    finish = (record.get("timings") or {}).get("finish_reason")
    reasoning = record.get("reasoning")
    return grade(task, record, record.get("answer"), finish, reasoning if isinstance(reasoning, str) else None)
