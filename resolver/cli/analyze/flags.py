"""The flags most analyze.py and probe.py subcommands share: the dataset, --filters,
--format, --output-dir, --mode, --width and the dimension flags that accept "none"."""
from __future__ import annotations

import argparse
from typing import Any, Sequence

from resolver.cli.base import positive_int
from resolver.stats import DEFAULT_MODE, MODES

__all__ = ["DATASET_HELP", "MAX_WIDTH", "add_dataset_arg", "add_dimension_arg", "add_filters_arg", "add_format_arg",
           "add_mode_arg", "add_output_dir_arg", "add_width_arg", "pixel_width", "positive_int"]

DATASET_HELP = "dataset config JSON, e.g. data/r12.json, or a PointsDB file, e.g. pointsdb-interview.db"
MAX_WIDTH = 10_000      # pixels; a bigger PNG is a typo, and would take minutes and gigabytes to draw


def add_dataset_arg(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """The positional dataset path (optional where e.g. --hf-id can replace it)."""
    if required:
        parser.add_argument("dataset", help=DATASET_HELP)
    else:
        parser.add_argument("dataset", nargs="?", default=None, help=DATASET_HELP)


def add_filters_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--filters", default=None, metavar="JSON",
        help='standard filter JSON, e.g. \'{"eval_id": ["a1b2c3"], "base_task": "arithmetic"}\'',
    )


def add_format_arg(parser: argparse.ArgumentParser, choices: Sequence[str], default: str) -> None:
    parser.add_argument("--format", choices=list(choices), default=default,
                        help=f"output format: {', '.join(choices)} (default {default})")


def add_output_dir_arg(parser: argparse.ArgumentParser, default: str | None = None, required: bool = False) -> None:
    """--output-dir; with default None, text goes to stdout and images to the current directory."""
    if required:
        help_text = "directory for output files (required)"
    elif default is None:
        help_text = "directory for output files (default: text to stdout, images to .)"
    else:
        help_text = f"directory for output files (default {default})"
    parser.add_argument("--output-dir", default=None if required else default, required=required, help=help_text)


def add_mode_arg(parser: argparse.ArgumentParser, choices: Sequence[str] = MODES, default: str = DEFAULT_MODE) -> None:
    parser.add_argument("--mode", choices=list(choices), default=default,
                        help=f"statistical mode: {', '.join(choices)} (default {default}); see docs/analyze.md")


def pixel_width(text: str) -> int:
    """argparse type: a PNG width from 1 to MAX_WIDTH pixels."""
    value = positive_int(text)
    if value > MAX_WIDTH:
        raise argparse.ArgumentTypeError(f"expected a width from 1 to {MAX_WIDTH} pixels, got {text!r}")
    return value


def add_width_arg(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument("--width", type=pixel_width, default=default,
                        help=f"PNG width in pixels, at most {MAX_WIDTH} (default {default})")


def add_dimension_arg(parser: argparse.ArgumentParser, flag: str, default: str | None, help_text: str, action: str | None = None,
                      allow_none: bool = True) -> None:
    """A dimension flag (--group-by, --facet-by, --split-by); 'none' turns it off when allowed."""
    note = "; 'none' disables" if allow_none else ""
    kwargs: dict[str, Any] = {"default": default, "metavar": "DIM", "help": f"{help_text} (default {default or 'none'}{note})"}
    if action:
        kwargs["action"] = action
    parser.add_argument(flag, **kwargs)
