"""What a runner record must look like to become a sample: the one interpretation.

Every field evaluate.py uses is read by DuckDB as raw JSON and checked here, in one
SQL expression per field, so a value is accepted or refused the same way whatever
file, batch or mode it comes from. A refused record gets a one-line reason (the
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
  records written before the runner recorded versions).
"""
from __future__ import annotations

import json

from resolver.pointsdb import OUTCOME_CORRECT, OUTCOME_INCORRECT, OUTCOME_INVALID, OUTCOME_TRUNCATED
from resolver.text_size import GZIP_FRAMING, GZIP_LEVEL, TEXT_SIZE_METHOD, gzip_size  # noqa: F401 (re-exported)

INT32_MAX = 2**31 - 1


# Every field but the two long texts is read as its raw JSON text, as DuckDB's JSON
# parser writes it back (canonical: strings quoted with backslash escapes, integers in
# plain decimal, reals with a '.' or an exponent): DuckDB's typed columns would coerce
# ("false" -> false, 1.5 -> 2 for an integer, 5 -> "5" for text). The checks below are
# plain string tests on that text (a JSON parse per value would cost more than reading
# the line). `answer` and `reasoning` are most of the bytes and are read as text (scan.py),
# which turns a non-string value into its JSON text, so every value that could be such a
# text (a number, true / false, or starting with { or [) is flagged (`check_text`) and
# its line's raw JSON type is checked by the scan (``text_problem``). `text_size` is the
# runner's record of the text's sizes (resolver/text_size.py): used when it names this
# method and its byte count matches the text, otherwise the scan deflates the text.
FIELDS = ("key", "model", "template", "sampler", "base_task", "task", "params", "manifold", "answer",
          "reasoning", "usage", "guess_chance", "is_valid", "is_correct", "is_truncated",
          "task_version", "grader_version", "text_size")
TEXT_FIELDS = ("answer", "reasoning")


def _string(col: str) -> str:
    """A JSON string's value: the text between the quotes unless it holds an escape."""
    return (f"CASE WHEN starts_with({col}, '\"') THEN "
            f"CASE WHEN contains({col}, '\\') THEN {col}->>'$' ELSE {col}[2:-2] END END")


def _shown(col: str) -> str:
    """The offending raw value in a message (cut to 40 characters)."""
    return f"left({col}, 40)"


def _int_field(col: str, low: int) -> str:
    """An integer in [low, INT32_MAX] from a (small) raw JSON value; NULL when it is not one.

    DuckDB's casts are lenient ('12.0', ' 12', '+12', '1e3' all become 12 or 1000), so
    the raw text must also be exactly the integer's decimal form: a JSON integer is
    written that way, a real never is.
    """
    value = f"TRY_CAST({col} AS INTEGER)"
    return f"CASE WHEN {value} >= {low} AND CAST({value} AS VARCHAR) = {col} THEN {value} END"


def _maybe_not_text(col: str) -> str:
    """Could this VARCHAR value be DuckDB's text of a non-string JSON value?

    Such a text starts with '{', '[', 't' (true), 'f' (false), or, for a number, a digit,
    '-', 'n' / 'N' (nan) or 'i' / 'I' (inf, infinity); only those rows pay for the full test.
    """
    first = f"left({col}, 1)"
    return (f"CASE WHEN {first} IN ('{{', '[') THEN true "
            f"WHEN {first} IN ('t', 'f') THEN {col} IN ('true', 'false') "
            f"WHEN {first} IN ('-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'n', 'N', 'i', 'I') "
            f"THEN TRY_CAST({col} AS DOUBLE) IS NOT NULL ELSE false END")


def _bool(col: str) -> str:
    return f"CASE {col} WHEN 'true' THEN true WHEN 'false' THEN false END"


def _flag_problem(name: str) -> str:
    return (f"WHEN {name} IS NOT NULL AND {_bool(name)} IS NULL "
            f"THEN '''{name}'' must be true or false, got ' || {_shown(name)}")


