"""probe.py shortcuts: the shortcut audit of a config's generated problems (docs/tasks.md)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable

from resolver.cli.analyze import output
from resolver.config import DEFAULT_SEED

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser
    from resolver.core.progress import Bar

__all__ = ["register_shortcuts", "run_shortcuts"]


def register_shortcuts(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    from resolver.audit import MIN_SAMPLES
    from resolver.cli.base import positive_int
    from resolver.config import DENSITIES

    p = subparsers.add_parser(
        "shortcuts", help="shortcut audit: do question-blind rules beat guess_chance on a config's problems?",
        description="Generate every point of a config and score question-blind rules (constant answers, "
                    "option shape and agreement, numbers copied from the text, the answer format echoed) "
                    "with the real grader. Exit 1 when a rule beats guess_chance (see docs/tasks.md).")
    p.add_argument("--config", required=True, help="experiment config (configs/*.yaml)")
    p.add_argument("--samples", type=positive_int, default=256,
                   help=f"cases per point (default 256; at least {MIN_SAMPLES})")
    p.add_argument("--density", choices=list(DENSITIES), default="normal", help="grid density (default normal)")
    p.add_argument("--degree", type=int, default=None, help="only this tier (default all)")
    p.add_argument("--task", action="append", default=None, metavar="NAME", help="only this task (repeatable)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"run seed, as runner.py --seed (default {DEFAULT_SEED})")
    p.add_argument("--tokenizer", default=None, help="tokenizer for calibrate tasks (as runner.py)")
    p.add_argument("--template", default=None, help="template for calibrate tasks (as runner.py)")
    p.add_argument("--top", type=positive_int, default=3, help="worst points shown per task (default 3)")
    p.add_argument("--json", default="shortcuts.json", metavar="PATH",
                   help="where to write the full result as JSON (default shortcuts.json; '-' for none)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(handler=run_shortcuts)


def _progress(quiet: bool) -> Callable[[int, int], None]:
    """The audit's progress callback: a line on stderr rewritten every 25 points."""
    def progress(done: int, total: int) -> None:
        if not quiet and (done == total or done % 25 == 0):
            sys.stderr.write(f"\raudited {done}/{total} points")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()
    return progress


def _calibration_bar(**kwargs: Any) -> Bar:
    """The calibration's bar (the library says what it counts and when it shows)."""
    from tqdm import tqdm

    return tqdm(**kwargs)


def run_shortcuts(args: argparse.Namespace) -> int:
    from resolver.audit import MIN_SAMPLES, audit_markdown, run_audit
    from resolver.config import load_config
    from resolver.core import UserError

    if args.samples < MIN_SAMPLES:
        raise UserError(f"--samples {args.samples} is too few to judge a point; use at least {MIN_SAMPLES}")
    config = load_config(args.config)
    template = None
    if args.template:
        from resolver.config import load_template

        template = load_template(args.template)
    report = run_audit(config, samples=args.samples, density=args.density, degree=args.degree,
                       tasks=args.task, seed=args.seed, tokenizer=args.tokenizer, template=template,
                       progress=_progress(args.quiet), calibration_progress=_calibration_bar)
    sys.stdout.write(audit_markdown(report, args.top) + "\n")
    if args.json != "-":
        from resolver.analysis import output_json
        from resolver.audit import ShortcutsOutput

        output.write_file(args.json, output_json(ShortcutsOutput, report.output()))
    return 0 if report.passed else 1
