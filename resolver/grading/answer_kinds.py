"""Reading one answer of a given kind out of the located answer text (docs/grading.md).

A task declares its `answer_kind`; these rules are all grading knows about it:

* `choice`   an option of a multiple-choice question: "(C)", "C", "Option C", the
             full option text ("A Star Is Born", "a trapezoid") or both. A bare
             letter is a letter; a text is matched against the option list, never
             read as a letter because it starts with "A". Letter and text that name
             different options, or two options joined by "or", are no answer.
* `integer`  a whole number: "-7", "**-7**", "car 4", "nine", "3 * 4 - 5 = -7" (the
             result after the last "="). Two different numbers joined by "or", "/" or
             a comma are a hedge: no answer.
* `number`   like integer, decimals allowed ("4.50" = "4.5", "$2,362" = "2362").
* `literal`  one of the response_enum words, any case ("TRUE", "true."). For a
             two-word enum the words "true" / "false" always mean its first / second
             word ("False" under T/F is F). "TRUE or FALSE" is a hedge: no answer.
* `list`     items one per line (bullets and numbers dropped), or one line split at
             commas, else at spaces; in [brackets], \\boxed{} or math; an intro line
             ending in ":" and one trailing comment line are not items.
* `numbers`  a list whose items must all be numbers (canonicalised); "or" is a hedge.
* `brackets` a run of bracket characters, spaces/commas ignored; a trailing
             "(comment ...)" or "— comment" is not part of it.
* `text`     the answer line, whitespace collapsed.

Every function is pure; `extract_by_kind` returns the canonical answer or None.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Mapping, Sequence

from resolver.grading.answer_text import TRAILING_PUNCT, WRAPPERS, Hedge, clean_line, first_line, later_boxed_lines, unbox_spread

# A number: optional sign (ASCII or U+2212), thousands commas only in groups of three.
_NUMBER = re.compile(
    r"(?<![\w.])[-+\u2212]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
)
# Two different candidates joined like this are a hedge, not an answer.
_HEDGE_JOIN = r"\s*(?:,?\s*\bor\b|/|\|)\s*"
_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
_WORD_NUMBER = re.compile(
    r"\b(?:(?P<tens>" + "|".join(_TENS) + r")(?:[-\s](?P<unit>" + "|".join(_SMALL[1:10]) + r"))?"
    r"|(?P<small>" + "|".join(sorted(_SMALL, key=len, reverse=True)) + r")"
    r"|(?P<times>" + "|".join(_TIMES) + r"))\b", re.IGNORECASE)
_LEAD_IN = re.compile(
    r"^(?:(?:the\s+)?(?:correct\s+|final\s+|best\s+|right\s+)?(?:answer|option|choice)\s*(?:is\b)?\s*[:\-]?"
    r"|(?:it|this|that)\s+is|it's|the\s+\w+\s+(?:is|are))\s*", re.IGNORECASE)
_OPTION_LINE = re.compile(r"^\s*\(([A-Za-z])\)\s+(.+?)\s*$")
_PAREN_LABEL = re.compile(r"^[(\[]\s*([A-Za-z])\s*[)\]]")
_BARE_LABEL = re.compile(r"^([A-Za-z])(?=$|[.):,]|\s*[-\u2014\u2013]\s|\s+or\b|\s*/)")
_ANY_PAREN_LABEL = re.compile(r"\(\s*([A-Za-z])\s*\)")
_STATED = re.compile(r"\b(?:is|are|equals|was)\s+(?=[*$\s]*[-+\u2212]?\d)", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\b", re.IGNORECASE)
# A whole line that is an unevaluated expression ("-4+ -9*2 * -8"): no result was stated.
_OPERAND = r"[\s()\[\]]*[-+\u2212]?\d+(?:\.\d+)?[\s()\[\]]*"
_EXPRESSION = re.compile(_OPERAND + r"(?:[-+*/^\u00d7\u00f7\u2212\u22c5]" + _OPERAND + r")+\.?")
_JOINED_NUMBER = re.compile(_HEDGE_JOIN + r"(?:[A-Za-z#]+\s+){0,2}#?(" + _NUMBER.pattern + ")")
_COMMA_NUMBER = re.compile(r"\s*,\s*(" + _NUMBER.pattern + r")\s*$")
_OFFERED_NUMBER = re.compile(r"\b(?:or|maybe|perhaps|possibly)\b[^\d\n]{0,20}?(" + _NUMBER.pattern + ")", re.IGNORECASE)
_DISPLAY_MATH = re.compile(r"^\s*\\\[(.*)\\\]\s*$")
_INLINE_MATH = re.compile(r"^\s*\\\((.*?)\\\)")
_BRACKET_COMMENT = re.compile(r"\s(?:\(\s*[A-Za-z]|\u2014|\u2013|-{1,2}\s).*$")
_BRACKET_NOISE = re.compile(r"[`*\"',]")
_NEGATION = re.compile(r"\b(?:not|never|neither|nor|none|no)\b|n't\b", re.IGNORECASE)
_NORM_DROP = re.compile(r"['\"*_`\u201c\u201d]")
_MONTHS = {name[:3]: name for name in ("january february march april may june july august september "
                                       "october november december").split()} | {"sept": "september"}
_MONTH_ABBREVIATION = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?")
_LIST_ARROW = re.compile(r"\s*(?:\u2192|->|=>|\u27f6)\s*")
_LIST_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_BRACKET_RUN = re.compile(r"[()\[\]{}<>](?:[\s()\[\]{}<>]*[()\[\]{}<>])?")
_LATEX_BRACKETS = ((r"\{", "{"), (r"\}", "}"), (r"\langle", "<"), (r"\rangle", ">"), (r"\lbrace", "{"),
                   (r"\rbrace", "}"), (r"\lbrack", "["), (r"\rbrack", "]"), (r"\lt", "<"), (r"\gt", ">"))


# ---- numbers ---------------------------------------------------------------------------
def _canonical_number(raw: str) -> str | None:
    try:
        value = Decimal(raw.replace(",", "").replace("\u2212", "-"))
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def _word_value(found: re.Match) -> int:
    if found.group("small"):
        return _SMALL.index(found.group("small").lower())
    if found.group("times"):
        return _TIMES[found.group("times").lower()]
    unit = found.group("unit")
    return 10 * (_TENS.index(found.group("tens").lower()) + 2) + (_SMALL.index(unit.lower()) if unit else 0)


def _word_number(text: str) -> str | None:
    """The one number written in words on a line without digits ("nine", "car five", "twice")."""
    if _NEGATION.search(text):
        return None  # "none of the five cars"
    values = {_word_value(found) for found in _WORD_NUMBER.finditer(text)}
    return str(values.pop()) if len(values) == 1 else None


def _result_part(line: str) -> str:
    """The part of an answer line that states the result.

    "3 * 4 - 5 = -7": after the last "="; "The units_sold of Raven Camera 8 is 962"
    (a sentence, not starting with a number): after the last "is"/"are" that a number
    follows. The whole line when that part holds no number.
    """
    if "=" in line:
        result = line.rsplit("=", 1)[1]
        if _NUMBER.search(result):
            return result
    if not _NUMBER.match(line.strip().lstrip("*$")):
        stated = list(_STATED.finditer(line))
        if stated:
            return line[stated[-1].end():]
    return line


def _extract_number(text: str) -> str | None:
    line = clean_line(first_line(text))
    if isinstance(line, Hedge):
        return None
    line = _result_part(line)
    line = line.replace("$", " ").replace("\u20ac", " ").replace("\u00a3", " ")
    if _BETWEEN.search(line) or _EXPRESSION.fullmatch(line.strip()):
        return None
    numbers = list(_NUMBER.finditer(line))
    if not numbers:
        return _word_number(line)
    first = _canonical_number(numbers[0].group(0))
    after = line[numbers[0].end():]
    # "-7 or -5", "8/9", "7, 9", and "2 (or 3 if ...)", "12, maybe 13" later on the line
    other = _JOINED_NUMBER.match(after) or _COMMA_NUMBER.match(after) or _OFFERED_NUMBER.search(after)
    if other is not None and _canonical_number(other.group(1)) != first:
        return None
    return first


def _extract_integer(text: str) -> str | None:
    """A whole number; "12.0" counts, "12.5" is not an integer."""
    number = _extract_number(text)
    if number is None or not re.fullmatch(r"-?\d+", number):
        return None
    return number


# ---- choices ---------------------------------------------------------------------------
def choice_options(problem: str | None, response_enum: Sequence[str] | None) -> dict[str, str]:
    """`{"(A)": "Black Panther", ...}` read from the problem's "(A) text" option lines."""
    if not problem:
        return {}
    wanted = set(response_enum or ())
    options = {}
    for line in problem.splitlines():
        found = _OPTION_LINE.match(line)
        if found:
            label = f"({found.group(1).upper()})"
            if not wanted or label in wanted:
                options[label] = found.group(2)
    return options


