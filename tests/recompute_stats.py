"""Independent recomputation of every published statistic from raw NDJSON (docs/decisions.md).

Reads a dataset's NDJSON files directly (no PointsDB, no resolver.stats), counts the
outcomes per (eval, task, tier), computes each mode, the below-chance flag, the
ReasonScore inputs and scores from docs/statistics.md: formulas written out again
here, then compares with what `analyze.py scores --format json` and
`analyze.py aggregate --compare-modes --raw-counters --format json` publish.

    .venv/bin/python tests/recompute_stats.py data/demo.json
    .venv/bin/python tests/recompute_stats.py --edge      # a hand-made edge-case dataset

Prints the count of numbers compared and every mismatch; exit status 1 on any.
"""
from __future__ import annotations

import glob
import hashlib
import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

Z = 1.96
TOL = 1e-9
TIERS = {0: "easy", 1: "medium", 2: "hard"}
MODES = ("E_I", "E_P", "E_O", "C_I", "C_P", "C_O")


def eval_id(model, template, sampler):
    return hashlib.sha256(f"{model}|{template}|{sampler}".encode()).hexdigest()[:6]


def read_counts(dataset_path: Path):
    """{(eval_id, base_task, degree): [c, x, v, t, G, G_all, tokens]}, deduplicated by sample."""
    dataset = json.loads(dataset_path.read_text())
    files = set()
    for cohort in dataset["cohorts"]:
        cohort_file = (dataset_path.parent / cohort["path"]).resolve()
        for entry in json.loads(cohort_file.read_text()):
            # the glob is relative to the cohort folder, one of its parents, or the working directory
            for base in [cohort_file.parent, *cohort_file.parent.parents, Path.cwd()]:
                found = [Path(m) for m in glob.glob(str(base / entry["evaluate"]["glob"]))]
                found = [f for m in found for f in ([m] if m.is_file() else m.rglob("*.ndjson"))]
                if found:
                    files.update(str(f.resolve()) for f in found if str(f).endswith(".ndjson"))
                    break
    seen, cells = set(), defaultdict(lambda: [0, 0, 0, 0, 0.0, 0.0, 0])
    for name in sorted(files):
        for line in Path(name).read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("usage") is None and r.get("answer") is None:
                continue
            params = {k: v for k, v in r["params"].items() if k != "count"}
            sample = (r["model"], r["template"], r["sampler"], r["base_task"], json.dumps(params, sort_keys=True),
                      int(r["key"].rsplit("-", 1)[1]))
            if sample in seen:
                continue
            seen.add(sample)
            degree = (r.get("manifold") or {}).get("degree")
            cell = cells[(eval_id(r["model"], r["template"], r["sampler"]), r["base_task"], degree)]
            chance = float(r.get("guess_chance") or 0.0)
            kind = 3 if r.get("is_truncated") else 0 if r.get("is_correct") else 2 if not r.get("is_valid") else 1
            cell[kind] += 1
            if kind != 3:
                cell[4] += chance
            cell[5] += chance
            cell[6] += int((r.get("usage") or {}).get("completion_tokens") or 0)
    return cells


def plain_wilson(s, k):
    if k <= 0:
        return 0.0, 0.0
    p = min(max(s / k, 0.0), 1.0)
    den = 1 + Z * Z / k
    return (p + Z * Z / (2 * k)) / den, Z * math.sqrt(p * (1 - p) / k + Z * Z / (4 * k * k)) / den


def cc_wilson(s, k):
    """Newcombe's continuity-corrected Wilson bounds."""
    if k <= 0:
        return 0.0, 0.0
    p = s / k
    den = 2 * (k + Z * Z)
    low = 0.0 if s <= 0 else max(0.0, (2 * k * p + Z * Z - 1 - Z * math.sqrt(Z * Z - 2 - 1 / k + 4 * p * (k * (1 - p) + 1))) / den)
    high = 1.0 if s >= k else min(1.0, (2 * k * p + Z * Z + 1 + Z * math.sqrt(Z * Z + 2 - 1 / k + 4 * p * (k * (1 - p) - 1))) / den)
    return low, high


