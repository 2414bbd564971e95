"""Compare page: pinned configurations (their URL code, and how each becomes a System) and the
overlay figures (pure: arrays in, go.Figure out; no Streamlit calls, no physics).

A configuration is chip × model × precision (weights / KV / compute) × scale-up size C × price.
In the URL each pinned one is a single parameter (`cmp_1`, `cmp_2`, `cmp_3`), its fields joined
by "_" (preset keys use letters, digits, "-" and "." — "." cannot be the separator, since
"llama-3.1-70b" and a price such as "2.95" contain one)::

    chip_model[_weights[_kv[_compute[_chips[_price]]]]]

    h100_llama-3.1-70b                          bf16 / bf16 / bf16, C auto, the preset's price
    h100_llama-3.1-70b_fp8_fp8_fp8_8_2.95       everything given
    lecture-gpu_lecture-deepseek_bf16_bf16_fp8  compute at fp8, the rest default

Trailing fields at their defaults (bf16, bf16, bf16, auto, preset) are left out when writing and
filled in when reading.  chips: "auto" (the sidebar's rule, `model.auto_chips`) or one of the
sidebar's options; price: USD per chip-hour from 0.01 to 1000, or "preset".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from model import presets
from model.specs import COMPUTE_DTYPES, DTYPE_BYTES
from ui.figures.batch import BAND_NAME, GREY, PREDICTED_NAME, split_fit
from ui.figures.kv_cache import mark
from ui.figures.plot import COUNT_DECADES, FONT_SIZE, Spec, SpecFigure, axis, base_layout, decades_if_wide, side_by_side
from ui.state.dials import CHIP_OPTIONS
from ui.state.view import View, assemble

SEP = "_"
SLOTS = (1, 2, 3)
MAX_CODE_CHARS = 64                       # the app's cap on a URL value (ui/dials.MAX_PARAM_CHARS)
PRICE_RANGE = (0.01, 1000.0)              # USD per chip-hour, as the sidebar's price box
TAIL_DEFAULTS = ("bf16", "bf16", "bf16", "auto", "preset")   # weights, kv, compute, chips, price
CODE_HELP = "format chip_model[_weights_kv_compute_chips_price], e.g. h100_llama-3.1-70b_fp8_fp8_fp8_8_2.95"

# Okabe–Ito colours (distinct for colour-blind viewers), one per slot, and a marker shape each.
CONFIG_COLORS = ("#0072B2", "#D55E00", "#009E73")
CONFIG_SYMBOLS = ("circle", "square", "diamond")


# ---------------------------------------------------------------- one configuration and its code

@dataclass(frozen=True)
class Config:
    """One pinned configuration: preset keys, dtypes, chips ("auto" or a count) and price (None = preset)."""

    chip: str
    model: str
    weights: str = "bf16"
    kv: str = "bf16"
    compute: str = "bf16"
    chips: int | str = "auto"
    price: float | None = None

    def fields(self) -> tuple[str, ...]:
        price = "preset" if self.price is None else _fmt_price(self.price)
        return (self.chip, self.model, self.weights, self.kv, self.compute, str(self.chips), price)


def _fmt_price(p: float) -> str:
    p = float(p)
    return str(int(p)) if p.is_integer() else f"{p:.10g}"


def encode(cfg: Config) -> str:
    """The URL code of `cfg`: fields joined by "_", trailing defaults left out."""
    parts = list(cfg.fields())
    while len(parts) > 2 and parts[-1] == TAIL_DEFAULTS[len(parts) - 3]:
        parts.pop()
    return SEP.join(parts)


def _parse_tail(tail: Sequence[str]) -> tuple[str, str, str, int | str, float | None]:
    """The five optional fields (weights, kv, compute, chips, price), defaults filled in; raises ValueError."""
    if len(tail) > 5:
        raise ValueError(f"{2 + len(tail)} fields; at most 7")
    w, kv, cd, chips, price = list(tail) + list(TAIL_DEFAULTS[len(tail):])
    for what, v, allowed in (("weights", w, DTYPE_BYTES), ("KV", kv, DTYPE_BYTES), ("compute", cd, COMPUTE_DTYPES)):
        if v not in allowed:
            raise ValueError(f"{what} dtype {v!r} is not one of {', '.join(allowed)}")
    if chips != "auto":
        if not chips.isdigit() or int(chips) not in CHIP_OPTIONS:
            raise ValueError(f"chips {chips!r} is not auto or one of {', '.join(map(str, CHIP_OPTIONS[1:]))}")
        chips = int(chips)
    if price == "preset":
        p = None
    else:
        try:
            p = float(price)
        except ValueError:
            raise ValueError(f"price {price!r} is not a number") from None
        if not (math.isfinite(p) and PRICE_RANGE[0] <= p <= PRICE_RANGE[1]):
            raise ValueError(f"price {price!r} is not from {PRICE_RANGE[0]:g} to {PRICE_RANGE[1]:g} USD per chip-hour")
    return w, kv, cd, chips, p


def decode(text: str, chip_keys: Iterable[str] | None = None, model_keys: Iterable[str] | None = None) -> Config:
    """A Config from its URL code; ValueError (saying what is wrong) for anything else.

    Preset keys may contain "_" in principle, so the chip and the model are found by trying every
    split against the known keys, not by position.
    """
    chips_ok = set(presets.hardware_presets() if chip_keys is None else chip_keys)
    models_ok = set(presets.model_presets() if model_keys is None else model_keys)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty")
    text = text.strip()
    if len(text) > MAX_CODE_CHARS:
        raise ValueError(f"{len(text)} characters; at most {MAX_CODE_CHARS}")
    parts = text.split(SEP)
    errors: list[str] = []
    for i in range(1, len(parts)):
        chip = SEP.join(parts[:i])
        if chip not in chips_ok:
            continue
        for j in range(i + 1, len(parts) + 1):
            model = SEP.join(parts[i:j])
            if model not in models_ok:
                continue
            try:
                w, kv, cd, c, p = _parse_tail(parts[j:])
            except ValueError as e:
                errors.append(str(e))
                continue
            return Config(chip, model, w, kv, cd, c, p)
    if errors:
        raise ValueError(errors[0])
    if parts[0] not in chips_ok:
        raise ValueError(f"unknown chip {parts[0]!r}")
    raise ValueError(f"unknown model {SEP.join(parts[1:3]) if len(parts) > 1 else '(missing)'!r}")


def view_for(cfg: Config, batch: float, context: float, *, mfu: float = 1.0, bw_util: float = 1.0,
             mode: str = "lecture") -> View:
    """The View of a pinned configuration, assembled as the sidebar does (ui/view.assemble)."""
    system, is_auto, warnings, unc = assemble(
        presets.hardware_presets()[cfg.chip], presets.model_presets()[cfg.model], cfg.weights, cfg.kv, cfg.compute,
        cfg.chips, float(batch), float(context), price=cfg.price, mfu=mfu, bw_util=bw_util, mode=mode)
    return View(system, float(batch), float(context), is_auto, cfg.chip, cfg.model, tuple(warnings), tuple(unc))


# ---------------------------------------------------------------- figures

@dataclass(frozen=True)
class Curve:
    """One configuration's curve on an overlay chart.

    y, fits, bound: arrays over the chart's x; y_now: the value at the sidebar's x (on the curve the sidebar's
    Estimate picks); marks: (label, x) vertical lines in the curve's colour (e.g. B*), drawn when inside the x
    range; predicted: the fitted model's curve (dashed, in the curve's colour; NaN: no point); band: its held-out
    error band (lower, upper), shaded in the curve's colour.
    """

    label: str
    color: str
    y: np.ndarray
    fits: np.ndarray
    bound: np.ndarray
    y_now: float
    symbol: str = "circle"
    marks: tuple[tuple[str, float], ...] = ()
    predicted: np.ndarray | None = None
    band: tuple[np.ndarray, np.ndarray] | None = None


def _rgba(color: str, alpha: float) -> str:
    """"#0072B2" → "rgba(0, 114, 178, alpha)"."""
    h = color.lstrip("#")
    return f"rgba({int(h[0:2], 16)}, {int(h[2:4], 16)}, {int(h[4:6], 16)}, {alpha:g})"


def overlay(x: np.ndarray, curves: Sequence[Curve], *, x_now: float, x_symbol: str, x_title: str, unit: str,
            title: str, y_title: str, now_label: str, labelled: bool = True, solid_name: str = "ideal roofline",
            ) -> go.Figure:
    """Up to three configurations' curves against x (log–log): solid where weights + KV fit in HBM,
    dotted where they do not, each with its value at the sidebar's x marked and its own vertical
    marks (B*, a crossover context) in its colour; the sidebar's x as a grey line.  `labelled=False`:
    the marks' and the grey line's labels left out (a panel beside one that has them, ui.figures.plot.side_by_side).
    Curves with a prediction add its dashed line (and a band where given); the legend then says "solid:
    `solid_name`" and "dashed: predicted"."""
    x = np.asarray(x, float)
    lo, hi = float(x.min()), float(x.max())
    spec = Spec()
    any_nofit = False
    n_marks = 0
    x_fmt = "%{x:,.0f}"
    for c in curves:
        if c.band is not None:
            spec.scatter(x=x, y=np.asarray(c.band[0], float), mode="lines", line={"width": 0, "color": c.color},
                         name=f"{BAND_NAME} (lower edge)", showlegend=False, hoverinfo="skip", legendgroup=c.label)
            spec.scatter(x=x, y=np.asarray(c.band[1], float), mode="lines", line={"width": 0, "color": c.color},
                         fill="tonexty", fillcolor=_rgba(c.color, 0.14), legendgroup=c.label, legendrank=3,
                         name=f"{BAND_NAME}, config {c.label.split(':')[0]}", customdata=np.asarray(c.band[0], float),
                         hovertemplate=f"%{{customdata:.3g}}–%{{y:.3g}} {unit}<extra>8 in 10 measured</extra>")
        if c.predicted is not None:
            spec.scatter(x=x, y=np.asarray(c.predicted, float), name=f"{c.label}, predicted", mode="lines",
                         legendgroup=c.label, showlegend=False, line={"width": 2.5, "color": c.color, "dash": "dash"},
                         hovertemplate=f"{x_symbol} = {x_fmt}: %{{y:.4g}} {unit}, predicted<extra>{c.label}</extra>")
        y_fit, y_no = split_fit(c.y, c.fits)
        bound = np.asarray(c.bound).astype(str)
        spec.scatter(x=x, y=y_fit, name=c.label, mode="lines", legendgroup=c.label,
                     line={"width": 4, "color": c.color}, customdata=bound,
                     hovertemplate=f"{x_symbol} = {x_fmt}: %{{y:.4g}} {unit}, %{{customdata}}-bound"
                                   f"<extra>{c.label}</extra>")
        if np.any(~np.asarray(c.fits, bool)):
            any_nofit = True
            spec.scatter(x=x, y=y_no, name=f"{c.label} (does not fit)", mode="lines", legendgroup=c.label,
                         showlegend=False, line={"width": 3, "color": c.color, "dash": "dot"}, customdata=bound,
                         hovertemplate=f"{x_symbol} = {x_fmt}: %{{y:.4g}} {unit}, does not fit in HBM"
                                       f"<extra>{c.label}</extra>")
        if np.isfinite(c.y_now):
            # A dot shape, x at its fraction of the set x range (so it is whole at B = 1 or 65,536), y in
            # data units along the curve: a move of the sidebar's x redraws the dots, not the curves.
            spec.now_point(x_now, c.y_now, name=f"{c.label} at {now_label}", symbol=c.symbol, showlegend=False,
                           marker={"size": 15, "color": c.color, "line": {"width": 2, "color": "white"}},
                           ranges=([float(np.log10(lo)), float(np.log10(hi))], None), room_x=x, room_y=c.y)
        for text, xm in c.marks:
            if xm is not None and np.isfinite(xm) and lo <= xm <= hi:
                if labelled:
                    mark(spec, float(xm), text, c.color, y=0.9 - 0.09 * n_marks, x_range=(lo, hi))
                else:
                    spec.vline(float(xm), color=c.color, dash="dash", width=2)
                n_marks += 1
    if any_nofit:
        spec.scatter(x=[None], y=[None], mode="lines", name="dotted: does not fit in HBM",
                     line={"width": 3, "color": GREY, "dash": "dot"})
    if any(c.predicted is not None for c in curves):
        spec.scatter(x=[None], y=[None], mode="lines", name=f"solid: {solid_name}", legendrank=1,
                     line={"width": 4, "color": GREY})
        spec.scatter(x=[None], y=[None], mode="lines", name=f"dashed: {PREDICTED_NAME}", legendrank=2,
                     line={"width": 2.5, "color": GREY, "dash": "dash"})
    if lo <= x_now <= hi:
        spec.vline(x_now, color=GREY, dash="solid", width=2, layer="below")
        if labelled:
            # At the top, left of the line (the marks' labels sit right of theirs), unless that is off the plot.
            left = hi > lo and (np.log10(x_now) - np.log10(lo)) / (np.log10(hi) - np.log10(lo)) > 0.2
            spec.label(x_now, 0.99, now_label, xanchor="right" if left else "left", xshift=-4 if left else 4,
                       yanchor="top", font={"size": FONT_SIZE - 3, "color": "#666"},
                       bgcolor="rgba(255,255,255,0.7)")
    # Ticks at powers of ten where the curves span two decades or more (batch and context always do): fewer
    # labels to read on a projector and for plotly to draw.
    spec.layout = base_layout(title, xaxis=axis(x_title, range=[float(np.log10(lo)), float(np.log10(hi))],
                                                **COUNT_DECADES),
                              yaxis=axis(y_title, **decades_if_wide(*(c.y for c in curves), *(
                                  c.predicted for c in curves if c.predicted is not None))))
    return spec.figure()