def _norm(text: str) -> str:
    """Case, quotes, apostrophes, emphasis and month abbreviations do not tell options apart."""
    text = text.casefold().replace("\u2019", "'").replace("\u2018", "'")
    text = _NORM_DROP.sub("", text)
    text = _MONTH_ABBREVIATION.sub(lambda m: _MONTHS[m.group(1)], text)
    return " ".join(text.split())


def _text_option(body: str, options: Mapping[str, str]) -> tuple[str | None, str]:
    """(option whose full text starts `body`, the rest of body); article-insensitive."""
    plain = _norm(body)
    for strip_article in (False, True):
        subject = _ARTICLE.sub("", plain) if strip_article else plain
        best = None
        for label, option in options.items():
            target = _norm(option)
            if strip_article:
                target = _ARTICLE.sub("", target)
            rest = subject[len(target):]
            if target and subject.startswith(target) and re.match(r"^(?:$|[.,;:!]|\s*[(\[\u2014\u2013-]|\s+or\b|\s*/)", rest):
                if best is None or len(target) > len(best[1]):
                    best = (label, target, rest)
        if best:
            return best[0], best[2]
    return None, body


def _texts_named(body: str, options: Mapping[str, str]) -> set[str]:
    """Options whose full text (case as printed, article optional) stands as words in body."""
    plain = " ".join(body.replace("\u2019", "'").split())
    named = set()
    for label, option in options.items():
        text = _ARTICLE.sub("", " ".join(option.replace("\u2019", "'").split()))
        if text and re.search(r"(?<![\w'])" + re.escape(text) + r"(?![\w'])", plain):
            named.add(label)
    return named


