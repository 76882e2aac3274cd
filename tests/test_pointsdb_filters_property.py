"""Property-based tests of the filter parser (hypothesis): any JSON either parses or is a UserError,
and parsed filters select exactly what a plain Python evaluation of the same filter selects."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_pointsdb_query import EVALS, _rows, _write_db

from resolver.core.errors import UserError
from resolver.pointsdb.filters import parse_filters
from resolver.pointsdb.reader import open_pointsdb

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                           max_leaves=8)
keys = st.sampled_from(["eval_id", "base_task", "groups", "model", "params.length", "manifold.degree", "facets.arch",
                        "colour", "params.", "params.a b", "task"]) | st.text(max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, json_values, max_size=4) | json_values)
def test_any_json_parses_or_is_a_user_error(data):
    text = json.dumps(data)
    try:
        filters = parse_filters(text)
    except UserError as exc:
        assert "\n" not in str(exc)
        return
    clause, params = filters.sql()
    assert clause.count("?") == len(params)          # every value is a bound parameter
    for p in params:
        assert not isinstance(p, (dict,))


TAGS = sorted({g for _, groups in EVALS for g in groups})
group_items = st.lists(st.sampled_from(TAGS) | st.lists(st.sampled_from(TAGS), min_size=1, max_size=3),
                       min_size=1, max_size=3)
valid_filters = st.fixed_dictionaries({}, optional={
    "groups": group_items,
    "base_task": st.sampled_from(["arithmetic", "boolean"]) | st.lists(st.sampled_from(["arithmetic", "boolean", "x"]),
                                                                       min_size=1, max_size=2),
    "params.length": st.lists(st.sampled_from([2, 4, 10, 30, 99]), min_size=1, max_size=3),
    "params.operation": st.sampled_from(["add", "mul"]),
    "manifold.degree": st.sampled_from([0, 1, 2]),
    "facets.size": st.sampled_from(["large", "small"]),
})


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("prop") / "p.db"
    rows = _rows()
    _write_db(path, rows)
    with open_pointsdb(path) as pdb:
        yield pdb, rows


def _python_match(row, flt):
    facets = dict(g.split(":", 1) for g in row["groups"])
    for key, want in flt.items():
        want_list = want if isinstance(want, list) else [want]
        if key == "groups":
            if not any(all(t in row["groups"] for t in ([i] if isinstance(i, str) else i)) for i in want):
                return False
        elif key == "base_task" and row["base_task"] not in want_list:
            return False
        elif key.startswith("params.") and row["params"][key[7:]] not in want_list:
            return False
        elif key.startswith("manifold.") and row["manifold"][key[9:]] not in want_list:
            return False
        elif key.startswith("facets.") and facets.get(key[7:]) not in want_list:
            return False
    return True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(valid_filters)
def test_filters_select_what_python_selects(db, flt):
    pdb, rows = db
    got = pdb.aggregate(flt, by=())
    expected = [r for r in rows if _python_match(r, flt)]
    assert int(got["points"].iloc[0]) == len(expected)
    assert int(got["correct"].iloc[0]) == sum(r["counts"][0] for r in expected)
