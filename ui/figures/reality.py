"""Figure builders for the Reality check page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (validated in tests/ui/figures/test_reality.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import GREY, NOW_MARKER, Prediction, prediction_traces
from ui.figures.plot import FONT_SIZE, NARROW_META, Spec, axis, base_layout

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
             points: Sequence[Point] = (), title: str = "Throughput per GPU against speed per user",
             predicted: Prediction | None = None) -> go.Figure:
    """The roofline's bound for one setup at each speed per user (solid: no more sequences than HBM holds),
    the same without the HBM limit (grey dashed), the bound at fitted efficiencies (red dashed, on the same
    speeds) and the measured points; a measurement without a published speed is a dotted horizontal
    line at its throughput, to be read against the top of the curve.  `predicted`: the fitted efficiency
    model's throughput on the same speeds, with its band (purple)."""
    u = np.asarray(speed, float)
    y = np.asarray(tps_ideal, float)
    spec = Spec()
    if u_unlimited is not None and tps_unlimited is not None:
        spec.scatter(x=np.asarray(u_unlimited, float), y=_pos(tps_unlimited), mode="lines",
                     name="ideal if HBM held any batch", line={"color": GREY, "width": 3, "dash": "dash"},
                     hovertemplate="%{x:.4g} tok/s/user<br>%{y:,.0f} tok/s/GPU (KV does not fit)<extra></extra>")
    spec.scatter(x=u, y=_pos(y), mode="lines", name="ideal bound (MFU = BWU = 1)", legendrank=1,
                 line={"color": IDEAL_COLOR, "width": 4},
                 hovertemplate="%{x:.4g} tok/s/user<br>%{y:,.0f} tok/s/GPU<extra>ideal</extra>")
    if predicted is not None:
        prediction_traces(spec, u, Prediction(_pos(predicted.y), _pos(predicted.lo), _pos(predicted.hi), predicted.name,
                                              predicted.band_name), unit="tok/s/GPU")
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


STRIP_ROW_PX, STRIP_ROW_PX_MANY, STRIP_ROOMY_ROWS = 80, 52, 10   # px per publisher row: roomy up to 10 rows


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
    row_px = STRIP_ROW_PX if len(order) <= STRIP_ROOMY_ROWS else STRIP_ROW_PX_MANY
    spec.layout = base_layout(title, hovermode="closest", height=max(360, 150 + row_px * len(order)), showlegend=False,
                              margin={"l": 130, "r": 30, "t": 60, "b": 70},
                              xaxis=axis("measured ÷ ideal bound [%]", range=[float(np.log10(lo)), float(np.log10(hi))],
                                         tickvals=ticks, ticktext=[f"{v:g} %" for v in ticks]),
                              yaxis={"tickvals": list(range(len(order))), "ticktext": order,
                                     "range": [-0.6, len(order) - 0.4], "tickfont": {"size": FONT_SIZE - 2},
                                     "showgrid": False, "zeroline": False})
    return spec.figure()


# ---------------------------------------------------------------- the fitted efficiency model, held out

CV_LABELS = {"k5": "a random fifth", "model": "one model", "chip": "one chip", "publisher": "one publisher",
             "in-sample": "none (in-sample)"}
CV_TICKS = {"k5": "a fifth<br>(k5)", "model": "a<br>model", "chip": "a<br>chip", "publisher": "a<br>publisher",
            "in-sample": "in-<br>sample"}          # short, level tick labels (a phone's chart is 350 px wide)
MEDIAN_COLOR = "#4C78A8"
STRIP_NARROW_PX = 450          # a phone's chart: smaller row labels (the strip sits in a ~600 px column on a desktop)
P90_COLOR = "#F58518"


