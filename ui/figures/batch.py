"""Pure Plotly figure builders shared by the pages: arrays in, `go.Figure` out (no Streamlit, no physics).

Styled for a projector: large type, units on every axis, hover values with units.  Figures are
assembled from dicts with `ui.figures.plot.Spec` (fast; validated in the tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.plot import COUNT_DECADES, DECADES, FONT_SIZE, Spec, axis, base_layout, decades_if_wide

BOUND_COLORS = {"compute": "#4C78A8", "weights": "#F58518", "kv": "#54A24B", "comm": "#B279A2",
                "attention": "#E45756"}
BOUND_LABELS = {"compute": "compute-bound", "weights": "weight-fetch-bound", "kv": "KV-fetch-bound",
                "comm": "communication-bound", "attention": "attention-bound"}
TERM_COLORS = {"matmul": "#4C78A8", "attention": "#E45756", "weights": "#F58518", "kv": "#54A24B",
               "comm": "#B279A2", "hops": "#9D755D"}
GREY = "#B0B0B0"
# The predicted curve and its held-out error band (ui/estimate.py), beside the ideal roofline.
IDEAL_NAME = "ideal roofline"
PREDICTED_NAME = "predicted (fitted efficiencies)"
BAND_NAME = "held-out error band (10th–90th pct, k5)"
PREDICTED_COLOR = "#7B3FA0"     # purple: apart from the bound shading's blue, orange, green and red
BAND_FILL = "rgba(123, 63, 160, 0.16)"
NOW_MARKER = {"size": 16, "color": "#D62728", "line": {"width": 2, "color": "white"}}

PLOTLY_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2, "width": 1600, "height": 900},
    "modeBarButtonsToRemove": ["lasso2d", "select2d"],
}


def _segments(x: np.ndarray, labels: np.ndarray) -> list[tuple[float, float, str]]:
    """Contiguous runs of one label along x, as (x_start, x_end, label); edges at geometric midpoints."""
    x = np.asarray(x, float)
    labels = np.asarray(labels)
    if x.size == 0:
        return []
    change = np.flatnonzero(labels[1:] != labels[:-1]) + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [x.size]])
    out = []
    for s, e in zip(starts, ends):
        x0 = x[0] if s == 0 else np.sqrt(x[s - 1] * x[s])
        x1 = x[-1] if e == x.size else np.sqrt(x[e - 1] * x[e])
        out.append((float(x0), float(x1), str(labels[s])))
    return out


class TopRows:
    """Rows of labels along the top of a plot with a log x axis from 10**lo to 10**hi: each label goes in the
    first row where it clears every label already placed there (row 0 at the top, each further row ROW_PX
    lower: pixels, so that rows keep apart on a short chart too).  A label's width is estimated from its
    characters (CHAR_SPAN of the axis each): the widths are known only in the browser, so the estimate is a
    phone's, where a label takes the largest share of the plot."""

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = float(lo), float(hi)
        self.rows: list[list[tuple[float, float]]] = []

    @classmethod
    def over(cls, x: np.ndarray) -> TopRows:
        """Rows over the positive values of x (log10 of its ends)."""
        xs = np.asarray(x, float)
        xs = xs[np.isfinite(xs) & (xs > 0)]
        if not xs.size or xs.max() <= xs.min():
            return cls(0.0, 1.0)
        return cls(float(np.log10(xs.min())), float(np.log10(xs.max())))

    def width(self, text: str) -> float:
        """A label's estimated width in log10 units of the axis."""
        return len(text) * CHAR_SPAN * max(self.hi - self.lo, 1e-9)

    def place(self, x0: float, x1: float) -> int:
        """The first row where the span [x0, x1] (log10 units) overlaps no label placed there; taken."""
        for row, spans in enumerate(self.rows):
            if all(x1 <= a or x0 >= b for a, b in spans):
                spans.append((x0, x1))
                return row
        self.rows.append([(x0, x1)])
        return len(self.rows) - 1

    def centred(self, centre: float, text: str) -> tuple[float, str, int]:
        """A label centred at log10 x `centre`, moved inside the axis when it would run past an end:
        (its log10 x, its xanchor, its row)."""
        w = self.width(text)
        # Anchored a hair inside an end: plotly hides an annotation whose anchor falls outside the axis range,
        # and its own log10 of the end can differ from numpy's in the last digit.
        inset = EDGE_INSET * (self.hi - self.lo)
        x, anchor, x0 = centre, "center", centre - w / 2
        if centre + w / 2 > self.hi:
            x, anchor, x0 = self.hi - inset, "right", self.hi - w
        elif centre - w / 2 < self.lo:
            x, anchor, x0 = self.lo + inset, "left", self.lo
        return x, anchor, self.place(x0, x0 + w)

    @staticmethod
    def shift(row: int) -> int:
        """The top of row `row`: px below the top of the plot."""
        return -ROW_PX * row


