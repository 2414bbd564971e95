"""Percentiles and verdicts shared by the benchmarks (no Playwright, no Streamlit)."""

from __future__ import annotations

import math
import statistics


def pct(xs: list[float], q: float) -> float:
    """The q-th percentile (inclusive method); NaN for no data."""
    if not xs:
        return math.nan
    if len(xs) == 1:
        return xs[0]
    return statistics.quantiles(xs, n=100, method="inclusive")[round(q) - 1]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"
