"""analyze.py discovery and position subcommands end to end: the real script as a
subprocess on the hand-known dataset of test_analyze_fixture (built through the real
evaluate.py). Expected numbers are computed here from the fixture's outcome tables."""
import itertools
import json

import duckdb
import pytest
from conftest import run_script
from PIL import Image
from test_analyze_fixture import (
    GROUPS,
    OUTCOMES,
    PROMPT_TOKENS,
    TOKENS,
    cell_counts,
    hand_adjusted_score,
    hand_dataset,
    hand_reasonscore,
    model_eval_id,
    points_of,
    wilson,
)

pytestmark = pytest.mark.slow

MODELS = list(OUTCOMES)
TIERS = {"easy": 0, "medium": 1}
ALL_TASKS = ["arithmetic", "boolean"]


def cell_score(model, task, degree):
    """A cell's ReasonScore input; a task the model never ran enters at the 0.01 floor (docs/decisions.md)."""
    return hand_adjusted_score(model, task, degree) if task in OUTCOMES[model] else 0.0


def wilson_cc(successes: int, trials: int):
    """scipy's continuity-corrected Wilson interval (low, high): the modes' raw interval."""
    from scipy.stats import binomtest

    ci = binomtest(int(successes), int(trials)).proportion_ci(method="wilsoncc")
    return ci.low, ci.high


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    return hand_dataset(tmp_path_factory)


def analyze(*args, **kwargs):
    return run_script("analyze.py", *args, **kwargs)


def ok(*args, **kwargs):
    proc = analyze(*args, **kwargs)
    assert proc.returncode == 0, proc.stderr
    return proc