def held_out_error(kinds: Sequence[str], median_pct: Sequence[float], p90_pct: Sequence[float], *,
                   title: str = "Held-out error of the prediction") -> go.Figure:
    """Median and 90th percentile of |predicted ÷ measured − 1| [%] for each way of holding points out (grouped
    bars, the value printed on each)."""
    labels = [CV_TICKS.get(k, k) for k in kinds]
    spec = Spec()
    spec.log_x[1] = False
    for name, vals, color in (("median", median_pct, MEDIAN_COLOR), ("90th percentile", p90_pct, P90_COLOR)):
        v = np.asarray(vals, float)
        spec.trace("bar", x=labels, y=v, name=name, marker={"color": color}, text=[f"{x:.3g}" for x in v],
                   textposition="outside", cliponaxis=False, textfont={"size": FONT_SIZE - 5},
                   customdata=[CV_LABELS.get(k, k) for k in kinds],
                   hovertemplate=f"held out: %{{customdata}}<br>{name} error %{{y:.3g}} %<extra></extra>")
    top = float(np.nanmax(np.concatenate([np.asarray(median_pct, float), np.asarray(p90_pct, float)]))) * 1.2
    # The legend hangs from the figure's bottom edge, under the two-line tick labels and the axis title.
    legend = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "xanchor": "left", "x": 0.0,
              "font": {"size": FONT_SIZE - 3}}
    spec.layout = base_layout(title, height=440, barmode="group", hovermode="closest", legend=legend,
                              margin={"l": 80, "r": 20, "t": 60, "b": 150},
                              xaxis={"title": {"text": "held out", "font": {"size": FONT_SIZE}}, "tickangle": 0,
                                     "tickfont": {"size": FONT_SIZE - 4}, "type": "category"},
                              yaxis=axis("|predicted ÷ measured − 1| [%]", log=False, range=[0, top]))
    return spec.figure()


def _ratio_ticks(lo: float, hi: float) -> list[float]:
    return [v for v in (0.25, 0.35, 0.5, 0.7, 1, 1.4, 2, 3, 4) if lo <= v <= hi]


def held_out_strip(groups: Sequence[str], names: Sequence[str], ratio: np.ndarray, band: tuple[float, float], *,
                   labels: dict[str, str] | None = None, current: int | None = None,
                   title: str = "Held-out predicted ÷ measured") -> go.Figure:
    """One dot per measurement at its held-out predicted ÷ measured (log x), one row per group (ordered by the
    group's median), each group's median a bar mark; the band (10th–90th percentile of `band`) shaded, 1 a
    line; the chosen measurement marked."""
    r = np.asarray(ratio, float)
    g = np.asarray(list(groups))
    names_ = list(dict.fromkeys(g.tolist()))
    med = {k: float(np.median(r[g == k])) for k in names_}
    order = sorted(names_, key=lambda k: med[k])
    labels = labels or {}
    ypos = np.array([order.index(k) for k in g], float) + np.random.default_rng(0).uniform(-0.22, 0.22, len(r))
    spec = Spec()
    lo, hi = band
    spec.vrect(lo, hi, color=MEDIAN_COLOR, opacity=0.12)
    spec.vline(1.0, color="#333", dash="solid", width=2)
    spec.label(1.0, 1.0, "predicted = measured", xanchor="left", yanchor="top", xshift=4,
               font={"size": FONT_SIZE - 4, "color": "#333"}, bgcolor="rgba(255,255,255,0.7)")
    spec.scatter(x=[None], y=[None], mode="markers", name=f"8 in 10, held out five-fold: {lo:.2f}–{hi:.2f}",
                 marker={"size": 14, "symbol": "square", "color": "rgba(76, 120, 168, 0.25)"})
    spec.scatter(x=r, y=ypos, mode="markers", name="a measurement, held out",
                 marker={"size": 9, "color": MEDIAN_COLOR, "opacity": 0.75, "line": {"width": 1, "color": "white"}},
                 customdata=[f"{n} ({labels.get(k, k)})" for n, k in zip(names, g)],
                 hovertemplate="%{customdata}<br>predicted ÷ measured %{x:.3g}<extra></extra>")
    spec.scatter(x=[med[k] for k in order], y=list(range(len(order))), mode="markers", name="the group's median",
                 marker={"size": 22, "color": "#222", "symbol": "line-ns", "line": {"width": 3, "color": "#222"}},
                 customdata=[labels.get(k, k) for k in order],
                 hovertemplate="%{customdata}: median %{x:.3g}<extra></extra>")
    if current is not None and 0 <= current < len(r):
        spec.scatter(x=[r[current]], y=[ypos[current]], mode="markers", name="chosen measurement",
                     marker={**NOW_MARKER, "size": 16, "symbol": "diamond"}, cliponaxis=False,
                     hovertemplate=f"{names[current]}<br>predicted ÷ measured %{{x:.3g}}<extra></extra>")
    finite = r[np.isfinite(r) & (r > 0)]
    x_lo = min(float(finite.min()) / 1.15, lo / 1.15) if finite.size else 0.5
    x_hi = max(float(finite.max()) * 1.15, hi * 1.15) if finite.size else 2.0
    ticks = _ratio_ticks(x_lo, x_hi)
    n = {k: int(np.sum(g == k)) for k in order}
    spec.layout = base_layout(title, hovermode="closest", height=max(380, 190 + 48 * len(order)),
                              margin={"l": 20, "r": 20, "t": 60, "b": 150},
                              xaxis=axis("held-out predicted ÷ measured [×]",
                                         range=[float(np.log10(x_lo)), float(np.log10(x_hi))], tickvals=ticks,
                                         ticktext=[f"{v:g}×" for v in ticks], tickangle=0),
                              yaxis={"tickvals": list(range(len(order))),
                                     "ticktext": [f"{labels.get(k, k)} ({n[k]})" for k in order],
                                     "range": [-0.6, len(order) - 0.4], "tickfont": {"size": FONT_SIZE - 4},
                                     "showgrid": False, "zeroline": False, "automargin": True},
                              legend={"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom",
                                      "xanchor": "left", "x": 0.0, "font": {"size": FONT_SIZE - 4}},
                              meta={NARROW_META: {"below_px": STRIP_NARROW_PX, "layout": {
                                  "yaxis": {"tickfont": {"size": 10}}, "xaxis": {"tickfont": {"size": 11}}}}})
    return spec.figure()


