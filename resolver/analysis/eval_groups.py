"""Evals' group tags (evals.json ``groups``: ``family:llama``, ``size:large``, ...) laid
out as table columns, one per tag key, so a ranking shows who is compared with whom."""
from __future__ import annotations

from typing import Iterable

from resolver.core import markdown_table

MISSING = "—"
# The keys evals.json usually carries come first, in this order; any other key follows alphabetically.
KEY_ORDER = ("family", "size", "arch", "runtime", "quant")
PLAIN = "other"          # the column for tags without a key (no ':')


def split_tag(tag: str) -> tuple:
    """'size:large' -> ('size', 'large'); a tag without ':' belongs to the 'other' column."""
    key, sep, value = str(tag).partition(":")
    return (key.strip(), value.strip()) if sep else (PLAIN, key.strip())


def group_keys(group_lists: Iterable[Iterable[str] | None]) -> list:
    """The tag keys used by any of the evals, in display order."""
    keys = {split_tag(tag)[0] for groups in group_lists for tag in groups or ()}
    known = [k for k in KEY_ORDER if k in keys]
    rest = sorted(k for k in keys if k not in KEY_ORDER and k != PLAIN)
    return known + rest + ([PLAIN] if PLAIN in keys else [])


def group_cells(groups: Iterable[str] | None, keys: list) -> list:
    """One cell per key: the eval's values for it joined by ', ', or — when it has none."""
    values: dict = {}
    for tag in groups or ():
        key, value = split_tag(tag)
        values.setdefault(key, []).append(value)
    return [", ".join(values[k]) if k in values else MISSING for k in keys]


def models_markdown(results: list) -> str:
    """The '## Models' section of the scores markdown: rank, model, eval_id, template,
    sampler and one column per group key, in the ranking's order (same data as the JSON)."""
    keys = group_keys(entry.get("groups") for entry in results)
    rows = [[entry.get("rank", ""), entry["label"], entry["eval_id"], entry.get("template") or MISSING,
             entry.get("sampler") or MISSING] + group_cells(entry.get("groups"), keys) for entry in results]
    headers = ["Rank", "Model", "eval_id", "Template", "Sampler"] + keys
    return "## Models\n\n" + markdown_table(rows, headers, ["r"] + ["l"] * (len(headers) - 1))
