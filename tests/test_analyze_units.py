"""Pure analysis computations against independent references: networkx cliques,
a scipy maximum-likelihood Bradley-Terry fit, scipy's normal CDF, hand-made tables."""
import itertools
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from resolver.analysis import aggregate, cluster, inventory, modelinfo, pairwise, points, rank, scores, token_usage
from resolver.core.errors import UserError

# ------------------------------------------------------------------ cluster

def test_interval_cliques_hand_example_with_shared_member():
    # A [0.8, 0.9], B [0.65, 0.82], C [0.5, 0.7], D [0.1, 0.2]: B bridges A and C.
    lows, highs = [0.8, 0.65, 0.5, 0.1], [0.9, 0.82, 0.7, 0.2]
    assert cluster.interval_cliques(lows, highs) == [[0, 1], [1, 2], [3]]


def test_touching_intervals_overlap():
    assert cluster.interval_cliques([0.0, 0.5], [0.5, 1.0]) == [[1, 0]]


def test_interval_cliques_match_networkx_on_random_intervals():
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 9))
        centers, margins = rng.random(n), rng.random(n) * 0.2
        lows, highs = list(centers - margins), list(centers + margins)
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((i, j) for i, j in itertools.combinations(range(n), 2)
                             if lows[i] <= highs[j] and lows[j] <= highs[i])
        expected = {frozenset(c) for c in nx.find_cliques(graph)}
        got = cluster.interval_cliques(lows, highs)
        assert {frozenset(c) for c in got} == expected
        assert len(got) == len(expected)


def test_clusters_are_ordered_best_first():
    lows, highs = [0.1, 0.5, 0.8], [0.2, 0.6, 0.9]
    assert cluster.interval_cliques(lows, highs) == [[2], [1], [0]]


def counts_frame(rows):
    return pd.DataFrame(rows, columns=["eval_id", "base_task", "points", "correct", "incorrect", "invalid",
                                       "truncated", "guess_sum"])


def test_rank_sums_best_positions_and_invalidates_missing():
    frame = counts_frame([
        ("a", "t1", 1, 95, 5, 0, 0, 0.0), ("b", "t1", 1, 80, 20, 0, 0, 0.0), ("c", "t1", 1, 40, 60, 0, 0, 0.0),
        ("a", "t2", 1, 50, 50, 0, 0, 0.0), ("b", "t2", 1, 90, 10, 0, 0, 0.0),
    ])
    result = rank.compute_rank(frame, "eval_id", "base_task", "C_I")
    by_name = {r["name"]: r for r in result["rows"]}
    # t1: a [.89,.98] b [.71,.87] c [.31,.50] -> three clusters; t2: b first, a second.
    assert rank.positions_of(by_name["a"]) == {"t1": 1, "t2": 2}
    assert rank.positions_of(by_name["b"]) == {"t1": 2, "t2": 1}
    assert by_name["a"]["total"] == by_name["b"]["total"] == 3
    assert by_name["a"]["rank"] == by_name["b"]["rank"] == 1
    assert by_name["c"]["total"] is None and by_name["c"]["rank"] is None and by_name["c"]["missing"] == ["t2"]
    assert [r["name"] for r in result["rows"]][-1] == "c"


# ----------------------------------------------------------------- pairwise

def test_win_probability_matches_normal_difference():
    got = pairwise.win_probability(0.7, 0.05, 0.6, 0.08)
    expected = norm.cdf(0.1 / math.sqrt((0.05 / 1.96) ** 2 + (0.08 / 1.96) ** 2))
    assert got == pytest.approx(expected)
    assert pairwise.win_probability(0.5, 0.0, 0.4, 0.0) == 1.0
    assert pairwise.win_probability(0.5, 0.0, 0.5, 0.0) == 0.5


def reference_bradley_terry(wins):
    """Maximum likelihood by scipy on log-strengths (centred), an independent fit."""
    k = len(wins)

    def nll(theta):
        theta = theta - theta.mean()
        p = np.exp(theta)
        return -sum(wins[i, j] * (theta[i] - np.log(p[i] + p[j])) for i in range(k) for j in range(k) if i != j)

    fit = minimize(nll, np.zeros(k), method="BFGS", options={"gtol": 1e-10})
    theta = fit.x - fit.x.mean()
    return np.exp(theta)


def test_bradley_terry_matches_independent_fit():
    wins = np.array([[0, 7, 9, 5.5], [3, 0, 6, 4], [1, 4, 0, 2.5], [4.5, 6, 7.5, 0]], dtype=float)
    got = pairwise.bradley_terry(wins)
    assert np.exp(np.mean(np.log(got))) == pytest.approx(1.0)
    assert got == pytest.approx(reference_bradley_terry(wins), rel=1e-4)


