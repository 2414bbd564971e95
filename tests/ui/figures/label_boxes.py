"""Where a figure's text labels land, estimated from the figure alone (no browser): each annotation as a box, x
as a share of its axis, y in px below the top of the plot.  A label's width is its characters at CHAR_SHARE of
the axis each (11 px type, a phone's annotations, on a ~300 px plot: the widest share a label takes), its
height LINE_PX per line.  tests/browser/test_collisions.py measures the drawn boxes; these catch a label
placed on top of another without starting a browser."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

CHAR_SHARE = 0.018          # an 11 px character (≈ 5 px) on a ≈ 280 px plot
LINE_PX = 20                # a line of 14 px type


def text_of(ann) -> str:
    """An annotation's visible text, tags dropped."""
    return re.sub(r"<[^>]+>", "", ann.text or "")


def _anchor(a: str | None, v: float) -> str:
    """Plotly's "auto" anchor of a label at share v of the plot: the near side, or the middle."""
    if a not in (None, "auto"):
        return a
    return "low" if v < 1 / 3 else "high" if v > 2 / 3 else "mid"


def boxes(fig, x_range: Sequence[float], y_range: Sequence[float] | None, plot_px: float, *,
          xaxis: str = "x", keep=lambda ann: True) -> dict[str, tuple[float, float, float, float]]:
    """{text: (x0, x1, top_px, bottom_px)} of the annotations on `xaxis` ("x": its data, in log10 units with
    `x_range` its ends; "x domain": a share) whose x and y are on that panel, for those `keep` keeps.  y on the
    y axis's data needs `y_range` (log10 ends)."""
    out = {}
    ya = "y" + xaxis[1:]
    for ann in fig.layout.annotations:
        if ann.xref not in (xaxis, f"{xaxis} domain") or ann.yref not in (ya, f"{ya} domain") or not keep(ann):
            continue
        text = text_of(ann)
        x = ann.x if ann.xref.endswith("domain") else (ann.x - x_range[0]) / (x_range[1] - x_range[0])
        y = ann.y if ann.yref.endswith("domain") else (ann.y - y_range[0]) / (y_range[1] - y_range[0])
        lines = [re.sub(r"<[^>]+>", "", line) for line in (ann.text or "").split("<br>")]
        w, h = max(len(line) for line in lines) * CHAR_SHARE, LINE_PX * len(lines)
        xa = {"left": "low", "right": "high", "center": "mid"}.get(ann.xanchor, _anchor(ann.xanchor, x))
        x0 = {"low": x, "high": x - w}.get(xa, x - w / 2)
        top = (1 - y) * plot_px - (ann.yshift or 0)
        ya_ = {"top": "high", "bottom": "low", "middle": "mid"}.get(ann.yanchor, _anchor(ann.yanchor, y))
        top = {"high": top, "low": top - h}.get(ya_, top - h / 2)
        out[text] = (x0, x0 + w, top, top + h)
    return out


def overlaps(bxs: dict[str, tuple[float, float, float, float]]) -> list[tuple[str, str]]:
    """The pairs of boxes that intersect."""
    return [(a, b) for (a, p), (b, q) in itertools.combinations(bxs.items(), 2)
            if p[0] < q[1] and q[0] < p[1] and p[2] < q[3] and q[2] < p[3]]
