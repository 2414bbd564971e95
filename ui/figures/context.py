"""Figure builders for the Context-limits page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_context.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import GREY, NOW_MARKER
from ui.figures.kv_cache import mark
from ui.figures.plot import COUNT_DECADES, FONT_SIZE, Spec, axis, base_layout, decades_if_wide
from ui.format import tokens

DENSE_COLOR = "#222222"
FRACTION_COLOR = "#4C78A8"
SQRT_COLOR = "#54A24B"
REFERENCE_COLOR = "#7F3C8D"
COMPUTE_COLOR = "#4C78A8"
WEIGHTS_COLOR = "#F58518"
BAND_COLOR = "#F2B701"
MONTH_COLOR = "#9D755D"


@dataclass(frozen=True)
class Curve:
    """One line: legend name, y values, colour, dash, width."""

    name: str
    y: np.ndarray
    color: str
    dash: str = "solid"
    width: float = 4


@dataclass(frozen=True)
class Series:
    """Points (one per chip) and, optionally, the continuous curve they lie on."""

    name: str
    y: np.ndarray
    color: str
    symbol: str = "circle"
    labels: bool | Sequence[bool] = False         # write the (chosen) points' short names beside them
    curve_x: np.ndarray | None = None
    curve_y: np.ndarray | None = None


def _finite_pos(*arrays: np.ndarray) -> np.ndarray:
    vals = np.concatenate([np.ravel(np.asarray(a, float)) for a in arrays]) if arrays else np.array([])
    return vals[np.isfinite(vals) & (vals > 0)]


TITLE_WIDTH = 42     # characters of a chart title per line: about what a 390 px phone shows at the title's size
TITLE_LINE_PX = 28   # the top margin each further title line needs


def wrap_title(title: str, width: int = TITLE_WIDTH) -> str:
    """A long title broken into lines of at most `width` characters (Plotly never wraps a title: past
    the chart's edge it is cut off): after a colon or before a parenthesis when one falls in the first
    line, else at the last space that fits, never inside "B = 4096".  Each break keeps its space
    (" <br>"), so a reader that strips the tags (the CSV's chart column) still reads the words apart."""
    if len(title) <= width:
        return title
    head = title[:width + 1]
    cuts = [i + 1 for i in (head.rfind(": "), head.rfind(", ")) if i > width // 3]
    cuts += [i for i in (head.rfind(" ("), head.rfind(" — ")) if i > width // 3]
    if not cuts:     # the last space that fits and does not touch an "="
        cuts = [m.start() for m in re.finditer(r"(?<![=×÷]) (?![=×÷])", head)][-1:]
    if not cuts:
        return title
    cut = max(cuts)
    return title[:cut].rstrip() + " <br>" + wrap_title(title[cut:].lstrip(), width)


def titled_layout(title: str, **props) -> dict:
    """`base_layout` with the title wrapped for a phone, the top margin and the height grown by its
    extra lines (the plot area keeps its size)."""
    text = wrap_title(title)
    out = base_layout(text, **props)
    extra = text.count("<br>") * TITLE_LINE_PX
    out["margin"] = {**out["margin"], "t": out["margin"]["t"] + extra}
    out["height"] = out["height"] + extra
    return out


RATIO_TICKS = (20, 50, 100, 150, 200, 300, 400, 500, 700, 1000, 1500, 2000, 3000, 5000)
POSITIONS = ("middle right", "middle left", "bottom center", "top center")


def label_positions(x: np.ndarray, y: np.ndarray, mask: Sequence[bool], *, log_x: bool) -> list[str]:
    """Text positions that keep labels of points at (nearly) the same x apart: within a group of labelled
    points closer than 0.3 year (or 0.03 decade) the highest goes right, the next left, then below, above."""
    xs = np.log10(np.asarray(x, float)) if log_x else np.asarray(x, float)
    tol = 0.03 if log_x else 0.3
    out = ["middle right"] * len(xs)
    idx = [i for i in range(len(xs)) if mask[i] and np.isfinite(xs[i])]
    idx.sort(key=lambda i: (xs[i], -float(y[i]) if np.isfinite(y[i]) else 0.0))
    group: list[int] = []
    for i in [*idx, None]:
        if i is not None and group and abs(xs[i] - xs[group[0]]) <= tol:
            group.append(i)
            continue
        for j, g in enumerate(sorted(group, key=lambda k: -float(y[k]))):
            out[g] = POSITIONS[j % len(POSITIONS)]
        group = [i] if i is not None else []
    return out


def _band(spec: Spec, band: tuple[float, float] | None, *, horizontal: bool, text: str) -> None:
    """The band where frontier context stalled (lecture §2.8: 100–200k), labelled with its ends, once."""
    if band is None:
        return
    lo, hi = band
    a, b = tokens(lo), tokens(hi)
    if a[-1:].isalpha() and a[-1:] == b[-1:]:     # 100k–200k → 100–200k
        a = a[:-1]
    text = f"{a}–{b}: {text}"
    if horizontal:
        spec.shapes.append({"type": "rect", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": lo, "y1": hi,
                            "fillcolor": BAND_COLOR, "opacity": 0.22, "line": {"width": 0}, "layer": "below"})
        # named in the legend: inside the plot the label would sit on the chips' points
        spec.scatter(x=[None], y=[None], mode="lines", name=text, line={"color": BAND_COLOR, "width": 12},
                     opacity=0.4)
    else:
        spec.vrect(lo, hi, color=BAND_COLOR, opacity=0.22)
        spec.label(float(np.sqrt(lo * hi)), 0.02, text, yanchor="bottom",
                   font={"size": FONT_SIZE - 4, "color": "#8a6d00"})


def cost_vs_context(context: np.ndarray, curves: Sequence[Curve], *, floors: Sequence[Curve] = (),
                    markers: Sequence[tuple[str, float, str]] = (), t_now: float, usd_now: float,
                    nofit_from: float | None = None, band: tuple[float, float] | None = None,
                    title: str = "Cost per token against context") -> go.Figure:
    """$/Mtok against context (log–log): one bold curve per attention rule (dense, a fraction read, √T),
    dotted floors (the matmul cost, the weight read's share), vertical crossover marks, the current T on
    the first curve, the contexts where the batch no longer fits in HBM shaded grey, and the 100–200k band.
    """
    context = np.asarray(context, float)
    lo, hi = float(context.min()), float(context.max())
    spec = Spec()
    _band(spec, band, horizontal=False, text="where context stalled")
    if nofit_from is not None and np.isfinite(nofit_from) and nofit_from < hi:
        x0 = max(float(nofit_from), lo)
        spec.vrect(x0, hi, color=GREY, opacity=0.25)
        spec.label(float(np.sqrt(x0 * hi)) if x0 < hi else hi, 0.55, "batch does not fit in HBM",
                   font={"size": FONT_SIZE - 4, "color": "#555"}, bgcolor="rgba(255,255,255,0.7)")
    for c in floors:
        spec.scatter(x=context, y=c.y, mode="lines", name=c.name, line={"color": c.color, "dash": c.dash,
                                                                          "width": c.width},
                     hovertemplate="T = %{x:,.0f}: $%{y:.4g}/Mtok<extra>" + c.name + "</extra>")
    for c in curves:
        spec.scatter(x=context, y=c.y, mode="lines", name=c.name, line={"color": c.color, "dash": c.dash,
                                                                          "width": c.width},
                     hovertemplate="T = %{x:,.0f}: $%{y:.4g}/Mtok<extra>" + c.name + "</extra>")
    spec.scatter(x=[t_now], y=[usd_now], mode="markers", name="current T (dense)", marker=NOW_MARKER,
                 cliponaxis=False, hovertemplate="current T = %{x:,.0f}: $%{y:.4g}/Mtok<extra></extra>")
    shown = [(label, x, color) for label, x, color in markers if x is not None and np.isfinite(x) and lo <= x <= hi]
    for i, (label, x, color) in enumerate(shown):
        mark(spec, x, label, color, y=0.92 - 0.1 * i, x_range=(lo, hi))
    ys = _finite_pos(*(c.y for c in curves), *(c.y for c in floors), [usd_now])
    ylo, yhi = (float(ys.min()), float(ys.max())) if ys.size else (1e-3, 1.0)
    # Ticks at powers of ten (1k, 10k … on x): 30 labels with plotly's 2 and 5 between, a third of a redraw's
    # axis work (plotly's drawLabels, 7 ms of a 25 ms redraw), and harder to read on a projector.
    spec.layout = titled_layout(title, height=560,
                              xaxis=axis("context T (tokens)", range=[float(np.log10(lo)), float(np.log10(hi))],
                                         **COUNT_DECADES),
                              yaxis=axis("cost [$ per million output tokens]",
                                         range=[float(np.log10(ylo)) - 0.1, float(np.log10(yhi)) + 0.15],
                                         **decades_if_wide(ys)))
    return spec.figure()


def crossover_by_chip(x: np.ndarray, series: Sequence[Series], *, names: Sequence[str], short: Sequence[str],
                      x_title: str, x_is_year: bool, current: int | None, band: tuple[float, float] | None,
                      month: float | None = None, title: str = "Where KV overtakes compute, chip by chip"
                      ) -> go.Figure:
    """The context where the KV read equals the matmuls for each chip preset (log y), against the chip's
    announcement year (linear x) or its FLOP/byte (log x, with each series' curve through its points).

    `names` are shown on hover; `short` beside the points of series with `labels`; `current` (an index)
    is ringed on every series; `band` shades 100–200k; `month` draws Dwarkesh's 100M-token line.
    """
    x = np.asarray(x, float)
    spec = Spec()
    spec.log_x = {1: not x_is_year}
    _band(spec, band, horizontal=True, text="where frontier context stalled (GPT-4 era onward)")
    if month is not None:
        spec.hline(month, color=MONTH_COLOR, dash="dot", width=2)
        spec.label(0.01, float(np.log10(month)), f"{tokens(month)} tokens: 'a month on the job' in context",
                   x_is_data=False, y_is_data=True, xanchor="left", yanchor="bottom",
                   font={"size": FONT_SIZE - 4, "color": MONTH_COLOR})
    unit = "" if x_is_year else " FLOP/B"
    xfmt = "%{x:.1f}" if x_is_year else "%{x:.0f}"
    for s in series:
        if not x_is_year and s.curve_x is not None and s.curve_y is not None:   # curves live in FLOP/B
            spec.scatter(x=s.curve_x, y=s.curve_y, mode="lines", showlegend=False, hoverinfo="skip",
                         line={"color": s.color, "width": 2, "dash": "dot"})
        mask = [bool(s.labels)] * len(x) if isinstance(s.labels, bool) else [bool(v) for v in s.labels]
        text = [t if m else "" for t, m in zip(short, mask)] if any(mask) else None
        spec.scatter(x=x, y=s.y, mode="markers+text" if text else "markers", name=s.name, text=text,
                     textposition=label_positions(x, s.y, mask, log_x=not x_is_year) if text else None,
                     textfont={"size": FONT_SIZE - 4, "color": s.color},
                     marker={"size": 13, "color": s.color, "symbol": s.symbol, "line": {"width": 1, "color": "white"}},
                     customdata=list(names), cliponaxis=False,
                     hovertemplate="%{customdata}<br>" + xfmt + unit + ": T = %{y:,.0f} tokens<extra>" + s.name
                                   + "</extra>")
        if current is not None and 0 <= current < len(x) and np.isfinite(s.y[current]):
            spec.scatter(x=[x[current]], y=[s.y[current]], mode="markers", showlegend=False, hoverinfo="skip",
                         marker={"size": 24, "color": NOW_MARKER["color"], "symbol": "circle-open",
                                 "line": {"width": 3}}, cliponaxis=False)
    if current is not None and 0 <= current < len(x):
        spec.scatter(x=[None], y=[None], mode="markers", name=f"current chip: {short[current]}",
                     marker={"size": 16, "symbol": "circle-open", "color": NOW_MARKER["color"], "line": {"width": 3}})
    ys = _finite_pos(*(s.y for s in series), [band[1]] if band else [], [month] if month else [])
    ylo, yhi = (float(ys.min()), float(ys.max())) if ys.size else (1.0, 1e6)
    xf = x[np.isfinite(x)]
    if x_is_year:
        xaxis = axis(x_title, log=False, range=[float(xf.min()) - 0.6, float(xf.max()) + 0.6] if xf.size else None,
                     dtick=1)
    else:
        lo_x, hi_x = (float(xf.min()) / 1.2, float(xf.max()) * 1.2) if xf.size else (100.0, 1000.0)
        ticks = [t for t in RATIO_TICKS if lo_x <= t <= hi_x]
        xaxis = axis(x_title, range=[float(np.log10(lo_x)), float(np.log10(hi_x))], tickvals=ticks,
                     ticktext=[f"{t:g}" for t in ticks])
    spec.layout = titled_layout(title, height=580, hovermode="closest", xaxis=xaxis,
                              yaxis=axis("context where KV read = matmul time [tokens]", tickformat="~s",
                                         range=[float(np.log10(ylo)) - 0.3, float(np.log10(yhi)) + 0.3]))
    return spec.figure()


def crossover_vs_fraction(fraction: np.ndarray, curves: Sequence[Curve], *, f_now: float,
                          now_values: Sequence[float], sqrt_lines: Sequence[tuple[str, float, str]] = (),
                          band: tuple[float, float] | None = None, month: float | None = None,
                          title: str = "Sparse attention: context reachable before KV dominates") -> go.Figure:
    """T_c against the fraction of the context read per step (log–log): one curve per model, the current
    fraction marked on each, the √T rule's crossover as dotted horizontal lines, the 100–200k band and
    Dwarkesh's 100M line."""
    f = np.asarray(fraction, float)
    spec = Spec()
    _band(spec, band, horizontal=True, text="where context stalled")
    if month is not None:
        spec.hline(month, color=MONTH_COLOR, dash="dot", width=2)
        spec.label(0.99, float(np.log10(month)), f"{tokens(month)}: a month on the job", x_is_data=False,
                   y_is_data=True, xanchor="right", yanchor="bottom",
                   font={"size": FONT_SIZE - 4, "color": MONTH_COLOR})
    for c in curves:
        spec.scatter(x=f, y=c.y, mode="lines", name=c.name, line={"color": c.color, "dash": c.dash, "width": c.width},
                     hovertemplate="f = %{x:.3g}: T = %{y:,.0f} tokens<extra>" + c.name + "</extra>")
    for c, v in zip(curves, now_values):
        if v is not None and np.isfinite(v):
            spec.scatter(x=[f_now], y=[v], mode="markers", showlegend=False, cliponaxis=False,
                         marker={**NOW_MARKER, "color": c.color},
                         hovertemplate=f"current f = {f_now:.3g}: T = %{{y:,.0f}} tokens<extra>{c.name}</extra>")
    for name, v, color in sqrt_lines:
        if np.isfinite(v) and v > 0:
            spec.hline(v, color=color, dash="dash", width=2)
            spec.scatter(x=[None], y=[None], mode="lines", name=name, line={"color": color, "dash": "dash",
                                                                              "width": 2})
    spec.vline(f_now, color=NOW_MARKER["color"], dash="dot", width=2)
    ys = _finite_pos(*(c.y for c in curves), [v for _, v, _ in sqrt_lines], [band[1]] if band else [],
                     [month] if month else [])
    ylo, yhi = (float(ys.min()), float(ys.max())) if ys.size else (1.0, 1e6)
    spec.layout = titled_layout(title, height=560, hovermode="closest",
                              xaxis=axis("fraction of the context read per step, f", tickformat="~g",
                                         range=[float(np.log10(f.min())) - 0.05, float(np.log10(f.max())) + 0.05]),
                              yaxis=axis("context where KV read = matmul time [tokens]", tickformat="~s",
                                         range=[float(np.log10(ylo)) - 0.3, float(np.log10(yhi)) + 0.3]))
    return spec.figure()


def ratio_by_chip(year: np.ndarray, ratio: np.ndarray, *, names: Sequence[str], short: Sequence[str],
                  labelled: Sequence[bool], current: int | None, claim: float, claim_text: str, dtype: str,
                  title: str = "FLOP/s ÷ HBM bytes/s, chip by chip") -> go.Figure:
    """Each chip preset's F/bw [FLOP/B] (linear y) against its announcement year: the `labelled` points and
    the lowest and highest carry their short name and value (every point names itself on hover), the current
    chip is ringed, and the lecture's round figure `claim` is a dashed horizontal line named `claim_text` in
    the legend."""
    x, y = np.asarray(year, float), np.asarray(ratio, float)
    spec = Spec()
    spec.log_x = {1: False}
    spec.hline(claim, color=REFERENCE_COLOR, dash="dash", width=3)
    spec.scatter(x=[None], y=[None], mode="lines", name=claim_text,
                 line={"color": REFERENCE_COLOR, "dash": "dash", "width": 3})
    show = [bool(m) for m in labelled]
    fin = np.flatnonzero(np.isfinite(y))
    for i in (fin[np.argmin(y[fin])], fin[np.argmax(y[fin])]) if fin.size else ():
        show[int(i)] = True
    text = [f"{s} {v:.0f}" if m else "" for s, v, m in zip(short, y, show)]
    spec.scatter(x=x, y=y, mode="markers+text", name=f"chip preset: F/bw at {dtype}", text=text,
                 textposition=label_positions(x, y, show, log_x=False),
                 textfont={"size": FONT_SIZE - 4, "color": DENSE_COLOR},
                 marker={"size": 13, "color": DENSE_COLOR, "line": {"width": 1, "color": "white"}},
                 customdata=list(names), cliponaxis=False,
                 hovertemplate="%{customdata}<br>%{x:.1f}: %{y:.0f} FLOP/B<extra></extra>")
    if current is not None and 0 <= current < len(x):
        spec.scatter(x=[x[current]], y=[y[current]], mode="markers", name=f"current chip: {short[current]}",
                     marker={"size": 24, "color": NOW_MARKER["color"], "symbol": "circle-open", "line": {"width": 3}},
                     cliponaxis=False, hoverinfo="skip")
    xf, yf = x[np.isfinite(x)], _finite_pos(y, [claim])
    spec.layout = titled_layout(title, height=480, hovermode="closest",
                              xaxis=axis("chip announced (year)", log=False, dtick=1,
                                         range=[float(xf.min()) - 0.6, float(xf.max()) + 0.8] if xf.size else None),
                              yaxis=axis(f"FLOP/s ÷ HBM bytes/s at {dtype} [FLOP/B]", log=False,
                                         range=[0.0, 1.15 * float(yf.max()) if yf.size else 1.0]))
    return spec.figure()
