"""Figure builders for the Reality check page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (validated in tests/ui/figures/test_reality.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import GREY, NOW_MARKER
from ui.figures.plot import FONT_SIZE, Spec, axis, base_layout

IDEAL_COLOR = "#222222"
REAL_COLOR = "#E45756"
POINT_COLOR = "#4C78A8"
GROUP_COLORS = ("#4C78A8", "#F58518", "#54A24B", "#B279A2", "#9D755D", "#72B7B2", "#EECA3B")
SPEED_AXIS = "tokens/s per user (speed) [tok/s]"
TPUT_AXIS = "output tokens/s per GPU (throughput) [tok/s]"


@dataclass(frozen=True)
class Point:
    """One measurement on the frontier chart: speed NaN when it was not published."""

    name: str
    speed: float            # tokens/s per user
    tps: float              # output tokens/s per GPU
    ideal: float            # the bound at that speed
    selected: bool = False


def _pos(a) -> np.ndarray:
    """Values for a log axis: zeros (no feasible batch) become gaps."""
    a = np.asarray(a, float)
    return np.where(a > 0, a, np.nan)


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def frontier(speed: np.ndarray, tps_ideal: np.ndarray, *, u_unlimited: np.ndarray | None = None,
             tps_unlimited: np.ndarray | None = None, tps_real: np.ndarray | None = None, real_label: str = "",
             points: Sequence[Point] = (), title: str = "Throughput per GPU against speed per user") -> go.Figure:
    """The roofline's bound for one setup at each speed per user (solid: no more sequences than HBM holds),
    the same without the HBM limit (grey dashed), the bound at fitted efficiencies (red dashed, on the same
    speeds) and the measured points; a measurement without a published speed is a dotted horizontal
    line at its throughput, to be read against the top of the curve."""
    u = np.asarray(speed, float)
    y = np.asarray(tps_ideal, float)
    spec = Spec()
    if u_unlimited is not None and tps_unlimited is not None:
        spec.scatter(x=np.asarray(u_unlimited, float), y=_pos(tps_unlimited), mode="lines",
                     name="ideal if HBM held any batch", line={"color": GREY, "width": 3, "dash": "dash"},
                     hovertemplate="%{x:.4g} tok/s/user<br>%{y:,.0f} tok/s/GPU (KV does not fit)<extra></extra>")
    spec.scatter(x=u, y=_pos(y), mode="lines", name="ideal bound (MFU = BWU = 1)",
                 line={"color": IDEAL_COLOR, "width": 4},
                 hovertemplate="%{x:.4g} tok/s/user<br>%{y:,.0f} tok/s/GPU<extra>ideal</extra>")
    if tps_real is not None:
        spec.scatter(x=u, y=_pos(tps_real), mode="lines", name=real_label or "at the fitted efficiency",
                     line={"color": REAL_COLOR, "width": 3, "dash": "dash"},
                     hovertemplate="%{x:.4g} tok/s/user<br>%{y:,.0f} tok/s/GPU<extra>fitted</extra>")
    ys = [y[np.isfinite(y) & (y > 0)]]
    shown_other = False
    for p in points:
        eff = p.tps / p.ideal if p.ideal > 0 else np.inf
        eff_text = f"{100 * eff:.3g} % of the bound" if np.isfinite(eff) else "above the bound"
        marker = NOW_MARKER if p.selected else {"size": 11, "color": POINT_COLOR,
                                                "line": {"width": 1, "color": "white"}}
        legend = "chosen measurement" if p.selected else "other measurements of this setup"
        show = p.selected or not shown_other
        shown_other = shown_other or not p.selected
        if np.isfinite(p.speed):
            spec.scatter(x=[p.speed], y=[p.tps], mode="markers", name=legend, marker=marker, cliponaxis=False,
                         legendgroup=legend, showlegend=show,
                         hovertemplate=f"{p.name}<br>%{{x:.4g}} tok/s/user, %{{y:,.0f}} tok/s/GPU<br>"
                                       f"{eff_text}<extra></extra>")
        else:
            color = NOW_MARKER["color"] if p.selected else POINT_COLOR
            spec.hline(p.tps, color=color, dash="dot", width=3 if p.selected else 2)
            spec.scatter(x=[None], y=[None], mode="lines", name=legend + " (speed not published)",
                         legendgroup=legend, showlegend=show,
                         line={"color": color, "dash": "dot", "width": 3 if p.selected else 2})
            top = f"{100 * eff:.3g} % of the curve's top" if np.isfinite(eff) else "above the curve's top"
            # a log y axis places annotations at log10 of the value
            spec.label(0.01, float(np.log10(p.tps)), f"{_fmt(p.tps)} tok/s/GPU, no speed published: {top}",
                       x_is_data=False, y_is_data=True, xanchor="left", yanchor="bottom",
                       font={"size": FONT_SIZE - 4, "color": color}, bgcolor="rgba(255,255,255,0.7)")
        ys.append(np.array([p.tps]))
    vals = np.concatenate(ys)
    vals = vals[np.isfinite(vals) & (vals > 0)]
    y_lo = max(float(vals.min()) / 2, float(vals.max()) / 1e4) if vals.size else 1.0
    y_hi = float(vals.max()) * 2 if vals.size else 10.0
    spec.layout = base_layout(title, hovermode="closest", height=560,
                              xaxis=axis(SPEED_AXIS),
                              yaxis=axis(TPUT_AXIS, range=[float(np.log10(y_lo)), float(np.log10(y_hi))]))
    return spec.figure()


def efficiency_strip(groups: Sequence[str], names: Sequence[str], efficiency: np.ndarray, in_selection: np.ndarray,
                     current: int | None, *, title: str = "Measured ÷ ideal bound, every measurement") -> go.Figure:
    """One dot per measurement at its efficiency [%] (log x), one row per group (publisher); the points in
    the current selection coloured, the others grey, the chosen one marked; the ideal bound at 100 %."""
    eff = 100.0 * np.asarray(efficiency, float)
    sel = np.asarray(in_selection, bool)
    order = list(dict.fromkeys(groups))
    spec = Spec()
    rng = np.random.default_rng(0)
    jitter = rng.uniform(-0.25, 0.25, len(eff))       # fixed: the same picture on every rerun
    ypos = np.array([order.index(g) for g in groups], float) + jitter
    for j, g in enumerate(order):
        m = np.array([x == g for x in groups])
        for chosen, suffix in ((True, ""), (False, " (not selected)")):
            mm = m & (sel == chosen)
            if not mm.any():
                continue
            color = GROUP_COLORS[j % len(GROUP_COLORS)] if chosen else GREY
            spec.scatter(x=eff[mm], y=ypos[mm], mode="markers", name=g + suffix, showlegend=chosen,
                         marker={"size": 11 if chosen else 8, "color": color, "opacity": 0.9 if chosen else 0.6,
                                 "line": {"width": 1, "color": "white"}},
                         customdata=[names[i] for i in np.flatnonzero(mm)],
                         hovertemplate="%{customdata}<br>%{x:.3g} % of the ideal bound<extra></extra>")
    if current is not None:
        spec.scatter(x=[eff[current]], y=[ypos[current]], mode="markers", name="chosen measurement",
                     marker={**NOW_MARKER, "size": 18, "symbol": "diamond"}, cliponaxis=False,
                     hovertemplate=f"{names[current]}<br>%{{x:.3g}} % of the ideal bound<extra></extra>")
    spec.vline(100.0, color="#333", dash="solid", width=2)
    spec.label(100.0, 0.0, "ideal bound", xanchor="right", yanchor="bottom", xshift=-4,
               font={"size": FONT_SIZE - 3, "color": "#333"}, bgcolor="rgba(255,255,255,0.8)")
    finite = eff[np.isfinite(eff) & (eff > 0)]
    lo = max(min(float(finite.min()) / 1.5, 10.0), 0.01) if finite.size else 0.1
    hi = max(150.0, float(finite.max()) * 1.5) if finite.size else 150.0
    ticks = [v for v in (0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100) if lo <= v <= hi]
    spec.layout = base_layout(title, hovermode="closest", height=max(360, 150 + 80 * len(order)), showlegend=False,
                              margin={"l": 130, "r": 30, "t": 60, "b": 70},
                              xaxis=axis("measured ÷ ideal bound [%]", range=[float(np.log10(lo)), float(np.log10(hi))],
                                         tickvals=ticks, ticktext=[f"{v:g} %" for v in ticks]),
                              yaxis={"tickvals": list(range(len(order))), "ticktext": order,
                                     "range": [-0.6, len(order) - 0.4], "tickfont": {"size": FONT_SIZE - 2},
                                     "showgrid": False, "zeroline": False})
    return spec.figure()
