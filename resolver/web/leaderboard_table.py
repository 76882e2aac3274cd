"""The leaderboard's table: rows of a view state, the grid's rows and columns, and the downloads.

Numbers come from the Board (resolver.analysis.scores for the ReasonScore and its E_I
cells; resolver.stats.add_statistics for the other modes); this module only selects,
sorts, formats and colours them. A cell's colour and its column sort follow the cell's
ranking score (adjusted score = center + margin − truncation, the number ReasonScore
multiplies) in the ReasonScore mode, and the mode's interval center in the other modes.
"""
from __future__ import annotations

import csv
import io
import json
import math
from typing import TYPE_CHECKING, Any, TypedDict

from resolver.analysis import (
    NO_SKILL_MARK,
    NO_SKILL_NOTE,
    LeaderboardExport,
    LeaderboardRow,
    describe as describe_reasons,
    scores,
    skilled_first_key,
    to_plain,
)
from resolver.analysis.leaderboard_scores import Board, best_values, rows_for
from resolver.stats import MODE_DESCRIPTIONS
from resolver.web import grid, theme, urlstate
from resolver.web.data import eval_matches_facets
from resolver.web.ids import LB
from resolver.web.server import DEFAULT_LINK_PORTS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dash import html
    from dash_ag_grid import AgGrid



class ViewState(TypedDict):
    """What the leaderboard shows, all of it in the URL (leaderboard.state_from_url / state_to_url)."""

    q: str                                 # the search box
    tier: str                              # OVERALL or a tier name
    sort: str                              # "score" or "ratio"
    mode: str                              # the cells' statistics mode
    facets: dict[str, list[str]]           # facet key -> the values ticked
    manifolds: list[str]
    groups: list[str]
    sort_by: list[dict[str, str]]          # the clicked column: [{"column_id", "direction"}] or []
    page: int                              # from 0
    a: str | None                          # the two evals compared (lbdiff.py)
    b: str | None


class TableView(TypedDict):
    """What the table shows for a view state (leaderboard.table_update)."""

    page: int                              # the page shown (the state's, within range)
    pages: int
    data: list[dict]                       # the grid's rows
    columns: list                          # the grid's column definitions
    label: str                             # "page N of M · K evals"
    empty: html.Div | None                 # why the view has no rows, if it has none
    note: str                              # the tier and mode note above the table


PAGE_SIZE = 10
SCORE_MODE = "E_I"                   # the mode the ReasonScore's cells use (resolver.analysis.scores)
TRUNCATION_MARK_ABOVE = scores.TRUNCATION_SHOWN_ABOVE
HATCH = "repeating-linear-gradient(45deg, rgba(60,60,60,.30) 0 2px, transparent 2px 7px)"
BEST_BORDER = "3px solid #1f4e9c"
HELP = {
    "score": "ReasonScore: 1000 × the geometric mean over every (tier, group) cell of the cell's adjusted score "
             "(E_I center + margin − truncated share, floored at 0.01). * = some cell incomplete or missing.",
    "ratio": "Score/token: ReasonScore divided by the mean completion tokens (mean of the per-cell means): "
             "how much score each token buys.",
    "tokens": "Mean completion tokens per answer over the cells shown.",
    "grader": "Grader version(s) that graded this eval's answers (resolver.grading.answers.GRADER_VERSION).",
}


def datatable() -> AgGrid:
    """The ranking's grid (filled by the leaderboard's callback): rank and model pinned left."""
    return grid.table(LB.TABLE, "rs-lb-table")


def _matches_query(row: dict, query: str) -> bool:
    query = (query or "").strip().lower()
    if not query:
        return True
    haystack = " ".join([row["label"], str(row["model"]), row["eval_id"], *map(str, row["groups"])]).lower()
    return all(word in haystack for word in query.split())


