"""Grading a completion: split the reply, locate the final answer, read it as the
task's answer kind, compare with the target (docs/grading.md).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Cheap (standard library only): plain imports.
from resolver.grading import answers
from resolver.grading.answer_kinds import canonical_target, extract_by_kind
from resolver.grading.answer_reasons import ALL_REASONS, INVALID_REASONS, UNKNOWN
from resolver.grading.answers import GRADER_VERSION, grade, grade_record
from resolver.grading.replies import MalformedReply, split_message

if TYPE_CHECKING:   # loop_watch loads pydantic: its names load on first use (__getattr__ below)
    from resolver.grading.loop_watch import FoundLoop, LoopRule, LoopWatch, find_loop

__all__ = ["ALL_REASONS", "GRADER_VERSION", "INVALID_REASONS", "UNKNOWN", "FoundLoop", "LoopRule", "LoopWatch",
           "MalformedReply", "answers", "canonical_target", "extract_by_kind", "find_loop", "grade", "grade_record",
           "loop_watch", "split_message"]

_LOOP_WATCH = ("FoundLoop", "LoopRule", "LoopWatch", "find_loop")


def __getattr__(name: str):
    # The streaming loop rule (loop_watch) needs pydantic; grading's other names are standard
    # library only, so it loads when first asked for (docs/architecture.md, *Public names*).
    if name == "loop_watch" or name in _LOOP_WATCH:
        module = importlib.import_module("resolver.grading.loop_watch")
        return module if name == "loop_watch" else getattr(module, name)
    raise AttributeError(f"module 'resolver.grading' has no attribute {name!r}")
