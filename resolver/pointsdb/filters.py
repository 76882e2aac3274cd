"""The filter and dimension syntax every reader accepts (--filters JSON, group-by names),
always compiled to SQL with bound parameters (docs/pointsdb.md).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from resolver.core import UserError
from resolver.pointsdb.schema import EVAL_COLUMNS

# Dimensions: plain identity columns and dotted paths into the three JSON columns.
PLAIN_DIMENSIONS = ("eval_id", "model", "template", "sampler", "base_task", "task")


JSON_PREFIXES = ("params", "manifold", "facets")


_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def validate_dimension(name: object) -> str:
    """Check a group/facet/split dimension and return it unchanged.

    Valid: eval_id, model, template, sampler, base_task, task, or params.<key>,
    manifold.<key>, facets.<key>. ('none' is handled by callers.)
    """
    if not isinstance(name, str):
        raise UserError(f"dimension must be a string, got {name!r}")
    if name in PLAIN_DIMENSIONS:
        return name
    prefix, dot, key = name.partition(".")
    if dot and prefix in JSON_PREFIXES and _KEY_RE.match(key):
        return name
    raise UserError(
        f"unknown dimension '{_shown(name)}'; valid: {', '.join(PLAIN_DIMENSIONS)}, "
        f"params.<key>, manifold.<key>, facets.<key>")


def dimension_sql(name: str) -> tuple:
    """(SQL expression, bound parameters) for a validated dimension."""
    name = validate_dimension(name)
    if name in PLAIN_DIMENSIONS:
        return f'"{name}"', []
    prefix, _, key = name.partition(".")
    return f"json_extract_string({prefix}, ?)", [f'$."{key}"']


FILTER_KEYS = ("eval_id", "base_task", "groups", "model", "template", "sampler", "task")


def _shown(text: str) -> str:
    """A user-supplied name made safe for a one-line message (newlines escaped)."""
    return json.dumps(str(text), ensure_ascii=False)[1:-1]


def _scalar_text(value: object) -> str:
    """How a filter value compares with json_extract_string: strings raw, others as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _value_list(key: str, value: object) -> list:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise UserError(f"filter '{_shown(key)}' has an empty list; give at least one value")
    for v in values:
        if isinstance(v, (dict, list)) or v is None:
            raise UserError(f"filter '{_shown(key)}' values must be strings or numbers, got {json.dumps(v)[:80]}")
        if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
            raise UserError(f"filter '{_shown(key)}' value has {len(str(abs(v)))} digits; numbers must fit "
                            f"in 64 bits")
        if isinstance(v, float) and v != v or isinstance(v, float) and abs(v) == float("inf"):
            raise UserError(f"filter '{_shown(key)}' value {v} is not a finite number")
        if isinstance(v, str) and len(v) > 10_000:
            raise UserError(f"filter '{_shown(key)}' value is {len(v)} characters long; at most 10000")
    return values


def _groups_items(value: object) -> list:
    """groups: a list whose string items are single tags and list items AND-ed tags."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise UserError('filter \'groups\' must be a list, e.g. [["arch:moe", "size:large"], "family:qwen3"]')
    items = []
    for item in value:
        tags = [item] if isinstance(item, str) else item
        if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
            raise UserError(f"filter 'groups' items must be a tag or a list of tags, got {json.dumps(item)}")
        items.append(tags)
    return items


@dataclass
class Filters:
    """Validated filters; ``sql()`` gives a WHERE clause with bound parameters."""

    items: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.items)

    def sql(self) -> tuple:
        """(clause, params); clause is 'TRUE' when there is nothing to filter."""
        clauses, params = [], []
        for key, value in self.items.items():
            if key == "groups":
                ors = []
                for tags in value:
                    ors.append("list_has_all(groups, ?::VARCHAR[])")
                    params.append(tags)
                clauses.append("(" + " OR ".join(ors) + ")")
            elif key in FILTER_KEYS:
                clauses.append(f'"{key}" IN (' + ", ".join("?" * len(value)) + ")")
                params.extend(str(v) for v in value)
            else:
                expr, expr_params = dimension_sql(key)
                clauses.append(f"{expr} IN (" + ", ".join("?" * len(value)) + ")")
                params.extend(expr_params)
                params.extend(_scalar_text(v) for v in value)
        return (" AND ".join(clauses) or "TRUE"), params


# What every reader's `filters` argument takes: parsed filters, the JSON object, its text, or nothing.
FiltersLike = Filters | dict | str | None


def parse_filters(text_or_dict: FiltersLike) -> Filters:
    """Parse README.md filter JSON (text or dict) into Filters; UserError when invalid."""
    if isinstance(text_or_dict, Filters):
        return text_or_dict
    if text_or_dict is None:
        return Filters()
    data = text_or_dict
    if isinstance(text_or_dict, str):
        try:
            data = json.loads(text_or_dict) if text_or_dict.strip() else {}
        except json.JSONDecodeError as exc:
            raise UserError(f"--filters is not valid JSON ({exc.msg} at column {exc.colno}); "
                            'use single quotes outside, double inside: \'{"base_task": "arithmetic"}\'') from None
        except RecursionError:
            raise UserError("--filters is nested too deeply to be read; a filter is a flat object such as "
                            '\'{"base_task": "arithmetic"}\'') from None
        except ValueError as exc:          # e.g. an integer with thousands of digits
            raise UserError(f"--filters holds a value that cannot be read ({str(exc)[:80]}); numbers must fit "
                            "in 64 bits") from None
    if not isinstance(data, dict):
        raise UserError('--filters must be a JSON object, e.g. \'{"eval_id": ["a1b2c3"]}\'')
    items = {}
    for key, value in data.items():
        if key == "groups":
            items[key] = _groups_items(value)
        elif key in FILTER_KEYS:
            items[key] = _value_list(key, value)
        else:
            prefix, dot, sub = key.partition(".")
            if not (dot and prefix in JSON_PREFIXES and _KEY_RE.match(sub)):
                raise UserError(f"unknown filter key '{_shown(key)}'; valid: {', '.join(FILTER_KEYS)}, "
                                "params.<key>, manifold.<key>, facets.<key>")
            items[key] = _value_list(key, value)
    return Filters(items)


def is_identifier_dimension(name: str) -> bool:
    """True for dimensions whose values are names, never quantities.

    eval_id, model, template, sampler, base_task, task, every facets.<key> and
    manifold.id are identifiers: an eval_id such as ``400548`` or ``012345`` or a
    facet value such as ``1e5`` stays the text it is (converting it would lose the
    join to the evals table and leading zeros). Only params.<key> and the other
    manifold.<key> (degree, target_tokens) are quantities.
    """
    if name in PLAIN_DIMENSIONS or name in EVAL_COLUMNS:
        return True
    prefix, _, key = name.partition(".")
    return prefix == "facets" or (prefix == "manifold" and key == "id")
