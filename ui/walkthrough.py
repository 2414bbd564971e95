"""The presenter walkthrough: the lecture's argument as steps, each one chart, one equation with
today's numbers, one plain sentence and a link to that moment of the video.

Every step calls the model (one vectorised call per chart) and a chapter page's figure builder —
no physics here, only which quantities to show.  A step is a function of the current `View`
returning a `Shown`; `STEPS` orders them as the lecture does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from model import (
    cluster,
    context_never_compute_bound,
    decode_step,
    kv_crossover_context,
    presets,
    system_balance_batch,
)
from model.economics import fast_mode_batches

from . import fig_fast_mode, fig_kv, fig_moe, fig_pipeline, fig_scaleup, figures
from .dials import BATCH_OPTIONS
from .equations import params, tex_int, tex_num
from .format import bytes_, number, seconds, tokens
from .view import View

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
    video_s: int                        # where in the video (seconds; chapter starts from lecture.md)
    chapter: str                        # the lecture chapter it belongs to
    page: str                           # the chapter page's script (for st.page_link)
    build: Callable[[View], Shown]
    play: str = ""                      # "batch" or "context": the chart can sweep that dial

    @property
    def video_url(self) -> str:
        return f"{VIDEO}?t={self.video_s}"


def _t(x: float) -> str:
    """Seconds for KaTeX in ms below a second."""
    return rf"{x * 1e3:.3g}\,\text{{ms}}" if 0 < x < 1 else tex_num(x, "s")


def batch_grid(B: float) -> np.ndarray:
    return np.unique(np.concatenate([np.geomspace(1, 65536, 121), BATCH_OPTIONS, [B]]))


def with_play(fig: go.Figure, x: np.ndarray, y: np.ndarray, *, label: str, unit: str, axis: str = "") -> go.Figure:
    """Add a client-side sweep: a marker that runs along (x, y) with Play/Pause buttons (Plotly frames)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
    x, y = x[ok], y[ok]
    if x.size < 2:
        return fig
    idx = np.unique(np.round(np.linspace(0, x.size - 1, min(60, x.size))).astype(int))
    marker = {"type": "scatter", "x": [x[idx[0]]], "y": [y[idx[0]]], "mode": "markers+text",
              "name": f"sweep ({label})",
              "marker": {"size": 18, "color": "#FF7F0E", "line": {"width": 2, "color": "#000"}},
              "text": [f"{label} = {x[idx[0]]:,.4g}"], "textposition": "top center", "textfont": {"size": 18},
              "hovertemplate": f"{label} = %{{x:,.4g}}<br>%{{y:.4g}} {unit}<extra></extra>", "showlegend": False}
    if axis:
        marker.update(xaxis=f"x{axis}", yaxis=f"y{axis}")
    data = [*fig.data, marker]
    n = len(data) - 1
    frames = [{"name": str(i), "traces": [n],
               "data": [{"x": [float(x[i])], "y": [float(y[i])], "text": [f"{label} = {x[i]:,.4g}"]}]} for i in idx]
    layout = fig.layout.to_plotly_json()
    top = float(layout.get("margin", {}).get("t", 60) or 60)
    layout["margin"] = {**layout.get("margin", {}), "t": max(top, 90)}
    layout["updatemenus"] = [{
        "type": "buttons", "direction": "left", "x": 1.0, "xanchor": "right", "y": 1.16, "yanchor": "top",
        "pad": {"r": 4, "t": 4}, "showactive": False, "font": {"size": 16},
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
    tex = (rf"t_{{step}} = \max\Big(\frac{{2N_aB}}{{C\,F}},\ \frac{{W + B\,kv(T)}}{{C\,bw}}\Big),\qquad "
           rf"t_{{floor}} = \frac{{W}}{{C\,bw}} = \frac{{{tex_num(s.weight_bytes, 'B')}}}"
           rf"{{{C:g}\times{tex_num(s.hbm_bandwidth, 'B/s')}}} = {_t(floor)}")
    return Shown(fig, (tex,),
                 f"Every step reads all {bytes_(s.weight_bytes)} of weights once, so no "
                 f"batch is faster than {seconds(floor)} per token: at small batch, more sequences ride along for "
                 f"free (B = {B:g} now: {seconds(float(now.t_step_s))}, {now.bound}-bound).",
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
    ratio = float(sw.usd_per_mtok[0] / np.nanmin(np.where(sw.fits, sw.usd_per_mtok, np.nan)))
    tex = (rf"B^* = \frac{{F}}{{bw}}\cdot\frac{{N_{{total}}}}{{N_a}}\cdot\frac{{\text{{bytes/param}}}}{{2}} = "
           rf"{F / bw:.0f}\times{s.model.sparsity:.3g}\times\frac{{{s.precision.weight_bytes_per_param:g}}}{{2}}"
           rf" = {tex_int(b0)}")
    return Shown(fig, (tex,),
                 f"The weight fetch is shared by the batch, compute is not: cost falls until B* ≈ {number(b0)} "
                 f"(F/bw ≈ {F / bw:.0f} × sparsity {s.model.sparsity:.3g}), then stays flat. Unbatched costs "
                 f"{number(ratio)}× the cheapest batch that fits.",
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
        tex = (rf"\frac{{t(B_{{std}})}}{{t(B_{{fast}})}} = {S:.3g},\quad "
               rf"\frac{{t(B_{{fast}})/B_{{fast}}}}{{t(B_{{std}})/B_{{std}}}} = {Pm:.3g}\ \Rightarrow\ "
               rf"B_{{std}} = {tex_int(fm.batch_standard)},\ B_{{fast}} = {tex_int(fm.batch_fast)}")
        sentence = (f"{who}: {Pm:.3g}× the price for {S:.3g}× the speed is simply a smaller batch — "
                    f"B ≈ {number(fm.batch_fast)} instead of {number(fm.batch_standard)}: each step is shorter, "
                    "but fewer tokens share the weight fetch.")
    else:
        tex = rf"\text{{no batches give }}{S:.3g}\times\text{{ speed for }}{Pm:.3g}\times\text{{ price here}}"
        sentence = f"On this system no pair of batches gives {who}'s {S:.3g}× speed for {Pm:.3g}× price: {fm.reason}"
    return Shown(fig, (tex,), sentence, "Left: latency per token; right: cost per token; both against batch.")


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
    kv1 = float(s.kv_read(1.0))
    tex = (rf"\frac{{B\,kv(T)}}{{bw}} = \frac{{2N_aB}}{{F}}\ \Rightarrow\ T_{{never}} \approx "
           rf"\frac{{2N_a\,bw}}{{F\cdot kv_1}} = \frac{{2\times{params(s.model.active_params)}\times"
           rf"{tex_num(s.hbm_bandwidth, 'B/s')}}}{{{tex_num(s.flops, 'FLOP/s')}\times{tex_num(kv1, 'B')}}}"
           rf" \approx {tex_int(t_never)}\ \text{{tokens}}")
    return Shown(fig, (tex,),
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
                               t_comm_now=float(now_at.t_comm_s),
                               title=f"{s.model.name}: all-to-all and step time against G (B = {B:g})")
    per = float(cluster.experts_per_gpu(E, G))
    tex = (rf"\text{{experts/GPU}} = \lceil E/G\rceil = \lceil {E}/{G}\rceil = {per:g},\qquad "
           rf"t_{{comm}}(G{{=}}{G}) = {_t(float(now_at.t_comm_s))}")
    return Shown(fig, (tex,),
                 note + f"An expert layer's all-to-all stays on the fast scale-up links up to the domain's {D} "
                 "chips; spread it wider and part of every token's traffic crosses the ~8× slower scale-out "
                 "network: one rack bounds an expert layer.",
                 "t_comm = the MoE all-to-all per decode step (dispatch + combine); the domain's edge marked.")


def step_pipeline(view: View) -> Shown:
    s, b, T = view.system, view.batch, view.context
    stages = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    pm = cluster.pipeline(s, b, T, stages)
    fig = fig_pipeline.memory_bars(stages, pm.weight_bytes_per_chip / 1e9, pm.kv_bytes_per_chip / 1e9,
                                   hbm_gb=s.hardware.hbm_bytes / 1e9, p_now=4,
                                   title=f"HBM per chip against pipeline stages (b = {b:g}, T = {tokens(T)})")
    C = view.chips
    tex = (rf"c_{{mem}} = \frac{{W}}{{C\,P}} + \frac{{b\,kv(T)}}{{C}} = \frac{{{tex_num(s.weight_bytes, 'B')}}}"
           rf"{{{C:g}\,P}} + {tex_num(float(pm.kv_bytes_per_chip[0]), 'B')}")
    return Shown(fig, (tex,),
                 "Pipelining splits the layers over P racks: weights per chip fall as 1/P, but P micro-batches must "
                 "be in flight, so KV per chip does not move. It buys capacity, not bandwidth or latency.",
                 "Stacked: weights and KV per chip [GB]; dashed: the chip's HBM.")


def step_scaleup(view: View) -> Shown:
    s, B, T = view.system, view.batch, view.context
    hw = s.hardware
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
    tex = (rf"t_{{floor}} = \frac{{W}}{{C\,bw}}:\quad C{{=}}8:\ {_t(t8)},\qquad C{{=}}72:\ {_t(t72)}"
           rf"\qquad\text{{({hw.name})}}")
    return Shown(fig, (tex,),
                 "A bigger scale-up domain adds bandwidth as well as capacity: 8 Hopper GPUs → 72 Blackwell → "
                 "144 Rubin Ultra packages; every term of the step falls as 1/C, so the same model answers "
                 f"{t8 / t72:.3g}× faster on 72 chips than on 8.",
                 "Latency floor = all weights read once over the domain's aggregate bandwidth.")


STEPS: list[Step] = [
    Step("floor", "Batch and the latency floor", 0, "How batch size affects token cost and speed",
         "views/batch.py", step_floor, play="batch"),
    Step("balance", "The balance batch: ≈ 300 × sparsity", 0, "How batch size affects token cost and speed",
         "views/batch.py", step_balance, play="batch"),
    Step("fast", "Fast mode: speed for price", 0, "How batch size affects token cost and speed",
         "views/fast_mode.py", step_fast),
    Step("kv", "The KV-cache crossover", 0, "How batch size affects token cost and speed",
         "views/kv_cache.py", step_kv, play="context"),
    Step("moe", "MoE on a rack", 1919, "How MoE models are laid out across GPU racks",
         "views/moe_layout.py", step_moe),
    Step("pipeline", "Pipelining: capacity, not bandwidth", 2822, "How pipeline parallelism spreads layers",
         "views/pipelining.py", step_pipeline),
    Step("scaleup", "Scale-up generations: bigger racks buy bandwidth", 1919,
         "How MoE models are laid out across GPU racks", "views/scale_up.py", step_scaleup),
]