def user_error(*args):
    proc = analyze(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def frac(value: float) -> str:
    """Two decimals without the leading zero (written independently of the code)."""
    return ("%.2f" % value).replace("0.", ".", 1) if value < 1 else "%.2f" % value


def hand_cell(model, task, degree):
    c, x, v, t, g, points = cell_counts(model, task, degree)
    if points == 0:
        return "—"
    center, margin = wilson(c - g, c + x + v - g)
    text = f"{frac(center)} - {frac(center + margin)}"
    if t / (c + x + v + t) > 0.02:
        text += f" [-{frac(t / (c + x + v + t))}]"
    if points < 2:                       # the config has 2 points per task and tier
        text += f" ({points}/2)"
    return text


def markdown_rows(text):
    rows = []
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


# -------------------------------------------------------------------- scores

def test_scores_markdown_matches_hand_computation(hand):
    text = ok("scores", hand).stdout
    rows = markdown_rows(text)
    assert rows[0] == ["Model", "Tier", "ReasonScore", "Avg Tokens", "Score/Token", "Neutral", "Samples",
                       "arithmetic", "boolean"]
    table = {(r[0], r[1]): r for r in rows[1:]}
    for model in MODELS:
        tasks = list(OUTCOMES[model])
        for tier, degree in TIERS.items():
            row = table[(f"{model} model", tier)]
            assert row[7] == hand_cell(model, "arithmetic", degree)
            assert row[8] == hand_cell(model, "boolean", degree)
            score = hand_reasonscore([cell_score(model, t, degree) for t in ALL_TASKS])
            incomplete = len(tasks) < 2 or any(cell_counts(model, t, degree)[5] < 2 for t in tasks)
            assert row[2] == f"{score:.0f}" + ("*" if incomplete else "")
            samples = [sum(cell_counts(model, t, degree)[:4]) for t in tasks]
            assert row[6] == f"{sum(samples)} ({min(samples)})"
        overall = hand_reasonscore([cell_score(model, t, d) for t in ALL_TASKS for d in (0, 1)])
        assert table[(f"{model} model", "overall")][2].rstrip("*") == f"{overall:.0f}"
    # Alpha is best; Gamma (no boolean) and Delta (1/2 deep arithmetic points) carry the asterisk.
    assert rows[1][0] == "Alpha model"
    assert table[("Gamma model", "overall")][2].endswith("*")
    assert table[("Delta model", "medium")][7].endswith("(1/2)")
    assert table[("Beta model", "easy")][7].endswith("[-.05]")
    assert not table[("Alpha model", "overall")][2].endswith("*")


def test_scores_json_shape_and_numbers(hand):
    data = json.loads(ok("scores", hand, "--format", "json").stdout)
    assert isinstance(data, list) and len(data) == 4
    required = {"center", "margin", "truncated_ratio", "completion_tokens_mean", "adjusted_score", "point_count",
                "expected_points", "is_incomplete"}
    for entry in data:
        assert {"eval_id", "model", "reasonscore", "tiers"} <= set(entry)
        model = entry["model"]
        assert entry["eval_id"] == model_eval_id(model)
        for tier, degree in TIERS.items():
            block = entry["tiers"][tier]
            assert {"reasonscore", "any_incomplete", "tasks"} <= set(block)
            for task, cell in block["tasks"].items():
                assert required <= set(cell)
                c, x, v, t, g, points = cell_counts(model, task, degree)
                center, margin = wilson(c - g, c + x + v - g)
                assert cell["center"] == pytest.approx(center, abs=1e-12)
                assert cell["margin"] == pytest.approx(margin, abs=1e-12)
                assert cell["truncated_ratio"] == pytest.approx(t / (c + x + v + t))
                assert cell["adjusted_score"] == pytest.approx(center + margin - t / (c + x + v + t))
                assert (cell["point_count"], cell["expected_points"]) == (points, 2)
                assert cell["is_incomplete"] == (points < 2)
                mean_tokens = sum(n * TOKENS[k] for n, k in zip((c, x, v, t), TOKENS)) / (c + x + v + t)
                assert cell["completion_tokens_mean"] == pytest.approx(mean_tokens)
        overall = hand_reasonscore([cell_score(model, t, d) for t in ALL_TASKS for d in (0, 1)])
        assert entry["reasonscore"] == pytest.approx(overall)
    assert [e["reasonscore"] for e in data] == sorted((e["reasonscore"] for e in data), reverse=True)


def test_scores_filters_groups_and_eval_ids(hand):
    large = json.loads(ok("scores", hand, "--format", "json", "--filters", '{"groups": ["size:large"]}').stdout)
    assert {e["model"] for e in large} == {m for m in MODELS if "size:large" in GROUPS[m]}
    ids = [model_eval_id("Gamma"), model_eval_id("Delta")]
    picked = json.loads(ok("scores", hand, "--format", "json", "--filters", json.dumps({"eval_id": ids})).stdout)
    assert sorted(e["eval_id"] for e in picked) == sorted(ids)
    both = json.loads(ok("scores", hand, "--format", "json", "--filters",
                         '{"groups": [["size:small", "arch:moe"]]}').stdout)
    assert [e["model"] for e in both] == ["Delta"]


def test_scores_sort_ratio_and_top(hand):
    data = json.loads(ok("scores", hand, "--format", "json", "--sort", "ratio", "--top", "2").stdout)
    assert len(data) == 2
    ratios = {}
    for model in MODELS:
        cells = [(t, d) for t in OUTCOMES[model] for d in (0, 1)]
        tokens = []
        for t, d in cells:
            c, x, v, tr, _, _ = cell_counts(model, t, d)
            tokens.append(sum(n * TOKENS[k] for n, k in zip((c, x, v, tr), TOKENS)) / (c + x + v + tr))
        score = hand_reasonscore([cell_score(model, t, d) for t in ALL_TASKS for d in (0, 1)])
        ratios[model] = score / (sum(tokens) / len(tokens))
    best = sorted(ratios, key=ratios.get, reverse=True)[:2]
    assert [e["model"] for e in data] == best
    assert data[0]["score_per_token"] == pytest.approx(ratios[best[0]])


def test_scores_png_has_requested_width(hand, tmp_path):
    ok("scores", hand, "--format", "png", "--width", "900", "--output-dir", tmp_path)
    [png] = list(tmp_path.glob("*.png"))
    assert png.name == "scores.png"
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size[0] == 900 and image.size[1] > 200


def test_scores_output_file_and_token_counts(hand, tmp_path):
    target = tmp_path / "out" / "scores-large.md"
    ok("scores", hand, "--output", target, "--show-token-counts", "--group-by", "base_task")
    text = target.read_text()
    assert "## Mean completion tokens per task" in text
    alpha_easy = [r for r in markdown_rows(text.split("## Mean")[1]) if r[:2] == ["Alpha model", "easy"]][0]
    assert alpha_easy[7] == f"{(19 * TOKENS['correct'] + TOKENS['incorrect']) / 20:.0f}"


def test_scores_group_by_other_dimension(hand):
    data = json.loads(ok("scores", hand, "--format", "json", "--group-by", "manifold.id").stdout)
    alpha = [e for e in data if e["model"] == "Alpha"][0]
    assert set(alpha["tiers"]["easy"]["tasks"]) == {"shallow", "short"}
    assert alpha["tiers"]["easy"]["tasks"]["shallow"]["expected_points"] is None


# ---------------------------------------------------------- errors and input

def test_filter_errors_are_one_line(hand):
    assert "not valid JSON" in user_error("scores", hand, "--filters", "{bad")
    line = user_error("scores", hand, "--filters", '{"colour": "red"}')
    assert "unknown filter key 'colour'" in line and "eval_id" in line
    line = user_error("cluster", hand, "--filters", '{"eval_id": ["zzzzzz"]}')
    assert "zzzzzz" in line and model_eval_id("Alpha") in line
    line = user_error("aggregate", hand, "--filters", '{"groups": ["size:huge"]}')
    assert "size:huge" in line and "size:large" in line
    line = user_error("scores", hand, "--filters",
                      json.dumps({"eval_id": [model_eval_id("Gamma")], "base_task": "boolean"}))
    assert "not in combination" in line
    assert "unknown dimension" in user_error("cluster", hand, "--facet-by", "colour")


@pytest.mark.parametrize("args", [
    ("scores", "--group-by", "params.lenght"),
    ("aggregate", "--facet-by", "manifold.nope"),
    ("points", "--split-by", "facets.colour"),
    ("compression", "--group-by", "params.lenght"),
    ("hazard", "--split-by", "params.lenght"),
])
def test_a_dimension_no_point_carries_is_an_error(hand, tmp_path, args):
    # a typo in a dotted dimension must not collapse everything into one "(none)" group
    subcommand, *rest = args
    line = user_error(subcommand, hand, *rest, "--output-dir", tmp_path)
    assert "no selected point has a value for" in line and rest[1] in line


def test_missing_database_names_evaluate_command(tmp_path):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps({"name": "d", "db": "d.db", "cohorts": []}))
    line = user_error("scores", dataset)
    assert "evaluate.py --dataset" in line
    assert "not found" in user_error("scores", tmp_path / "nope.json")


