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

from resolver.core import UserError
from resolver.tasks import Param, Task, TestCase, register
from resolver.tasks.vocab import format_options, load_lines, option_labels


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
    """film index -> [(kind, labels, concepts, members)]: every criterion of the allowed
    kinds with at least `min_members` films that the film has."""
    out: dict = {}
    for kind in kinds:
        for labels, members in _criteria(kind, min_members):
            concepts = frozenset(x[6:].casefold() if x.startswith("theme:") else x.casefold() for x in labels)
            for i in members:
                out.setdefault(i, []).append((kind, labels, concepts, members))
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


def _shares(link: frozenset, concepts: frozenset, strict: bool) -> bool:
    """Does a film with `concepts` share the link? Strictly: any part of it (a film with
    "Crime" but not "Thriller" shares part of Crime + Thriller) or a kin of a part, that is
    any of `_reach(link)`; else: all of it, or a kin of a part."""
    if strict:
        return not _reach(link).isdisjoint(concepts)
    return link <= concepts or not _kin_only(link).isdisjoint(concepts)


def _free(links: dict, film: int, others: list[int], strict: bool) -> list:
    """The film's criteria that no other film of `others` shares (see `_shares`)."""
    films = catalogue()
    rest = [films[o].concepts for o in others if o != film]
    return [link for link in links.get(film, ()) if not any(_shares(link[2], c, strict) for c in rest)]


def _option_set(links: dict, count: int, rng: random.Random, strict: bool) -> list[int] | None:
    """`count` films, no one's genres within another's, each with a criterion no other
    one shares (so each could be the right answer), in random order; None when a few
    passes find none."""
    films = catalogue()
    candidates = sorted(links)
    for _ in range(_SET_PASSES):
        chosen: list[int] = []
        # free[i]: the criteria of chosen[i] that no other chosen film shares (`_free`, kept
        # up to date as films join instead of recomputed for the whole set at each try)
        free: list[list] = []
        # their genre keys: no option's genres may contain another's, or the genres of a liked
        # group could never rank the smaller above the larger and the two could not each be the answer
        chosen_keys: list[frozenset] = []
        for film in rng.sample(candidates, len(candidates)):
            keys = films[film].genre_keys
            if any(keys <= other or other <= keys for other in chosen_keys):
                continue
            concepts = films[film].concepts
            narrowed = [[link for link in own if not _shares(link[2], concepts, strict)] for own in free]
            if not all(narrowed):
                continue
            mine = _free(links, film, chosen, strict)
            if mine:
                chosen.append(film)
                chosen_keys.append(keys)
                free = [*narrowed, mine]
                if len(chosen) == count:
                    return chosen
    return None


class _Common:
    """What the liked films have in common, read three ways: their shared genres, their
    shared themes, and both together (case-folded, so genre "Music" is theme "music")."""

    def __init__(self, liked: list[Film]):
        self.genres = frozenset.intersection(*(f.genre_keys for f in liked))
        self.themes = frozenset.intersection(*(f.theme_keys for f in liked))
        self.both = frozenset.intersection(*(f.concepts for f in liked))
        self.single = len(liked) == 1

    def scores(self, film: Film) -> tuple[int, int, int]:
        return (len(film.genre_keys & self.genres), len(film.theme_keys & self.themes),
                len(film.concepts & self.both))


def _wrong_ok(common: _Common, kind: str, link: frozenset, answer: tuple, film: Film, strict: bool) -> bool:
    """May `film` be a wrong option? It does not share the link (`_shares`), no reading of the
    liked films (genres, themes, both) ranks it above the answer, the reading of the
    link's kind ranks it below, and both together rank it below. With one liked film
    nothing tells which of its themes is meant, so there the genres must decide alone."""
    if _shares(link, film.concepts, strict):
        return False
    g, t, b = common.scores(film)
    if g > answer[0] or t > answer[1] or b >= answer[2]:
        return False
    if (kind == "genres" or common.single) and g == answer[0]:
        return False
    return not (kind == "themes" and t == answer[1])