CHAR_SPAN = 0.02   # a label character's width as a share of the axis: 11 px type on a phone's ~300 px plot
ROW_PX = 22        # one row of labels: a line of 14 px type and its padding
EDGE_INSET = 1e-6  # a share of the axis: how far inside an end a label anchored there sits


def shade_bounds(spec: Spec, x: np.ndarray, bound: np.ndarray, *, axis: int = 1, labelled: bool = True,
                 rows: TopRows | None = None) -> TopRows:
    """Shade the x-ranges by which term bounds the step (one rectangle per run, labelled once at the top; not at
    all with `labelled=False`, e.g. the second of two panels shaded alike).

    Labels of narrow neighbouring regions would print over each other: each label goes in the first row of
    `rows` (new rows over x if None) where it clears those already placed.  Returns the rows, for the labels
    that join them (`vline(..., rows=...)`)."""
    seen = set()
    rows = rows if rows is not None else TopRows.over(x)
    for x0, x1, b in _segments(x, bound):
        color = BOUND_COLORS.get(b, GREY)
        spec.vrect(x0, x1, color=color, axis=axis)
        if labelled and b not in seen:
            seen.add(b)
            text = BOUND_LABELS.get(b, b)
            at, anchor, row = rows.centred(float(np.log10(np.sqrt(x0 * x1))), text)
            spec.label(10 ** at, 1.0, text, axis=axis, xanchor=anchor, yanchor="top", yshift=TopRows.shift(row),
                       font={"size": FONT_SIZE - 3, "color": color})
    return rows


