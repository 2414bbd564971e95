"""Figure builders for the Memory tiers page (pure: arrays in, go.Figure out; no Streamlit, no physics).

Assembled from plain dicts with `ui.figures.plot.Spec` (fast; validated in tests/ui/figures/test_memory_tiers.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import GREY, NOW_MARKER, _segments
from ui.figures.context import titled_layout
from ui.figures.plot import FONT_SIZE, Spec, axis
from ui.format import seconds

# One colour per storage medium (model.economics.TIER_MEDIA), and recompute.
MEDIUM_COLORS = {"hbm": "#D62728", "dram": "#F58518", "flash": "#54A24B", "disk": "#4C78A8", "other": "#B279A2"}
RECOMPUTE_COLOR = "#333333"
ENVELOPE_COLOR = "#111111"
PROVIDER_COLOR = "#7F3C8D"
LECTURE_COLOR = "#111111"
TTL_COLOR = "#7F3C8D"
PARTS_COLORS = {"prefill": "#4C78A8", "decode": "#F58518", "cache": "#54A24B"}

# Log-axis ticks for hold times from milliseconds to a month, labelled in words.
TIME_TICKS = [(1e-3, "1 ms"), (1e-2, "10 ms"), (0.1, "0.1 s"), (1.0, "1 s"), (10.0, "10 s"), (60.0, "1 min"),
              (600.0, "10 min"), (3600.0, "1 h"), (86400.0, "1 day"), (864000.0, "10 days"),
              (8640000.0, "100 days")]


@dataclass(frozen=True)
class TierLine:
    """One option's cost per million tokens held against hold time."""

    name: str
    usd_per_mtok: np.ndarray
    color: str


@dataclass(frozen=True)
class ProviderCurve:
    """What a provider charges to hold a cached token for t and read it once (NaN where not sold)."""

    name: str
    usd_per_mtok: np.ndarray
    color: str = PROVIDER_COLOR


def _time_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    ticks = [(t, s) for t, s in TIME_TICKS if lo <= t <= hi]
    return [t for t, _ in ticks], [s for _, s in ticks]


def drain_times(labels: Sequence[str], drain_s: Sequence[float], colors: Sequence[str],
                lecture: Sequence[tuple[float, float, str] | None], *,
                title: str = "Drain time: capacity ÷ bandwidth") -> go.Figure:
    """Bars of each tier's drain time [s] on a log axis, the value written above the bar, and the lecture's
    figure (a range for DDR) beside it as a black diamond with its range drawn as an error bar."""
    d = np.asarray(drain_s, float)
    x = np.arange(len(d), dtype=float)
    spec = Spec()
    spec.log_x = {1: False}
    spec.trace("bar", x=x, y=d, width=0.55, name="this tier: capacity ÷ bandwidth", marker={"color": list(colors)},
               text=[seconds(v) for v in d], textposition="outside", textfont={"size": FONT_SIZE - 1},
               cliponaxis=False, customdata=list(labels),
               hovertemplate="%{customdata}: %{y:.3g} s<extra>drain time</extra>")
    xs, ys, up, down, texts = [], [], [], [], []
    for i, lec in enumerate(lecture):
        if lec is None:
            continue
        lo, hi, text = lec
        mid = float(np.sqrt(lo * hi))
        xs.append(i + 0.4)
        ys.append(mid)
        up.append(hi - mid)
        down.append(mid - lo)
        texts.append(f"{labels[i]}: {text}")
    if xs:
        spec.scatter(x=xs, y=ys, mode="markers", name="the lecture's figure (§2.7)",
                     marker={"symbol": "diamond", "size": 15, "color": LECTURE_COLOR,
                             "line": {"width": 2, "color": "white"}},
                     error_y={"type": "data", "symmetric": False, "array": up, "arrayminus": down,
                              "thickness": 3, "width": 8, "color": LECTURE_COLOR},
                     customdata=texts, hovertemplate="lecture: %{customdata}<extra></extra>")
    vals = np.concatenate([d[np.isfinite(d) & (d > 0)], np.asarray([v[0] for v in lecture if v], float),
                           np.asarray([v[1] for v in lecture if v], float)])
    lo = float(np.log10(vals.min())) - 0.7 if vals.size else -3.0
    hi = float(np.log10(vals.max())) + 1.0 if vals.size else 6.0
    tv, tt = _time_ticks(10 ** lo, 10 ** hi)
    spec.layout = titled_layout(title, hovermode="closest",
                              xaxis=axis("tier", log=False, tickvals=list(x), ticktext=list(labels),
                                         range=[-0.5, len(d) - 0.3], showgrid=False,
                                         tickfont={"size": FONT_SIZE - 1}),
                              yaxis=axis("drain time [s, log]", range=[lo, hi], tickvals=tv, ticktext=tt))
    return spec.figure()


