"""The streaming loop rule (resolver/grading/loop_watch.py, docs/loops.md)."""
from __future__ import annotations

from resolver.grading import FoundLoop, LoopRule, LoopWatch, find_loop

UNIT = "Wait, let me recount apples once more from the beginning.\n"   # 58 characters


def test_a_verbatim_loop_is_found_with_its_period():
    text = "Some healthy reasoning first. " * 3 + UNIT * 100
    found = find_loop(text)
    assert found is not None and found.period_chars == 58
    assert found.at_chars % 256 == 0 and found.span_chars >= 2000 and found.copies >= 10


def test_feeding_in_pieces_finds_the_same_loop():
    text = "Some healthy reasoning first. " * 3 + UNIT * 100
    watch = LoopWatch()
    for i in range(0, len(text), 7):
        if watch.feed(text[i:i + 7]):
            break
    assert watch.found == find_loop(text)


def test_a_long_enumeration_is_not_a_loop():
    assert find_loop("".join(f"{i}\n" for i in range(1, 501))) is None


def test_found_loop_to_json():
    assert FoundLoop(58, 10, 580, 768).to_json() == {"period_chars": 58, "copies": 10, "span_chars": 580,
                                                     "at_chars": 768}


def test_rule_refuses_unknown_keys():
    import pydantic
    import pytest
    with pytest.raises(pydantic.ValidationError):
        LoopRule.model_validate({"min_copise": 3})
