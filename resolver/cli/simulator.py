"""`python -m resolver.simulator`: the simulated OpenAI-compatible model server (docs/simulator.md).

The server itself is resolver/sim (`run_simulator`); this module is its flags and its lines.
"""
from __future__ import annotations

import sys

from resolver.cli.base import ArgParser
from resolver.core import UserError


def build_parser() -> ArgParser:
    from resolver.sim.app import THINK_STYLES

    parser = ArgParser(prog="python -m resolver.simulator",
                       description="Simulated OpenAI-compatible model server (models sim-*), for demos and tests.")
    parser.add_argument("--config", help="experiment config whose prompts it should recognise "
                        "(without it every prompt gets a plausible wrong answer)")
    parser.add_argument("--seed", type=int, default=42, help="the runner's --seed (default 42)")
    parser.add_argument("--precision", help="recognise only as many rounds as this precision level "
                        "can ask for (default: the config's deepest level)")
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
    parser.add_argument("--think-style", choices=THINK_STYLES, default="inline",
                        help="where sim-thinker puts its reasoning: inline <think> block (default), "
                             "or the reasoning_content / reasoning field")
    parser.add_argument("--tokenizer", help="tokenizer for calibrated tasks (as runner.py --tokenizer)")
    parser.add_argument("--template", help="template for calibrated tasks (as runner.py --template)")
    return parser


def main(argv=None) -> int:
    from resolver.sim.faults import parse_faults
    from resolver.sim.simulator import run_simulator

    args = build_parser().parse_args(argv)
    if args.port < 0 or args.port > 65535:
        raise UserError(f"--port {args.port} is not valid; use 0..65535")
    faults = parse_faults(args.faults, args.fault_rate)
    template = None
    if args.template:
        from resolver.config import load_template

        template = load_template(args.template)
    run_simulator(config=args.config, seed=args.seed, precision=args.precision, host=args.host, port=args.port,
                  latency_ms=args.latency, faults=faults, retry_after=args.retry_after,
                  stall_seconds=args.stall_seconds, api_key=args.api_key, think_style=args.think_style,
                  tokenizer=args.tokenizer, template=template,
                  say=lambda line: print(line, flush=True), warn=lambda line: sys.stderr.write(line + "\n"),
                  progress=progress_bar)
    return 0


def progress_bar(**kwargs):
    """The calibration's bar (the library says what it counts and when it shows)."""
    from tqdm import tqdm

    return tqdm(**kwargs)
