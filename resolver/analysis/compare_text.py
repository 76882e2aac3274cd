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


def _anytime_row(c: dict) -> list:
    verdict = VERDICTS[c["verdict"]] if c["verdict"] != "none" or not c.get("equivalent") else "equivalent"
    rounds = "" if c.get("rounds") is None else f" after {c['rounds']}"
    return [c["tier"], c["group"], c["pairs"], f"{c['anytime_diff']:+.3f}", _interval(c["anytime"]),
            _interval(c["paired"]), f"{c['p_holm']:.3g}", verdict, f"{c.get('stopped') or ''}{rounds}"]


def _sequential_markdown(result: dict, title: str) -> str:
    """A run that stopped on its decision: anytime-valid intervals and verdicts only."""
    seq = result["sequential"]
    ratio = "" if seq["width_ratio"] is None else (
        f" At the same pairs the anytime interval is {seq['width_ratio']:.2f}x as wide as the fixed-n paired one "
        "(median over the rows), the price of looking after every round.")
    parts = [title, "", f"B ran against A's run ({seq['a_model'] or seq['against']}) and stopped each cell once "
             f"B - A was decided or within ±{seq['margin']:g} (runner.py --against; {seq['method']}). It looked "
             "after every round, so the fixed-n p-values and verdicts do not hold for it and are not shown: the "
             f"verdicts below are anytime-valid, Holm over the {result['family']} rows at {result['alpha']:g}; "
             f"the fixed-n interval is shown for width only.{ratio} Estimand per eval: {result['estimand']} "
             "(per pair as in E_P, docs/statistics.md).", ""]
    headers = ["Tier", "Group", "Pairs", "B - A", "Anytime 95%", "Fixed-n 95% (width only)", "p (Holm, anytime)",
               "Verdict", "Stopped"]
    rows = [_anytime_row(c) for c in result["cells"]] + [_anytime_row(result["overall"])]
    parts += [markdown_table(rows, headers, ["l", "l", "r", "r", "l", "l", "r", "l", "l"]), "",
              f"Cells decided (anytime, Holm): {sum(c['verdict'] != 'none' for c in result['cells'])} of "
              f"{len(result['cells'])}; stopped before maxrounds ({seq['maxrounds']} rounds of {seq['count']}): "
              f"{seq['stopped_early']}."]
    return "\n".join(parts) + "\n"


def compare_markdown(result: dict, labels: dict, plan: dict | None = None) -> str:
    a, b = result["a"], result["b"]
    name = lambda e: f"{labels.get(e, e)} [{e}]"  # noqa: E731
    if result.get("sequential"):
        return _sequential_markdown(result, f"# Paired comparison, stopped on the decision: B = {name(b)} minus "
                                            f"A = {name(a)} (mode {result['mode']})")
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