# ----------------------------------------------------------------- discovery

def test_evals_listing_and_search(hand):
    data = json.loads(ok("evals", hand, "--format", "json").stdout)
    assert {e["eval_id"] for e in data} == {model_eval_id(m) for m in MODELS}
    delta = [e for e in data if e["model"] == "Delta"][0]
    assert delta["points"] == len(list(points_of("Delta"))) and delta["samples"] == 20 * delta["points"]
    assert delta["hf_id"] == "org/Delta" and delta["groups"] == GROUPS["Delta"]
    table = ok("evals", hand, "--search", "^gam").stdout
    assert "Gamma" in table and "Alpha" not in table
    md = ok("evals", hand, "--facets", "size:small,arch:moe", "--format", "markdown").stdout
    assert [r[2] for r in markdown_rows(md)[1:]] == ["Delta"]
    assert "key:value" in user_error("evals", hand, "--groups", "small")


def test_tasks_lists_views_and_counts(hand):
    data = json.loads(ok("tasks", hand, "--format", "json").stdout)
    by_name = {t["base_task"]: t for t in data}
    assert by_name["arithmetic"]["points"] == sum(1 for m in MODELS for p in points_of(m) if p[0] == "arithmetic")
    assert [v["view"] for v in by_name["arithmetic"]["views"]] == ["depth_length", "length"]
    assert [v["dims"] for v in by_name["arithmetic"]["views"]] == [2, 1]
    assert "length_format (2-D" in ok("tasks", hand, "--search", "bool").stdout


def test_tokens_means_by_hand(hand, tmp_path):
    ok("tokens", hand, "--format", "json", "--output-dir", tmp_path)
    [path] = list(tmp_path.glob("tokens*.json"))
    rows = json.loads(path.read_text())
    beta = [r for r in rows if r["eval_id"] == model_eval_id("Beta") and r["base_task"] == "arithmetic"][0]
    c, x, v, t, _, _ = cell_counts("Beta", "arithmetic")
    assert beta["prompt_tokens_mean"] == PROMPT_TOKENS
    assert beta["completion_tokens_mean"] == pytest.approx((c * 100 + x * 200 + t * 1000) / (c + x + v + t))
    assert beta["truncated_tokens_mean"] == 1000 and beta["correct_tokens_mean"] == 100


