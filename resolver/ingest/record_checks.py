"""What a runner record must look like to become a sample: the one interpretation.

Every field evaluate.py uses is read by DuckDB as raw JSON and checked here, by one
rule per field, so a value is accepted or refused the same way whatever file, batch
or mode it comes from. A refused record gets a one-line reason (the
scan adds file:line) and is skipped; nothing is coerced: `"false"` is not false,
`12.0` is not a token count, `-²` is not a sample index.

The rules (docs/evaluate.md, *Record fields*):

* `model`, `template`, `sampler`, `base_task`: non-empty strings; `params`: an object;
  `key`: a string ending in `-<digits>` (ASCII), the sample index, below 2^31;
* `task`: a string (empty or missing: the base task); `manifold`: an object or null;
* `answer`, `reasoning`: strings or null; a record with neither `answer` nor `usage`
  is unanswered (written by `runner.py --offline`) and is not a sample;
* `usage`: an object or null; its `completion_tokens`, `prompt_tokens`: integers from
  0 to 2^31-1, or missing / null (0);
* `guess_chance`: a number from 0 to 1, or missing / null (0);
* `is_valid`, `is_correct`, `is_truncated`: true or false, or missing / null (false);
* `task_version`, `grader_version`: integers from 1 to 2^31-1, or missing / null (1:
  records written before the runner recorded versions);
* `invalid_reason`: never refused: a reason of resolver.grading.answer_reasons, or missing /
  null (none recorded); any other value counts as "unknown".
* `timings`: never refused; read for the sampler's stop_loops (docs/runner.md): a record
  with `termination_reason` "loop" and an integer `loop.max_tokens` >= 1 was stopped in a
  loop and counts at that many completion tokens (at least its own count), the difference
  being its tokens saved; `stop_loops: true` marks every record of such a run.

A record with several problems is reported for the first in RULES order. The fields
that are new on every record (`key`, `usage`, `text_size`, the texts) are checked in
SQL, on DuckDB's raw JSON text of each value; the others repeat (one model, a few
tasks, one `params` per step), so each distinct raw value is decided once, with
Python's json (``ValueRules``), and the verdict goes to every row that holds it.
tests/test_evaluate_units.py holds both to an independent Python reading of these
rules on ~1,000 hostile records.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from resolver.grading import INVALID_REASONS, UNKNOWN
from resolver.pointsdb import OUTCOME_CORRECT, OUTCOME_INCORRECT, OUTCOME_INVALID, OUTCOME_TRUNCATED, canonical_json
from resolver.records import TEXT_SIZE_METHOD

INT32_MAX = 2**31 - 1


# Every field but the two long texts is read as its raw JSON text, as DuckDB's JSON
# parser writes it back (strings quoted with backslash escapes, integers in plain
# decimal): DuckDB's typed columns would coerce ("false" -> false, 1.5 -> 2 for an
# integer, 5 -> "5" for text). `answer` and `reasoning` are most of the bytes and are
# read as text (scan.py), which turns a non-string value into its JSON text, so every
# value that could be such a text (a number, true / false, or starting with { or [) is
# flagged (`check_text`) and its line's raw JSON type is checked by the scan
# (``text_problem``). `text_size` is the runner's record of the text's sizes
# (resolver/records/text_size.py): used when it names this method and its byte count matches
# the text, otherwise the scan deflates the text.
FIELDS = ("key", "model", "template", "sampler", "base_task", "task", "params", "manifold", "answer",
          "reasoning", "usage", "guess_chance", "is_valid", "is_correct", "is_truncated",
          "task_version", "grader_version", "text_size", "invalid_reason", "timings")
TEXT_FIELDS = ("answer", "reasoning")
# Decided once per distinct raw value (ValueRules); the other fields row by row in SQL.
VALUE_FIELDS = ("model", "template", "sampler", "base_task", "task", "params", "manifold", "guess_chance",
                "is_valid", "is_correct", "is_truncated", "task_version", "grader_version", "invalid_reason")
# Where problems are looked for, in order: a record is reported for its first one.
RULES = ("unreadable", "model", "template", "sampler", "base_task", "params", "key", "task", "manifold",
         "usage", "usage.completion_tokens", "usage.prompt_tokens", "guess_chance", "is_valid", "is_correct",
         "is_truncated", "task_version", "grader_version", "eval")
RANK = {name: i for i, name in enumerate(RULES)}
NO_PROBLEM = len(RULES)


def _shown(col: str) -> str:
    """The offending raw value in a message (cut to 40 characters)."""
    return f"left({col}, 40)"


def _int_field(col: str, low: int) -> str:
    """An integer in [low, INT32_MAX] from a (small) raw JSON value; NULL when it is not one.

    DuckDB's casts are lenient ('12.0', ' 12', '+12', '1e3' all become 12 or 1000), so
    the raw text must also be exactly the integer's decimal form: a JSON integer is
    written that way, a real never is (-0, the other spelling of an integer, is
    compared without its sign; ``low`` is never negative).
    """
    value = f"TRY_CAST({col} AS INTEGER)"
    return f"CASE WHEN {value} >= {low} AND CAST({value} AS VARCHAR) = ltrim({col}, '-') THEN {value} END"


def _maybe_not_text(col: str) -> str:
    """Could this VARCHAR value be DuckDB's text of a non-string JSON value?

    Such a text starts with '{', '[', 't' (true), 'f' (false), or, for a number, a digit,
    '-', 'n' / 'N' (nan) or 'i' / 'I' (inf, infinity); only those rows pay for the full test.
    """
    first = f"left({col}, 1)"
    return (f"CASE WHEN {first} IN ('{{', '[') THEN true "
            f"WHEN {first} IN ('t', 'f') THEN {col} IN ('true', 'false') "
            f"WHEN {first} <> '' AND contains('-0123456789nNiI', {first}) "
            f"THEN TRY_CAST({col} AS DOUBLE) IS NOT NULL ELSE false END")


_UNREADABLE = " AND ".join(f"{name} IS NULL" for name in FIELDS)

# The row-by-row part, to follow ``WITH raw AS (...),``: raw has ``file`` and a column per
# FIELDS (raw JSON text; the TEXT_FIELDS as text). Output: file, the VALUE_FIELDS as raw
# JSON text, row_problem (the record's first problem among the rules checked here, or
# NULL; 'unreadable': DuckDB could not parse the line, the scan asks Python's json why),
# unanswered, check_text, sample_index, ctoks (a loop-stopped record: its loop.max_tokens),
# loop_saved (NULL unless stopped in a loop), stop_loops, ptoks, abytes (UTF-8 bytes of reasoning +
# answer), cbytes (their gzip size from a usable ``text_size``, else NULL) and text
# (reasoning + answer, only where cbytes is NULL: the scan deflates it).
RECORD_QUERY = f"""
    parsed AS (
      SELECT *, CASE WHEN starts_with(usage, '{{') THEN
                     CAST(json_extract(usage, ['$.completion_tokens', '$.prompt_tokens']) AS VARCHAR[]) END AS tokens,
                CASE WHEN starts_with(text_size, '{{') THEN
                     CAST(json_extract(text_size, ['$.bytes', '$.gzip', '$.method']) AS VARCHAR[]) END AS sizes,
                -- on the raw text: an escape never ends in '-' and digits, so the digits
                -- before the closing quote are the key's own last ones
                CASE WHEN starts_with(timings, '{{') THEN CAST(json_extract(timings,
                     ['$.loop.max_tokens', '$.stop_loops', '$.termination_reason']) AS VARCHAR[]) END AS loop_info,
                CASE WHEN starts_with(key, '"') THEN regexp_extract(key, '-([0-9]+)"$', 1) END AS index_text,
                strlen(coalesce(reasoning, '')) + strlen(coalesce(answer, '')) AS abytes
      FROM raw
    ),
    typed AS (
      SELECT *, {_int_field('tokens[1]', 0)} AS ctoks, {_int_field('tokens[2]', 0)} AS ptoks,
             CASE WHEN loop_info[3] = '"loop"' THEN {_int_field('loop_info[1]', 1)} END AS loop_max,
             coalesce(loop_info[2] = 'true', false) AS stop_loops,
             TRY_CAST(index_text AS INTEGER) AS sample_index,
             CASE WHEN sizes[3] = '"{TEXT_SIZE_METHOD}"' AND sizes[1] = CAST(abytes AS VARCHAR)
                  THEN {_int_field('sizes[2]', 1)} END AS cbytes
      FROM parsed
    )
    SELECT file, {", ".join(VALUE_FIELDS)},
           CASE
             WHEN {_UNREADABLE} THEN 'unreadable'
             WHEN index_text IS NULL OR index_text = ''
               THEN '''key'' must look like <step>-<sample index>, got ' || coalesce({_shown('key')}, 'nothing')
             WHEN sample_index IS NULL THEN 'sample index in ''key'' is above 2^31-1: ' || {_shown('key')}
             WHEN usage IS NOT NULL AND NOT starts_with(usage, '{{')
               THEN '''usage'' must be an object, got ' || {_shown('usage')}
             WHEN tokens[1] IS NOT NULL AND tokens[1] <> 'null' AND ctoks IS NULL
               THEN '''usage.completion_tokens'' must be an integer from 0 to 2^31-1, got ' || {_shown('tokens[1]')}
             WHEN tokens[2] IS NOT NULL AND tokens[2] <> 'null' AND ptoks IS NULL
               THEN '''usage.prompt_tokens'' must be an integer from 0 to 2^31-1, got ' || {_shown('tokens[2]')}
           END AS row_problem,
           answer IS NULL AND usage IS NULL AS unanswered,
           {_maybe_not_text('answer')} OR {_maybe_not_text('reasoning')} AS check_text,
           sample_index, greatest(coalesce(ctoks, 0), coalesce(loop_max, 0)) AS ctoks,
           loop_max - least(coalesce(ctoks, 0), loop_max) AS loop_saved, stop_loops,
           coalesce(ptoks, 0) AS ptoks, abytes, cbytes,
           CASE WHEN cbytes IS NULL THEN coalesce(reasoning, '') || coalesce(answer, '') END AS text
    FROM typed
