"""Figure builders for the Plan page (pure: arrays in, figure out; no Streamlit, no physics).

One chart holds the whole search: every configuration as a dot (tokens/s per user against $ per million
output tokens, both log), coloured by chip, the frontier as a line, the TPOT target as a vertical line
and the winner marked.  A search evaluates 100k–200k configurations; the page keeps, with `thin`, one
dot per chip in each cell of a fixed log grid (the cheapest there that meets the TTFT target, else the
cheapest): the cloud's shape at a screen's resolution, in a few thousand dots that a dial move can send
and redraw (WebGL, `scattergl`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ui.figures.batch import BREAKDOWN_HEIGHT, BREAKDOWN_MARGIN_B, FONT_SIZE, TERM_COLORS
from ui.figures.plot import NARROW_BELOW_PX, NARROW_META, Spec, SpecFigure, axis, base_layout, decades_if_wide

DOTS_PER_CHIP_DECADE = 24       # thinning grid: cells per power of ten ≈ this / √chips (4 … 12)
CHIP_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
               "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
               "#e6550d", "#31a354")
FRONTIER_COLOR = "#111111"
BAND_COLOR = "rgba(117, 80, 186, 0.16)"      # the held-out error band (the predicted curves' purple, ui/figures/batch)
BAND_NAME = "held-out error: 8 in 10 measured costs"
# The fitted model's step terms (model.plan.STEP_TERMS) and the side of the step each adds to.
PREDICTED_TERMS = {"dense": ("t_dense_s", "compute", TERM_COLORS["matmul"]),
                   "experts": ("t_expert_s", "compute", "#72B7B2"),
                   "attention": ("t_attn_s", "compute", TERM_COLORS["attention"]),
                   "weights": ("t_weights_s", "memory", TERM_COLORS["weights"]),
                   "kv": ("t_kv_s", "memory", TERM_COLORS["kv"]),
                   "comm": ("t_comm_s", "communication", TERM_COLORS["comm"]),
                   "fixed": ("t_fixed_s", "fixed", "#9D9D9D"),
                   "hops": ("t_hops_s", "fixed", TERM_COLORS["hops"])}
TARGET_COLOR = "#444444"
WINNER_MARKER = {"size": 20, "color": "#FFD23F", "line": {"width": 3, "color": "#111111"}}
CLOSEST_MARKER = {"size": 20, "color": "#FFFFFF", "line": {"width": 3, "color": "#D62728"}}
MODE_NAMES = ("aggregated", "disaggregated")
SYMBOLS = {(0, True): "circle", (1, True): "diamond", (0, False): "circle-open", (1, False): "diamond-open"}
DOT_SIZE = 6
# customdata columns of a dot (floats): what its hover names besides the chip, mode and precision.
CUSTOM = ("chips", "pipeline_stages", "batch", "ttft_s", "tpot_s", "prefill_chips", "prefill_batch")


def cells_per_decade(chips: int) -> int:
    """The thinning grid's cells per power of ten for a search over `chips` chips: finer for fewer chips, so a
    search of one chip or of fifteen draws a few thousand dots (15 chips: 6 a decade)."""
    return int(np.clip(round(DOTS_PER_CHIP_DECADE / np.sqrt(max(chips, 1))), 4, 12))


def thin(x: np.ndarray, y: np.ndarray, group: np.ndarray, per_decade: int = 6,
         rank: np.ndarray | None = None) -> np.ndarray:
    """Indices of one point per (group, cell) of a grid of `per_decade` cells per power of ten on both
    (log) axes: in each cell the point of lowest `rank` (default: y, the cheapest), ties to the first, in
    index order.  Points with a non-finite or non-positive x or y are left out.  The grid is fixed
    (aligned to powers of ten), so a dot stays put while the inputs move other dots."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    idx = np.flatnonzero(np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0))
    if idx.size == 0:
        return idx
    r = (y if rank is None else np.asarray(rank, float))[idx]
    cx = np.floor(np.log10(x[idx]) * per_decade).astype(np.int64)
    cy = np.floor(np.log10(y[idx]) * per_decade).astype(np.int64)
    cx -= cx.min()
    cy -= cy.min()
    g = np.asarray(group)[idx].astype(np.int64)
    g -= g.min()
    key = (g * (cx.max() + 1) + cx) * (cy.max() + 1) + cy          # dense: groups × cells (no sort needed)
    best = np.full(int(key.max()) + 1, np.inf)
    np.minimum.at(best, key, r)
    hit = np.flatnonzero(r == best[key])                           # the lowest rank of each cell (ties: all)
    first = np.full(best.size, idx.size)
    np.minimum.at(first, key[hit], hit)                            # ties: the first
    return idx[np.sort(first[first < idx.size])]


