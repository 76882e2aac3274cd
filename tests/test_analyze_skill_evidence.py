"""No ranking rewards having no skill (docs/statistics.md, "Evidence of skill").

1. The rule on small hand-made counts against scipy: the continuity-corrected Wilson
   interval of scipy's binomtest (at the Bonferroni-corrected level) and its exact
   binomial test.
2. A dataset of runner-format NDJSON (three models with skill, one "truncator" that is
   right whenever it answers but nearly always runs out of tokens, and a no-skill model
   answering at chance in 34 tokens) built by the real `evaluate.py --interview`; the
   no-skill model must come last in every ordering: analyze.py scores (both sorts),
   rank, pairwise (both sorts), and the leaderboard's rank-by.
"""
from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from conftest import run_script
from scipy.stats import binomtest

from resolver.analysis.skill import SKILL_ALPHA, skill_evidence
from resolver.catalog.datasets import eval_id

pytestmark = pytest.mark.slow

COUNTERS = ("correct", "incorrect", "invalid", "truncated", "guess_sum")


def cells(*rows, series="m") -> pd.DataFrame:
    """Counter rows (c, x, v, t, guess chance g) of one series; guess_sum = g x answered."""
    return pd.DataFrame([{"eval_id": series, "correct": c, "incorrect": x, "invalid": v, "truncated": t,
                          "guess_sum": g * (c + x + v)} for c, x, v, t, g in rows])


def scipy_low(c: int, m: int, cells_count: int) -> float:
    """Lower end of scipy's continuity-corrected Wilson interval at the Bonferroni level."""
    level = 1.0 - 2.0 * SKILL_ALPHA / cells_count
    return binomtest(c, m).proportion_ci(confidence_level=level, method="wilsoncc").low


# --------------------------------------------------------------------- the rule by hand

def test_one_cell_matches_scipys_wilson_lower_bound_over_a_grid():
    for m in (5, 12, 20, 40):
        for g in (0.0, 0.1, 0.25, 0.5):
            for c in range(m + 1):
                expected = c > 0 and scipy_low(c, m, 1) > g
                assert skill_evidence(cells((c, m - c, 0, 0, g)))["m"] == expected, (c, m, g)


def test_clear_cases_agree_with_the_exact_binomial_test():
    # p-values far from the level: the corrected-Wilson rule and the exact test must agree
    for m, g in ((20, 0.5), (40, 0.25), (30, 0.0), (12, 0.1)):
        for c in range(m + 1):
            p = binomtest(c, m, g, alternative="greater").pvalue if g > 0 else (0.0 if c > 0 else 1.0)
            verdict = skill_evidence(cells((c, m - c, 0, 0, g)))["m"]
            if g > 0 and p < SKILL_ALPHA / 3:
                assert verdict, (c, m, g, p)
            if p > SKILL_ALPHA * 3:
                assert not verdict, (c, m, g, p)


def test_hand_worked_bonferroni_example():
    # 15 of 20 at g = 0.5: exact one-sided p = 0.0207 (< 0.025). Newcombe's corrected
    # Wilson lower end, p = .75, n = 20, z = 1.96:
    #   (2np + z^2 - 1 - z sqrt(z^2 - 2 - 1/n + 4p(n(1-p) + 1))) / (2(n + z^2))
    #   = (32.8416 - 1.96 sqrt(19.7916)) / 47.6832 = 0.5059 > 0.5 -> evidence as the only cell ...
    assert binomtest(15, 20, 0.5, alternative="greater").pvalue == pytest.approx(0.0207, abs=1e-4)
    assert scipy_low(15, 20, 1) == pytest.approx(0.5059, abs=1e-4)
    assert skill_evidence(cells((15, 5, 0, 0, 0.5)))["m"]
    # ... but not as one of four cells (the other three at or below chance): z = 2.4977
    # (one-sided 0.025 / 4), (35.2385 - 2.4977 sqrt(22.1885)) / 52.477 = 0.4473 < 0.5.
    assert scipy_low(15, 20, 4) == pytest.approx(0.4473, abs=1e-4)
    four = cells((15, 5, 0, 0, 0.5), (10, 10, 0, 0, 0.5), (5, 15, 0, 0, 0.25), (0, 20, 0, 0, 0.0))
    assert not skill_evidence(four)["m"]
    # 18 of 20 clears even the corrected level (exact p = 0.0002)
    four.loc[0, ["correct", "incorrect"]] = (18, 2)
    assert scipy_low(18, 20, 4) > 0.5 and skill_evidence(four)["m"]


