"""Pipelining — capacity, not bandwidth (lecture §1.6–1.8, §2.10; 00:47:02 and 01:03:27).

P stages with P micro-batches of b in flight: weights per chip fall as 1/P, KV per chip does not
move (the P's cancel); each stage boundary adds a hop to a token's latency; a cut between racks
must not be slower than the MoE all-to-all inside a stage; training, unlike inference, has a bubble.
"""

import numpy as np
import streamlit as st

from model.cluster import (
    moe_layer_count,
    pipeline,
    pipeline_cut_check,
    pipeline_cut_ratio,
    training_bubble_fraction,
)
from ui.elements import export, metrics
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import pipeline as eq
from ui.equations import tex_num
from ui.figures import pipeline as fig_pipeline
from ui.format import bytes_, number, seconds, tokens
from ui.state.dials import choice_dial, number_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("pipeline",)
P_OPTIONS = [1, 2, 3, 4, 6, 8, 16]               # pipeline stages offered (and the latency chart's x)
BAR_STAGES = [1, 2, 4, 8, 16]                    # the memory bars (plus the current P)
BUBBLE_STAGES = [2, 4, 8, 16]                    # the grey training-bubble curves (plus the current P)
MB_OPTIONS = ["4P", 1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
M_GRID = 2.0 ** np.arange(0, 10)                 # training micro-batches 1 … 512
HOP_MAX_MS = 20.0
LECTURE_OUT_OVER_UP = 1.0 / 8.0                  # "scale-out is ~8x slower than scale-up" (§1.8, §2.9)
LECTURE_K = 8                                    # the lecture's "it could be 8 by itself" (DeepSeek, §1.8)


view = current_view()
s, b, T = view.system, view.batch, view.context
C = float(view.chips)
hw, model = s.hardware, s.model
ss = st.session_state

page_header(heading("pipeline"), view)

# ---------------------------------------------------------------- page dials (URL-backed)
page_dial(choice_dial("p", P_OPTIONS, 4, PAGE))
page_dial(number_dial("hop", 0, HOP_MAX_MS, 0.0, PAGE))
page_dial(choice_dial("mb", MB_OPTIONS, "4P", PAGE))
page_dial(choice_dial("cut", ["preset", "1/8"], "preset", PAGE))

c = st.columns([1.3, 1.3, 1.5, 1.2])
c[0].select_slider("Pipeline stages P (racks in a row)", options=P_OPTIONS, key="p", persist_state="session",
                   help="Each stage holds 1/P of the layers on its own C chips; P micro-batches of b are in "
                        "flight, so every stage is busy. The lecture's example: P = 4.")
c[1].slider("Hop latency per stage boundary [ms]", 0.0, HOP_MAX_MS, step=0.1, format="%.1f", key="hop",
            persist_state="session",
            help="Rack-to-rack hop: 'on the order of a few milliseconds … could be off by an order of magnitude' "
                 "(lecture §2.10). 0 = the ideal; Dwarkesh's estimate is ~10 ms per token extra at P = 4.")
c[2].select_slider("Training micro-batches m (bubble chart)", options=MB_OPTIONS, key="mb", persist_state="session",
                   format_func=lambda v: "4·P" if v == "4P" else str(v),
                   help="For the contrast with training only: micro-batches per optimiser step. Default 4·P.")
c[3].radio("Scale-out ÷ scale-up bandwidth", ["preset", "1/8"], key="cut", horizontal=True, persist_state="session",
           format_func={"preset": "chip preset", "1/8": "lecture 1/8"}.get,
           help="The cut check's bandwidth ratio: the chip preset's per-direction figures (network Gb/s ÷ 8, "
                "bidirectional link figures halved), or the lecture's round 'scale-out is ~8x slower'.")

P = int(ss["p"])
hop_s = float(ss["hop"]) / 1e3
m_now = 4 * P if ss["mb"] == "4P" else int(ss["mb"])

# ---------------------------------------------------------------- memory and latency: one call for every P
stages = np.array(P_OPTIONS, float)
pm = pipeline(s.with_(pipeline_hop_s=hop_s), b, T, stages)
i = P_OPTIONS.index(P)
w_now, kv_now = float(pm.weight_bytes_per_chip[i]), float(pm.kv_bytes_per_chip[i])
tot_now, lat_now, tps_now = float(pm.total_bytes_per_chip[i]), float(pm.latency_s[i]), float(pm.tokens_per_s[i])
t_step = float(pm.latency_s[0])                  # P = 1: no hops, the whole model's step
fits = tot_now <= hw.hbm_bytes

# ---------------------------------------------------------------- cut check: one call for both bandwidth ratios
bw_up, bw_out = hw.scaleup_bandwidth_bytes_per_s, hw.scaleout_bandwidth_bytes_per_s
has_preset = bool(bw_up and bw_out)
moe = bool(model.is_moe and model.experts_per_token)
k = int(model.experts_per_token) if moe else LECTURE_K
n_layers = int(model.n_layers) if model.n_layers else None
# Only MoE layers carry the all-to-all; a dense model's illustration (k = 8) counts every layer.
L_cut = moe_layer_count(model) if model.is_moe else n_layers
use_preset = ss["cut"] == "preset" and has_preset
cut_rows = ([("preset", bw_up, bw_out)] if has_preset else []) + [("1/8", 1.0 / LECTURE_OUT_OVER_UP, 1.0)]
sel = 0 if use_preset else len(cut_rows) - 1
cut_now = pipeline_cut_check(model, cut_rows[sel][1], cut_rows[sel][2], P,
                             experts_per_token=None if moe else LECTURE_K)
ratio_now, cut_reason = float(cut_now.ratio[0]), cut_now.reason[0]
if L_cut:
    layers = np.arange(1, L_cut + 1, dtype=float)
    lps_now = L_cut / P
    ratio = pipeline_cut_ratio(np.array([[r[1]] for r in cut_rows], float), np.array([[r[2]] for r in cut_rows], float),
                               k, layers[None, :])

# ---------------------------------------------------------------- training bubble: one call, P × m
b_stages = sorted({*BUBBLE_STAGES, P})
m_grid = np.unique(np.append(M_GRID, m_now))
bubble = training_bubble_fraction(np.array(b_stages, float)[:, None], m_grid[None, :])
bubble_now = float(bubble[b_stages.index(P), int(np.searchsorted(m_grid, m_now))])

# ---------------------------------------------------------------- headline numbers
metrics.grid([    # two rows (4 + 3): seven numbers in one row truncate
    Metric("Weights per chip", bytes_(w_now), help="W/(C·P): each stage holds 1/P of the layers on its C chips."),
    Metric("KV per chip", bytes_(kv_now), help="b·kv(T)/C: a stage holds its layers' KV for all P micro-batches "
           "— P × b sequences × 1/P of the layers. The P's cancel."),
    Metric("HBM per chip", bytes_(tot_now), delta="fits" if fits else f"exceeds {bytes_(hw.hbm_bytes)}",
           delta_color="normal" if fits else "inverse"),
    Metric("Latency per token", seconds(lat_now), help="The P stage times (they add up to the whole model's "
           "step) plus P hops."),
    Metric("Tokens/s per replica", number(tps_now), help=f"P·b = {P * b:g} sequences in flight on C·P = "
           f"{C * P:g} chips, one token each per {seconds(lat_now)}."),
    Metric("Cut ratio t_up/t_out", "—" if not np.isfinite(ratio_now) else f"{ratio_now:.3g}",
           help="Scale-up all-to-all time of a stage's MoE layers ÷ the scale-out time of its cut; want ≥ 1."
                + (f" No ratio: {cut_reason}." if cut_reason else "")),
    Metric("Training bubble", f"{100 * bubble_now:.3g} %", help=f"(P−1)/(m+P−1) at P = {P}, m = {m_now}. "
           "Inference has none."),
], columns=4)

st.markdown(f"**Pipelining buys memory capacity, not bandwidth or latency.** One replica is P = {P} stages of "
            f"C = {C:g} chips (C is the lecture's E, the expert-parallel extent); micro-batch b = {b:g} (the "
            f"sidebar's batch), so P·b = {P * b:g} sequences are in flight at context T = {tokens(T)}.")

# ---------------------------------------------------------------- row 1: memory, latency
c1, c2 = st.columns(2)
with c1:
    latex(eq.memory_per_chip(s, b, T, P), key="pipeline.memory")
    bar_mask = np.isin(stages, BAR_STAGES) | (stages == P)
    fig = fig_pipeline.memory_bars(stages[bar_mask], pm.weight_bytes_per_chip[bar_mask] / 1e9,
                                   pm.kv_bytes_per_chip[bar_mask] / 1e9, hbm_gb=hw.hbm_bytes / 1e9, p_now=P,
                                   title=f"HBM per chip against stages (b = {b:g}, T = {tokens(T)})")
    export.chart(fig, key="pipeline_memory")
    st.caption("HBM per chip = weights W/(C·P), which shrink with every stage, plus KV b·kv(T)/C, which does "
               "not move: a stage keeps P micro-batches' KV for 1/P of the layers. 'Even two [stages] is often "
               "enough'; after that the KV dominates.")
with c2:
    latex(eq.token_latency(s.with_(pipeline_hop_s=hop_s), b, T, P), key="pipeline.latency")
    fig = fig_pipeline.latency_vs_stages(stages, pm.latency_s * 1e3, t_step * 1e3, pm.tokens_per_s, p_now=P,
                                         latency_now_ms=lat_now * 1e3, tps_now=tps_now, hop_ms=hop_s * 1e3,
                                         title="Per-token latency and tokens/s against stages")
    export.chart(fig, key="pipeline_latency")
    st.caption(f"Per-token latency = the stages one after another (together the whole model's step, "
               f"{seconds(t_step)}) plus one hop per stage; tokens/s of a replica grow with P because it has P "
               f"times the chips — per chip it is {number(tps_now / (C * P))} tok/s at P = {P}"
               + (" and the same at every P (no hops: pipelining is neutral)." if not hop_s else
                  ", falling with P as hops stretch the step.")
               + " The lecture: a hop is 'a few milliseconds … could be off by an order of magnitude'.")

# ---------------------------------------------------------------- row 2: cut check, training bubble
c3, c4 = st.columns(2)
with c3:
    if L_cut:
        lps_tex = rf"\frac{{{L_cut}}}{{{P}}}"
        if use_preset:
            frac = rf"\frac{{{tex_num(bw_out, 'B/s')}}}{{{tex_num(bw_up, 'B/s')}}}"
        else:
            frac = r"\frac{1}{8}"
        L_sym = "L_{moe}" if moe else "L"
        latex(r"P = 1:\ \text{one stage, no cut to check}" if P == 1 else
              rf"\begin{{aligned}}\frac{{t_{{scaleup}}}}{{t_{{scaleout}}}} &= \frac{{bw_{{out}}}}{{bw_{{up}}}}"
              rf"\cdot 2\cdot k\cdot\frac{{{L_sym}}}{{P}}\\ &= {frac}\cdot 2\cdot {k}\cdot {lps_tex}\\ "
              rf"&= {ratio_now:.3g}\ "
              + (r"\ge 1\ \checkmark" if ratio_now >= 1 else r"< 1\ \text{(cut too slow)}") + r"\end{aligned}",
              key="pipeline.cut")
        # Legend names short enough for a phone's width: the chip is named in the caption above.
        names = {"preset": f"chip: {bw_out / 1e9:.4g} ÷ {bw_up / 1e9:.4g} GB/s" if has_preset
                 else "", "1/8": "lecture: scale-out = 1/8"}
        colors = {"preset": "#4C78A8", "1/8": "#7F3C8D"}
        curves = [(names[r[0]] + f" (k = {k})", ratio[j], colors[r[0]], j == sel) for j, r in enumerate(cut_rows)]
        fig = fig_pipeline.cut_ratio_vs_layers(layers, curves, now=None if P == 1 else (lps_now, ratio_now),
                                               title=f"Cut check against MoE layers per stage (k = {k})" if moe
                                               else f"Cut check, illustrated with k = {k} (dense model)",
                                               x_title="MoE layers per stage (L_moe / P)" if moe
                                               else "layers per stage (L / P)")
        export.chart(fig, key="pipeline_cut")
        moe_note = (f" Only MoE layers carry the all-to-all: {model.name} has {L_cut} MoE layers of {n_layers}, "
                    f"so a stage holds {L_cut}/{P} = {L_cut / P:.3g} of them." if moe and n_layers else "")
        st.caption("Cut ratio = a stage's MoE all-to-all time on scale-up links (2·k activations per token per "
                   "MoE layer: dispatch + combine) ÷ the cut's one activation per token over scale-out; ≥ 1 means "
                   "the cut is not the bottleneck. The lecture: (1/8)·2·8·1 = 2 ≥ 1, so even one MoE layer per "
                   "rack works." + moe_note
                   + (" At P = 1 there is a single stage and no cut, so there is no ratio to show." if P == 1 else ""))
    if not moe:
        st.info(f"**{model.name} is dense**: there is no MoE all-to-all inside a stage, so the lecture's cut "
                f"check does not apply as such (a dense stage's scale-up traffic is tensor-parallel all-reduces). "
                f"Shown as an illustration with the lecture's k = {LECTURE_K} experts per token over every layer.",
                icon="ℹ️")
    if ss["cut"] == "preset" and not has_preset:
        st.info(f"{hw.name} has no scale-out bandwidth figure in the presets: using the lecture's 1/8.", icon="ℹ️")
    if not L_cut:
        st.info(f"{model.name} has no layer count in the presets: the cut check needs it.", icon="ℹ️")
with c4:
    latex(eq.training_bubble(P, m_now), key="pipeline.bubble")
    st.caption(f"Inference has no bubble: P = {P} micro-batches of b = {b:g} are always in flight.")
    fig = fig_pipeline.bubble_vs_microbatches(m_grid, b_stages, bubble, p_now=P, m_now=m_now, bubble_now=bubble_now,
                                              title=f"Training bubble against micro-batches (P = {P})")
    export.chart(fig, key="pipeline_bubble")
    st.caption("Training bubble = the share of a step a stage sits idle (GPipe/1F1B): the last stages wait at "
               "the start of a batch, the first at the end, until the backward pass. Inference streams P "
               "micro-batches through continuously, so it has none.")

st.markdown("**Why 'pipelining is not wise'** (§2.10): it fixes capacity, which a bigger scale-up domain also "
            "fixes while adding bandwidth; and it constrains the architecture (attention to earlier layers' "
            "residuals, mixed sliding/global layers unbalancing stages). DeepSeek's practice: expert parallelism "
            "up to the scale-up size, then at most ~2 stages.")