def selected_rows(board: Board, state: ViewState) -> list:
    """Every row of a view state (all pages), ranked, then sorted by the clicked column if any."""
    manifolds = tuple(sorted(state["manifolds"]))
    view = board.view(manifolds, tuple(sorted(state["groups"])))
    evals = board.evals
    keep = {eval_id for eval_id, facets in zip(evals["eval_id"], evals["facets"]) if eval_matches_facets(facets, state["facets"])}
    rows = [r for r in rows_for(view, state["tier"], state["sort"], keep) if _matches_query(r, state["q"])]
    mode = state["mode"]
    others = board.mode_cells(manifolds, mode) if mode != SCORE_MODE else {}
    for row in rows:
        row["grader"] = board.grader_versions.get(row["eval_id"], "")
        row["shown"] = {}
        for group, task in row["cells"].items():
            if not task:
                row["shown"][group] = None
            elif mode == SCORE_MODE:
                row["shown"][group] = {"center": task["center"], "margin": task["margin"],
                                       "below_chance": bool(task.get("below_chance", False)),
                                       "colour_value": task["adjusted_score"]}
            else:
                value = others.get((row["eval_id"], state["tier"], str(group)))
                row["shown"][group] = None if value is None else {**value, "colour_value": value["center"]}
    for sort in state["sort_by"][:1]:
        rows = _sorted(rows, sort["column_id"], sort.get("direction") == "asc")
    return rows


def _sort_value(row: dict, column: str) -> Any:
    if column == "_rank":
        return row["rank"]
    if column == "_model":
        return row["label"].lower()
    if column in ("_score", "_tokens", "_ratio"):
        value = row[column[1:]]
        return value if _ok(value) else None
    if column == "_grader":
        return row["grader"] or None
    cell = next((c for g, c in row["shown"].items() if str(g) == column), None)
    return cell["colour_value"] if cell else None


RANKING_COLUMNS = ("_rank", "_score", "_ratio")


def _sorted(rows: list, column: str, ascending: bool) -> list:
    """Rows by one column; rows without a value stay at the bottom in either direction.

    Sorting a ranking column best-first keeps models without evidence of skill after the
    others, as every ranking does (docs/statistics.md, "Evidence of skill").
    """
    present = [r for r in rows if _sort_value(r, column) is not None]
    missing = [r for r in rows if _sort_value(r, column) is None]
    ranked = sorted(present, key=lambda r: _sort_value(r, column), reverse=not ascending)
    best_first = not ascending if column != "_rank" else ascending
    if column in RANKING_COLUMNS and best_first:
        ranked.sort(key=lambda r: skilled_first_key(r.get("skill", True)))    # stable: keeps the order within
    return ranked + missing