# The two token counts with one parse of `usage` (NULL when usage is not an object).
_TOKENS = """
    SELECT *, CASE WHEN starts_with(usage, '{') THEN
                   CAST(json_extract(usage, ['$.completion_tokens', '$.prompt_tokens']) AS VARCHAR[]) END AS tokens
    FROM raw
"""

# Typed values, NULL where the raw value has the wrong type.
_TYPED = f"""
    SELECT file, key, model, template, sampler, base_task, task, params, manifold, answer, reasoning, usage,
           guess_chance, is_valid, is_correct, is_truncated, task_version, grader_version, text_size,
           {_string('model')} AS model_s, {_string('template')} AS template_s, {_string('sampler')} AS sampler_s,
           {_string('base_task')} AS base_task_s, {_string('task')} AS task_s,
           answer AS answer_s, reasoning AS reasoning_s,
           {_maybe_not_text('answer')} OR {_maybe_not_text('reasoning')} AS check_text,
           -- on the raw text: an escape never ends in '-' and digits, so the digits before
           -- the closing quote are the key's own last ones
           CASE WHEN starts_with(key, '"') THEN regexp_extract(key, '-([0-9]+)"$', 1) END AS index_text,
           tokens[1] AS ctoks_json, tokens[2] AS ptoks_json,
           {_int_field('tokens[1]', 0)} AS ctoks, {_int_field('tokens[2]', 0)} AS ptoks,
           TRY_CAST(guess_chance AS DOUBLE) AS guess,      -- NULL for a string (quoted), true, {...}
           {_int_field('task_version', 1)} AS task_version_i,
           {_int_field('grader_version', 1)} AS grader_version_i,
           CASE WHEN starts_with(text_size, '{{') THEN
                CAST(json_extract(text_size, ['$.bytes', '$.gzip', '$.method']) AS VARCHAR[]) END AS sizes
    FROM tokens
"""

_UNREADABLE = " AND ".join(f"{name} IS NULL" for name in FIELDS)

# The first problem of a record, or NULL; 'unreadable' = DuckDB could not parse the
# line (the scan asks Python's json what is wrong with it).
_PROBLEM = f"""
    CASE
      WHEN {_UNREADABLE} THEN 'unreadable'
      WHEN model_s IS NULL OR model_s = '' THEN '''model'' missing or not a string'
      WHEN template_s IS NULL OR template_s = '' THEN '''template'' missing or not a string'
      WHEN sampler_s IS NULL OR sampler_s = '' THEN '''sampler'' missing or not a string'
      WHEN base_task_s IS NULL OR base_task_s = '' THEN '''base_task'' missing or not a string'
      WHEN NOT coalesce(starts_with(params, '{{'), false) THEN '''params'' missing or not an object'
      WHEN index_text IS NULL OR index_text = ''
        THEN '''key'' must look like <step>-<sample index>, got ' || coalesce({_shown('key')}, 'nothing')
      WHEN TRY_CAST(index_text AS INTEGER) IS NULL
        THEN 'sample index in ''key'' is above 2^31-1: ' || {_shown('key')}
      WHEN task IS NOT NULL AND task_s IS NULL THEN '''task'' must be a string, got ' || {_shown('task')}
      WHEN manifold IS NOT NULL AND NOT starts_with(manifold, '{{')
        THEN '''manifold'' must be an object, got ' || {_shown('manifold')}
      WHEN usage IS NOT NULL AND NOT starts_with(usage, '{{')
        THEN '''usage'' must be an object, got ' || {_shown('usage')}
      WHEN ctoks_json IS NOT NULL AND ctoks_json <> 'null' AND ctoks IS NULL
        THEN '''usage.completion_tokens'' must be an integer from 0 to 2^31-1, got ' || {_shown('ctoks_json')}
      WHEN ptoks_json IS NOT NULL AND ptoks_json <> 'null' AND ptoks IS NULL
        THEN '''usage.prompt_tokens'' must be an integer from 0 to 2^31-1, got ' || {_shown('ptoks_json')}
      WHEN guess_chance IS NOT NULL AND NOT coalesce(guess BETWEEN 0 AND 1, false)
        THEN '''guess_chance'' must be a number from 0 to 1, got ' || {_shown('guess_chance')}
      {_flag_problem('is_valid')}
      {_flag_problem('is_correct')}
      {_flag_problem('is_truncated')}
      WHEN task_version IS NOT NULL AND task_version_i IS NULL
        THEN '''task_version'' must be a positive integer, got ' || {_shown('task_version')}
      WHEN grader_version IS NOT NULL AND grader_version_i IS NULL
        THEN '''grader_version'' must be a positive integer, got ' || {_shown('grader_version')}
    END
"""


