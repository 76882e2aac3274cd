"""A second reader's labels of the movies catalogue's theme tags, against the catalogue.

`sample` draws (film, theme) pairs, half of them tagged in the catalogue and half of
them plausible but untagged (a theme carried by at least two films that share a genre and
a theme with the film),
in one shuffled list that does not say which is which. A second reader marks each pair
central / not central by the rule in docs/tasks.md#movies; `compare` then reports the
agreement with the catalogue (share of equal answers and Cohen's kappa) and lists the
disagreements to review. See docs/movies-theme-audit.md.

    python -m resolver.cli.theme_agreement sample > pairs.tsv
    python -m resolver.cli.theme_agreement compare labels.tsv   # film<TAB>theme<TAB>yes|no
"""
from __future__ import annotations

import random
from collections import Counter
from os import PathLike

from resolver.audit.film_reader import read_catalogue


def sample(n: int = 150, seed: int = 3) -> list[tuple[str, str]]:
    """n (film, theme) pairs, about half tagged, in random order (deterministic per seed)."""
    films = read_catalogue()
    rng = random.Random(seed)
    tagged = sorted((t, th) for t, f in films.items() for th in f["themes"])
    plausible = set()
    for title, facts in films.items():
        near = Counter(th for other, o in films.items()
                       if other != title and o["genres"] & facts["genres"] and o["themes"] & facts["themes"]
                       for th in o["themes"])
        plausible |= {(title, th) for th, k in near.items() if k >= 2 and th not in facts["themes"]}
    pairs = rng.sample(tagged, n // 2) + rng.sample(sorted(plausible), n - n // 2)
    rng.shuffle(pairs)
    return pairs


def cohen_kappa(a: list[bool], b: list[bool]) -> float:
    """Cohen's kappa of two raters' yes/no answers: (p_o - p_e) / (1 - p_e)."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def compare(labels: dict) -> dict:
    """labels: {(film, theme): bool central} -> agreement with the catalogue's tags."""
    films = read_catalogue()
    keys = sorted(labels)
    catalogue = [th.casefold() in films[f]["themes"] for f, th in keys]
    reader = [labels[k] for k in keys]
    return {"pairs": len(keys), "agreement": sum(x == y for x, y in zip(catalogue, reader)) / len(keys),
            "kappa": cohen_kappa(catalogue, reader),
            "reader_only": [k for k, c, r in zip(keys, catalogue, reader) if r and not c],
            "catalogue_only": [k for k, c, r in zip(keys, catalogue, reader) if c and not r]}


def read_labels(path: str | PathLike[str]) -> dict:
    """A reader's labels file (film<TAB>theme<TAB>yes|no per line) -> {(film, theme): central}."""
    labels = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                film, theme, answer = line.rstrip("\n").split("\t")
                labels[(film, theme)] = answer.strip().lower() in ("yes", "central", "y", "1")
    return labels
