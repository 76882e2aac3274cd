"""Difficulty really grows along each difficulty parameter: longer prompts, more
reasoning steps (state changes touching the answer), more options or distractors."""
from __future__ import annotations

import random
import statistics

import pytest

from resolver.tasks import get_task


def _mean(name, raw, measure, count=48):
    task = get_task(name)
    cases = task.generate_cases(task.validate(raw), random.Random(5), count)
    return statistics.mean(measure(c) for c in cases)


def _length(case):
    return len(case.input)


# (task, base params, parameter, increasing values, measure)
LADDERS = [
    ("cars", {}, "moves", [2, 8, 20], lambda c: c.genresult["target_moves"]),
    ("cars", {}, "cars", [3, 6, 12], _length),
    ("cars", {}, "confounders", [0, 5, 15], _length),
    ("dates", {}, "tier", [0, 1], lambda c: abs(c.genresult["offset_days"])),  # one day -> many days
    ("dates", {}, "tier", [1, 2, 3], lambda c: c.genresult["steps"]),           # chained offsets
    ("dates", {}, "choice_count", [2, 5, 8], lambda c: len(c.response_enum)),
    ("letters", {}, "target_words", [4, 16, 64], lambda c: int(c.target)),
    ("letters", {}, "letters_common", [1, 3, 5], lambda c: int(c.target)),
    ("letters", {}, "confounder_words", [0, 10, 40], _length),
    ("movies", {}, "choice_count", [2, 5, 10], _length),
    ("objects", {}, "target_items", [2, 6, 12], lambda c: int(c.target)),
    ("objects", {}, "distractor_count", [0, 5, 20], lambda c: c.genresult["items"]),
    ("objects", {"target_items": 12}, "target_groups", [1, 2, 3], lambda c: len(c.input.rsplit("\n", 1)[1])),
    ("shapes", {}, "split_edges", [0, 2, 4], lambda c: c.genresult["commands"]),
    ("shapes", {}, "choice_count", [2, 6, 12], lambda c: len(c.response_enum)),
    ("shuffle", {}, "max_depth", [1, 6, 24], lambda c: c.genresult["swaps_with_person"]),
    ("shuffle", {}, "length", [3, 8, 16], lambda c: len(c.response_enum)),
    ("shuffle", {}, "confounding_count", [0, 4, 16], _length),
    ("sort", {}, "length", [4, 16, 64], _length),
    ("sort", {"length": 30}, "prob_duplication", [0.0, 0.3, 0.6], lambda c: c.genresult["duplicates"]),
    ("sort", {"length": 30}, "prob_mutation", [0.0, 0.4, 0.9], lambda c: c.genresult["mutated"]),
    ("tables", {}, "num_rows", [5, 20, 80], _length),
    ("tables", {}, "num_cols", [2, 6, 13], _length),
    ("sequence", {}, "seq_length", [2, 8, 30], lambda c: len(c.target)),
    ("sequence", {}, "num_rules", [0, 2, 4], _length),
]


@pytest.mark.parametrize("name,base,param,values,measure", LADDERS,
                         ids=[f"{l[0]}-{l[2]}-{l[3][0]}" for l in LADDERS])
def test_difficulty_grows_along_the_parameter(name, base, param, values, measure):
    means = [_mean(name, {**base, param: v}, measure) for v in values]
    assert all(a < b for a, b in zip(means, means[1:])), means