def _x_text(x: float) -> str:
    """2400 → '2,400'; a fractional x to 3 significant figures."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:.3g}"


def vs_batch(batch: np.ndarray, curves: Sequence[Curve], *, b_now: float, unit: str, title: str,
             y_title: str, labelled: bool = True, solid_name: str = "ideal roofline") -> go.Figure:
    """A quantity against batch B for each configuration (at the sidebar's context)."""
    return overlay(batch, curves, x_now=b_now, x_symbol="B", x_title="batch B (sequences per step)", unit=unit,
                   title=title, y_title=y_title, now_label=f"B = {_x_text(b_now)}", labelled=labelled,
                   solid_name=solid_name)


def latency_and_cost_vs_batch(batch: np.ndarray, latency_ms: Sequence[Curve], usd: Sequence[Curve], *,
                              b_now: float, context: str, solid_name: str = "ideal roofline") -> SpecFigure:
    """Latency [ms] (left, or above on a phone) and cost [$/Mtok] against batch for each configuration, as
    one figure of two panels (ui.figures.plot.side_by_side); the B* marks and the sidebar's batch are labelled on the
    latency panel, and drawn alike on the cost panel."""
    return side_by_side(
        vs_batch(batch, latency_ms, b_now=b_now, unit="ms", title=f"Latency per token against batch (T = {context})",
                 y_title="time per step [ms]", solid_name=solid_name),
        vs_batch(batch, usd, b_now=b_now, unit="$/Mtok", title=f"Cost per million tokens against batch (T = {context})",
                 y_title="cost [$ per million tokens]", labelled=False, solid_name=solid_name))


def vs_context(context: np.ndarray, curves: Sequence[Curve], *, t_now: float, unit: str, title: str,
               y_title: str) -> go.Figure:
    """A quantity against context T for each configuration (at the sidebar's batch)."""
    return overlay(context, curves, x_now=t_now, x_symbol="T", x_title="context T (tokens)", unit=unit,
                   title=title, y_title=y_title, now_label=f"T = {_x_text(t_now)}")
