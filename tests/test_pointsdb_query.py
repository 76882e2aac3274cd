"""pointsdb.py: writer, filters (nested groups, dotted keys), dimensions, aggregation.

Expected results are computed here with plain Python over the rows the test itself
wrote, never by the module under test.
"""
import json
import random

import pytest

from resolver.catalog.datasets import eval_id as make_eval_id, facets_from_groups
from resolver.core.errors import UserError
from resolver.pointsdb.filters import parse_filters, validate_dimension
from resolver.pointsdb.reader import open_pointsdb
from resolver.pointsdb.schema import POINT_COLUMNS, SCHEMA_VERSION, canonical_json, point_ids
from resolver.pointsdb.writer import PointsWriter, points_batch

EVALS = [
    ("m-moe-large", ["arch:moe", "size:large", "family:qwen3"]),
    ("m-moe-small", ["arch:moe", "size:small", "family:llama"]),
    ("m-dense-large", ["arch:dense", "size:large", "family:qwen3"]),
    ("m-dense-small", ["arch:dense", "size:small", "family:phi4"]),
]


def _rows():
    rng = random.Random(7)
    rows = []
    for model, groups in EVALS:
        eid = make_eval_id(model, "t", "s")
        for task in ("arithmetic", "boolean"):
            for length in (2, 10, 4, 30):
                for op in ("add", "mul"):
                    counts = [rng.randint(0, 9) for _ in range(4)]
                    rows.append(dict(
                        eval_id=eid, model=model, template="t", sampler="s", base_task=task,
                        task=f"000_{task}", params={"length": length, "operation": op},
                        manifold={"id": "grid", "degree": length % 3}, groups=groups,
                        counts=counts, guess=rng.random()))
    return rows


def _write_db(path, rows):
    cols = {c: [] for c in POINT_COLUMNS}
    by_eval = {}
    for r in rows:
        by_eval.setdefault(r["eval_id"], []).append(r)
    for eid, eval_rows in by_eval.items():
        ids = point_ids(eid, [(r["base_task"], canonical_json(r["params"])) for r in eval_rows])
        for pid, r in zip(ids, eval_rows):
            c, x, v, t = r["counts"]
            n = c + x + v + t
            values = dict(
                id=pid, eval_id=eid, model=r["model"], template="t", sampler="s", base_task=r["base_task"],
                task=r["task"], params=canonical_json(r["params"]), manifold=canonical_json(r["manifold"]),
                facets=canonical_json(facets_from_groups(r["groups"])), groups=r["groups"],
                correct=c, incorrect=x, invalid=v, truncated=t, guess_sum=r["guess"], guess_sum_all=r["guess"] + 0.5 * t,
                task_version=1, grader_version=1, invalid_reasons=canonical_json({"no_marker": v} if v else {}),
                prompt_tokens=10 * n, completion_tokens_sum=100 * n, tokens_correct=100 * c,
                tokens_incorrect=100 * x, tokens_invalid=100 * v, tokens_truncated=100 * t,
                completion_tokens=[100] * n, outcome=[0] * c + [1] * x + [2] * v + [3] * t,
                answer_bytes=[5] * n, compressed_bytes=[3] * n, sample_index=list(range(n)), sources=["f.ndjson"],
                loops_stopped=0, tokens_saved=0)
            for k, val in values.items():
                cols[k].append(val)
    with PointsWriter(path, keep_existing=False) as writer:
        writer.write_points(points_batch(cols))
        for model, groups in EVALS:
            writer.put_eval({"eval_id": make_eval_id(model, "t", "s"), "model": model, "template": "t",
                             "sampler": "s", "label": model, "groups": groups,
                             "facets": canonical_json(facets_from_groups(groups)), "tags": [], "cohort": "c"})


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("pdb") / "p.db"
    rows = _rows()
    _write_db(path, rows)
    with open_pointsdb(path) as pdb:
        yield pdb, rows


def _matches_groups(row_groups, items):
    return any(all(tag in row_groups for tag in ([i] if isinstance(i, str) else i)) for i in items)


@pytest.mark.parametrize("groups", [
    [["arch:moe", "size:large"], "family:phi4"],
    ["arch:moe"],
    [["arch:dense", "family:qwen3"]],
    [["arch:moe", "size:small"], ["arch:dense", "size:large"]],
    ["nope:nothing"],
])
def test_nested_group_filters(db, groups):
    pdb, rows = db
    got = pdb.points({"groups": groups}, columns=["model", "base_task", "params"])
    expected = sorted((r["model"], r["base_task"], canonical_json(r["params"])) for r in rows
                      if _matches_groups(r["groups"], groups))
    assert sorted(zip(got["model"], got["base_task"], map(canonical_json, got["params"]))) == expected


def test_combined_and_dotted_filters(db):
    pdb, rows = db
    eid = make_eval_id("m-moe-large", "t", "s")
    flt = json.dumps({"eval_id": [eid, make_eval_id("m-dense-small", "t", "s")], "base_task": "boolean",
                      "params.length": [10, 30], "params.operation": "mul", "manifold.degree": 0,
                      "facets.size": "large"})
    got = pdb.points(flt, columns=["eval_id", "params.length", "params.operation"])
    expected = [r for r in rows if r["eval_id"] == eid and r["base_task"] == "boolean"
                and r["params"]["length"] in (10, 30) and r["params"]["operation"] == "mul"
                and r["manifold"]["degree"] == 0]
    assert len(got) == len(expected) == 1
    assert got["params.length"].tolist() == [30]


