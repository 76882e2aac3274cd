"""movies: which option belongs with a group of films the user liked?

A hidden link joins the liked films and the right option: a pair of genres ("Crime"
+ "Thriller") or one theme ("heist"), its kind drawn by `genre_weight` / `theme_weight`.
Each case has one answer a film-literate reader would pick (docs/tasks.md#movies): read
by the liked films' shared genres, shared themes, or both (case-folded, so a "Romance"
film counts for a "romance" link), no wrong option ranks above the answer, the reading
of the link's kind and both together rank it first, a single liked film is linked by its
genres, and wrong options share no part of the link nor a kin of it (`KIN`), except that
with many options a genre pair may be shared in part.

The options are drawn first, as a set in which every film has a link no other option
shares and a liked group of its own; only then is the answer drawn, uniformly. So the
options alone never point at the answer (the odd one out, the only drama).
`reference_count` is the size of the reference group, the liked films plus the right
answer (`reference_count: 4` lists three liked films); a smaller group gives less
evidence. More options (`choice_count`) add distractors.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Any, cast

from resolver.core import UserError
from resolver.tasks import Task, TestCase, param, permutation, register
from resolver.tasks.vocab import format_options, load_lines, option_labels


@dataclass(frozen=True, slots=True, kw_only=True)
class MoviesParams:
    reference_count: int = param(
        4, low=2, high=9, doc="reference group: the liked movies shown plus the right answer (4 lists 3 liked movies)")
    choice_count: int = param(4, low=2, high=10, doc="answer options")
    genre_weight: float = param(1.0, low=0.0, high=100.0, doc="relative chance the link is a genre pair")
    theme_weight: float = param(1.0, low=0.0, high=100.0, doc="relative chance the link is a theme")


@dataclass(frozen=True)
class Film:
    title: str
    year: int
    genres: frozenset
    themes: frozenset
    labels: frozenset  # genres and "theme:<name>" together, computed once
    concepts: frozenset  # genres and themes case-folded into one space ("Romance" == "romance")
    genre_keys: frozenset  # genres case-folded
    theme_keys: frozenset  # themes case-folded


@lru_cache(maxsize=None)
def catalogue() -> tuple[Film, ...]:
    films = []
    for row in load_lines("movies.tsv"):
        title, year, genres, themes = row.split("\t")
        genre_set = frozenset(genres.split(","))
        theme_set = frozenset(t for t in themes.split(",") if t)
        films.append(Film(title, int(year), genre_set, theme_set,
                          genre_set | {f"theme:{t}" for t in theme_set},
                          frozenset(x.casefold() for x in genre_set | theme_set),
                          frozenset(x.casefold() for x in genre_set), frozenset(x.casefold() for x in theme_set)))
    return tuple(films)


@lru_cache(maxsize=None)
def _criteria(kind: str, min_members: int) -> tuple[tuple[frozenset, tuple[int, ...]], ...]:
    """Every criterion of this kind with at least `min_members` films: (labels, film indexes)."""
    films = catalogue()
    if kind == "genres":
        names = sorted({g for f in films for g in f.genres})
        candidates = [frozenset(pair) for pair in combinations(names, 2)]
    else:
        candidates = [frozenset({f"theme:{t}"}) for t in sorted({t for f in films for t in f.themes})]
    out = []
    for labels in candidates:
        members = tuple(i for i, f in enumerate(films) if labels <= f.labels)
        if len(members) >= min_members:
            out.append((labels, members))
    return tuple(out)


def _describe(labels: frozenset) -> tuple[list[str], list[str]]:
    genres = sorted(x for x in labels if not x.startswith("theme:"))
    themes = sorted(x[6:] for x in labels if x.startswith("theme:"))
    return genres, themes


@lru_cache(maxsize=None)
def _links(kinds: tuple, min_members: int) -> dict:
    """film index -> [(kind, labels, concepts, members, strict sharers, loose sharers)]: every
    criterion of the allowed kinds with at least `min_members` films that the film has. The
    sharers are bitmasks over catalogue indexes of the films that share it (`_sharers`), so
    "does any of these films share it" is one `&` (docs/decisions.md, issue 38)."""
    out: dict = {}
    for kind in kinds:
        for labels, members in _criteria(kind, min_members):
            concepts = frozenset(x[6:].casefold() if x.startswith("theme:") else x.casefold() for x in labels)
            link = (kind, labels, concepts, members, _sharers(concepts, True), _sharers(concepts, False))
            for i in members:
                out.setdefault(i, []).append(link)
    return out


STRICT, LOOSE = 4, 5  # where a link tuple keeps its sharers, by strictness


@lru_cache(maxsize=None)
def _having() -> dict:
    """concept -> bitmask of the films that have it."""
    out: dict = {}
    for i, film in enumerate(catalogue()):
        for concept in film.concepts:
            out[concept] = out.get(concept, 0) | 1 << i
    return out


def _sharers(link: frozenset, strict: bool) -> int:
    """Bitmask of the films that share the link: strictly, those with any part of it (a film
    with "Crime" but not "Thriller" shares part of Crime + Thriller) or a kin of a part, that
    is any of `_reach(link)`; else those with all of it, or a kin of a part."""
    having = _having()
    kin = 0
    for concept in (_reach(link) if strict else _kin_only(link)):
        kin |= having.get(concept, 0)
    if strict:
        return kin
    every = (1 << len(catalogue())) - 1
    for concept in link:
        every &= having.get(concept, 0)
    return every | kin


@lru_cache(maxsize=None)
def _nested() -> tuple[int, ...]:
    """Per film, the bitmask of films whose genres contain its genres or are contained in them."""
    keys = [f.genre_keys for f in catalogue()]
    return tuple(sum(1 << j for j, other in enumerate(keys) if mine <= other or other <= mine)
                 for mine in keys)


def _mask(films: list[int]) -> int:
    out = 0
    for i in films:
        out |= 1 << i
    return out


_SYMMETRIC_TRIES = 12  # option sets tried where every option must admit a liked group
_SET_PASSES = 6         # shuffled passes over the catalogue to fill one such set
_GROUP_TRIES = 20       # (link, liked films) draws tried for one answer
_ANSWER_FIRST_TRIES = 400


# Names a reader takes for kin of each other: a wrong option may not have a kin of any
# part of the link either (a musical is no fair wrong option for a "music" link, nor a
# World War II film for "war"). Case-folded. See docs/tasks.md#movies.
KIN = (
    ("music", "musical"), ("school", "high school"), ("childhood", "coming of age"),
    ("war", "world war i", "world war ii", "vietnam war", "civil war"),
    ("animals", "dogs", "dinosaurs"), ("police", "detective", "undercover"), ("spies", "undercover"),
    ("marriage", "wedding"), ("space", "aliens"), ("pirates", "sea", "treasure"),
    ("ancient rome", "ancient greece"), ("slavery", "race"), ("heist", "con artist"),
    ("magic", "fairy tale"), ("ghosts", "demons"), ("technology", "artificial intelligence"),
    ("science", "mathematics"), ("journalism", "television", "radio"), ("racing", "cars"),
    ("american football", "football"),
)


@lru_cache(maxsize=None)
def _reach(link: frozenset) -> frozenset:
    """The link's names and their kin."""
    return link.union(*(group for group in map(frozenset, KIN) if group & link))


