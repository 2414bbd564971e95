"""A fast way to assemble Plotly figures: plain dicts, validated once in the tests, not per rerun.

`go.Figure()` plus `add_trace` / `add_vline` / `update_layout` validates every property as it is
set, and the "plotly_white" template is expanded and deep-copied for each figure: about 30 ms for
one of our charts, most of a slider move's server time.  `Spec` collects traces, shapes and
annotations as dicts (nested dicts only — no "magic underscore" keys such as `line_width`) and
builds the figure in one `go.Figure(..., _validate=False)` call (< 1 ms).  `tests/ui/figures/test_plot.py`
re-validates every builder's output with `go.Figure(fig.to_dict())`, so a misspelled key still
fails a test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

FONT_SIZE = 17
# The few parts of "plotly_white" the charts use, as a small dict: go.Figure deep-copies whatever
# template it is given, and the full expanded one costs ~1 ms per figure.
_WHITE = pio.templates["plotly_white"].layout
TEMPLATE = {"layout": {
    "paper_bgcolor": "white", "plot_bgcolor": "white", "font": {"color": "#2a3f5f"},
    "xaxis": {"gridcolor": _WHITE.xaxis.gridcolor, "linecolor": _WHITE.xaxis.linecolor,
              "zerolinecolor": _WHITE.xaxis.zerolinecolor, "ticks": "", "automargin": True},
    "yaxis": {"gridcolor": _WHITE.yaxis.gridcolor, "linecolor": _WHITE.yaxis.linecolor,
              "zerolinecolor": _WHITE.yaxis.zerolinecolor, "ticks": "", "automargin": True},
    "hoverlabel": {"align": "left"}, "colorway": list(_WHITE.colorway),
}}


def _axis_ref(axis: int) -> tuple[str, str]:
    """("x", "y") for subplot 1, ("x2", "y2") for subplot 2 …"""
    s = "" if axis == 1 else str(axis)
    return f"x{s}", f"y{s}"


# `meta` of the traces `Spec.now_point` adds (constant, so they never change between figures): the
# dot's legend entry, paired in order with the shapes named NOW_META (the dots), and the invisible
# room-keeping markers; ui.elements.export.figure_frame reads the dot from its shape and skips the room.
NOW_META = "now"
ROOM_META = "now-room"
# A key of a figure's layout.meta: {"below_px": N, "layout": {...}}, a layout the chart element (ui/live_chart)
# merges over the figure's own while the chart is narrower than N px (a phone), e.g. subplots stacked.
NARROW_META = "roofline_narrow"


class Spec:
    """Traces, shapes, annotations and layout of one figure, as plain dicts."""

    def __init__(self) -> None:
        self.data: list[dict[str, Any]] = []
        self.shapes: list[dict[str, Any]] = []
        self.annotations: list[dict[str, Any]] = []
        self.layout: dict[str, Any] = {}
        self.log_x: dict[int, bool] = {1: True}

    # -- traces
    def trace(self, kind: str, *, axis: int = 1, **props: Any) -> Spec:
        x, y = _axis_ref(axis)
        if axis != 1:
            props.setdefault("xaxis", x)
            props.setdefault("yaxis", y)
        self.data.append({"type": kind, **props})
        return self

    def scatter(self, **props: Any) -> Spec:
        return self.trace("scatter", **props)

    def now_point(self, x: float, y: float, *, name: str, marker: dict[str, Any], room_x: Any = None,
                  room_y: Any = None, axis: int = 1, ranges: tuple[Any, Any] | None = None,
                  log: tuple[bool, bool] = (True, True), y_axis: str | None = None, symbol: str = "circle",
                  showlegend: bool = True) -> Spec:
        """The "current value" dot at data (x, y), drawn as a layout shape, not as a one-point trace.

        Why: a trace whose data changes makes Plotly.react recompute and redraw the whole chart
        (15-30 ms); a moved shape is redrawn alone (a few ms; ui/elements/live_chart/index.js keeps the chart's
        unchanged arrays).  Its legend entry is a legend-only trace (no points, so it never moves), and
        an invisible copy of the extreme points of (room_x, room_y), the curve the dot runs along, makes
        plotly's autorange leave room for a dot of this size anywhere on it — a shape on the axes is
        clipped to the plot area, where a marker trace widens the range itself.  No hover on the dot.

        `ranges`: for a chart whose axes have explicit ranges ((x0, x1), (y0, y1) in axis units: log10
        on a log axis, as plotly's `range`), the dot is anchored at its fraction of each axis domain
        instead (plotly clips no shape placed in domain units, so a dot on the plot's edge stays whole,
        as a marker with cliponaxis=False would) and needs no room markers; `log` says which axes are
        logarithmic, `y_axis` names another y axis of the subplot ("y2", one overlaying it) whose range
        `ranges[1]` is.  A point outside the ranges is pinned to the edge.

        With `ranges = (x_range, None)` only x is anchored in its domain (a set range) and y stays in data
        units (an autoranged axis: room markers keep room along y); plotly clips such a dot on neither
        side edge either.

        `symbol`: "circle", "square" or "diamond", as plotly's markers of that size; `showlegend=False`
        keeps the legend entry out of the legend (the point-less trace stays, so the dot's CSV row keeps
        its name)."""
        xr, yr = _axis_ref(axis)
        yr = y_axis or yr
        xref, yref = xr, yr
        if ranges is not None:
            (x0, x1), y_range = ranges
            x, xref = float(np.clip(((np.log10(x) if log[0] else x) - x0) / (x1 - x0), 0, 1)), f"{xr} domain"
            if y_range is not None:
                y0, y1 = y_range
                y, yref = float(np.clip(((np.log10(y) if log[1] else y) - y0) / (y1 - y0), 0, 1)), f"{yr} domain"
        if yref == yr:            # y on an autoranged axis: leave room for the dot along the curve
            self._room(room_x, room_y, marker, axis)
        return self._dot(x, y, xref, yref, name, marker, axis, symbol, showlegend)

    def _room(self, room_x: Any, room_y: Any, marker: dict[str, Any], axis: int) -> None:
        """Invisible markers of the dot's size at the extreme points of (room_x, room_y)."""
        rx, ry = np.asarray(room_x, float), np.asarray(room_y, float)
        ok = np.isfinite(rx) & np.isfinite(ry) & ((rx > 0) | (not self.log_x.get(axis, True)))
        if ok.any():
            idx = np.flatnonzero(ok)
            ends = sorted({int(idx[np.argmin(rx[ok])]), int(idx[np.argmax(rx[ok])]),
                           int(idx[np.argmin(ry[ok])]), int(idx[np.argmax(ry[ok])])})
            self.trace("scatter", axis=axis, x=rx[ends], y=ry[ends], mode="markers", name="", meta=ROOM_META,
                       marker={"size": marker.get("size", 16), "opacity": 0}, hoverinfo="skip", showlegend=False)

    def _dot(self, x: float, y: float, xref: str, yref: str, name: str, marker: dict[str, Any],
             axis: int, symbol: str = "circle", showlegend: bool = True) -> Spec:
        """now_point's legend-only trace and its dot: a path shape of the marker's size, anchored at (x, y)."""
        self.trace("scatter", axis=axis, x=[None], y=[None], mode="markers", name=name,
                   marker={**marker, "symbol": symbol}, hoverinfo="skip", meta=NOW_META,
                   **({} if showlegend else {"showlegend": False}))
        r = marker.get("size", 16) / 2
        line = marker.get("line", {})
        if symbol == "square":   # plotly's square marker spans 2r × 2r
            path = f"M{-r},{-r} L{r},{-r} L{r},{r} L{-r},{r} Z"
        elif symbol == "diamond":   # and its diamond 2.6r corner to corner
            d = round(1.3 * r, 3)
            path = f"M{d},0 L0,{d} L{-d},0 L0,{-d} Z"
        else:
            # A path, not type="circle": plotly coerces a circle's x0/x1 through a log axis even in pixel
            # mode, clamping -r to 0 (a half-size dot off centre).  Four Bézier quarters (no arcs in paths).
            k = 0.5523 * r
            path = (f"M{r},0 C{r},{k} {k},{r} 0,{r} C{-k},{r} {-r},{k} {-r},0 "
                    f"C{-r},{-k} {-k},{-r} 0,{-r} C{k},{-r} {r},{-k} {r},0 Z")
        self.shapes.append({"type": "path", "xref": xref, "yref": yref, "xsizemode": "pixel", "ysizemode": "pixel",
                            "xanchor": x, "yanchor": y, "path": path, "name": NOW_META,
                            "fillcolor": marker.get("color"), "layer": "above",
                            "line": {"color": line.get("color", "white"), "width": line.get("width", 0)}})
        return self

    # -- lines and labels (log axes: shapes take x, annotations take log10(x))
    def vline(self, x: float, *, color: str = "#333", dash: str = "dash", width: float = 2, axis: int = 1,
              layer: str = "above") -> Spec:
        xr, yr = _axis_ref(axis)
        self.shapes.append({"type": "line", "xref": xr, "yref": f"{yr} domain", "x0": x, "x1": x, "y0": 0, "y1": 1,
                            "line": {"color": color, "dash": dash, "width": width}, "layer": layer})
        return self

    def hline(self, y: float, *, color: str = "#333", dash: str = "dash", width: float = 2, axis: int = 1) -> Spec:
        xr, yr = _axis_ref(axis)
        self.shapes.append({"type": "line", "xref": f"{xr} domain", "yref": yr, "x0": 0, "x1": 1, "y0": y, "y1": y,
                            "line": {"color": color, "dash": dash, "width": width}})
        return self

    def vrect(self, x0: float, x1: float, *, color: str, opacity: float = 0.10, axis: int = 1) -> Spec:
        xr, yr = _axis_ref(axis)
        self.shapes.append({"type": "rect", "xref": xr, "yref": f"{yr} domain", "x0": x0, "x1": x1, "y0": 0, "y1": 1,
                            "fillcolor": color, "opacity": opacity, "line": {"width": 0}, "layer": "below"})
        return self

    def leader(self, x: float, y: float, dx: float, dy: float, *, color: str, width: float = 1.5,
               axis: int = 1) -> Spec:
        """A line from data (x, y) to `dx` px right and `dy` px up of it: an annotation's arrow without the
        annotation's cost.  Plotly measures an arrow's path (`getTotalLength`, a forced style and layout of
        the whole page, ≈2 ms each in this app) on every redraw; a pixel-sized shape anchored at the point
        is only drawn.  Pair it with `label(..., xshift=dx, yshift=dy)` for the text at its far end."""
        xr, yr = _axis_ref(axis)
        # A path, not type="line": plotly coerces a line's x0/x1 through a log axis even in pixel mode,
        # clamping a negative dx to 0 (as for now_point's dot).
        self.shapes.append({"type": "path", "xref": xr, "yref": yr, "xsizemode": "pixel", "ysizemode": "pixel",
                            "xanchor": x, "yanchor": y, "path": f"M0,0 L{dx:g},{dy:g}",
                            "line": {"color": color, "width": width}, "layer": "above"})
        return self

    def label(self, x: float, y: float, text: str, *, axis: int = 1, x_is_data: bool = True,
              y_is_data: bool = False, **props: Any) -> Spec:
        """Text at data x (log10 taken on a log axis) and y in the axis domain (0…1) unless `y_is_data`."""
        xr, yr = _axis_ref(axis)
        ann = {"text": text, "showarrow": False, "font": {"size": FONT_SIZE - 3}}
        if x_is_data:
            ann.update(x=float(np.log10(x)) if self.log_x.get(axis, True) else x, xref=xr)
        else:
            ann.update(x=x, xref=f"{xr} domain")
        ann.update(y=y, yref=yr if y_is_data else f"{yr} domain")
        ann.update(props)
        self.annotations.append(ann)
        return self

    # -- the figure
    def figure(self) -> SpecFigure:
        layout = {"template": TEMPLATE, **self.layout}
        if self.shapes:
            layout["shapes"] = self.shapes
        if self.annotations:
            layout["annotations"] = self.annotations
        return SpecFigure(self.data, layout)


class SpecFigure:
    """A figure as `Spec`'s plain dicts, read as a `go.Figure`: the `go.Figure` is built on first use
    of any figure attribute (`fig.data`, `fig.layout`, `fig.to_dict()` …; built once, then every read
    and write goes to it).

    The chart element sends the dicts themselves (`ui.elements.live_chart.payload`) while nothing has asked for
    the `go.Figure`: building one costs ≈0.6 ms per chart even unvalidated (plotly deep-copies the
    template and makes an object per trace), paid on every rerun for every chart; the CSV export
    builds it only when clicked.  `tests/ui/elements/test_live_chart.py` holds the dicts' JSON to
    plotly's own for every chart of every page."""

    __slots__ = ("_fig", "spec_data", "spec_layout")

    def __init__(self, data: list[dict[str, Any]], layout: dict[str, Any]) -> None:
        object.__setattr__(self, "spec_data", data)
        object.__setattr__(self, "spec_layout", layout)
        object.__setattr__(self, "_fig", None)

    def build(self) -> go.Figure:
        """A new `go.Figure` of these dicts."""
        return go.Figure(data=self.spec_data, layout=self.spec_layout, _validate=False)

    @property
    def plotly(self) -> go.Figure:
        """The `go.Figure`, built once."""
        if self._fig is None:
            object.__setattr__(self, "_fig", self.build())
        return self._fig

    @property
    def built(self) -> bool:
        """Whether the `go.Figure` exists (after which it, not the dicts, is the figure)."""
        return self._fig is not None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.plotly, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.plotly, name, value)

    def __repr__(self) -> str:
        return f"SpecFigure({len(self.spec_data)} traces, built={self.built})"


