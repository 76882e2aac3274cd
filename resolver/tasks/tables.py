"""tables: answer a filter / aggregate question about a rendered table.

A product table (`num_rows` rows, `num_cols` columns including the product name)
is rendered as markdown, csv, tsv, json, jsonl or html. The question filters the
rows (by a category, or by a numeric threshold, "greater than" or "less than", when
the table has no category column) and counts, sums, or takes the maximum / minimum;
`lookup` reads one cell. v2: a filter that keeps every row, or a max / min that
equals the whole table's, is redrawn; max / min ask about a wide-range column; a
threshold never sits right next to the answer; `guess_chance` is the best constant
answer's rate (counts over a few rows cluster).
Every answer is an integer. Difficulty grows with rows (more to scan and add up)
and columns (more distracting fields per row); `num_rows` is the size parameter
that calibration searches to hit a prompt-length target.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass

from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.guess import DRAWS, mode_rate
from resolver.tasks.vocab import load_json

FORMATS = ("markdown", "csv", "tsv", "json", "jsonl", "html")
OPERATIONS = ("count", "sum", "max", "min", "lookup")
MAX_ROWS = 3000


@dataclass(frozen=True, slots=True, kw_only=True)
class TablesParams:
    num_rows: int = param(10, low=1, high=MAX_ROWS, doc="table rows")
    num_cols: int = param(4, low=2, high=13, doc="columns including the product name")
    format: str = param("markdown", choices=FORMATS, doc="how the table is written")
    operation: str = param("count", choices=OPERATIONS, doc="what the question asks")


def _product_names(count: int, rng: random.Random) -> list[str]:
    key = load_json("tables.json")["key"]
    first, second = key["first"], key["second"]
    space = len(first) * len(second) * 9
    names = []
    for code in rng.sample(range(space), count):
        code, model = divmod(code, 9)
        a, b = divmod(code, len(second))
        names.append(f"{first[a]} {second[b]} {model + 1}")
    return names


def _columns(num_cols: int, rng: random.Random) -> list[dict]:
    """num_cols - 1 value columns, at least one numeric with a wide range, in random order."""
    defs = load_json("tables.json")["columns"]
    chosen = rng.sample(defs, num_cols - 1)
    if not any(_wide(c) for c in chosen):
        wide = [c for c in defs if _wide(c) and c not in chosen]
        chosen[rng.randrange(len(chosen))] = rng.choice(wide)
    return chosen


def _wide(column: dict) -> bool:
    """A numeric column with a wide range (price, stock, ...): maxima and minima over a
    filtered selection are then rarely the whole table's."""
    return column["kind"] == "number" and column["high"] - column["low"] >= 100


def _rows(names: list[str], columns: list[dict], rng: random.Random) -> list[list]:
    """One row per product; each cell is one rng.random() draw (the hot loop of
    generation: a tables-16k prompt holds thousands of cells)."""
    rand = rng.random
    makers = [(c["low"], c["high"] - c["low"] + 1, None) if c["kind"] == "number"
              else (0, len(c["values"]), c["values"]) for c in columns]
    rows = []
    for name in names:
        row: list[str | int] = [name]
        for low, span, values in makers:
            index = int(rand() * span)
            row.append(values[index] if values else low + index)
        rows.append(row)
    return rows


def render_table(header: list[str], rows: list[list], fmt: str) -> str:
    if fmt == "markdown":
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
        return "\n".join(lines)
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        return "\n".join(sep.join(map(str, r)) for r in [header] + rows)
    if fmt in ("json", "jsonl"):
        objects = [json.dumps(dict(zip(header, r))) for r in rows]
        return "\n".join(objects) if fmt == "jsonl" else "[\n" + ",\n".join(objects) + "\n]"
    head = "<tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr>"
    body = ["<tr>" + "".join(f"<td>{v}</td>" for v in r) + "</tr>" for r in rows]
    return "<table>\n" + "\n".join([head] + body) + "\n</table>"


def _threshold(column_values: list[int], pivot: int, above: bool, rng: random.Random) -> int:
    """A threshold that keeps exactly the rows on the pivot's side ("greater than T"
    keeps values >= pivot, "less than T" values <= pivot), drawn anywhere in the gap
    next to the pivot, so the kept extreme is not simply T + 1 or T - 1."""
    if above:
        below = [v for v in column_values if v < pivot]
        floor = max(below) if below else pivot - 1 - rng.randint(0, 9)
        return rng.randint(floor, pivot - 1)
    over = [v for v in column_values if v > pivot]
    ceiling = min(over) if over else pivot + 1 + rng.randint(0, 9)
    return rng.randint(pivot + 1, ceiling)


