"""Figure builders for the KV-cache page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_kv_cache.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import BOUND_COLORS, BOUND_LABELS, GREY, NOW_MARKER, fit_curve, shade_bounds
from ui.figures.plot import COUNT_DECADES, FONT_SIZE, Spec, axis, base_layout, decades_if_wide

TIER_COLOR = "#7F3C8D"
KIND_COLORS = {"MLA": "#4C78A8", "GQA": "#F58518", "MHA": "#E45756", "MQA": "#72B7B2",
               "GQA + windowed": "#54A24B", "MHA + windowed": "#9D755D"}


@dataclass(frozen=True)
class Tier:
    """A list price with a long-context step: `price_below` up to `threshold` tokens, `price_above` past it."""

    label: str
    threshold: float
    price_below: float | None = None
    price_above: float | None = None

IDEAL_NAME = "ideal roofline (efficiency 1)"
HIGHLIGHT_COLOR = "#D62728"    # the current model's outline and label


def _in_range(x: float | None, lo: float, hi: float) -> bool:
    return x is not None and np.isfinite(x) and lo <= x <= hi


def mark(spec: Spec, x: float, text: str, color: str, *, y: float = 0.9, dash: str = "dash",
         x_range: tuple[float, float] | None = None, side: str | None = None) -> None:
    """A vertical line at x (log axis) with its label at height y (0…1 of the plot), so that several
    labels can be staggered instead of overlapping.  In the right 40 % of `x_range` the label sits
    left of the line, so that it is not cut off (`side` = "left" | "right" forces a side)."""
    spec.vline(x, color=color, dash=dash, width=2)
    if len(text) > 24 and ": " in text:    # "KV = compute: never compute-bound →" in two lines: fits a phone's chart
        text = text.replace(": ", ":<br>", 1)
    right = False
    if x_range is not None:
        lo, hi = np.log10(x_range[0]), np.log10(x_range[1])
        right = hi > lo and (np.log10(x) - lo) / (hi - lo) > 0.6
    if side is not None:
        right = side == "left"
    spec.label(x, y, text, xanchor="right" if right else "left", xshift=-4 if right else 4,
               font={"size": FONT_SIZE - 3, "color": color}, bgcolor="rgba(255,255,255,0.8)")


def cost_vs_context(context: np.ndarray, usd: np.ndarray, fits: np.ndarray, bound: np.ndarray, *,
                    markers: Sequence[tuple[str, float, str]], t_now: float, usd_now: float,
                    tier: Tier | None = None, title: str = "Cost per token against context",
                    ideal: np.ndarray | None = None) -> go.Figure:
    """$/Mtok against context at one batch (log–log), shaded by bound, greyed where it does not fit.

    `markers` = (label, context, colour): vertical lines, drawn only inside the plotted range (the
    page says in words where a crossover lies outside it).  `tier` overlays a list price's step.
    `ideal`: the same cost at efficiency 1, drawn dotted when the curve itself is a realistic one.
    """
    context = np.asarray(context, float)
    lo, hi = float(context.min()), float(context.max())
    spec = Spec()
    shade_bounds(spec, context, bound)
    if ideal is not None:
        spec.scatter(x=context, y=ideal, mode="lines", line={"width": 2, "color": GREY, "dash": "dot"},
                     name=IDEAL_NAME, hovertemplate="T = %{x:,.0f}: $%{y:.4g}/Mtok<extra>ideal</extra>")
    fit_curve(spec, context, usd, fits, name="roofline cost, $/Mtok", hover="T = %{x:,.0f}: $%{y:.4g}/Mtok")
    if tier is not None and tier.price_below is not None and tier.price_above is not None \
            and _in_range(tier.threshold, lo, hi):
        spec.scatter(
            x=[lo, tier.threshold, tier.threshold, hi],
            y=[tier.price_below, tier.price_below, tier.price_above, tier.price_above],
            mode="lines", line={"width": 3, "color": TIER_COLOR, "dash": "dot"}, name=f"{tier.label} (list price)",
            hovertemplate="list price: $%{y:.4g}/Mtok<extra>" + tier.label + "</extra>")
    spec.scatter(x=[t_now], y=[usd_now], mode="markers", name="current T", marker=NOW_MARKER, cliponaxis=False,
                 hovertemplate="current T = %{x:,.0f}: $%{y:.4g}/Mtok<extra></extra>")
    shown = [(label, x, color) for label, x, color in markers if _in_range(x, lo, hi)]
    for i, (label, x, color) in enumerate(shown):
        mark(spec, x, label, color, y=0.88 - 0.1 * i, x_range=(lo, hi))
    if tier is not None and _in_range(tier.threshold, lo, hi):
        # at the bottom, right of the line: cost rises with context, so the curve is high up there
        mark(spec, tier.threshold, "↑ list price steps up", TIER_COLOR, y=0.04, dash="dot", side="right")
    spec.layout = base_layout(title,
                              xaxis=axis("context T (tokens)", range=[float(np.log10(lo)), float(np.log10(hi))],
                                         **COUNT_DECADES),
                              yaxis=axis("cost [$ per million output tokens]",
                                         **decades_if_wide(usd, usd_now, *(() if ideal is None else (ideal,)))))
    return spec.figure()


def bound_map(batch: np.ndarray, context: np.ndarray, bound: np.ndarray, fits: np.ndarray | None = None, *,
              crossover: np.ndarray, never_context: float | None, now: tuple[float, float],
              title: str = "What bounds the step: batch × context") -> go.Figure:
    """Heatmap of the bound over (context on x, batch on y), with the KV = weights line, the
    never-compute-bound context, cells that do not fit in HBM faded (with the largest batch that fits
    drawn as their edge), and the point in use.

    bound, fits: shape (len(batch), len(context)); crossover: one context per batch row.
    """
    batch, context = np.asarray(batch, float), np.asarray(context, float)
    bound = np.asarray(bound)
    order = [b for b in BOUND_COLORS if np.any(bound == b)]
    idx = np.zeros(bound.shape, float)
    for i, b in enumerate(order):
        idx[bound == b] = i
    n = max(len(order), 1)
    scale = []
    for i, b in enumerate(order):
        scale += [[i / n, BOUND_COLORS[b]], [(i + 1) / n, BOUND_COLORS[b]]]
    if not scale:
        scale = [[0, GREY], [1, GREY]]
    # hover labels by lookup (np.vectorize over the 49 × 71 cells took ~1.5 ms of each rerun)
    kinds, which = np.unique(bound, return_inverse=True)
    labels = np.array([BOUND_LABELS.get(b, b) for b in kinds.tolist()], object)[which].reshape(bound.shape)
    spec = Spec()
    spec.trace("heatmap", x=context, y=batch, z=idx, zmin=-0.5, zmax=n - 0.5, colorscale=scale, showscale=False,
               name="bound", customdata=labels,
               hovertemplate="T = %{x:,.0f}, B = %{y:,.0f}: %{customdata}<extra></extra>", opacity=0.85)
    nofit_any = fits is not None and np.any(~np.asarray(fits, bool))
    if nofit_any:  # wash out the cells that do not fit, and draw the edge: the largest batch that fits per context
        f = np.asarray(fits, bool)
        spec.trace("heatmap", x=context, y=batch, z=np.where(f, np.nan, 1.0),
                   colorscale=[[0, "white"], [1, "white"]], zmin=0, zmax=1, showscale=False,
                   opacity=0.6, name="does not fit in HBM", hoverinfo="skip")
        has = f.any(axis=0) & ~f.all(axis=0)          # an edge exists in this column
        top = np.where(has, batch[np.where(has, f.shape[0] - 1 - np.argmax(f[::-1], axis=0), 0)], np.nan)
        spec.scatter(x=context, y=top, mode="lines", name="HBM full above",
                     line={"color": "#777", "width": 2, "shape": "hvh"},
                     hovertemplate="largest batch that fits at T = %{x:,.0f}: %{y:,.0f}<extra></extra>")
    for b in order:  # legend entries for the colours
        spec.scatter(x=[None], y=[None], mode="markers", name=BOUND_LABELS.get(b, b),
                     marker={"size": 14, "color": BOUND_COLORS[b], "symbol": "square"})
    if nofit_any:
        spec.scatter(x=[None], y=[None], mode="markers", name="does not fit in HBM (faded)",
                     marker={"size": 14, "color": "#DDD", "symbol": "square", "line": {"width": 1, "color": "#999"}})
    crossover = np.asarray(crossover, float)
    ok = np.isfinite(crossover) & (crossover >= context.min()) & (crossover <= context.max())
    spec.scatter(x=crossover[ok], y=batch[ok], mode="lines", name="KV fetch = weight fetch",
                 line={"color": "#111", "width": 3, "dash": "dash"},
                 hovertemplate="KV = weights at T = %{x:,.0f}, B = %{y:,.0f}<extra></extra>")
    if _in_range(never_context, float(context.min()), float(context.max())):
        mark(spec, never_context, "KV = compute: never compute-bound →", "black", y=0.06, dash="dot",
             x_range=(float(context.min()), float(context.max())))
    x_lim = [float(np.log10(context.min())), float(np.log10(context.max()))]
    y_lim = [float(np.log10(batch.min())), float(np.log10(batch.max()))]
    # A shape in the axes' domain, not a marker trace: a batch move then redraws the dot, not both maps.
    spec.now_point(now[1], now[0], name="current (T, B)", marker=NOW_MARKER, ranges=(x_lim, y_lim))
    spec.layout = base_layout(title, hovermode="closest",
                              xaxis=axis("context T (tokens)", range=x_lim, showgrid=False),
                              yaxis=axis("batch B (sequences)", range=y_lim, showgrid=False))
    return spec.figure()


def kv_per_token_bars(names: Sequence[str], bytes_per_token: Sequence[float], kinds: Sequence[str],
                      highlight: str | None, title: str, *, notes: Sequence[str] | None = None,
                      read_per_token: Sequence[float] | None = None, read_label: str = "read per context token",
                      refs: Sequence[tuple[str, float, str]] = ()) -> go.Figure:
    """Horizontal bars of KV bytes per token [shown in kB, log axis], largest at the top, coloured by
    attention kind, the `highlight` model outlined in red.

    `notes`: one hover line per model.  `read_per_token`: optional diamonds (e.g. bytes read per
    context token under sparse attention).  `refs` = (label, bytes, colour): vertical reference lines.
    """
    names = list(names)
    vals = np.asarray(bytes_per_token, float)
    notes = list(notes) if notes is not None else [""] * len(names)
    order = np.argsort(vals, kind="stable")          # ascending: plotly draws the first category at the bottom
    spec = Spec()
    for kind in dict.fromkeys(kinds):
        sel = [int(i) for i in order if kinds[i] == kind]
        spec.trace("bar",
                   x=[vals[i] / 1e3 for i in sel], y=[names[i] for i in sel], orientation="h", name=kind,
                   marker={"color": KIND_COLORS.get(kind, GREY),
                           "line": {"width": [4 if names[i] == highlight else 0 for i in sel],
                                    "color": HIGHLIGHT_COLOR}},
                   customdata=[notes[i] for i in sel],
                   hovertemplate="%{y}: %{x:.4g} kB/token<br>%{customdata}<extra>" + kind + "</extra>")
    if read_per_token is not None:
        r = np.asarray(read_per_token, float)
        spec.scatter(x=r[order] / 1e3, y=[names[i] for i in order], mode="markers", name=read_label,
                     marker={"symbol": "diamond", "size": 12, "color": "#222"},
                     hovertemplate="%{y}: %{x:.4g} kB " + read_label + "<extra></extra>")
    ref_x = []
    for label, b, color in refs:       # reference lines, named in the legend (labels on the plot would collide)
        if b is not None and np.isfinite(b) and b > 0:
            spec.vline(b / 1e3, color=color, dash="dot", width=3)
            spec.scatter(x=[None], y=[None], mode="lines", name=label, line={"dash": "dot", "color": color, "width": 3})
            ref_x.append(b / 1e3)
    # Log x: the few kB a price tier implies and the hundreds of kB of today's open models on one axis.
    x_extra = {}
    xs = [x for x in [*(vals / 1e3), *ref_x] if np.isfinite(x) and x > 0]
    if xs:
        x_extra["range"] = [float(np.log10(min(xs) / 1.5)), float(np.log10(max(xs) * 1.5))]
    # The current model is named in red on its own axis label (a note beside the bar would need room
    # on the right that a phone's chart does not have).
    cats = [names[i] for i in order]
    ticks = [f'<span style="color:{HIGHLIGHT_COLOR}"><b>{n} ▶</b></span>' if n == highlight else n for n in cats]
    layout = base_layout(
        title, height=140 + 34 * len(names), hovermode="closest", barmode="overlay",
        xaxis=axis("KV per token [kB, log], <br>all layers", **x_extra),
        # model names need a category axis, in ascending order (largest on top); the left margin
        # grows to the longest name (automargin)
        yaxis=axis("", log=False, type="category", categoryorder="array", categoryarray=cats,
                   tickvals=cats, ticktext=ticks, automargin=True))
    spec.layout = layout
    return spec.figure()
