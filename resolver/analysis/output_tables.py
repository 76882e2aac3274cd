"""The table outputs of analyze.py (tokens, points, aggregate, spiderweb, surface, compression,
hazard, capacity) as models: lists of open rows whose columns follow the chosen dimensions
and flags, with the columns every row has required (docs/analyze.md, docs/decisions.md).
"""
from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field, RootModel, model_validator

from resolver.analysis.output_base import OutputModel, missing_columns

__all__ = [
    "SURFACE_COLUMNS", "AggregateOutput", "CapacityOutput", "CompressionOutput", "HazardOutput", "PointsOutput",
    "Rows", "SpiderwebExportRows", "SpiderwebOutput", "SurfaceOutput", "TokensOutput",
]


def _rows_schema(schema: dict[str, Any], cls: Any) -> None:
    """The JSON Schema of a table: its rows must carry the REQUIRED columns."""
    schema["items"]["required"] = list(cls.REQUIRED)


class Rows(RootModel[list[dict[str, Any]]]):
    """A table as a list of rows. Its columns follow the selected dimensions and flags (a
    --group-by dimension, params.* of a view), so a row is an open object; REQUIRED names
    the columns every row has, in the schema and in validation. Keys keep their order."""

    model_config = ConfigDict(json_schema_extra=_rows_schema)
    REQUIRED: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="after")
    def _has_required_columns(self) -> Rows:
        missing_columns(self.root, self.REQUIRED, type(self).__name__)
        return self


class TokensOutput(Rows):
    """analyze.py tokens --format json: one row per (eval, group); the group dimension's column
    follows `label`."""

    REQUIRED = ("eval_id", "label", "points", "samples", "completion_tokens_mean", "loops_stopped", "tokens_saved")


class PointsOutput(Rows):
    """analyze.py points --format json (one file per --split-by value); the params of the
    points are columns of their own."""

    REQUIRED = ("id", "eval_id", "model", "base_task", "center", "margin", "correct", "incorrect", "invalid",
                "truncated")


class AggregateOutput(Rows):
    """analyze.py aggregate --format json: the dimensions' columns first (and `label` after
    eval_id), then the statistics; --compare-modes, --raw-counters and --tokens add columns."""

    REQUIRED = ("points", "samples")


class SpiderwebOutput(Rows):
    """analyze.py spiderweb --format json: one row per (eval, group)."""

    REQUIRED = ("eval_id", "label", "model", "group", "mode", "center", "margin", "low", "high", "below_chance",
                "truncated_ratio", "tokens_mean", "samples", "points")


class SpiderwebExportRows(Rows):
    """The rows of the spiderweb app's JSON download: analyze.py spiderweb's columns (mode first),
    whether the truncated share is marked on the chart, and the eval's archetype."""

    REQUIRED = SpiderwebOutput.REQUIRED + ("truncation_marked", "archetype")


class CompressionOutput(Rows):
    """analyze.py compression --format json: per (split keys, eval, panel)."""

    REQUIRED = ("eval_id", "panel", "samples", "tokens_mean", "compressed_mean", "ratio_median", "loop_like_share")


class HazardOutput(Rows):
    """analyze.py hazard --format json: per (split keys, series) the token buckets' hazards."""

    REQUIRED = ("series", "median_end_tokens", "buckets")


SURFACE_COLUMNS = ("eval_id", "points", "samples", "center", "margin", "low", "high", "below_chance")


def _surface_schema(schema: dict[str, Any]) -> None:
    schema["additionalProperties"]["additionalProperties"]["items"]["required"] = list(SURFACE_COLUMNS)


class SurfaceOutput(RootModel[dict[str, dict[str, list[dict[str, Any]]]]]):
    """analyze.py surface --format json: {split value: {task/view: rows}}, a row per (eval, grid
    cell) with the view's params.* columns after eval_id (SURFACE_COLUMNS in every row)."""

    model_config = ConfigDict(json_schema_extra=_surface_schema)

    @model_validator(mode="after")
    def _has_required_columns(self) -> SurfaceOutput:
        for split, views in self.root.items():
            for view, rows in views.items():
                missing_columns(rows, SURFACE_COLUMNS, f"surface {split} {view}")
        return self


def _rows_field(required: tuple[str, ...], description: str) -> Any:
    """A list-of-rows field whose rows must carry `required` (in the schema; CapacityOutput checks it)."""
    return Field(description=description,
                 json_schema_extra={"items": {"type": "object", "required": list(required)}})


class CapacityOutput(OutputModel):
    """analyze.py capacity --format json (--frontier or --peak; their columns differ)."""

    summary: list[dict[str, Any]] = _rows_field(
        ("eval_id",), "per eval (and group): --frontier the logistic fit (x50, slope, x50_low, x50_high, r2, ...), "
                      "--peak the peak budget, effective capacity and accuracy")
    table: list[dict[str, Any]] = _rows_field(
        ("eval_id", "center", "margin", "low", "high", "below_chance"),
        "the aggregated cells the summary is fitted on, one per (eval, size or budget)")

    @model_validator(mode="after")
    def _has_required_columns(self) -> CapacityOutput:
        missing_columns(self.summary, ("eval_id",), "capacity summary")
        missing_columns(self.table, ("eval_id", "center", "margin", "low", "high", "below_chance"), "capacity table")
        return self
