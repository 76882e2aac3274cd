"""Axis and legend text shared by the figures."""
from __future__ import annotations

import numpy as np


def tick_text(value: object) -> str:
    """A parameter value as a tick label: whole floats without their ".0" (8.0 -> "8")."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)
