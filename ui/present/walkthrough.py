"""The presenter walkthrough: the lecture's argument as steps, each one chart, one equation with
today's numbers, one plain sentence and a link to that moment of the video.

Every step calls the model (one vectorised call per chart) and a chapter page's figure builder —
no physics here, only which quantities to show.  A step is a function of the current `View`
returning a `Shown`; `STEPS` orders them as the lecture does.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from model import (
    KVLayout,
    cluster,
    context_never_compute_bound,
    decode_step,
    kv_crossover_context,
    presets,
    pricing,
    system_balance_batch,
)
from model.context import (
    LECTURE_ACTIVE_PARAMS,
    LECTURE_KV_ELEMENTS_PER_TOKEN,
    STALLED_CONTEXT_TOKENS,
    compute_crossover_context,
    cost_terms,
)
from model.economics import (
    TTL_1H_S,
    TTL_5M_S,
    cache_tier_costs,
    cheapest_envelope,
    fast_mode_batches,
    hbm_tier,
    list_cache_usd_per_mtok,
    recompute_cost,
)
from model.specs import DTYPE_BYTES
from model.training import chip_seconds, overtrain, phase_costs
from ui.equations import batch as eq_batch
from ui.equations import context as eq_context
from ui.equations import fast_mode as eq_fast
from ui.equations import kv_cache as eq_kv
from ui.equations import memory_tiers as eq_tiers
from ui.equations import moe as eq_moe
from ui.equations import pipeline as eq_pipeline
from ui.equations import prices as eq_prices
from ui.equations import training as eq_training
from ui.figures import batch as figures
from ui.figures import context as fig_context
from ui.figures import fast_mode as fig_fast_mode
from ui.figures import kv_cache as fig_kv
from ui.figures import memory_tiers as fig_tiers
from ui.figures import moe as fig_moe
from ui.figures import pipeline as fig_pipeline
from ui.figures import prices as fig_prices
from ui.figures import scale_up as fig_scaleup
from ui.figures import training as fig_training
from ui.format import bytes_, duration, number, seconds, tokens, usd
from ui.state.dials import BATCH_OPTIONS
from ui.state.view import View

VIDEO = "https://youtu.be/xmkSf5IS-zw"
FAST_OFFER = "claude-opus-4.6"         # the lecture's "6× the price for 2.5× the speed" (§2.4)
LECTURE_MOE = "deepseek-v3"            # used by the MoE step when the sidebar's model is dense


@dataclass(frozen=True)
class Shown:
    fig: go.Figure
    latex: tuple[str, ...]
    sentence: str
    note: str = ""                      # a caption under the chart (what the quantities are)


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    video_s: int                        # where in the video (seconds; docs/design.md "The lecture's chapters")
    chapter: str                        # the lecture chapter it belongs to
    page: str                           # the chapter page's name (views/__init__.py)
    build: Callable[[View], Shown]
    play: str = ""                      # the quantity the chart can sweep ("batch", "context", "rate", "hold time")
    dial: str = ""                      # the sidebar dial ("batch" or "context") the offline deck's slider
                                        # scrubs (ui/present/deck.py rebuilds the step at each of its
                                        # positions); "" = the sweep

    @property
    def video_url(self) -> str:
        return f"{VIDEO}?t={self.video_s}"


def batch_grid(B: float) -> np.ndarray:
    return np.unique(np.concatenate([np.geomspace(1, 65536, 121), BATCH_OPTIONS, [B]]))


def _inside(v: np.ndarray, ax: dict) -> np.ndarray:
    """Points strictly inside an axis' fixed range (plotly.js hides a marker that sits on the range's end), and
    the swept values' own first and last where the range is theirs, a hair wider (the batch charts' 1 … 65,536:
    ui.figures.batch.RANGE_HAIR)."""
    rng = ax.get("range")
    if not rng or len(rng) != 2 or any(r is None for r in rng):
        return np.ones(v.shape, bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.log10(v) if ax.get("type") == "log" else v
    lo, hi = sorted(float(r) for r in rng)
    pad = 0.01 * (hi - lo)
    inside = (w > lo + pad) & (w < hi - pad)
    ends = np.isfinite(w) & (w > lo) & (w < hi) & ((w < lo + 1e-6 * (hi - lo)) | (w > hi - 1e-6 * (hi - lo)))
    return inside | ends


_PLAY = contextvars.ContextVar("walkthrough_play", default=True)


@contextlib.contextmanager
def without_play() -> Iterator[None]:
    """Build steps without the ▶ sweep (the offline deck rebuilds a step per dial position instead)."""
    token = _PLAY.set(False)
    try:
        yield
    finally:
        _PLAY.reset(token)


def with_play(fig: go.Figure, x: np.ndarray, y: np.ndarray, *, label: str, unit: str, axis: str = "",
              fmt: Callable[[float], str] = number) -> go.Figure:
    """Add a client-side sweep: a marker that runs along (x, y) with Play/Pause buttons (Plotly frames).

    `fmt` writes the swept value beside the marker (65,536; 200k; 5 min)."""
    if not _PLAY.get():
        return fig
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
    layout = fig.layout.to_plotly_json()
    for name, v in ((f"xaxis{axis}", x), (f"yaxis{axis}", y)):
        ok &= _inside(v, layout.get(name, {}))
    x, y = x[ok], y[ok]
    if x.size < 2:
        return fig
    idx = np.unique(np.round(np.linspace(0, x.size - 1, min(60, x.size))).astype(int))
    marker = {"type": "scatter", "x": [x[idx[0]]], "y": [y[idx[0]]], "mode": "markers+text",
              "name": f"sweep ({label})",
              "marker": {"size": 18, "color": "#FF7F0E", "line": {"width": 2, "color": "#000"}},
              "text": [f"{label} = {fmt(x[idx[0]])}"], "textposition": "top right", "textfont": {"size": 18},
              "hovertemplate": f"{label} = %{{x:,.4g}}<br>%{{y:.4g}} {unit}<extra></extra>", "showlegend": False,
              "cliponaxis": False}                   # drawn whole at the axis' ends
    if axis:
        marker.update(xaxis=f"x{axis}", yaxis=f"y{axis}")
    data = [*fig.data, marker]
    n = len(data) - 1
    frames = [{"name": str(i), "traces": [n],
               "data": [{"x": [float(x[i])], "y": [float(y[i])], "text": [f"{label} = {fmt(x[i])}"],
                         # the label leans inwards, clear of the axes at both ends
                         "textposition": "top right" if i < x.size / 2 else "top left"}]} for i in idx]
    top = float(layout.get("margin", {}).get("t", 60) or 60)
    layout["margin"] = {**layout.get("margin", {}), "t": max(top, 90)}
    layout["updatemenus"] = [{
        "type": "buttons", "direction": "left", "x": 1.0, "xanchor": "right", "y": 1.0, "yanchor": "bottom",
        "pad": {"r": 4, "b": 6}, "showactive": False, "font": {"size": 16},
        "buttons": [
            {"label": f"▶ play {label}", "method": "animate",
             "args": [None, {"frame": {"duration": 120, "redraw": False}, "transition": {"duration": 60},
                             "fromcurrent": True, "mode": "immediate"}]},
            {"label": "❚❚", "method": "animate",
             "args": [[None], {"frame": {"duration": 0, "redraw": False}, "mode": "immediate"}]},
        ]}]
    return go.Figure(data=data, layout=layout, frames=frames, _validate=False)


# ================================================================ the steps

def step_floor(view: View) -> Shown:
    s, B, T, C = view.system, view.batch, view.context, view.chips
    grid = batch_grid(B)
    sw = decode_step(s, grid, T)
    now = decode_step(s, B, T)
    b_star = float(system_balance_batch(s, T))
    floor = float(s.weight_bytes / (C * s.hbm_bandwidth))
    fig = figures.curve_vs_batch(grid, sw.t_step_s * 1e3, sw.fits, sw.bound, name="latency per token", unit="ms",
                                 title="Latency per token against batch", y_title="time per step [ms]",
                                 b_star=b_star, b_now=B, y_now=float(now.t_step_s) * 1e3)
    fig = with_play(fig, grid, sw.t_step_s * 1e3, label="B", unit="ms")
    return Shown(fig, (eq_batch.step_time(s, B, T), eq_batch.latency_floor(s)),
                 f"Every step reads all {bytes_(s.weight_bytes)} of weights once, so no "
                 f"batch is faster than {seconds(floor)} per token: while the weight read sets the step, more "
                 f"sequences ride along almost for free (B = {B:g} now: {seconds(float(now.t_step_s))}, "
                 f"{now.bound}-bound).",
                 "Latency per token = one decode step (each sequence gets one token per step). Shading: what bounds "
                 "the step. Grey: weights + KV do not fit in HBM.")


def step_balance(view: View) -> Shown:
    s, B, T = view.system, view.batch, view.context
    grid = batch_grid(B)
    sw = decode_step(s, grid, T)
    now = decode_step(s, B, T)
    b0 = float(system_balance_batch(s, 0.0))
    b_star = float(system_balance_batch(s, T))
    F, bw = s.flops, s.hbm_bandwidth
    fig = figures.curve_vs_batch(grid, sw.usd_per_mtok, sw.fits, sw.bound, name="$ per Mtok", unit="$/Mtok",
                                 title="Cost per million tokens against batch",
                                 y_title="cost [$ per million tokens]", b_star=b_star, b_now=B,
                                 y_now=float(now.usd_per_mtok))
    fig = with_play(fig, grid, sw.usd_per_mtok, label="B", unit="$/Mtok")
    fits = np.asarray(sw.fits, bool)
    if fits.any():
        ratio = float(sw.usd_per_mtok[0] / np.min(np.asarray(sw.usd_per_mtok)[fits]))
        last = f"Unbatched costs {number(ratio)}× the cheapest batch that fits."
    else:
        last = (f"Here not even B = 1 fits in {view.chips:g} chips' HBM at this context: add chips or "
                "shorten the context.")
    return Shown(fig, (eq_batch.balance_batch(s),),
                 f"The weight fetch is shared by the batch, compute is not: with no KV, cost falls until B* ≈ "
                 f"{number(b0)} (F/bw ≈ {F / bw:.0f} × sparsity {s.model.sparsity:.3g}), then stays flat. {last}",
                 "Cost per token ∝ step time ÷ batch, at this chip's rental price.")


def step_fast(view: View) -> Shown:
    s, T = view.system, view.context
    offers = presets.price_presets()
    offer = offers.get(FAST_OFFER)
    S = float(offer.fast_speedup) if offer and offer.fast_speedup else 2.5
    Pm = float(offer.fast_price_multiple) if offer and offer.fast_price_multiple else 6.0
    fm = fast_mode_batches(s, S, Pm, T)
    b_star = float(system_balance_batch(s, T))
    grid = batch_grid(view.batch)
    sw = decode_step(s, grid, T)
    floors = decode_step(s, np.array([1.0, 1e12]), T)
    points = []
    if fm.batch_standard is not None and fm.batch_fast is not None:
        points = [("standard", fm.batch_standard, fm.t_step_standard_s, fm.usd_per_mtok_standard,
                   fig_fast_mode.STANDARD_COLOR),
                  ("fast", fm.batch_fast, fm.t_step_fast_s, fm.usd_per_mtok_fast, fig_fast_mode.FAST_COLOR)]
    fig = fig_fast_mode.fast_mode_curves(grid, sw.t_step_s, sw.usd_per_mtok, sw.fits, sw.bound, points,
                                         float(floors.t_weights_s[0]), float(floors.usd_per_mtok[1]),
                                         b_star if np.isfinite(b_star) else None,
                                         titles=(f"Latency: {S:.3g}× quicker", f"Cost: {Pm:.3g}× dearer"))
    who = (offer.model or offer.name) if offer else "a quote"
    if points:
        sentence = (f"{who}: {Pm:.3g}× the price for {S:.3g}× the speed is simply a smaller batch — "
                    f"B ≈ {number(fm.batch_fast)} instead of {number(fm.batch_standard)}: each step is shorter, "
                    "but fewer tokens share the weight fetch.")
    else:
        sentence = f"On this system no pair of batches gives {who}'s {S:.3g}× speed for {Pm:.3g}× price: {fm.reason}"
    return Shown(fig, (eq_fast.solved(s, fm),), sentence,
                 "Left: latency per token; right: cost per token; both against batch.")


def step_kv(view: View) -> Shown:
    s, B, T = view.system, view.batch, view.context
    grid = np.unique(np.concatenate([np.geomspace(1024, 1e7, 121), [T]]))
    sw = decode_step(s, B, grid)
    i = int(np.searchsorted(grid, T))
    t_cross = float(kv_crossover_context(s, B))
    t_never = float(context_never_compute_bound(s))
    marks = [(f"KV = weights (B = {B:g})", t_cross, figures.BOUND_COLORS["weights"]),
             ("KV = compute: never compute-bound →", t_never, "#222")]
    fig = fig_kv.cost_vs_context(grid, sw.usd_per_mtok, sw.fits, sw.bound, markers=marks, t_now=T,
                                 usd_now=float(sw.usd_per_mtok[i]),
                                 title=f"Cost per token against context at B = {B:g}")
    fig = with_play(fig, grid, sw.usd_per_mtok, label="T", unit="$/Mtok")
    return Shown(fig, (eq_kv.compute_crossover(s),),
                 f"Each sequence reads its whole KV cache every step, and that cost cannot be shared: past "
                 f"≈ {tokens(t_never)} tokens of context this model is memory-bound at any batch, and cost per token "
                 "grows linearly with context.",
                 "Cost per output token at this batch against context (log–log).")


def step_moe(view: View) -> Shown:
    s, B, T = view.system, view.batch, view.context
    note = ""
    if s.model.n_experts <= 0:
        m = presets.model_presets()[LECTURE_MOE]
        s = dataclasses.replace(s, model=m)
        note = f"The sidebar's model is dense; this step uses {m.name}. "
    hw = s.hardware
    D = int(hw.scaleup_domain_chips)
    E = int(s.model.n_experts)
    g_hi = max(4 * D, 2 * E, 64) if hw.scaleout_bandwidth_bytes_per_s else D
    g = np.unique(np.concatenate([np.round(np.geomspace(1, g_hi, 160)), [D, D + 1, 2 * D]]))
    g = g[(g >= 1) & (g <= g_hi)]
    at = cluster.moe_alltoall(s, B, gpus=g)
    sw = decode_step(s, B, T, chips=g, t_comm=np.stack([np.zeros_like(g), at.t_comm_s]))
    G = min(D, g_hi)
    now_at = cluster.moe_alltoall(s, B, gpus=G)
    now = decode_step(s, B, T, chips=G, t_comm=now_at.t_comm_s)
    fig = fig_moe.comm_vs_gpus(g, at.t_scaleup_s, at.t_scaleout_s, at.t_comm_s, sw.t_step_s[0], sw.t_step_s[1],
                               sw.bound[1], sw.fits[1], domain=D, g_now=G, t_step_now=float(now.t_step_s),
                               title=f"{s.model.name}: all-to-all and step time against G (B = {B:g})")
    on_g = s.with_(chips=G)
    return Shown(fig, (eq_moe.experts_per_gpu(on_g), eq_moe.alltoall_time(on_g, B)),
                 note + f"An expert layer's all-to-all stays on the fast scale-up links up to the domain's {D} "
                 "chips; spread it wider and part of every token's traffic crosses the scale-out network"
                 + (f", {hw.scaleup_bandwidth_bytes_per_s / hw.scaleout_bandwidth_bytes_per_s:.3g}× slower here "
                    "(the lecture: ~8×)" if hw.scaleout_bandwidth_bytes_per_s and hw.scaleup_bandwidth_bytes_per_s
                    else "") + ": one rack bounds an expert layer.",
                 "t_comm = the MoE all-to-all per decode step (dispatch + combine); the domain's edge marked.")


def step_pipeline(view: View) -> Shown:
    s, b, T = view.system, view.batch, view.context
    stages = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    pm = cluster.pipeline(s, b, T, stages)
    fig = fig_pipeline.memory_bars(stages, pm.weight_bytes_per_chip / 1e9, pm.kv_bytes_per_chip / 1e9,
                                   hbm_gb=s.hardware.hbm_bytes / 1e9, p_now=PIPELINE_STAGES,
                                   title=f"HBM per chip against pipeline stages (b = {b:g}, T = {tokens(T)})")
    return Shown(fig, (eq_pipeline.memory_per_chip(s, b, T, PIPELINE_STAGES),),
                 "Pipelining splits the layers over P racks: weights per chip fall as 1/P, but P micro-batches must "
                 "be in flight, so KV per chip does not move. It buys capacity, not bandwidth or latency.",
                 "Stacked: weights and KV per chip [GB]; dashed: the chip's HBM.")


def step_scaleup(view: View) -> Shown:
    s, B, T = view.system, view.batch, view.context
    grid = np.unique(np.concatenate([np.round(np.geomspace(1, 576, 120)), [8, 72, 144, 576]]))
    sw = decode_step(s, B, T, chips=grid)
    C = float(view.chips)
    now = decode_step(s, B, T)
    marks = [(8.0, "Hopper 8"), (72.0, "Blackwell 72"), (144.0, "Rubin Ultra 144"), (576.0, "576 dies")]
    lines = [fig_scaleup.Line("latency floor W/(C·bw)", sw.t_weights_s * 1e3, fig_scaleup.FLOOR_COLOR, dash="dot",
                              width=3),
             fig_scaleup.Line(f"latency per token at B = {B:g}", sw.t_step_s * 1e3, fig_scaleup.STEP_COLOR, sw.fits)]
    fig = fig_scaleup.sweep_vs_chips(grid, lines, title="Latency per token against scale-up size", unit="ms",
                                     y_title="time per token [ms]", now=(C, float(now.t_step_s) * 1e3, f"C = {C:g}"),
                                     marks=marks)
    t8, t72 = (float(s.weight_bytes / (c * s.hbm_bandwidth)) for c in (8, 72))
    return Shown(fig, tuple(eq_batch.latency_floor(s.with_(chips=c)) for c in (8, 72)),
                 "A bigger scale-up domain adds bandwidth as well as capacity: 8 Hopper GPUs → 72 Blackwell → "
                 "144 Rubin Ultra packages; every term of the step falls as 1/C, so the same model answers "
                 f"{t8 / t72:.3g}× faster on 72 chips than on 8.",
                 "Latency floor = all weights read once over the domain's aggregate bandwidth.")



# The chapter pages' dial defaults for their page-local inputs (the sidebar's system supplies the rest).
# views/training.py (tt_*): the lecture's 100B active, 500M tok/s shared by 10 models, 60 days, c_RL 3, ×3, ×3.
TRAIN_NA, TRAIN_RATE, TRAIN_DAYS, TRAIN_MODELS = 100e9, 500e6, 60.0, 10.0
TRAIN_COEF = {"c_rl": 3.0, "ineff_rl": 3.0, "ineff_inf": 3.0}
TRAIN_NA_LINES = (10e9, 30e9, 100e9, 300e9, 1e12)
TRAIN_RATES = np.geomspace(1e6, 1e11, 121)                   # global inference tok/s
CHINCHILLA_PER_PARAM = 20.0                                  # Hoffmann et al. 2022 (the model's default)
# views/prices.py (pr_*): Gemini 3 Pro's 200k tier, 100B active, 600 FLOP/B (fp8), dense reads; the
# architecture cross-check 1 KV layer × 2 × d_head 128 × 8 KV heads at fp8.
PRICE_TIER, PRICE_NA, PRICE_FPB, PRICE_READ = "gemini-3-pro", 100e9, 600.0, 1.0
PRICE_ARCH = (128, 8, 1.0, "fp8")                            # d_head, KV heads, KV layers, KV dtype
PRICE_CONTEXT = np.geomspace(1e3, 1e7, 401)
# views/memory_tiers.py (mt_*): a 5-minute hold, Claude Opus 4.6's cache prices drawn over the tiers.
TIER_HOLD_S, TIER_OFFER = 300.0, "claude-opus-4.6"
TIER_HOLDS = np.geomspace(1e-3, 1e7, 481)                    # 1 ms … 116 days
MEDIUM_LABELS = {"hbm": "HBM", "dram": "DDR", "flash": "flash", "disk": "disk"}
# views/pipeline.py (p): the lecture's P = 4 stages.
PIPELINE_STAGES = 4
# views/context.py (cx_*): read a fraction f = 0.1, the √T rule's knee K = 2,048.
CX_FRACTION, CX_KNEE = 0.1, 2048.0
CX_CONTEXT = (512.0, 1e8)


def _usd_md(x: float) -> str:
    r"""Dollars for st.markdown ('$' escaped, or it opens LaTeX): \$0.117, \$7.81×10⁻⁵."""
    if not (np.isfinite(x) and x > 0) or x >= 0.01:
        return usd(x).replace("$", "\\$")
    e = int(np.floor(np.log10(x)))
    return f"\\${x / 10 ** e:.3g}×10{str(e).translate(str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'))}"


def step_training(view: View) -> Shown:
    s = view.system
    na, rate, days, models = TRAIN_NA, TRAIN_RATE, TRAIN_DAYS, TRAIN_MODELS
    na_side = float(s.model.active_params)
    lines = sorted({*TRAIN_NA_LINES, na, na_side})
    rates = np.unique(np.append(TRAIN_RATES, rate))
    ot = overtrain(np.array(lines)[:, None], rates[None, :], days, models=models, **TRAIN_COEF)
    shape = np.shape(ot.overtrain_factor)
    i, j, k = lines.index(na), int(np.searchsorted(rates, rate)), lines.index(na_side)
    d_inf, d_pre, d_rl = (float(np.broadcast_to(a, shape)[i, j])
                          for a in (ot.inference_tokens, ot.pretrain_tokens, ot.rl_tokens))
    factor, factor_side = float(ot.overtrain_factor[i, j]), float(ot.overtrain_factor[k, j])
    pre_flops = float(phase_costs(na, d_pre, d_rl, d_inf, **TRAIN_COEF).pretrain_flops)
    chip_days = float(chip_seconds(pre_flops, s.flops)) / 86_400
    fig = fig_training.overtrain_vs_rate(rates, ot.overtrain_factor, lines, na_now=na, now=(rate, factor),
                                         title=f"Over-training against traffic ({days:g} days, {models:g} models)")
    fig = with_play(fig, rates, ot.overtrain_factor[i], label="R", unit="×", fmt=lambda r: f"{number(r)} tok/s")
    i_inf = TRAIN_COEF["ineff_inf"]
    side = "" if k == i else (f"; the sidebar's {s.model.name} ({number(na_side)} active) would be "
                              f"{factor_side:.3g}× over-trained")
    return Shown(fig, (eq_training.pretrain_tokens(na, rate, days, models, **TRAIN_COEF),
                       eq_training.overtraining(na, rate, days, models, **TRAIN_COEF)),
                 f"A model serving {number(rate / models)} tokens/s for {days:g} days should spend as much on "
                 f"pretraining as on inference, so it pretrains on {number(d_pre)} tokens — {factor:.3g}× "
                 f"Chinchilla's {CHINCHILLA_PER_PARAM:g} per parameter at {number(na)} active{side}. That "
                 f"pretraining alone is {number(chip_days)} chip-days of {s.hardware.name}.",
                 f"Over-training factor = pretraining tokens D_pre at equal pretraining, RL and inference costs "
                 f"(6·N·D_pre = 2·ineff·N·D_inf, ineff = {i_inf:g}) ÷ Chinchilla's 20·N_active, against the "
                 f"lab's global inference rate R [tokens/s] shared by n = {models:g} models; one line per N_active "
                 f"(bold: {number(na)}).")


def step_prices(view: View) -> Shown:
    s = view.system
    offers = presets.price_presets()
    tiered = [k for k, p in offers.items() if p.long_context_threshold_tokens is not None]
    if not tiered:
        raise ValueError("no price preset has a long-context tier")
    key = PRICE_TIER if PRICE_TIER in tiered else tiered[0]
    tier = offers[key]
    Na, fpb, f = PRICE_NA, PRICE_FPB, PRICE_READ
    table = pricing.price_table(offers, Na, fpb, f)
    i = table.keys.index(key)
    T_x = float(table.long_context_threshold_tokens[i])
    kv_imp = float(table.implied_kv_bytes_per_token[i])
    dh, kvh, kvl, dt = PRICE_ARCH
    kv_arch = float(pricing.kv_bytes_architecture(dh, kvh, kvl, DTYPE_BYTES[dt]))
    T = PRICE_CONTEXT
    roof = pricing.context_cost_multiple(T[None, :], Na, fpb, np.array([kv_imp, kv_arch])[:, None], f)
    jumps = np.array([table.long_input_jump[i], table.long_output_jump[i]])
    price = pricing.tier_price_multiple(T[None, :], T_x, jumps[:, None])
    T_arch = float(pricing.crossover_context(Na, fpb, kv_arch, f))
    who = tier.model or tier.name
    curves = [(f"roofline, implied KV {bytes_(kv_imp)}", roof[0], fig_prices.KV_COLOR, "solid"),
              (f"roofline, architecture KV {bytes_(kv_arch)}", roof[1], fig_prices.ARCH_COLOR, "dash")]
    base = (tier.input_usd_per_mtok, tier.output_usd_per_mtok)
    steps = [(f"{what} price ÷ ${b:g}", price[n], color) for n, (what, b, color) in
             enumerate((("input", base[0], fig_prices.INPUT_PRICE_COLOR),
                        ("output", base[1], fig_prices.OUTPUT_PRICE_COLOR))) if np.isfinite(jumps[n])]
    fig = fig_prices.context_cost(
        T, curves, steps, threshold=T_x,
        crossovers=[(T_x, 1.0, f"implied crossover {tokens(T_x)}", fig_prices.KV_COLOR),
                    (T_arch, 1.0, f"architecture crossover {tokens(T_arch)}", fig_prices.ARCH_COLOR)],
        title=f"Cost per token against context: {who}'s price tier")
    fig = with_play(fig, T, roof[0], label="T", unit="×", fmt=tokens)
    jump_text = " and ".join(f"{what} {jumps[n]:.3g}×" for n, what in enumerate(("input", "output"))
                             if np.isfinite(jumps[n]))
    hw = s.hardware
    unc = "kv" in table.uncertain[i] or "jump" in table.uncertain[i]
    return Shown(fig, (eq_prices.kv_from_tier(Na, fpb, f, T_x, dh, kvh, kvl, DTYPE_BYTES[dt]),),
                 f"{who}'s price steps up above {T_x:,.0f} tokens ({jump_text}). If that is where a token's KV "
                 f"read overtakes its {number(2 * Na)} FLOPs, the KV is ≈ {kv_imp:,.0f} B per token — 'almost "
                 f"two kilobytes', close to one shared KV layer of {kvh} heads × {dh} at {DTYPE_BYTES[dt]:g} byte "
                 f"({kv_arch:,.0f} B).",
                 f"Roofline cost per token at large batch ÷ its short-context value, max(1, T·kv·(F/bw) ÷ 2·N_a), "
                 f"with N_a = {number(Na)} and F/bw = {fpb:g} FLOP/B (the lecture's); steps: {who}'s list prices "
                 f"above {tokens(T_x)} ÷ below ({tier.meta['input_usd_per_mtok'].date}). For scale, the sidebar's "
                 f"{hw.name}: {hw.flops(s.precision.compute) / hw.hbm_bandwidth_bytes_per_s:,.0f} FLOP/B at "
                 f"{s.precision.compute}."
                 + (f" ⚠ {who}'s above-{tokens(T_x)} prices are flagged uncertain in the presets." if unc else ""))


def step_tiers(view: View) -> Shown:
    s = view.system
    hw, model = s.hardware, s.model
    kv = float(s.kv.bytes_per_token)             # ValueError for a model without a KV figure (the page says so)
    tiers = [hbm_tier(hw), *presets.load("tier").values()]
    names = [MEDIUM_LABELS.get(t.medium, t.name) for t in tiers] + ["recompute"]
    colors = [fig_tiers.MEDIUM_COLORS.get(t.medium, fig_tiers.GREY) for t in tiers] + [fig_tiers.RECOMPUTE_COLOR]
    rec = float(recompute_cost(s))
    hold = TIER_HOLD_S
    grid = np.unique(np.append(TIER_HOLDS, hold))
    i_now = int(np.searchsorted(grid, hold))
    costs = cache_tier_costs(tiers, kv, rec, grid)
    env = cheapest_envelope(costs)
    k_now, k_tier = int(costs.cheapest[i_now]), int(costs.cheapest_tier[i_now])
    best = float(costs.cheapest_usd[i_now])
    offer = presets.price_presets().get(TIER_OFFER)
    provider, refs, listed = None, [], ""
    if offer is not None and offer.cache_read_usd_per_mtok is not None:
        who = offer.model or offer.name
        y_list, how = list_cache_usd_per_mtok(offer, grid)
        # a short legend name: plotly sets every legend item to the longest one's width
        provider = fig_tiers.ProviderCurve(f"{who}: list price", y_list)
        listed = f" Purple dotted: {who}'s list price to hold a cached token for its own model: {how}."
        refs = [(f"{who} input ${offer.input_usd_per_mtok:g}/Mtok", offer.input_usd_per_mtok, fig_tiers.PROVIDER_COLOR),
                (f"cache hit ${offer.cache_read_usd_per_mtok:g}/Mtok", offer.cache_read_usd_per_mtok,
                 fig_tiers.PROVIDER_COLOR)]
    lines = [fig_tiers.TierLine(f"{names[n]} (drain {seconds(t.drain_s)})", costs.tier_usd[n] * 1e6, colors[n])
             for n, t in enumerate(tiers)]
    fig = fig_tiers.cost_vs_hold(grid, lines, rec * 1e6, costs.cheapest, names, colors,
                                 now=(hold, best * 1e6, f"{names[k_now]} at {seconds(hold)}"),
                                 ttls=[(TTL_5M_S, "5-min TTL"), (TTL_1H_S, "1-h TTL")], provider=provider, refs=refs,
                                 title=f"Holding one token's KV for t, then reading it back ({model.name})")
    fig = with_play(fig, grid, costs.cheapest_usd * 1e6, label="t", unit="$/Mtok", fmt=duration)
    handover = " → ".join(names[n] + (f" up to {duration(t)}" if m < len(env.switch_s) else "")
                          for m, (n, t) in enumerate(zip(env.order, (*env.switch_s, np.inf))))
    if k_now == len(tiers):
        where = f"no tier beats recomputing it ({_usd_md(rec * 1e6)}/Mtok)"
    else:
        where = (f"it is cheapest in {names[k_now]}: {_usd_md(best * 1e6)}/Mtok, {number(rec / best)}× less than "
                 f"recomputing it ({_usd_md(rec * 1e6)}/Mtok)")
    # The tiers' drain times are in the legend: their equation (one row a tier, on the page) would not fit the slide.
    return Shown(fig, (eq_tiers.hold_or_recompute(s, tiers[k_tier], names[k_tier], kv, hold),),
                 f"To keep a returning prompt's KV ({bytes_(kv)} per token for {model.name}) for {seconds(hold)}, "
                 f"{where}. The cheapest place moves to slower, cheaper-per-byte tiers as the hold time grows — "
                 f"{handover}. The lecture's rule of thumb: the tier whose drain time matches the hold time.",
                 "Cost per million tokens of holding a token's KV for the hold time t and reading it back once "
                 "(hold = KV ÷ capacity × device \\$/s × t; read-back = KV ÷ bandwidth × device \\$/s, 0 from HBM), "
                 "against recomputing it by prefill (dashed); thick: the cheapest. Drain time = capacity ÷ "
                 "bandwidth." + listed + " ⚠ DDR, flash and disk prices are estimates (purchase price over 4 years), "
                 "flagged uncertain.")


def step_context(view: View) -> Shown:
    s, B, T = view.system, view.batch, view.context
    model = s.model
    kv = s.kv                                    # ValueError for a model without a KV figure (the page says so)
    F, bw, Na = s.flops, s.hbm_bandwidth, model.active_params
    f, knee = CX_FRACTION, CX_KNEE
    tc_dense, tc_frac = (float(x) for x in compute_crossover_context(kv, Na, F, bw, "fraction", np.array([1.0, f])))
    tc_sqrt = float(compute_crossover_context(kv, Na, F, bw, "sqrt", knee))
    kv_ref = KVLayout(LECTURE_KV_ELEMENTS_PER_TOKEN * s.precision.kv_bytes_per_element)
    tc_ref = float(compute_crossover_context(kv_ref, LECTURE_ACTIVE_PARAMS, F, bw))
    t_w = float(kv_crossover_context(s, B))
    grid = np.unique(np.concatenate([np.geomspace(*CX_CONTEXT, 241), [T]]))
    i_now = int(np.searchsorted(grid, T))
    dense = decode_step(s, B, grid)
    frac = decode_step(s.with_(sparse_attention="fraction", sparse_param=f), B, grid)
    sqrt_ = decode_step(s.with_(sparse_attention="sqrt", sparse_param=knee), B, grid)
    terms = cost_terms(dense)
    nofit = ~np.asarray(dense.fits, bool)
    curves = [fig_context.Curve("dense attention (reads T)", dense.usd_per_mtok, fig_context.DENSE_COLOR),
              fig_context.Curve(f"reads f·T, f = {f:g}", frac.usd_per_mtok, fig_context.FRACTION_COLOR, "dash", 3.5),
              fig_context.Curve(f"reads √(K·T), K = {tokens(knee)}", sqrt_.usd_per_mtok, fig_context.SQRT_COLOR,
                                "dashdot", 3.5)]
    floors = [fig_context.Curve("matmul cost alone (compute floor)", terms["matmul"], fig_context.COMPUTE_COLOR,
                                "dot", 2),
              fig_context.Curve("weight read alone (÷ B)", terms["weights"], fig_context.WEIGHTS_COLOR, "dot", 2)]
    marks = [("KV = compute (dense)", tc_dense, "#222"), (f"KV = weights (B = {B:g})", t_w, fig_context.WEIGHTS_COLOR),
             (f"KV = compute, f = {f:g}", tc_frac, fig_context.FRACTION_COLOR)]
    if not np.isclose(tc_sqrt, tc_dense, rtol=1e-6):   # below the knee the √T rule reads every token: the same line
        marks.append(("KV = compute, √T", tc_sqrt, fig_context.SQRT_COLOR))
    fig = fig_context.cost_vs_context(grid, curves, floors=floors, markers=marks, t_now=T,
                                      usd_now=float(dense.usd_per_mtok[i_now]),
                                      nofit_from=float(grid[np.argmax(nofit)]) if nofit.any() else None,
                                      band=STALLED_CONTEXT_TOKENS,
                                      title=f"Cost per token against context ({model.name}, B = {B:g})")
    fig = with_play(fig, grid, dense.usd_per_mtok, label="T", unit="$/Mtok", fmt=tokens)
    sparse = () if kv.window_bytes_per_token > 0 else (eq_context.sparse_crossovers(s, f, knee),)
    return Shown(fig, (eq_kv.compute_crossover(s), eq_context.reference_crossover(s, LECTURE_ACTIVE_PARAMS, kv_ref),
                       *sparse),
                 f"Past ≈ {tokens(tc_dense)} tokens one sequence's KV read takes longer than its matmuls, so no "
                 f"batch makes {model.name}'s decode compute-bound and every extra token of context costs more. "
                 f"The lecture's frontier model ({number(LECTURE_ACTIVE_PARAMS)} active, "
                 f"{bytes_(kv_ref.full_bytes_per_token)} of KV per token) crosses at ≈ {tokens(tc_ref)} on this chip — "
                 f"only the chip's F/bw enters ({F / bw:,.0f} here; the lecture calls it stable near 300, the chip "
                 f"presets are charted on the Context page). Reading a fraction "
                 f"f = {f:g} moves the crossover to {tokens(tc_frac)}, at a quality risk.",
                 f"Cost per output token at B = {B:g} against context (log–log): dense attention, reading a fraction "
                 f"f of the context, and reading √(K·T) past a knee K; dotted: the matmul and weight-read floors; "
                 f"yellow: 100–200k, where frontier context sat; grey: the batch's KV no longer fits in HBM.")


STEPS: list[Step] = [
    Step("floor", "Batch and the latency floor", 0, "How batch size affects token cost and speed",
         "batch", step_floor, play="batch", dial="batch"),
    Step("balance", "The balance batch: ≈ 300 × sparsity", 0, "How batch size affects token cost and speed",
         "batch", step_balance, play="batch", dial="batch"),
    Step("fast", "Fast mode: speed for price", 0, "How batch size affects token cost and speed",
         "fast-mode", step_fast, dial="context"),
    Step("kv", "The KV-cache crossover", 0, "How batch size affects token cost and speed",
         "kv-cache", step_kv, play="context", dial="batch"),
    Step("moe", "MoE on a rack", 1919, "How MoE models are laid out across GPU racks",
         "moe", step_moe, dial="batch"),
    Step("pipeline", "Pipelining: capacity, not bandwidth", 2822, "How pipeline parallelism spreads layers",
         "pipeline", step_pipeline, dial="context"),
    Step("scaleup", "Scale-up generations: bigger racks buy bandwidth", 1919,
         "How MoE models are laid out across GPU racks", "scale-up", step_scaleup, dial="batch"),
    Step("training", "Over-training: ≈ 100× past Chinchilla", 4729, "RL and ~100× over-training beyond Chinchilla",
         "training", step_training, play="rate"),
    Step("prices", "Prices decoded: a price tier reads out the KV", 5572,
         "Deducing long-context memory costs from API pricing", "prices", step_prices, play="context"),
    Step("tiers", "Memory tiers: hold it where it drains in time", 5572,
         "Deducing long-context memory costs from API pricing", "memory-tiers", step_tiers,
         play="hold time"),
    Step("context", "Context limits: why context stalled near 100–200k", 5572,
         "Deducing long-context memory costs from API pricing", "context", step_context,
         play="context", dial="batch"),
]
