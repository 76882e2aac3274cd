"""Properties every r12-suite generator must have: determinism, count-invariance,
self-grading (target right, every other option wrong), validation, schema hygiene."""
from __future__ import annotations

import random

import pytest

from resolver.core.errors import UserError
from resolver.grading.answers import grade
from resolver.tasks import get_task

# A few parameter sets per task, from easy to hard, covering enums and bitmasks.
CASES = {
    "cars": [{}, {"cars": 9, "people": 7, "moves": 20, "confounders": 6}, {"operations": 16 | 64, "moves": 8}],
    "dates": [{"tier": t, "format": f} for t in range(4) for f in range(4)],
    "letters": [{}, {"letters_common": 2, "letters_rare": 2, "target_words": 40,
                     "confounder_words": 20, "prob_repeat": 0.3}],
    "movies": [{}, {"reference_count": 2, "choice_count": 10}, {"theme_weight": 0}, {"genre_weight": 0}],
    "objects": [{}, {"target_groups": 3, "target_items": 12, "zero_items": 3, "anchor": 2, "distractor_count": 10}],
    "shapes": [{}, {"choice_count": 12, "split_edges": 3, "relative": 1}] +
              [{"shape_type": s} for s in range(12)],
    "shuffle": [{"anchor": a, "max_depth": 8, "confounding_count": 3} for a in range(9)],
    "sort": [{}, {"length": 40, "prob_mutation": 0.5, "prob_duplication": 0.3}],
    "tables": [{"format": f, "operation": o, "num_rows": 12, "num_cols": c}
               for f in ("markdown", "csv", "tsv", "json", "jsonl", "html")
               for o, c in (("count", 4), ("sum", 3), ("max", 6), ("min", 2), ("lookup", 5))],
    "sequence": [{}, {"num_rules": 4, "seq_length": 12}, {"rule_enable": 1, "num_rules": 3},
                 {"rule_enable": 2, "num_rules": 1}, {"rule_enable": 4, "num_rules": 3}],
}
PAIRS = [(name, p) for name, sets in CASES.items() for p in sets]
IDS = [f"{name}-{i}" for name, sets in CASES.items() for i in range(len(sets))]


def _cases(name, raw, seed, count):
    task = get_task(name)
    return task, task.generate_cases(task.validate(raw), random.Random(seed), count)


def _fields(case):
    return (case.input, case.target, case.response_enum, case.guess_chance, case.genresult)


@pytest.mark.parametrize("name,raw", PAIRS, ids=IDS)
def test_same_seed_same_problems_and_count_prefix(name, raw):
    _, eight = _cases(name, raw, 7, 8)
    _, again = _cases(name, raw, 7, 8)
    _, many = _cases(name, raw, 7, 32)
    assert [_fields(c) for c in eight] == [_fields(c) for c in again]
    assert [_fields(c) for c in many[:8]] == [_fields(c) for c in eight]
    _, other = _cases(name, raw, 8, 8)
    assert [c.input for c in other] != [c.input for c in eight]


def _wrong_open_answer(task, target):
    if task.answer_kind in ("integer", "number"):
        return str(int(target) + 1)
    if task.name == "sort":
        words = target.split("\n")
        return "\n".join(words[1:] + words[:1]) if len(set(w.lower() for w in words)) > 1 else "zzz"
    numbers = target.split(", ")
    return ", ".join(numbers[:-1] + [str(int(numbers[-1]) + 1)])


@pytest.mark.parametrize("name,raw", PAIRS, ids=IDS)
def test_target_grades_correct_and_everything_else_wrong(name, raw):
    task, cases = _cases(name, raw, 3, 12)
    for case in cases:
        fields = {"target": case.target, "response_enum": case.response_enum}
        right = grade(task, fields, f"Some reasoning.\nFinal Answer: {case.target}", "stop")
        assert right["is_valid"] and right["is_correct"], (case.input, case.target, right)
        if case.response_enum:
            assert case.target in case.response_enum
            assert case.guess_chance == pytest.approx(1 / len(case.response_enum))
            for option in case.response_enum:
                if option != case.target:
                    verdict = grade(task, fields, f"Final Answer: {option}", "stop")
                    assert verdict["is_valid"] and not verdict["is_correct"], (option, case.target)
        else:  # open answers: 0, or the best constant answer's rate (tests/test_tasks_fixes.py)
            assert 0 <= case.guess_chance <= 1
            wrong = grade(task, fields, f"Final Answer: {_wrong_open_answer(task, case.target)}", "stop")
            assert wrong["is_valid"] and not wrong["is_correct"]
        truncated = grade(task, fields, f"Final Answer: {case.target}", "length")
        assert not truncated["is_correct"] and truncated["is_truncated"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_schema_is_documented_and_defaults_are_valid(name):
    task = get_task(name)
    assert task.description and task.answer_format.startswith("Final Answer:")
    for p in task.params:
        assert p.doc, p.name
        assert not p.required, f"{name}.{p.name} needs a default (multishot examples use defaults)"
    task.validate({})
    case = task.generate(task.typed(task.example_params()), random.Random(0))
    assert case.input and case.target is not None and isinstance(case.genresult, dict)


@pytest.mark.parametrize("name", sorted(CASES))
def test_unknown_and_out_of_range_parameters_are_refused(name):
    task = get_task(name)
    with pytest.raises(UserError, match="unknown parameter 'no_such_knob'"):
        task.validate({"no_such_knob": 1})
    first = task.params[0]
    bad = (first.high + 1) if first.high is not None else "not-a-valid-choice"
    with pytest.raises(UserError, match=first.name):
        task.validate({first.name: bad})
    with pytest.raises(UserError, match=first.name):
        task.validate({first.name: [1, 2]})


@pytest.mark.parametrize("name,raw,fragment", [
    ("letters", {"min_word_length": 9, "max_word_length": 4}, "min_word_length"),
    ("letters", {"letters_common": 0}, "at least one"),
    ("shapes", {"min_scale": 90, "max_scale": 20}, "min_scale"),
    ("objects", {"target_groups": 3, "target_items": 2}, "target_items"),
    ("objects", {"target_items": 13, "zero_items": 2}, "zero_items"),
    ("movies", {"genre_weight": 0, "theme_weight": 0}, "genre_weight"),
    ("sequence", {"rule_enable": 2, "num_rules": 2}, "MODULO"),
    ("cars", {"operations": 8, "people": 1}, "people"),
    ("dates", {"format": 4}, "format"),
    ("tables", {"format": "xml"}, "markdown"),
    ("shuffle", {"anchor": 9}, "anchor"),
])
def test_inconsistent_parameters_give_one_line_messages(name, raw, fragment):
    with pytest.raises(UserError, match=fragment) as info:
        get_task(name).validate(raw)
    assert "\n" not in str(info.value)