def _label(body: str, options: Mapping[str, str]) -> tuple[str | None, str]:
    """(option named at the start of body, what follows it)."""
    found = _PAREN_LABEL.match(body)
    if found:
        return f"({found.group(1).upper()})", body[found.end():]
    found = _BARE_LABEL.match(body)
    if found:
        return f"({found.group(1).upper()})", body[found.end():]
    # "A Senna": a bare letter followed by that option's own text
    found = re.match(r"^([A-Za-z])\s+(.+)$", body)
    if found:
        label = f"({found.group(1).upper()})"
        if label in options and _text_option(found.group(2), {label: options[label]})[0]:
            return label, found.group(2)
    return _text_option(body, options)


def _extract_choice(text: str, response_enum: Sequence[str] | None, options: Mapping[str, str] | None) -> str | None:
    options = options or {}
    line = clean_line(first_line(text))
    if isinstance(line, Hedge):
        return None
    body = _LEAD_IN.sub("", line).strip(WRAPPERS)
    choice, rest = _label(body, options)
    if choice is None:
        # "Olivia has Middlemarch.", "I'd go with (B)": the one option named on the line
        named = {f"({m.upper()})" for m in _ANY_PAREN_LABEL.findall(body)}
        if not _NEGATION.search(body):  # "it is not a circle" names no answer
            named |= _texts_named(body, options)
        return named.pop() if len(named) == 1 else None
    rest = rest.strip()
    if re.match(_HEDGE_JOIN, rest) or re.match(r"^(?:-|\u2013|to)\s*\(", rest) or _PAREN_LABEL.match(rest):
        # something joined on: the same option again ("(C) August 7, 2015"), or another (a hedge)
        joined = re.sub(r"^(?:" + _HEDGE_JOIN + r"|(?:-|\u2013|to)\s*)", "", rest)
        second, _ = _label(joined.strip(WRAPPERS), options)
        if second is not None and second != choice:
            return None
    described = re.sub(r"^[\s.:)\-\u2014\u2013,]+", "", rest)
    if described:
        second, _ = _label(described, options) if not _BARE_LABEL.match(described) else (None, "")
        if second is not None and second != choice:
            return None  # "(C) August 7, 2014": letter and text disagree
    return choice


# ---- literals --------------------------------------------------------------------------
def _literal_of(word: str, by_fold: Mapping[str, str], enum: Sequence[str]) -> str | None:
    folded = word.casefold()
    if folded in by_fold:
        return by_fold[folded]
    if len(enum) == 2 and folded in ("true", "false"):
        return enum[0] if folded == "true" else enum[1]
    return None


