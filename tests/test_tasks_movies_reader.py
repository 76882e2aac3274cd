"""The movies task read by an independent reader (resolver.audit.film_reader): the
reader on hand-worked cases over a made-up catalogue, then every r12 movies point at
lowdef and normal density read from the real catalogue. The reader never sees the
generator's links; it decides each case from the film facts alone."""
from __future__ import annotations

import ast
import json
import random
from pathlib import Path

import pytest

from resolver.audit import film_reader
from resolver.config.loader import expand_steps, load_config
from resolver.tasks import TestCase, get_task

TOY = """# title\tyear\tgenres\tthemes
Alpha\t2000\tCrime,Thriller\theist,police
Beta\t2001\tCrime,Thriller,Drama\theist
Gamma\t2002\tCrime,Drama\tpolice
Delta\t2003\tComedy,Music\tmusic
Epsilon, the Sequel\t2004\tDrama,Music\tmarriage
Zeta\t2005\tDrama\tmarriage
"""


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy.tsv"
    path.write_text(TOY, encoding="utf-8")
    return film_reader.read_catalogue(str(path))


def _text(liked, options):
    rows = "\n".join(f"({chr(65 + i)}) {t}" for i, t in enumerate(options))
    return f"Which movie belongs with this group: {', '.join(liked)}?\n\nOptions:\n{rows}"


def test_titles_with_commas_are_cut_at_known_titles(toy):
    assert film_reader.split_titles("Alpha, Epsilon, the Sequel, Zeta", toy) == \
        ["Alpha", "Epsilon, the Sequel", "Zeta"]
    assert film_reader.split_titles("Alpha, Omega", toy) is None


def test_two_liked_crime_thrillers_are_read_by_hand(toy):
    # common genres {crime, thriller}, themes {heist}: Gamma scores 1/0/1, Delta and
    # Epsilon 0/0/0 -> genres and both determine Gamma; themes determine nothing.
    text = _text(["Alpha", "Beta"], ["Gamma", "Delta", "Epsilon, the Sequel"])
    fair = film_reader.read_case(text, "(A)", toy)
    assert fair.best == {"genres": 0, "themes": None, "both": 0} and fair.fair
    unfair = film_reader.read_case(text, "(B)", toy)
    assert unfair.genres_favour_wrong and unfair.both_not_target and not unfair.fair


def test_one_liked_film_decided_by_a_theme_alone_is_unfair(toy):
    # liked Epsilon: genres {drama, music}, themes {marriage}. Zeta 1/1/2, Delta 1/0/1,
    # Gamma 1/0/1: genres tie at 1, the theme alone picks Zeta (as "Walk the Line" ->
    # "Kramer vs. Kramer" by "marriage").
    reading = film_reader.read_case(_text(["Epsilon, the Sequel"], ["Zeta", "Delta", "Gamma"]), "(A)", toy)
    assert reading.best == {"genres": None, "themes": 0, "both": 0}
    assert reading.theme_alone_single and not reading.both_not_target and not reading.fair
    point = film_reader.PointReading("p", "movies", "2")
    point.add(reading)
    assert point.theme_alone_single == 1 and point.unfair == 1


def test_genre_and_theme_of_one_name_count_once_in_both(toy):
    # liked Delta: both = {comedy, music} (genre Music and theme music are one name).
    # Epsilon has music (genre) -> 1; Zeta -> 0; genres reading: Epsilon 1, Zeta 0.
    reading = film_reader.read_case(_text(["Delta"], ["Zeta", "Epsilon, the Sequel"]), "(B)", toy)
    assert reading.best == {"genres": 1, "themes": None, "both": 1} and reading.fair