def _liked_group(params: dict, links: dict, options: list[int], answer: int, rng: random.Random,
                 strict: bool):
    """(kind, labels, liked films) for an answer among fixed options: reference_count - 1
    films of one of its free criteria, not among the options, against which every other
    option is a fair wrong option (`_wrong_ok`); or None."""
    films = catalogue()
    need = params["reference_count"] - 1
    wrong = [films[o] for o in options if o != answer]
    draws = []
    for kind, labels, concepts, members in _free(links, answer, options, strict):
        pool = [i for i in members if i not in options]
        if need == 1:  # few single films: try them all, in random order
            draws += [(kind, labels, concepts, [i]) for i in pool]
        elif len(pool) >= need:
            draws += [(kind, labels, concepts, pool)] * _GROUP_TRIES
    for kind, labels, concepts, pool in rng.sample(draws, min(len(draws), _GROUP_TRIES * 4)):
        liked = [films[i] for i in (pool if need == 1 else rng.sample(pool, need))]
        common = _Common(liked)
        scores = common.scores(films[answer])
        if all(_wrong_ok(common, kind, concepts, scores, w, strict) for w in wrong):
            return kind, labels, liked
    return None


def _symmetric_problem(params: dict, links: dict, rng: random.Random, strict: bool, every: bool = True):
    """Options drawn first, each with a free link; then a liked group for each; only then
    the answer, uniformly among the options that have one, so the options alone never
    tell which it is. `every`: all options must have a group. None if no such set."""
    for _ in range(_SYMMETRIC_TRIES):
        options = _option_set(links, params["choice_count"], rng, strict)
        if options is None:
            return None
        groups = [_liked_group(params, links, options, film, rng, strict) for film in options]
        able = [i for i, g in enumerate(groups) if g is not None]
        if able and (len(able) == len(options) or not every):
            pick = rng.choice(able)
            return options, options[pick], groups[pick]
    return None


def _answer_first_problem(params: dict, links: dict, rng: random.Random):
    """The answer and its liked group first, then wrong options drawn from every film
    that is a fair wrong option for them (when too few films allow a symmetric set)."""
    films = catalogue()
    candidates = sorted(links)
    need = params["reference_count"] - 1
    for _ in range(_ANSWER_FIRST_TRIES):
        answer = rng.choice(candidates)
        kind, labels, concepts, members = rng.choice(links[answer])
        pool = [i for i in members if i != answer]
        liked_ids = rng.sample(pool, need)
        liked = [films[i] for i in liked_ids]
        common = _Common(liked)
        scores = common.scores(films[answer])
        taken = set(liked_ids) | {answer}
        fair = [i for i, f in enumerate(films)
                if i not in taken and _wrong_ok(common, kind, concepts, scores, f, True)]
        if len(fair) >= params["choice_count"] - 1:
            options = rng.sample(fair, params["choice_count"] - 1) + [answer]
            rng.shuffle(options)
            return options, answer, (kind, labels, liked)
    return None


@register
class Movies(Task):
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
    params = (
        Param("reference_count", int, 4, low=2, high=9,
              doc="reference group: the liked movies shown plus the right answer (4 lists 3 liked movies)"),
        Param("choice_count", int, 4, low=2, high=10, doc="answer options"),
        Param("genre_weight", float, 1.0, low=0.0, high=100.0, doc="relative chance the link is a genre pair"),
        Param("theme_weight", float, 1.0, low=0.0, high=100.0, doc="relative chance the link is a theme"),
    )

    def check_consistency(self, params: dict) -> None:
        if params["genre_weight"] + params["theme_weight"] <= 0:
            raise UserError("task 'movies': genre_weight + theme_weight must be > 0")
        for kind in ("genres", "themes"):
            weight = params["genre_weight" if kind == "genres" else "theme_weight"]
            if weight > 0 and not _criteria(kind, params["reference_count"]):
                raise UserError(f"task 'movies': no {kind} criterion has {params['reference_count']} "
                                "films; lower reference_count or set its weight to 0")

    def generate(self, params: dict, rng: random.Random) -> TestCase:
        films = catalogue()
        # The kind of link first, by its weight, so the weights are the kinds' shares
        # (drawn per option, the kind with more free links would win more often).
        kind = rng.choices(("genres", "themes"), (params["genre_weight"], params["theme_weight"]))[0]
        links = _links((kind,), params["reference_count"])
        # Prefer wrong options that share no part of the link; where too few films allow
        # that with every option a possible answer (many options, genre pairs only),
        # a wrong option may share one genre of the pair but ranks below on genres.
        problem = (_symmetric_problem(params, links, rng, strict=True)
                   or _symmetric_problem(params, links, rng, strict=False)
                   or _symmetric_problem(params, links, rng, strict=True, every=False)
                   or _answer_first_problem(params, links, rng))
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
