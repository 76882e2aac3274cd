"""Where analyze.py and probe.py results go: stdout or a descriptively named file.

Text without --output-dir goes to stdout; bytes and figures always need a file (./<name>
without --output-dir); every written file is announced on stderr so piping stdout stays
clean (docs/analyze.md).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from resolver.core import UserError

if TYPE_CHECKING:
    import argparse

    from matplotlib.figure import Figure

__all__ = ["output_name", "save_figure", "slug", "split_dir", "write_file", "write_output", "write_to"]


def slug(value: object) -> str:
    """A filesystem-safe piece of a file name."""
    text = re.sub(r"[^A-Za-z0-9._+-]+", "_", str(value)).strip("_.")
    return text or "all"


def output_name(*parts: object, ext: str) -> str:
    """Descriptive file name from non-empty parts: scores_easy.png, cluster_eval_id_by_base_task.md."""
    pieces = [slug(p) for p in parts if p not in (None, "")]
    return "_".join(pieces) + "." + ext.lstrip(".")


def write_output(name: str, content: str | bytes | Figure, output_dir: str | Path | None = None, stream: TextIO | None = None) -> Path | None:
    """Write text, bytes or a matplotlib figure.

    With output_dir None, text goes to stdout (or `stream`) and None is returned;
    bytes and figures always need a file, so they go to ./<name>.  Otherwise the file
    <output_dir>/<name> is written (directories created) and its path returned.
    """
    is_text = isinstance(content, str)
    if output_dir is None and is_text:
        assert isinstance(content, str)  # is_text says so; mypy does not narrow through the flag
        out = stream or sys.stdout
        out.write(content if content.endswith("\n") else content + "\n")
        out.flush()
        return None
    target = Path(output_dir or ".") / name
    return write_file(target, content)


def write_file(target: str | Path, content: str | bytes | Figure) -> Path:
    """Write content to an explicit path (for --output FILE); a one-line UserError when it cannot."""
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content if content.endswith("\n") else content + "\n", encoding="utf-8")
        elif isinstance(content, (bytes, bytearray)):
            target.write_bytes(bytes(content))
        else:
            save_figure(content, target)
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}")
    sys.stderr.write(f"wrote {target}\n")
    return target


def save_figure(figure: Figure, target: str | Path) -> None:
    """Save a matplotlib figure as PNG and release its memory."""
    import matplotlib.pyplot as plt

    figure.savefig(target, format="png", dpi=figure.get_dpi())
    plt.close(figure)


def write_to(name: str, content: str | bytes | Figure, args: argparse.Namespace) -> Path | None:
    """--output FILE wins over --output-dir; otherwise write_output's rules."""
    if getattr(args, "output", None):
        return write_file(args.output, content)
    return write_output(name, content, args.output_dir)


def split_dir(args: argparse.Namespace, split: str | None) -> str | None:
    """Several split files never go to stdout: they land in --output-dir or '.'."""
    return args.output_dir if args.output_dir or not split else "."