def log_range(*values: np.ndarray, pad: float = 0.08) -> tuple[float, float]:
    """A log axis's range (log10 units) over the positive finite `values`, widened by `pad` of a decade on each
    side and rounded out to 1/8 of a decade (so a range moves only when the values cross such a step);
    (0, 1) when there are none."""
    v = np.concatenate([np.ravel(np.asarray(a, float)) for a in values]) if values else np.array([])
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return 0.0, 1.0
    lo, hi = float(np.log10(v.min())) - pad, float(np.log10(v.max())) + pad
    return float(np.floor(lo * 8) / 8), float(np.ceil(hi * 8) / 8)


def describe(chip: str, chips: int, stages: int, batch: int, weights: str, kv: str, mode: str,
             prefill_chips: int = 0, prefill_batch: int = 0) -> str:
    """A configuration in words, for a hover or a table: "H100 × 8, batch 64, fp8 weights, bf16 KV, aggregated"."""
    lay = f"{chip} × {chips:,}" + (f" × {stages} stages" if stages > 1 else "")
    pre = f" (prefill on {prefill_chips:,}, batch {prefill_batch:,})" if mode == "disaggregated" else ""
    return f"{lay}, batch {batch:,}, {weights} weights, {kv} KV, {mode}{pre}"


def _hover(chip: str, mode: int, meets_ttft: bool) -> str:
    pre = (" (prefill on %{customdata[5]:,} chips, batch %{customdata[6]:,})" if mode == 1 else "")
    miss = "<br><i>misses the TTFT target</i>" if not meets_ttft else ""
    return (f"<b>{chip}</b> × %{{customdata[0]:,}} × %{{customdata[1]}} stage(s), batch %{{customdata[2]:,}}<br>"
            f"%{{text}}, {MODE_NAMES[mode]}{pre}<br>"
            "TTFT %{customdata[3]:.3~s}s · TPOT %{customdata[4]:.3~s}s<br>"
            f"%{{x:.3~s}} tokens/s per user · $%{{y:.3g}} per Mtok{miss}<extra></extra>")


