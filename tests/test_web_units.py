"""Small pieces of the web apps, checked without a browser: URL state, cell text with the optional
fields other work adds (below_chance, grader_version), group labels, server host names."""
from __future__ import annotations

import duckdb
import pandas as pd

from resolver.analysis.leaderboard_scores import grader_versions
from resolver.web import leaderboard_table, urlstate
from resolver.web.spiderweb import group_label

TASK = {"truncated_ratio": 0.0, "point_count": 4, "expected_points": 4, "is_incomplete": False}


def test_url_state_round_trip_and_defaults():
    text = urlstate.encode({"tier": "hard", "group": ["a", "b c"], "q": "", "mode": "E_I"}, {"mode": "E_I"})
    assert text == "?tier=hard&group=a&group=b+c"
    state = urlstate.parse(text)
    assert urlstate.first(state, "tier") == "hard" and urlstate.many(state, "group") == ["a", "b c"]
    assert urlstate.first(state, "tier", "overall", {"easy", "medium"}) == "overall"    # invalid -> default
    assert urlstate.encode({}) == "" and urlstate.link("http://h/", evals=["x"]) == "http://h/?evals=x"


def test_cell_text_marks_below_chance_only_when_flagged():
    plain = {"center": 0.0, "margin": 0.05}
    assert leaderboard_table.cell_text(plain, TASK) == ".00 - .05"
    # the same text as analyze.py scores markdown: the flag replaces the numbers (docs/decisions.md)
    assert leaderboard_table.cell_text({**plain, "below_chance": True}, TASK) == "≤ chance"
    assert leaderboard_table.cell_text(None, None) == "—"


def test_model_cell_escapes_markup_and_links_both_apps():
    row = {"label": "a*b <script>", "eval_id": "1e5", "groups": ["family:x"], "model": "m"}
    cell = leaderboard_table.model_cell(row, {"explorer": "http://e:1/", "spiderweb": "http://s:2/"})
    assert "<script>" not in cell and "a\\*b &lt;script&gt;" in cell
    assert "href='http://e:1/?evals=1e5'" in cell and "href='http://s:2/?evals=1e5'" in cell


class _DB:
    """A real DuckDB database holding a points table, behind PointsDB's query(sql) signature."""

    def __init__(self, frame: pd.DataFrame):
        self.con = duckdb.connect()
        self.con.register("frame", frame)
        self.con.execute("CREATE TABLE points AS SELECT * FROM frame")

    def query(self, sql, params=None):
        return self.con.execute(sql, params or []).df()


def test_grader_versions_when_the_column_exists():
    db = _DB(pd.DataFrame({"eval_id": ["a", "a", "b", "c"], "grader_version": [1, 2, 2, None]}))
    assert grader_versions(db) == {"a": "v1-v2", "b": "v2"}
    assert grader_versions(_DB(pd.DataFrame({"eval_id": ["a"]}))) == {}     # older DBs: no column, no Grader


def test_group_labels_are_integers_when_whole():
    assert [group_label(v) for v in (3.0, 4, 2.5, "add", 12.0)] == ["3", "4", "2.5", "add", "12"]


def test_ranking_header_sorts_keep_models_without_skill_last():
    """Clicking Score or Score/Token (best first) orders by skill evidence first, as every ranking does;
    other columns, and the reverse direction, sort by value alone."""
    from resolver.web.leaderboard_table import _sorted

    rows = [
        {"eval_id": "skilled-long", "rank": 1, "score": 0.80, "ratio": 0.5, "tokens": 1600, "skill": True},
        {"eval_id": "guesser-short", "rank": 3, "score": 0.28, "ratio": 3.4, "tokens": 34, "skill": False},
        {"eval_id": "skilled-mid", "rank": 2, "score": 0.55, "ratio": 0.9, "tokens": 600, "skill": True},
    ]
    ids = lambda out: [r["eval_id"] for r in out]   # noqa: E731
    assert ids(_sorted(rows, "_ratio", ascending=False)) == ["skilled-mid", "skilled-long", "guesser-short"]
    assert ids(_sorted(rows, "_score", ascending=False)) == ["skilled-long", "skilled-mid", "guesser-short"]
    assert ids(_sorted(rows, "_rank", ascending=True)) == ["skilled-long", "skilled-mid", "guesser-short"]
    assert ids(_sorted(rows, "_ratio", ascending=True)) == ["skilled-long", "skilled-mid", "guesser-short"]
    assert ids(_sorted(rows, "_tokens", ascending=True)) == ["guesser-short", "skilled-mid", "skilled-long"]
