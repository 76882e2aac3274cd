"""The pages a reader of the seed documents is sent to (issue 36): every page name the
seeds link resolves under docs/, every relative link in docs/*.md and README.md resolves
(file and #anchor), and the words in configs/r12.yaml's header about --degree match what
the runner does."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _header(path: Path) -> str:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").strip())
    return " ".join(lines)


def test_r12_header_says_what_degree_does(tmp_path):
    from resolver.config import expand_steps, load_config

    header = _header(REPO / "configs" / "r12.yaml")
    assert "runs one tier" not in header
    assert "--degree N (which only fills entries without a degree) changes nothing" in header
    # the claim, checked on the runner's own expansion: every r12 entry already has a degree ...
    r12 = load_config(REPO / "configs" / "r12.yaml")
    plain = expand_steps(r12, density="corner")
    seven = expand_steps(r12, density="corner", degree=7)
    assert [(s.name, s.manifold) for s in plain] == [(s.name, s.manifold) for s in seven]
    assert {s.manifold["degree"] for s in plain} == {0, 1, 2}
    # ... while an entry without one is filled with N, and one with a degree keeps it
    config = tmp_path / "mixed.yaml"
    config.write_text("name: mixed\nprecision:\n  low: {count: 4, maxrounds: 1, target_margin: 0.5}\n"
                      "tasks:\n  - name: arithmetic\n    mode: grid\n    manifolds:\n"
                      "      - id: tagged\n        degree: 1\n        grid: {length: 4, max_depth: 1}\n"
                      "      - id: untagged\n        grid: {length: 6, max_depth: 1}\n", encoding="utf-8")
    steps = expand_steps(load_config(config), degree=7)
    assert [s.manifold for s in steps] == [{"id": "tagged", "degree": 1}, {"id": "untagged", "degree": 7}]