"""


def _row_rule(message: str) -> str:
    """The rule a row_problem message is about."""
    if message == "unreadable":
        return "unreadable"
    if message.startswith(("'key'", "sample index")):
        return "key"
    return message[1:message.index("'", 1)]


# ---------------------------------------------------------------- one verdict per distinct value
_UNLOADABLE = object()


def _loads(raw: str) -> Any:
    """Python's value of a raw JSON text (_UNLOADABLE for spellings only DuckDB reads: nan, inf)."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):        # RecursionError: nested too deeply for Python
        return _UNLOADABLE


def _is_text(value: object) -> bool:
    """A str that is also valid UTF-8 text (not a lone surrogate from a \\ud800 escape)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _required_string(name: str) -> Callable[[str | None], tuple[str | None, str | None]]:
    def verdict(raw: str | None) -> tuple[str | None, str | None]:
        value = None if raw is None else _loads(raw)
        if _is_text(value) and value:
            return None, value
        return f"'{name}' missing or not a string", None
    return verdict


def _task(raw: str | None) -> tuple[str | None, str | None]:
    if raw is None:
        return None, None
    value = _loads(raw)
    if _is_text(value):
        return None, value or None          # empty: the base task
    return f"'task' must be a string, got {raw[:40]}", None


def _object(name: str, raw: str, drop: tuple[str, ...] = ()) -> tuple[str | None, str | None]:
    """(problem, canonical text) of a raw JSON object, without the keys in ``drop``."""
    value = _loads(raw)
    if value is _UNLOADABLE:
        return f"'{name}' is nested too deeply for Python's json", None
    return None, canonical_json({k: v for k, v in value.items() if k not in drop})


def _params(raw: str | None) -> tuple[str | None, str | None]:
    """The point identity's params: the object without `count` (samples per point)."""
    if raw is not None and raw.startswith("{"):
        return _object("params", raw, drop=("count",))
    return "'params' missing or not an object", None


