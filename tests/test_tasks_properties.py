"""Property-based: any valid parameter set either is refused with a UserError by the
consistency check or generates problems whose target grades correct."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from resolver.core.errors import UserError
from resolver.grading.answers import grade
from resolver.tasks import get_task

TASKS = ["cars", "dates", "letters", "movies", "objects", "shapes", "shuffle", "sort", "tables", "sequence"]
# Keep the sizes that only make prompts longer small enough for a fast test.
SIZE_CAPS = {"num_rows": 60, "target_words": 60, "confounder_words": 30, "length": 40, "max_depth": 40,
             "moves": 30, "max_scale": 300.0, "min_scale": 300.0, "max_offset": 300.0, "seq_length": 20}


def _strategy(param):
    if param.choices is not None:
        return st.sampled_from(param.choices)
    high = min(param.high, SIZE_CAPS.get(param.name, param.high))
    if param.kind is int:
        return st.integers(int(param.low), int(high))
    return st.floats(float(param.low), float(high), allow_nan=False)


def _params(task):
    return st.fixed_dictionaries({p.name: _strategy(p) for p in task.params})


@pytest.mark.parametrize("name", TASKS)
def test_any_valid_parameters_generate_self_consistent_problems(name):
    task = get_task(name)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(raw=_params(task), seed=st.integers(0, 2 ** 32))
    def check(raw, seed):
        try:
            params = task.validate(raw)
        except UserError as exc:
            assert "\n" not in str(exc) and name in str(exc)
            return
        for case in task.generate_cases(params, random.Random(seed), 3):
            verdict = grade(task, {"target": case.target, "response_enum": case.response_enum},
                            f"Final Answer: {case.target}", "stop")
            assert verdict["is_correct"], (raw, case.input, case.target)

    check()