# A hedging word; another candidate within the next three words makes a hedge.
_OFFERED_LITERAL = re.compile(r"\bor\b|\bmaybe\b|\bpossibly\b|\bperhaps\b|\bprobably\b|/", re.IGNORECASE)


def _extract_literal(text: str, response_enum: Sequence[str] | None) -> str | None:
    line = clean_line(first_line(text))
    if isinstance(line, Hedge) or not line:
        return None
    if not response_enum:
        return re.split(r"[\s,;.!]+", line, maxsplit=1)[0].strip(WRAPPERS) or None
    enum = list(response_enum)
    by_fold = {option.casefold(): option for option in enum}
    whole = by_fold.get(line.casefold())
    if whole:
        return whole  # "NOT SURE" style options of several words
    body = re.sub(r"^either\s+", "", line, flags=re.IGNORECASE)
    tokens = list(re.finditer(r"[^\W_]+", body))
    if not tokens:
        return None
    first = _literal_of(tokens[0].group(0), by_fold, enum)
    if first is not None:
        joined = re.match(_HEDGE_JOIN + r"([^\W_]+)", body[tokens[0].end():])
        if joined and _literal_of(joined.group(1), by_fold, enum) not in (None, first):
            return None
        # "TRUE or maybe FALSE", "TRUE, possibly FALSE": another option offered later on
        # the line (an explanation in parentheses may name other literals freely)
        rest = re.sub(r"\([^)]*\)", " ", body[tokens[0].end():])
        for offered in _OFFERED_LITERAL.finditer(rest):
            following = re.findall(r"[^\W_]+", rest[offered.end():])[:3]
            if any(_literal_of(word, by_fold, enum) not in (None, first) for word in following):
                return None
        return first
    # "The expression evaluates to TRUE": the one option named anywhere on the line
    named = {_literal_of(t.group(0), by_fold, enum) for t in tokens} - {None}
    return named.pop() if len(named) == 1 else None


