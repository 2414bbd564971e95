"""Figure builders for the MoE layout page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_moe.py).  Times
arrive in seconds and bytes in bytes; the builders convert to ms and GB for the axes.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import NOW_MARKER, TERM_COLORS, fit_curve, shade_bounds, step_breakdown
from ui.figures.plot import COUNT_DECADES, FONT_SIZE, Spec, axis, base_layout, decades_if_wide

DOMAIN_COLOR = "#D62728"
SCALEUP_COLOR = "#B279A2"
SCALEOUT_COLOR = "#E45756"
LAYER_COLOR = "#4C78A8"
BUSIEST_COLOR = "#D62728"


NOFIT = "weights + KV do not fit in HBM"


def _positive(y) -> np.ndarray:
    """y with zeros (and negatives) as NaN, so a log axis draws no line there."""
    y = np.asarray(y, float)
    return np.where(y > 0, y, np.nan)


def _log_range(x: np.ndarray) -> list[float]:
    """The log-axis range of x, padded 2 % each side so markers at the ends are not cut in half."""
    lo, hi = np.log10(float(x[0])), np.log10(max(float(x[-1]), 2.0))
    pad = 0.02 * (hi - lo)
    return [lo - pad, hi + pad]


def _domain_edge(spec: Spec, domain: float, x_max: float, *, beyond: str) -> None:
    """The scale-up domain's edge: a solid line at D, a label, and a light band past it."""
    if not (np.isfinite(domain) and domain > 0):
        return
    if x_max > domain:
        spec.vrect(domain, x_max, color=DOMAIN_COLOR, opacity=0.06)
        # Right-aligned at the axis end: inside the plot however narrow the band past D is.
        spec.label(x_max, 0.04, beyond, xanchor="right", xshift=-4, align="right",
                   font={"size": FONT_SIZE - 4, "color": DOMAIN_COLOR}, bgcolor="rgba(255,255,255,0.7)")
    spec.vline(domain, color=DOMAIN_COLOR, dash="solid", width=3)
    spec.label(domain, 0.88, f"scale-up domain D = {domain:,.0f}", xanchor="right", xshift=-4,
               font={"size": FONT_SIZE - 3, "color": DOMAIN_COLOR}, bgcolor="rgba(255,255,255,0.8)")


def breakdown(terms: dict[str, float], mode: str, title: str) -> go.Figure:
    """The shared step breakdown (its legend hangs below the axis title at any width)."""
    return step_breakdown(terms, mode, title)


def _span_decades(*values) -> float:
    """Powers of ten spanned by the positive finite values (0 when there are none)."""
    v = np.concatenate([np.ravel(np.asarray(a, float)) for a in values])
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.log10(v.max() / v.min())) if v.size else 0.0


def log_ticks(*values) -> dict:
    """Readable labels for a log axis over `values` (never Plotly's small-digit labels 2 3 4 … 9).

    Plotly labels a tall log axis spanning one to two decades at every digit ("D1"), a column of
    tiny numbers.  Here: ≥ 2 decades → powers of ten (DECADES); 1–2 decades → 1, 2, 5, 10, 20, 50 …
    ("D2"); under one decade Plotly's own ticks, which are few and fully labelled.
    """
    out = decades_if_wide(*values)
    if not out and _span_decades(*values) >= 1.0:
        out = {"dtick": "D2"}
    return out


def count_ticks(counts) -> dict:
    """Labels for a log axis of chip counts: 1, 10, 100, 1k … over ≥ 2 decades, else powers of two
    (1, 2, 4, 8 … 64), so a narrow range such as G = 1…8 gets more than one label."""
    c = np.asarray(counts, float)
    c = c[np.isfinite(c) & (c > 0)]
    if not c.size or _span_decades(c) >= 2.0:
        return dict(COUNT_DECADES)
    lo, hi = int(np.floor(np.log2(c.min()))), int(np.ceil(np.log2(c.max())))
    vals = [2.0 ** i for i in range(lo, hi + 1)]
    return {"tickvals": vals, "ticktext": [f"{v:,.0f}" if v >= 1 else f"{v:g}" for v in vals]}