def plan_figure(x: np.ndarray, y: np.ndarray, chip: np.ndarray, mode: np.ndarray, meets_ttft: np.ndarray,
                precision: Sequence[str], custom: np.ndarray, *, chip_names: Sequence[str],
                chip_colors: Sequence[str], frontier_x: np.ndarray, frontier_y: np.ndarray,
                frontier_text: Sequence[str], winner: tuple[float, float], feasible: bool,
                target_x: float, target_label: str, evaluated: int, per_decade: int,
                band: tuple[float, float] | None = None,
                title: str = "Every configuration searched: speed per user against cost") -> SpecFigure:
    """The search as one chart (module docstring): dots (`x` tokens/s per user, `y` $/Mtok, one per
    thinned configuration) in one WebGL trace per chip × serving mode × TTFT verdict (filled: meets
    TTFT; open: misses it; circles aggregated, diamonds disaggregated), one legend entry per chip;
    `precision` is each dot's "weights/KV" text and `custom` its CUSTOM columns (hover); the frontier
    (`frontier_x` ascending) as a line with `frontier_text` as hover; the TPOT target as a dashed vertical
    line at `target_x` with `target_label`; the winner (or, not `feasible`, the closest point) as a dot.
    `evaluated` (configurations searched) and `per_decade` (the thinning grid) go in the title's second line.
    `band` (lo, hi): the predicted frontier's held-out error — a measured point of a frontier configuration
    lies at (x ÷ r, y × r) for a ratio r = predicted ÷ measured, 8 in 10 of them with r in [lo, hi] — drawn
    as the area the frontier sweeps between r = lo and r = hi."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    chip, mode, ok = np.asarray(chip), np.asarray(mode), np.asarray(meets_ttft, bool)
    text = np.asarray(precision, dtype=object)
    custom = np.asarray(custom, np.float32)
    spec = Spec()
    spec.log_x = {1: True}
    for h, name in enumerate(chip_names):
        shown = False
        for m in (0, 1):
            for meets in (True, False):
                sel = np.flatnonzero((chip == h) & (mode == m) & (ok == meets))
                if sel.size == 0:
                    continue
                color = chip_colors[h % len(chip_colors)]
                spec.trace("scattergl", x=x[sel], y=y[sel], mode="markers", name=name, legendgroup=f"chip{h}",
                           showlegend=not shown, text=text[sel].tolist(), customdata=custom[sel],
                           marker={"size": DOT_SIZE, "color": color, "symbol": SYMBOLS[(m, meets)],
                                   "opacity": 0.75 if meets else 0.55},
                           hovertemplate=_hover(name, m, meets))
                shown = True
    fx, fy = np.asarray(frontier_x, float), np.asarray(frontier_y, float)
    band_x = band_y = np.array([])
    if band is not None and fx.size:
        lo, hi = band
        band_x = np.concatenate([fx / lo, (fx / hi)[::-1], fx[:1] / lo])
        band_y = np.concatenate([fy * lo, (fy * hi)[::-1], fy[:1] * lo])
        spec.scatter(x=band_x, y=band_y, mode="lines", fill="toself", fillcolor=BAND_COLOR, line={"width": 0},
                     name=f"{BAND_NAME} within {lo:.2f}–{hi:.2f}×", hoverinfo="skip")
    spec.scatter(x=fx, y=fy, mode="lines+markers", name="frontier (meets TTFT; nothing both faster and cheaper)",
                 line={"color": FRONTIER_COLOR, "width": 2.5}, marker={"size": 5, "color": FRONTIER_COLOR},
                 text=list(frontier_text), hovertemplate="<b>frontier</b>: %{text}<br>%{x:.3~s} tokens/s per user · "
                                                          "$%{y:.3g} per Mtok<extra></extra>")
    # The symbols' key: legend-only entries (no points).
    for label, symbol in (("diamonds: disaggregated", "diamond"), ("open: misses the TTFT target", "circle-open")):
        spec.scatter(x=[None], y=[None], mode="markers", name=label, hoverinfo="skip",
                     marker={"size": 9, "color": "#555555", "symbol": symbol})
    spec.vline(target_x, color=TARGET_COLOR, dash="dash", width=2)
    spec.label(target_x, 1.0, target_label, xanchor="left", yanchor="top", xshift=4, font={"size": 13})
    # Set ranges (the dots' extent, the winner and the target line): a move that only moves the target or the
    # winner then redraws two shapes, not the WebGL dots (a new range, or a trace keeping room for the winner's
    # dot, would make plotly redraw every dot).
    x_range = log_range(x, fx, band_x, [winner[0], target_x])
    y_range = log_range(y, fy, band_y, [winner[1]])
    name = "cheapest that meets both targets" if feasible else "closest point (not feasible)"
    spec.now_point(winner[0], winner[1], name=name, marker=WINNER_MARKER if feasible else CLOSEST_MARKER,
                   ranges=(x_range, y_range))
    spec.layout = base_layout(
        f"{title}<br><sup>{evaluated:,} configurations; a dot per chip in each 1/{per_decade}-decade "
        "cell: its cheapest, that meets TTFT if one does</sup>",
        height=640, hovermode="closest",
        xaxis=axis("speed per user [tokens/s]", range=list(x_range), **decades_if_wide(x, fx, [target_x])),
        yaxis=axis("cost [$ per million output tokens, prompts included]", range=list(y_range),
                   **decades_if_wide(y, fy)),
        margin={"l": 90, "r": 30, "t": 80, "b": 120})
    # A phone: a taller chart (its legend takes many rows) with the legend nearer the plot.
    spec.layout["meta"] = {NARROW_META: {"below_px": NARROW_BELOW_PX, "layout": {
        "height": 900, "margin": {"l": 60, "r": 12, "t": 70, "b": 20}, "legend": {"y": -0.12},
        "title": {"text": f"Speed against cost<br><sup>{evaluated:,} configurations, thinned</sup>",
                  "font": {"size": 15}}}}}
    return spec.figure()


def predicted_breakdown(terms: dict[str, float], title: str) -> SpecFigure:
    """The fitted model's step as stacked horizontal bars [ms] (`terms`: model.plan.STEP_TERMS): the compute side
    (dense, experts, attention), the memory side (weights, KV), the communication and the fixed time (per layer
    of a step with prompt work, and pipeline hops).  The step is max of the first three + the fixed row."""
    rows = ["compute", "memory", "communication", "fixed"]
    spec = Spec()
    for name, (key, row, color) in PREDICTED_TERMS.items():
        v = float(terms.get(key, 0.0)) * 1e3
        if v <= 0:
            continue
        spec.trace("bar", y=rows, x=[v if r == row else 0.0 for r in rows], name=name, orientation="h",
                   marker={"color": color}, hovertemplate=f"{name}: %{{x:.4g}} ms<extra></extra>")
    legend = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "xanchor": "left",
              "x": 0.0, "font": {"size": FONT_SIZE - 3}}
    spec.layout = base_layout(title, height=BREAKDOWN_HEIGHT, barmode="stack", hovermode="closest", legend=legend,
                              margin={"l": 100, "r": 30, "t": 60, "b": BREAKDOWN_MARGIN_B},
                              xaxis=axis("time per step [ms]", log=False),
                              yaxis={"type": "category", "autorange": "reversed", "tickfont": {"size": FONT_SIZE - 3}})
    return spec.figure()