def test_points_files_per_split_with_db_ids(hand, tmp_path):
    ok("points", hand, "--output-dir", tmp_path, "--sort", "length", "--sort", "max_depth",
       "--filters", json.dumps({"eval_id": [model_eval_id("Alpha")]}))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["points_base_task-arithmetic.md", "points_base_task-boolean.md"]
    rows = markdown_rows((tmp_path / "points_base_task-arithmetic.md").read_text())
    header, body = rows[0], rows[1:]
    con = duckdb.connect(str(hand.parent / "hand.db"), read_only=True)
    ids = {r[0]: (json.loads(r[1]), r[2:]) for r in con.execute(
        "SELECT id, params, correct, incorrect, invalid, truncated FROM points WHERE model='Alpha' AND base_task='arithmetic'"
    ).fetchall()}
    con.close()
    assert sorted(int(r[0]) for r in body) == sorted(ids)
    lengths = [int(r[header.index("length")]) for r in body]
    assert lengths == sorted(lengths)
    for row in body:
        params, counters = ids[int(row[0])]
        assert int(row[header.index("length")]) == params["length"]
        assert tuple(int(row[header.index(k)]) for k in ("correct", "incorrect", "invalid", "truncated")) == counters
    ok("points", hand, "--output-dir", tmp_path / "j", "--split-by", "none", "--format", "json")
    data = json.loads((tmp_path / "j" / "points.json").read_text())
    assert len(data) == sum(len(list(points_of(m))) for m in MODELS)


# -------------------------------------------------------- cluster / rank / ...

def hand_cp_interval(model, task):
    c, x, v, t, g, _ = cell_counts(model, task)
    assert g == 0                          # arithmetic: no guessing, so C_P is plain Wilson on (c, n)
    center, margin = wilson(c, c + x + v + t)
    return center - margin, center + margin


def brute_force_cliques(intervals: dict):
    names = list(intervals)
    overlap = lambda a, b: intervals[a][0] <= intervals[b][1] and intervals[b][0] <= intervals[a][1]
    cliques = [set(s) for r in range(1, len(names) + 1) for s in itertools.combinations(names, r)
               if all(overlap(a, b) for a, b in itertools.combinations(s, 2))]
    return {frozenset(c) for c in cliques if not any(c < other for other in cliques)}


def test_cluster_membership_by_hand(hand):
    data = json.loads(ok("cluster", hand, "--format", "json", "--filters", '{"base_task": "arithmetic"}').stdout)
    [section] = data["facets"]
    assert section["facet"] == "arithmetic"
    got = {frozenset(m["name"] for m in c["members"]) for c in section["clusters"]}
    intervals = {model_eval_id(m): hand_cp_interval(m, "arithmetic") for m in MODELS}
    expected = brute_force_cliques(intervals)
    assert got == expected
    counts = {}
    for clique in expected:
        for name in clique:
            counts[name] = counts.get(name, 0) + 1
    assert max(counts.values()) >= 2, "the fixture must put some model in two clusters"
    best = section["clusters"][0]["members"]
    assert model_eval_id("Alpha") in {m["name"] for m in best}


def test_cluster_split_and_png(hand, tmp_path):
    ok("cluster", hand, "--split-by", "base_task", "--facet-by", "none", "--output-dir", tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.md")) == [
        "cluster_eval_id_by_all_base_task-arithmetic.md", "cluster_eval_id_by_all_base_task-boolean.md"]
    ok("cluster", hand, "--format", "png", "--width", "1000", "--output-dir", tmp_path)
    [png] = list(tmp_path.glob("*.png"))
    with Image.open(png) as image:
        assert image.size[0] == 1000


def test_rank_missing_facet_invalidates_row(hand):
    data = json.loads(ok("rank", hand, "--format", "json").stdout)
    by_name = {r["name"]: r for r in data["rows"]}
    gamma = by_name[model_eval_id("Gamma")]
    assert gamma["total"] is None and gamma["rank"] is None and gamma["missing"] == ["boolean"]
    alpha = by_name[model_eval_id("Alpha")]
    assert alpha["rank"] == 1 and alpha["total"] == 2
    assert data["rows"][-1]["name"] == model_eval_id("Gamma")


def test_pairwise_markdown_and_png(hand, tmp_path):
    text = ok("pairwise", hand, "--sort", "bradley-terry").stdout
    rows = markdown_rows(text)
    assert rows[1][1] == "Alpha model"
    target = tmp_path / "pw.png"
    ok("pairwise", hand, "--format", "png", "--output", target, "--width", "800")
    with Image.open(target) as image:
        assert image.size[0] == 800
    assert "'C_P', 'C_I'" in analyze("pairwise", hand, "--mode", "E_I").stderr