def test_aggregate_sums_and_numeric_sort(db):
    pdb, rows = db
    agg = pdb.aggregate({"base_task": ["arithmetic"]}, by=["eval_id", "params.length"])
    sums = {}
    for r in rows:
        if r["base_task"] == "arithmetic":
            key = (r["eval_id"], r["params"]["length"])
            acc = sums.setdefault(key, [0, 0, 0, 0, 0.0, 0, 0.0])
            for i in range(4):
                acc[i] += r["counts"][i]
            acc[4] += r["guess"]
            acc[5] += 1
            acc[6] += r["guess"] + 0.5 * r["counts"][3]
    assert list(zip(agg["eval_id"], agg["params.length"])) == sorted(sums)   # 2 < 4 < 10 < 30
    for _, row in agg.iterrows():
        c, x, v, t, g, n, g_all = sums[(row["eval_id"], row["params.length"])]
        assert (row["correct"], row["incorrect"], row["invalid"], row["truncated"], row["points"]) == (c, x, v, t, n)
        assert row["guess_sum"] == pytest.approx(g) and row["guess_sum_all"] == pytest.approx(g_all)
        assert row["completion_tokens_sum"] == 100 * (c + x + v + t)


def test_aggregate_no_dimensions_and_facets(db):
    pdb, rows = db
    total = pdb.aggregate(by=())
    assert total["correct"].iloc[0] == sum(r["counts"][0] for r in rows)
    by_arch = pdb.aggregate(by=["facets.arch"])
    assert by_arch["facets.arch"].tolist() == ["dense", "moe"]
    assert by_arch["points"].sum() == len(rows)


def test_evals_and_dimension_values(db):
    pdb, _ = db
    evals = pdb.evals()
    assert len(evals) == 4 and isinstance(evals["facets"].iloc[0], dict)
    assert pdb.dimension_values("params.length") == [2, 4, 10, 30]


def test_has_points(db, tmp_path):
    pdb, _ = db
    assert pdb.has_points()
    with PointsWriter(tmp_path / "empty.db", keep_existing=False):
        pass                                   # committed on exit: the schema, no points
    with open_pointsdb(tmp_path / "empty.db") as empty:
        assert not empty.has_points()


def test_point_ids_stable_and_independent():
    idents = [("arithmetic", canonical_json({"length": n})) for n in range(3000)]
    first = point_ids("abcdef", idents)
    assert len(set(first)) == len(idents)
    assert point_ids("abcdef", list(reversed(idents))) == list(reversed(first))
    # adding points keeps most existing ids (only slot collisions can move)
    more = point_ids("abcdef", idents + [("boolean", canonical_json({"length": n})) for n in range(50)])
    assert sum(a == b for a, b in zip(first, more)) >= len(first) - 5
    assert all(i >> 20 == 0xabcdef for i in first) and max(first) < 2 ** 63


@pytest.mark.parametrize("bad, needle", [
    ("{oops", "not valid JSON"),
    ('["x"]', "JSON object"),
    ('{"colour": "red"}', "unknown filter key 'colour'"),
    ('{"params.x; DROP TABLE points": 1}', "unknown filter key"),
    ('{"groups": [3]}', "groups"),
    ('{"eval_id": []}', "empty list"),
    ('{"base_task": {"a": 1}}', "strings or numbers"),
])
def test_bad_filters(bad, needle):
    with pytest.raises(UserError, match=needle):
        parse_filters(bad)


def test_filter_values_are_bound_not_interpolated(db):
    pdb, _ = db
    assert len(pdb.points({"model": "x' OR '1'='1"})) == 0
    assert len(pdb.points({"params.operation": "add' OR '1'='1"})) == 0


@pytest.mark.parametrize("name", ["eval_id", "params.length", "manifold.target_tokens", "facets.arch"])
def test_valid_dimensions(name):
    assert validate_dimension(name) == name


@pytest.mark.parametrize("name", ["label", "params.", "params.a b", "other.x", "params.x'--"])
def test_invalid_dimensions(name):
    with pytest.raises(UserError, match="unknown dimension"):
        validate_dimension(name)


def test_open_missing_and_foreign(tmp_path):
    with pytest.raises(UserError, match="evaluate.py --dataset data/x.json"):
        open_pointsdb(tmp_path / "missing.db", dataset="data/x.json")
    import duckdb
    con = duckdb.connect(str(tmp_path / "other.db"))
    con.execute("CREATE TABLE t (a INTEGER)")
    con.close()
    with pytest.raises(UserError, match="not a PointsDB"):
        open_pointsdb(tmp_path / "other.db")


def test_writer_lock_stale_temp_and_abort(tmp_path):
    path = tmp_path / "w.db"
    stale = tmp_path / "w.db.tmp-999999"
    stale.write_bytes(b"left by a killed writer")
    first = PointsWriter(path, keep_existing=False)
    assert not stale.exists()
    with pytest.raises(UserError, match="another evaluate.py is writing"):
        PointsWriter(path)
    first.abort()
    assert not path.exists() and not list(tmp_path.glob("w.db.tmp-*"))
    with PointsWriter(path) as writer:           # the lock is free again
        writer.set_meta({"k": "v"})
    with open_pointsdb(path) as pdb:
        assert pdb.meta() == {"k": "v", "schema_version": str(SCHEMA_VERSION)}


def test_source_path_resolves_relative_to_the_db(tmp_path):
    path = tmp_path / "sub" / "s.db"
    with PointsWriter(path, keep_existing=False):
        pass
    with open_pointsdb(path) as pdb:
        assert pdb.source_path("cohort/run/000_a.ndjson") == (tmp_path / "sub" / "cohort/run/000_a.ndjson").resolve()


def test_unwritable_location_is_a_user_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where a directory should be")
    with pytest.raises(UserError, match="cannot write the PointsDB"):
        PointsWriter(blocker / "sub" / "x.db")
