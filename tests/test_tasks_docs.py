"""docs/tasks.md shows real output: each example prompt is what the generator
produces today for the stated parameters (seed 2024)."""
from __future__ import annotations

import random

import pytest

from resolver.tasks import get_task

EXAMPLES = {
    "cars": {"cars": 4, "people": 3, "moves": 4, "confounders": 1},
    "dates": {"tier": 2, "format": 1, "choice_count": 4},
    "letters": {"letters_common": 1, "letters_uncommon": 1, "target_words": 8, "confounder_words": 4},
    "movies": {"reference_count": 3, "choice_count": 4},
    "objects": {"target_items": 3, "distractor_count": 2, "zero_items": 1, "anchor": 0},
    "shapes": {"shape_type": 9, "choice_count": 5},
    "shuffle": {"length": 3, "max_depth": 3, "confounding_count": 1},
    "sort": {"length": 6, "prob_mutation": 0.3, "prob_duplication": 0.2},
    "tables": {"num_rows": 5, "num_cols": 4, "format": "markdown", "operation": "sum"},
    "sequence": {"seq_length": 4, "num_rules": 2},
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_documented_example_is_current(name, repo):
    doc = (repo / "docs" / "tasks.md").read_text(encoding="utf-8")
    task = get_task(name)
    case = task.generate(task.typed(task.validate(EXAMPLES[name])), random.Random(2024))
    section = doc.split(f"## {name}")[1].split("\n## ")[0]
    assert case.input in section
    shown = case.target.replace("\n", " ")
    assert f"Answer: `{shown}`" in section or f"Answer (one word per line): `{shown}`" in section
