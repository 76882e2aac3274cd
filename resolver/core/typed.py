"""The base of every typed input file (pydantic v2 models) and its one-line errors; and the
base of every JSON output model with its number types (`OutputModel`, docs/decisions.md).

Configs, templates, samplers, dataset files, evals.json entries, records and the
runner's options are pydantic models built on `FileModel`: unknown keys are refused
(`extra="forbid"`, with the closest valid key named), values are taken as the file
types them (`strict`: no "3" for 3, no true for 1), and fields carry their bounds.
`validate_file` turns the first validation error into the one line users get
(docs/configs.md, "Error messages"):

    configs/x.yaml: tasks[0].manifolds[0].gird: unknown key (did you mean grid?); valid keys: ...

A rule that needs more than one field raises `at(path, message)` from a validator, so
its error still names the key it is about.
"""
from __future__ import annotations

import json
import re
from typing import Any, ClassVar, TypeAlias, TypeVar, overload

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from resolver.core.errors import UserError, choices_text
from resolver.core.inputs import did_you_mean

__all__ = ["FileModel", "Num", "Number", "OutputModel", "Real", "Scalar", "at", "error_line", "first_problem",
           "validate_file"]

_SHOWN = 80     # characters of a bad value or key quoted in an error line
_Model = TypeVar("_Model", bound=BaseModel)
_Value = TypeVar("_Value")


class FileModel(BaseModel):
    """A mapping read from a user file: unknown keys refused, JSON types taken as written."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)
    # How an unknown key is called in the error ("sampler key" for samplers) and what follows the list.
    unknown_key_word: ClassVar[str] = "key"
    unknown_key_hint: ClassVar[str] = ""
    # field -> the sentence an invalid value of it gets (", got <value>" is added)
    field_messages: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _refuse_unknown_keys(cls, data: Any) -> Any:
        # extra="forbid" alone says "Extra inputs are not permitted"; users get the closest
        # key and the valid ones, as the hand-written loaders always gave them.
        if isinstance(data, dict):
            valid = [f.alias or name for name, f in cls.model_fields.items() if not f.exclude]
            for key in data:
                if key not in valid:
                    raise PydanticCustomError(
                        "unknown_key", "{message}",
                        {"key": _shown(key), "message": (
                            f"unknown {cls.unknown_key_word} '{_shown(key)}'{did_you_mean(key, valid)}; "
                            f"valid keys: {choices_text(valid)}{cls.unknown_key_hint}")})
        return data


# The output models' numbers: NaN and infinities are written as null, so every float a computation
# may leave undefined is ``Real``. A value that is an integer in one output and a fraction in another
# is ``Scalar``: a union keeps 3 as 3, where a ``float`` field would write 3.0. They live here, below
# every package that writes an output (the shortcut audit too), not in analysis.
Scalar: TypeAlias = str | int | float | bool | None
Real: TypeAlias = float | None      # a number, null where it is undefined (NaN)
Number: TypeAlias = int | float | None   # a table column's number: pandas makes an integer column float once one is missing
Num: TypeAlias = int | float         # a number that may be written as an integer (a guess chance of 0)


class OutputModel(BaseModel):
    """A JSON output's model: refuses keys it does not declare; the declared order is the JSON's key order."""

    model_config = ConfigDict(extra="forbid")


def at(path: tuple | list | str, message: str) -> PydanticCustomError:
    """An error about the key `path` below the value being validated (raise it from a validator)."""
    path = [path] if isinstance(path, (str, int)) else list(path)
    return PydanticCustomError("at_path", "{message}", {"path": path, "message": message})


def _shown(value: Any) -> str:
    return json.dumps(str(value), ensure_ascii=False)[1:-1][:_SHOWN]


def _value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 3] + "..."


def _key_path(loc: list[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{_shown(part)}" if out else _shown(part))
    return out


_JSON_NAMES = {"dict": "mapping", "list": "list", "str": "string", "int": "integer", "float": "number",
               "bool": "boolean", "NoneType": "null"}


def _type_name(value: Any) -> str:
    return _JSON_NAMES.get(type(value).__name__, type(value).__name__)


def _bounds(ctx: dict) -> str:
    words = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    return " and ".join(f"{words[k]} {v}" for k, v in ctx.items() if k in words)


def _message(error: ErrorDetails) -> str:
    """A user's wording of one pydantic error (the key path is added by error_line)."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if kind in ("unknown_key", "at_path"):
        return ctx["message"]
    got = f", got {_value(value)}"
    if kind == "missing":
        return f"missing required key '{_shown(error['loc'][-1])}'" if error["loc"] else "a required key is missing"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"must be a mapping, got {_type_name(value)}"
    if kind in ("list_type", "tuple_type"):
        return f"must be a list, got {_type_name(value)}"
    if kind == "too_short":
        what = "mapping" if isinstance(value, dict) else "list"
        least = ctx.get("min_length", 1)
        return f"must be a non-empty {what}" if least == 1 else f"must be a {what} of at least {least} items"
    if kind == "too_long":
        return f"has more than {ctx.get('max_length')} items"
    if kind == "string_type":
        return f"must be a string{got}"
    if kind == "string_too_short":
        return f"must be a non-empty string{got}"
    if kind == "string_pattern_mismatch":
        return f"{_value(value)} is not valid; expected text matching {ctx.get('pattern')}"
    if kind in ("int_type", "int_from_float", "int_parsing"):
        return f"must be an integer{got}"
    if kind in ("float_type", "float_parsing", "finite_number"):
        return f"must be a finite number{got}"
    if kind == "bool_type":
        return f"must be true or false{got}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return f"must be {_bounds(ctx)}{got}"
    if kind == "literal_error":
        choices = re.findall(r"'((?:[^'\\]|\\.)*)'", str(ctx.get("expected", "")))
        return f"{_value(value)} is not valid; valid: {choices_text(choices)}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return f"{error['msg'][:1].lower()}{error['msg'][1:]}{got}"


