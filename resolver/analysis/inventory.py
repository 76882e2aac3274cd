"""What is in a dataset (analyze.py evals and tasks): evals with their metadata and
point counts, base tasks with their config views and point counts."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

import pandas as pd

from resolver.analysis.common import eval_labels
from resolver.analysis.outputs import EvalListing, EvalsOutput, TaskListing, TaskManifold, TaskViewListing, output_json
from resolver.catalog import distinct_labels
from resolver.core import UserError, compile_search, markdown_table, plain_table

if TYPE_CHECKING:
    from resolver.catalog import EvalSpec
    from resolver.config import ExperimentConfig

    class _View(Protocol):
        """What describe_view reads of a config view (resolver.config's View, not a public name)."""

        @property
        def view(self) -> str: ...
        @property
        def group_by(self) -> list[str]: ...
        @property
        def filters(self) -> dict | None: ...
        @property
        def facet_by(self) -> list[str] | None: ...


def parse_tag_list(text: str | None) -> list:
    """'size:small,arch:moe' -> ['size:small', 'arch:moe'] (items must be key:value)."""
    if not text:
        return []
    tags = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in tags if ":" not in t]
    if bad:
        raise UserError(f"--facets/--groups items must be key:value pairs, e.g. size:small,arch:moe; got {', '.join(bad)}")
    return tags


def list_evals(evals: pd.DataFrame, counts: pd.DataFrame, dataset_evals: Iterable[EvalSpec] = (),
               search: str | None = None, tags: Iterable[str] = ()) -> list:
    """Evals as EvalListing dumps, filtered by --search (model or label) and tags (AND).

    `evals` is the PointsDB evals table; `counts` has eval_id, points, samples;
    `dataset_evals` (EvalSpec) adds evals the dataset names that have no points yet.
    """
    counted = dict(zip(counts["eval_id"], zip(counts["points"].astype(int).tolist(),
                                              counts["samples"].astype(int).tolist())))
    records = evals.to_dict("records")
    labels = distinct_labels((r["eval_id"], r.get("label"), r.get("model")) for r in records)
    rows = {r["eval_id"]: _eval_listing(r.get, labels[r["eval_id"]], counted) for r in records}
    for spec in dataset_evals:
        if spec.eval_id not in rows:
            rows[spec.eval_id] = _eval_listing(spec.as_row().get, _text(spec.label) or _text(spec.model), counted)
    regex = compile_search(search)
    def wanted(row: EvalListing) -> bool:
        found = not regex or regex.search(row.model or "") or regex.search(row.label or "")
        return bool(found) and all(tag in row.groups for tag in tags)
    result = [row for row in rows.values() if wanted(row)]
    return [row.model_dump() for row in sorted(result, key=lambda r: (str(r.label).lower(), r.eval_id))]


def _eval_listing(get: Callable[[str], Any], label: str | None, counted: dict) -> EvalListing:
    """One eval from its metadata (`get`: a PointsDB evals record's or an EvalSpec's values by name)."""
    groups = get("groups")
    points, samples = counted.get(get("eval_id"), (0, 0))
    return EvalListing(eval_id=get("eval_id"), label=label, model=_text(get("model")), template=_text(get("template")),
                       sampler=_text(get("sampler")), groups=list(groups) if groups is not None else [],
                       hf_id=_text(get("hf_id")), points=points, samples=samples,
                       grader_version=_int_or_none(get("grader_version")),
                       task_versions=_json_dict(get("task_versions")))


def _text(value: object) -> str | None:
    """A metadata string, or None when absent: pandas turns a missing string into NaN
    once another row of the column has one, and NaN must not print as 'nan'."""
    return value if isinstance(value, str) and value else None


def _int_or_none(value: Any) -> int | None:
    try:
        return None if value is None or value != value else int(value)
    except (TypeError, ValueError):
        return None


def _json_dict(text: object) -> dict:
    return json.loads(text) if isinstance(text, str) and text else {}


