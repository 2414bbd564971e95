"""Figure builders for the Training tokens page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_training.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import GREY, NOW_MARKER
from ui.figures.plot import FONT_SIZE, Spec, axis, base_layout
from ui.format import number

PHASE_COLORS = {"chinchilla": "#7F7F7F", "pretrain": "#4C78A8", "rl": "#B279A2", "inference": "#54A24B"}
TOTAL_COLOR = "#222222"
NOW_COLOR = NOW_MARKER["color"]
HEURISTIC_COLOR = "#F58518"
CHIN_COLOR = "#7F7F7F"
UNDER_FILL = "#E45756"

# Token counts run from 1e9 to past 1e17: label decades as powers of ten (Plotly's default switches from
# "100T" to "10^15" part-way along the axis).


def _power_ticks(lo_log10: float, hi_log10: float) -> dict:
    """Every decade, or every 2nd/3rd… when the axis spans more than 8 (labels must not overlap)."""
    return {"exponentformat": "power", "dtick": max(1, int(np.ceil((hi_log10 - lo_log10) / 8)))}

# A marked point on the cost chart: (legend name, N, total FLOP, colour, marker symbol)
Point = tuple[str, float, float, str, str]


def _finite(a) -> np.ndarray:
    a = np.asarray(a, float)
    return a[np.isfinite(a) & (a > 0)]


def _log_range(values: np.ndarray, pad: float = 1.6) -> list[float]:
    v = _finite(values)
    if v.size == 0:
        return [0.0, 1.0]
    return [float(np.log10(v.min() / pad)), float(np.log10(v.max() * pad))]


def tokens_bars(labels: Sequence[str], tokens: np.ndarray, flops: np.ndarray, colors: Sequence[str], *,
                title: str = "Tokens per phase at equal costs") -> go.Figure:
    """Bars of token counts [tokens] on a log axis, each labelled with its count; the hover adds the
    phase's compute [FLOP] (NaN = no cost attached, e.g. the Chinchilla reference)."""
    t = np.asarray(tokens, float)
    f = np.asarray(flops, float)
    text = [f"{number(v)} tokens" for v in t]
    cost = [f"{number(c)} FLOP" if np.isfinite(c) else "a reference, not a cost" for c in f]
    names = [str(lb).replace('<br>', ' ') for lb in labels]
    spec = Spec()
    spec.log_x = {1: False}
    spec.trace("bar", x=list(labels), y=t, marker={"color": list(colors)}, text=text, textposition="outside",
               textfont={"size": FONT_SIZE - 1}, customdata=[[c, nm] for c, nm in zip(cost, names)], cliponaxis=False,
               showlegend=False,
               hovertemplate="%{customdata[1]}: %{text}<br>compute %{customdata[0]}<extra></extra>")
    lo, hi = _log_range(t)
    spec.layout = base_layout(title, hovermode="closest", legend_below=False,
                              xaxis={"type": "category", "tickfont": {"size": FONT_SIZE - 2}},
                              yaxis=axis("tokens [tokens]", range=[lo - 0.2, hi + 0.5], **_power_ticks(lo, hi)),
                              margin={"l": 80, "r": 30, "t": 60, "b": 60})
    return spec.figure()


