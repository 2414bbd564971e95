"""LaTeX for the lecture's equations with today's numbers substituted (strings only)."""

from __future__ import annotations

import math


def tex_num(x: float, unit: str = "") -> str:
    """A number in engineering style for KaTeX: 989e12 → '989\\,\\text{T}' + unit."""
    if x is None or not math.isfinite(x):
        return r"\infty"
    for div, p in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return rf"{x / div:.3g}\,\text{{{p}{unit}}}"
    if abs(x) < 1e-2 and x != 0:
        for mul, p in ((1e3, "m"), (1e6, "µ")):
            if abs(x) * mul >= 1:
                return rf"{x * mul:.3g}\,\text{{{p}{unit}}}"
    return rf"{x:.3g}" + (rf"\,\text{{{unit}}}" if unit else "")


def params(x: float) -> str:
    for div, p in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(x) >= div:
            return rf"{x / div:.3g}\text{{{p}}}"
    return f"{x:.3g}"


def tex_int(x: float) -> str:
    """2400 → '2{,}400' (KaTeX puts a space after a bare comma)."""
    if x is None or not math.isfinite(x):
        return r"\infty"
    return f"{x:,.0f}".replace(",", "{,}")
