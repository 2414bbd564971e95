"""Figure builders for the KV-cache page (pure: arrays in, go.Figure out; no Streamlit, no physics)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from .figures import BOUND_COLORS, BOUND_LABELS, FONT_SIZE, GREY, _split_fit, shade_bounds, style, vline

NOW_MARKER = {"size": 16, "color": "#D62728", "line": {"width": 2, "color": "white"}}
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


def _in_range(x: float | None, lo: float, hi: float) -> bool:
    return x is not None and np.isfinite(x) and lo <= x <= hi


def cost_vs_context(context: np.ndarray, usd: np.ndarray, fits: np.ndarray, bound: np.ndarray, *,
                    markers: Sequence[tuple[str, float, str]], t_now: float, usd_now: float,
                    tier: Tier | None = None, title: str = "Cost per token against context",
                    ) -> go.Figure:
    """$/Mtok against context at one batch (log–log), shaded by bound, greyed where it does not fit.

    `markers` = (label, context, colour): vertical lines, drawn only inside the plotted range (the
    page says in words where a crossover lies outside it).  `tier` overlays a list price's step.
    """
    context = np.asarray(context, float)
    lo, hi = float(context.min()), float(context.max())
    fig = go.Figure()
    shade_bounds(fig, context, bound)
    y_fit, y_no = _split_fit(usd, fits)
    fig.add_trace(go.Scatter(x=context, y=y_fit, mode="lines", line={"width": 4, "color": "#222"},
                             name="roofline cost, $/Mtok",
                             hovertemplate="T = %{x:,.0f}: $%{y:.4g}/Mtok<extra></extra>"))
    if np.any(~np.asarray(fits, bool)):
        fig.add_trace(go.Scatter(x=context, y=y_no, mode="lines", line={"width": 4, "color": GREY, "dash": "dash"},
                                 name="does not fit in HBM",
                                 hovertemplate="T = %{x:,.0f}: $%{y:.4g}/Mtok (does not fit)<extra></extra>"))
    if tier is not None and tier.price_below is not None and tier.price_above is not None \
            and _in_range(tier.threshold, lo, hi):
        fig.add_trace(go.Scatter(
            x=[lo, tier.threshold, tier.threshold, hi],
            y=[tier.price_below, tier.price_below, tier.price_above, tier.price_above],
            mode="lines", line={"width": 3, "color": TIER_COLOR, "dash": "dot"}, name=f"{tier.label} (list price)",
            hovertemplate="list price: $%{y:.4g}/Mtok<extra>" + tier.label + "</extra>"))
    fig.add_trace(go.Scatter(x=[t_now], y=[usd_now], mode="markers", name="current T", marker=NOW_MARKER,
                             hovertemplate="current T = %{x:,.0f}: $%{y:.4g}/Mtok<extra></extra>"))
    positions = ["top", "bottom", "top"]
    shown = [(label, x, color) for label, x, color in markers if _in_range(x, lo, hi)]
    for i, (label, x, color) in enumerate(shown):
        vline(fig, x, label, color, position=positions[i % 3])
    if tier is not None and _in_range(tier.threshold, lo, hi):
        vline(fig, tier.threshold, f"tier: {tier.label}", TIER_COLOR, dash="dot", position="bottom")
    style(fig, title, "context T (tokens)", "cost [$ per million output tokens]")
    fig.update_xaxes(range=[np.log10(lo), np.log10(hi)])
    return fig


def bound_map(batch: np.ndarray, context: np.ndarray, bound: np.ndarray, fits: np.ndarray | None = None, *,
              crossover: np.ndarray, never_context: float | None, now: tuple[float, float],
              title: str = "What bounds the step: batch × context") -> go.Figure:
    """Heatmap of the bound over (context on x, batch on y), with the KV = weights line, the
    never-compute-bound context, cells that do not fit in HBM hatched grey, and the point in use.

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
    labels = np.vectorize(lambda b: BOUND_LABELS.get(b, b), otypes=[object])(bound) if bound.size else bound
    fig = go.Figure(go.Heatmap(
        x=context, y=batch, z=idx, zmin=-0.5, zmax=n - 0.5, colorscale=scale, showscale=False, name="bound",
        customdata=labels, hovertemplate="T = %{x:,.0f}, B = %{y:,.0f}: %{customdata}<extra></extra>",
        opacity=0.85))
    if fits is not None and np.any(~np.asarray(fits, bool)):
        nofit = np.where(np.asarray(fits, bool), np.nan, 1.0)
        fig.add_trace(go.Heatmap(x=context, y=batch, z=nofit, colorscale=[[0, "#444"], [1, "#444"]], zmin=0, zmax=1,
                                 showscale=False, opacity=0.45, name="does not fit in HBM", hoverinfo="skip"))
    for b in order:  # legend entries for the colours
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=BOUND_LABELS.get(b, b),
                                 marker={"size": 14, "color": BOUND_COLORS[b], "symbol": "square"}))
    if fits is not None and np.any(~np.asarray(fits, bool)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="does not fit in HBM",
                                 marker={"size": 14, "color": "#444", "symbol": "square", "opacity": 0.6}))
    crossover = np.asarray(crossover, float)
    ok = np.isfinite(crossover) & (crossover >= context.min()) & (crossover <= context.max())
    fig.add_trace(go.Scatter(x=crossover[ok], y=batch[ok], mode="lines", name="KV fetch = weight fetch",
                             line={"color": "white", "width": 4, "dash": "dash"},
                             hovertemplate="KV = weights at T = %{x:,.0f}, B = %{y:,.0f}<extra></extra>"))
    if _in_range(never_context, float(context.min()), float(context.max())):
        vline(fig, never_context, "KV = compute: never compute-bound →", "black", dash="dot", position="bottom")
    fig.add_trace(go.Scatter(x=[now[1]], y=[now[0]], mode="markers", name="current (T, B)", marker=NOW_MARKER,
                             hovertemplate="current: T = %{x:,.0f}, B = %{y:,.0f}<extra></extra>"))
    style(fig, title, "context T (tokens)", "batch B (sequences)")
    fig.update_xaxes(range=[np.log10(context.min()), np.log10(context.max())], showgrid=False)
    fig.update_yaxes(range=[np.log10(batch.min()), np.log10(batch.max())], showgrid=False)
    fig.update_layout(hovermode="closest")
    return fig


