"""`python -m resolver.simulator`: the simulated OpenAI-compatible model server (docs/simulator.md),
and `python -m resolver.simulator run-batch`, its stand-in for `vllm run-batch`.

The server itself is resolver/sim (`run_simulator`, `run_batch`); this module is their flags and lines.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Sequence

from resolver.cli.base import ArgParser, positive_int
from resolver.config import DEFAULT_SEED, DENSITIES
from resolver.core import UserError
from resolver.sim.gpu import DEFAULT_MAX_BATCH, PRESETS

if TYPE_CHECKING:
    import argparse

    from resolver.config import Template
    from resolver.core.progress import Bar


def build_parser() -> ArgParser:
    parser = ArgParser(prog="python -m resolver.simulator",
                       description="Simulated OpenAI-compatible model server (models sim-*), for demos and tests. "
                                   "`python -m resolver.simulator run-batch --help`: the vllm run-batch stand-in.")
    parser.add_argument("--config", help="experiment config whose prompts it should recognise "
                        "(without it every prompt gets a plausible wrong answer)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the runner's --seed (default {DEFAULT_SEED})")
    parser.add_argument("--precision", help="recognise only as many rounds as this precision level "
                        "can ask for (default: the config's deepest level)")
    add_density_flag(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=3333, help="port (default 3333; 0 = any free port)")
    parser.add_argument("--latency", type=float, default=0.0, metavar="MS",
                        help="added delay before every answer, in milliseconds (default 0)")
    parser.add_argument("--fault-rate", type=float, default=0.0, metavar="R",
                        help="total fault rate, split evenly over 429, 500, stall, drop, malformed")
    parser.add_argument("--faults", metavar="SPEC",
                        help="per-kind fault rates, e.g. 429=0.05,500=0.02,stall=0.01,drop=0.01,malformed=0.01")
    parser.add_argument("--retry-after", type=float, default=1.0, metavar="S",
                        help="Retry-After seconds sent with simulated 429s (default 1)")
    parser.add_argument("--stall-seconds", type=float, default=30.0, metavar="S",
                        help="how long a stalled request hangs before answering (default 30)")
    parser.add_argument("--api-key", help="require this bearer token (default: no auth)")
    add_answer_flags(parser)
    parser.add_argument("--gpu", metavar="PRESET", help="GPU mode: pace replies as a continuously batching "
                        f"server on this GPU would ({', '.join(PRESETS)}, or a .json file of a fitted model; "
                        "default: answer at once)")
    parser.add_argument("--max-batch", type=positive_int, default=DEFAULT_MAX_BATCH, metavar="N",
                        help=f"GPU mode: most sequences decoded at once (vLLM's max_num_seqs; default {DEFAULT_MAX_BATCH})")
    parser.add_argument("--time-scale", type=float, default=1.0, metavar="K",
                        help="GPU mode: simulated seconds per real second (default 1)")
    return parser


def add_density_flag(parser: ArgParser) -> None:
    """--density: the grid whose problems are recognised (a thinner one calibrates fewer points)."""
    parser.add_argument("--density", choices=DENSITIES, default="normal",
                        help="recognise only the points of this grid density and thinner ones: the runner's "
                             "--density (default normal, every point); a thinner one starts sooner, "
                             "calibrating fewer points, but rescales difficulties, so shared points may "
                             "get other answers (docs/simulator.md)")


def add_answer_flags(parser: ArgParser) -> None:
    """What decides the answers' text, shared by the server and run-batch."""
    from resolver.sim.app import THINK_STYLES

    parser.add_argument("--think-style", choices=THINK_STYLES, default="inline",
                        help="where sim-thinker puts its reasoning: inline <think> block (default), "
                             "or the reasoning_content / reasoning field")
    parser.add_argument("--tokenizer", help="tokenizer for calibrated tasks (as runner.py --tokenizer)")
    parser.add_argument("--template", help="template for calibrated tasks (as runner.py --template)")