def cost_vs_hold(hold_s: np.ndarray, tiers: Sequence[TierLine], recompute_usd_per_mtok: float,
                 cheapest: np.ndarray, option_names: Sequence[str], option_colors: Sequence[str], *,
                 now: tuple[float, float, str] | None = None,
                 ttls: Sequence[tuple[float, str]] = (),
                 provider: ProviderCurve | None = None,
                 refs: Sequence[tuple[str, float, str]] = (),
                 handovers: Sequence[tuple[float, float, str]] = (),
                 title: str = "Cost of holding one token's KV, then reading it back") -> go.Figure:
    """USD per million tokens [log] against hold time [s, log]: one line per tier (hold + retrieve), the
    recompute cost flat, the cheapest option drawn thick with the hold-time ranges shaded in its colour;
    cache lifetimes (TTLs) as vertical lines, a provider's price for holding a cached token as a purple
    dotted curve and `refs` (label, USD/Mtok, colour) as dash-dot horizontal lines; `handovers` (hold time,
    USD/Mtok, label) mark where neighbouring options' lines cross (model.economics.neighbour_handover_s)."""
    t = np.asarray(hold_s, float)
    spec = Spec()
    labels = np.asarray(option_names, dtype=object)[np.asarray(cheapest, int)]
    seen = set()
    color_of = dict(zip(option_names, option_colors))
    for x0, x1, name in _segments(t, labels):
        spec.vrect(x0, x1, color=color_of.get(name, GREY), opacity=0.09)
        if name not in seen:
            seen.add(name)
            spec.label(float(np.sqrt(x0 * x1)), 1.0, f"<b>{name}</b>", yanchor="top",
                       font={"size": FONT_SIZE - 2, "color": color_of.get(name, GREY)})
    ys = [np.asarray(tr.usd_per_mtok, float) for tr in tiers]
    rec = np.full(t.shape, float(recompute_usd_per_mtok))
    env = np.min(np.vstack([*ys, rec]), axis=0)
    spec.scatter(x=t, y=env, mode="lines", name="cheapest option", line={"color": ENVELOPE_COLOR, "width": 9},
                 opacity=0.28, hoverinfo="skip")
    for tr, y in zip(tiers, ys):
        spec.scatter(x=t, y=y, mode="lines", name=tr.name, line={"color": tr.color, "width": 3},
                     hovertemplate="%{x:.3g} s: $%{y:.3g}/Mtok<extra>" + tr.name + "</extra>")
    spec.scatter(x=t, y=rec, mode="lines", name="recompute (prefill again)",
                 line={"color": RECOMPUTE_COLOR, "width": 3, "dash": "dash"},
                 hovertemplate="$%{y:.3g}/Mtok<extra>recompute</extra>")
    tops = [float(recompute_usd_per_mtok)]
    if provider is not None:
        py = np.asarray(provider.usd_per_mtok, float)
        spec.scatter(x=t, y=py, mode="lines", name=provider.name, connectgaps=False,
                     line={"color": provider.color, "width": 4, "dash": "dot"},
                     hovertemplate="%{x:.3g} s: $%{y:.3g}/Mtok<extra>" + provider.name + "</extra>")
        tops += [float(v) for v in py[np.isfinite(py)]]
    for label, usd, color in refs:
        if not (np.isfinite(usd) and usd > 0):
            continue
        spec.hline(usd, color=color, dash="dashdot", width=2)
        spec.label(1.0, float(np.log10(usd)), label, x_is_data=False, y_is_data=True, xanchor="right",
                   yanchor="bottom", font={"size": FONT_SIZE - 4, "color": color})
        tops.append(float(usd))
    for x, label in ttls:
        if t.min() <= x <= t.max():
            spec.vline(x, color=TTL_COLOR, dash="dash", width=2)
            spec.label(x, 0.0, label, yanchor="bottom", xanchor="left", xshift=4,
                       font={"size": FONT_SIZE - 3, "color": TTL_COLOR})
    hx = [(x, y, s) for x, y, s in handovers if np.isfinite(x) and t.min() <= x <= t.max() and np.isfinite(y) and y > 0]
    if hx:
        lo_t, hi_t = np.log10(t.min()), np.log10(t.max())
        right = [np.log10(h[0]) > lo_t + 0.75 * (hi_t - lo_t) for h in hx]     # keep labels inside the plot
        spec.scatter(x=[h[0] for h in hx], y=[h[1] for h in hx], mode="markers+text",
                     name="hand-over t× (neighbouring lines cross)", text=[h[2] for h in hx],
                     textposition=["bottom left" if r else "bottom right" for r in right],
                     textfont={"size": FONT_SIZE - 3, "color": ENVELOPE_COLOR},
                     marker={"symbol": "x-thin", "size": 16, "line": {"width": 3, "color": ENVELOPE_COLOR}},
                     cliponaxis=False, customdata=[h[2] for h in hx],
                     hovertemplate="%{customdata}: t× = %{x:.3g} s, $%{y:.3g}/Mtok<extra>hand-over</extra>")
    pos = env[np.isfinite(env) & (env > 0)]
    lo = float(np.log10(pos.min())) - 0.6 if pos.size else -6.0
    hi = float(np.log10(max(tops))) + 1.2
    if now is not None and np.isfinite(now[1]) and now[1] > 0:
        # A shape anchored in the axes' domains, not a trace: a move redraws the dot, not the chart.
        spec.now_point(now[0], now[1], name=f"now: {now[2]}", marker=NOW_MARKER,
                       ranges=((float(np.log10(t.min())), float(np.log10(t.max()))), (lo, hi)))
    tv, tt = _time_ticks(float(t.min()), float(t.max()))
    spec.layout = titled_layout(title, height=620, hovermode="x unified",
                              xaxis=axis("hold time until the prompt returns [s, log]", tickvals=tv, ticktext=tt,
                                         range=[float(np.log10(t.min())), float(np.log10(t.max()))]),
                              yaxis=axis("cost per million tokens held [USD/Mtok, log]", range=[lo, hi],
                                         exponentformat="power"),
                              margin={"l": 90, "r": 30, "t": 60, "b": 130})
    # Eleven time labels turn upright on a phone's narrow chart and push the axis title down: the
    # legend starts lower than base_layout's, clear of it.
    spec.layout["legend"] = {**spec.layout["legend"], "y": -0.32}
    return spec.figure()


