"""Grading a completion: split the reply, locate the final answer, read it as the
task's answer kind, compare with the target (docs/grading.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

# Cheap (standard library only): plain imports.
from resolver.grading import answers
from resolver.grading.answer_kinds import canonical_target, extract_by_kind
from resolver.grading.answer_reasons import ALL_REASONS, INVALID_REASONS, UNKNOWN
from resolver.grading.answers import (
    GRADER_VERSION,
    SERVER_LOOP_FINISH_REASONS,
    TRUNCATING_FINISH_REASONS,
    GradedTask,
    grade,
    grade_record,
)
from resolver.grading.replies import MalformedReply, split_message

if TYPE_CHECKING:   # loop_watch loads pydantic: its names load on first use (__getattr__ below)
    from resolver.grading.loop_watch import FoundLoop, LoopRule, LoopWatch, find_loop

__all__ = ["ALL_REASONS", "GRADER_VERSION", "INVALID_REASONS", "UNKNOWN", "FoundLoop", "GradedTask", "LoopRule", "LoopWatch",
           "MalformedReply", "SERVER_LOOP_FINISH_REASONS", "TRUNCATING_FINISH_REASONS",
           "answers", "canonical_target", "extract_by_kind", "find_loop", "grade", "grade_record",
           "loop_watch", "split_message"]

# The streaming loop rule (loop_watch) needs pydantic; grading's other names are standard
# library only, so it loads when first asked for, by the project's one lazy-name library
# (docs/architecture.md, *Public names*).
__getattr__, _dir, _ = lazy_loader.attach(
    __name__, submodules=["loop_watch"],
    submod_attrs={"loop_watch": ["FoundLoop", "LoopRule", "LoopWatch", "find_loop"]})


def __dir__() -> list[str]:
    return list(__all__)
