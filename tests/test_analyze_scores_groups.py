"""The scores markdown carries the evals' group/family metadata (a '## Models' section),
as the JSON does: checked against the fixture's evals.json groups."""
from __future__ import annotations

import pytest
from conftest import run_script
from test_analyze_fixture import GROUPS, OUTCOMES, hand_dataset, model_eval_id

from resolver.analysis.eval_groups import group_keys, models_markdown


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    return hand_dataset(tmp_path_factory)


def table_rows(section: str) -> list:
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| ") and not line.startswith("|---")]


def test_scores_markdown_lists_each_evals_groups(hand):
    proc = run_script("analyze.py", "scores", hand)
    assert proc.returncode == 0, proc.stderr
    ranking, models = proc.stdout.split("## Models")
    rows = table_rows(models)
    assert rows[0] == ["Rank", "Model", "eval_id", "Template", "Sampler", "size", "arch"]
    by_model = {r[1]: r for r in rows[1:]}
    assert set(by_model) == {f"{m} model" for m in OUTCOMES}
    for model in OUTCOMES:
        row = by_model[f"{model} model"]
        tags = dict(tag.split(":") for tag in GROUPS[model])
        assert row[2:] == [model_eval_id(model), "zs", "greedy", tags["size"], tags["arch"]]
    # Same order as the ranking table above it; ranks count 1, 2, 3, ...
    ranked = list(dict.fromkeys(r[0] for r in table_rows(ranking)[1:]))
    assert [r[1] for r in rows[1:]] == ranked
    assert [r[0] for r in rows[1:]] == [str(i) for i in range(1, len(OUTCOMES) + 1)]


def test_group_columns_by_hand():
    results = [
        {"rank": 1, "label": "A", "eval_id": "aaaaaa", "template": "zs", "sampler": "greedy",
         "groups": ["size:large", "family:llama", "leaderboard-pick", "quant:q4", "quant:q8"]},
        {"rank": 2, "label": "B", "eval_id": "bbbbbb", "template": None, "sampler": "topk", "groups": []},
    ]
    assert group_keys(r["groups"] for r in results) == ["family", "size", "quant", "other"]
    rows = table_rows(models_markdown(results))
    assert rows == [["Rank", "Model", "eval_id", "Template", "Sampler", "family", "size", "quant", "other"],
                    ["1", "A", "aaaaaa", "zs", "greedy", "llama", "large", "q4, q8", "leaderboard-pick"],
                    ["2", "B", "bbbbbb", "—", "topk", "—", "—", "—", "—"]]