def record_query(expect: tuple | None) -> str:
    """SQL (CTEs to follow ``WITH raw AS (...),``) turning ``raw`` rows into checked records.

    ``raw`` has a column per FIELDS (raw JSON; the TEXT_FIELDS as text) and ``file``.

    Output columns: file, problem (NULL when the record is a sample or unanswered),
    unanswered, model, template, sampler, base_task, task, params (raw JSON text),
    manifold (raw JSON text), sample_index, outcome, ctoks, ptoks, guess,
    task_version, grader_version, abytes (UTF-8 bytes of reasoning + answer), cbytes
    (their gzip size from a usable ``text_size``, else NULL) and text (reasoning +
    answer, only where cbytes is NULL: the scan deflates it). ``expect``
    (dataset mode: the eval's triple, bound as $m, $t, $s) refuses answered records
    of another eval.
    """
    mismatch = ""
    if expect is not None:
        mismatch = ("WHEN NOT unanswered AND (model_s <> $m OR template_s <> $t OR sampler_s <> $s) "
                    "THEN 'record is ' || model_s || '|' || template_s || '|' || sampler_s || "
                    "', not this eval''s ' || $m || '|' || $t || '|' || $s || '; skipped'")
    return f"""
    tokens AS ({_TOKENS}),
    typed AS ({_TYPED}),
    checked AS (
      SELECT *, answer IS NULL AND usage IS NULL AS unanswered, {_PROBLEM} AS problem0,
             strlen(coalesce(reasoning_s, '')) + strlen(coalesce(answer_s, '')) AS abytes0 FROM typed
    ),
    sized AS (
      SELECT *, CASE WHEN sizes[3] = '"{TEXT_SIZE_METHOD}"' AND sizes[1] = CAST(abytes0 AS VARCHAR)
                     THEN {_int_field('sizes[2]', 1)} END AS cbytes0
      FROM checked
    )
    SELECT file,
           CASE WHEN problem0 IS NOT NULL THEN problem0 {mismatch} END AS problem,
           unanswered, check_text,
           model_s AS model, template_s AS template, sampler_s AS sampler, base_task_s AS base_task,
           CASE WHEN task_s IS NULL OR task_s = '' THEN base_task_s ELSE task_s END AS task,
           params, coalesce(manifold, '{{}}') AS manifold,
           TRY_CAST(index_text AS INTEGER) AS sample_index,
           CAST(CASE WHEN {_bool('is_truncated')} THEN {OUTCOME_TRUNCATED}
                     WHEN {_bool('is_correct')} THEN {OUTCOME_CORRECT}
                     WHEN NOT coalesce({_bool('is_valid')}, false) THEN {OUTCOME_INVALID}
                     ELSE {OUTCOME_INCORRECT} END AS UTINYINT) AS outcome,
           coalesce(ctoks, 0) AS ctoks, coalesce(ptoks, 0) AS ptoks, coalesce(guess, 0.0) AS guess,
           coalesce(task_version_i, 1) AS task_version, coalesce(grader_version_i, 1) AS grader_version,
           abytes0 AS abytes, cbytes0 AS cbytes,
           CASE WHEN cbytes0 IS NULL THEN coalesce(reasoning_s, '') || coalesce(answer_s, '') END AS text
    FROM sized
    """


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
