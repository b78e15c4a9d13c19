"""Readable ticks for log axes: 1, 2, 5, 10, 20, 50, ... (plotly's own log ticks read "2 3 ... 9 1 2 3")."""

from __future__ import annotations

import math
from typing import Any


def log_ticks(low: float, high: float) -> dict[str, Any]:
    """Plotly axis properties placing ticks at 1-2-5 steps between ``low`` and ``high`` (> 0)."""
    values = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for mantissa in (1, 2, 5):
            value = mantissa * 10**exponent
            if low <= value <= high:
                values.append(value)
    return {"tickvals": values, "ticktext": [f"{v:,g}" if v < 1 else f"{v:,.0f}" for v in values]}