def _manifold(raw: str | None) -> tuple[str | None, str | None]:
    if raw is None:
        return None, "{}"
    if raw.startswith("{"):
        return _object("manifold", raw)
    return f"'manifold' must be an object, got {raw[:40]}", None


def _guess(raw: str | None) -> tuple[str | None, float | None]:
    if raw is None:
        return None, 0.0
    value = _loads(raw)
    if type(value) in (int, float) and 0 <= value <= 1:
        return None, float(value)
    return f"'guess_chance' must be a number from 0 to 1, got {raw[:40]}", None


def _flag(name: str) -> Callable[[str | None], tuple[str | None, bool | None]]:
    def verdict(raw: str | None) -> tuple[str | None, bool | None]:
        if raw is None or raw == "false":
            return None, False
        if raw == "true":
            return None, True
        return f"'{name}' must be true or false, got {raw[:40]}", None
    return verdict


def _version(name: str) -> Callable[[str | None], tuple[str | None, int | None]]:
    def verdict(raw: str | None) -> tuple[str | None, int | None]:
        if raw is None:
            return None, 1
        value = _loads(raw)
        if type(value) is int and 1 <= value <= INT32_MAX:
            return None, value
        return f"'{name}' must be a positive integer, got {raw[:40]}", None
    return verdict


