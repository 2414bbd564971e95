"""Figure builders for the Pipelining page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_pipeline.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import GREY, NOW_MARKER, TERM_COLORS
from ui.figures.plot import FONT_SIZE, Spec, axis, base_layout

WEIGHTS_COLOR = TERM_COLORS["weights"]
KV_COLOR = TERM_COLORS["kv"]
HBM_COLOR = "#D62728"
NOW_COLOR = NOW_MARKER["color"]
LATENCY_COLOR = "#222222"
TPS_COLOR = "#4C78A8"
STEP_COLOR = "#7F7F7F"
BAD_FILL = "#E45756"

# A cut-ratio curve: (legend name, ratio per layers-per-stage, colour, bold?)
Curve = tuple[str, np.ndarray, str, bool]


def _p_text(p: float) -> str:
    return f"{p:g}"


def _coloured(ax: dict, color: str) -> dict:
    """An axis whose title and tick labels take the colour of its curve (two y axes on one chart)."""
    ax["title"]["font"]["color"] = color
    ax["tickfont"] = {**ax["tickfont"], "color": color}
    return ax


def _log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks between lo and hi (a log axis spanning a few decades, labelled in plain numbers)."""
    decades = np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
    cand = (10.0 ** decades[:, None] * np.array([1.0, 2.0, 5.0])[None, :]).ravel()
    return [float(f"{t:.3g}") for t in cand if lo <= t <= hi]


def memory_bars(stages: Sequence[float], weight_gb: np.ndarray, kv_gb: np.ndarray, *, hbm_gb: float,
                p_now: float, title: str = "HBM per chip against pipeline stages") -> go.Figure:
    """Stacked bars of weights and KV per chip [GB] for each P (a category axis), the HBM capacity as a
    line, the current P outlined and labelled.  The KV part stays the same height: the P's cancel."""
    cats = [_p_text(p) for p in stages]
    w = np.asarray(weight_gb, float)
    kv = np.asarray(kv_gb, float)
    now = [abs(float(p) - float(p_now)) < 1e-9 for p in stages]
    outline = {"width": [4 if n else 0 for n in now], "color": NOW_COLOR}
    spec = Spec()
    spec.log_x = {1: False}
    spec.trace("bar", x=cats, y=w, name="weights per chip  W/(C·P)", marker={"color": WEIGHTS_COLOR, "line": outline},
               hovertemplate="P = %{x}: weights %{y:.4g} GB<extra></extra>")
    spec.trace("bar", x=cats, y=kv, name="KV per chip  b·kv(T)/C", marker={"color": KV_COLOR, "line": outline},
               hovertemplate="P = %{x}: KV %{y:.4g} GB<extra></extra>")
    spec.hline(hbm_gb, color=HBM_COLOR, dash="dash", width=3)
    spec.label(1.0, hbm_gb, f"HBM {hbm_gb:.4g} GB", x_is_data=False, y_is_data=True, xanchor="right",
               yanchor="bottom", font={"size": FONT_SIZE - 3, "color": HBM_COLOR}, bgcolor="rgba(255,255,255,0.7)")
    spec.scatter(x=[None], y=[None], mode="lines", name="HBM capacity per chip",
                 line={"color": HBM_COLOR, "dash": "dash", "width": 3})
    if any(now):
        i = now.index(True)
        # a category axis places annotations by the category's index
        spec.label(i, float(w[i] + kv[i]), f"current P = {cats[i]}", y_is_data=True, yanchor="bottom",
                   font={"size": FONT_SIZE - 3, "color": NOW_COLOR})
    top = float(np.nanmax(np.concatenate([w + kv, [hbm_gb]]))) if len(w) else hbm_gb
    spec.layout = base_layout(title, barmode="stack", hovermode="x unified",
                              xaxis={"type": "category", "title": {"text": "pipeline stages P (racks in a row)",
                                                                   "font": {"size": FONT_SIZE}},
                                     "tickfont": {"size": FONT_SIZE - 3}},
                              yaxis=axis("HBM per chip [GB]", log=False, range=[0.0, 1.15 * top]))
    return spec.figure()