def test_truncated_samples_neither_give_nor_hide_skill():
    # 3 answered, all right, no guessing possible; 37 truncated: skill on answered samples
    assert scipy_low(3, 3, 1) > 0 and skill_evidence(cells((3, 0, 0, 37, 0.0)))["m"]
    # everything truncated: nothing answered, no evidence
    assert not skill_evidence(cells((0, 0, 0, 40, 0.25)))["m"]


def test_each_series_is_judged_on_its_own_cells():
    frame = pd.concat([cells((18, 2, 0, 0, 0.5), series="a"), cells((10, 10, 0, 0, 0.5), series="b")])
    assert skill_evidence(frame) == {"a": True, "b": False}


# ------------------------------------------------------------------ every ordering

TEMPLATE, SAMPLER = "zs", "greedy"
TASKS = {"arithmetic": 0.0, "boolean": 0.5, "shapes": 0.25}       # base task -> guess chance
SAMPLES = 20                                                       # per point; 2 points per (task, degree)
# model -> base task -> (correct, incorrect, truncated) per point; tokens per sample (truncated: TRUNCATED_TOKENS)
MODELS = {
    "Strong": ({"arithmetic": (18, 2, 0), "boolean": (19, 1, 0), "shapes": (17, 3, 0)}, 3000),
    "Mid": ({"arithmetic": (12, 8, 0), "boolean": (16, 4, 0), "shapes": (11, 9, 0)}, 2000),
    "Weak": ({"arithmetic": (6, 14, 0), "boolean": (13, 7, 0), "shapes": (7, 13, 0)}, 1500),
    "Truncator": ({"arithmetic": (1, 0, 19), "boolean": (0, 0, 20), "shapes": (0, 0, 20)}, 1000),
    "Guesser": ({"arithmetic": (0, 20, 0), "boolean": (10, 10, 0), "shapes": (5, 15, 0)}, 34),
}
TRUNCATED_TOKENS = 4000


def _record(model, task, degree, point, index, kind, tokens):
    name = f"{task}_d{degree}_p{point}"
    answer = {"correct": "Final Answer: 1", "incorrect": "Final Answer: 2", "truncated": "and so on " * 20}[kind]
    used = TRUNCATED_TOKENS if kind == "truncated" else tokens
    return {
        "task": name, "version": 1, "base_task": task, "key": f"{name}-{index}", "input": "q", "target": "1",
        "response_enum": None, "genresult": {}, "messages": [{"role": "user", "content": "q"}], "answer": answer,
        "usage": {"completion_tokens": used, "prompt_tokens": 50, "total_tokens": used + 50},
        "timings": {"termination_reason": None, "finish_reason": "length" if kind == "truncated" else "stop"},
        "step": degree * 10 + point, "params": {"point": point, "level": degree, "count": SAMPLES}, "model": model,
        "template": TEMPLATE, "sampler": SAMPLER, "guess_chance": TASKS[task], "normalized_answer": None,
        "extracted_answer": None, "is_valid": kind != "truncated", "is_correct": kind == "correct",
        "is_truncated": kind == "truncated", "manifold": {"id": f"{task}-{degree}", "degree": degree},
    }


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("skill")
    for model, (outcomes, tokens) in MODELS.items():
        run = root / "results" / f"2026-01-01_00-00-00_skill_{model}_{TEMPLATE}_{SAMPLER}"
        run.mkdir(parents=True)
        for task, (c, x, t) in outcomes.items():
            kinds = ["correct"] * c + ["incorrect"] * x + ["truncated"] * t
            for degree in (0, 1):
                for point in (0, 1):
                    lines = [json.dumps(_record(model, task, degree, point, i, k, tokens)) for i, k in enumerate(kinds)]
                    (run / f"{task}_d{degree}_p{point}.ndjson").write_text("\n".join(lines) + "\n")
    run_script("evaluate.py", "--interview", "results", "--parallel", "1", "--db", "skill.db", cwd=root, check=True)
    return root / "skill.db"


