"""Quick-start command 1: the whole pipeline on the embedded simulator.

    python3 -m resolver.demo            # install, simulate, run, evaluate, score, serve :8050
    python3 -m resolver.demo --no-serve # stop after printing the scores
    python3 -m resolver.demo --real     # the same with a real model: SmolLM2 on llama.cpp, on the CPU
    python3 -m resolver.demo --real --gguf FILE   # ... or any GGUF model file you have

It runs the real scripts as subprocesses and prints each command first, so what a
newcomer sees is exactly what they would type against a real model server.
Standard library only above the bootstrap call: it must start from a bare python3.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from resolver.cli.base import positive_int
from resolver.cli.llamacpp import THREADS_HELP
from resolver.core import child_options
from resolver.core.bootstrap import REPO, reexec_in_venv
from resolver.llamacpp import ServerDied  # standard library only, like this module

if TYPE_CHECKING:
    from resolver.llamacpp import LlamaServer
    from resolver.sim.simulator import SimulatorProcess

PROFILES = ("sim-strong", "sim-mid", "sim-weak", "sim-loopy")
CONFIG = "configs/tiny.yaml"
TEMPLATE = "templates/zerocot-nosys.json"
SAMPLER = "samplers/greedy-4k.json"
DATASET = "data/demo.json"
REAL_DATASET = "data/demo-real.json"       # the simulated cohorts plus demo/real/
REAL_COHORT = "data/demo/real"
REAL_SAMPLER = "samplers/greedy-256.json"   # a small CPU model that loops would otherwise write 4k tokens
REAL_PRECISION = "low"
# The pair whose paired comparison the demo prints: A first, then B. Their differences are
# small next to the sampling noise and their answers correlate (a problem hard for one is
# hard for the other), so pairing decides cells the unpaired intervals leave open
# (docs/workflow.md, "Step 5").
COMPARE_PAIR = ("sim-weak", "sim-loopy")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m resolver.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-serve", action="store_true", help="do not start the leaderboard at the end")
    parser.add_argument("--port", type=int, default=8050, help="leaderboard port (default 8050)")
    parser.add_argument("--sim-port", type=int, default=0, help="simulator port (default 0: any free port)")
    parser.add_argument("--parallel", type=int, default=64, help="runner --parallel (default 64)")
    parser.add_argument("--root", type=Path, default=REPO,
                        help="folder holding configs/, templates/, samplers/ and data/ (default: this checkout)")
    parser.add_argument("--real", action="store_true",
                        help="also run a real model (SmolLM2-135M-Instruct) through llama.cpp's server on the CPU; "
                             "installs llama-cpp-python the first time (a 2-minute build)")
    parser.add_argument("--gguf", type=Path, metavar="FILE",
                        help="with --real: run this GGUF model file instead of SmolLM2")
    parser.add_argument("--n-ctx", type=int, default=2048, metavar="TOKENS",
                        help="with --real: the llama.cpp server's context size (default 2048)")
    parser.add_argument("--threads", type=positive_int, metavar="N", help=f"with --real: {THREADS_HELP}")
    args = parser.parse_args(argv)
    for flag, value in (("--gguf", args.gguf), ("--threads", args.threads)):
        if value is not None and not args.real:
            parser.error(f"{flag} goes with --real")
    if args.gguf is not None and not args.gguf.is_file():
        parser.error(f"--gguf {args.gguf}: no such file; give a .gguf model file")
    return args


def show_and_run(root: Path, *cmd: str, prog: str = "demo", server: LlamaServer | None = None) -> None:
    """Print a command the way a user would type it, then run it in `root`; stop on failure.

    With `server` (a resolver.llamacpp.LlamaServer) the command is stopped as soon as
    the server dies, and the demo ends with the server's one line (how it died, its log).
    """
    print(f"\n$ python {shlex.join(cmd)}", flush=True)
    script = [str(REPO / cmd[0]), *cmd[1:]] if cmd[0].endswith(".py") else list(cmd)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, *script], cwd=root, **child_options(env=env))  # ends with the demo
    try:
        code = proc.wait() if server is None else server.wait_for(proc)
    except ServerDied as exc:
        raise SystemExit(f"{prog}: {exc}") from None
    except BaseException:
        try:                    # Ctrl-C reached the child too: let it say how to resume
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    if code != 0:
        raise SystemExit(f"{prog}: `{cmd[0]}` failed with exit code {code}")


def start_simulator(root: Path, port: int) -> SimulatorProcess:
    """The simulator on `port` (0 = any free port), started once it says it is serving."""
    from resolver.sim.simulator import start_simulator_process

    simulator = start_simulator_process(str(root / CONFIG), port=port)
    print(f"\n$ python -m resolver.simulator --config {CONFIG} --port {simulator.port} &", flush=True)
    return simulator


def run_profiles(root: Path, port: int, parallel: int) -> None:
    for model in PROFILES:
        show_and_run(
            root,
            "runner.py", "--config", CONFIG, "--template", TEMPLATE, "--sampler", SAMPLER,
            "--model", model, "--apibase", f"http://127.0.0.1:{port}",
            "--precision", "medium", "--parallel", str(parallel),
            "--output", f"data/demo/{model}", "--quiet",
        )


def real_model_name(gguf: Path | None) -> str:
    """The name the real model is run and listed under: SmolLM2's, or the GGUF file's stem."""
    from resolver.llamacpp import SMOLLM2_MODEL

    return SMOLLM2_MODEL if gguf is None else gguf.stem.strip() or "gguf-model"


def write_real_cohort(root: Path, model: str) -> None:
    """data/demo/real/evals.json naming the real model's eval (one entry per model run here)."""
    sampler = Path(REAL_SAMPLER).stem
    template = Path(TEMPLATE).stem
    path = root / REAL_COHORT / "evals.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    evals = json.loads(path.read_text()) if path.exists() else []
    evals = [e for e in evals if e.get("filters", {}).get("model") != model]
    evals.append({
        "evaluate": {"glob": f"{REAL_COHORT}/*_{model}_{template}_{sampler}/*"},
        "filters": {"model": model, "template": template, "sampler": sampler},
        "label": f"{model} (real, llama.cpp CPU, zerocot, greedy-256)",
        "groups": ["family:real", "runtime:llama.cpp"],
        "tags": ["leaderboard", "real"],
        "hf_id": None,
    })
    path.write_text(json.dumps(evals, indent=2) + "\n")