def overtrain_vs_rate(rate: np.ndarray, factor: np.ndarray, na_values: Sequence[float], *, na_now: float,
                      now: tuple[float, float], title: str = "Over-training factor against inference rate"
                      ) -> go.Figure:
    """D_pre / (20·Na) [×] against the global inference rate [tok/s] (log-log), one line per Na (the
    current Na bold), the Chinchilla-optimal 1× as a dashed line, the current point marked.

    factor: shape (len(na_values), len(rate))."""
    r = np.asarray(rate, float)
    fa = np.asarray(factor, float)
    spec = Spec()
    for i, na in enumerate(na_values):
        cur = abs(float(na) - float(na_now)) <= 1e-9 * float(na_now)
        name = f"N_active = {number(na)}" + (" (current)" if cur else "")
        spec.scatter(x=r, y=fa[i], mode="lines", name=name,
                     line={"color": NOW_COLOR if cur else GREY, "width": 4 if cur else 2},
                     hovertemplate="%{x:.3s} tok/s: %{y:.3g}× over-trained<extra>" + name + "</extra>")
    spec.hline(1.0, color=CHIN_COLOR, dash="dash", width=2)
    # on a log y axis an annotation's y is log10: the 1× line is at 0
    spec.label(float(r.max()), 0.0, "Chinchilla-optimal: 20 tokens per parameter (1×)", y_is_data=True,
               xanchor="right", yanchor="top", font={"size": FONT_SIZE - 3, "color": CHIN_COLOR})
    spec.scatter(x=[now[0]], y=[now[1]], mode="markers", name=f"current: {now[1]:.3g}×", marker=NOW_MARKER,
                 cliponaxis=False, hovertemplate="current: %{x:.3s} tok/s, %{y:.3g}×<extra></extra>")
    lo, hi = _log_range(np.append(fa.ravel(), [now[1], 1.0]))
    spec.layout = base_layout(title, hovermode="closest",
                              xaxis=axis("global inference rate [tokens/s]",
                                         range=[float(np.log10(r.min())), float(np.log10(r.max()))]),
                              yaxis=axis("over-training factor D_pre / (20·N_active) [×]", range=[lo, hi]))
    return spec.figure()


def cost_vs_size(n: np.ndarray, pretrain_flops: np.ndarray, inference_flops: np.ndarray, total_flops: np.ndarray, *,
                 points: Sequence[Point], title: str = "Cost of one quality against model size") -> go.Figure:
    """Pretraining, inference and total compute [FLOP] against model size N (log-log) along the iso-loss
    curve, with marked points (the cost-optimal minimum, the heuristic's answer, Chinchilla's)."""
    N = np.asarray(n, float)
    labels = [number(v) for v in N]
    spec = Spec()
    for name, y, color, width, dash in (
            ("pretraining  6·N·D(N)", pretrain_flops, PHASE_COLORS["pretrain"], 3, "dash"),
            ("inference  2·ineff·N·D_inf", inference_flops, PHASE_COLORS["inference"], 3, "dash"),
            ("total", total_flops, TOTAL_COLOR, 5, "solid")):
        spec.scatter(x=N, y=y, mode="lines", name=name, line={"color": color, "width": width, "dash": dash},
                     customdata=labels, hovertemplate="N = %{customdata}: %{y:.3s} FLOP<extra>" + name + "</extra>")
    ys = [np.asarray(total_flops, float)]
    # the star (the optimum) last, so it is drawn on top of a heuristic's point right beside it
    for name, pn, pc, color, symbol in sorted(points, key=lambda p: p[4] == "star"):
        if not (np.isfinite(pn) and np.isfinite(pc) and pn > 0 and pc > 0):
            continue
        is_open = symbol.endswith("-open")          # an open symbol rings a point that may sit on another
        edge = {"width": 3, "color": color} if is_open else {"width": 2, "color": "white"}
        size = 24 if is_open else 18 if symbol == "star" else 15
        spec.scatter(x=[pn], y=[pc], mode="markers", name=name, cliponaxis=False,
                     marker={"size": size, "color": color, "symbol": symbol, "line": edge},
                     customdata=[number(pn)],
                     hovertemplate="N = %{customdata}: total %{y:.3s} FLOP<extra>" + name + "</extra>")
        ys.append(np.array([pc]))
    # y: around the marked points (the pretraining curve shoots up as N nears the smallest size that can
    # reach the loss at all), and low enough to show where the two dashed costs cross
    marked = _finite([p[2] for p in points]) if len(points) else np.array([])
    tot = marked if marked.size else _finite(np.concatenate(ys))
    lo = float(np.log10(tot.min())) - 1.0 if tot.size else 0.0
    hi = float(np.log10(tot.max())) + 1.0 if tot.size else 1.0
    spec.layout = base_layout(title, hovermode="closest", height=600,
                              xaxis=axis("model size N (active parameters)",
                                         range=[float(np.log10(N.min())), float(np.log10(N.max()))]),
                              yaxis=axis("compute [FLOP at training efficiency]", range=[lo, hi]),
                              margin={"l": 80, "r": 30, "t": 60, "b": 150})
    return spec.figure()


