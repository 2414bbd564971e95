"""Figure builders for the KV-cache page (pure: arrays in, go.Figure out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .figures import BOUND_COLORS, BOUND_LABELS, GREY, _split_fit, shade_bounds, style, vline


def cost_vs_context(context: np.ndarray, usd: np.ndarray, fits: np.ndarray, bound: np.ndarray, *,
                    markers: Sequence[tuple[str, float, str]], t_now: float, usd_now: float,
                    tier: tuple[str, float] | None = None, title: str = "Cost per token against context",
                    ) -> go.Figure:
    """$/Mtok against context at the current batch; crossover contexts as vertical lines."""
    fig = go.Figure()
    shade_bounds(fig, context, bound)
    y_fit, y_no = _split_fit(usd, fits)
    fig.add_trace(go.Scatter(x=context, y=y_fit, mode="lines", line={"width": 4, "color": "#222"}, name="$/Mtok",
                             hovertemplate="T = %{x:,.0f}: $%{y:.4g}/Mtok<extra></extra>"))
    if np.any(~np.asarray(fits, bool)):
        fig.add_trace(go.Scatter(x=context, y=y_no, mode="lines", line={"width": 4, "color": GREY, "dash": "dash"},
                                 name="does not fit in HBM",
                                 hovertemplate="T = %{x:,.0f}: $%{y:.4g}/Mtok (does not fit)<extra></extra>"))
    fig.add_trace(go.Scatter(x=[t_now], y=[usd_now], mode="markers", name="current T",
                             marker={"size": 16, "color": "#D62728", "line": {"width": 2, "color": "white"}},
                             hovertemplate="current T = %{x:,.0f}: $%{y:.4g}/Mtok<extra></extra>"))
    positions = ["top", "bottom", "top"]
    for i, (label, x, color) in enumerate(markers):
        vline(fig, x, label, color, position=positions[i % 3])
    if tier is not None:
        vline(fig, tier[1], tier[0], "#7F3C8D", dash="dot", position="bottom")
    return style(fig, title, "context T (tokens)", "cost [$ per million output tokens]")


def bound_map(batch: np.ndarray, context: np.ndarray, bound: np.ndarray, *, crossover: np.ndarray,
              never_context: float | None, now: tuple[float, float],
              title: str = "What bounds the step: batch × context") -> go.Figure:
    """Heatmap of the bound over (context, batch) with the KV = weights line and the point in use."""
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
    fig = go.Figure(go.Heatmap(
        x=context, y=batch, z=idx, zmin=-0.5, zmax=n - 0.5, colorscale=scale, showscale=False,
        customdata=bound, hovertemplate="T = %{x:,.0f}, B = %{y:,.0f}: %{customdata}<extra></extra>", opacity=0.85))
    for b in order:  # legend entries for the colours
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=BOUND_LABELS[b],
                                 marker={"size": 14, "color": BOUND_COLORS[b], "symbol": "square"}))
    ok = np.isfinite(crossover) & (crossover >= context.min()) & (crossover <= context.max())
    fig.add_trace(go.Scatter(x=crossover[ok], y=batch[ok], mode="lines", name="KV fetch = weight fetch",
                             line={"color": "white", "width": 3, "dash": "dash"},
                             hovertemplate="KV = weights at T = %{x:,.0f}, B = %{y:,.0f}<extra></extra>"))
    if never_context is not None and np.isfinite(never_context) and context.min() <= never_context <= context.max():
        vline(fig, never_context, "never compute-bound →", "white")
    fig.add_trace(go.Scatter(x=[now[1]], y=[now[0]], mode="markers", name="current (T, B)",
                             marker={"size": 16, "color": "#D62728", "line": {"width": 2, "color": "white"}}))
    style(fig, title, "context T (tokens)", "batch B (sequences)")
    fig.update_layout(hovermode="closest")
    return fig


def kv_per_token_bars(names: Sequence[str], bytes_per_token: Sequence[float], kinds: Sequence[str],
                      highlight: str | None, title: str) -> go.Figure:
    """KV bytes per token of several models, coloured by attention kind."""
    colors = {"MLA": "#4C78A8", "GQA": "#F58518", "MHA": "#E45756", "MQA": "#72B7B2",
              "GQA + windowed": "#54A24B"}
    order = np.argsort(bytes_per_token)
    fig = go.Figure()
    for kind in dict.fromkeys(kinds):
        sel = [i for i in order if kinds[i] == kind]
        fig.add_trace(go.Bar(x=[bytes_per_token[i] / 1e3 for i in sel], y=[names[i] for i in sel], orientation="h",
                             name=kind, marker_color=colors.get(kind, GREY),
                             marker_line={"width": [4 if names[i] == highlight else 0 for i in sel],
                                          "color": "#D62728"},
                             hovertemplate="%{y}: %{x:.4g} kB/token<extra>" + kind + "</extra>"))
    style(fig, title, "KV bytes per token [kB], all layers", "", log_x=False, log_y=False,
          height=90 + 32 * len(names))
    fig.update_yaxes(categoryorder="array", categoryarray=[names[i] for i in order])
    fig.update_layout(hovermode="closest", barmode="overlay")
    return fig