def split_fit(y: np.ndarray, fits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """y where it fits in HBM, and y where it does not (sharing the boundary point for continuity)."""
    y = np.asarray(y, float)
    fits = np.broadcast_to(np.asarray(fits, bool), y.shape)
    nofit = ~fits
    grow = nofit.copy()
    grow[:-1] |= nofit[1:]
    grow[1:] |= nofit[:-1]
    return np.where(fits, y, np.nan), np.where(grow, y, np.nan)


def fit_curve(spec: Spec, x: np.ndarray, y: np.ndarray, fits: np.ndarray, *, name: str, hover: str,
              nofit_name: str = "does not fit in HBM", **props) -> None:
    """The main curve (black, thick) where weights + KV fit in HBM, grey dashed where they do not.

    `hover` is the trace's hovertemplate with no <extra> (" (does not fit)" is added on the grey part);
    `props` go to both traces (axis, legendgroup, showlegend, …)."""
    y_fit, y_no = split_fit(y, fits)
    spec.scatter(x=x, y=y_fit, name=name, mode="lines", line={"width": 4, "color": "#222"},
                 hovertemplate=hover + f"<extra>{name}</extra>", **props)
    if np.any(~np.asarray(fits, bool)):
        spec.scatter(x=x, y=y_no, name=nofit_name, mode="lines", line={"width": 4, "color": GREY, "dash": "dash"},
                     hovertemplate=hover + " (does not fit)<extra></extra>", **props)


@dataclass(frozen=True)
class Prediction:
    """A predicted curve and its error band over a chart's x (NaN: no point there, e.g. does not fit in HBM).
    `lo` and `hi` are the band's lower and upper edges in the chart's units (ui/estimate.py says which way a
    ratio predicted ÷ measured turns into them)."""

    y: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    name: str = PREDICTED_NAME
    band_name: str = BAND_NAME


def prediction_traces(spec: Spec, x: np.ndarray, p: Prediction, *, unit: str, band: bool = True,
                      color: str = PREDICTED_COLOR, fill: str = BAND_FILL, width: float = 3, band_group: str = "band",
                      **props) -> None:
    """The band (its lower edge, then the upper edge filled down to it) and the predicted curve, dashed.
    Legend order: after the ideal curve (legendrank 1), the prediction (2), the band (3); the band's two edges
    share `band_group`, so a click on its legend entry hides both.  `props` go to every trace (axis,
    showlegend, legendgroup of the curve …)."""
    x = np.asarray(x, float)
    if band:
        edge = {k: v for k, v in props.items() if k != "legendgroup"}
        spec.scatter(x=x, y=np.asarray(p.lo, float), mode="lines", line={"width": 0, "color": color},
                     name=f"{p.band_name} (lower edge)", showlegend=False, hoverinfo="skip", legendgroup=band_group,
                     **{k: v for k, v in edge.items() if k != "showlegend"})
        spec.scatter(x=x, y=np.asarray(p.hi, float), mode="lines", line={"width": 0, "color": color}, fill="tonexty",
                     fillcolor=fill, name=p.band_name, legendgroup=band_group, legendrank=3,
                     customdata=np.asarray(p.lo, float),
                     hovertemplate=f"%{{customdata:.3g}}–%{{y:.3g}} {unit}<extra>8 in 10 measured</extra>", **edge)
    spec.scatter(x=x, y=np.asarray(p.y, float), mode="lines", name=p.name, legendrank=2,
                 line={"width": width, "color": color, "dash": "dash"},
                 hovertemplate=f"%{{y:.4g}} {unit}<extra>predicted</extra>", **props)


RANGE_HAIR = 1e-9      # log10 units: how far past the grid's ends the batch axis runs


def batch_range(batch: np.ndarray) -> list[float]:
    """A log batch axis's range over the grid: its ends in log10, a hair wider, so that a point at an end is
    inside the range however plotly rounds its log10.  Autoranged, plotly pads the axis for markers and widens
    it for a label near an end (a decade past a grid ending at 65,536)."""
    return [float(np.log10(np.min(batch))) - RANGE_HAIR, float(np.log10(np.max(batch))) + RANGE_HAIR]
CURVE_MARGIN_B = 190   # px under a batch chart: tick labels, the axis title and up to three legend rows
B_STAR_NO_KV_COLOR = "#7a4b00"   # the lecture's B* (weights vs matmuls only): dark amber, dotted


def vline(spec: Spec, x: float | None, text: str | None, color: str = "#333", *, dash: str = "dash", axis: int = 1,
          position: str = "top", side: str = "right", rows: TopRows | None = None) -> None:
    """A vertical line at x with its label near the top (or bottom) of the plot, on the line's `side` (no label
    if `text` is None); nothing if x is not finite.  Plotly widens an autoranged axis to fit a data-anchored label, so a
    line near the axis end should carry its label on its left (see `label_side`).  `rows`: the top labels already
    placed (`shade_bounds`' region names): a label at the top goes in the first row where it clears them."""
    if x is None or not np.isfinite(x) or x <= 0:
        return
    spec.vline(x, color=color, dash=dash, axis=axis)
    if text is None:
        return
    at = {"y": 0.97 if position == "top" else 0.06}
    if position == "top" and rows is not None:
        lx, w = float(np.log10(x)), rows.width(text)
        row = rows.place(lx, lx + w) if side == "right" else rows.place(lx - w, lx)
        at = {"y": 1.0, "yanchor": "top", "yshift": TopRows.shift(row)}
    spec.label(x, at.pop("y"), text, axis=axis, xanchor="left" if side == "right" else "right",
               xshift=4 if side == "right" else -4, font={"size": FONT_SIZE - 3, "color": color},
               bgcolor="rgba(255,255,255,0.7)", **at)


def label_side(x: float, x_min: float, x_max: float) -> str:
    """Which side of a vertical line at x (on a log axis x_min…x_max) its label goes: the left in the
    last 40 % of the axis, so the label stays inside the data's range."""
    if not (x > 0 and x_min > 0 and x_max > x_min):
        return "right"
    return "left" if np.log(x / x_min) / np.log(x_max / x_min) > 0.6 else "right"


def curve_vs_batch(batch: np.ndarray, y: np.ndarray, fits: np.ndarray, bound: np.ndarray, *, name: str,
                   unit: str, title: str, y_title: str, b_star: float | None, b_now: float, y_now: float,
                   extra: Sequence[tuple[str, np.ndarray, str]] = (),
                   b_star_no_kv: float | None = None, predicted: Prediction | None = None,
                   dot_on_predicted: bool = False) -> go.Figure:
    """A quantity against batch (log–log), shaded by bound, greyed where weights + KV do not fit,
    with B* and the current batch marked.  `extra` = (name, y, colour) dotted component lines.
    `b_star_no_kv`: the lecture's B* with KV ignored, marked too (at the bottom) when given and not
    equal to `b_star` (then `b_star` is labelled B*(T), the balance batch with the KV of context T).
    `predicted`: a predicted curve with its error band, drawn beside the main curve; `dot_on_predicted`: the
    current batch's dot (at `y_now`) sits on it."""
    spec = Spec()
    rows = shade_bounds(spec, batch, bound)
    for nm, yy, color in extra:
        spec.scatter(x=batch, y=yy, name=nm, mode="lines", line={"dash": "dot", "width": 2, "color": color},
                     hovertemplate=f"%{{y:.4g}} {unit}<extra>{nm}</extra>")
    if predicted is not None:
        prediction_traces(spec, batch, predicted, unit=unit)
    fit_curve(spec, batch, y, fits, name=name, hover=f"B = %{{x:.4g}}: %{{y:.4g}} {unit}", legendrank=1)
    on = predicted.y if predicted is not None and dot_on_predicted else y
    # The batch axis spans the grid (batch_range), not a region's name near an end.  The dot is anchored in the
    # x domain, so it stays whole at either end.
    lo, hi = float(np.min(batch)), float(np.max(batch))
    x_range = batch_range(batch)
    spec.now_point(b_now, y_now, name=f"B = {b_now:g}", marker=NOW_MARKER, room_x=batch, room_y=on,
                   ranges=(x_range, None))
    both = (b_star_no_kv is not None and np.isfinite(b_star_no_kv)
            and not (b_star is not None and np.isclose(b_star, b_star_no_kv)))
    if b_star is not None and np.isfinite(b_star):
        vline(spec, b_star, f"B*(T) = {b_star:,.0f}" if both else f"B* = {b_star:,.0f}",
              side=label_side(b_star, lo, hi), rows=rows)
    if both:
        vline(spec, b_star_no_kv, f"B* = {b_star_no_kv:,.0f} (KV ignored)", color=B_STAR_NO_KV_COLOR,
              dash="dot", position="bottom", side=label_side(b_star_no_kv, lo, hi))
    bands = () if predicted is None else (predicted.y, predicted.lo, predicted.hi)
    y_ticks = decades_if_wide(y, y_now, *(yy for _, yy, _ in extra), *bands)
    # The legend hangs from the figure's bottom edge (as in step_breakdown): on a phone the batch labels
    # turn upright and push the axis title down onto a legend placed at a fraction of the plot height.
    legend = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "xanchor": "left", "x": 0.0,
              "font": {"size": FONT_SIZE - 3}}
    spec.layout = base_layout(title, xaxis=axis("batch B (sequences per step)", range=x_range, **COUNT_DECADES),
                              yaxis=axis(y_title, **y_ticks), legend=legend,
                              margin={"l": 80, "r": 30, "t": 60, "b": CURVE_MARGIN_B})
    return spec.figure()