def request_vs_hit(hit_rate: np.ndarray, parts: dict[str, np.ndarray], list_pct: np.ndarray | None, *,
                   h_now: float, total_now_pct: float, list_name: str = "",
                   title: str = "Cost of a request against the prefix-cache hit rate") -> go.Figure:
    """Cost of one request as a % of the same request with no cache hits, against the hit rate [%]:
    the roofline's parts (prefill, cache, decode — keys of `parts`, each % of the no-hit total) stacked,
    and a provider's list price as a dashed line (% of its own no-hit price)."""
    h = 100.0 * np.asarray(hit_rate, float)
    spec = Spec()
    spec.log_x = {1: False}
    names = {"prefill": "prefill of the uncached prompt", "cache": "holding + reading the cached prefix",
             "decode": "decode of the output"}
    for key in ("decode", "prefill", "cache"):
        if key not in parts:
            continue
        spec.scatter(x=h, y=np.asarray(parts[key], float), mode="lines", stackgroup="cost", name=names[key],
                     line={"color": PARTS_COLORS[key], "width": 1}, fillcolor=PARTS_COLORS[key],
                     hovertemplate="%{y:.3g} % of no-cache cost<extra>" + key + "</extra>")
    total = np.sum([np.asarray(v, float) for v in parts.values()], axis=0)
    spec.scatter(x=h, y=total, mode="lines", name="total on the roofline", line={"color": ENVELOPE_COLOR, "width": 4},
                 hovertemplate="%{y:.3g} %<extra>total (roofline)</extra>")
    if list_pct is not None:
        spec.scatter(x=h, y=np.asarray(list_pct, float), mode="lines", name=f"{list_name} list price".strip(),
                     line={"color": PROVIDER_COLOR, "width": 4, "dash": "dash"},
                     hovertemplate="%{y:.3g} %<extra>list price</extra>")
    spec.scatter(x=[100.0 * h_now], y=[total_now_pct], mode="markers", name=f"now: {100 * h_now:.3g} % hits",
                 marker=NOW_MARKER, cliponaxis=False, hovertemplate="%{y:.3g} %<extra>now</extra>")
    spec.layout = titled_layout(title, hovermode="x unified",
                              xaxis=axis("prefix-cache hit rate h [% of prompt tokens]", log=False, range=[0, 100]),
                              yaxis=axis("cost of a request [% of no cache hits]", log=False,
                                         range=[0, 1.08 * max(100.0, float(np.nanmax(total)))]))
    return spec.figure()
