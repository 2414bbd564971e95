"""Unit formatting at the edge: SI values in, short human strings out."""

from __future__ import annotations

import math


def _finite(v) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def tokens(n) -> str:
    """1024 → '1k', 200000 → '200k', 1048576 → '1M' (binary-ish powers shown as k/M)."""
    if not _finite(n):
        return "∞" if n is not None and float(n) > 0 else "—"
    n = float(n)
    for div, suf in ((1_048_576, "M"), (1_000_000, "M"), (1024, "k"), (1000, "k")):
        if n >= div and (n / div).is_integer():
            return f"{int(n / div)}{suf}"
    if n >= 1e6:
        return f"{n / 1e6:.3g}M"
    if n >= 1e3:
        return f"{n / 1e3:.3g}k"
    return f"{n:.3g}"


def seconds(t) -> str:
    if not _finite(t):
        return "—"
    t = float(t)
    if t >= 3600:
        return f"{t / 3600:.3g} h"
    if t >= 60:
        return f"{t / 60:.3g} min"
    if t >= 1:
        return f"{t:.3g} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} µs"


def duration(t) -> str:
    """A span of time in words: `seconds` up to two days, then days (hold times, deployments)."""
    return f"{float(t) / 86400:.3g} days" if _finite(t) and float(t) >= 2 * 86400 else seconds(t)


def usd(x) -> str:
    if not _finite(x):
        return "—"
    x = float(x)
    if x >= 100:
        return f"${x:,.0f}"
    if x >= 1:
        return f"${x:.2f}"
    if 0 < x < 1e-4:          # three significant digits without an exponent: $0.0000870, not $8.7e-05
        return f"${x:.{2 - math.floor(math.log10(x))}f}"
    return f"${x:.3g}"


def number(x, digits: int = 3) -> str:
    if not _finite(x):
        return "∞" if x is not None and _is_pos_inf(x) else "—"
    x = float(x)
    if abs(x) >= 1e15 or (x != 0 and abs(x) < 1e-3):
        return f"{x:.{digits - 1}e}"
    for div, suf in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(x) >= div:
            return f"{x / div:.{digits}g}{suf}"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _is_pos_inf(x) -> bool:
    try:
        return float(x) == math.inf
    except (TypeError, ValueError):
        return False


def bytes_(b) -> str:
    if not _finite(b):
        return "—"
    b = float(b)
    for div, suf in ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(b) >= div:
            return f"{b / div:.3g} {suf}"
    return f"{b:.4g} B"


def rate(x, unit: str) -> str:
    if not _finite(x):
        return "—"
    return f"{number(x)} {unit}"


VENDORS = ("NVIDIA ", "Google Cloud ", "Google ", "AMD Instinct ", "AMD ")


def short_name(name: str, *, terse: bool = False) -> str:
    """A chip's or model's name for a label: no vendor, nothing in parentheses ("NVIDIA GB200 NVL72 (per
    Blackwell GPU)" → "GB200 NVL72", "Llama 4 Maverick (17B-128E)" → "Llama 4 Maverick").  `terse` also
    drops the form factor and memory size, for labels beside points ("NVIDIA H100 SXM5 80GB" → "H100")."""
    out = name
    for vendor in VENDORS:
        out = out.removeprefix(vendor)
    out = out.split(" (")[0].strip()
    if terse:
        words = []
        for w in out.split():
            if w.startswith(("SXM", "NVL")) or w.endswith("GB") or w == "per":
                break
            words.append(w)
        out = " ".join(words)
    return out or name