def comm_vs_gpus(gpus: np.ndarray, t_scaleup: np.ndarray, t_scaleout: np.ndarray, t_comm: np.ndarray,
                 t_step_no_comm: np.ndarray, t_step: np.ndarray, bound: np.ndarray, fits: np.ndarray, *,
                 domain: float, g_now: float, t_step_now: float,
                 title: str = "All-to-all and step time against the GPUs an expert layer spans") -> go.Figure:
    """t_comm (and its scale-up / scale-out parts) and the step with and without it, against G (log–log).

    Shaded by what bounds the step; the scale-up domain's edge marked (past it, part of the
    all-to-all crosses the scale-out network); the current G marked on the step curve.
    """
    g = np.asarray(gpus, float)
    spec = Spec()
    shade_bounds(spec, g, bound)
    _domain_edge(spec, domain, float(g[-1]), beyond="spans > 1 domain:<br>traffic crosses scale-out")
    ms = 1e3
    spec.scatter(x=g, y=_positive(t_scaleup) * ms, name="scale-up links", mode="lines",
                 line={"dash": "dot", "width": 2, "color": SCALEUP_COLOR},
                 hovertemplate="%{y:.4g} ms<extra>scale-up links</extra>")
    if np.any(np.asarray(t_scaleout) > 0):
        spec.scatter(x=g, y=_positive(t_scaleout) * ms, name="scale-out network", mode="lines",
                     line={"dash": "dot", "width": 2, "color": SCALEOUT_COLOR},
                     hovertemplate="%{y:.4g} ms<extra>scale-out network</extra>")
    spec.scatter(x=g, y=_positive(t_comm) * ms, name="t_comm (all-to-all)", mode="lines",
                 line={"width": 3, "color": TERM_COLORS["comm"]},
                 hovertemplate="%{y:.4g} ms<extra>t_comm</extra>")
    spec.scatter(x=g, y=np.asarray(t_step_no_comm, float) * ms, name="step without t_comm", mode="lines",
                 line={"dash": "dash", "width": 2, "color": "#777"},
                 hovertemplate="%{y:.4g} ms<extra>step without t_comm</extra>")
    fit_curve(spec, g, np.asarray(t_step, float) * ms, fits, name="step with t_comm",
              hover="G = %{x:,.0f}: %{y:.4g} ms", nofit_name=NOFIT)
    # The current G as a shape (a G move then redraws the dot, not the curves), room along the step curve.
    spec.now_point(g_now, t_step_now * ms, name=f"G = {g_now:,.0f}", marker=NOW_MARKER, room_x=g,
                   room_y=np.asarray(t_step, float) * ms)
    y_ticks = log_ticks(_positive(t_scaleup) * ms, _positive(t_scaleout) * ms, _positive(t_comm) * ms,
                        np.asarray(t_step_no_comm, float) * ms, np.asarray(t_step, float) * ms)
    spec.layout = base_layout(title, xaxis=axis("GPUs the expert layer spans, G (chips)", range=_log_range(g),
                                                    **count_ticks(g)),
                              yaxis=axis("time per step [ms]", **y_ticks))
    return spec.figure()


def experts_touched_vs_batch(batch: np.ndarray, distinct: np.ndarray, n_experts: float, busiest: np.ndarray,
                             experts_per_gpu: float, *, b_now: float, b_even: float | None = None,
                             title: str = "Share of experts touched in one layer") -> go.Figure:
    """Distinct routed experts touched (÷ E) and the busiest GPU's touched experts (÷ its experts) vs batch.

    `b_even` marks the batch where each expert expects one token (E/k).  Hover shows the counts.
    """
    b = np.asarray(batch, float)
    d = np.asarray(distinct, float)
    bz = np.asarray(busiest, float)
    spec = Spec()
    spec.scatter(x=b, y=100 * d / n_experts, customdata=d, name=f"whole layer: distinct experts ÷ E ({n_experts:g})",
                 mode="lines", line={"width": 4, "color": LAYER_COLOR},
                 hovertemplate=f"B = %{{x:.4g}}: %{{customdata:.4g}} of {n_experts:g} experts (%{{y:.3g}} %)"
                               "<extra>whole layer</extra>")
    spec.scatter(x=b, y=100 * bz / experts_per_gpu, customdata=bz,
                 name=f"busiest GPU: touched ÷ its {experts_per_gpu:g} experts", mode="lines",
                 line={"width": 4, "color": BUSIEST_COLOR},
                 hovertemplate=f"B = %{{x:.4g}}: %{{customdata:.3g}} of {experts_per_gpu:g} (%{{y:.3g}} %)"
                               "<extra>busiest GPU</extra>")
    i = int(np.argmin(np.abs(np.log(b / b_now))))
    spec.scatter(x=[b_now, b_now], y=[100 * d[i] / n_experts, 100 * bz[i] / experts_per_gpu], mode="markers",
                 name=f"B = {b_now:g}", marker=NOW_MARKER,
                 hovertemplate="current B: %{y:.3g} %<extra></extra>")
    if b_even is not None and np.isfinite(b_even) and b[0] <= b_even <= b[-1]:
        spec.vline(b_even, color="#555", dash="dash")
        spec.label(b_even, 0.5, f"B = E/k = {b_even:,.4g}:<br>one token per expert<br>on average",
                   xanchor="left", xshift=4, align="left", font={"size": FONT_SIZE - 4, "color": "#555"},
                   bgcolor="rgba(255,255,255,0.8)")
    spec.layout = base_layout(title, xaxis=axis("batch B (sequences per step)", **COUNT_DECADES),
                              yaxis=axis("experts touched [% of those held]", log=False, range=[0, 105]))
    return spec.figure()