def error_line(exc: ValidationError, where: str, model: type[BaseModel] | TypeAdapter | None = None) -> str:
    """`<where>: <key.path>: <what is wrong and what is valid>` for the first error of `exc`.

    A top-level field named in `model.field_messages` gets that sentence instead (samplers
    say which range servers accept)."""
    error = exc.errors(include_url=False)[0]
    loc = list(error["loc"]) + list((error.get("ctx") or {}).get("path", []))
    if error["type"] == "unknown_key":
        loc.append(error["ctx"]["key"])
    elif error["type"] == "missing":
        loc = loc[:-1]          # "tasks[0]: missing required key 'name'"
    own = error["type"] in ("unknown_key", "at_path")     # a validator's own sentence
    special = getattr(model, "field_messages", {}).get(loc[0]) if loc and not own else None
    if special:
        return f"{where}: {special}, got {_value(error.get('input'))}"
    path = _key_path(loc)
    if not path:
        return f"{where}: {_message(error)}"
    return f"{where}{path}: {_message(error)}" if path.startswith("[") else f"{where}: {path}: {_message(error)}"


def first_problem(exc: ValidationError) -> tuple[list, str]:
    """(key path, message) of the first error of `exc`, for a validator that checks a part again."""
    error = exc.errors(include_url=False)[0]
    return list(error["loc"]) + list((error.get("ctx") or {}).get("path", [])), _message(error)


@overload
def validate_file(model: type[_Model], data: Any, where: str, context: dict | None = None) -> _Model: ...
@overload
def validate_file(model: TypeAdapter[_Value], data: Any, where: str, context: dict | None = None) -> _Value: ...
def validate_file(model: type[BaseModel] | TypeAdapter, data: Any, where: str, context: dict | None = None) -> Any:
    """`model` (a FileModel class or a TypeAdapter) validated from `data`; UserError in one line."""
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(data, context=context)
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise UserError(error_line(exc, where, model))