def mode(cell, name):
    """{center, margin, low, high, below_chance} of one mode from the cell's counts."""
    c, x, v, t, G, G_all = cell[:6]
    m, n = c + x + v, c + x + v + t
    g = G / m if m else (G_all / n if n else 0.0)
    if G_all < G - 1e-9:
        G_all = G * n / m if m else 0.0
    table = {
        "E_I": (c, m, G, m - G), "C_I": (c, m, g * m, m * (1 - g)),
        "E_P": (c, n, G, n - G_all), "C_P": (c, n, G, n * (1 - g)),
        "E_O": (c + t, n, G_all, n - G_all), "C_O": (c + t, n, g * n, n * (1 - g)),
    }
    s, k, offset, scale = table[name]
    if k <= 0 or scale <= 1e-12:
        low = high = 0.0
        below = False
    else:
        raw_low, raw_high = cc_wilson(s, k)
        top = (raw_high * k - offset) / scale
        below = top < 0
        high = max(0.0, min(top, raw_high))
        low = min(max(0.0, (raw_low * k - offset) / scale), high)
    return {"center": (low + high) / 2, "margin": (high - low) / 2, "low": low, "high": high, "below_chance": below}


def reference_cell(cell):
    c, x, v, t, G = cell[:5]
    m, n = c + x + v, c + x + v + t
    center, margin = plain_wilson(c - G, max(m - G, 0.0))
    trunc = t / n if n else 0.0
    neutral = (min(max((c - G) / (m - G), 0.0), 1.0) if m - G > 1e-12 else 0.0) - trunc
    return {"center": center, "margin": margin, "truncated_ratio": trunc, "adjusted_score": center + margin - trunc,
            "neutral_score": neutral, "samples": n, "below_chance": mode(cell, "E_I")["below_chance"],
            "completion_tokens_mean": cell[6] / n, "modes": {name: mode(cell, name) for name in MODES}}


def score(values):
    return 1000 * math.exp(sum(math.log(max(v, 0.01)) for v in values) / len(values))


class Checker:
    def __init__(self):
        self.compared, self.mismatches = 0, []

    def same(self, where, got, want):
        self.compared += 1
        if isinstance(want, bool):
            ok = got is want
        else:
            ok = got is not None and abs(got - want) <= TOL * max(1.0, abs(want))
        if not ok:
            self.mismatches.append(f"{where}: published {got!r}, recomputed {want!r}")


def check_scores(published, cells, check):
    tiers = sorted({d for (_, _, d) in cells}, key=lambda d: -1 if d is None else d)
    tasks = sorted({t for (_, t, _) in cells})
    for entry in published:
        e = entry["eval_id"]
        all_scores, all_neutral = [], []
        for degree in tiers:
            tier = TIERS.get(degree, "all") if degree is not None else "all"
            present = [t for t in tasks if (e, t, degree) in cells]
            block = entry["tiers"][tier]
            scores_, neutral = [], []
            for task in present:
                ref = reference_cell(cells[(e, task, degree)])
                got = block["tasks"][task]
                for field in ("center", "margin", "truncated_ratio", "adjusted_score", "neutral_score", "samples",
                              "below_chance", "completion_tokens_mean"):
                    check.same(f"{e}/{tier}/{task}/{field}", got[field], ref[field])
                for name in MODES:
                    for field, value in ref["modes"][name].items():
                        check.same(f"{e}/{tier}/{task}/{name}.{field}", got["modes"][name][field], value)
                scores_.append(ref["adjusted_score"])
                neutral.append(ref["neutral_score"])
            floor = [0.0] * (len(tasks) - len(present))       # a missing cell enters at the floor
            check.same(f"{e}/{tier}/reasonscore", block["reasonscore"], score(scores_ + floor))
            check.same(f"{e}/{tier}/reasonscore_neutral", block["reasonscore_neutral"], score(neutral + floor))
            all_scores += scores_ + floor
            all_neutral += neutral + floor
        check.same(f"{e}/reasonscore", entry["reasonscore"], score(all_scores))
        check.same(f"{e}/reasonscore_neutral", entry["reasonscore_neutral"], score(all_neutral))


