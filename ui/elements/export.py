"""Export: every chart with its image download (Plotly's toolbar: PNG at 3× or SVG) and its data as CSV.

`chart(fig, key=…)` replaces `st.plotly_chart`: it draws the figure with the toolbar's camera set to
the sidebar's image format (dial `img`, presentation size 1600 × 900), and under it a "CSV" button
whose file — one row per plotted point: trace, x, y (and z for maps) — is built only when clicked.

The chart is the in-place element of `ui/elements/live_chart.py` (its DOM node survives reruns; a dial move
is a `Plotly.react`, not a remount); `st.plotly_chart` is the fallback when that element cannot load
or `ROOFLINE_CHART=plotly` is set.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from ui.elements import live_chart
from ui.figures.batch import PLOTLY_CONFIG
from ui.figures.plot import NOW_META, PANELS_META, ROOM_META, as_plotly, panel_of

if TYPE_CHECKING:        # pandas is imported when a CSV is built (a click), not with the page: ≈0.5 s of a first run
    import pandas as pd

IMAGE_FORMATS = ("png", "svg")
SIZE = {"width": 1600, "height": 900}
CSV_SUFFIX = "__chart_csv"      # the key of a chart's CSV button: the chart's key + this


def image_config(fmt: str, filename: str) -> dict[str, Any]:
    """Plotly config whose toolbar camera downloads `fmt` at presentation resolution."""
    opts = {"format": fmt if fmt in IMAGE_FORMATS else "png", "filename": filename, **SIZE}
    if opts["format"] == "png":
        opts["scale"] = 3                      # 4800 × 2700 px: sharp on a projector or a slide
    return {**PLOTLY_CONFIG, "toImageButtonOptions": opts}


def _arr(v: Any) -> np.ndarray | None:
    if v is None:
        return None
    if isinstance(v, dict) and "bdata" in v:      # plotly's base64 typed array
        import base64
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).copy()
    try:
        return np.asarray(v, dtype=object)
    except Exception:
        return None


def _title(fig: go.Figure) -> str:
    t = fig.layout.title.text if fig.layout.title is not None else None
    return re.sub(r"<[^>]+>", "", t or "")


def dot_value(layout: Any, ref: str, anchor: float) -> float:
    """A now_point dot's data coordinate from its shape's ref and anchor, with `layout` the figure's
    layout (a plotly Layout or its dict): the anchor itself, or, for a dot anchored at a fraction of an
    axis domain ("x domain"), that fraction of the axis's explicit range (log10 units on a log axis), to
    12 significant digits (the round trip through log10 leaves ~1e-15 of noise)."""
    if not ref.endswith(" domain"):
        return anchor
    name = ref.split()[0]
    ax = layout[name[0] + "axis" + name[1:]]
    r0, r1 = ax["range"]
    v = r0 + anchor * (r1 - r0)
    return float(f"{10.0 ** v if ax['type'] == 'log' else v:.12g}")


def panel_titles(fig: go.Figure) -> list[str]:
    """The titles of a figure's panels (ui.figures.plot.side_by_side), else [its title]."""
    meta = fig.layout.meta
    if isinstance(meta, dict) and PANELS_META in meta:
        return [re.sub(r"<[^>]+>", "", t or "") for t in meta[PANELS_META]]
    return [_title(fig)]


def _chart(titles: list[str], xref: Any) -> str:
    """The title of the panel an x axis reference ("x", "x2 domain" …; None is "x") belongs to."""
    return titles[min(panel_of(xref), len(titles)) - 1]


def figure_frame(fig: go.Figure) -> pd.DataFrame:
    """The plotted points of every trace, long format: chart, trace, x, y (z and the map's row/col for
    heatmaps).  "chart" is the figure's title, or on a figure of panels the trace's panel's title."""
    import pandas as pd

    titles = panel_titles(fig)
    rows: list[pd.DataFrame] = []
    dots = iter([s for s in (fig.layout.shapes or ()) if s.name == NOW_META])   # Spec.now_point's dots, in order
    for i, tr in enumerate(fig.data):
        name = getattr(tr, "name", None) or f"trace {i + 1}"
        meta = getattr(tr, "meta", None)
        if meta == ROOM_META:
            continue
        if meta == NOW_META:                         # the dot is a shape; its trace only holds the legend entry
            dot = next(dots, None)
            if dot is not None:
                rows.append(pd.DataFrame({"chart": [_chart(titles, dot.xref)],
                                          "trace": [name], "x": [dot_value(fig.layout, dot.xref, dot.xanchor)],
                                          "y": [dot_value(fig.layout, dot.yref, dot.yanchor)]}))
            continue
        chart = _chart(titles, getattr(tr, "xaxis", None))
        x, y = _arr(getattr(tr, "x", None)), _arr(getattr(tr, "y", None))
        z = _arr(getattr(tr, "z", None)) if hasattr(tr, "z") else None
        if z is not None and z.ndim == 2:
            xs = x if x is not None and len(x) == z.shape[1] else np.arange(z.shape[1])
            ys = y if y is not None and len(y) == z.shape[0] else np.arange(z.shape[0])
            gx, gy = np.meshgrid(xs, ys)
            rows.append(pd.DataFrame({"chart": chart, "trace": name, "x": gx.ravel(), "y": gy.ravel(),
                                      "z": z.ravel()}))
            continue
        if x is None and y is None:
            continue
        n = max(len(x) if x is not None and x.ndim else 0, len(y) if y is not None and y.ndim else 0)
        if n == 0:
            continue
        df = pd.DataFrame({"chart": [chart] * n, "trace": [name] * n,
                           "x": x if x is not None and x.ndim and len(x) == n else [None] * n,
                           "y": y if y is not None and y.ndim and len(y) == n else [None] * n})
        rows.append(df)
    if not rows:
        return pd.DataFrame(columns=["chart", "trace", "x", "y"])
    return pd.concat(rows, ignore_index=True)


def axis_note(fig: go.Figure) -> str:
    """The axis titles (with units) as a CSV comment line; on a figure of panels one line per panel."""
    def t(ax):
        return re.sub(r"<[^>]+>", "", (ax.title.text or "") if ax is not None and ax.title is not None else "")
    titles = panel_titles(fig)
    if len(titles) == 1:
        return f"# x: {t(fig.layout.xaxis)}; y: {t(fig.layout.yaxis)}\n"
    lines = []
    for n, title in enumerate(titles, 1):
        s = "" if n == 1 else str(n)
        lines.append(f"# {title}: x: {t(fig.layout['xaxis' + s])}; y: {t(fig.layout['yaxis' + s])}\n")
    return "".join(lines)


def figure_csv(fig: go.Figure) -> str:
    return axis_note(fig) + figure_frame(fig).to_csv(index=False)


def chart(fig: go.Figure, *, key: str, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """The chart (in-place element, else st.plotly_chart with `kwargs`) with the export toolbar and a
    lazily built CSV download of the chart's data."""
    fmt = st.session_state.get("img", "png")
    cfg = {**(config or {}), **image_config(fmt, key)}      # image_config holds PLOTLY_CONFIG
    if not live_chart.draw(fig, key=key, config=cfg):
        st.plotly_chart(as_plotly(fig), key=key, config=cfg, **kwargs)
    st.download_button("⬇ CSV", data=lambda: figure_csv(fig), file_name=f"{key}.csv", mime="text/csv",
                       key=f"{key}{CSV_SUFFIX}", on_click="ignore",
                       help="This chart's plotted points (trace, x, y) as CSV. The camera in the chart's "
                            "toolbar saves the image (format: sidebar → Export).")
