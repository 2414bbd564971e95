"""Figure builders for the Rematerialisation page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_remat.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import NOW_MARKER
from ui.figures.plot import FONT_SIZE, Spec, axis, base_layout

STRATEGY_COLORS = {"store": "#E45756", "every": "#F58518", "sqrt": "#4C78A8", "revnet": "#54A24B"}
PART_COLORS = {"forward": "#4C78A8", "backward": "#9D755D", "recompute": "#E45756"}
HBM_COLOR = "#D62728"
WIRE = "#222222"
F_FILL = "#DCE9F5"


@dataclass(frozen=True)
class Line:
    """One strategy's curve: key (for colour), legend name, y values."""

    key: str
    name: str
    y: np.ndarray


# ---------------------------------------------------------------- the Feistel / RevNet diagram

def _seg(spec: Spec, x0: float, y0: float, x1: float, y1: float, color: str = WIRE, width: float = 3) -> None:
    spec.shapes.append({"type": "line", "xref": "x", "yref": "y", "x0": x0, "y0": y0, "x1": x1, "y1": y1,
                        "line": {"color": color, "width": width}})


def _arrow(spec: Spec, x0: float, y0: float, x1: float, y1: float, color: str = WIRE) -> None:
    """An arrow from (x0, y0) to (x1, y1) in data coordinates."""
    spec.annotations.append({"x": x1, "y": y1, "ax": x0, "ay": y0, "xref": "x", "yref": "y", "axref": "x",
                             "ayref": "y", "text": "", "showarrow": True, "arrowhead": 2, "arrowsize": 1.3,
                             "arrowwidth": 3, "arrowcolor": color})


def _text(spec: Spec, x: float, y: float, text: str, *, size: float = FONT_SIZE, color: str = WIRE,
          anchor: str = "center", **props) -> None:
    spec.annotations.append({"x": x, "y": y, "xref": "x", "yref": "y", "text": text, "showarrow": False,
                             "font": {"size": size, "color": color}, "xanchor": anchor, **props})


def _box(spec: Spec, x0: float, x1: float, y0: float, y1: float, label: str) -> None:
    spec.shapes.append({"type": "rect", "xref": "x", "yref": "y", "x0": x0, "x1": x1, "y0": y0, "y1": y1,
                        "fillcolor": F_FILL, "line": {"color": "#4C78A8", "width": 3}})
    _text(spec, (x0 + x1) / 2, (y0 + y1) / 2, label, size=FONT_SIZE + 6, color="#1f4e79")


WIRE_LABEL = FONT_SIZE - 2    # the wires' names: small enough that a phone's chart still holds the diagram


def _panel(spec: Spec, ox: float, *, inverse: bool) -> None:
    """One Feistel step drawn from x = ox: two wires, the f box fed by the top wire, ⊕ (or ⊖) on the bottom.

    The wires' names sit just above their wire ends (not beside them), so that the forward step's
    outputs and the inverse step's inputs, which meet at the divider, never run into each other on a
    narrow chart; the inverse's result is spelt out under its bottom wire."""
    top, bot, tap = 4.0, 1.0, ox + 3.6
    above = {"yanchor": "bottom", "yshift": 12, "size": WIRE_LABEL}   # clear of the arrowheads
    if not inverse:
        _text(spec, ox + 0.6, top, "<b>x</b>", anchor="left", **above)
        _text(spec, ox + 0.6, bot, "<b>y</b>", anchor="left", **above)
        _seg(spec, ox + 0.6, top, ox + 6.4, top)
        _seg(spec, ox + 0.6, bot, ox + 6.4, bot)
        _box(spec, tap - 0.9, tap + 0.9, 2.05, 2.95, "f")
        _arrow(spec, tap, top, tap, 2.98)
        _arrow(spec, tap, 2.05, tap, bot + 0.32)
        _text(spec, tap, bot, "⊕", size=FONT_SIZE + 20, yanchor="middle")
        # RevNet swaps the halves after the Feistel step
        _seg(spec, ox + 6.4, top, ox + 7.8, bot)
        _seg(spec, ox + 6.4, bot, ox + 7.8, top)
        _arrow(spec, ox + 7.8, top, ox + 9.4, top)
        _arrow(spec, ox + 7.8, bot, ox + 9.4, bot)
        _text(spec, ox + 9.4, top, "<b>y + f(x)</b>", anchor="right", **above)
        _text(spec, ox + 9.4, bot, "<b>x</b>", anchor="right", **above)
        _text(spec, ox + 7.1, 2.5, "swap", size=FONT_SIZE - 4, color="#666", anchor="left", xshift=16)
    else:
        _text(spec, ox + 0.6, top, "<b>y + f(x)</b>", anchor="left", **above)
        _text(spec, ox + 0.6, bot, "<b>x</b>", anchor="left", **above)
        _seg(spec, ox + 0.6, top, ox + 1.6, top)
        _seg(spec, ox + 0.6, bot, ox + 1.6, bot)
        _seg(spec, ox + 1.6, top, ox + 3.0, bot)          # swap back: x on top again
        _seg(spec, ox + 1.6, bot, ox + 3.0, top)
        tap = ox + 4.6
        _seg(spec, ox + 3.0, top, ox + 7.4, top)
        _seg(spec, ox + 3.0, bot, ox + 7.4, bot)
        _box(spec, tap - 0.9, tap + 0.9, 2.05, 2.95, "f")
        _arrow(spec, tap, top, tap, 2.98)
        _arrow(spec, tap, 2.05, tap, bot + 0.32)
        _text(spec, tap, bot, "⊖", size=FONT_SIZE + 20, yanchor="middle")
        _arrow(spec, ox + 7.4, top, ox + 9.0, top)
        _arrow(spec, ox + 7.4, bot, ox + 9.0, bot)
        _text(spec, ox + 9.0, top, "<b>x</b>", anchor="right", **above)
        _text(spec, ox + 9.0, bot, "<b>y</b>", anchor="right", **above)
        _text(spec, ox + 9.0, bot, "y = (y + f(x)) − f(x)", anchor="right", yanchor="top", yshift=-10,
              size=WIRE_LABEL, color="#444")


