"""Flags and labels the probe.py subcommands share."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__all__ = ["add_point_ids", "add_tokenizer", "warn"]


def add_point_ids(p: argparse.ArgumentParser) -> None:
    p.add_argument("--point-id", type=int, action="append", required=True, metavar="ID",
                   help="point id from analyze.py points (repeatable)")


def add_tokenizer(p: argparse.ArgumentParser, default_text: str) -> None:
    p.add_argument("--tokenizer", default=None, metavar="NAME_OR_PATH",
                   help=f"tokenizer: a local directory or tokenizer.json, a Hugging Face id, or 'bytes' ({default_text})")


def warn(text: str) -> None:
    """A one-line note on stderr, prefixed with the script's name."""
    sys.stderr.write(f"probe.py: {text}\n")
