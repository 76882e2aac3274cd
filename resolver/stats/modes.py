"""The estimator modes' names and the default one: the one definition of each.

Standard library only, apart from estimates.py's numpy and pandas, so that a parser's
`--mode` choices (analyze.py's, built for `--help`) load neither (docs/performance.md);
what each mode estimates is estimates.py's `MODE_DESCRIPTIONS` and docs/statistics.md.
"""
from __future__ import annotations

__all__ = ["DEFAULT_MODE", "MODES"]

MODES = ("E_I", "E_P", "E_O", "C_I", "C_P", "C_O")
DEFAULT_MODE = "C_P"