def test_bradley_terry_stays_finite_when_one_never_wins():
    wins = np.array([[0, 3, 2], [1, 0, 2], [0, 0, 0]], dtype=float)
    got = pairwise.bradley_terry(wins)
    assert np.all(np.isfinite(got)) and np.all(got > 0)
    assert got[0] > got[1] > got[2]


def test_compute_pairwise_expected_wins_by_hand():
    frame = counts_frame([
        ("a", "t1", 1, 70, 30, 0, 0, 0.0), ("b", "t1", 1, 60, 40, 0, 0, 0.0),
        ("a", "t2", 1, 50, 50, 0, 0, 0.0), ("b", "t2", 1, 55, 45, 0, 0, 0.0),
    ])
    result = pairwise.compute_pairwise(frame, "eval_id", "base_task", "C_I")
    from scipy.stats import binomtest

    def interval(c):   # no guessing: C_I is scipy's continuity-corrected Wilson interval
        ci = binomtest(c, 100).proportion_ci(method="wilsoncc")
        return (ci.low + ci.high) / 2, (ci.high - ci.low) / 2

    def p(ca, cb):
        (c1, m1), (c2, m2) = interval(ca), interval(cb)
        return norm.cdf((c1 - c2) / math.hypot(m1 / 1.96, m2 / 1.96))

    a_wins = p(70, 60) + p(50, 55)
    assert result["names"][0] == "a"
    assert result["expected_wins"] == pytest.approx([a_wins, 2 - a_wins], abs=1e-4)   # z 1.96 vs exact
    assert result["win_probability"][0][1] == pytest.approx(a_wins / 2, abs=1e-4)
    assert result["win_probability"][0][0] is None
    assert result["max_wins"] == [2.0, 2.0]


# ------------------------------------------------------------------- scores

@pytest.mark.parametrize("args,expected", [
    ((0.808, 0.018, 0.015, 26, 26, False), ".81 - .83"),
    ((0.67, 0.02, 0.11, 10, 10, False), ".67 - .69 [-.11]"),
    ((0.75, 0.04, 0.021, 5, 5, False), ".75 - .79 [-.02]"),
    ((0.75, 0.04, 0.02, 5, 5, False), ".75 - .79"),          # exactly 2% is not shown
    ((0.45, 0.03, 0.0, 123, 200, True), ".45 - .48 (123/200)"),
    ((0.55, 0.03, 0.22, 89, 100, True), ".55 - .58 [-.22] (89/100)"),
    ((0.996, 0.003, 0.0, 3, None, False), "1.00 - 1.00"),
    ((None, 0.0, 0.0, 0, 0, False), "—"),
])
def test_format_cell_seed001_examples(args, expected):
    assert scores.format_cell(*args) == expected


def test_format_cell_derives_completeness_when_not_given():
    assert scores.format_cell(0.5, 0.1, 0.0, 3, 4) == ".50 - .60 (3/4)"
    assert scores.format_cell(0.5, 0.1, 0.0, 4, 4) == ".50 - .60"
    assert scores.format_cell(0.5, 0.1, 0.0, 4, None) == ".50 - .60"


def test_format_score_and_fraction():
    assert scores.format_score(771.44, True) == "771*"
    assert scores.format_score(771.5, False) == "772"
    assert scores.format_score(float("nan"), False) == "—"
    assert scores.format_fraction(0.05) == ".05"
    assert scores.format_fraction(-0.05) == "-.05"


def test_tier_names():
    assert [scores.tier_name(d) for d in (0, 1, 2, 3, None, float("nan"))] == \
        ["easy", "medium", "hard", "degree 3", "all", "all"]


def test_expected_points_lookup():
    expected = pd.DataFrame({"base_task": ["a", "a", "b"], "degree": [0, 1, None], "points": [4, 6, 5]})
    assert scores.expected_points_for(expected, "a", 1) == 6
    assert scores.expected_points_for(expected, "a", None) == 10
    assert scores.expected_points_for(expected, "b", None) == 5
    assert math.isnan(scores.expected_points_for(expected, "c", 0))
    assert math.isnan(scores.expected_points_for(None, "a", 0))


