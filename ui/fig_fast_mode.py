"""Figure builders for the Fast Mode page (pure: arrays in, go.Figure out; no Streamlit, no physics)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .figures import BOUND_COLORS, FONT_SIZE, GREY, _split_fit, shade_bounds, vline

# (label, batch, latency [s], cost [$/Mtok], colour)
Point = tuple[str, float, float, float, str]

STANDARD_COLOR = "#1F5FAD"
FAST_COLOR = "#D62728"
REFERENCE_COLOR = "#7F7F7F"
FLOOR_COLOR = "#6A3D9A"
LATENCY_TITLE = "time per token [ms]"
COST_TITLE = "cost [$ per million output tokens]"
BATCH_TITLE = "batch B (sequences per step)"
# Explicit, so that Streamlit's chart theme does not shrink them (projector-readable).
AXIS_FONTS = {"tickfont": {"size": FONT_SIZE - 2}, "title_font": {"size": FONT_SIZE}}


def _finite_pos(x) -> bool:
    return x is not None and np.isfinite(x) and x > 0


def _log_axis(values) -> dict:
    """Range and ticks for a log axis over `values`: ticks at powers of ten when the data span more
    than two decades (else 1-2-5), and room below the data for the floor's label."""
    v = np.concatenate([np.ravel(np.asarray(a, float)) for a in values])
    v = np.log10(v[np.isfinite(v) & (v > 0)])
    if not v.size:
        return {}
    lo, hi = float(v.min()), float(v.max())
    span = max(hi - lo, 0.5)
    return {"range": [lo - 0.1 * span - 0.05, hi + 0.05 * span], "dtick": 1 if span > 2 else "D2"}


def batch_text(b: float) -> str:
    """A batch for a label: 6.31, 94.7, 2,048."""
    return f"{b:,.0f}" if b >= 100 else f"{b:.3g}"