def feistel_diagram(title: str = "A Feistel step, as RevNets use it") -> go.Figure:
    """Two panels: forward (x, y) → (y + f(x), x) and its inverse, which recomputes f(x) and subtracts it.

    f is any function (an attention or MLP block); it is never inverted — only the addition is undone.
    """
    spec = Spec()
    spec.log_x = {1: False}
    _panel(spec, 0.0, inverse=False)
    _panel(spec, 11.4, inverse=True)
    # Each panel's heading in two short lines: one line each would run into the other on a phone.
    _text(spec, 4.7, 5.2, "forward:<br>keep only the output", size=FONT_SIZE - 2, color="#444")
    _text(spec, 16.0, 5.2, "backward: rebuild<br>the input from the output", size=FONT_SIZE - 2, color="#444")
    spec.shapes.append({"type": "line", "xref": "x", "yref": "y", "x0": 10.4, "x1": 10.4, "y0": 0.2, "y1": 4.6,
                        "line": {"color": "#BBBBBB", "width": 2, "dash": "dot"}})
    hidden = {"visible": False, "fixedrange": True}
    spec.layout = base_layout(title, height=380, legend_below=False, hovermode=False, showlegend=False,
                              margin={"l": 20, "r": 20, "t": 60, "b": 10},
                              xaxis={**hidden, "range": [-0.3, 20.7]}, yaxis={**hidden, "range": [-0.1, 6.0]})
    return spec.figure()


# ---------------------------------------------------------------- memory against depth