def _draw_question(op: str, header: list[str], rows: list[list], columns: list[dict],
                   rng: random.Random) -> tuple[str, int, str, list[list], int]:
    """(question text, answer, filter kind, kept rows, value column) for one operation."""
    numeric = [i + 1 for i, c in enumerate(columns) if c["kind"] == "number"]
    category = [i + 1 for i, c in enumerate(columns) if c["kind"] == "category"]
    wide = [i + 1 for i, c in enumerate(columns) if _wide(c)]
    value_col = rng.choice(wide if op in ("max", "min") else numeric)
    if op == "lookup":
        row = rng.choice(rows)
        return f"What is the {header[value_col]} of {row[0]}?", row[value_col], "none", [row], value_col
    pivot = rng.choice(rows)  # filter on a value that occurs, so the selection is never empty
    if category:
        col = rng.choice(category)
        where = f"whose {header[col]} is {pivot[col]}"
        chosen = [r for r in rows if r[col] == pivot[col]]
        kind = "category"
    else:
        # filter on another numeric column where there is one: "the lowest price among
        # products whose price is greater than T" would give the answer away
        col = rng.choice([c for c in numeric if c != value_col] or [value_col])
        above = rng.random() < 0.5
        threshold = _threshold([r[col] for r in rows], pivot[col], above, rng)
        where = f"whose {header[col]} is {'greater' if above else 'less'} than {threshold}"
        chosen = [r for r in rows if (r[col] > threshold if above else r[col] < threshold)]
        kind = "threshold"
    values = [r[value_col] for r in chosen]
    if op == "count":
        return f"How many products are there {where}?", len(chosen), kind, chosen, value_col
    if op == "sum":
        return f"What is the total {header[value_col]} of the products {where}?", sum(values), kind, chosen, value_col
    word = "highest" if op == "max" else "lowest"
    answer = max(values) if op == "max" else min(values)
    return f"What is the {word} {header[value_col]} among the products {where}?", answer, kind, chosen, value_col


def _degenerate(op: str, answer: int, chosen: list[list], rows: list[list], value_col: int) -> bool:
    """A filter that keeps every row, or a max / min whose filter does not matter
    (the answer is the whole table's extreme of that column)."""
    if op == "lookup":
        return False
    if len(chosen) == len(rows):
        return True
    if op in ("max", "min"):
        column = [r[value_col] for r in rows]
        return answer == (max(column) if op == "max" else min(column))
    return False


_TRIES = 40


def _question(op: str, header: list[str], rows: list[list], columns: list[dict],
              rng: random.Random) -> tuple[str, int, str, int, int]:
    """A question whose filter matters: degenerate draws are redrawn (up to _TRIES
    times; a table where no filter can matter, e.g. one row, keeps the last draw)."""
    for attempt in range(_TRIES):
        question, answer, kind, chosen, value_col = _draw_question(op, header, rows, columns, rng)
        if not _degenerate(op, answer, chosen, rows, value_col):
            return question, answer, kind, attempt, value_col
    return question, answer, kind, _TRIES, value_col


def _problem(p: TablesParams, rng: random.Random) -> tuple[list[str], list[list], tuple[str, int, str, int, int]]:
    columns = _columns(p.num_cols, rng)
    header = ["product"] + [c["name"] for c in columns]
    rows = _rows(_product_names(p.num_rows, rng), columns, rng)
    return header, rows, _question(p.operation, header, rows, columns, rng)


def _pick_chance(op: str, rows: list, value_col: int) -> float:
    """A lookup, max or min answer is one of the asked column's values, all in plain
    sight: picking one at random (never the table's own extreme for max / min, which
    the question excludes) is a question-blind strategy too."""
    if op not in ("lookup", "max", "min"):
        return 0.0
    values = len({r[value_col] for r in rows})
    return 1 / max(1, values - (op != "lookup"))


def honest_guess(p: TablesParams) -> float:
    """The best constant answer's rate at these parameters (counts of a few rows and
    lookups of a 1..5 rating cluster). Estimated from draws of the answer alone; big
    tables get fewer draws (their answers are spread out, so the rate is small)."""
    draws = max(200, min(DRAWS, 200_000 // (p.num_rows * p.num_cols)))
    return mode_rate("tables", p, lambda q, r: _problem(q, r)[2][1], draws)


@register
class Tables(Task[TablesParams]):
    name = "tables"
    answer_kind = "number"
    description = "Answer the question about the table. Read every row that matters."
    answer_format = "Final Answer: <number>"
    version = 2  # v2: degenerate filters redrawn, thresholds that do not leak, honest guess_chance
    Params = TablesParams

    def generate(self, p: TablesParams, rng: random.Random) -> TestCase:
        header, rows, (question, answer, filter_kind, redraws, value_col) = _problem(p, rng)
        table = render_table(header, rows, p.format)
        return TestCase(
            input=f"Here is a table of products ({p.format}):\n\n{table}\n\n{question}",
            target=str(answer),
            guess_chance=max(honest_guess(p), _pick_chance(p.operation, rows, value_col)),
            genresult={"operation": p.operation, "format": p.format,
                       "filter": filter_kind, "columns": header, "redraws": redraws},
        )
