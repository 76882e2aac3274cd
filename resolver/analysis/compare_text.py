"""Markdown view of a paired comparison (analyze.py compare): renders what
resolver.analysis.compare computed, nothing more."""
from __future__ import annotations

from typing import Sequence

from resolver.core import markdown_table

__all__ = ["compare_markdown"]

VERDICTS = {"b": "**B better**", "a": "**A better**", "none": "no evidence"}


def _interval(pair: Sequence[float]) -> str:
    return f"[{pair[0]:+.3f}, {pair[1]:+.3f}]"


def _cell_row(c: dict) -> list:
    needed = "" if c["samples_needed"] is None else f"+{c['samples_needed']}"
    return [c["tier"], c["group"], c["pairs"], f"{c['a']:.3f}", f"{c['b']:.3f}", f"{c['diff']:+.3f}",
            _interval(c["paired"]), _interval(c["unpaired"]), f"{c['phi']:.2f}", f"{c['p_holm']:.3g}",
            VERDICTS[c["verdict"]], needed]


def compare_markdown(result: dict, labels: dict, plan: dict | None = None) -> str:
    a, b = result["a"], result["b"]
    name = lambda e: f"{labels.get(e, e)} [{e}]"  # noqa: E731
    parts = [f"# Paired comparison: B = {name(b)} minus A = {name(a)} (mode {result['mode']})", "",
             f"Estimand per eval: {result['estimand']}; difference {result['difference']}. Samples pair only on "
             "the same problem (base_task, params, task version, sample index). Paired: Newcombe's method 10 for "
             "paired proportions on the mode intervals; unpaired: the same with no correlation. Verdicts control "
             f"the family-wise error at {result['alpha']:g} over the {result['family']} rows (cells and overall, "
             "Holm). `more/point`: about how many more samples per point would decide a difference of "
             f"{result['delta']:g} with {result['power']:.0%} power (docs/statistics.md)."]
    headers = ["Tier", "Group", "Pairs", "A", "B", "B - A", "Paired 95%", "Unpaired 95%", "phi", "p (Holm)",
               "Verdict", "more/point"]
    align = ["l", "l", "r", "r", "r", "r", "l", "l", "r", "r", "l", "r"]
    rows = [_cell_row(c) for c in result["cells"]] + [_cell_row(result["overall"])]
    parts += ["", markdown_table(rows, headers, align)]
    decided = {k: sum(c["verdict"] == k for c in result["cells"]) for k in ("b", "a")}
    unpaired_decided = sum(c["unpaired_verdict"] != "none" for c in result["cells"])
    parts += ["", f"Cells decided (Holm): B better in {decided['b']}, A better in {decided['a']} of "
                  f"{len(result['cells'])}; the unpaired intervals, under the same Holm correction, would "
                  f"decide {unpaired_decided}."]
    unpaired = result["unpaired_samples"]
    if unpaired["only_a"] or unpaired["only_b"]:
        parts += ["", f"Not paired (one eval only): {unpaired['only_a']} samples of A on "
                      f"{unpaired['only_a_points']} points, {unpaired['only_b']} samples of B on "
                      f"{unpaired['only_b_points']} points; they are left out of every number above."]
    for m in result["version_mismatch"]:
        parts += ["", f"Task versions differ on {m['base_task']} ({m['points']} points: A v{m['a_versions']}, "
                      f"B v{m['b_versions']}): different generator versions ask different problems, so those "
                      "samples do not pair."]
    if result["points"]:
        rows = [[p["base_task"], p["tier"], p["params"], p["a_id"], p["b_id"], p["pairs"], f"{p['a']:.3f}",
                 f"{p['b']:.3f}", f"{p['diff']:+.3f}", _interval(p["paired"])] for p in result["points"]]
        parts += ["", "## Points where A and B differ most", "",
                  markdown_table(rows, ["Task", "Tier", "Params", "A point", "B point", "Pairs", "A", "B", "B - A",
                                        "Paired 95%"], ["l", "l", "l", "r", "r", "r", "r", "r", "r", "l"])]
    if plan and plan["commands"]:
        parts += ["", "## Samples that would decide the open cells", "",
                  f"Aim for about {plan['target_per_point']} paired samples per point"
                  + (f" (precision level `{plan['level']}`)" if plan["level"] else "")
                  + f"; {plan['note']}. Rerun both evals through the same cache (earlier rounds are reused):", "",
                  "```", *plan["commands"], "```"]
    return "\n".join(parts) + "\n"