def as_plotly(fig: Any) -> go.Figure:
    """A `go.Figure` for either kind of figure."""
    return fig.plotly if isinstance(fig, SpecFigure) else fig


def figure_dicts(fig: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(data, layout) as plain dicts, without building a `go.Figure` that does not exist yet: a
    `SpecFigure`'s own dicts, else the `go.Figure`'s (plotly's `_data` / `_layout`)."""
    if isinstance(fig, SpecFigure) and not fig.built:
        return fig.spec_data, fig.spec_layout
    fig = as_plotly(fig)
    return fig._data, fig._layout


def axis(title: str, *, log: bool = True, **props: Any) -> dict[str, Any]:
    """An axis dict with a titled, readable, gridded axis."""
    out = {"title": {"text": title, "font": {"size": FONT_SIZE}}, "type": "log" if log else "linear",
           "showgrid": True, "tickfont": {"size": FONT_SIZE - 3}}
    out.update(props)
    return out


DECADES = {"dtick": 1, "tickformat": ",~g"}
"""Log-axis ticks and grid lines at powers of ten only: for axes known to span several decades (batch
1…65,536, context 1k…10M).  Fewer labels read better on a projector; no minor grid lines, which were
most of a log chart's SVG elements and of its redraw time."""
COUNT_DECADES = {**DECADES, "tickformat": "~s"}
"""DECADES labelled 1, 10, 100, 1k … 10M: for counts (batch, context tokens), whose ",~g" labels turn
into 1e+6 past a million."""


def decades_if_wide(*values: Any, min_decades: float = 2.0) -> dict[str, Any]:
    """DECADES for a log axis whose positive finite values span at least `min_decades` powers of ten,
    else nothing (Plotly's own 1-2-5 labels, which a narrow range needs)."""
    v = np.concatenate([np.ravel(np.asarray(a, float)) for a in values]) if values else np.array([])
    v = v[np.isfinite(v) & (v > 0)]
    if v.size and np.log10(v.max() / v.min()) >= min_decades:
        return dict(DECADES)
    return {}


def base_layout(title: str, *, height: int = 540, legend_below: bool = True, **props: Any) -> dict[str, Any]:
    """Projector styling shared by every chart: large type, legend under the plot, unified hover."""
    out: dict[str, Any] = {
        "title": {"text": title, "x": 0.01, "font": {"size": FONT_SIZE + 4}},
        "height": height, "font": {"size": FONT_SIZE},
        "margin": {"l": 80, "r": 30, "t": 60, "b": 110}, "hovermode": "x unified",
    }
    if legend_below:
        out["legend"] = {"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0.0,
                         "font": {"size": FONT_SIZE - 3}}
    out.update(props)
    return out


# ---------------------------------------------------------------- two figures as one, side by side
# A figure of panels carries their titles in layout.meta[PANELS_META] (in panel order); each title is an
# annotation named PANEL_TITLE.  `panels` splits such a figure back into one figure per panel: what the
# CSV export writes (one "chart" per panel) and what the tests read.
PANELS_META = "roofline_panels"
PANEL_TITLE = "panel title"
PANEL_DOMAINS = ((0.0, 0.455), (0.545, 1.0))        # as make_subplots(cols=2, horizontal_spacing=0.09)
NARROW_BELOW_PX = 640                               # narrower than this (a phone): the panels stack
NARROW_HEIGHT = 1000
NARROW_Y_DOMAINS = ((0.58, 1.0), (0.0, 0.42))       # first above second: a gap for ticks, axis and panel title
NARROW_MARGIN = {"l": 70, "r": 20, "t": 50, "b": 190}
NARROW_GAP_PX = 100                                 # stacked: the first panel's ticks and axis title, a title
TOP_PX = 60                                         # base_layout's top margin: a panel title needs no more


def _ref_to(ref: Any, n: int) -> Any:
    """An axis reference of a one-panel figure on panel n: "x" → "x2", "y domain" → "y2 domain"."""
    if not isinstance(ref, str):
        return ref
    head, _, rest = ref.partition(" ")
    if head not in ("x", "y"):
        raise ValueError(f"a panel's reference {ref!r} is not to its own axes (x, y)")
    return f"{head}{'' if n == 1 else n}" + (f" {rest}" if rest else "")


def panel_of(ref: Any) -> int:
    """The panel of an axis reference: "x2 domain" → 2, "x" or None → 1."""
    head = ref.partition(" ")[0] if isinstance(ref, str) else "x"
    return int(head[1:] or 1) if head[:1] in ("x", "y") else 1


def _legend_key(t: dict[str, Any]) -> Any:
    return t.get("legendgroup") or t.get("name")


TITLE_EM = 1.3        # a panel title's size over the annotations' (FONT_SIZE + 3 on a desktop; see below)


def panel_title_annotation(text: str, n: int, *, yshift: float = 0) -> dict[str, Any]:
    """A panel's title: centred over panel n, just above its plot area (`yshift` px higher).

    Its size is TITLE_EM × the annotation's font, set on an inner span: on a phone ui/elements/style.py draws every
    annotation at 11 px (a desktop's notes run off a 390 px chart), and a title must stay larger than the
    notes and axis titles there (11 × 1.3 ≈ 14 px, as a figure's own title on a phone), while a desktop
    and an exported image get FONT_SIZE + 3."""
    x, y = _axis_ref(n)
    return {"text": f'<span style="font-size:{TITLE_EM}em">{text}</span>', "showarrow": False, "name": PANEL_TITLE,
            "x": 0.5, "xref": f"{x} domain", "y": 1.0, "yref": f"{y} domain", "xanchor": "center",
            "yanchor": "bottom", "yshift": yshift,
            "font": {"size": round((FONT_SIZE + 3) / TITLE_EM, 1), "color": "#222"}}


def side_by_side(left: Any, right: Any, *, height: int = 560) -> SpecFigure:
    """Two one-panel figures (Spec figures on axes x/y) as one figure of two panels, side by side, with
    the narrow layout (NARROW_META) that stacks them, first above second, on a phone.

    Why one figure: the chart element draws one plotly figure per move instead of two (Fast mode:
    bench/profile_move.py, last chart p50 0.88–0.93 of two figures).  The right panel's traces whose
    legend entry (legend group, else name) the left panel already shows keep out of the legend and join
    the left's legend group, so the legend lists each once and a click hides the curve on both panels.
    Each figure's title becomes its panel's title; the layout is the left's
    (hover mode, fonts, legend) with both figures' axes and the larger top margin."""
    (d1, l1), (d2, l2) = figure_dicts(left), figure_dicts(right)
    titles = [((lay.get("title") or {}).get("text") or "") for lay in (l1, l2)]
    data = [dict(t) for t in d1]
    shown = {_legend_key(t): t for t in data if t.get("showlegend", True) is not False and _legend_key(t)}
    for t in d2:
        t = {**t, "xaxis": _ref_to(t.get("xaxis", "x"), 2), "yaxis": _ref_to(t.get("yaxis", "y"), 2)}
        twin = shown.get(_legend_key(t))
        if twin is not None:
            twin.setdefault("legendgroup", f"panel:{twin.get('name')}")
            t.update(showlegend=False, legendgroup=twin["legendgroup"])
        data.append(t)
    shapes = list(l1.get("shapes", ())) + [
        {**s, "xref": _ref_to(s.get("xref", "x"), 2), "yref": _ref_to(s.get("yref", "y"), 2)}
        for s in l2.get("shapes", ())]
    tops = [lay.get("margin", {}).get("t", 60) for lay in (l1, l2)]
    m = {**l1.get("margin", {}), "t": max(tops)}
    notes = list(l1.get("annotations", ())) + [
        {**a, "xref": _ref_to(a.get("xref", "x"), 2), "yref": _ref_to(a.get("yref", "y"), 2)}
        for a in l2.get("annotations", ())]
    # The titles above whatever a figure drew in a top margin larger than base_layout's 60 px (labels of marks
    # above the plot, ui.figures.scale_up.chip_marks), both at one height.
    lift = max(0, max(tops) - TOP_PX)
    notes += [panel_title_annotation(text, n, yshift=lift) for n, text in enumerate(titles, 1) if text]
    layout = {k: v for k, v in l1.items() if k not in ("title", "shapes", "annotations", "meta")}
    layout.update(
        height=height, margin=m, shapes=shapes, annotations=notes,
        xaxis={**l1.get("xaxis", {}), "domain": list(PANEL_DOMAINS[0]), "anchor": "y"},
        yaxis={**l1.get("yaxis", {}), "domain": [0.0, 1.0], "anchor": "x"},
        xaxis2={**l2.get("xaxis", {}), "domain": list(PANEL_DOMAINS[1]), "anchor": "y2"},
        yaxis2={**l2.get("yaxis", {}), "domain": [0.0, 1.0], "anchor": "x2"},
        meta={PANELS_META: titles, NARROW_META: narrow_stack(top=m["t"], lift=lift)})
    return SpecFigure(data, layout)


def narrow_stack(legend_y: float = -0.09, top: int = NARROW_MARGIN["t"], lift: float = 0) -> dict[str, Any]:
    """The narrow layout (NARROW_META) of a two-panel figure: the panels one under the other, full width,
    with a top margin of at least `top` px (what the wide figure needs above its first panel) and between
    them room for the first panel's ticks and axis title and the second's title `lift` px above its plot."""
    margin = {**NARROW_MARGIN, "t": max(NARROW_MARGIN["t"], top)}
    plot_px = NARROW_HEIGHT - margin["t"] - margin["b"]
    gap = max(NARROW_Y_DOMAINS[0][0] - NARROW_Y_DOMAINS[1][1], (lift + NARROW_GAP_PX) / plot_px)
    return {"below_px": NARROW_BELOW_PX, "layout": {
        "height": NARROW_HEIGHT, "margin": margin,
        "xaxis": {"domain": [0.0, 1.0]}, "xaxis2": {"domain": [0.0, 1.0]},
        "yaxis": {"domain": [round((1 + gap) / 2, 4), 1.0]}, "yaxis2": {"domain": [0.0, round((1 - gap) / 2, 4)]},
        "legend": {"y": legend_y},
    }}


def panels(data: list[dict[str, Any]], layout: dict[str, Any]) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """A figure of panels (dicts) as one (data, layout) per panel, each on axes x/y with its panel's title;
    a figure without PANELS_META as itself."""
    meta = layout.get("meta")
    if not (isinstance(meta, dict) and PANELS_META in meta):
        return [(data, layout)]

    def home(d: dict[str, Any]) -> dict[str, Any]:
        return {**d, **{k: _ref_to_one(d[k]) for k in ("xref", "yref") if k in d}}

    out = []
    for n, title in enumerate(meta[PANELS_META], 1):
        ts = [{k: v for k, v in t.items() if k not in ("xaxis", "yaxis")} for t in data
              if panel_of(t.get("xaxis", "x")) == n]
        sh = [home(s) for s in layout.get("shapes", ()) if panel_of(s.get("xref", "x")) == n]
        an = [home(a) for a in layout.get("annotations", ())
              if panel_of(a.get("xref", "x")) == n and a.get("name") != PANEL_TITLE]
        s = "" if n == 1 else str(n)
        lay = {k: v for k, v in layout.items() if not k.startswith(("xaxis", "yaxis"))
               and k not in ("shapes", "annotations", "meta")}
        lay.update(title={"text": title}, xaxis=layout.get(f"xaxis{s}", {}), yaxis=layout.get(f"yaxis{s}", {}),
                   shapes=sh, annotations=an)
        out.append((ts, lay))
    return out


def _ref_to_one(ref: Any) -> Any:
    """An axis reference moved back to panel 1's names: "x2 domain" → "x domain"."""
    if not isinstance(ref, str):
        return ref
    head, _, rest = ref.partition(" ")
    if head[:1] not in ("x", "y"):
        return ref
    return head[0] + (f" {rest}" if rest else "")
