"""The command layer: argument parsing, printing, exit codes and output files of the root
scripts; every other package of resolver computes and returns data (docs/architecture.md).
"""
# Placeholder from the analyze/probe branch; the scripts' branch owns this file.
from __future__ import annotations

from resolver import lazy_exports

__all__ = [
    "analyze",
    "probe",
    "theme_agreement",
]

__getattr__, __dir__ = lazy_exports(__name__, {}, {"analyze", "probe", "theme_agreement"}, globals())