def test_aggregate_raw_counters_reproduce_by_hand(hand):
    data = json.loads(ok("aggregate", hand, "--raw-counters", "--compare-modes", "--mode", "E_I",
                         "--format", "json").stdout)
    assert len(data) == sum(len(OUTCOMES[m]) for m in MODELS)
    for row in data:
        model = [m for m in MODELS if model_eval_id(m) == row["eval_id"]][0]
        c, x, v, t, g, points = cell_counts(model, row["base_task"])
        assert (row["n_u"], row["n_t"], row["n_e"], row["g"]) == (c + x + v, t, c, pytest.approx(g))
        # docs/statistics.md by hand from the raw counters alone: E_I maps the CC-Wilson
        # interval of n_e / n_u by (q - g) / (1 - g); C_P that of n_e / n by (q - G / n) / (1 - g)
        g = row["g"] / row["n_u"]
        low, high = (max(0.0, (q - g) / (1 - g)) for q in wilson_cc(row["n_e"], row["n_u"]))
        assert row["center"] == pytest.approx((low + high) / 2, abs=3e-5)      # z 1.96 vs exact
        assert row["margin"] == pytest.approx((high - low) / 2, abs=3e-5)
        n = row["n_u"] + row["n_t"]
        raw_low, raw_high = wilson_cc(row["n_e"], n)
        cp_low, cp_high = (max(0.0, (q - row["g"] / n) / (1 - g)) for q in (raw_low, raw_high))
        cp_high = min(cp_high, raw_high)
        assert row["C_P_center"] == pytest.approx((cp_low + cp_high) / 2, abs=3e-5)
        assert row["points"] == points


def test_aggregate_markdown_sections(hand):
    text = ok("aggregate", hand, "--tokens").stdout
    assert "## base_task = arithmetic" in text and "## base_task = boolean" in text
    assert "completion_tokens_mean" in text


# ------------------------------------------------------------------ modelinfo

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
          "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
          "vocab_size": 128256, "max_position_embeddings": 8192,
          "quantization_config": {"quant_method": "awq", "bits": 4}}


def test_modelinfo_offline_from_filled_cache(hand, tmp_path):
    folder = tmp_path / "org__Alpha"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(CONFIG))
    (folder / "README.md").write_text("---\nlicense: apache-2.0\n---\n# Alpha\n")
    proc = analyze("modelinfo", hand, "--output-dir", tmp_path, "--filters", '{"groups": ["size:large"]}',
                   env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "MODELINFO.md").read_text()
    alpha = [r for r in markdown_rows(text) if r[0] == "org/Alpha"][0]
    assert alpha[1] == "LlamaForCausalLM" and alpha[2] == "8.0B" and alpha[4] == "32" and alpha[7] == "8192"
    assert alpha[8] == "awq 4-bit" and alpha[9] == "apache-2.0"
    assert "org/Beta" in proc.stderr and "- org/Beta:" in text       # no files: named and skipped


def test_modelinfo_hf_id_without_dataset(tmp_path):
    proc = analyze("modelinfo", "--hf-id", "org/Nothing", "--output-dir", tmp_path, env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 1 and "org/Nothing" in proc.stderr
    assert "give a dataset or --hf-id" in user_error("modelinfo", "--output-dir", tmp_path)


def test_empty_database_says_which_command_fills_it(tmp_path):
    from resolver.pointsdb.writer import PointsWriter

    with PointsWriter(tmp_path / "empty.db", keep_existing=False):
        pass                                   # committed on exit: the schema, no points
    dataset = tmp_path / "empty.json"
    dataset.write_text(json.dumps({"name": "empty", "db": "empty.db", "cohorts": []}))
    for sub in ("scores", "cluster", "points"):
        line = user_error(sub, dataset)
        assert "has no points" in line and f"evaluate.py --dataset {dataset}" in line


def test_points_without_a_dimension_form_a_none_group(hand, tmp_path):
    # params.format exists only for boolean: arithmetic points must not vanish.
    data = json.loads(ok("aggregate", hand, "--facet-by", "params.format", "--format", "json").stdout)
    assert sum(r["points"] for r in data) == sum(len(list(points_of(m))) for m in MODELS)
    assert {r["params.format"] for r in data} == {0, 3, "(none)"}
    ok("points", hand, "--split-by", "params.format", "--output-dir", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "points_params.format-0.md", "points_params.format-3.md", "points_params.format-_none.md"]
    scores = json.loads(ok("scores", hand, "--group-by", "params.format", "--format", "json").stdout)
    assert "(none)" in scores[0]["tiers"]["easy"]["tasks"]


def test_param_filters_do_not_mark_cells_incomplete(hand):
    data = json.loads(ok("scores", hand, "--format", "json", "--filters", '{"params.length": 8}').stdout)
    alpha = [e for e in data if e["model"] == "Alpha"][0]
    cell = alpha["tiers"]["easy"]["tasks"]["arithmetic"]
    assert cell["point_count"] == 1 and cell["expected_points"] is None and cell["is_incomplete"] is False
