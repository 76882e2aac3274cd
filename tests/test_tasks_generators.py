"""arithmetic, boolean, brackets: determinism, count-invariance, self-grading,
independent re-solving of the rendered text, validation, and growing difficulty."""
from __future__ import annotations

import random
import re
import statistics

import pytest

from resolver.core.errors import UserError
from resolver.grading.answers import grade
from resolver.tasks import get_task, task_names, task_of_record

OURS = ("arithmetic", "boolean", "brackets")
PARAM_SETS = {
    "arithmetic": [{}, {"length": 20, "max_depth": 4, "prob_dewhitespace": 0.5},
                   {"length": 5, "min_number": -99, "max_number": 99}],
    "boolean": [{"format": f, "length": 7, "max_depth": 3, "prob_dewhitespace": 0.3} for f in range(5)]
               + [{"format": 0, "length": 30, "max_depth": 4, "prob_not": 1.0, "prob_not_after_not": 0.9}],
    "brackets": [{}, {"length": 32, "max_depth": 8, "bracket_types": 5}, {"length": 8, "max_depth": 1},
                 {"length": 30, "max_depth": 6, "weights": [1, 0, 3, 1], "close_weight_multiplier": 0.4}],
}


def cases(name, params, count, seed=1234):
    task = get_task(name)
    return task.generate_cases(task.validate(params), random.Random(seed), count)


def test_registry_has_them():
    assert set(OURS) <= set(task_names())


@pytest.mark.parametrize("name", OURS)
def test_determinism_and_count_invariance(name):
    for params in PARAM_SETS[name]:
        a, b = cases(name, params, 32), cases(name, params, 32)
        assert [c.__dict__ for c in a] == [c.__dict__ for c in b]
        assert [c.__dict__ for c in cases(name, params, 8)] == [c.__dict__ for c in a[:8]]
        assert len({c.input for c in a}) > 1  # not a constant generator


@pytest.mark.parametrize("name", OURS)
def test_target_grades_correct_and_other_options_wrong(name):
    task = get_task(name)
    for params in PARAM_SETS[name]:
        for case in cases(name, params, 24):
            fields = {"target": case.target, "response_enum": case.response_enum}
            good = grade(task, fields, f"Let me see.\nFinal Answer: {case.target}", "stop")
            assert good["is_valid"] and good["is_correct"], (case, good)
            for other in case.response_enum or []:
                if other != case.target:
                    bad = grade(task, fields, f"Final Answer: {other}", "stop")
                    assert bad["is_valid"] and not bad["is_correct"]
            if not case.response_enum:  # an open answer: a plausible wrong one is wrong
                wrong = grade(task, fields, f"Final Answer: {_wrong(name, case.target)}", "stop")
                assert not wrong["is_correct"]


def _wrong(name, target):
    if name == "arithmetic":
        return str(int(target) + 1)
    return target + " )"


def test_guess_chance_and_enum():
    b = cases("boolean", {"format": 2}, 3)
    assert all(c.response_enum == ["ON", "OFF"] and c.guess_chance == 0.5 for c in b)
    # open answers declare the best constant answer's rate (tests/test_tasks_fixes.py checks its value)
    assert all(0 < c.guess_chance < 0.1 and c.response_enum is None for c in cases("arithmetic", {}, 3))


# ---- independent solvers --------------------------------------------------------
def test_arithmetic_matches_python_eval():
    for params in PARAM_SETS["arithmetic"]:
        for case in cases("arithmetic", params, 50):
            assert re.fullmatch(r"[-+*() 0-9]+", case.input)
            assert eval(case.input.replace(" ", "")) == int(case.target)


def _solve_boolean(text, words):
    """Independent shunting-yard evaluation with precedence NOT > AND > XOR > OR."""
    true_w, false_w = words
    prec = {"OR": 1, "XOR": 2, "AND": 3}
    output, ops = [], []

    def apply(op):
        if op == "NOT":
            output.append(not output.pop())
            return
        b, a = output.pop(), output.pop()
        output.append({"AND": a and b, "OR": a or b, "XOR": a != b}[op])

    for tok in re.findall(r"\(|\)|[A-Z0-9]+", text):
        if tok in (true_w, false_w):
            output.append(tok == true_w)
            while ops and ops[-1] == "NOT":
                apply(ops.pop())
        elif tok in ("NOT", "("):
            ops.append(tok)
        elif tok == ")":
            while ops[-1] != "(":
                apply(ops.pop())
            ops.pop()
            while ops and ops[-1] == "NOT":
                apply(ops.pop())
        else:
            while ops and ops[-1] in prec and prec[ops[-1]] >= prec[tok]:
                apply(ops.pop())
            ops.append(tok)
    while ops:
        apply(ops.pop())
    assert len(output) == 1
    return output[0]


def test_boolean_matches_independent_solver():
    from resolver.tasks.boolean import FORMATS
    for params in PARAM_SETS["boolean"]:
        words = FORMATS[params["format"]]
        for case in cases("boolean", params, 40):
            assert case.target == (words[0] if _solve_boolean(case.input, words) else words[1])


def test_brackets_closing_balances_input():
    pairs = {")": "(", "]": "[", "}": "{", ">": "<"}
    for params in PARAM_SETS["brackets"]:
        for case in cases("brackets", params, 40):
            seq = case.input.split() + case.target.split()
            stack = []
            for b in seq:
                if b in pairs:
                    assert stack and stack.pop() == pairs[b]
                else:
                    stack.append(b)
            assert not stack and case.target  # balanced, and something had to be closed
            depth = max(sum(1 if b in "([{<" else -1 for b in case.input.split()[:i + 1])
                        for i in range(len(case.input.split())))
            assert depth <= params.get("max_depth", 4)