def _md(text: str) -> str:
    """Text safe inside the model cell's markdown (no markup, no HTML)."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for char in "\\`*_[]()#|":
        out = out.replace(char, "\\" + char)
    return out


def model_cell(row: dict, links: dict) -> str:
    base = {a: links.get(a) or f"http://localhost:{p}/" for a, p in DEFAULT_LINK_PORTS.items()}
    surfaces = urlstate.link(base["explorer"], evals=[row["eval_id"]])
    radar = urlstate.link(base["spiderweb"], evals=[row["eval_id"]])
    tags = ", ".join(map(str, row["groups"]))
    mark = "" if row.get("skill", True) else f" <span class='lb-no-skill'>{NO_SKILL_MARK}</span>"
    return (f"**{_md(row['label'])}**{mark}<br><span class='rs-tags'>{_md(row['eval_id'])}"
            f"{' · ' + _md(tags) if tags else ''}</span><br>"
            f"<a class='rs-link lb-explorer-link' href='{surfaces}'>surfaces</a> · "
            f"<a class='rs-link lb-spiderweb-link' href='{radar}'>radar</a>")


def cell_text(cell: dict | None, task: dict | None) -> str:
    if not cell:
        return scores.MISSING_CELL
    assert task is not None, "a cell is shown only for a task with points (selected_rows)"
    text = scores.format_cell(cell["center"], cell["margin"], task["truncated_ratio"], task["point_count"],
                              task["expected_points"], task["is_incomplete"], bool(cell.get("below_chance")))
    return text


def table_content(board: Board, shown: list, rows: list, columns: list, state: ViewState, links: dict) -> dict:
    """The grid's rows (values, per-cell styles and hover text) and column definitions for one page."""
    mode = state["mode"]
    best = best_values(rows)
    best_cells = {str(g): _max(r["shown"].get(g) and r["shown"][g]["colour_value"] for r in rows) for g in columns}
    data: list[dict] = []
    for row in shown:
        record = {"id": row["eval_id"], "_rank": row["rank"], "_model": model_cell(row, links),
                  "_score": scores.format_score(row["score"], row["incomplete"]),
                  "_tokens": scores.format_tokens(row["tokens"]), "_ratio": scores.format_ratio(row["ratio"]),
                  "_grader": row["grader"]}
        tips = {"_model": f"{row['model']} · eval_id {row['eval_id']}"
                          + ("" if row.get("skill", True) else f" · {NO_SKILL_NOTE}"),
                "_score": f"ReasonScore {row['score']:.2f}" + (" (* some cells incomplete or missing)"
                                                               if row["incomplete"] else "")}
        styles: dict[str, dict] = {}
        for key, value, is_best in (("_score", row["score"], row["score"] == best["score"]),
                                    ("_ratio", row["ratio"], row["ratio"] == best["ratio"]),
                                    ("_tokens", row["tokens"], row["tokens"] == best["tokens"])):
            if is_best and _ok(value):
                styles[key] = {"border": BEST_BORDER, "fontWeight": "700"}
        for group in columns:
            key, task, cell = str(group), row["cells"].get(group), row["shown"].get(group)
            record[key] = cell_text(cell, task)
            if not cell:
                styles[key] = {"backgroundColor": theme.MISSING_COLOUR, "color": "#6b7385"}
                tips[key] = f"{group}: no data"
                continue
            styles[key] = _cell_style(cell, task, cell["colour_value"] == best_cells.get(key))
            reasons = board.invalid_reasons(tuple(sorted(state["manifolds"]))).get((row["eval_id"], state["tier"], key))
            tips[key] = cell_hover(task, cell, group, state["tier"], board.group_by, mode, reasons)
        data.append({**record, grid.STYLE: styles, grid.TIP: tips})
    return {"data": data, "columns": _columns(board, columns, state)}


def _cell_style(cell: dict, task: dict, is_best: bool) -> dict:
    """A heat-map cell: coloured by its value, hatched when truncation passes the mark, framed when best."""
    background = theme.score_colour(cell["colour_value"])
    style: dict[str, object] = {"backgroundColor": background, "color": theme.text_colour_on(background)}
    if task["truncated_ratio"] > TRUNCATION_MARK_ABOVE:
        style["backgroundImage"] = HATCH
    if is_best:
        style.update(border=BEST_BORDER, fontWeight="700")
    return style


def _columns(board: Board, columns: list, state: ViewState) -> list:
    """Column definitions; the sorted column (state's sort_by) carries its direction."""
    mode = state["mode"]
    sort = {s["column_id"]: s.get("direction") for s in state["sort_by"][:1]}
    help_text = {"_score": HELP["score"], "_ratio": HELP["ratio"], "_tokens": HELP["tokens"],
                 "_grader": HELP["grader"], "_rank": "rank by the chosen ranking (click to sort)"}
    for group in columns:
        help_text[str(group)] = (f"{board.group_by} {group}: {mode} interval ({MODE_DESCRIPTIONS[mode]}); "
                                 "colour and sort: " + ("the cell's ranking score" if mode == SCORE_MODE
                                                        else f"the {mode} center"))
    # the first click puts the best first: rank 1, fewest tokens, model A-Z (the others: highest first)
    low_first: dict[str, object] = {"sortingOrder": ["asc", "desc", None]}
    fixed: list[tuple[str, str, dict[str, object]]] = [
        ("_rank", "#", {"pinned": "left", "minWidth": 52, "maxWidth": 60, **low_first}),
        ("_model", "Model", {"pinned": "left", "minWidth": 170, "maxWidth": 240, "cellRenderer": "markdown",
                             "autoHeight": True, "wrapText": True, "cellClass": "rs-model-cell", **low_first}),
        ("_score", "ReasonScore", {}), ("_tokens", "Avg tokens", low_first), ("_ratio", "Score/token", {})]
    if board.grader_versions:
        fixed.append(("_grader", "Grader", {}))
    return [grid.column(key, name, sortable=True, sort=sort.get(key), help=help_text.get(key), **extra)
            for key, name, extra in [*fixed, *((str(g), str(g), {}) for g in columns)]]