def latency_vs_stages(stages: np.ndarray, latency_ms: np.ndarray, step_ms: float, tokens_per_s: np.ndarray, *,
                      p_now: float, latency_now_ms: float, tps_now: float, hop_ms: float,
                      title: str = "Per-token latency and throughput against stages") -> go.Figure:
    """Per-token latency [ms] (left axis) and tokens/s of one replica (right axis) against P (log axis).

    The step time of the whole model (no hops) is the dotted floor: the stages run one after another, so
    they add up to it; every stage boundary adds one hop."""
    P = np.asarray(stages, float)
    spec = Spec()
    spec.scatter(x=P, y=np.full(P.shape, float(step_ms)), mode="lines", name="stage times summed (no hops)",
                 line={"color": STEP_COLOR, "dash": "dot", "width": 3},
                 hovertemplate="stages summed: %{y:.4g} ms<extra></extra>")
    spec.scatter(x=P, y=latency_ms, mode="lines+markers", name=f"per-token latency (hop {hop_ms:g} ms)",
                 line={"color": LATENCY_COLOR, "width": 4}, marker={"size": 8, "color": LATENCY_COLOR},
                 hovertemplate="latency %{y:.4g} ms<extra></extra>")
    spec.scatter(x=P, y=tokens_per_s, mode="lines+markers", name="tokens/s of one replica (right axis)",
                 yaxis="y2", line={"color": TPS_COLOR, "width": 3, "dash": "dash"},
                 marker={"size": 8, "color": TPS_COLOR, "symbol": "square"},
                 hovertemplate="%{y:.4g} tok/s<extra></extra>")
    lat_top = float(np.nanmax(np.append(np.asarray(latency_ms, float), step_ms)))
    tps_top = float(np.nanmax(np.asarray(tokens_per_s, float)))
    x_range = [float(np.log10(P.min())) - 0.05, float(np.log10(P.max())) + 0.05]
    y_range, y2_range = [0.0, 1.15 * lat_top], [0.0, 1.15 * tps_top]
    # The current P on both curves as shapes in the axes' domain (every range is set): a P move redraws
    # the two dots, not the chart.  The throughput dot (right axis) is square and out of the legend.
    spec.now_point(p_now, latency_now_ms, name=f"current P = {p_now:g}", marker=NOW_MARKER,
                   ranges=(x_range, y_range), log=(True, False))
    spec.now_point(p_now, tps_now, name=f"current P = {p_now:g}, tok/s", marker=NOW_MARKER, y_axis="y2",
                   ranges=(x_range, y2_range), log=(True, False), symbol="square", showlegend=False)
    ticks = [float(p) for p in P]
    spec.layout = base_layout(
        title, hovermode="x unified",
        xaxis=axis("pipeline stages P", tickvals=ticks, ticktext=[_p_text(p) for p in ticks], range=x_range),
        yaxis=_coloured(axis("per-token latency [ms]", log=False, range=y_range), LATENCY_COLOR),
        yaxis2=_coloured(axis("tokens/s of one replica [tok/s]", log=False, overlaying="y", side="right",
                              showgrid=False, range=y2_range, tickmode="auto"), TPS_COLOR),
        margin={"l": 80, "r": 90, "t": 60, "b": 110})
    return spec.figure()


