"""What a real vLLM counts against what the runner records (docs/performance.md, *GPU time*;
docs/loops.md): retries, idle server time, tokens generated, tokens saved by a loop stop.

    python tests/benchmarks/bench_vllm_counts.py --vllm-python VLLM_VENV/bin/python --model MODEL_DIR \\
        [--base main] [--max-tokens 256] [--parallel 16]

    python tests/benchmarks/bench_vllm_counts.py --apibase http://127.0.0.1:8000 --model-name NAME ...

Starts `python -m vllm.entrypoints.openai.api_server` on MODEL_DIR (CPU build:
VLLM_CPU_KVCACHE_SPACE=1), or uses a server already running at --apibase. Then, for the tree
`--base` (a git revision, checked out into a temporary folder with `git archive`) and for
this working tree, runs `runner.py` on configs/tiny.yaml (templates/zerocot-nosys.json) twice
against it, each with a fresh cache and output folder: greedy at --max-tokens without and
with `"stop_loops"` (a rule scaled to the budget: --loop-span characters). The server must
have no other client while this runs: its counters are the reference.

For each run, from vLLM's /metrics (polled every 0.2 s): `vllm:generation_tokens_total` and
`vllm:prompt_tokens_total` across the run, and the seconds during which
`vllm:num_requests_running` and `vllm:num_requests_waiting` were both 0 between the first and
the last request the server ran (the server left idle while the runner had requests to
send). From the runner: its retries (summary line), the records' completion and prompt
tokens, loops stopped and the tokens saved it claims. Tokens saved as measured: the server's
generated tokens without the stop minus with it (same tree, same prompts, greedy).

Prints one table row per run; the last line is the ratio, for this tree, of the tokens saved
as measured to the tokens saved as claimed (1.0: the runner's claim is what the server saved).
Results: tests/benchmarks/out/vllm_counts.json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import free_port, write_result  # noqa: E402

METRIC = re.compile(r"^(vllm:[a-z_]+)(?:\{[^}]*\})? ([0-9.eE+-]+)$")


def metrics(base: str) -> dict[str, float]:
    """vLLM's counters and gauges, summed over their label sets."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = METRIC.match(line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(2))
    return out


class Poller(threading.Thread):
    """Samples running / waiting requests every `every` seconds until stopped."""

    def __init__(self, base: str, every: float = 0.2):
        super().__init__(daemon=True)
        self.base, self.every = base, every
        self.samples: list[tuple[float, float, float]] = []     # (time, running, waiting)
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            try:
                m = metrics(self.base)
                self.samples.append((time.monotonic(), m.get("vllm:num_requests_running", 0.0),
                                     m.get("vllm:num_requests_waiting", 0.0)))
            except OSError:
                pass
            self.halt.wait(self.every)

    def idle_seconds(self) -> tuple[float, float]:
        """(seconds with nothing running or waiting between the first and last busy sample, that span)."""
        busy = [i for i, (_, r, w) in enumerate(self.samples) if r + w > 0]
        if not busy:
            return 0.0, 0.0
        idle = 0.0
        for i in range(busy[0] + 1, busy[-1] + 1):
            t, r, w = self.samples[i]
            if r + w == 0:
                idle += t - self.samples[i - 1][0]
        return idle, self.samples[busy[-1]][0] - self.samples[busy[0]][0]


def wait_ready(base: str, proc: subprocess.Popen | None, limit: float = 900) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"vLLM exited with {proc.returncode} before it was ready")
        try:
            urllib.request.urlopen(f"{base}/v1/models", timeout=5).read()
            return
        except OSError:
            time.sleep(2)
    raise SystemExit(f"vLLM at {base} not ready within {limit:g} s")


def start_vllm(python: str, model: str, name: str, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", name,
           "--host", "127.0.0.1", "--port", str(port), "--max-model-len", "2048"]
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)


def tree_of(revision: str, where: Path) -> Path:
    """The files of a git revision, unpacked under `where`."""
    where.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def summary_numbers(stdout: str) -> dict[str, int]:
    def number(pattern: str) -> int:
        m = re.search(pattern, stdout)
        return int(m.group(1)) if m else 0
    return {"retries": number(r"retries: (\d+)"), "resent": number(r"sent again at once: (\d+)"),
            "stopped": number(r"loops stopped: (\d+)"), "claimed_saved": number(r"tokens saved: (\d+)")}


