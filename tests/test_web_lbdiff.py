"""The leaderboard's difference view (two evals A and B, B - A per cell), without a browser.

A PointsDB with hand-chosen per-sample outcomes (tests/support/paired_db.py) makes the
expected view known before the code runs: B wins every easy arithmetic sample A loses, A
wins the medium ones, both answer boolean identically. The callback is driven through Dash's
own HTTP endpoint (the request the browser sends), and the explorer link it writes is read
back by the explorer's URL parser.
"""
from __future__ import annotations

import json

import pytest

from resolver.analysis import tier_name
from resolver.web import lbdiff, theme
from tests.support.paired_db import write_paired_db

SAMPLES = 16


def _point(task, params, degree, outcomes):
    return {"base_task": task, "params": params, "degree": degree, "outcomes": outcomes}


def _correct(k):
    """k correct samples (code 0) then wrong ones (code 1)."""
    return [0] * k + [1] * (SAMPLES - k)


def _design():
    easy = [{"length": 4, "depth": 1}, {"length": 8, "depth": 1}, {"length": 4, "depth": 2}, {"length": 8, "depth": 2}]
    medium = [{"length": 4, "depth": 3}, {"length": 8, "depth": 3}, {"length": 4, "depth": 4}, {"length": 8, "depth": 4}]
    booleans = [{"length": n, "depth": 1} for n in (4, 8, 12, 16)]
    same = [0, 1] * (SAMPLES // 2)
    # easy arithmetic: A right on 4 of 16 (0 of 16 at the first point, the largest difference), B on all
    a = [_point("arithmetic", p, 0, _correct(0 if i == 0 else 4)) for i, p in enumerate(easy)]
    b = [_point("arithmetic", p, 0, _correct(SAMPLES)) for p in easy]
    # medium arithmetic: A right on 12 of 16, B on none
    a += [_point("arithmetic", p, 1, _correct(12)) for p in medium]
    b += [_point("arithmetic", p, 1, _correct(0)) for p in medium]
    # boolean: the same answers, sample by sample; one more point A alone ran (never paired)
    a += [_point("boolean", p, 0, same) for p in booleans] + [_point("boolean", {"length": 20, "depth": 1}, 0, same)]
    b += [_point("boolean", p, 0, same) for p in booleans]
    return {("model-a", "t"): a, ("model-b", "t"): b}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(Flask test client, A's eval id, B's eval id, the explorer's Landscape) on the hand-made PointsDB."""
    from resolver.web.data import open_app_dataset
    from resolver.web.explorer_data import Landscape
    from resolver.web.leaderboard import build_app

    path = tmp_path_factory.mktemp("lbdiff") / "pointsdb-hand.db"
    ids = write_paired_db(path, _design())
    dataset, db = open_app_dataset(path)
    app = build_app(dataset, db, links={"explorer": "http://explorer.test/"})
    yield app.server.test_client(), ids[("model-a", "t")], ids[("model-b", "t")], Landscape(dataset, db)
    db.close()


def _diff_view(client, search: str) -> dict:
    """The difference callback as the browser calls it: POST /_dash-update-component."""
    return _diff_reply(client, search)["lb-diff"]["children"]


def _diff_reply(client, search: str, shown=None) -> dict:
    body = {"output": "..lb-diff.children...lb-diff-key.data..",
            "outputs": [{"id": "lb-diff", "property": "children"}, {"id": "lb-diff-key", "property": "data"}],
            "inputs": [{"id": "lb-url", "property": "search", "value": search}],
            "changedPropIds": ["lb-url.search"], "state": [{"id": "lb-diff-key", "property": "data", "value": shown}]}
    reply = client.post("/_dash-update-component", json=body)
    if reply.status_code == 204:             # Dash's answer when every output is no_update
        return {}
    assert reply.status_code == 200, reply.data[:300]
    return json.loads(reply.data)["response"]


def _find(node, ident):
    """The component with this id in a Dash component tree (JSON form)."""
    if isinstance(node, dict):
        if node.get("props", {}).get("id") == ident:
            return node
        return _find(node.get("props", {}).get("children"), ident)
    if isinstance(node, list):
        for child in node:
            found = _find(child, ident)
            if found is not None:
                return found
    return None


def _text(node) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, dict):
        return _text(node.get("props", {}).get("children"))
    if isinstance(node, list):
        return "".join(_text(c) for c in node)
    return ""


def test_cells_are_coloured_by_the_difference_and_decided_ones_framed(served):
    client, a, b, _ = served
    view = _diff_view(client, f"?a={a}&b={b}&mode=C_P")
    table = _find(view, "lb-diff-table")["props"]
    easy, medium = tier_name(0), tier_name(1)
    rows = {r["_tier"]: r for r in table["rowData"]}
    assert set(rows) == {easy, medium}
    # B wins every easy arithmetic sample A loses: decided for B; the medium ones go to A; boolean is a tie
    assert rows[easy]["arithmetic"].startswith("B +") and rows[medium]["arithmetic"].startswith("A -")
    assert rows[easy]["boolean"].startswith("+.00\n[")
    assert rows[medium]["boolean"] == "—"                        # nobody ran medium boolean
    cell = {(t, g): rows[t]["_style"][g] for t in (easy, medium) for g in ("arithmetic", "boolean")}
    # The easy arithmetic difference is the largest in size: the darkest blue of the scale; the tie is its white.
    assert cell[(easy, "arithmetic")]["backgroundColor"] == theme.diff_colour(1.0, 1.0) == "rgb(5, 48, 97)"
    assert cell[(easy, "boolean")]["backgroundColor"] == theme.diff_colour(0.0, 1.0) == "rgb(247, 247, 247)"
    red, green, blue = (int(v) for v in cell[(medium, "arithmetic")]["backgroundColor"][4:-1].split(","))
    assert red > 2 * max(green, blue)                                           # a red: A better
    assert cell[(easy, "arithmetic")].get("border") == lbdiff.DECIDED_BORDER
    assert cell[(medium, "arithmetic")].get("border") == lbdiff.DECIDED_BORDER
    assert "border" not in cell[(easy, "boolean")]
    overall = _find(view, "lb-diff-overall")
    assert overall["props"]["data-verdict"] in ("a", "b", "none") and "mode C_P" in _text(overall)
    # A's extra boolean point is counted and left out, never paired
    notes = _text(view)
    assert f"A {SAMPLES} samples on 1 point, B 0 samples on 0 points" in notes


def test_explorer_link_opens_the_point_of_largest_difference(served):
    from resolver.web.explorer import state_update

    client, a, b, land = served
    view = _diff_view(client, f"?a={a}&b={b}&mode=C_P")
    href = _find(view, "lb-diff-explorer")["props"]["href"]
    assert href.startswith("http://explorer.test/?")
    # The explorer's own URL parser restores: arithmetic, both evals, B's point at length 4, depth 1 (easy entry m0)
    out = state_update(land, "ex-url", [], "?" + href.split("?", 1)[1], None, None, None, None, None, None)
    task, _, ident, _, manifold, mode, evals, current, point, _ = out
    assert task == "arithmetic" and set(land.view(ident).dims) == {"params.length", "params.depth"}
    assert evals == [a, b] and mode == "C_P" and manifold == "m0"
    assert point == {"eval": b, "coords": {"params.length": 4, "params.depth": 1}}


def test_url_carries_the_two_evals_and_drops_unknown_ones(served):
    from resolver.analysis.leaderboard_scores import Board
    from resolver.web.leaderboard import state_from_url, state_to_url

    client, a, b, land = served
    board = Board(land.db.db)
    state = state_from_url(board, f"?a={a}&b={b}&mode=C_P", [])
    assert (state["a"], state["b"], state["mode"]) == (a, b, "C_P")
    assert state_to_url(state) == f"?mode=C_P&a={a}&b={b}"
    assert state_from_url(board, f"?a=nosuch&b={b}", [])["a"] is None
    assert _diff_view(client, f"?b={b}") is None                         # one eval: no difference view
    same = _text(_diff_view(client, f"?a={a}&b={a}"))
    assert "choose two different ones" in same


def test_paging_does_not_redraw_the_view(served):
    client, a, b, _ = served
    first = _diff_reply(client, f"?a={a}&b={b}")
    key = first["lb-diff-key"]["data"]
    assert _diff_reply(client, f"?a={a}&b={b}&page=2&q=model", key) == {}            # nothing resent
    again = _diff_reply(client, f"?a={a}&b={b}&mode=C_P", key)                       # a new mode: redrawn
    assert "mode C_P" in _text(_find(again["lb-diff"]["children"], "lb-diff-overall"))


def test_signed_two_decimal_text():
    assert lbdiff.signed(0.123) == "+.12" and lbdiff.signed(-0.05) == "-.05" and lbdiff.signed(1.0) == "+1.00"
    assert theme.diff_limit([0.01, -0.02]) == theme.DIFF_MIN_LIMIT and theme.diff_limit([0.3, -0.4]) == 0.4