def versions_text(row: dict) -> str:
    """Where an eval's numbers come from: 'grader v1, tasks v1' or 'grader v2, arithmetic v2 (other tasks v1)'."""
    grader = f"grader v{row['grader_version']}" if row.get("grader_version") else "grader ?"
    versions = row.get("task_versions") or {}
    newer = [f"{task} v{'+v'.join(map(str, v))}" for task, v in sorted(versions.items()) if v != [1]]
    if not versions:
        return grader
    if not newer:
        return f"{grader}, tasks v1"
    rest = " (other tasks v1)" if len(newer) < len(versions) else ""
    return f"{grader}, {', '.join(newer)}{rest}"


def describe_view(view: _View) -> TaskViewListing:
    """A config view with its dimensionality."""
    group_by = list(view.group_by)
    return TaskViewListing(view=view.view, dims=len(group_by), group_by=group_by, filters=dict(view.filters or {}),
                           facet_by=list(view.facet_by or []), description=getattr(view, "description", ""))


def list_tasks(counts: pd.DataFrame, config: ExperimentConfig | None = None, search: str | None = None) -> list:
    """Base tasks (TaskListing dumps) with label, views (from the config) and point / eval counts.

    `counts` has base_task, points, evals; tasks that the config names but that have
    no points are listed with zero counts.
    """
    config_tasks = {t.name: t for t in (config.tasks if config is not None else [])}
    names = list(dict.fromkeys(list(counts["base_task"]) + list(config_tasks)))
    by_task = counts.set_index("base_task") if not counts.empty else None
    regex = compile_search(search)
    rows = []
    for name in names:
        if regex and not regex.search(name):
            continue
        task = config_tasks.get(name)
        counted = by_task.loc[name] if by_task is not None and name in by_task.index else None
        rows.append(TaskListing(
            base_task=name, label=task.label if task else name, generator=task.generator if task else None,
            points=int(counted["points"]) if counted is not None else 0,
            evals=int(counted["evals"]) if counted is not None else 0,
            views=[describe_view(v) for v in task.views] if task else [],
            # the config's free-text descriptions: what `analyze.py tasks` shows them for (docs/configs.md)
            description=task.description if task else "",
            manifolds=[TaskManifold(id=e.id, degree=e.degree, description=e.description)
                       for e in task.manifolds] if task else []))
    return [row.model_dump() for row in sorted(rows, key=lambda r: r.base_task)]


# ------------------------------------------------------------------- rendering

def evals_text(rows: list, fmt: str) -> str:
    """evals as a terminal table, markdown table or JSON."""
    if fmt == "json":
        return output_json(EvalsOutput, rows)
    headers = ["eval_id", "label", "model", "template", "sampler", "groups", "hf_id", "points", "samples", "versions"]

    labels = eval_labels(rows)
    cells = [[r["eval_id"], labels[r["eval_id"]], *(r[k] or "—" for k in ("model", "template", "sampler")),
              ", ".join(r["groups"]) or "—", r["hf_id"] or "—", r["points"], r["samples"], versions_text(r)]
             for r in rows]
    if fmt == "markdown":
        return markdown_table(cells, headers, ["l"] * 7 + ["r", "r", "l"])
    return plain_table(cells, headers)


def _view_text(view: dict) -> str:
    text = f"{view['view']} ({view['dims']}-D: {' x '.join(view['group_by'])}"
    if view["filters"]:
        text += "; " + ", ".join(f"{k}={v}" for k, v in view["filters"].items())
    if view["facet_by"]:
        text += "; facet " + ", ".join(view["facet_by"])
    return text + ")" + (f": {view['description']}" if view.get("description") else "")


def _label_text(row: dict) -> str:
    """The label, then the task's and its manifold entries' descriptions (those that have one)."""
    lines = [row["label"]] + ([row["description"]] if row.get("description") else [])
    lines += [f"{m['id']}: {m['description']}" for m in row.get("manifolds", ()) if m["description"]]
    return "<br>".join(lines)


def tasks_markdown(rows: list, description: str = "") -> str:
    """The tasks table; `description`: the experiment config's own, shown above it."""
    cells = [[r["base_task"], _label_text(r), r["points"], r["evals"],
              "<br>".join(_view_text(v) for v in r["views"]) or "—"] for r in rows]
    head = "# Tasks\n\n" + (f"{description}\n\n" if description else "")
    return head + markdown_table(cells, ["base_task", "label", "points", "evals", "views"],
                                 ["l", "l", "r", "r", "l"])