BREAKDOWN_HEIGHT = 380     # px: three bars of ~60 px between the title and the bottom margin
BREAKDOWN_MARGIN_B = 150   # px: tick labels + axis title (≈ 60 px) + two legend rows (≈ 2 × 28 px) + slack


def step_breakdown(terms: dict[str, float], mode: str, title: str = "Where the step time goes") -> go.Figure:
    """Stacked horizontal bars of the step's terms [ms]: the compute side against the memory side."""
    parts = {"compute side": ["matmul"], "memory side": ["weights", "kv"], "communication": ["comm", "hops"]}
    if mode == "per-phase":
        parts = {"matmul phase": ["matmul", "weights"], "attention phase": ["attention", "kv"],
                 "communication": ["comm", "hops"]}
    rows = list(parts)
    spec = Spec()
    for term in ("matmul", "attention", "weights", "kv", "comm", "hops"):
        xs = [terms.get(term, 0.0) * 1e3 if term in parts[r] else 0.0 for r in rows]
        if not any(xs):
            continue
        spec.trace("bar", y=rows, x=xs, name=term, orientation="h", marker={"color": TERM_COLORS[term]},
                   hovertemplate=f"{term}: %{{x:.4g}} ms<extra></extra>")
    # The legend hangs from the figure's bottom edge (container coordinates), not at a fraction of
    # this short plot's height (y = -0.2 of ~170 px landed on the x-axis title); the bottom margin
    # holds the tick labels, the axis title and up to two legend rows (a phone's width).
    legend = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "xanchor": "left",
              "x": 0.0, "font": {"size": FONT_SIZE - 3}}
    spec.layout = base_layout(title, height=BREAKDOWN_HEIGHT, barmode="stack", hovermode="closest", legend=legend,
                              margin={"l": 80, "r": 30, "t": 60, "b": BREAKDOWN_MARGIN_B},
                              xaxis=axis("time per step [ms]", log=False),
                              yaxis={"type": "category", "autorange": "reversed", "tickfont": {"size": FONT_SIZE - 3}})
    return spec.figure()


