"""cohort.py's command: flags, output and exit codes (its usage is the root cohort.py's docstring; docs/cohort.md)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Sequence

from resolver.cli.base import ArgParser

if TYPE_CHECKING:
    from resolver.core.progress import Bar

DEFAULT_ROOT = "data"


def build_parser() -> ArgParser:
    parser = ArgParser(prog="cohort.py", description="List, verify and post-process cohorts.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    listing = sub.add_parser("list", help="markdown table of each cohort's evals")
    listing.add_argument("path", nargs="?", help="cohort directory or glob (default: every cohort under data/)")
    listing.add_argument("--search", help="case-insensitive regex over cohort path, model, label, hf_id, groups")
    info = sub.add_parser("info", help="like list, with every run folder")
    info.add_argument("path", help="cohort directory (or glob)")
    info.add_argument("--search", help="case-insensitive regex, as for list")
    verify = sub.add_parser("verify", help="check globs, records and point completeness")
    verify.add_argument("path", nargs="?", help="cohort directory or glob (default: every cohort under data/)")
    verify.add_argument("--quiet", action="store_true", help="no progress bars")
    context = sub.add_parser("context", help="create a context-limited variant of an eval")
    context.add_argument("cohort", help="cohort directory")
    context.add_argument("--eval-id", required=True, help="the eval to limit (6 characters)")
    context.add_argument("--context", required=True, type=int, help="context limit in tokens (e.g. 12288)")
    context.add_argument("--tokenizer", help="HF id or local tokenizer dir for exact cuts; 'usage' = counts only "
                                             "(default: the eval's hf_id when it loads, else counts only)")
    context.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from resolver.catalog import cohort_report as cohort_report, cohorts as cohorts

    args = build_parser().parse_args(argv)
    if args.command in ("list", "info"):
        summaries = cohorts.list_cohorts(args.path, DEFAULT_ROOT, args.search)
        print(cohort_report.render_list(summaries, detail=args.command == "info"))
        return 0
    if args.command == "verify":
        from resolver.catalog import verify_cohort

        progress = None if args.quiet else progress_bar
        checks = [verify_cohort(c, progress) for c in cohorts.resolve_cohorts(args.path, DEFAULT_ROOT)]
        print(cohort_report.render_verify(checks) if checks else "no cohorts found under data/")
        return 1 if any(c.all_problems() for c in checks) else 0
    from resolver.catalog import make_context_variant

    result = make_context_variant(args.cohort, args.eval_id, args.context, args.tokenizer, quiet=args.quiet,
                                  warn=lambda line: print(line, file=sys.stderr), progress=progress_bar)
    print(cohort_report.render_context(result))
    return 0


def progress_bar(**kwargs: Any) -> Bar:
    """A progress bar on stderr, shown only on a terminal (tqdm's disable=None)."""
    from tqdm import tqdm

    return tqdm(disable=None, **kwargs)