def check_aggregate(rows, cells, check):
    pooled = defaultdict(lambda: [0, 0, 0, 0, 0.0, 0.0, 0])
    for (e, task, _), cell in cells.items():
        for i, value in enumerate(cell):
            pooled[(e, task)][i] += value
    for row in rows:
        cell = pooled[(row["eval_id"], row["base_task"])]
        where = f"aggregate {row['eval_id']}/{row['base_task']}"
        check.same(f"{where}/n_e", row["n_e"], cell[0])
        check.same(f"{where}/g", row["g"], cell[4])
        check.same(f"{where}/g_all", row["g_all"], cell[5])
        default = mode(cell, "C_P")
        check.same(f"{where}/center", row["center"], default["center"])
        check.same(f"{where}/margin", row["margin"], default["margin"])
        check.same(f"{where}/below_chance", row["below_chance"], default["below_chance"])
        for name in MODES:
            ref = mode(cell, name)
            check.same(f"aggregate {row['eval_id']}/{row['base_task']}/{name}_center", row[f"{name}_center"], ref["center"])
            check.same(f"aggregate {row['eval_id']}/{row['base_task']}/{name}_margin", row[f"{name}_margin"], ref["margin"])
            check.same(f"aggregate {row['eval_id']}/{row['base_task']}/{name}_below_chance",
                       row[f"{name}_below_chance"], ref["below_chance"])


def analyze(*args):
    out = subprocess.run([sys.executable, "analyze.py", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


EDGE_OUTCOMES = {   # per point (correct, incorrect, invalid, truncated); degree-1 points shift 2 correct -> incorrect
    "AllTrunc": {"arithmetic": (12, 8, 0, 0), "boolean": (0, 0, 0, 20)},
    "Chance": {"arithmetic": (12, 8, 0, 0), "boolean": (10, 10, 0, 0)},
    "Below": {"arithmetic": (2, 18, 0, 0), "boolean": (2, 17, 1, 0)},
    "Loopy": {"arithmetic": (9, 2, 1, 8), "boolean": (11, 2, 1, 6)},
    "Partial": {"arithmetic": (20, 0, 0, 0)},
    "Tiny": {"arithmetic": (1, 0, 0, 0), "boolean": (0, 1, 0, 0)},
}
EDGE_GUESS_BY_DEPTH = {2: 0.25, 3: 0.0}   # arithmetic deep points pretend to be guessable: mixed chances


def build_edge_dataset(root: Path) -> Path:
    """A hand-made dataset of edge cases (all-truncated, exactly-chance, below-chance,
    heavy truncation, a missing task, one-sample cells, guess chances that differ
    between a cell's points) built with the real evaluate.py."""
    sys.path.insert(0, str(Path(__file__).parent))
    import test_analyze_fixture as fixture
    from conftest import evaluate_hand_dataset, write_eval_entry

    for model, outcomes in EDGE_OUTCOMES.items():
        cohort = root / "data" / "edge" / model
        run = cohort / f"2026-01-01_00-00-00_edge_{model}_{fixture.TEMPLATE}_{fixture.SAMPLER}"
        run.mkdir(parents=True)
        step = 0
        for task, manifold, degree, params in fixture.POINTS:
            if task not in outcomes:
                continue
            c, x, v, t = outcomes[task]
            if degree == 1 and c >= 2:
                c, x = c - 2, x + 2
            kinds = [k for k, n in zip(fixture.KINDS, (c, x, v, t)) for _ in range(n)]
            records = [fixture._record(model, step, task, manifold, degree, params, i, kind) for i, kind in enumerate(kinds)]
            for r in records:
                if task == "arithmetic" and params.get("max_depth") in EDGE_GUESS_BY_DEPTH:
                    r["guess_chance"] = EDGE_GUESS_BY_DEPTH[params["max_depth"]]
            records.append(dict(records[0]))        # a duplicate sample: counted once
            (run / f"{records[0]['task']}.ndjson").write_text("\n".join(json.dumps(r) for r in records) + "\n")
            step += 1
        write_eval_entry(cohort, model, fixture.TEMPLATE, fixture.SAMPLER, label=model, groups=["edge:yes"])
    return evaluate_hand_dataset(root, "edge", fixture.CONFIG, EDGE_OUTCOMES)


def main(argv):
    if argv and argv[0] == "--edge":
        import os
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="edge-stats-"))
        dataset = build_edge_dataset(root)
        os.chdir(Path(__file__).resolve().parents[1])
    else:
        dataset = Path(argv[0])
    cells = read_counts(dataset)
    check = Checker()
    check_scores(analyze("scores", str(dataset), "--format", "json"), cells, check)
    check_aggregate(analyze("aggregate", str(dataset), "--compare-modes", "--raw-counters", "--format", "json"),
                    cells, check)
    print(f"{check.compared} numbers compared, {len(check.mismatches)} mismatches")
    for line in check.mismatches[:50]:
        print("  " + line)
    return 1 if check.mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
