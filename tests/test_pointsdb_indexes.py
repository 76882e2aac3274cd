"""The PointsDB's indexes (docs/pointsdb.md, "Indexes"): written by every PointsWriter, kept
through an incremental rewrite, and used by DuckDB for the id look-up."""
from __future__ import annotations

import duckdb

from resolver.pointsdb.writer import PointsWriter
from tests.benchmarks.synth_db import write_synth_db

WANTED = {("points_id", "CREATE INDEX points_id ON points(id);"),
          ("points_identity", "CREATE INDEX points_identity ON points(eval_id, base_task, params);")}


def indexes(path) -> set:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return set(con.execute("SELECT index_name, sql FROM duckdb_indexes() WHERE table_name = 'points'").fetchall())
    finally:
        con.close()


def test_a_written_db_has_the_indexes_and_a_rewrite_keeps_them(tmp_path):
    path = write_synth_db(tmp_path / "s.db", evals=2, tasks=2, points_per_task=10, samples=4)
    assert indexes(path) == WANTED
    con = duckdb.connect(str(path), read_only=True)
    eid = con.execute("SELECT min(eval_id) FROM evals").fetchone()[0]
    before = con.execute("SELECT count(*) FROM points").fetchone()[0]
    con.close()
    with PointsWriter(path, keep_existing=True) as writer:     # evaluate.py's incremental path
        writer.drop_eval(eid)
    assert indexes(path) == WANTED
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT count(*) FROM points").fetchone()[0] == before - 20
    con.close()


def test_the_id_look_up_is_an_index_scan(tmp_path):
    path = write_synth_db(tmp_path / "s.db", evals=2, tasks=2, points_per_task=10, samples=4)
    con = duckdb.connect(str(path), read_only=True)
    point_id = con.execute("SELECT max(id) FROM points").fetchone()[0]
    plan = con.execute("EXPLAIN ANALYZE SELECT * FROM points WHERE id = ?", [point_id]).fetchall()[0][1]
    con.close()
    assert "Index Scan" in plan
