"""runner.py --against against B run at A's precision (docs/performance.md, "Stopping on the decision").

    .venv/bin/python tests/benchmarks/bench_stop_on_decision.py [--replicates 40] [--seed 44] [--skip-simulator]
        [--skip-statistics]
        [--precision medium]
        [--config configs/tiny.yaml] [--task TASK ...] [--gpu h200-8b] [--time-scale 50]

Two parts, both printed as tables and written to tests/benchmarks/out/stop_on_decision.json:

1. On the simulator in GPU mode (a subprocess, docs/simulator.md), for pairs of profiles at
   `medium` and `high`: A runs at the precision, then B twice with fresh caches: at A's
   precision on its own, and with --against A. Reported: B's samples, completion tokens and
   GPU-busy seconds (the simulator's /stats) and the ratio against B at A's precision.
2. The statistics by simulation with a known truth (tests/benchmarks/stop_on_decision_mc.py):
   equal, small (+0.04), large (+0.20) and different-by-cell pairs, six cells of 28 points:
   samples saved, agreement with the full-precision paired compare on the cells it decides,
   false decisions where the truth is no difference (the fixed-n compare read after every round
   beside it), and coverage of the reported anytime intervals. Before it, the price of the
   anytime interval: its half-width over the fixed-n one at the same pairs, per round.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import write_result  # noqa: E402
from stop_on_decision_mc import study, widths  # noqa: E402

from resolver.records import iter_records  # noqa: E402
from resolver.sim.simulator import start_simulator_process  # noqa: E402

PAIRS = [("sim-weak", "sim-strong"), ("sim-weak", "sim-loopy"), ("sim-loopy", "sim-mid"), ("sim-mid", "sim-thinker"),
         ("sim-strong", "sim-thinker")]


def _runner(args: list, opts: argparse.Namespace, sim_port: int, model: str, out: Path, cache: Path,
            precision: str) -> Path:
    cmd = [sys.executable, str(REPO / "runner.py"), "--config", opts.config, "--template",
           str(REPO / "templates" / "zerocot-nosys.json"), "--sampler", str(REPO / "samplers" / "greedy-4k.json"),
           "--model", model, "--apibase", f"http://127.0.0.1:{sim_port}", "--precision", precision,
           "--parallel", "16", "--threads", "4", "--output", str(out), "--cache", str(cache), "--quiet", *args]
    for task in opts.task:
        cmd += ["--task", task]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return next(p for p in out.iterdir() if p.is_dir())


def _tokens(folder: Path) -> tuple[int, int]:
    samples = tokens = 0
    for file in folder.glob("*.ndjson"):
        for _, record, _ in iter_records(file):
            if record is not None:
                samples += 1
                tokens += int((record.get("usage") or {}).get("completion_tokens") or 0)
    return samples, tokens


def simulator_part(opts: argparse.Namespace) -> list[dict]:
    rows = []
    extra = [] if opts.gpu == "none" else ["--gpu", opts.gpu, "--time-scale", opts.time_scale]
    sim = start_simulator_process(opts.config, extra_args=extra)
    try:
        for precision in opts.precision:
            for a_model, b_model in PAIRS:
                with tempfile.TemporaryDirectory() as tmp:
                    work = Path(tmp)
                    a = _runner([], opts, sim.port, a_model, work / "a", work / "cache-a", precision)
                    measured = {}
                    for name, args in (("full", []), ("against", ["--against", str(a)])):
                        urllib.request.urlopen(urllib.request.Request(
                            f"http://127.0.0.1:{sim.port}/stats/reset", method="POST"), timeout=30).read()
                        b = _runner(args, opts, sim.port, b_model, work / name, work / f"cache-{name}", precision)
                        gpu = sim.stats().get("gpu") or {"busy_seconds": float("nan")}
                        samples, tokens = _tokens(b)
                        measured[name] = {"samples": samples, "tokens": tokens, "busy_s": gpu["busy_seconds"]}
                        if name == "against":
                            marker = json.loads((b / "sequential.json").read_text())
                            measured[name]["stopped"] = [c["stopped"] for c in marker["cells"] if not c["overall"]]
                    rows.append({"precision": precision, "a": a_model, "b": b_model, **{
                        f"{m}_{k}": v for k, d in measured.items() for m, v in d.items()}})
                    r = rows[-1]
                    print(f"{precision:6} {a_model:>10} -> {b_model:<10}  samples {r['samples_against']:>6} / "
                          f"{r['samples_full']:<6} tokens {r['tokens_against']:>9} / {r['tokens_full']:<9} "
                          f"({1 - r['tokens_against'] / r['tokens_full']:.0%} fewer)  GPU-busy "
                          f"{r['busy_s_against']:.0f} / {r['busy_s_full']:.0f} s", flush=True)
    finally:
        sim.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=40)
    parser.add_argument("--seed", type=int, default=44,
                        help="the statistics part's seed (44: the tables in docs/performance.md; another: a held-out check)")
    parser.add_argument("--skip-simulator", action="store_true")
    parser.add_argument("--skip-statistics", action="store_true")
    parser.add_argument("--precision", action="append", default=[], help="simulator part (default: medium)")
    parser.add_argument("--config", default=str(REPO / "configs" / "tiny.yaml"))
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--gpu", default="h200-8b", help="GPU preset, or none: no GPU mode (no GPU-busy seconds)")
    parser.add_argument("--time-scale", default="20")
    opts = parser.parse_args()
    opts.precision = opts.precision or ["medium"]
    result: dict = {"simulator": [], "statistics": []}
    if not opts.skip_simulator:
        result["simulator"] = simulator_part(opts)
    if not opts.skip_statistics:
        result["widths"] = widths()
        print("anytime 95% half-width over the fixed-n one at the same pairs (equal models, median of 60 cells)")
        for w in result["widths"]:
            print(f"{w['precision']:9} {w['procedure']:11} " + "  ".join(
                f"{n:>6} pairs {r:.2f}x" for n, r in zip(w["pairs"], w["ratio"])), flush=True)
    stats = [] if opts.skip_statistics else study(opts.replicates, seed=opts.seed)
    result["statistics"], result["seed"] = stats, opts.seed
    print("precision scenario  B samples (against / at A's precision)  agree  false (against / fixed / peeked)  "
          "coverage")
    for r in stats:
        agree = f"{r['agree']}/{r['compare_decided']}" if r["compare_decided"] else "-"
        false = (f"{r['false_against']}/{r['zero_cells']} / {r['false_fixed']} / {r['false_peeked']}"
                 if r["zero_cells"] else "-")
        print(f"{r['precision']:9} {r['scenario']:9} {r['samples_against']:>8} / {r['samples_full']:<8} "
              f"({1 - r['samples_against'] / r['samples_full']:.0%} fewer)  {agree:>7}  {false:>18}  "
              f"{r['covered'] / r['cells']:.1%}")
    name = "stop_on_decision" + ("" if not (opts.skip_simulator or opts.skip_statistics) else
                                      "_statistics" if opts.skip_simulator else "_simulator")
    path = write_result(name, result)
    print(f"wrote {path}")
    medium = [r for r in result["simulator"] if r["precision"] == "medium"]
    if medium:
        saved = 1 - sum(r["tokens_against"] for r in medium) / sum(r["tokens_full"] for r in medium)
        print(f"medium, simulator: B --against spends {saved:.0%} fewer completion tokens than B at A's precision")
    medium = [r for r in stats if r["precision"] == "medium"]
    if medium:
        saved = 1 - sum(r["samples_against"] for r in medium) / sum(r["samples_full"] for r in medium)
        print(f"medium, simulated statistics: B --against draws {saved:.0%} fewer samples than B at A's precision")


if __name__ == "__main__":
    main()