def test_reader_is_written_apart_from_the_generator():
    tree = ast.parse(Path(film_reader.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m and m.startswith("resolver") for m in imported), imported


def _r12_movies(density, count=8):
    config = load_config(Path(__file__).resolve().parents[1] / "configs" / "r12.yaml")
    task = get_task("movies")
    for step in expand_steps(config, density=density, tasks=["movies"]):
        cases = task.generate_cases(step.gen_params, random.Random(step.seed), count)
        yield step, film_reader.read_point(step.name, "movies", step.manifold["id"], cases)


@pytest.mark.parametrize("density", ["lowdef", "normal"])
def test_r12_movies_cases_single_out_the_target_for_a_reader(density):
    points = 0
    for step, point in _r12_movies(density):
        assert point.genres_favour_wrong == 0, vars(point)
        assert point.theme_alone_single == 0, vars(point)
        assert point.both_not_target == 0, vars(point)
        assert point.right == point.determined, vars(point)   # no reading ever points elsewhere
        params = step.gen_params
        if params["reference_count"] == 2:
            assert point.single == point.cases and point.determined["genres"] == point.cases
        if params["theme_weight"] == 0:   # genre pairs only: the genres decide every case
            assert point.determined["genres"] == point.cases
        if params["genre_weight"] == 0 and params["reference_count"] > 2:
            assert point.determined["themes"] == point.cases
        points += 1
    assert points == {"lowdef": 40, "normal": 77}[density]


def test_probe_shortcuts_shows_the_readers_check(script, tmp_path):
    out = tmp_path / "movies.json"
    proc = script("probe.py", "shortcuts", "--config", "configs/r12.yaml", "--task", "movies",
                  "--density", "corner", "--samples", "16", "--json", out, "--quiet")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "## Reader's check" in proc.stdout and "Reader's check: PASS" in proc.stdout
    data = json.loads(out.read_text())
    assert data["passed"] and data["readers"]
    assert len(data["readers"]) == len(data["points"])
    assert all(r["cases"] == 16 and r["both_not_target"] == 0 for r in data["readers"])


def test_an_unfair_case_fails_the_audit():
    from resolver.audit.shortcuts import AuditReport

    report = AuditReport("c", "lowdef", 16, 42)
    good = film_reader.PointReading("p1", "movies", "0")
    report.readings.append(good)
    assert report.passed
    bad = film_reader.PointReading("p2", "movies", "0")
    bad.genres_favour_wrong = 1
    report.readings.append(bad)
    assert not report.passed and report.unfair_readings == [bad]


def test_read_point_counts_cases_by_hand(toy, monkeypatch):
    monkeypatch.setattr(film_reader, "read_catalogue", lambda *a: toy)
    text = _text(["Alpha", "Beta"], ["Gamma", "Delta", "Epsilon, the Sequel"])
    cases = [TestCase(input=text, target="(A)"), TestCase(input=text, target="(C)")]
    point = film_reader.read_point("p", "movies", "0", cases)
    assert point.cases == 2 and point.determined["genres"] == 2 and point.right["genres"] == 1
    assert point.genres_favour_wrong == 1 and point.both_not_target == 1 and point.single == 0


def test_cohen_kappa_by_hand():
    from resolver.audit.theme_agreement import cohen_kappa

    # 10 pairs: both yes 4, both no 3, a-only 2, b-only 1 -> p_o 0.7;
    # a yes 6/10, b yes 5/10 -> p_e 0.6*0.5 + 0.4*0.5 = 0.5 -> kappa 0.4
    a = [True] * 4 + [False] * 3 + [True] * 2 + [False]
    b = [True] * 4 + [False] * 3 + [False] * 2 + [True]
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)


def test_theme_sample_is_blind_half_tagged_and_the_committed_one(repo):
    from resolver.audit import theme_agreement

    pairs = theme_agreement.sample()
    films = film_reader.read_catalogue()
    tagged = sum(theme in films[film]["themes"] for film, theme in pairs)
    assert len(pairs) == len(set(pairs)) == 150 and tagged == 75
    result = theme_agreement.compare({p: p[1] in films[p[0]]["themes"] for p in pairs})
    assert result["agreement"] == 1.0 and result["kappa"] == pytest.approx(1.0)


def test_second_reading_of_the_committed_sample(repo):
    """The independent reader's labels of the committed sample (drawn before the fixes it
    led to) now differ from the catalogue only where docs/movies-theme-audit.md says why."""
    from resolver.audit import theme_agreement

    sample = [tuple(line.split("\t")) for line in
              (repo / "docs" / "movies-theme-sample.tsv").read_text(encoding="utf-8").splitlines()]
    labels = {}
    for line in (repo / "docs" / "movies-theme-labels.tsv").read_text(encoding="utf-8").splitlines():
        film, theme, answer = line.split("\t")
        labels[(film, theme)] = answer == "yes"
    assert sorted(labels) == sorted(sample) and len(sample) == 150
    result = theme_agreement.compare(labels)
    assert result["reader_only"] == [("Les Miserables", "music")]      # sung through, not about music
    assert result["catalogue_only"] == []
    assert result["kappa"] > 0.95
