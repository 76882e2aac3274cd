"""Every target checks out when the problem is re-solved from the rendered text alone.

Each solver here reads only `case.input` (plus public facts such as the calendar or
the film catalogue file) and recomputes the answer with its own logic, written
independently of the generator's code path.
"""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import random
import re

import pytest

from resolver.tasks import get_task

WORD_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def _cases(name, raw, count=40, seed=11):
    task = get_task(name)
    return task.generate_cases(task.validate(raw), random.Random(seed), count)


def _options(text):
    return dict(re.findall(r"^\((\w)\) (.+)$", text, re.M))


def _letter_of(options, value):
    hits = [k for k, v in options.items() if v == value]
    assert len(hits) == 1, (value, options)
    return f"({hits[0]})"


# ---------------------------------------------------------------- cars
def _solve_cars(text):
    n = int(re.search(r"numbered 1 to (\d+)", text).group(1))
    attrs = {int(i): (c, b) for i, c, b in re.findall(r"Car (\d+) is an? (\w+) (\w+)\.", text)}

    def car_named(phrase):
        hits = [i for i, (c, b) in attrs.items() if phrase in (f"the {c} {b}", f"the {c} car", f"the {b}")]
        assert len(hits) == 1, (phrase, attrs)  # a description names exactly one car
        return hits[0]

    def nearest(here, what, way):
        step = 1 if way == "behind" else -1
        car = here + step
        colour, brand = (what[:-len(" car")], None) if what.endswith(" car") else (None, what)
        while attrs[car][0] != colour and attrs[car][1] != brand:
            car += step
        return car

    seats = {p: int(c) for p, c in re.findall(r"(\w+) is in car (\d+)\.", text.split("Then,")[0])}
    refs = {"the front car": 1, "the last car": n, "the car just behind the front car": 2,
            "the car just in front of the last car": n - 1, "the middle car": (n + 1) // 2}
    for line in text.split("\n"):
        if m := re.fullmatch(r"(\w+) moves to car (\d+)\.", line):
            seats[m[1]] = int(m[2])
        elif m := re.fullmatch(r"(\w+) moves to (the (?:front|last|middle) car|the car just .+ car)\.", line):
            seats[m[1]] = refs[m[2]]
        elif m := re.fullmatch(r"(\w+) moves (\w+) cars? (back|forward)\.", line):
            seats[m[1]] += WORD_NUMBERS[m[2]] * (1 if m[3] == "back" else -1)
        elif m := re.fullmatch(r"(\w+) moves into the same car as (\w+)\.", line):
            seats[m[1]] = seats[m[2]]
        elif m := re.fullmatch(r"(\w+) moves to the car (directly|two cars) (behind|in front of) (\w+)'s car\.", line):
            gap = 1 if m[2] == "directly" else 2
            seats[m[1]] = seats[m[4]] + gap * (1 if m[3] == "behind" else -1)
        elif m := re.fullmatch(r"Everyone in car (\d+) moves to car (\d+)\.", line):
            for p in seats:
                if seats[p] == int(m[1]):
                    seats[p] = int(m[2])
        elif m := re.fullmatch(r"(\w+) moves to the nearest (\w+(?: car)?) (behind|in front of) them\.", line):
            seats[m[1]] = nearest(seats[m[1]], m[2], m[3])
        elif m := re.fullmatch(r"(\w+) moves to (the .+)\.", line):
            seats[m[1]] = car_named(m[2])
        assert all(1 <= s <= n for s in seats.values()), line
    person = re.search(r"Which car is (\w+) in at the end\?", text).group(1)
    return str(seats[person])


@pytest.mark.parametrize("raw", [{"moves": 12, "confounders": 4}, {"cars": 11, "people": 9, "moves": 40},
                                 {"operations": 64, "moves": 10}, {"operations": 16 | 8, "moves": 10},
                                 {"operations": 56, "cars": 7, "moves": 9}, {"operations": 1, "moves": 3},
                                 {"operations": 5, "moves": 1, "cars": 3}])
def test_cars_targets_resolve_from_the_text(raw):
    for case in _cases("cars", raw):
        assert _solve_cars(case.input) == case.target


# ---------------------------------------------------------------- shuffle
_MARKER = r"(?:\S+[.):] )?"  # a list anchor in front of a statement: "4.", "b)", "0x1F.", "Neon:"


def _solve_shuffle(text):
    state = dict(re.findall(rf"^{_MARKER}(\w+) (?:is dancing with|has|holds|is playing) (.+)\.$", text, re.M))
    for a, b in re.findall(rf"^{_MARKER}(\w+) and (\w+) (?:swap|switch|trade|exchange)\w* ", text, re.M):
        state[a], state[b] = state[b], state[a]
    person = re.search(r"(?:who is|does|position is) (\w+) (?:dancing|have|hold|playing)", text).group(1)
    return _letter_of(_options(text), state[person])


def test_shuffle_targets_resolve_from_the_text():
    for anchor in range(9):
        for case in _cases("shuffle", {"anchor": anchor, "length": 7, "max_depth": 15,
                                       "confounding_count": 4}, count=10):
            assert _solve_shuffle(case.input) == case.target


def test_shuffle_anchors_mark_statements_and_leave_items_alone():
    """Anchors are list markers: every statement line carries one, the options are
    the theme's own items (the same items as without an anchor)."""
    themes = json.load(open("resolver/tasks/vocab/shuffle.json"))["themes"]
    all_items = {item for theme in themes.values() for item in theme["items"]}
    expected_first = {1: "1.", 2: "a)", 3: "I.", 4: "A.", 5: "2.", 8: "Hydrogen:"}
    for anchor in range(9):
        for case in _cases("shuffle", {"anchor": anchor, "length": 6, "max_depth": 5,
                                       "confounding_count": 2}, count=5):
            assert set(_options(case.input).values()) <= all_items
            story = case.input.split("\n\nOptions:")[0].rsplit("\n\n", 1)[0]  # without the question
            statements = [l for l in story.splitlines()[1:] if l and l != "Then, in this order:"]
            assert len(statements) == 6 + 5 + 2
            marks = [l.split(" ", 1)[0] for l in statements]
            if anchor == 0:
                assert not any(re.fullmatch(r"\S+[.):]", m) for m in marks)
            else:
                assert all(re.fullmatch(r"\S+[.):]", m) for m in marks), marks
                assert len(set(marks)) == len(marks)
            if anchor in expected_first:
                assert marks[0] == expected_first[anchor]
            if anchor == 6:
                assert marks[0] == "13." and marks[-1] == "1."


# ---------------------------------------------------------------- tables
def _parse_table(text):
    body = text.split("\n\n")[1]
    if body.startswith("|"):
        lines = [l.strip("|").split("|") for l in body.splitlines() if not l.startswith("|---")]
        rows = [[c.strip() for c in l] for l in lines]
        return [dict(zip(rows[0], r)) for r in rows[1:]]
    if body.startswith("["):
        return [{k: str(v) for k, v in r.items()} for r in json.loads(body)]
    if body.startswith("{"):
        return [{k: str(v) for k, v in json.loads(l).items()} for l in body.splitlines()]
    if body.startswith("<table>"):
        cells = [re.findall(r"<t[hd]>(.*?)</t[hd]>", l) for l in body.splitlines()[1:-1]]
        return [dict(zip(cells[0], r)) for r in cells[1:]]
    dialect = "excel-tab" if "\t" in body.splitlines()[0] else "excel"
    return list(csv.DictReader(io.StringIO(body), dialect=dialect))


def _solve_tables(text):
    rows = _parse_table(text)
    q = text.rsplit("\n", 1)[1]
    if m := re.fullmatch(r"What is the (\w+) of (.+)\?", q):
        return next(r[m[1]] for r in rows if r["product"] == m[2])
    m = re.search(r"whose (\w+) is (greater than |less than )?(\w+)\?$", q)
    if m[2] == "greater than ":
        chosen = [r for r in rows if int(r[m[1]]) > int(m[3])]
    elif m[2]:
        chosen = [r for r in rows if int(r[m[1]]) < int(m[3])]
    else:
        chosen = [r for r in rows if r[m[1]] == m[3]]
    if q.startswith("How many"):
        return str(len(chosen))
    column = re.search(r"(?:total|highest|lowest) (\w+)", q).group(1)
    values = [int(r[column]) for r in chosen]
    return str(sum(values) if "total" in q else max(values) if "highest" in q else min(values))


@pytest.mark.parametrize("fmt", ["markdown", "csv", "tsv", "json", "jsonl", "html"])
def test_tables_targets_resolve_from_the_rendered_table(fmt):
    for op in ("count", "sum", "max", "min", "lookup"):
        for cols in (2, 5, 13):
            for case in _cases("tables", {"format": fmt, "operation": op, "num_rows": 25, "num_cols": cols}, 4):
                assert _solve_tables(case.input) == case.target, (fmt, op, cols)


# ---------------------------------------------------------------- letters / objects / sort
def test_letters_targets_count_only_the_named_list():
    for case in _cases("letters", {"letters_common": 2, "letters_rare": 1, "target_words": 30,
                                   "confounder_words": 12, "prob_repeat": 0.3}):
        q = case.input.rsplit("\n", 1)[1]
        letters = re.findall(r'"(\w)"', q)
        owner = re.search(r"in (\w+)'s words\?$", q).group(1)
        words = re.search(rf"^{owner}'s words: (.+)$", case.input, re.M).group(1).split(", ")
        assert str(sum(w.lower().count(c) for w in words for c in letters)) == case.target


_DOMAINS = json.load(open("resolver/tasks/vocab/objects.json"))["domains"]
_BY_NOUN = {form: domain for domain, items in _DOMAINS.items() for item in items for form in item.split("|")}
_NOUNS = sorted(_BY_NOUN, key=len, reverse=True)


def _solve_objects(text):
    """Sum the quantities of the items whose category the question asks about."""
    q = text.rsplit("\n", 1)[1]
    asked = {d for d in _DOMAINS if re.search(rf"\b{d}\b", q)}  # labels contain the name
    listing = text.split("\n\n")[0]
    parts = (re.split(r", (?:and )?", listing[len("I have "):-1]) if listing.startswith("I have ")
             else [re.sub(r"^\S+ ", "", line) for line in listing.splitlines()[1:]])
    total = 0
    for part in parts:
        qty, rest = part.split(" ", 1)
        amount = 0 if qty == "no" else 1 if qty in ("a", "an") else WORD_NUMBERS.get(qty) or int(qty)
        noun = next(n for n in _NOUNS if rest.rstrip(".").endswith(n))
        total += amount if _BY_NOUN[noun] in asked else 0
    return str(total)


def test_objects_targets_sum_the_asked_categories():
    for anchor in range(9):
        for case in _cases("objects", {"anchor": anchor, "target_groups": 2, "target_items": 9,
                                       "zero_items": 2, "distractor_count": 6, "prob_adjective": 0.6}):
            assert _solve_objects(case.input) == case.target


def test_sort_targets_are_the_case_insensitive_order():
    for case in _cases("sort", {"length": 30, "prob_mutation": 0.5, "prob_duplication": 0.3}):
        words = case.input.splitlines()[1:]
        expected = sorted((w.lower() for w in words))
        assert [w.lower() for w in case.target.split("\n")] == expected


# ---------------------------------------------------------------- sequence
def _solve_sequence(text):
    """The numbers after the shown ones, by following the stated rules."""
    x = int(re.search(r"Start with (-?\d+)\.", text).group(1))
    step = int(re.search(r"current number plus (\d+)\.", text).group(1))
    skips = [int(d) for d in re.findall(r"multiple of (\d+) is not written", text)]
    mods = [int(d) for d in re.findall(r"divided by (\d+)\.", text)]
    conds = re.findall(r"current number is (even|odd|a multiple of \d+), add (\d+)", text)
    shown = re.search(r"so far is: (.+)$", text, re.M).group(1).split(", ")
    want = int(re.search(r"next (\d+) numbers", text).group(1))
    written = []
    while len(written) < len(shown) + want:
        if not any(x % d == 0 for d in skips):
            written.append(x)
        delta = step
        for test, add in conds:
            hit = (x % 2 == 0 if test == "even" else x % 2 == 1 if test == "odd" else x % int(test.split()[-1]) == 0)
            if hit:
                delta = int(add)
                break
        x += delta
        for m in mods:
            x = x % m if x >= m else x
    assert [str(v) for v in written[:len(shown)]] == shown
    return ", ".join(map(str, written[len(shown):]))


def test_sequence_targets_follow_the_stated_rules():
    for case in _cases("sequence", {"num_rules": 3, "seq_length": 8}, count=60):
        assert _solve_sequence(case.input) == case.target


# ---------------------------------------------------------------- dates
MONTHS = "January February March April May June July August September October November December".split()


def _read_date(text):
    if m := re.fullmatch(r"(\d\d)/(\d\d)/(\d{4})", text):
        return dt.date(int(m[3]), int(m[1]), int(m[2]))
    if m := re.fullmatch(r"(\d\d)/(\d\d)/(\d\d)", text):
        year = int(m[3])
        return dt.date(2000 + year if year < 40 else 1900 + year, int(m[1]), int(m[2]))
    if m := re.fullmatch(r"the (\d+)\w\w day of (\d{4})", text):
        return dt.date(int(m[2]), 1, 1) + dt.timedelta(days=int(m[1]) - 1)
    m = re.fullmatch(r"(\w+) (\d+), (\d{4})", text)
    return dt.date(int(m[3]), MONTHS.index(m[1]) + 1, int(m[2]))


def _shift(day, amount, unit):
    if unit.startswith("day"):
        return day + dt.timedelta(days=amount)
    if unit.startswith("week"):
        return day + dt.timedelta(weeks=amount)
    months = amount * (12 if unit.startswith("year") else 1)
    total = day.year * 12 + day.month - 1 + months
    return day.replace(year=total // 12, month=total % 12 + 1)


def _words_to_int(words):
    tens = {"twenty": 20, "thirty": 30, "forty": 40}
    parts = words.split("-")
    return tens.get(parts[0], 0) + WORD_NUMBERS.get(parts[-1], 0) if parts[0] in tens else (
        {**WORD_NUMBERS, **{"thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
                            "seventeen": 17, "eighteen": 18, "nineteen": 19}}[words])


WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def _solve_dates(text):
    weekday, today = re.search(r"today, (\w+day), (.+?)\.(?: The|\n)", text).groups()
    today = _read_date(today)
    assert WEEKDAYS[today.weekday()] == weekday  # the story's weekday is the calendar's
    span = r"([\w-]+) (days?|weeks?|months?|years?)"
    anchors = {"today": today, "tomorrow": today + dt.timedelta(days=1),
               "yesterday": today - dt.timedelta(days=1)}
    if m := re.search(rf"town fair (?:happened|is planned for) {span} (before|after) today", text):
        n = _words_to_int(m[1]) * (1 if m[3] == "after" else -1)
        anchors["the town fair"] = _shift(today, n, m[2])
    question = re.search(r"^(What .+\?)$", text, re.M).group(1)
    near = {"yesterday": -1, "tomorrow": 1, "the day before yesterday": -2, "the day after tomorrow": 2}
    if m := re.search(r"(?:was it|will it be) (yesterday|tomorrow|the day (?:before|after) \w+)\?", question):
        answer = today + dt.timedelta(days=near[m[1]])
    elif m := re.search(rf"(?:was it|will it be) {span} (ago|from today)\?", question):
        answer = _shift(today, _words_to_int(m[1]) * (-1 if m[3] == "ago" else 1), m[2])
    else:
        m = re.search(rf"(?:date|week is) {span} (before|after) (.+)\?", question)
        answer = _shift(anchors[m[4]], _words_to_int(m[1]) * (1 if m[3] == "after" else -1), m[2])
    if question.startswith("What day of the week"):
        options = {k: v for k, v in _options(text).items()}
        hits = [k for k, v in options.items() if v == WEEKDAYS[answer.weekday()]]
    else:
        options = {k: _read_date(v) for k, v in _options(text).items()}
        hits = [k for k, v in options.items() if v == answer]
    assert len(hits) == 1
    return f"({hits[0]})"


@pytest.mark.parametrize("tier", range(4))
def test_dates_targets_resolve_with_the_calendar(tier):
    for fmt in range(4):
        for case in _cases("dates", {"tier": tier, "format": fmt, "choice_count": 8, "prob_weekday": 0.4},
                           count=20):
            assert _solve_dates(case.input) == case.target, case.input


# ---------------------------------------------------------------- movies
def test_movies_only_the_target_shares_the_most_common_ground():
    films = {}
    for line in open("resolver/tasks/vocab/movies.tsv", encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            title, _, genres, themes = line.rstrip("\n").split("\t")
            # a person reads "Romance" (genre) and "romance" (theme) as the same link
            films[title] = {x.casefold() for x in genres.split(",") + themes.split(",") if x}
    for raw in ({"reference_count": 4, "choice_count": 8}, {"reference_count": 2, "choice_count": 10}):
        for case in _cases("movies", raw):
            liked = re.search(r"this group: (.+)\?\n", case.input).group(1)
            liked_titles = [t for t in films if t in liked and liked.count(t)]
            common = set.intersection(*(films[t] for t in case.genresult["reference_movies"]))
            assert set(case.genresult["reference_movies"]) <= set(liked_titles)
            overlap = {k: len(films[title] & common) for k, title in _options(case.input).items()}
            best = max(overlap.values())
            # the target, and only the target, shares the most of what the group has in common
            assert [f"({k})" for k, v in overlap.items() if v == best] == [case.target] and best >= 1


# ---------------------------------------------------------------- shapes
def _path_pieces(d):
    tokens = re.findall(r"[MLAZmlaz]|-?\d+\.?\d*", d)
    pos, start, pieces, i, closed = (0.0, 0.0), None, [], 0, False
    while i < len(tokens):
        cmd = tokens[i]
        i += 1
        if cmd in "Zz":
            closed = True
            continue
        n = 2 if cmd in "MLml" else 7
        vals = [float(v) for v in tokens[i:i + n]]
        i += n
        end = (vals[-2], vals[-1])
        if cmd.islower():
            end = (pos[0] + end[0], pos[1] + end[1])
        if cmd in "Mm":
            start = end
        else:
            pieces.append(("A" if cmd in "Aa" else "L", pos, end, vals[:3]))
        pos = end
    return start, pieces, closed


def _off_line(a, b, c):
    """Distance of b from the line through a and c."""
    return abs((c[0] - a[0]) * (a[1] - b[1]) - (a[0] - b[0]) * (c[1] - a[1])) / math.dist(a, c)


def _drop_collinear(points, closed):
    """Remove, smallest deviation first, points lying on the line of their neighbours
    (0.3 units absorbs the 0.05 rounding of the coordinates)."""
    points = list(points)
    while len(points) > 2:
        n = len(points)
        inner = range(n) if closed else range(1, n - 1)
        dev = {i: _off_line(points[i - 1], points[i], points[(i + 1) % n]) for i in inner}
        if not dev:
            break
        i = min(dev, key=dev.get)
        if dev[i] > 0.3:
            break
        points.pop(i)
    return points


def _classify(d):
    start, pieces, closed = _path_pieces(d)
    arcs = [p for p in pieces if p[0] == "A"]
    if arcs:
        rx, ry = arcs[0][3][:2]
        if not closed:
            return "arc"
        if any(p[0] == "L" for p in pieces):
            return "sector"
        return "circle" if rx == ry else "ellipse"
    points = [start] + [p[2] for p in pieces]
    if closed and math.dist(points[-1], points[0]) < 1e-6:
        points.pop()
    corners = _drop_collinear(points, closed)
    if not closed:
        return "line"
    if len(corners) == 3:
        return "triangle"
    assert len(corners) == 4, (d, corners)
    sides = [math.dist(corners[i], corners[(i + 1) % 4]) for i in range(4)]
    vec = [(corners[(i + 1) % 4][0] - corners[i][0], corners[(i + 1) % 4][1] - corners[i][1]) for i in range(4)]

    def parallel(u, v):
        return abs(u[0] * v[1] - u[1] * v[0]) < 0.03 * math.hypot(*u) * math.hypot(*v)

    def close(a, b):
        return abs(a - b) < 0.03 * max(a, b)

    right = abs(vec[0][0] * vec[1][0] + vec[0][1] * vec[1][1]) < 0.03 * sides[0] * sides[1]
    pairs = parallel(vec[0], vec[2]) + parallel(vec[1], vec[3])
    if pairs == 2:
        if right:
            return "square" if close(sides[0], sides[1]) else "rectangle"
        return "rhombus" if close(sides[0], sides[1]) else "parallelogram"
    if pairs == 1:
        return "trapezoid"
    if (close(sides[0], sides[1]) and close(sides[2], sides[3])) or (
            close(sides[1], sides[2]) and close(sides[3], sides[0])):
        return "kite"
    raise AssertionError(f"unclassifiable quadrilateral {d}")


@pytest.mark.parametrize("raw", [{}, {"split_edges": 2}, {"relative": 1, "split_edges": 3},
                                 {"min_scale": 10, "max_scale": 12, "relative": 1}])
def test_shapes_targets_match_an_independent_geometry_reading(raw):
    for shape in range(12):
        for case in _cases("shapes", {**raw, "shape_type": shape, "choice_count": 12}, count=6):
            d = re.search(r'd="([^"]+)"', case.input).group(1)
            assert _letter_of(_options(case.input), _classify(d)) == case.target, d


def test_shape_arcs_end_on_their_own_ellipse():
    """Every arc piece of an ellipse ends on the ellipse its radii and angle describe
    (pieces are evenly spaced in angle, so their mean point is the centre)."""
    for case in _cases("shapes", {"shape_type": 7, "max_offset": 0}, count=20):
        d = re.search(r'd="([^"]+)"', case.input).group(1)
        start, pieces, _ = _path_pieces(d)
        rx, ry, angle = pieces[0][3]
        points = [start] + [p[2] for p in pieces]
        cx = sum(p[0] for p in points[:-1]) / len(points[:-1])
        cy = sum(p[1] for p in points[:-1]) / len(points[:-1])
        t = math.radians(angle)
        for x, y in points:
            u = ((x - cx) * math.cos(t) + (y - cy) * math.sin(t)) / rx
            v = (-(x - cx) * math.sin(t) + (y - cy) * math.cos(t)) / ry
            assert abs(u * u + v * v - 1) < 0.05