@lru_cache(maxsize=None)
def _kin_only(link: frozenset) -> frozenset:
    """The kin of the link's names that are not names of the link."""
    return _reach(link) - link


def _free(links: dict, film: int, others: list[int], strict: bool) -> list:
    """The film's criteria that no other film of `others` shares (see `_sharers`)."""
    at = STRICT if strict else LOOSE
    rest = _mask(others) & ~(1 << film)
    return [link for link in links.get(film, ()) if not link[at] & rest]


def _option_set(links: dict, count: int, rng: random.Random, strict: bool) -> list[int] | None:
    """`count` films, no one's genres within another's, each with a criterion no other
    one shares (so each could be the right answer), in random order; None when a few
    passes find none."""
    at = STRICT if strict else LOOSE
    # no option's genres may contain another's, or the genres of a liked group could never
    # rank the smaller above the larger and the two could not each be the answer
    nested = _nested()
    candidates = sorted(links)
    for _ in range(_SET_PASSES):
        chosen: list[int] = []
        taken = 0  # bitmask of chosen
        # free[i]: the criteria of chosen[i] that no other chosen film shares (`_free`, kept
        # up to date as films join instead of recomputed for the whole set at each try)
        free: list[list] = []
        # the films that share every free criterion of some chosen film: one of them joining
        # would leave that film with none
        blocked = 0
        for film in permutation(rng, candidates):
            bit = 1 << film
            if nested[film] & taken or bit & blocked:
                continue
            mine = [link for link in links[film] if not link[at] & taken]
            if mine:
                chosen.append(film)
                if len(chosen) == count:
                    return chosen
                taken |= bit
                free = [[link for link in own if not link[at] & bit] for own in free] + [mine]
                blocked = 0
                for own in free:
                    every = own[0][at]
                    for link in own[1:]:
                        every &= link[at]
                    blocked |= every
    return None