def run_once(tree: Path, base: str, name: str, sampler: Path, tmp: Path, args: argparse.Namespace) -> dict:
    before = metrics(base)
    poller = Poller(base)
    poller.start()
    cmd = [sys.executable, str(tree / "runner.py"), "--config", str(tree / "configs" / "tiny.yaml"),
           "--template", str(tree / "templates" / "zerocot-nosys.json"), "--sampler", str(sampler),
           "--model", name, "--apibase", base, "--parallel", str(args.parallel), "--cache", str(tmp / "cache"),
           "--output", str(tmp / "out"), "--quiet"]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tree)
    wall = time.monotonic() - started
    time.sleep(3)                        # the server notices closed streams and stops counting
    poller.halt.set()
    poller.join()
    after = metrics(base)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"runner failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    records = [json.loads(line) for f in sorted((tmp / "out").rglob("*.ndjson")) for line in f.read_text().splitlines()
               if line.strip()]
    idle, span = poller.idle_seconds()
    return {
        **summary_numbers(proc.stdout), "samples": len(records), "wall": round(wall, 1),
        "idle_s": round(idle, 1), "busy_span_s": round(span, 1),
        "generated": int(after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"]),
        "prompt_server": int(after["vllm:prompt_tokens_total"] - before["vllm:prompt_tokens_total"]),
        "recorded": sum(int((r.get("usage") or {}).get("completion_tokens") or 0) for r in records),
        "prompt_recorded": sum(int((r.get("usage") or {}).get("prompt_tokens") or 0) for r in records),
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm-python", help="a Python with vLLM installed (to start the server)")
    parser.add_argument("--model", help="model folder for vLLM")
    parser.add_argument("--apibase", help="use this running vLLM instead of starting one")
    parser.add_argument("--model-name", default="tiny")
    parser.add_argument("--base", default="main", help="git revision measured as 'before' (default main)")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--loop-span", type=int, default=256, help="stop_loops min_span_chars (default 256)")
    parser.add_argument("--parallel", type=int, default=16)
    args = parser.parse_args()
    server = None
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        base = args.apibase
        if base is None:
            if not (args.vllm_python and args.model):
                parser.error("give --apibase, or --vllm-python and --model to start vLLM")
            base = f"http://127.0.0.1:{free_port()}"
            server = start_vllm(args.vllm_python, args.model, args.model_name, int(base.rsplit(":", 1)[1]),
                                tmp / "vllm.log")
        try:
            wait_ready(base, server)
            plain = {"temperature": 0.0, "max_tokens": args.max_tokens}
            rule = {"min_span_chars": args.loop_span, "short_unit_span_chars": min(args.loop_span, 128)}
            samplers = {"plain": plain, "stop_loops": {**plain, "stop_loops": rule}}
            for label, data in samplers.items():
                (tmp / f"{label}.json").write_text(json.dumps(data))
            trees = {f"{args.base} (before)": tree_of(args.base, tmp / "base"), "this tree (after)": REPO}
            rows = []
            print(f"vLLM at {base}; configs/tiny.yaml, greedy, max_tokens {args.max_tokens}, "
                  f"--parallel {args.parallel}")
            header = ("tree", "sampler", "samples", "retries", "resent", "idle s", "generated", "recorded",
                      "prompt (server)", "prompt (records)", "stopped", "saved claimed", "saved measured", "load")
            print(" | ".join(header))
            for tree_label, tree in trees.items():
                results = {}
                for label in samplers:
                    results[label] = run_once(tree, base, args.model_name, tmp / f"{label}.json",
                                              tmp / f"{tree.name}-{label}", args)
                measured = results["plain"]["generated"] - results["stop_loops"]["generated"]
                for label, r in results.items():
                    r.update(tree=tree_label, sampler=label,
                             saved_measured=measured if label == "stop_loops" else 0)
                    rows.append(r)
                    print(" | ".join(str(x) for x in (
                        tree_label, label, r["samples"], r["retries"], r["resent"], r["idle_s"], r["generated"],
                        r["recorded"], r["prompt_server"], r["prompt_recorded"], r["stopped"], r["claimed_saved"],
                        r["saved_measured"], f"{r['load']:.1f}")))
        finally:
            if server is not None:
                os.killpg(server.pid, 15)
                server.wait(60)
    after = rows[-1]
    ratio = after["saved_measured"] / after["claimed_saved"] if after["claimed_saved"] else float("nan")
    write_result("vllm_counts", {"rows": rows, "ratio": ratio, "max_tokens": args.max_tokens,
                                 "parallel": args.parallel})
    print(f"RATIO tokens saved as measured / as claimed (this tree): {ratio:.3f}")


if __name__ == "__main__":
    main()