def run_real_model(root: Path, gguf: Path | None, n_ctx: int, threads: int | None = None) -> None:
    """Serve the GGUF with llama.cpp on loopback and run the tiny config against it."""
    from resolver.llamacpp import LlamaServer, install, smollm2_gguf

    reason = install(say=say)
    if reason:
        raise SystemExit(f"demo: {reason}")
    model = real_model_name(gguf)
    path = gguf.resolve() if gguf else smollm2_gguf()
    with LlamaServer(path, alias=model, n_ctx=n_ctx, n_threads=threads) as server:
        print(f"\n$ python -m llama_cpp.server --model {path} --model_alias {model} "
              f"--n_ctx {n_ctx} --n_threads {server.threads} --port {server.port} &", flush=True)
        write_real_cohort(root, model)
        show_and_run(
            root,
            "runner.py", "--config", CONFIG, "--template", TEMPLATE, "--sampler", REAL_SAMPLER,
            "--model", model, "--apibase", server.url, "--precision", REAL_PRECISION,
            "--parallel", "2", "--output", REAL_COHORT, server=server,
        )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    root = args.root.resolve()
    dataset_file = REAL_DATASET if args.real else DATASET
    dataset = json.loads((root / dataset_file).read_text())
    real = f" and {real_model_name(args.gguf)} (real)" if args.real else ""
    print(f"ReasonScape demo: {len(PROFILES)} simulated models{real} on {CONFIG} -> dataset {dataset['name']!r}")
    simulator = start_simulator(root, args.sim_port)
    try:
        run_profiles(root, simulator.port, args.parallel)
    finally:
        simulator.stop()
    if args.real:
        run_real_model(root, args.gguf, args.n_ctx, args.threads)
    show_and_run(root, "evaluate.py", "--dataset", dataset_file)
    show_and_run(root, "analyze.py", "scores", dataset_file)
    show_and_run(root, "analyze.py", "compare", dataset_file, "--filters", compare_filter())
    if args.no_serve:
        return
    print(f"\nServing the leaderboard on http://localhost:{args.port} (Ctrl-C to stop)")
    try:
        show_and_run(root, "leaderboard.py", dataset_file, "--port", str(args.port))
    except KeyboardInterrupt:
        print("\nstopped")


def compare_filter() -> str:
    """The --filters naming COMPARE_PAIR's two evals (A first), as a user would type it."""
    from resolver.catalog import eval_id

    template, sampler = Path(TEMPLATE).stem, Path(SAMPLER).stem
    return json.dumps({"eval_id": [eval_id(model, template, sampler) for model in COMPARE_PAIR]})


def run() -> None:
    """`python -m resolver.demo`: into the project's virtualenv (installing it the first time), then main."""
    reexec_in_venv("resolver.demo", say=say)
    main()


def say(line: str) -> None:
    """The bootstrap's progress lines (creating the venv, installing requirements)."""
    print(line, flush=True)


if __name__ == "__main__":             # python -m resolver.demo (resolver/demo.py)
    run()