def memory_vs_depth(layers: np.ndarray, lines: Sequence[Line], *, l_now: float, now_values: Sequence[float],
                    hbm_gb: float | None, title: str = "Activation memory against depth") -> go.Figure:
    """Peak activation memory [GB] against the number of layers L (linear axes): store-all grows like L,
    checkpointing every layer like L with a smaller slope, √L checkpoints like √L, RevNet not at all.
    The model's L is a dotted line with each strategy's value marked; the chip's HBM a dashed line."""
    L = np.asarray(layers, float)
    spec = Spec()
    spec.log_x = {1: False}
    for ln, v in zip(lines, now_values):
        color = STRATEGY_COLORS.get(ln.key, "#333")
        spec.scatter(x=L, y=ln.y, mode="lines", name=ln.name, line={"color": color, "width": 4},
                     hovertemplate="L = %{x:.0f}: %{y:.4g} GB<extra>" + ln.name + "</extra>")
        if v is not None and np.isfinite(v):
            spec.scatter(x=[l_now], y=[v], mode="markers", showlegend=False, cliponaxis=False,
                         marker={**NOW_MARKER, "color": color},
                         hovertemplate=f"this model, L = {l_now:g}: %{{y:.4g}} GB<extra>{ln.name}</extra>")
    spec.vline(l_now, color="#555", dash="dot", width=2)
    spec.label(l_now, 0.98, f"this model: L = {l_now:g}", xanchor="left", xshift=4, yanchor="top",
               font={"size": FONT_SIZE - 3, "color": "#555"}, bgcolor="rgba(255,255,255,0.8)")
    ys = np.concatenate([np.ravel(np.asarray(ln.y, float)) for ln in lines]) if lines else np.array([1.0])
    top = float(np.nanmax(ys)) if ys.size else 1.0
    if hbm_gb is not None and np.isfinite(hbm_gb):
        spec.hline(hbm_gb, color=HBM_COLOR, dash="dash", width=3)
        spec.scatter(x=[None], y=[None], mode="lines", name=f"HBM per chip ({hbm_gb:.4g} GB)",
                     line={"color": HBM_COLOR, "dash": "dash", "width": 3})
        top = max(top, hbm_gb)
    spec.layout = base_layout(title, hovermode="x unified",
                              xaxis=axis("layers L (depth)", log=False, range=[0.0, float(L.max()) * 1.02]),
                              yaxis=axis("peak activation memory per chip [GB]", log=False, range=[0.0, 1.08 * top]))
    return spec.figure()


# ---------------------------------------------------------------- what each strategy costs

def trade_bars(names: Sequence[str], keys: Sequence[str], memory_gb: np.ndarray, parts_s: dict[str, np.ndarray], *,
               hbm_gb: float | None, title: str = "What each strategy costs") -> go.Figure:
    """Two panels sharing the strategy rows: peak activation memory per chip [GB] (left, the HBM capacity
    dashed) and the training step's time on the chips [s], stacked forward / backward / recompute (right)."""
    names = list(names)
    mem = np.asarray(memory_gb, float)
    spec = Spec()
    spec.log_x = {1: False, 2: False}
    spec.trace("bar", x=mem, y=names, orientation="h", name="activation memory",
               marker={"color": [STRATEGY_COLORS.get(k, "#333") for k in keys]}, showlegend=False,
               text=[f"{v:.3g} GB" for v in mem], textposition="auto", textfont={"size": FONT_SIZE - 3},
               hovertemplate="%{y}: %{x:.4g} GB<extra></extra>")
    for part, vals in parts_s.items():
        v = np.asarray(vals, float)
        spec.trace("bar", axis=2, x=v, y=names, orientation="h", name=part,
                   marker={"color": PART_COLORS.get(part, "#777")},
                   hovertemplate="%{y}: " + part + " %{x:.4g} s<extra></extra>")
    top = float(np.nanmax(mem)) if mem.size else 1.0
    if hbm_gb is not None and np.isfinite(hbm_gb):
        spec.vline(hbm_gb, color=HBM_COLOR, dash="dash", width=3, axis=1)
        spec.label(hbm_gb, 1.0, f"HBM {hbm_gb:.4g} GB", x_is_data=True, yanchor="bottom", xanchor="center",
                   font={"size": FONT_SIZE - 4, "color": HBM_COLOR})
        top = max(top, hbm_gb)
    total = np.sum([np.asarray(v, float) for v in parts_s.values()], axis=0) if parts_s else np.array([1.0])
    spec.layout = base_layout(
        title, height=430, barmode="stack", hovermode="closest",
        xaxis={**axis("peak activation memory <br>per chip [GB]", log=False, range=[0.0, 1.12 * top]),
               "domain": [0.0, 0.44], "anchor": "y"},
        xaxis2={**axis("training step time <br>on these chips [s]", log=False,
                       range=[0.0, 1.08 * float(np.nanmax(total))]), "domain": [0.56, 1.0], "anchor": "y2"},
        yaxis={"type": "category", "autorange": "reversed", "tickfont": {"size": FONT_SIZE - 3}, "anchor": "x"},
        yaxis2={"type": "category", "autorange": "reversed", "showticklabels": False, "anchor": "x2"},
        margin={"l": 190, "r": 30, "t": 70, "b": 110})
    spec.layout["legend"]["traceorder"] = "normal"     # stacked bars list bottom-up otherwise
    # Two-line axis titles (each panel is half a phone wide): the legend starts below them.
    spec.layout["legend"]["y"] = -0.38
    return spec.figure()