def weight_bytes_vs_batch(batch: np.ndarray, touched_bytes: np.ndarray, all_bytes: float, hbm_bandwidth: float, *,
                          b_now: float, touched_now: float,
                          title: str = "Weight bytes the busiest GPU reads per step") -> go.Figure:
    """Weight bytes per GPU per step: only touched experts (busiest GPU) against every weight split evenly (W/G).
    The busiest GPU holds ⌈E/G⌉ experts, so where G does not divide E its curve ends above W/G.

    Hover gives the fetch time at `hbm_bandwidth` (bytes/s per GPU).
    """
    b = np.asarray(batch, float)
    gb = 1e-9
    t = np.asarray(touched_bytes, float)
    spec = Spec()
    spec.scatter(x=b, y=np.full(b.shape, all_bytes * gb), customdata=np.full(b.shape, all_bytes / hbm_bandwidth * 1e3),
                 name="every weight, split evenly (W/G, the lecture)", mode="lines",
                 line={"width": 3, "color": TERM_COLORS["weights"], "dash": "dash"},
                 hovertemplate="%{y:.4g} GB → %{customdata:.3g} ms<extra>W/G, even split</extra>")
    spec.scatter(x=b, y=t * gb, customdata=t / hbm_bandwidth * 1e3, name="only touched experts (busiest GPU)",
                 mode="lines", line={"width": 4, "color": "#222"},
                 hovertemplate="B = %{x:.4g}: %{y:.4g} GB → %{customdata:.3g} ms<extra>touched only</extra>")
    spec.scatter(x=[b_now], y=[touched_now * gb], name=f"B = {b_now:g}", mode="markers", marker=NOW_MARKER,
                 hovertemplate=f"current B: %{{y:.4g}} GB → {touched_now / hbm_bandwidth * 1e3:.3g} ms"
                               "<extra></extra>")
    top = max(float(np.nanmax(t)), all_bytes) * gb
    spec.layout = base_layout(title, xaxis=axis("batch B (sequences per step)", **COUNT_DECADES),
                              yaxis=axis("weight bytes read per GPU per step [GB]", log=False, range=[0, 1.08 * top]))
    return spec.figure()


def tp_vs_gpus(gpus: np.ndarray, t_allreduce: np.ndarray, t_weights: np.ndarray, t_step_no_tp: np.ndarray,
               t_step_tp: np.ndarray, bound: np.ndarray, fits: np.ndarray, *, domain: float, g_now: float,
               t_step_now: float, title: str = "Tensor parallelism: all-reduce against the weight fetch it splits",
               ) -> go.Figure:
    """Dense tensor parallelism over G chips: the all-reduce time grows with G while the weight fetch
    per chip shrinks as 1/G; the step with and without the all-reduce (log–log)."""
    g = np.asarray(gpus, float)
    spec = Spec()
    shade_bounds(spec, g, bound)
    if g[-1] >= domain:
        spec.vline(domain, color=DOMAIN_COLOR, dash="solid", width=3)
        spec.label(domain, 0.88, f"scale-up domain D = {domain:,.0f}", xanchor="right", xshift=-4,
                   font={"size": FONT_SIZE - 3, "color": DOMAIN_COLOR}, bgcolor="rgba(255,255,255,0.8)")
    ms = 1e3
    spec.scatter(x=g, y=np.asarray(t_weights, float) * ms, name="weight fetch W/(G·bw)", mode="lines",
                 line={"dash": "dot", "width": 2, "color": TERM_COLORS["weights"]},
                 hovertemplate="%{y:.4g} ms<extra>weight fetch</extra>")
    spec.scatter(x=g, y=_positive(t_allreduce) * ms, name="TP all-reduce", mode="lines",
                 line={"width": 3, "color": TERM_COLORS["comm"]},
                 hovertemplate="%{y:.4g} ms<extra>TP all-reduce</extra>")
    spec.scatter(x=g, y=np.asarray(t_step_no_tp, float) * ms, name="step, communication free", mode="lines",
                 line={"dash": "dash", "width": 2, "color": "#777"},
                 hovertemplate="%{y:.4g} ms<extra>step, communication free</extra>")
    fit_curve(spec, g, np.asarray(t_step_tp, float) * ms, fits, name="step with the all-reduce",
              hover="G = %{x:,.0f}: %{y:.4g} ms", nofit_name=NOFIT)
    spec.now_point(g_now, t_step_now * ms, name=f"G = {g_now:,.0f}", marker=NOW_MARKER, room_x=g,
                   room_y=np.asarray(t_step_tp, float) * ms)
    y_ticks = log_ticks(np.asarray(t_weights, float) * ms, _positive(t_allreduce) * ms,
                        np.asarray(t_step_no_tp, float) * ms, np.asarray(t_step_tp, float) * ms)
    x_axis = axis("tensor-parallel GPUs G (chips)", range=_log_range(g), **count_ticks(g))
    spec.layout = base_layout(title, xaxis=x_axis,
                              yaxis=axis("time per step [ms]", **y_ticks))
    return spec.figure()
