"""Figure builders for the Fast Mode page (pure: arrays in, go.Figure out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .figures import BOUND_COLORS, FONT_SIZE, GREY, _split_fit, shade_bounds, vline


def fast_mode_curves(batch: np.ndarray, latency_s: np.ndarray, usd: np.ndarray, fits: np.ndarray,
                     bound: np.ndarray, points: Sequence[tuple[str, float, float, float, str]],
                     floor_s: float, cost_floor: float | None, b_star: float | None) -> go.Figure:
    """Latency and cost against batch side by side, with named operating points
    (label, batch, latency_s, usd, colour), the latency floor and the large-batch cost floor."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("latency per token [ms]", "cost [$ per million tokens]"))
    for col, y, unit, scale in ((1, latency_s, "ms", 1e3), (2, usd, "$/Mtok", 1.0)):
        shade_bounds(fig, batch, bound, row=1, col=col)
        y_fit, y_no = _split_fit(np.asarray(y) * scale, fits)
        fig.add_trace(go.Scatter(x=batch, y=y_fit, mode="lines", line={"width": 4, "color": "#222"},
                                 name="roofline" if col == 1 else None, showlegend=col == 1,
                                 hovertemplate=f"B = %{{x:.4g}}: %{{y:.4g}} {unit}<extra></extra>"), 1, col)
        if np.any(~np.asarray(fits, bool)):
            fig.add_trace(go.Scatter(x=batch, y=y_no, mode="lines", line={"width": 4, "color": GREY, "dash": "dash"},
                                     name="does not fit in HBM", showlegend=col == 1,
                                     hovertemplate=f"B = %{{x:.4g}}: %{{y:.4g}} {unit}<extra></extra>"), 1, col)
        for label, b, lat, cost, color in points:
            yv = lat * 1e3 if col == 1 else cost
            fig.add_trace(go.Scatter(x=[b], y=[yv], mode="markers+text", text=[label], textposition="top center",
                                     marker={"size": 16, "color": color, "line": {"width": 2, "color": "white"}},
                                     name=label, showlegend=col == 1, textfont={"size": FONT_SIZE - 2},
                                     hovertemplate=f"{label}: B = %{{x:.4g}}, %{{y:.4g}} {unit}<extra></extra>"),
                          1, col)
        if b_star is not None and np.isfinite(b_star):
            vline(fig, b_star, f"B* = {b_star:,.0f}", row=1, col=col)
    fig.add_hline(y=floor_s * 1e3, line_dash="dot", line_color=BOUND_COLORS["weights"], row=1, col=1,
                  annotation_text="latency floor W/(C·bw)", annotation_position="bottom right",
                  annotation_font_size=FONT_SIZE - 4)
    if cost_floor is not None and np.isfinite(cost_floor):
        fig.add_hline(y=cost_floor, line_dash="dot", line_color=BOUND_COLORS["compute"], row=1, col=2,
                      annotation_text="slow-mode floor (compute + KV)", annotation_position="top right",
                      annotation_font_size=FONT_SIZE - 4)
    fig.update_xaxes(type="log", title_text="batch B (sequences per step)")
    fig.update_yaxes(type="log")
    fig.update_layout(template="plotly_white", height=500, font={"size": FONT_SIZE},
                      margin={"l": 70, "r": 30, "t": 60, "b": 70}, hovermode="closest",
                      legend={"orientation": "h", "y": -0.25, "font": {"size": FONT_SIZE - 3}})
    fig.update_annotations(font_size=FONT_SIZE)
    return fig