def build_run_batch_parser() -> ArgParser:
    parser = ArgParser(prog="python -m resolver.simulator run-batch",
                       description="Stand-in for `vllm run-batch`: answer a batch input file as the simulator "
                                   "would and price it on a simulated GPU (virtual time, no waiting).")
    parser.add_argument("-i", "--input-file", required=True, metavar="IN", help="run-batch input NDJSON")
    parser.add_argument("-o", "--output-file", required=True, metavar="OUT", help="where to write vLLM's output NDJSON")
    parser.add_argument("--config", help="experiment config whose prompts it should recognise")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the runner's --seed (default {DEFAULT_SEED})")
    parser.add_argument("--precision", help="recognise only as many rounds as this precision level can ask for")
    add_density_flag(parser)
    add_answer_flags(parser)
    parser.add_argument("--gpu", metavar="PRESET", default="h200-8b",
                        help=f"GPU preset ({', '.join(PRESETS)}, or a .json file of a fitted model; default h200-8b)")
    parser.add_argument("--max-batch", type=positive_int, default=DEFAULT_MAX_BATCH, metavar="N",
                        help=f"most sequences decoded at once (default {DEFAULT_MAX_BATCH})")
    parser.add_argument("--model-load", type=float, metavar="SECONDS",
                        help="simulated model load paid once per run (default: the preset's)")
    parser.add_argument("--stats", metavar="FILE", help="also write the simulated costs as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from resolver.sim.faults import parse_faults
    from resolver.sim.simulator import run_simulator

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run-batch"]:
        return run_batch_main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.port < 0 or args.port > 65535:
        raise UserError(f"--port {args.port} is not valid; use 0..65535")
    faults = parse_faults(args.faults, args.fault_rate)
    template = _template(args)
    run_simulator(config=args.config, seed=args.seed, precision=args.precision, density=args.density,
                  host=args.host, port=args.port,
                  latency_ms=args.latency, faults=faults, retry_after=args.retry_after,
                  stall_seconds=args.stall_seconds, api_key=args.api_key, think_style=args.think_style,
                  tokenizer=args.tokenizer, template=template,
                  gpu=args.gpu, max_batch=args.max_batch, time_scale=args.time_scale,
                  say=lambda line: print(line, flush=True), warn=lambda line: sys.stderr.write(line + "\n"),
                  progress=progress_bar)
    return 0


def _template(args: argparse.Namespace) -> Template | None:
    if not args.template:
        return None
    from resolver.config import load_template

    return load_template(args.template)


def run_batch_main(argv: list[str]) -> int:
    from resolver.sim.app import SimulatorApp
    from resolver.sim.gpu import gpu_preset
    from resolver.sim.problems import ExperimentProblems
    from resolver.sim.runbatch import run_batch

    args = build_run_batch_parser().parse_args(argv)
    model = gpu_preset(args.gpu)
    if args.model_load is not None and not args.model_load >= 0:
        raise UserError(f"--model-load {args.model_load:g} is not valid; use 0 or more seconds")
    problems = (ExperimentProblems(args.config, seed=args.seed, precision=args.precision, density=args.density,
                                   tokenizer=args.tokenizer,
                                   template=_template(args), warn=lambda line: sys.stderr.write(line + "\n"),
                                   progress=progress_bar) if args.config else None)
    app = SimulatorApp(problems, seed=args.seed, think_style=args.think_style)
    stats = run_batch(args.input_file, args.output_file, app=app, model=model, max_batch=args.max_batch,
                      model_load_s=args.model_load)
    print(f"run-batch: {stats.answered:,} of {stats.requests:,} requests answered -> {args.output_file}"
          + (f" ({stats.failed:,} failed)" if stats.failed else ""))
    print(f"simulated {model.name}: model load {stats.model_load_seconds:,.1f} s + GPU busy "
          f"{stats.busy_seconds:,.1f} s (prefill {stats.prefill_seconds:,.1f} s) = {stats.total_seconds:,.1f} s; "
          f"{stats.tokens_generated:,} tokens generated, {stats.prompt_tokens:,} prompt tokens, "
          f"at most {stats.max_sequences} sequences")
    if args.stats:
        import json
        from pathlib import Path

        Path(args.stats).write_text(json.dumps({"gpu": model.name, "max_batch": args.max_batch, **stats.to_json()},
                                               indent=1) + "\n", encoding="utf-8")
    return 0


def progress_bar(**kwargs: Any) -> Bar:
    """The calibration's bar (the library says what it counts and when it shows)."""
    from tqdm import tqdm

    return tqdm(**kwargs)


if __name__ == "__main__":             # python -m resolver.simulator (resolver/simulator.py)
    from resolver.cli.base import run_main

    run_main(main)