GUESSER = eval_id("Guesser", TEMPLATE, SAMPLER)
TRUNCATOR = eval_id("Truncator", TEMPLATE, SAMPLER)


def analyze(*args) -> str:
    return run_script("analyze.py", *args, check=True).stdout


def test_score_per_token_puts_the_guesser_last_and_marks_it(db):
    ranked = json.loads(analyze("scores", db, "--sort", "ratio", "--format", "json"))
    by_id = {e["eval_id"]: e for e in ranked}
    # the problem being solved: its raw score/token is by far the highest ...
    assert by_id[GUESSER]["score_per_token"] > 3 * max(e["score_per_token"] for e in ranked if e["eval_id"] != GUESSER)
    # ... yet it ranks last, its number unchanged and it alone lacks evidence of skill
    assert ranked[-1]["eval_id"] == GUESSER and ranked[-1]["rank"] == len(MODELS)
    assert {e["eval_id"]: e["skill_evidence"] for e in ranked} == {
        eval_id(m, TEMPLATE, SAMPLER): m != "Guesser" for m in MODELS}
    ratios = [e["score_per_token"] for e in ranked[:-1]]
    assert ratios == sorted(ratios, reverse=True)              # the others keep the chosen order
    markdown = analyze("scores", db, "--sort", "ratio")
    rows = re.findall(r"^\| ([^|]+?) \| overall \|[^|]+\|[^|]+\| ([0-9.]+) \|", markdown, re.M)
    assert [name for name, _ in rows][-1] == "Guesser †"
    assert float(rows[-1][1]) == pytest.approx(by_id[GUESSER]["score_per_token"], abs=5e-4)
    assert "† = no evidence of skill above guessing" in markdown
    by_score = json.loads(analyze("scores", db, "--format", "json"))
    assert by_score[-1]["eval_id"] == GUESSER


def test_rank_puts_the_guesser_last(db):
    result = json.loads(analyze("rank", db, "--format", "json"))
    rows = result["rows"]
    assert rows[-1]["name"] == GUESSER and not rows[-1]["skill_evidence"]
    assert all(r["rank"] < rows[-1]["rank"] for r in rows[:-1])
    totals = {r["name"]: r["total"] for r in rows}
    # the rule bites: by cluster positions alone the guesser would not be behind the truncator
    assert totals[GUESSER] <= totals[TRUNCATOR]
    assert f"Guesser [{GUESSER}] †" in analyze("rank", db)


@pytest.mark.parametrize("sort", ["expected-wins", "bradley-terry"])
def test_pairwise_puts_the_guesser_last(db, sort):
    markdown = analyze("pairwise", db, "--sort", sort)
    ranking = re.findall(r"^\| (\d+) \| ([^|]+?) \| ([0-9a-f]{6}) \| ([0-9.]+) \|", markdown, re.M)
    assert len(ranking) == len(MODELS)
    assert ranking[-1][1:3] == ("Guesser †", GUESSER)
    wins = {eid: float(w) for _, _, eid, w in ranking}
    assert wins[GUESSER] > wins[TRUNCATOR]                # by expected wins alone it would not be last


@pytest.mark.parametrize("sort", ["score", "ratio"])
def test_leaderboard_rank_by_puts_the_guesser_last(db, sort):
    from resolver.analysis.leaderboard_scores import OVERALL, Board, best_values, rows_for
    from resolver.pointsdb.reader import open_pointsdb

    with open_pointsdb(db) as con:
        board = Board(con)
    view = board.view()
    for tier in (OVERALL, "easy", "medium"):
        rows = rows_for(view, tier, sort)
        assert rows[-1]["eval_id"] == GUESSER and not rows[-1]["skill"], tier
        assert [r["rank"] for r in rows] == list(range(1, len(MODELS) + 1))
    rows = rows_for(view, OVERALL, sort)
    assert best_values(rows)["ratio"] < rows[-1]["ratio"]    # its ratio is not outlined as the best