def fast_mode_curves(batch: np.ndarray, latency_s: np.ndarray, usd: np.ndarray, fits: np.ndarray,
                     bound: np.ndarray, points: Sequence[Point], floor_s: float, cost_floor: float | None,
                     b_star: float | None, *, curve_name: str = "roofline",
                     reference: tuple[str, np.ndarray, np.ndarray] | None = None,
                     reference_points: Sequence[Point] = (),
                     titles: tuple[str, str] = ("Latency per token", "Cost per token")) -> go.Figure:
    """Latency [ms] and cost [$/Mtok] against batch, side by side (log–log), shaded by bound and greyed
    where weights + KV do not fit, with named operating points (label, batch, latency_s, usd, colour),
    the latency floor W/(C·bw) (left), the slow-mode floor (right: large-batch compute + KV cost)
    and B*.  `reference` = (name, latency_s, usd): a dotted comparison curve on the same batch grid
    (e.g. no KV), with `reference_points` drawn hollow on it.
    """
    batch = np.asarray(batch, float)
    fits = np.asarray(fits, bool)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.09, subplot_titles=titles)
    for col, y, unit, scale in ((1, latency_s, "ms", 1e3), (2, usd, "$/Mtok", 1.0)):
        first = col == 1
        shade_bounds(fig, batch, bound, row=1, col=col)
        if reference is not None:
            ref_y = np.asarray(reference[1] if first else reference[2], float) * scale
            fig.add_trace(go.Scatter(x=batch, y=ref_y, mode="lines", name=reference[0], legendgroup="ref",
                                     line={"width": 2.5, "color": REFERENCE_COLOR, "dash": "dot"}, showlegend=first,
                                     hovertemplate=f"B = %{{x:.4g}}: %{{y:.4g}} {unit}<extra>{reference[0]}</extra>"),
                          1, col)
        y_fit, y_no = _split_fit(np.asarray(y, float) * scale, fits)
        fig.add_trace(go.Scatter(x=batch, y=y_fit, mode="lines", line={"width": 4, "color": "#222"},
                                 name=curve_name, legendgroup="curve", showlegend=first,
                                 hovertemplate=f"B = %{{x:.4g}}: %{{y:.4g}} {unit}<extra></extra>"), 1, col)
        if np.any(~fits):
            fig.add_trace(go.Scatter(x=batch, y=y_no, mode="lines", line={"width": 4, "color": GREY, "dash": "dash"},
                                     name="does not fit in HBM", legendgroup="nofit", showlegend=first,
                                     hovertemplate=f"B = %{{x:.4g}}: %{{y:.4g}} {unit} (does not fit)<extra></extra>"),
                          1, col)
        for label, b, lat, cost, color in reference_points:
            yv = (lat * 1e3) if first else cost
            if not (_finite_pos(b) and _finite_pos(yv)):
                continue
            fig.add_trace(go.Scatter(x=[b], y=[yv], mode="markers", name=label, legendgroup=label, showlegend=first,
                                     marker={"size": 14, "color": "white", "symbol": "circle",
                                             "line": {"width": 3, "color": color}},
                                     hovertemplate=f"{label}: B = %{{x:.4g}}, %{{y:.4g}} {unit}<extra></extra>"),
                          1, col)
        for label, b, lat, cost, color in points:
            yv = (lat * 1e3) if first else cost
            if not (_finite_pos(b) and _finite_pos(yv)):
                continue
            fig.add_trace(go.Scatter(x=[b], y=[yv], mode="markers", name=f"{label}: B = {batch_text(b)}",
                                     marker={"size": 18, "color": color, "line": {"width": 2, "color": "white"}},
                                     legendgroup=label, showlegend=first, cliponaxis=False,
                                     hovertemplate=f"{label}: B = %{{x:.4g}}, %{{y:.4g}} {unit}<extra></extra>"),
                          1, col)
            # Label in the empty corner: above-left of the rising latency curve, above-right of the
            # falling cost curve (annotations on log axes take log10 of the data).
            fig.add_annotation(x=np.log10(b), y=np.log10(yv), text=f"<b>{label}</b><br>B = {batch_text(b)}",
                               ax=-55 if first else 55, ay=-55, showarrow=True, arrowhead=0, arrowwidth=1.5,
                               arrowcolor=color, font={"size": FONT_SIZE - 1, "color": color},
                               bgcolor="rgba(255,255,255,0.8)", row=1, col=col)
        if _finite_pos(b_star):
            vline(fig, b_star, f"B* = {b_star:,.0f}", row=1, col=col, position="bottom")
    if _finite_pos(floor_s):
        # Nothing runs below the latency floor: its label goes underneath the line.
        fig.add_hline(y=floor_s * 1e3, line_dash="dashdot", line_width=2.5, line_color=BOUND_COLORS["weights"],
                      row=1, col=1)
        fig.add_annotation(x=0.99, xref="x domain", y=np.log10(floor_s * 1e3), yref="y", yanchor="top",
                           xanchor="right", showarrow=False, text=f"latency floor W/(C·bw) = {floor_s * 1e3:.3g} ms",
                           font={"size": FONT_SIZE - 2, "color": BOUND_COLORS["weights"]})
    if _finite_pos(cost_floor):
        fig.add_hline(y=cost_floor, line_dash="dashdot", line_width=2.5, line_color=FLOOR_COLOR, row=1, col=2)
        fig.add_annotation(x=0.99, xref="x2 domain", y=np.log10(cost_floor), yref="y2", yanchor="top",
                           xanchor="right", showarrow=False, text=f"slow-mode floor ${cost_floor:.3g}/Mtok",
                           font={"size": FONT_SIZE - 2, "color": FLOOR_COLOR})
    fig.update_xaxes(type="log", title_text=BATCH_TITLE, dtick=1, tickformat=",~g", showgrid=True, **AXIS_FONTS)
    lat_all = [np.asarray(latency_s, float) * 1e3, [floor_s * 1e3], [p[2] * 1e3 for p in (*points, *reference_points)]]
    usd_all = [np.asarray(usd, float), [cost_floor if cost_floor is not None else np.nan],
               [p[3] for p in (*points, *reference_points)]]
    if reference is not None:
        lat_all.append(np.asarray(reference[1], float) * 1e3)
        usd_all.append(np.asarray(reference[2], float))
    fig.update_yaxes(type="log", showgrid=True, tickformat=",~g", **AXIS_FONTS)
    fig.update_yaxes(title_text=LATENCY_TITLE, row=1, col=1, **_log_axis(lat_all))
    fig.update_yaxes(title_text=COST_TITLE, row=1, col=2, tickprefix="$", **_log_axis(usd_all))
    fig.update_layout(template="plotly_white", height=560, font={"size": FONT_SIZE},
                      margin={"l": 80, "r": 30, "t": 60, "b": 120}, hovermode="closest",
                      legend={"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0.0,
                              "font": {"size": FONT_SIZE - 3}})
    # Subplot titles are the first annotations: make them the figure's headline size.
    for ann in fig.layout.annotations[:2]:
        ann.font = {"size": FONT_SIZE + 3, "color": "#222"}
    return fig
