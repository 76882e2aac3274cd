"""The web apps' tables on dash-ag-grid (Dash deprecates its built-in DataTable; docs/webapps.md, "Tables").

Each row carries, beside the values it shows, ``STYLE`` (column id -> CSS of that cell: heat-map
colour, hatch, frame) and ``TIP`` (column id -> the text shown when the mouse rests on the cell);
every column reads both. Sorting is the server's, over every row of the view and not only the page
shown, so the grid never reorders rows itself: a header click only reports the column and its
direction (the grid's ``columnState``), and the sorted column comes back in ``columnDefs``.
"""
from __future__ import annotations

from typing import Any

from dash_ag_grid import AgGrid

STYLE = "_style"
TIP = "_tip"
SORT_ORDER = ["desc", "asc", None]      # a header click: best first, then the reverse, then the ranking
# Per-cell style and hover text, looked up in the row by the column's id (a dash-ag-grid function string).
_CELL_STYLE = {"function": f"(params.data && params.data.{STYLE} && params.data.{STYLE}[params.colDef.field]) || null"}
_CELL_TIP = {"function": f"(params.data && params.data.{TIP} && params.data.{TIP}[params.colDef.field]) || null"}
_KEEP_ORDER = {"function": "rsKeepOrder"}   # assets/rs.js: every pair of rows compares equal (a stable sort)


def table(ident: str, class_name: str = "", **grid: Any) -> AgGrid:
    """An empty grid sized to its rows: no client-side sorting, every column rendered (none virtualised)."""
    options = {"domLayout": "autoHeight", "suppressColumnVirtualisation": True, "ensureDomOrder": True,
               "suppressFieldDotNotation": True, "tooltipShowDelay": 300, "tooltipHideDelay": 600_000,
               "suppressCellFocus": True, "sortingOrder": SORT_ORDER, "animateRows": False,
               "suppressMovableColumns": True, "enableCellTextSelection": True}
    return AgGrid(id=ident, rowData=[], columnDefs=[], className=f"rs-ag {class_name}".strip(),
                  style={"height": None, "width": "100%"}, dashGridOptions=options,
                  defaultColDef={"sortable": False, "resizable": True, "cellStyle": _CELL_STYLE,
                                 "tooltipValueGetter": _CELL_TIP, "minWidth": 84, "flex": 1,
                                 "comparator": _KEEP_ORDER, "suppressHeaderMenuButton": True},
                  dangerously_allow_code=True, **grid)


def column(ident: str, name: str, *, sortable: bool = False, sort: str | None = None, help: str | None = None,
           **options: Any) -> dict:
    """One column definition: `ident` is the row field, `name` the header, `help` the header's hover text.

    A sortable column always states its sort (None included), so a new set of columns clears an old arrow.
    """
    out: dict[str, Any] = {"field": ident, "colId": ident, "headerName": name, **options}
    if sortable:
        out.update(sortable=True, sort=sort)
    if help:
        out["headerTooltip"] = help
    return out


def sort_from_state(column_state: list[Any] | None) -> list:
    """[{"column_id", "direction"}] of the column the visitor sorted by (empty when none) from `columnState`."""
    sorted_columns = [c for c in column_state or [] if isinstance(c, dict) and c.get("sort") in ("asc", "desc")]
    sorted_columns.sort(key=lambda c: c.get("sortIndex") or 0)
    return [{"column_id": c["colId"], "direction": c["sort"]} for c in sorted_columns[:1]]
