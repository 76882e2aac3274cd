"""Grading a completion: split the reply, locate the final answer, read it as the
task's answer kind, compare with the target (docs/grading.md).
"""
from __future__ import annotations

# Cheap (standard library only): plain imports.
from resolver.grading import answers
from resolver.grading.answer_kinds import canonical_target, extract_by_kind
from resolver.grading.answer_reasons import ALL_REASONS, INVALID_REASONS, UNKNOWN
from resolver.grading.answers import GRADER_VERSION, grade, grade_record
from resolver.grading.replies import MalformedReply, split_message

__all__ = ["ALL_REASONS", "GRADER_VERSION", "INVALID_REASONS", "UNKNOWN", "MalformedReply", "answers",
           "canonical_target", "extract_by_kind", "grade", "grade_record", "split_message"]