def cell_hover(task: dict, cell: dict, group: object, tier: str, group_by: str, mode: str, reasons: dict | None = None) -> str:
    """The full numbers of one cell, shown on hover; the mode is named first.

    `reasons`: the cell's invalid answers by reason (Board.invalid_reasons), so a format
    failure (no marker, placeholder) is told from a reasoning one (unfinished reasoning).
    """
    where = "all tiers pooled" if tier == "overall" else f"tier {tier}"
    expected = task["expected_points"]
    lines = [
        f"{group_by} {group} ({where})",
        f"{mode} accuracy {cell['center']:.4f} ± {cell['margin']:.4f} (95%)"
        + (" — below chance" if cell.get("below_chance") else ""),
        f"ranking score {task['adjusted_score']:.4f} = E_I center + margin - truncation",
        f"truncated {task['truncated_ratio']:.2%}, invalid {task.get('invalid_ratio', float('nan')):.2%}",
        f"samples {task.get('samples', float('nan')):.0f}: correct {task['correct']}, incorrect {task['incorrect']}, "
        f"invalid {task['invalid']}, truncated {task['truncated']}",
        f"invalid by reason: {describe_reasons(reasons)}" if reasons else "",
        f"points {task['point_count']}" + (f" of {expected} expected" if expected is not None else ""),
        f"mean completion tokens {task['completion_tokens_mean']:.0f}" if _ok(task["completion_tokens_mean"]) else "",
    ]
    return "\n".join(line for line in lines if line)


def _export_row(row: dict, mode: str) -> LeaderboardRow:
    """One row of the downloads (CSV and JSON)."""
    columns: dict[str, Any] = {}
    for group, task in row["cells"].items():
        cell = row["shown"].get(group)
        columns[f"{group} center"] = cell["center"] if cell else None
        columns[f"{group} margin"] = cell["margin"] if cell else None
        columns[f"{group} ranking_score"] = task["adjusted_score"] if task else None
        columns[f"{group} truncated_ratio"] = task["truncated_ratio"] if task else None
        columns[f"{group} below_chance"] = cell.get("below_chance", False) if cell else None
        columns[f"{group} points"] = task["point_count"] if task else None
    return LeaderboardRow(
        rank=row["rank"], label=row["label"], model=row["model"], eval_id=row["eval_id"],
        groups=" ".join(map(str, row["groups"])), reasonscore=row["score"], incomplete=row["incomplete"],
        completion_tokens_mean=row["tokens"], score_per_token=row["ratio"], grader_version=row["grader"], mode=mode,
        skill_evidence=row.get("skill", True), **to_plain(columns))


def export_csv(board: Board, rows: list, state: ViewState) -> str:
    records = [_export_row(r, state["mode"]).model_dump() for r in rows]
    names = list(dict.fromkeys(k for r in records for k in r))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=names)
    writer.writeheader()
    for record in records:
        writer.writerow({k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                         for k, v in record.items()})
    return out.getvalue()


def export_json(board: Board, rows: list, state: ViewState) -> str:
    export = LeaderboardExport(tier=state["tier"], mode=state["mode"], group_by=board.group_by,
                               rows=[_export_row(r, state["mode"]) for r in rows])
    # the model's dump, NaN as null, written as the download always was (indent 1, ASCII)
    dumped = export.model_dump(mode="json", exclude_unset=True)
    return json.dumps(to_plain(dumped, finite=True), indent=1)


def _ok(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _max(values: Iterable[Any]) -> float | None:
    values = [v for v in values if _ok(v) and v is not False]
    return max(values) if values else None