def test_brackets_types_mask():
    for case in cases("brackets", {"bracket_types": 2 | 8, "length": 30, "max_depth": 6}, 20):
        assert set(case.input.split()) <= set("[]<>")


def test_brackets_extraction_ignores_spaces_rejects_words():
    task = get_task("brackets")
    fields = {"target": "] ) }", "response_enum": None}
    assert grade(task, fields, "Final Answer: ])}", "stop")["is_correct"]
    assert grade(task, fields, "Final Answer: `] ) }`.", "stop")["is_correct"]
    # grader v2 (docs/decisions.md): one run of brackets among words is the answer a reader sees;
    # words without brackets, or two runs joined by "or", are no answer.
    assert grade(task, fields, "Final Answer: close with ])}", "stop")["is_correct"]
    assert not grade(task, fields, "Final Answer: close the square bracket first", "stop")["is_valid"]
    assert not grade(task, fields, "Final Answer: ] ) } or ] } )", "stop")["is_valid"]


# ---- validation ------------------------------------------------------------------
@pytest.mark.parametrize("name,params,fragment", [
    ("arithmetic", {"length": 2}, "'length'"),
    ("arithmetic", {"lenght": 5}, "unknown parameter 'lenght'"),
    ("arithmetic", {"min_number": 5, "max_number": 1}, "min_number"),
    ("arithmetic", {"prob_open": 1.5}, "'prob_open'"),
    ("boolean", {"format": 7}, "'format'"),
    ("brackets", {"bracket_types": 16}, "'bracket_types'"),
    ("brackets", {"length": 7}, "length must be even"),
    ("brackets", {"weights": [1, 1]}, "4 numbers"),
    ("brackets", {"weights": [1, 0, 0, 0], "bracket_types": 6}, "weight 0"),
    ("brackets", {"length": "long"}, "'length'"),
])
def test_validation_errors(name, params, fragment):
    with pytest.raises(UserError) as err:
        get_task(name).validate(params)
    assert fragment in str(err.value)


# ---- difficulty grows --------------------------------------------------------------
def _mean(values):
    return statistics.fmean(values)


def test_arithmetic_difficulty_grows():
    ops = lambda p: _mean(sum(c.genresult["operators"].values()) for c in cases("arithmetic", p, 40))
    depth = lambda p: _mean(c.genresult["depth"] for c in cases("arithmetic", p, 40))
    assert ops({"length": 4}) < ops({"length": 16}) < ops({"length": 48})
    assert depth({"length": 24, "max_depth": 1}) < depth({"length": 24, "max_depth": 3}) < depth({"length": 24, "max_depth": 6})


def test_boolean_difficulty_grows():
    size = lambda p: _mean(len(c.input.split()) for c in cases("boolean", p, 40))
    assert size({"length": 4}) < size({"length": 12}) < size({"length": 30})
    nots = lambda p: _mean(c.genresult["operators"]["NOT"] for c in cases("boolean", p, 40))
    assert nots({"prob_not": 0.0}) == 0 < nots({"prob_not": 0.4}) < nots({"prob_not": 1.0})
    stacked = lambda p: _mean(len(re.findall(r"NOT NOT", c.input)) for c in cases("boolean", p, 40))
    assert stacked({"prob_not_after_not": 0.0}) == 0 < stacked({"prob_not_after_not": 0.5}) \
        < stacked({"prob_not_after_not": 1.0})


def test_brackets_difficulty_grows():
    to_close = lambda p: _mean(c.genresult["open_at_end"] for c in cases("brackets", p, 60))
    deepest = lambda p: _mean(c.genresult["deepest"] for c in cases("brackets", p, 60))
    assert deepest({"length": 40, "max_depth": 2}) < deepest({"length": 40, "max_depth": 8})
    assert to_close({"length": 40, "max_depth": 2}) < to_close({"length": 40, "max_depth": 12})
    assert deepest({"length": 40, "max_depth": 8, "close_weight_multiplier": 4.0}) \
        < deepest({"length": 40, "max_depth": 8, "close_weight_multiplier": 0.25})


def test_grade_record_regrades_like_grade():
    from resolver.grading.answers import grade_record
    case = cases("boolean", {"format": 4}, 1)[0]
    record = {"base_task": "boolean", "target": case.target, "response_enum": case.response_enum,
              "answer": f"<think>hmm</think>**Final Answer:** {case.target.lower()}.",
              "timings": {"finish_reason": "stop"}}
    assert task_of_record(record) is get_task("boolean")
    assert grade_record(record, task_of_record(record))["is_correct"] is True
    assert grade_record({**record, "timings": {"finish_reason": "length"}}, get_task("boolean"))["is_truncated"] is True
    renamed = {**record, "base_task": "my_boolean"}
    assert grade_record(renamed, task_of_record(renamed, generator="boolean"))["is_correct"] is True
    with pytest.raises(UserError, match="unknown generator 'my_boolean'"):
        task_of_record(renamed)
    with pytest.raises(UserError, match="record has no base_task"):
        task_of_record({"target": case.target})


def test_a_broken_task_module_does_not_hide_the_others(tmp_path, monkeypatch):
    import resolver.tasks as registry
    (tmp_path / "zz_broken.py").write_text("raise RuntimeError('half written')\n")
    monkeypatch.setattr(registry, "__path__", [*registry.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_DISCOVERED", False)
    monkeypatch.setattr(registry, "_BROKEN", {})
    assert {"arithmetic", "boolean", "brackets"} <= set(registry.task_names())
    with pytest.raises(UserError, match=r"generator 'zz_broken' failed to load .*half written"):
        registry.get_task("zz_broken")
