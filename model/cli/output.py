"""How the subcommands print: JSON made safe (non-finite → null) and readable tables."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def clean(x: Any) -> Any:
    """JSON-safe: numpy → Python, non-finite → None."""
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return clean(x.tolist())
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def fmt(v: Any, digits: int = 4) -> str:
    """One table cell: about `digits` significant figures, — for null, yes/NO for booleans."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, (int, float)):
        if not math.isfinite(v):
            return "∞" if v > 0 else "—"
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
            return f"{v:.{digits - 1}e}"
        if float(v).is_integer():
            return f"{int(v):,}"
        return f"{v:,.{max(0, digits - 1 - math.floor(math.log10(abs(v))) if v else 0)}f}"
    return str(v)


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """Right-aligned columns under a header and a rule."""
    cells = [[fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) for h, w in zip(headers, widths))
    body = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])


def kv_lines(pairs: list[tuple[str, Any]]) -> str:
    """'label  value' lines, the values lined up."""
    w = max(len(k) for k, _ in pairs)
    return "\n".join(f"{k.ljust(w)}  {fmt(v)}" for k, v in pairs)


def header(summary: dict[str, Any]) -> str:
    """The lines above a subcommand's table: the system as used (`common.system_summary`)."""
    s = summary
    auto = " (auto: smallest power of two holding weights + KV, up to the scale-up domain)"
    chips = f"{fmt(s['chips'])}{auto if s['chips_auto'] else ''}"
    flops = "— TFLOP/s" if s["flops_per_s"] is None else f"{s['flops_per_s'] / 1e12:,.0f} TFLOP/s"
    bw = "— TB/s" if s["hbm_bandwidth_bytes_per_s"] is None else f"{s['hbm_bandwidth_bytes_per_s'] / 1e12:,.2f} TB/s"
    lines = [f"{s['hardware']} × {s['model']}: C = {chips} chips, P = {s['pipeline_stages']}, "
             f"{s['mode']} mode",
             f"weights {s['weight_dtype']} ({s['weight_bytes'] / 1e9:,.1f} GB), KV {s['kv_dtype']}"
             + (f" ({fmt(s['kv_bytes_per_token'])} B/token)" if s.get("kv_bytes_per_token") else "")
             + f", compute {s['compute_dtype']} ({flops}, {bw} per chip)"]
    if s.get("not_given"):
        lines.append("not given (outputs that need them are null): " + ", ".join(s["not_given"]))
    if s.get("chips_rule"):
        lines.append("C = " + s["chips_rule"])
    if s.get("uncertain_inputs"):
        lines.append("uncertain preset figures used: " + ", ".join(s["uncertain_inputs"]))
    if s.get("unsourced"):
        lines.append(unsourced_note(s["unsourced"]))
    return "\n".join(lines)


def unsourced_note(names: list[str]) -> str:
    """The note under a table that lists numbers from the user's own file given without a source."""
    return "note: unsourced numbers (your own file gives no source or date for them): " + ", ".join(names)