def cut_ratio_vs_layers(layers: np.ndarray, curves: Sequence[Curve], *, now: tuple[float, float] | None,
                        title: str = "Pipeline cut check against MoE layers per stage",
                        x_title: str = "MoE layers per stage (L_moe / P)") -> go.Figure:
    """t_scaleup / t_scaleout at a cut against layers per stage (linear x, log y), the ≥ 1 line, the
    region below it shaded (the cut's scale-out transfer is the slower one), and the current P's point
    (MoE layers per stage = L_moe / P) on the bold curve; `now` is None at P = 1 (no cut)."""
    L = np.asarray(layers, float)
    spec = Spec()
    spec.log_x = {1: False}
    ys = []
    for name, ratio, color, bold in curves:
        r = np.asarray(ratio, float)
        ys.append(r[np.isfinite(r) & (r > 0)])
        spec.scatter(x=L, y=r, mode="lines", name=name,
                     line={"color": color, "width": 4 if bold else 2, "dash": "solid" if bold else "dash"},
                     hovertemplate="%{x:.4g} MoE layers/stage: ratio %{y:.3g}<extra>" + name + "</extra>")
    has_now = now is not None and np.isfinite(now[1]) and now[1] > 0
    if has_now:
        ys.append(np.array([now[1]]))
    vals = np.concatenate(ys) if ys else np.array([1.0])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    lo = min(float(vals.min()) if vals.size else 1.0, 1.0) / 2.0
    hi = max(float(vals.max()) if vals.size else 1.0, 1.0) * 2.0
    x_range, y_range = [0.0, float(L.max()) + 1.0], [float(np.log10(lo)), float(np.log10(hi))]
    if has_now:   # a shape in the axes' domain (both ranges are set): a P move redraws the dot, not the curves
        spec.now_point(now[0], now[1], name=f"current: {now[0]:.3g} per stage", marker=NOW_MARKER,
                       ranges=(x_range, y_range), log=(False, True))
    spec.shapes.append({"type": "rect", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": lo, "y1": 1.0,
                        "fillcolor": BAD_FILL, "opacity": 0.10, "line": {"width": 0}, "layer": "below"})
    spec.hline(1.0, color="#333", dash="dash", width=2)
    spec.label(0.99, 0.0, "≥ 1: the cut is no slower than a layer's all-to-all", x_is_data=False, y_is_data=True,
               xanchor="right", yanchor="bottom", font={"size": FONT_SIZE - 3, "color": "#333"})
    spec.label(0.99, float(np.log10(lo)), "< 1: the scale-out hop is the bottleneck", x_is_data=False,
               y_is_data=True, xanchor="right", yanchor="bottom", font={"size": FONT_SIZE - 3, "color": BAD_FILL})
    ticks = _log_ticks(lo, hi)
    spec.layout = base_layout(title, hovermode="closest",
                              xaxis=axis(x_title, log=False, range=x_range),
                              yaxis=axis("t_scaleup / t_scaleout [×]", range=y_range,
                                         tickvals=ticks, ticktext=[f"{t:g}" for t in ticks]))
    return spec.figure()


def bubble_vs_microbatches(micro_batches: np.ndarray, stages: Sequence[float], bubble: np.ndarray, *,
                           p_now: float, m_now: float, bubble_now: float,
                           title: str = "Training bubble against micro-batches (for contrast)") -> go.Figure:
    """Idle share [%] of a GPipe/1F1B training step against micro-batches m (log x), one curve per P
    (the current P bold), inference's zero bubble as a line at 0, the current (m, bubble) marked.

    bubble: shape (len(stages), len(micro_batches)), fractions 0…1."""
    m = np.asarray(micro_batches, float)
    b = np.asarray(bubble, float)
    spec = Spec()
    for i, p in enumerate(stages):
        cur = abs(float(p) - float(p_now)) < 1e-9
        spec.scatter(x=m, y=100.0 * b[i], mode="lines", name=f"P = {p:g}" + (" (current)" if cur else ""),
                     line={"color": NOW_COLOR if cur else GREY, "width": 4 if cur else 2},
                     hovertemplate="m = %{x:.4g}: %{y:.3g} % idle<extra>P = " + f"{p:g}" + "</extra>")
    spec.hline(0.0, color=KV_COLOR, dash="solid", width=3)
    # under the line, bottom left: the training curves are high at few micro-batches
    spec.label(float(m.min()), 0.0, "inference: no bubble (P micro-batches in flight)", y_is_data=True,
               xanchor="left", xshift=6, yanchor="top", yshift=-2, font={"size": FONT_SIZE - 3, "color": KV_COLOR})
    spec.scatter(x=[m_now], y=[100.0 * bubble_now], mode="markers", name=f"current m = {m_now:g}",
                 marker=NOW_MARKER, cliponaxis=False,
                 hovertemplate="current: m = %{x:.4g}, %{y:.3g} % idle<extra></extra>")
    spec.layout = base_layout(title, hovermode="closest",
                              xaxis=axis("training micro-batches m per step", tickformat=",~g",
                                         range=[float(np.log10(m.min())), float(np.log10(m.max()))]),
                              yaxis=axis("bubble: idle share of the step [%]", log=False, range=[-12.0, 100.0],
                                         tickvals=[0, 20, 40, 60, 80, 100]))
    return spec.figure()