def _invalid_reason(raw: str | None) -> tuple[str | None, str | None]:
    """A reason of the grader's vocabulary, None (none recorded), or "unknown" for anything else."""
    if raw is None:
        return None, None
    value = _loads(raw)
    return None, value if value in INVALID_REASONS else UNKNOWN


# field -> (verdict on a raw value: (problem or None, value), Arrow type of the value)
_VERDICTS = {
    "model": (_required_string("model"), pa.string()), "template": (_required_string("template"), pa.string()),
    "sampler": (_required_string("sampler"), pa.string()),
    "base_task": (_required_string("base_task"), pa.string()), "task": (_task, pa.string()),
    "params": (_params, pa.string()), "manifold": (_manifold, pa.string()), "guess_chance": (_guess, pa.float64()),
    "is_valid": (_flag("is_valid"), pa.bool_()), "is_correct": (_flag("is_correct"), pa.bool_()),
    "is_truncated": (_flag("is_truncated"), pa.bool_()),
    "task_version": (_version("task_version"), pa.int32()),
    "grader_version": (_version("grader_version"), pa.int32()),
    "invalid_reason": (_invalid_reason, pa.string()),
}


class ValueRules:
    """The VALUE_FIELDS of a batch of rows: each distinct raw value is decided once (and
    remembered for the rest of the scan), then spread to its rows by dictionary index."""

    def __init__(self) -> None:
        self.memo: dict[str, dict] = {name: {} for name in VALUE_FIELDS}

    def _field(self, name: str, column: pa.Array) -> tuple:
        """(dictionary index of each row, [(problem, value)] per dictionary entry) of one column."""
        encoded = pc.dictionary_encode(column, null_encoding="encode")
        memo, (verdict, _) = self.memo[name], _VERDICTS[name]
        verdicts = []
        for raw in encoded.dictionary.to_pylist():
            found = memo.get(raw)
            if found is None:
                found = memo[raw] = verdict(raw)
            verdicts.append(found)
        return encoded.indices, verdicts

    def check(self, batch: pa.RecordBatch, expect: tuple | None) -> tuple:
        """(rank of each row's first problem (NO_PROBLEM: none), {row: message}, typed values).

        ``typed``: {field: Arrow array of each row's value (null where refused)}.
        ``expect``: dataset mode's eval triple; answered records of another eval are refused.
        """
        n = batch.num_rows
        rank = np.full(n, NO_PROBLEM, np.int16)
        messages = {}
        row_problem = batch.column("row_problem")
        if row_problem.null_count < n:
            for i in np.flatnonzero(row_problem.is_valid().to_numpy(zero_copy_only=False)).tolist():
                messages[i] = row_problem[i].as_py()
                rank[i] = RANK[_row_rule(messages[i])]
        typed = {}
        for name in VALUE_FIELDS:
            indices, verdicts = self._field(name, batch.column(name))
            typed[name] = pa.array([value for _, value in verdicts], _VERDICTS[name][1]).take(indices)
            bad = [i for i, (problem, _) in enumerate(verdicts) if problem]
            if bad:
                where = indices.to_numpy(zero_copy_only=False)
                for i in np.flatnonzero(np.isin(where, bad) & (rank > RANK[name])).tolist():
                    rank[i] = RANK[name]
                    messages[i] = verdicts[where[i]][0]
        if expect is not None:
            same = pc.and_(pc.and_(pc.equal(typed["model"], expect[0]), pc.equal(typed["template"], expect[1])),
                           pc.equal(typed["sampler"], expect[2])).fill_null(True)
            answered = pc.invert(batch.column("unanswered"))
            other = pc.and_(pc.invert(same), answered).to_numpy(zero_copy_only=False)
            for i in np.flatnonzero(other & (rank == NO_PROBLEM)).tolist():
                rank[i] = RANK["eval"]
                got = "|".join(typed[k][i].as_py() for k in ("model", "template", "sampler"))
                messages[i] = f"record is {got}, not this eval's {'|'.join(expect)}; skipped"
        return rank, messages, typed


