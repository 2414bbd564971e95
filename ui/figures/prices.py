"""Figure builders for the Prices decoded page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_prices.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import NOW_MARKER, TERM_COLORS
from ui.figures.plot import FONT_SIZE, Spec, axis, base_layout

BAR_COLOR = "#4C78A8"
HIGHLIGHT_COLOR = NOW_MARKER["color"]
BAND_COLOR = "#54A24B"
REF_COLOR = "#333333"
COMPUTE_COLOR = TERM_COLORS["matmul"]
KV_COLOR = TERM_COLORS["kv"]
ARCH_COLOR = "#B279A2"
INPUT_PRICE_COLOR = "#F58518"
OUTPUT_PRICE_COLOR = "#E45756"

# A roofline curve: (legend name, y per context, colour, dash); a price step: (legend name, y, colour).
Curve = tuple[str, np.ndarray, str, str]
Step = tuple[str, np.ndarray, str]


def _tok(x: float) -> str:
    """1e3 → '1k', 1e6 → '1M' (tick labels)."""
    for div, suf in ((1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:g}{suf}"
    return f"{x:g}"


def offer_bars(labels: Sequence[str], values: np.ndarray, *, title: str, x_title: str, unit: str = "×",
               highlight: int | None = None, uncertain: Sequence[bool] | None = None,
               band: tuple[float, float, str] | None = None, ref: tuple[float, str] | None = None,
               hover: Sequence[str] | None = None, log: bool = False) -> go.Figure:
    """Horizontal bars, one per price preset (first at the top), value [unit] on x.

    `highlight` outlines and colours one bar (the preset the page's equation uses); `uncertain`
    hatches the bars that rest on a figure flagged uncertain (and says so in the legend); `band`
    shades a range on x (the lecture's 3–5×); `ref` draws a reference line (the lecture's ~10×)."""
    v = np.asarray(values, float)
    n = len(labels)
    unc = [bool(u) for u in (uncertain if uncertain is not None else [False] * n)]
    colors = [HIGHLIGHT_COLOR if i == highlight else BAR_COLOR for i in range(n)]
    spec = Spec()
    spec.log_x = {1: log}
    if band is not None:
        lo, hi, text = band
        spec.vrect(lo, hi, color=BAND_COLOR, opacity=0.15)
        spec.label(float(np.sqrt(lo * hi)) if log else 0.5 * (lo + hi), 1.0, text, yanchor="bottom",
                   font={"size": FONT_SIZE - 3, "color": BAND_COLOR})
    if ref is not None:
        spec.vline(ref[0], color=REF_COLOR, dash="dash", width=3)
        spec.label(ref[0], 1.0, ref[1], yanchor="bottom", font={"size": FONT_SIZE - 3, "color": REF_COLOR})
    spec.trace("bar", orientation="h", y=list(labels), x=v, name="price presets",
               marker={"color": colors, "line": {"width": [3 if i == highlight else 0 for i in range(n)],
                                                 "color": "#222"},
                       "pattern": {"shape": ["/" if u else "" for u in unc], "fgcolor": "white"}},
               customdata=list(hover) if hover is not None else list(labels),
               text=[f"{x:.3g}{unit}" if np.isfinite(x) else "" for x in v], textposition="outside",
               textfont={"size": FONT_SIZE - 3}, cliponaxis=False,
               hovertemplate="%{y}: %{x:.3g}" + unit + "<br>%{customdata}<extra></extra>", showlegend=False)
    if any(unc):
        spec.trace("bar", orientation="h", y=[None], x=[None], name="hatched: rests on an uncertain price",
                   marker={"color": BAR_COLOR, "pattern": {"shape": "/", "fgcolor": "white"}})
    if highlight is not None:
        spec.trace("bar", orientation="h", y=[None], x=[None], name="the preset in the equation above",
                   marker={"color": HIGHLIGHT_COLOR})
    finite = v[np.isfinite(v) & (v > 0)]
    top = float(finite.max()) if finite.size else 1.0
    extra = [band[1]] if band else []
    extra += [ref[0]] if ref else []
    top = max([top, *extra])
    if log:
        lo = min([float(finite.min()) if finite.size else 1.0, *(band[:1] if band else []), *(extra or [1.0])])
        xrange = [float(np.log10(lo / 1.5)), float(np.log10(top * 2.0))]
    else:
        xrange = [0.0, 1.18 * top]
    spec.layout = base_layout(title, height=max(380, 150 + 34 * n), hovermode="closest",
                              xaxis=axis(x_title, log=log, range=xrange),
                              yaxis={"type": "category", "autorange": "reversed",
                                     "tickfont": {"size": FONT_SIZE - 3}, "automargin": True},
                              margin={"l": 80, "r": 30, "t": 90, "b": 110}, barmode="overlay")
    return spec.figure()


def context_cost(context: np.ndarray, curves: Sequence[Curve], steps: Sequence[Step], *, threshold: float | None,
                 crossovers: Sequence[tuple[float, float, str, str]] = (),
                 title: str = "Cost per token against context: roofline and price tier") -> go.Figure:
    """Cost (roofline) and price per token as multiples of their short-context value, against context.

    Roofline curves are flat (compute-bound) to their crossover, then linear (KV-bound); price
    steps jump at the tier's threshold.  `crossovers`: (context, multiple, label, colour) markers.
    Log x [tokens], log y [×]."""
    T = np.asarray(context, float)
    spec = Spec()
    ys = [np.array([1.0])]
    for name, y, color, dash in curves:
        y = np.asarray(y, float)
        ys.append(y)
        spec.scatter(x=T, y=y, mode="lines", name=name, line={"color": color, "width": 4, "dash": dash},
                     hovertemplate="%{y:.3g}×<extra>" + name + "</extra>")
    for name, y, color in steps:
        y = np.asarray(y, float)
        ys.append(y)
        spec.scatter(x=T, y=y, mode="lines", name=name, line={"color": color, "width": 3, "shape": "hv"},
                     hovertemplate="%{y:.3g}×<extra>" + name + "</extra>")
    for x, y, label, color in crossovers:
        if np.isfinite(x) and x > 0:
            spec.scatter(x=[x], y=[y], mode="markers", name=label, cliponaxis=False,
                         marker={**NOW_MARKER, "color": color},
                         hovertemplate=label + ": T = %{x:,.0f} tokens<extra></extra>")
    if threshold is not None and np.isfinite(threshold):
        spec.vline(threshold, color=REF_COLOR, dash="dot", width=2)
        spec.label(threshold, 1.0, f"price tier from {threshold:,.0f} tokens", yanchor="bottom",
                   font={"size": FONT_SIZE - 3, "color": REF_COLOR})
    allv = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in ys])
    top = float(allv.max())
    xt = [float(10.0 ** k) for k in range(int(np.ceil(np.log10(T.min()))), int(np.floor(np.log10(T.max()))) + 1)]
    yt = [t for t in (1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0) if t <= top * 1.3]
    spec.layout = base_layout(title, hovermode="x unified",
                              xaxis=axis("context T [tokens]", range=[float(np.log10(T.min())),
                                                                      float(np.log10(T.max()))],
                                         tickvals=xt, ticktext=[_tok(x) for x in xt]),
                              yaxis=axis("per token ÷ short-context value [×]",
                                         range=[float(np.log10(0.8)), float(np.log10(top * 1.3))],
                                         tickvals=yt, ticktext=[f"{y:g}×" for y in yt]),
                              margin={"l": 92, "r": 30, "t": 80, "b": 110})  # l: room for "1000×" and the title
    return spec.figure()
