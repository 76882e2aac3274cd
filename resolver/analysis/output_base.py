"""What every output model shares: the number types, the strict base model (both from
resolver.core.typed, below every package that defines an output model) and the JSON writer
(resolver.probe.schemas lists the models; docs/decisions.md, issue 37 part 1).

Numbers: NaN and infinities are written as null (resolver.analysis.common.to_json), so every
float a computation may leave undefined is ``Real`` (``float | None``). A value that is an
integer in one output and a fraction in another (a group's value, a dimension's value) is
``Scalar``: a union keeps 3 as 3, where a ``float`` field would write 3.0.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from resolver.analysis.common import to_json, to_plain
from resolver.core.typed import Num, Number, OutputModel, Real, Scalar

__all__ = ["Num", "Number", "OutputModel", "Real", "Scalar", "missing_columns", "output_json"]


def output_json(model: type[BaseModel], data: Any) -> str:
    """`data` (a `model` built by the computation, or a table's rows) as the JSON text of `model`:
    validated, dumped with the keys it was given (an optional key left out stays out), NaN as
    null, indent 2. A model is dumped and validated again, so both paths write the same text."""
    if isinstance(data, BaseModel):
        if not isinstance(data, model):
            raise TypeError(f"output_json({model.__name__}) was given a {type(data).__name__}")
        data = data.model_dump(exclude_unset=True)
    validated = model.model_validate(to_plain(data, finite=True))
    return to_json(validated.model_dump(mode="json", exclude_unset=True))


def missing_columns(rows: list[dict[str, Any]], required: tuple[str, ...], where: str) -> None:
    """ValueError naming the first row that lacks one of the `required` columns."""
    for i, row in enumerate(rows):
        missing = [c for c in required if c not in row]
        if missing:
            raise ValueError(f"{where} row {i} lacks {', '.join(missing)}")