_KEY_INDEX = re.compile(r"-([0-9]+)\Z")


def _token_count(value: object) -> bool:
    return value is None or (type(value) is int and 0 <= value <= INT32_MAX)


def record_problem(record: dict) -> str | None:
    """The first problem of one record Python has parsed, by the rules of the scan, or None.

    For readers of raw records (probe.py) that must take exactly the records evaluate.py
    counted: the repeating fields go through the same per-value verdicts as the scan
    (``json.dumps`` of a value is the raw text they read), the per-record fields through
    Python twins of the scan's SQL; tests/test_evaluate_units.py holds both to the same
    independent reading. Text fields that are not strings are a problem here too (the
    scan finds them on their line), unless the record is unanswered (no answer, no usage).
    """
    found = {}
    for name in VALUE_FIELDS:
        value = record.get(name)
        problem, _ = _VERDICTS[name][0](None if value is None else json.dumps(value, ensure_ascii=False))
        if problem:
            found[name] = problem
    key = record.get("key")
    digits = _KEY_INDEX.search(key) if isinstance(key, str) else None
    if digits is None:
        found["key"] = "'key' must look like <step>-<sample index>"
    elif int(digits.group(1)) > INT32_MAX:
        found["key"] = "sample index in 'key' is above 2^31-1"
    usage = record.get("usage")
    if usage is not None and not isinstance(usage, dict):
        found["usage"] = "'usage' must be an object"
    elif isinstance(usage, dict):
        for name in ("completion_tokens", "prompt_tokens"):
            if not _token_count(usage.get(name)):
                found[f"usage.{name}"] = f"'usage.{name}' must be an integer from 0 to 2^31-1"
    if found:
        return found[min(found, key=RANK.__getitem__)]
    if record.get("answer") is None and usage is None:
        return None                 # unanswered: not a sample, its texts are not looked at
    for name in TEXT_FIELDS:
        value = record.get(name)
        if value is not None and not _is_text(value):
            return f"'{name}' must be a string"
    return None


def outcome_codes(typed: dict) -> np.ndarray:
    """Each row's outcome code from its (decided) is_truncated, is_correct and is_valid."""
    flag = {k: typed[k].fill_null(False).to_numpy(zero_copy_only=False)
            for k in ("is_truncated", "is_correct", "is_valid")}
    return np.select([flag["is_truncated"], flag["is_correct"], ~flag["is_valid"]],
                     [OUTCOME_TRUNCATED, OUTCOME_CORRECT, OUTCOME_INVALID], OUTCOME_INCORRECT).astype(np.uint8)


def text_problem(raw: bytes) -> str | None:
    """For a flagged line (``check_text``): why its answer / reasoning is not text, or None."""
    record, problem = load_line(raw)
    if problem:
        return problem
    for name in TEXT_FIELDS:
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            return f"'{name}' must be a string, got {json.dumps(value)[:40]}"
    return None


def load_line(raw: bytes) -> tuple:
    """(record, None) or (None, why Python's json cannot give a record for this line)."""
    try:
        record = json.loads(raw)
    except RecursionError:
        return None, "record nested too deeply for Python's json; skipped"
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"malformed JSON for Python's json: {exc}"
    if not isinstance(record, dict):
        return None, "line is JSON but not an object"
    return record, None


def diagnose_line(raw: bytes) -> str:
    """Why DuckDB could not read a line (it parses as JSON for Python, or not)."""
    try:
        record = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        cut = "" if raw.endswith(b"\n") else " (truncated last line?)"
        return f"malformed JSON: {exc}{cut}"
    except RecursionError:
        return "malformed JSON: nested too deeply"
    if not isinstance(record, dict):
        return "line is JSON but not an object"
    if not isinstance(record.get("model"), str):
        return "'model' missing or not a string"
    return "record cannot be read (invalid UTF-8, an escaped lone surrogate, or a line over 16 MB)"