def test_summarize_scores_by_hand():
    agg = pd.DataFrame({
        "eval_id": ["e1", "e1", "e2"], "manifold.degree": [None, None, None], "base_task": ["x", "y", "x"],
        "points": [2, 1, 2], "correct": [18, 5, 10], "incorrect": [2, 5, 10], "invalid": [0, 0, 0],
        "truncated": [0, 0, 0], "guess_sum": [0.0, 0.0, 0.0], "prompt_tokens": [0, 0, 0],
        "completion_tokens_sum": [2000, 1000, 4000],
    })
    expected = pd.DataFrame({"base_task": ["x", "y"], "degree": [None, None], "points": [2, 2]})
    results = scores.summarize_scores(scores.score_cells(agg, "base_task", expected))
    from resolver.stats.estimates import wilson_interval

    def adj(c, n):
        center, margin = wilson_interval(c, n)
        return center + margin

    e1, e2 = results
    assert e1["eval_id"] == "e1" and e1["rank"] == 1
    assert e1["reasonscore"] == pytest.approx(1000 * math.sqrt(adj(18, 20) * adj(5, 10)))
    assert e1["any_incomplete"] is True                   # y has 1 of 2 points
    assert e1["tiers"]["all"]["tasks"]["y"]["is_incomplete"] is True
    assert e1["completion_tokens_mean"] == pytest.approx((100 + 100) / 2)
    assert e1["score_per_token"] == pytest.approx(e1["reasonscore"] / 100)
    assert e2["tiers"]["all"]["missing_tasks"] == ["y"] and e2["any_incomplete"] is True
    # the missing cell y enters at the 0.01 floor
    assert e2["reasonscore"] == pytest.approx(1000 * math.sqrt(adj(10, 20) * 0.01))
    assert e1["samples"] == 30 and e1["min_cell_samples"] == 10
    # neutral companion: plug-in accuracy 18/20 and 5/10, no truncation
    assert e1["reasonscore_neutral"] == pytest.approx(1000 * math.sqrt(0.9 * 0.5))
    by_ratio = scores.summarize_scores(scores.score_cells(agg, "base_task", expected), sort="ratio", top=1)
    assert len(by_ratio) == 1 and by_ratio[0]["eval_id"] == "e1"


def score_agg(rows):
    frame = pd.DataFrame(rows, columns=["eval_id", "base_task", "points", "correct", "incorrect", "guess_sum"])
    return frame.assign(**{"manifold.degree": None, "invalid": 0, "truncated": 0, "prompt_tokens": 0,
                           "completion_tokens_sum": 100 * (frame["correct"] + frame["incorrect"])})


def test_an_incomplete_eval_cannot_lead():
    # "partial" ran only x, perfectly; "full" ran x and y at 70%. Before docs/decisions.md the
    # partial eval led on one cell; now its missing y enters at 0.01.
    agg = score_agg([("partial", "x", 1, 100, 0, 0.0), ("full", "x", 1, 70, 30, 0.0), ("full", "y", 1, 70, 30, 0.0)])
    results = scores.summarize_scores(scores.score_cells(agg, "base_task", None))
    assert [r["eval_id"] for r in results] == ["full", "partial"]
    assert results[1]["any_incomplete"] is True and results[1]["missing_cells"] == 1
    markdown = scores.scores_markdown(results)
    assert f"| partial | all | {results[1]['reasonscore']:.0f}* |" in markdown
    assert results[1]["reasonscore"] == pytest.approx(1000 * math.sqrt(results[1]["tiers"]["all"]["tasks"]["x"]
                                                                        ["adjusted_score"] * 0.01))


def test_numeric_groups_sort_numerically():
    agg = score_agg([("a", 4, 1, 5, 5, 0.0), ("a", 6, 1, 5, 5, 0.0), ("a", 8, 1, 5, 5, 0.0), ("a", 12, 1, 5, 5, 0.0),
                     ("a", 16, 1, 5, 5, 0.0), ("b", 10, 1, 5, 5, 0.0), ("b", 4, 1, 5, 5, 0.0)])
    agg = agg.rename(columns={"base_task": "params.length"})
    results = scores.summarize_scores(scores.score_cells(agg, "params.length", None))
    assert scores.score_table_columns(results) == {"all": [4, 6, 8, 10, 12, 16]}
    header = scores.scores_markdown(results).splitlines()[2]
    assert header.endswith("| 4 | 6 | 8 | 10 | 12 | 16 |")


def test_below_chance_cells_are_marked():
    # 2 of 40 right on a yes/no task (G = 20): the data reject "at least chance".
    agg = score_agg([("e", "x", 1, 2, 38, 20.0), ("e", "y", 1, 30, 10, 20.0)])
    results = scores.summarize_scores(scores.score_cells(agg, "base_task", None))
    tasks = results[0]["tiers"]["all"]["tasks"]
    assert tasks["x"]["below_chance"] is True and tasks["y"]["below_chance"] is False
    assert tasks["x"]["modes"]["C_P"]["below_chance"] is True
    assert scores.format_task_cell(tasks["x"]) == "≤ chance"
    assert scores.format_cell(0.0, 0.0, 0.1, 3, 4, True, True) == "≤ chance [-.10] (3/4)"


