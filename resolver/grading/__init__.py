"""Grading a completion: split the reply, locate the final answer, read it as the
task's answer kind, compare with the target (docs/grading.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.grading.answer_kinds import canonical_target, extract_by_kind
    from resolver.grading.answer_reasons import ALL_REASONS, INVALID_REASONS, UNKNOWN
    from resolver.grading.answers import GRADER_VERSION, grade, grade_record
    from resolver.grading.replies import MalformedReply, split_message

__all__ = [
    "ALL_REASONS",
    "answers",
    "canonical_target",
    "extract_by_kind",
    "grade",
    "grade_record",
    "GRADER_VERSION",
    "INVALID_REASONS",
    "MalformedReply",
    "split_message",
    "UNKNOWN",
]

_HOMES = {
    "ALL_REASONS": "answer_reasons",
    "GRADER_VERSION": "answers",
    "INVALID_REASONS": "answer_reasons",
    "MalformedReply": "replies",
    "UNKNOWN": "answer_reasons",
    "canonical_target": "answer_kinds",
    "extract_by_kind": "answer_kinds",
    "grade": "answers",
    "grade_record": "answers",
    "split_message": "replies",
}
_MODULES = {'answers'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