def pareto(tps_user: np.ndarray, tps_chip: np.ndarray, batch: np.ndarray, fits: np.ndarray,
           now: tuple[float, float, float], title: str = "Throughput per chip vs speed per user") -> go.Figure:
    """The serving frontier: each batch is one point (tokens/s per user, tokens/s per chip) on the line;
    the powers of two (the sidebar's batches) carry a marker coloured by log₂ B.  Markers only there:
    plotly styles every marker one by one, ≈10 ms per redraw for a hundred of them."""
    spec = Spec()
    f = np.asarray(fits, bool)
    batch = np.asarray(batch, float)
    spec.scatter(x=tps_user[f], y=tps_chip[f], mode="lines", name="fits in HBM",
                 line={"color": "#222", "width": 3}, customdata=batch[f],
                 hovertemplate="B = %{customdata:.4g}<br>%{x:.4g} tok/s/user<br>%{y:.4g} tok/s/chip<extra></extra>")
    p2 = f & np.isclose(np.log2(batch), np.round(np.log2(batch)), rtol=0, atol=1e-9)
    if np.any(p2):
        spec.scatter(x=tps_user[p2], y=tps_chip[p2], mode="markers", name="B = 2ⁿ (colour: log₂ B)",
                     marker={"size": 7, "color": np.log2(batch[p2]), "colorscale": "Viridis"},
                     customdata=batch[p2], showlegend=False,
                     hovertemplate="B = %{customdata:.4g}<br>%{x:.4g} tok/s/user<br>%{y:.4g} tok/s/chip<extra></extra>")
    if np.any(~f):
        spec.scatter(x=tps_user[~f], y=tps_chip[~f], mode="markers", name="does not fit",
                     marker={"size": 6, "color": GREY}, customdata=batch[~f],
                     hovertemplate="B = %{customdata:.4g} (does not fit)<br>%{x:.4g} tok/s/user<br>"
                                   "%{y:.4g} tok/s/chip<extra></extra>")
    # The current batch as a shape (a Batch move then redraws the dot, not the frontier), with room for
    # it at every point of the frontier, fitting or not.
    spec.now_point(now[0], now[1], name=f"B = {now[2]:g}", marker=NOW_MARKER, room_x=tps_user, room_y=tps_chip)
    spec.layout = base_layout(title, hovermode="closest", xaxis=axis("tokens/s per user (speed)", **DECADES),
                              yaxis=axis("tokens/s per chip (throughput)", **DECADES))
    return spec.figure()