def split_vs_volume(d_inf: np.ndarray, pretrain_share: np.ndarray, heuristic_excess: np.ndarray, *,
                    under_below: float | None, now: tuple[float, float, float],
                    title: str = "Where the equal split is right") -> go.Figure:
    """Pretraining's share [%] of pretraining + inference at the cost-optimal size (left axis) and the
    heuristic's extra cost over that optimum [%] (right axis) against inference tokens D_inf (log x).

    under_below: the D_inf below which the heuristic's equal-cost model is under-trained (bigger than
    the pretraining-only optimum); shaded, and the excess is not drawn there.  now: (D_inf, share, excess)."""
    x = np.asarray(d_inf, float)
    share = 100.0 * np.asarray(pretrain_share, float)
    exc = 100.0 * np.asarray(heuristic_excess, float)
    spec = Spec()
    spec.hline(50.0, color=HEURISTIC_COLOR, dash="dot", width=3)
    spec.label(float(x.min()), 50.0, "the heuristic's equal split (50 %)", y_is_data=True, xanchor="left",
               yanchor="bottom", font={"size": FONT_SIZE - 3, "color": HEURISTIC_COLOR})
    if under_below is not None and np.isfinite(under_below) and under_below > x.min():
        spec.vrect(float(x.min()), float(min(under_below, x.max())), color=UNDER_FILL, opacity=0.10)
        spec.label(float(np.sqrt(x.min() * min(under_below, x.max()))), 0.12, "equal costs would under-train",
                   yanchor="bottom", font={"size": FONT_SIZE - 4, "color": UNDER_FILL})
    spec.scatter(x=x, y=share, mode="lines", name="pretraining share at the optimum (left)",
                 line={"color": PHASE_COLORS["pretrain"], "width": 4},
                 hovertemplate="D_inf %{x:.3s} tokens: pretraining %{y:.3g} % of the total<extra></extra>")
    spec.scatter(x=x, y=exc, mode="lines", name="heuristic's extra cost (right)", yaxis="y2",
                 line={"color": HEURISTIC_COLOR, "width": 3, "dash": "dash"},
                 hovertemplate="D_inf %{x:.3s} tokens: heuristic costs +%{y:.3g} %<extra></extra>")
    spec.scatter(x=[now[0]], y=[100.0 * now[1]], mode="markers", name=f"current: {100 * now[1]:.3g} %",
                 marker=NOW_MARKER, cliponaxis=False,
                 hovertemplate="current: D_inf %{x:.3s}, pretraining %{y:.3g} %<extra></extra>")
    if np.isfinite(now[2]):
        spec.scatter(x=[now[0]], y=[100.0 * now[2]], mode="markers", yaxis="y2", showlegend=False, cliponaxis=False,
                     marker={**NOW_MARKER, "symbol": "diamond"},
                     hovertemplate="current: heuristic +%{y:.3g} %<extra></extra>")
    e = exc[np.isfinite(exc)]
    top = max(float(e.max()) if e.size else 0.0, 100.0 * now[2] if np.isfinite(now[2]) else 0.0, 10.0)
    y_ax = axis("pretraining share at the optimum [%]", log=False, range=[0.0, 100.0],
                tickvals=[0, 25, 50, 75, 100])
    y_ax["title"]["font"]["color"] = PHASE_COLORS["pretrain"]
    y2 = axis("heuristic's extra cost [%]", log=False, overlaying="y", side="right", showgrid=False,
              range=[0.0, 1.1 * top], tickmode="auto")
    y2["title"]["font"]["color"] = HEURISTIC_COLOR
    xr = [float(np.log10(x.min())), float(np.log10(x.max()))]
    spec.layout = base_layout(title, hovermode="closest",
                              xaxis=axis("inference tokens per model D_inf [tokens]", range=xr, **_power_ticks(*xr)),
                              yaxis=y_ax, yaxis2=y2, margin={"l": 80, "r": 90, "t": 60, "b": 110})
    return spec.figure()
