"""One cell, one number (docs/decisions.md): the same (eval, task, tier) cell read through
analyze.py scores' JSON (a real subprocess), resolver.analysis.cell.cell_value and the
functions the web apps call (leaderboard Board, spiderweb table, explorer Landscape)
gives the same interval in every mode; an old PointsDB without guess_sum_all still
reads, with the documented fallback."""
import json
import shutil

import duckdb
import pytest
from conftest import run_script
from test_analyze_fixture import cell_counts, hand_dataset, model_eval_id

from resolver.analysis.cell import cell_value, format_value, mode_label
from resolver.analysis.spiderweb import spiderweb_table
from resolver.catalog.datasets import load_dataset
from resolver.pointsdb.reader import open_pointsdb
from resolver.stats import estimates as stats

CELLS = [("Beta", "boolean", "easy", 0), ("Beta", "arithmetic", "medium", 1), ("Delta", "boolean", "medium", 1)]
FIELDS = ("center", "margin", "low", "high")


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    return hand_dataset(tmp_path_factory, "views")


@pytest.fixture(scope="module")
def db(hand):
    pdb = open_pointsdb(load_dataset(hand).db_path)
    yield pdb
    pdb.close()


@pytest.fixture(scope="module")
def scores_json(hand):
    proc = run_script("analyze.py", "scores", hand, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return {e["eval_id"]: e for e in json.loads(proc.stdout)}


@pytest.fixture(scope="module")
def board_view(db):
    """The leaderboard's Board (resolver/analysis/leaderboard_scores.py) over all manifolds and
    groups: one view holds every cell in every mode, built once for the cases below."""
    from resolver.analysis.leaderboard_scores import Board

    return Board(db).view((), ())


@pytest.fixture(scope="module")
def web_tables(db):
    """The spiderweb's table (resolver/web/spiderweb.py builds it the same way) of one tier in one
    mode, built once per (degree, mode): two of the cells below share a tier."""
    tables = {}

    def table(degree: int, mode: str):
        if (degree, mode) not in tables:
            tables[degree, mode] = spiderweb_table(db, {"manifold.degree": [degree]}, mode=mode)
        return tables[degree, mode]
    return table


def same(a: dict, b: dict):
    for name in FIELDS:
        assert a[name] == pytest.approx(b[name], abs=1e-12), name
    assert bool(a["below_chance"]) == bool(b["below_chance"])


@pytest.mark.parametrize("model,task,tier,degree", CELLS)
@pytest.mark.parametrize("mode", stats.MODES)
def test_scores_json_cell_value_and_web_paths_agree(db, scores_json, board_view, web_tables, model, task, tier,
                                                   degree, mode):
    eval_id = model_eval_id(model)
    published = scores_json[eval_id]["tiers"][tier]["tasks"][task]["modes"][mode]
    direct = cell_value(db, eval_id, task, tier, mode)
    same(published, direct)
    # the leaderboard's Board over all manifolds and groups
    entry = [e for e in board_view.results if e["eval_id"] == eval_id][0]
    same(entry["tiers"][tier]["tasks"][task]["modes"][mode], direct)
    # the spiderweb's table for this tier
    web = web_tables(degree, mode)
    row = web[(web["eval_id"] == eval_id) & (web["group"] == task)].iloc[0]
    same(row.to_dict(), direct)
    assert row["mode"] == mode
    # and the hand counts behind it: samples of the cell
    c, x, v, t, _, _ = cell_counts(model, task, degree)
    assert direct["samples"] == c + x + v + t


def test_explorer_projection_agrees_with_cell_value(hand, db):
    from resolver.web.explorer_data import MODE, Landscape

    land = Landscape(load_dataset(hand), db)
    table = land.view_projection("arithmetic/length", "params.length")
    for record in table.to_dict("records"):
        direct = cell_value(db, record["eval_id"], "arithmetic", None, MODE,
                            filters={"params.length": [int(record["params.length"])]})
        same(record, direct)


def test_format_value_names_below_chance_and_mode():
    assert format_value({"center": 0.0, "margin": 0.0, "below_chance": True}) == "≤ chance"
    assert format_value({"center": 0.1234, "margin": 0.05, "below_chance": False}) == "0.123 ± 0.050"
    assert mode_label("C_P") == "C_P: (1 - tau) * s, 95% interval"


def test_old_pointsdb_without_guess_sum_all_falls_back(hand, db, tmp_path):
    old = tmp_path / "old.db"
    shutil.copyfile(load_dataset(hand).db_path, old)
    con = duckdb.connect(str(old))
    con.execute("ALTER TABLE points DROP COLUMN guess_sum_all")
    con.close()
    with open_pointsdb(old) as legacy:
        agg = legacy.aggregate(None, by=("eval_id", "base_task"))
        assert agg["guess_sum_all"].isna().all()
        frame = stats.add_statistics(agg, "E_P")
        # fallback G_all = G n / m, here exact: every sample of a point has the same chance
        new = stats.add_statistics(db.aggregate(None, by=("eval_id", "base_task")), "E_P")
        assert frame["center"].to_numpy() == pytest.approx(new["center"].to_numpy(), abs=1e-12)
        points = legacy.points(None, columns=["id", "guess_sum_all"])
        assert points["guess_sum_all"].isna().all()