@lru_cache(maxsize=None)
def _key_bits() -> tuple[tuple[int, int, int], ...]:
    """Per film, its genre keys, theme keys and concepts as bitmasks over every concept, so
    the readings below are `&` and `bit_count` instead of set intersections."""
    films = catalogue()
    bit = {c: 1 << n for n, c in enumerate(sorted({c for f in films for c in f.concepts}))}
    return tuple((_mask_of(bit, f.genre_keys), _mask_of(bit, f.theme_keys), _mask_of(bit, f.concepts))
                 for f in films)


def _mask_of(bit: dict, names: frozenset) -> int:
    return sum(bit[n] for n in names)


class _Common:
    """What the liked films have in common, read three ways: their shared genres, their
    shared themes, and both together (case-folded, so genre "Music" is theme "music")."""

    def __init__(self, liked: list[int]):
        bits = _key_bits()
        self.genres, self.themes, self.both = bits[liked[0]]
        for i in liked[1:]:
            genres, themes, both = bits[i]
            self.genres &= genres
            self.themes &= themes
            self.both &= both
        self.single = len(liked) == 1

    def scores(self, index: int) -> tuple[int, int, int]:
        genres, themes, both = _key_bits()[index]
        return ((genres & self.genres).bit_count(), (themes & self.themes).bit_count(),
                (both & self.both).bit_count())


def _wrong_ok(common: _Common, kind: str, sharers: int, answer: tuple, index: int) -> bool:
    """May film `index` be a wrong option? It does not share the link (is not among its
    `sharers`, see `_sharers`), no reading of the
    liked films (genres, themes, both) ranks it above the answer, the reading of the
    link's kind ranks it below, and both together rank it below. With one liked film
    nothing tells which of its themes is meant, so there the genres must decide alone."""
    if sharers >> index & 1:
        return False
    g, t, b = common.scores(index)
    if g > answer[0] or t > answer[1] or b >= answer[2]:
        return False
    if (kind == "genres" or common.single) and g == answer[0]:
        return False
    return not (kind == "themes" and t == answer[1])


def _liked_group(p: MoviesParams, links: dict, options: list[int], answer: int, rng: random.Random,
                 strict: bool) -> tuple[str, frozenset, list[Film]] | None:
    """(kind, labels, liked films) for an answer among fixed options: reference_count - 1
    films of one of its free criteria, not among the options, against which every other
    option is a fair wrong option (`_wrong_ok`); or None."""
    films = catalogue()
    need = p.reference_count - 1
    wrong = [o for o in options if o != answer]
    at = STRICT if strict else LOOSE
    draws = []
    for link in _free(links, answer, options, strict):
        kind, labels, members, sharers = link[0], link[1], link[3], link[at]
        pool = [i for i in members if i not in options]
        if need == 1:  # few single films: try them all, in random order
            draws += [(kind, labels, sharers, [i]) for i in pool]
        elif len(pool) >= need:
            draws += [(kind, labels, sharers, pool)] * _GROUP_TRIES
    for kind, labels, sharers, pool in rng.sample(draws, min(len(draws), _GROUP_TRIES * 4)):
        liked = pool if need == 1 else rng.sample(pool, need)
        common = _Common(liked)
        scores = common.scores(answer)
        if all(_wrong_ok(common, kind, sharers, scores, w) for w in wrong):
            return kind, labels, [films[i] for i in liked]
    return None


def _symmetric_problem(p: MoviesParams, links: dict, rng: random.Random, strict: bool,
                       every: bool = True) -> tuple[list[int], int, tuple[str, frozenset, list[Film]]] | None:
    """Options drawn first, each with a free link; then a liked group for each; only then
    the answer, uniformly among the options that have one, so the options alone never
    tell which it is. `every`: all options must have a group. None if no such set."""
    for _ in range(_SYMMETRIC_TRIES):
        options = _option_set(links, p.choice_count, rng, strict)
        if options is None:
            return None
        groups = [_liked_group(p, links, options, film, rng, strict) for film in options]
        able = [i for i, g in enumerate(groups) if g is not None]
        if able and (len(able) == len(options) or not every):
            pick = rng.choice(able)
            # `able` holds only the films whose group is not None
            return options, options[pick], cast("tuple[str, frozenset, list[Film]]", groups[pick])
    return None


