"""The displayed equations, each with today's numbers substituted: one builder per equation.

A builder takes the system (or the model's results) and returns the TeX (KaTeX's dialect) that the
page, the walkthrough and the offline deck all show, so the three cannot drift apart.  Its numbers
come from the model (model/); a builder only writes them down.  No Streamlit here: the pages draw
the strings with `ui.elements.live_tex.latex(tex, key=…)`.

The modules follow the pages (`batch`, `kv_cache`, …: a page's own equations and those it shares);
this one holds the number formats and the layout helpers they use.
"""

from __future__ import annotations

import math

STRUT = r"\rule[-10pt]{0pt}{10pt}"          # keeps KaTeX from clipping a last-row fraction's denominator


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
    """A parameter count: 70.6e9 → '70.6\\text{B}'."""
    for div, p in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(x) >= div:
            return rf"{x / div:.3g}\text{{{p}}}"
    return f"{x:.3g}"


def tex_int(x: float) -> str:
    """2400 → '2{,}400' (KaTeX puts a space after a bare comma)."""
    if x is None or not math.isfinite(x):
        return r"\infty"
    return f"{x:,.0f}".replace(",", "{,}")


def tex_time(t: float) -> str:
    """Seconds in ms below one second (decode steps, floors and hops sit in the ms range)."""
    return rf"{t * 1e3:.3g}\,\text{{ms}}" if 0 < t < 1 else tex_num(t, "s")


def row(equation: str) -> str:
    """An equation 'lhs = rhs' as a row of an `aligned` block: aligned at its first '='."""
    lhs, rhs = equation.split(" = ", 1)
    return f"{lhs} &= {rhs}"