# ------------------------------------------------------- tokens / aggregate

def test_token_means_by_outcome():
    agg = pd.DataFrame({"correct": [2], "incorrect": [1], "invalid": [0], "truncated": [1], "guess_sum": [0.0],
                        "prompt_tokens": [400], "completion_tokens_sum": [1600], "tokens_correct": [200],
                        "tokens_incorrect": [400], "tokens_invalid": [0], "tokens_truncated": [1000]})
    row = token_usage.token_means(agg).iloc[0]
    assert row["prompt_tokens_mean"] == 100 and row["completion_tokens_mean"] == 400
    assert row["correct_tokens_mean"] == 100 and row["incorrect_tokens_mean"] == 400
    assert math.isnan(row["invalid_tokens_mean"]) and row["truncated_tokens_mean"] == 1000


def test_aggregate_raw_counters():
    frame = counts_frame([("a", "t", 2, 30, 10, 5, 5, 9.0)])
    table = aggregate.compute_aggregate(frame, ["eval_id", "base_task"], "E_I", compare_modes=True, raw_counters=True)
    row = table.iloc[0]
    assert (row["n_u"], row["n_t"], row["n_e"], row["g"]) == (45, 5, 30, 9.0)
    # E_I by hand: scipy's continuity-corrected Wilson of 30/45, mapped by (q - 0.2) / 0.8
    from scipy.stats import binomtest

    ci = binomtest(30, 45).proportion_ci(method="wilsoncc")
    low, high = ((q - 0.2) / 0.8 for q in (ci.low, ci.high))
    assert row["center"] == pytest.approx((low + high) / 2, abs=2e-5)
    assert row["E_I_margin"] == pytest.approx((high - low) / 2, abs=2e-5)
    assert row["samples"] == 50


# --------------------------------------------------------- points / discovery

def test_points_sorted_numerically_by_params():
    frame = pd.DataFrame({
        "id": [3, 1, 2], "eval_id": ["e"] * 3, "model": ["m"] * 3, "base_task": ["t"] * 3,
        "params": [{"length": 10, "depth": 1}, {"length": 9, "depth": 2}, {"length": 10, "depth": 0}],
        "manifold": [{"id": "g"}] * 3, "correct": [1, 2, 3], "incorrect": [1, 1, 1], "invalid": [0, 0, 0],
        "truncated": [0, 0, 0], "guess_sum": [0.0, 0.0, 0.0],
    })
    [(value, table)] = points.compute_points(frame, None, ["length", "p.depth"])
    assert value is None
    assert table["id"].tolist() == [1, 2, 3]
    assert list(table.columns[:7]) == ["id", "eval_id", "model", "base_task", "manifold_id", "depth", "length"]
    with pytest.raises(UserError, match="valid: depth, length"):
        points.compute_points(frame, None, ["width"])


def test_search_and_tag_parsing_errors():
    with pytest.raises(UserError, match="regular expression"):
        inventory.compile_search("(")
    with pytest.raises(UserError, match="key:value"):
        inventory.parse_tag_list("size:small,moe")
    assert inventory.parse_tag_list("size:small, arch:moe") == ["size:small", "arch:moe"]


# --------------------------------------------------------------- modelinfo

LLAMA3_8B = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
             "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256,
             "tie_word_embeddings": False, "max_position_embeddings": 8192}


def test_parameter_estimate_of_a_known_dense_model():
    total, active = modelinfo.estimate_parameters(LLAMA3_8B)
    assert total == pytest.approx(8.03e9, rel=0.005)       # published: 8.03B
    assert active == total


def test_parameter_estimate_of_a_known_moe_model():
    mixtral = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
               "num_hidden_layers": 32, "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2}
    total, active = modelinfo.estimate_parameters(mixtral)
    assert total == pytest.approx(46.7e9, rel=0.01)         # published: 46.7B total, 12.9B active
    assert active == pytest.approx(12.9e9, rel=0.01)


def test_parameter_estimate_needs_sizes():
    assert modelinfo.estimate_parameters({"hidden_size": 10}) == (None, None)


def test_filters_within_tasks_detects_point_level_filters():
    from resolver.pointsdb.filters import parse_filters

    assert scores._filters_within_tasks(parse_filters('{"params.length": 8}'))
    assert scores._filters_within_tasks({"manifold.id": "deep"})
    assert not scores._filters_within_tasks(parse_filters('{"base_task": "a", "groups": ["size:large"]}'))
    assert not scores._filters_within_tasks(None)