def _answer_first_problem(p: MoviesParams, links: dict,
                          rng: random.Random) -> tuple[list[int], int, tuple[str, frozenset, list[Film]]] | None:
    """The answer and its liked group first, then wrong options drawn from every film
    that is a fair wrong option for them (when too few films allow a symmetric set)."""
    films = catalogue()
    candidates = sorted(links)
    need = p.reference_count - 1
    for _ in range(_ANSWER_FIRST_TRIES):
        answer = rng.choice(candidates)
        kind, labels, _, members, sharers, _ = rng.choice(links[answer])
        pool = [i for i in members if i != answer]
        liked_ids = rng.sample(pool, need)
        common = _Common(liked_ids)
        scores = common.scores(answer)
        taken = set(liked_ids) | {answer}
        fair = [i for i in range(len(films)) if i not in taken and _wrong_ok(common, kind, sharers, scores, i)]
        if len(fair) >= p.choice_count - 1:
            options = rng.sample(fair, p.choice_count - 1) + [answer]
            rng.shuffle(options)
            return options, answer, (kind, labels, [films[i] for i in liked_ids])
    return None


@register
class Movies(Task[MoviesParams]):
    name = "movies"
    # v2: reference_count counts the answer too (one liked film fewer than v1).
    # v3: every case has one option a film-literate reader would pick (docs/tasks.md#movies):
    # no reading of genres or themes ranks a wrong option above the answer, wrong options
    # share no part of the link where the options allow, a single liked film is linked by
    # genres, the link's kind follows the weights; and the catalogue's theme tags were audited.
    version = 3
    answer_kind = "choice"
    description = ("A user watched and liked the movies listed below. Choose the option that "
                   "belongs with them: the one film that shares what they have in common.")
    answer_format = "Final Answer: (A) - (Z)"
    Params = MoviesParams

    def check_consistency(self, p: MoviesParams) -> None:
        if p.genre_weight + p.theme_weight <= 0:
            raise UserError("task 'movies': genre_weight + theme_weight must be > 0")
        for kind in ("genres", "themes"):
            weight = p.genre_weight if kind == "genres" else p.theme_weight
            if weight > 0 and not _criteria(kind, p.reference_count):
                raise UserError(f"task 'movies': no {kind} criterion has {p.reference_count} "
                                "films; lower reference_count or set its weight to 0")

    def generate(self, p: MoviesParams, rng: random.Random) -> TestCase:
        films = catalogue()
        options: list[Any]  # film indexes from the problem, then the films they name
        answer: Any
        # The kind of link first, by its weight, so the weights are the kinds' shares
        # (drawn per option, the kind with more free links would win more often).
        kind = rng.choices(("genres", "themes"), (p.genre_weight, p.theme_weight))[0]
        links = _links((kind,), p.reference_count)
        # Prefer wrong options that share no part of the link; where too few films allow
        # that with every option a possible answer (many options, genre pairs only),
        # a wrong option may share one genre of the pair but ranks below on genres.
        problem = (_symmetric_problem(p, links, rng, strict=True)
                   or _symmetric_problem(p, links, rng, strict=False)
                   or _symmetric_problem(p, links, rng, strict=True, every=False)
                   or _answer_first_problem(p, links, rng))
        if problem is None:
            raise UserError("task 'movies': no problem found for these parameters; lower choice_count "
                            "or reference_count")
        options, answer, (kind, labels, liked) = problem
        options = [films[i] for i in options]
        answer = films[answer]
        labels_out = option_labels(len(options))
        genres, themes = _describe(labels)
        text = (f"Which movie belongs with this group: {', '.join(f.title for f in liked)}?\n\n"
                f"Options:\n{format_options([f.title for f in options])}")
        return TestCase(
            input=text, target=labels_out[options.index(answer)], response_enum=labels_out,
            guess_chance=1 / len(options),
            genresult={"reference_movies": [f.title for f in liked],
                       "choices": [f.title for f in options],
                       "selected_genres": genres, "selected_themes": themes, "link": kind},
        )
