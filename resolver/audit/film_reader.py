"""The reader's check of the movies task: would a film-literate reader pick the target?

Written apart from the generator (resolver.tasks.movies): it reads the catalogue file
itself and the problem as a model sees it (the liked titles and the options), never
the generator's links, choices or `genresult`. A reader who knows each film's genres
and central themes (the catalogue's facts, case-folded) reads a case three ways:

* genres: the genres every liked film has; each option scores how many it has;
* themes: the same with the themes;
* both: genres and themes as one set of names ("Music" the genre is "music" the theme).

A reading *determines* a case when exactly one option has the top score and that score
is above zero. A fair case (docs/tasks.md#movies) is one where

* the genres never determine a wrong option;
* with a single liked film the case is not decided by its themes alone (genres do not
  determine it, themes do): nothing tells the reader which of its themes is meant;
* both readings together determine the target.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Protocol

CATALOGUE = Path(__file__).resolve().parents[1] / "tasks" / "vocab" / "movies.tsv"
READINGS = ("genres", "themes", "both")
_QUESTION = re.compile(r"^Which movie belongs with this group: (.+)\?$", re.MULTILINE)
_OPTION = re.compile(r"^\(([A-Z])\) (.+?)\s*$", re.MULTILINE)


@lru_cache(maxsize=4)
def read_catalogue(path: str = str(CATALOGUE)) -> dict:
    """title -> {"genres": set, "themes": set, "both": set}, every name case-folded."""
    films = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        title, _year, genres, themes = line.split("\t")
        g = frozenset(x.strip().casefold() for x in genres.split(",") if x.strip())
        t = frozenset(x.strip().casefold() for x in themes.split(",") if x.strip())
        films[title] = {"genres": g, "themes": t, "both": g | t}
    return films


def split_titles(text: str, titles: Iterable[str]) -> list[str] | None:
    """The comma-separated list `text` cut into catalogue titles (a title may itself hold
    ", ", as "The Good, the Bad and the Ugly"); None if no cut uses only known titles."""
    known = set(titles)
    memo: dict = {}

    def cut(start: int) -> list[str] | None:
        if start == len(text):
            return []
        if start not in memo:
            memo[start] = None
            for end in range(len(text), start, -1):
                piece = text[start:end]
                if piece in known and (end == len(text) or text.startswith(", ", end)):
                    rest = cut(end + 2 if end < len(text) else end)
                    if rest is not None:
                        memo[start] = [piece] + rest
                        break
        return memo[start]
    return cut(0)


def read_problem(text: str, films: dict) -> tuple[list[str], list[tuple[str, str]]]:
    """(liked titles, [(label "(A)", option title)]) of one rendered problem."""
    question = _QUESTION.search(text)
    liked = split_titles(question.group(1), films) if question else None
    if not liked:
        raise ValueError("not a movies problem: no liked films found in the question")
    body = text.rpartition("Options:")[2]
    options = [(f"({m.group(1)})", m.group(2)) for m in _OPTION.finditer(body)]
    return liked, options


def best_option(liked: list[str], options: list[str], films: dict, reading: str) -> int | None:
    """The index of the one option with the most of what every liked film has (in this
    reading), or None when the top score is 0 or shared."""
    common = frozenset.intersection(*(films[t][reading] for t in liked))
    scores = [len(films[o][reading] & common) for o in options]
    top = max(scores)
    return scores.index(top) if top > 0 and scores.count(top) == 1 else None


@dataclass
class CaseReading:
    liked: int                      # liked films shown
    target: int                     # index of the target option
    best: dict                      # reading -> index of its determined option, or None

    @property
    def genres_favour_wrong(self) -> bool:
        return self.best["genres"] is not None and self.best["genres"] != self.target

    @property
    def theme_alone_single(self) -> bool:
        return self.liked == 1 and self.best["genres"] is None and self.best["themes"] is not None

    @property
    def both_not_target(self) -> bool:
        return self.best["both"] != self.target

    @property
    def fair(self) -> bool:
        return not (self.genres_favour_wrong or self.theme_alone_single or self.both_not_target)


def read_case(text: str, target: str, films: dict | None = None) -> CaseReading:
    films = films if films is not None else read_catalogue()
    liked, options = read_problem(text, films)
    labels = [label for label, _ in options]
    titles = [title for _, title in options]
    best = {r: best_option(liked, titles, films, r) for r in READINGS}
    return CaseReading(len(liked), labels.index(target), best)


@dataclass
class PointReading:
    """Per point: how many cases each reading determines, and how many of those it
    determines as the target; and the counts of unfair cases."""
    step: str
    task: str
    tier: str
    cases: int = 0
    single: int = 0                                    # cases with one liked film
    determined: dict = field(default_factory=lambda: dict.fromkeys(READINGS, 0))
    right: dict = field(default_factory=lambda: dict.fromkeys(READINGS, 0))
    genres_favour_wrong: int = 0
    theme_alone_single: int = 0
    both_not_target: int = 0

    def add(self, reading: CaseReading) -> None:
        self.cases += 1
        self.single += reading.liked == 1
        for r in READINGS:
            if reading.best[r] is not None:
                self.determined[r] += 1
                self.right[r] += reading.best[r] == reading.target
        self.genres_favour_wrong += reading.genres_favour_wrong
        self.theme_alone_single += reading.theme_alone_single
        self.both_not_target += reading.both_not_target

    @property
    def unfair(self) -> int:
        return self.genres_favour_wrong + self.theme_alone_single + self.both_not_target


class _Case(Protocol):
    """What the reader reads of a generated case (a TestCase: the reader never imports the generator)."""

    input: str
    target: str


def read_point(step: str, task: str, tier: str, cases: Iterable[_Case]) -> PointReading:
    """The reader's check of one point's generated cases (TestCase: input, target)."""
    films = read_catalogue()
    point = PointReading(step, task, tier)
    for case in cases:
        point.add(read_case(case.input, case.target, films))
    return point


# generator name -> reader of its points; the shortcut audit runs the one a point needs
READERS = {"movies": read_point}