def kv_per_token_bars(names: Sequence[str], bytes_per_token: Sequence[float], kinds: Sequence[str],
                      highlight: str | None, title: str, *, notes: Sequence[str] | None = None,
                      read_per_token: Sequence[float] | None = None, read_label: str = "read per context token",
                      refs: Sequence[tuple[str, float, str]] = ()) -> go.Figure:
    """Horizontal bars of KV bytes per token [shown in kB], largest at the top, coloured by attention
    kind, the `highlight` model outlined in red.

    `notes`: one hover line per model.  `read_per_token`: optional diamonds (e.g. bytes read per
    context token under sparse attention).  `refs` = (label, bytes, colour): vertical reference lines.
    """
    names = list(names)
    vals = np.asarray(bytes_per_token, float)
    notes = list(notes) if notes is not None else [""] * len(names)
    order = np.argsort(vals, kind="stable")          # ascending: plotly draws the first category at the bottom
    fig = go.Figure()
    for kind in dict.fromkeys(kinds):
        sel = [int(i) for i in order if kinds[i] == kind]
        fig.add_trace(go.Bar(
            x=[vals[i] / 1e3 for i in sel], y=[names[i] for i in sel], orientation="h", name=kind,
            marker_color=KIND_COLORS.get(kind, GREY),
            marker_line={"width": [4 if names[i] == highlight else 0 for i in sel], "color": "#D62728"},
            customdata=[notes[i] for i in sel],
            hovertemplate="%{y}: %{x:.4g} kB/token<br>%{customdata}<extra>" + kind + "</extra>"))
    if read_per_token is not None:
        r = np.asarray(read_per_token, float)
        fig.add_trace(go.Scatter(x=r[order] / 1e3, y=[names[i] for i in order], mode="markers", name=read_label,
                                 marker={"symbol": "diamond", "size": 12, "color": "#222"},
                                 hovertemplate="%{y}: %{x:.4g} kB " + read_label + "<extra></extra>"))
    for label, b, color in refs:
        if b is not None and np.isfinite(b) and b > 0:
            fig.add_vline(x=b / 1e3, line_dash="dot", line_color=color, line_width=2, annotation_text=label,
                          annotation_position="bottom right", annotation_font_size=FONT_SIZE - 4,
                          annotation_font_color=color)
    if highlight in names:
        i = names.index(highlight)
        fig.add_annotation(x=vals[i] / 1e3, y=highlight, text="◀ current model", showarrow=False, xanchor="left",
                           xshift=8, font={"size": FONT_SIZE - 3, "color": "#D62728"})
    style(fig, title, "KV bytes per token [kB], all layers", "", log_x=False, log_y=False,
          height=140 + 34 * len(names))
    fig.update_yaxes(categoryorder="array", categoryarray=[names[i] for i in order])
    fig.update_layout(hovermode="closest", barmode="overlay", margin={"l": 260})
    return fig