def predicted_vs_measured(measured: np.ndarray, predicted: np.ndarray, names: Sequence[str], band: tuple[float, float],
                          *, fitted: np.ndarray | None = None, fitted_label: str = "fitted to the selection",
                          title: str = "Your points: predicted against measured") -> go.Figure:
    """Each point's predicted (by the built-in fit, no refit) against its measured output tokens/s per GPU (log–log),
    with predicted = measured and the band a held-out ratio predicted ÷ measured in [lo, hi] gives:
    predicted between measured × lo and measured × hi; optionally the same points refitted (`fitted`)."""
    m = np.asarray(measured, float)
    p = np.asarray(predicted, float)
    vals = np.concatenate([m, p] + ([np.asarray(fitted, float)] if fitted is not None else []))
    vals = vals[np.isfinite(vals) & (vals > 0)]
    a, b = (float(vals.min()) / 2, float(vals.max()) * 2) if vals.size else (1.0, 10.0)
    lo, hi = band
    line = np.geomspace(a, b, 50)
    spec = Spec()
    spec.scatter(x=line, y=line * lo, mode="lines", line={"width": 0, "color": MEDIAN_COLOR}, showlegend=False,
                 hoverinfo="skip", name="band (lower edge)", legendgroup="band")
    spec.scatter(x=line, y=line * hi, mode="lines", line={"width": 0, "color": MEDIAN_COLOR}, fill="tonexty",
                 fillcolor="rgba(76, 120, 168, 0.14)", legendgroup="band", hoverinfo="skip",
                 name=f"held-out band: predicted = measured × {lo:.2f} … {hi:.2f}")
    spec.scatter(x=line, y=line, mode="lines", name="predicted = measured", hoverinfo="skip",
                 line={"width": 2, "color": "#333"})
    if fitted is not None:
        spec.scatter(x=m, y=np.asarray(fitted, float), mode="markers", name=fitted_label, customdata=list(names),
                     marker={"size": 10, "color": REAL_COLOR, "symbol": "square-open", "line": {"width": 2}},
                     hovertemplate="%{customdata}<br>measured %{x:,.4g}, fitted %{y:,.4g} tok/s/GPU<extra></extra>")
    spec.scatter(x=m, y=p, mode="markers", name="predicted by the built-in fit (no refit)", customdata=list(names),
                 marker={"size": 12, "color": "#7B3FA0", "line": {"width": 1, "color": "white"}}, cliponaxis=False,
                 hovertemplate="%{customdata}<br>measured %{x:,.4g}, predicted %{y:,.4g} tok/s/GPU<extra></extra>")
    rng = [float(np.log10(a)), float(np.log10(b))]
    spec.layout = base_layout(title, hovermode="closest", height=520,
                              xaxis=axis("measured output tokens/s per GPU [tok/s]", range=rng),
                              yaxis=axis("predicted output tokens/s per GPU [tok/s]", range=rng))
    return spec.figure()
