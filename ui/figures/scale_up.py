"""Figure builders for the Scale-up domain page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_scale_up.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import GREY, NOW_MARKER, TERM_COLORS, TopRows, split_fit
from ui.figures.plot import FONT_SIZE, Spec, axis, base_layout

FLOOR_COLOR = TERM_COLORS["weights"]
STEP_COLOR = "#222222"
FILL_COLOR = "#4C78A8"
MARK_COLOR = "#555555"
DOMAIN_COLOR = "#7F3C8D"
HLINE_COLOR = "#D62728"
# The side-by-side: today, more pipeline stages, a bigger scale-up domain.
COMPARE_COLORS = ("#9E9E9E", TERM_COLORS["hops"], "#4C78A8")
CHIP_TICKS = (1, 2, 4, 8, 16, 32, 72, 144, 288, 576, 1152, 2304, 4608, 9216)
MARK_ROW_PX = 20                  # vertical step between the rows of chip-mark labels above the plot
X_PAD = 0.02                      # log10 units of room right of the largest C on the axis


@dataclass(frozen=True)
class Line:
    """One curve against C.  Where `fits` is False it is drawn grey and dashed (weights + KV exceed HBM)."""

    name: str
    y: np.ndarray
    color: str
    fits: np.ndarray | None = None
    dash: str = "solid"
    width: float = 4.0
    batch: np.ndarray | None = None   # shown in the hover (the batch each point is at)


@dataclass(frozen=True)
class Panel:
    """One small bar chart of the side-by-side: a quantity for each option, with its unit."""

    title: str
    unit: str
    values: Sequence[float]
    texts: Sequence[str]


def _log_range(values: Sequence[np.ndarray], pad: float = 0.12) -> list[float] | None:
    """[log10 lo, log10 hi] around every finite positive value (None when there is none)."""
    vals = np.concatenate([np.ravel(np.asarray(v, float)) for v in values]) if values else np.array([])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if not vals.size:
        return None
    lo, hi = float(np.log10(vals.min())), float(np.log10(vals.max()))
    if hi - lo < 0.3:                 # a flat line: give it half a decade of room, centred
        mid = 0.5 * (lo + hi)
        lo, hi = mid - 0.25, mid + 0.25
    return [lo - pad, hi + pad]


def log_ticks(lo: float, hi: float) -> list[float]:
    """Tick values between lo and hi on a log axis: finer within a decade, 1-2-5 within a few, decades beyond."""
    decades = np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
    span = np.log10(hi / lo)
    mult = [1.0, 1.5, 2.0, 3.0, 5.0, 7.0] if span <= 1.0 else [1.0, 2.0, 5.0] if span <= 2.5 else [1.0]
    cand = (10.0 ** decades[:, None] * np.array(mult)[None, :]).ravel()
    return [float(f"{t:.3g}") for t in cand if lo <= t <= hi]


def chip_marks(spec: Spec, marks: Sequence[tuple[float, str]], x_max: float, labelled: bool = True) -> int:
    """Dotted vertical lines at the generations' scale-up sizes, labelled above the plot, each label in the
    lowest row where it clears those already placed (widths estimated for a phone's chart, where they take the
    largest share of the axis: ui.figures.batch.TopRows); a label that would run past an end of the axis hangs
    to the inner side of its line.  Returns the number of label rows used (the caller makes room for them in the
    top margin).  `labelled=False`: the lines alone (a panel beside one that labels them)."""
    shown = sorted((float(x), t) for x, t in marks if 1 <= x <= x_max)
    rows = TopRows(0.0, float(np.log10(x_max)) + X_PAD)
    for x, text in shown:
        color = DOMAIN_COLOR if "this chip" in text else MARK_COLOR
        spec.vline(x, color=color, dash="dot", width=2)
        if not labelled:
            continue
        lx, w = float(np.log10(x)), rows.width(text)
        anchor, x0 = "center", lx - w / 2
        if lx + w / 2 > rows.hi:
            anchor, x0 = "right", lx - w
        elif lx - w / 2 < rows.lo:
            anchor, x0 = "left", lx
        row = rows.place(x0, x0 + w)
        spec.label(x, 1.0, text, xanchor=anchor, yanchor="bottom", yshift=4 + MARK_ROW_PX * row,
                   font={"size": FONT_SIZE - 4, "color": color})
    return len(rows.rows)


def sweep_vs_chips(chips: np.ndarray, lines: Sequence[Line], *, title: str, y_title: str, unit: str,
                   now: tuple[float, float, str] | None, marks: Sequence[tuple[float, str]] = (),
                   hline: tuple[float, str] | None = None, y_format: str = ".4g",
                   y_ticks: Sequence[tuple[float, str]] | None = None, labelled: bool = True) -> go.Figure:
    """Quantities against the scale-up size C (log–log), grey and dashed where weights + KV do not fit,
    the generations' domain sizes marked (`labelled=False`: their lines only), the current C as a red point,
    an optional horizontal line."""
    x = np.asarray(chips, float)
    spec = Spec()
    ys: list[np.ndarray] = []
    nofit_named = False
    for ln in lines:
        y = np.asarray(ln.y, float)
        ys.append(y)
        extra = "" if ln.batch is None else "<br>B = %{customdata:,.0f}"
        cd = {} if ln.batch is None else {"customdata": np.asarray(ln.batch, float)}
        hover = f"C = %{{x:,.0f}}: %{{y:{y_format}}} {unit}{extra}<extra>{ln.name}</extra>"
        if ln.fits is None:
            spec.scatter(x=x, y=y, name=ln.name, mode="lines", line={"color": ln.color, "dash": ln.dash,
                                                                     "width": ln.width}, hovertemplate=hover, **cd)
            continue
        y_fit, y_no = split_fit(y, ln.fits)
        spec.scatter(x=x, y=y_fit, name=ln.name, mode="lines", legendgroup=ln.name,
                     line={"color": ln.color, "dash": ln.dash, "width": ln.width}, hovertemplate=hover, **cd)
        if np.any(np.isfinite(y_no)):
            spec.scatter(x=x, y=y_no, name="does not fit in HBM", mode="lines", showlegend=not nofit_named,
                         legendgroup="nofit", line={"color": GREY, "dash": "dash", "width": ln.width},
                         hovertemplate=f"C = %{{x:,.0f}}: %{{y:{y_format}}} {unit} (does not fit){extra}"
                                       "<extra></extra>", **cd)
            nofit_named = True
    if hline is not None and np.isfinite(hline[0]) and hline[0] > 0:
        spec.hline(float(hline[0]), color=HLINE_COLOR, dash="dash", width=3)
        spec.label(0.01, float(np.log10(hline[0])), hline[1], x_is_data=False, y_is_data=True, xanchor="left",
                   yanchor="bottom", font={"size": FONT_SIZE - 3, "color": HLINE_COLOR},
                   bgcolor="rgba(255,255,255,0.7)")
        ys.append(np.array([hline[0]]))
    if now is not None and np.isfinite(now[1]) and now[1] > 0:
        spec.scatter(x=[now[0]], y=[now[1]], mode="markers", name=now[2], marker=NOW_MARKER, cliponaxis=False,
                     hovertemplate=f"current C = %{{x:,.0f}}: %{{y:{y_format}}} {unit}<extra></extra>")
        ys.append(np.array([now[1]]))
    x_max = float(x.max())
    rows = chip_marks(spec, marks, x_max, labelled)
    ticks = [t for t in CHIP_TICKS if t <= x_max]
    y_ax = axis(y_title)
    rng = _log_range(ys)
    if rng is not None:
        y_ax["range"] = rng
        inside = ([(v, t) for v, t in y_ticks if rng[0] <= np.log10(v) <= rng[1]] if y_ticks is not None
                  else [(v, f"{v:g}") for v in log_ticks(10.0 ** rng[0], 10.0 ** rng[1])])
        y_ax.update(tickvals=[v for v, _ in inside], ticktext=[t for _, t in inside])
    spec.layout = base_layout(title, hovermode="closest", margin={"l": 80, "r": 30, "t": 70 + MARK_ROW_PX * rows,
                                                                  "b": 110},
                              xaxis=axis("scale-up size C [chips working on one step]", tickvals=ticks,
                                         ticktext=[f"{t:g}" for t in ticks],
                                         range=[0.0, float(np.log10(x_max)) + X_PAD]),
                              yaxis=y_ax)
    # the title at the very top, the chip-mark labels between it and the plot
    spec.layout["title"].update(yref="container", y=1.0, yanchor="top", pad={"t": 14})
    return spec.figure()


def compare_bars(options: Sequence[str], panels: Sequence[Panel], *, title: str,
                 colors: Sequence[str] = COMPARE_COLORS, cols: int = 2) -> go.Figure:
    """Small bar charts side by side, one per quantity, each with the same options on a category axis
    and its own y axis (with its unit).  Values are labelled on the bars."""
    n = len(panels)
    rows = int(np.ceil(n / cols))
    gap_x, gap_y = 0.12, 0.22
    w = (1.0 - gap_x * (cols - 1)) / cols
    h = (1.0 - gap_y * (rows - 1)) / rows
    spec = Spec()
    layout_axes: dict[str, dict] = {}
    for i, p in enumerate(panels):
        a = i + 1
        r, c = divmod(i, cols)
        x0 = c * (w + gap_x)
        y1 = 1.0 - r * (h + gap_y)
        spec.log_x[a] = False
        vals = [float(v) for v in p.values]
        spec.trace("bar", axis=a, x=list(options), y=vals, text=list(p.texts), textposition="outside",
                   cliponaxis=False, marker={"color": list(colors[:len(options)])}, showlegend=False,
                   textfont={"size": FONT_SIZE - 3},
                   hovertemplate=f"%{{x}}: %{{y:.4g}} {p.unit}<extra>{p.title}</extra>")
        sfx = "" if a == 1 else str(a)
        finite = [v for v in vals if np.isfinite(v)]
        top = max(finite) if finite else 1.0
        layout_axes[f"xaxis{sfx}"] = {"type": "category", "domain": [x0, x0 + w], "anchor": f"y{sfx}",
                                      "tickfont": {"size": FONT_SIZE - 4}}
        layout_axes[f"yaxis{sfx}"] = {"domain": [y1 - h, y1], "anchor": f"x{sfx}", "type": "linear",
                                      "range": [0.0, 1.3 * top if top > 0 else 1.0], "showgrid": True,
                                      "rangemode": "tozero", "tickfont": {"size": FONT_SIZE - 4},
                                      "title": {"text": f"[{p.unit}]", "font": {"size": FONT_SIZE - 3}}}
        spec.label(0.5, 1.0, f"<b>{p.title}</b>", axis=a, x_is_data=False, yanchor="bottom", yshift=6,
                   font={"size": FONT_SIZE - 2})
    spec.layout = base_layout(title, height=300 * rows + 140, legend_below=False, hovermode="closest",
                              margin={"l": 80, "r": 30, "t": 100, "b": 40}, showlegend=False, **layout_axes)
    return spec.figure()