# ---- lists -----------------------------------------------------------------------------
def _block(text: str, bracket_lines: bool = False) -> list[str]:
    """The answer's lines: a fenced block's content, else lines up to the first blank line.

    Lines holding only "[" or "]" (a list printed as JSON) are dropped unless
    `bracket_lines`, where they may be the answer itself.
    """
    fenced = re.match(r"\s*```[^\n]*\n(.*?)(?:```|$)", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    lines: list[str] = []
    for raw in text.strip().splitlines():
        if not raw.strip():
            if lines:
                break
            continue
        lines.append(raw)
    dropped = {"\\[", "\\]", "\\(", "\\)", "$$"} | (set() if bracket_lines else {"[", "]"})
    return [ln for ln in lines if ln.strip() and ln.strip() not in dropped]


def _items_of_line(line: str) -> list[str]:
    line = re.sub(r"\s+\((?=[^()]*[A-Za-z])[^()]*\)\s*$", "", line.strip())  # "(each step adds 8)"
    line = re.sub(r"(?<=\S)\.\s+[A-Z].*$", "", line)  # a sentence after the list
    line = line.strip().rstrip(TRAILING_PUNCT).strip()
    if len(line) > 1 and line[0] + line[-1] in ("[]", "()", "{}"):
        line = line[1:-1]
    if _LIST_ARROW.search(line):
        line = _LIST_ARROW.sub(", ", line)  # "clay -> fog -> hotel"
    parts = re.split(r"\s*[,;]\s*", line) if re.search(r"[,;]", line) else line.split()
    items = [re.sub(r"^and\s+", "", p.strip(), flags=re.IGNORECASE) for p in parts]
    return [i.strip(WRAPPERS).rstrip(TRAILING_PUNCT) for i in items if i.strip(WRAPPERS)]


def _list_items(text: str) -> list[str] | None:
    text = unbox_spread(text)
    if isinstance(text, Hedge):
        return None
    lines = _block(text)
    if len(lines) > 1 and lines[0].rstrip(" *_").endswith(":"):
        lines = lines[1:]  # "Here is the sorted list:"
    if not lines:
        return None
    head = clean_line(lines[0])
    if isinstance(head, Hedge):
        return None
    if len(lines) == 1 or len(_items_of_line(head)) > 1 and re.search(r"[,;]", head):
        return _items_of_line(head) or None
    items = []
    for line in lines:
        item = clean_line(_LIST_BULLET.sub("", line)).rstrip(",;")
        item = item.strip(WRAPPERS)
        if item:
            items.append(item)
    if (len(items) > 2 and len(items[-1].split()) > 1 and all(len(i.split()) == 1 for i in items[:-1])
            and not re.search(r"\bor\b", items[-1], re.IGNORECASE)):
        items = items[:-1]  # "The words are now in alphabetical order." (but "16 or 24" is a hedged item)
    return items or None


def _extract_list(text: str) -> str | None:
    items = _list_items(text)
    return "\n".join(items) if items else None


def _extract_numbers(text: str) -> str | None:
    items = _list_items(text)
    if not items or any(re.search(r"\bor\b", i, re.IGNORECASE) for i in items):
        return None
    if len(items) > 1:
        # "The next numbers are 9, 17, ...": a lead-in before the first number
        items[0] = re.sub(r"^.*?\b(?:is|are)\b\s*:?\s*(?=[-+\u2212\d])", "", items[0])
    numbers = [_canonical_number(i) if _NUMBER.fullmatch(i) else None for i in items]
    canonical = [n for n in numbers if n is not None]
    if len(canonical) < len(numbers):
        return None
    return "\n".join(canonical)


# ---- brackets and text ---------------------------------------------------------------------
def _extract_brackets(text: str) -> str | None:
    lines = _block(text, bracket_lines=True)
    line = lines[0] if lines else ""
    line = _INLINE_MATH.sub(r"\1", line.replace("$", ""))  # "\\( ) > ] \\)"
    opening = line.find("\\boxed{")
    if opening >= 0:
        # brace matching cannot work here: "\boxed{} ]}" holds an unbalanced brace
        closing = line.rfind("}")
        if closing > opening + len("\\boxed{"):
            line = line[opening + len("\\boxed{"):closing]
    for latex, char in _LATEX_BRACKETS:
        line = line.replace(latex, f" {char} ")
    line = _DISPLAY_MATH.sub(r"\1", line)
    line = _BRACKET_COMMENT.sub("", line)  # "(closing the open brackets)", "— these close ..."
    line = _BRACKET_NOISE.sub(" ", line).strip().rstrip(".")
    runs = _BRACKET_RUN.findall(line)
    if not runs or (len(runs) > 1 and re.search(r"\bor\b", line, re.IGNORECASE)):
        return None
    if line.lstrip().startswith(runs[0][0]) or len(runs) == 1:
        return re.sub(r"\s+", "", runs[0])
    return None


def _extract_text(text: str) -> str | None:
    head = clean_line(first_line(text))
    if isinstance(head, Hedge):
        return None
    return " ".join(head.split()) or None


# ---- dispatch ------------------------------------------------------------------------------
_SINGLE_LINE_KINDS = {"choice", "integer", "number", "literal", "brackets", "text"}


def extract_one(kind: str, text: str, response_enum: Sequence[str] | None, options: Mapping[str, str] | None) -> str | None:
    if kind == "choice":
        return _extract_choice(text, response_enum, options)
    if kind == "integer":
        return _extract_integer(text)
    if kind == "number":
        return _extract_number(text)
    if kind == "literal":
        return _extract_literal(text, response_enum)
    if kind == "list":
        return _extract_list(text)
    if kind == "numbers":
        return _extract_numbers(text)
    if kind == "brackets":
        return _extract_brackets(text)
    if kind == "text":
        return _extract_text(text)
    raise ValueError(f"unknown answer kind {kind!r}")


def extract_by_kind(kind: str, text: str | None, response_enum: Sequence[str] | None,
                    options: Mapping[str, str] | None = None) -> str | None:
    """Canonical answer of the given answer kind found in `text`, or None.

    `options` maps choice labels to option texts (see `choice_options`). A later line
    of the answer that boxes a different answer makes it two answers: None.
    """
    if text is None:
        return None
    found = extract_one(kind, text, response_enum, options)
    if found is not None and kind in _SINGLE_LINE_KINDS:
        for line in later_boxed_lines(text):
            other = extract_one(kind, line, response_enum, options)
            if other is not None and other != found:
                return None
    return found


def canonical_target(kind: str, target: str) -> str:
    """The target in the same canonical form `extract_by_kind` produces."""
    return _canonical_target(kind, str(target))


@lru_cache(maxsize=4096)        # pure, and a run grades the same few targets over and over
def _canonical_target(kind: str, target: str) -> str:
    if kind == "literal":
        return target.strip()
    canonical = extract_by_kind(kind, target, None)
    return canonical if canonical is not None else target.strip()


__all__ = ["extract_by_kind", "canonical_target", "choice_options"]
