"""Rematerialisation — spend compute to save memory, the KV cache's mirror image (lecture §2.13; 02:04:02).

Training keeps every layer's activations for the backward pass: memory linear in depth, "can be the
largest memory footprint during training".  A RevNet builds each layer as a Feistel step,
(x, y) → (y + f(x), x), so a layer's input is read back from its output (y = z − f(x)) and the
backward pass rebuilds the activations layer by layer: activation memory stops growing with depth,
for about one extra forward pass.  Plain activation checkpointing (√L checkpoints, Chen et al. 2016)
makes the same trade less completely.  The KV cache does the opposite: memory spent to save compute.
Per-layer activation bytes: Korthikanti et al. 2022 (see model/remat.py for the formula and its terms).
"""

import numpy as np
import streamlit as st

from model import remat
from ui.elements import export, metrics
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import params, tex_int, tex_num
from ui.figures import remat as fig_remat
from ui.figures.remat import Line
from ui.format import bytes_, number, seconds, tokens
from ui.state.dials import choice_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("remat",)
SEQ_OPTIONS = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]
MB_OPTIONS = [1, 2, 4, 8, 16, 32, 64]
TP_OPTIONS = [1, 2, 4, 8, 16, 32, 64, 72]
ATTN_OPTIONS = list(remat.ATTENTION_KINDS)
VIDEO = "https://youtu.be/xmkSf5IS-zw?t=7442"   # 02:04:02 convergent evolution: nets and cryptography
ADAM_BYTES_PER_PARAM = 16.0   # bf16 weights 2 + bf16 grads 2 + fp32 master, m, v 12 (Rajbhandari et al. 2020, ZeRO §3)


def tex_bytes(x: float) -> str:
    return tex_num(x, "B")


view = current_view()
s, T = view.system, view.context
hw, model = s.hardware, s.model
ss = st.session_state

page_header(heading("remat"), view)

# ---------------------------------------------------------------- page dials (URL-backed)
page_dial(choice_dial("rm_seq", SEQ_OPTIONS, 4096, PAGE))
page_dial(choice_dial("rm_mb", MB_OPTIONS, 1, PAGE))
page_dial(choice_dial("rm_tp", TP_OPTIONS, 1, PAGE))
page_dial(choice_dial("rm_attn", ATTN_OPTIONS, "flash", PAGE))

c = st.columns([1.3, 1.0, 1.2, 1.2])
c[0].select_slider("Training sequence length s (tokens)", options=SEQ_OPTIONS, key="rm_seq", persist_state="session",
                   format_func=tokens, help="Tokens per training sequence.")
c[1].select_slider("Micro-batch b (sequences)", options=MB_OPTIONS, key="rm_mb", persist_state="session",
                   help="Sequences in one forward/backward pass on these chips.")
c[2].select_slider("Tensor + sequence parallel t (chips)", options=TP_OPTIONS, key="rm_tp", persist_state="session",
                   help="Chips sharing one layer's activations (Megatron tensor parallelism with sequence "
                        "parallelism: every activation term is divided by t — Korthikanti et al. 2022).")
c[3].radio("Attention scores", ATTN_OPTIONS, key="rm_attn", persist_state="session", horizontal=True,
           format_func={"flash": "not kept (flash)", "stored": "stored (s×s)"}.get,
           help="Flash attention never keeps the s×s score and softmax tensors (34·sbh per layer); a plain "
                "implementation stores them (+5·a·s²·b bytes per layer).")

seq, mb, tp, attn = float(ss["rm_seq"]), float(ss["rm_mb"]), float(ss["rm_tp"]), ss["rm_attn"]
if not (model.n_layers and model.d_model and model.n_heads):
    st.info(f"{model.name} has no layer count, hidden size or head count in its preset: this page needs them.",
            icon="ℹ️")
    st.stop()
L, h, a = float(model.n_layers), float(model.d_model), float(model.n_heads)
Na, F = model.active_params, s.flops
kv = s.kv

# ---------------------------------------------------------------- model calls
A = float(remat.activation_bytes_per_layer(seq, mb, h, a, attn, tp))
x = float(remat.layer_input_bytes(seq, mb, h, tp))
depth = np.arange(1.0, max(128.0, 1.5 * L) + 1.0)
sweep = remat.activation_memory(np.append(depth, L), A, x)     # chart: every depth, and this model's L last
mem_now = {k: float(v[-1]) for k, v in sweep.by_key().items()}
k_now = int(sweep.checkpoints[-1])
l_even = float(remat.sqrt_break_even_layers(A, x))
f_fwd = float(remat.forward_flops(Na, seq, mb, kv.attn_flops_full, kv.attn_flops_window, kv.window_tokens))
flops = remat.strategy_flops(f_fwd)
t_fwd = float(remat.step_time(f_fwd, tp, F))
t_step = {k: float(remat.step_time(v, tp, F)) for k, v in flops.items()}
mirror = remat.kv_cache_trade(kv.stored_bytes(T), T, Na, F, s.hbm_bandwidth)
M = hw.hbm_bytes

# ---------------------------------------------------------------- headline numbers
names = dict(zip(remat.STRATEGY_KEYS, remat.STRATEGIES))
metrics.grid([
    Metric("Store all activations", bytes_(mem_now["store"]),
           delta="fits" if mem_now["store"] <= M else f"exceeds {bytes_(M)} HBM", delta_color="normal"
           if mem_now["store"] <= M else "inverse", help="L·A per chip: grows linearly with depth."),
    Metric(f"√L checkpoints (k = {k_now})", bytes_(mem_now["sqrt"]),
           help="k = ⌈√L⌉ layer inputs kept, one segment of ⌈L/k⌉ layers rebuilt at a time."),
    Metric("Reversible (RevNet)", bytes_(mem_now["revnet"]),
           help="The last layer's output pair plus one layer being rebuilt: the same at any depth."),
    Metric("Extra compute for either", f"+{100 * (t_step['revnet'] / t_step['store'] - 1):.0f} %",
           delta=f"one forward = {seconds(t_fwd)}", delta_color="off",
           help="A training step is forward + backward (2× forward) = 3 forwards; rematerialising adds one."),
], columns=4)

st.markdown(f"**The trade** ([02:04:02]({VIDEO})): backpropagation needs each layer's activations. Keep them all "
            f"and memory grows with every layer; rebuild them during the backward pass and you pay about one extra "
            f"forward pass instead. For {model.name} (L = {L:g}, h = {h:g}, a = {a:g}) at s = {tokens(seq)}, "
            f"b = {mb:g}, t = {tp:g}:")

# ---------------------------------------------------------------- the Feistel step
export.chart(fig_remat.feistel_diagram(), key="rm_feistel")
c1, c2 = st.columns([1, 1.6])
with c1:
    latex(r"\text{forward:}\quad (x,\ y)\ \mapsto\ (y + f(x),\ x)", key="remat.forward")
    latex(r"\text{inverse:}\quad (z,\ x)\ \mapsto\ (x,\ z - f(x))", key="remat.inverse")
with c2:
    st.markdown("A **Feistel step** (block ciphers) adds a function of one half to the other half. It is "
                "invertible whatever f is — f is recomputed, never inverted. A **RevNet** (Gomez et al. 2017, "
                "arXiv 1707.04585) makes every layer such a step (f = an attention or MLP block), so the whole "
                "network runs backwards: each layer's input is rebuilt from its output in lockstep with the "
                "backward pass, and nothing in between is stored. Round-off means the rebuilt input is not "
                "bit-identical to the one the forward pass saw — a known limit of reversible networks, small in "
                "the published experiments.")

# ---------------------------------------------------------------- equations with today's numbers
attn_term = r"\left(34 + \frac{5\,a\,s}{h}\right)" if attn == "stored" else "34"
attn_num = rf"\left(34 + \frac{{5 \times {a:g} \times {tex_int(seq)}}}{{{h:g}}}\right)" if attn == "stored" else "34"
latex(rf"A = \frac{{s\,b\,h\cdot {attn_term}}}{{t}} = \frac{{{tex_int(seq)} \times {mb:g} \times {h:g} \times "
      rf"{attn_num}}}{{{tp:g}}} = {tex_bytes(A)}\ \text{{per layer}},\qquad x = \frac{{2\,s\,b\,h}}{{t}} = "
      rf"{tex_bytes(x)}", key="remat.activations")
latex(rf"\begin{{aligned}}M_{{store}} &= L\cdot A = {L:g} \times {tex_bytes(A)} = {tex_bytes(mem_now['store'])}"
      rf"\\ M_{{every}} &= L\cdot x + A = {L:g} \times {tex_bytes(x)} + {tex_bytes(A)} = "
      rf"{tex_bytes(mem_now['every'])}\\ M_{{\sqrt{{L}}}} &= k\,x + \lceil L/k\rceil A = {k_now} \times "
      rf"{tex_bytes(x)} + {int(np.ceil(L / k_now))} \times {tex_bytes(A)} = {tex_bytes(mem_now['sqrt'])}\quad"
      rf"(k = \lceil\sqrt{{L}}\rceil)\\ M_{{rev}} &= 4\,x + A = {tex_bytes(mem_now['revnet'])}"
      rf"\quad\text{{(any }}L)\end{{aligned}}", key="remat.memory")
latex(rf"\begin{{aligned}}F_{{fwd}} &= b\left(2\,N_a\,s + \text{{attn}}\cdot\tfrac{{s(s+1)}}{{2}}\right) = "
      rf"{mb:g}\left(2 \times {params(Na)} \times {tex_int(seq)} + {tex_num(kv.attn_flops_full, 'FLOP')}\cdot"
      rf"\tfrac{{{tex_int(seq)}\,({tex_int(seq + 1)})}}{{2}}\right) = {tex_num(f_fwd, 'FLOP')}\\ "
      rf"\text{{step}} &= 3\,F_{{fwd}} = {tex_num(flops['store'], 'FLOP')}\ \to\ 4\,F_{{fwd}} = "
      rf"{tex_num(flops['revnet'], 'FLOP')}\quad(+33\%)\end{{aligned}}", key="remat.flops")
st.caption("Per-layer activation bytes A from Korthikanti et al. 2022, 'Reducing Activation Recomputation in Large "
           "Transformer Models' (arXiv 2205.05198, §4): a GPT layer with 16-bit activations and 1-byte dropout masks "
           "keeps 34·sbh bytes (attention 11, MLP 19 with a 4h hidden layer, LayerNorms 4) plus 5·a·s²·b for the "
           "attention scores unless flash attention drops them. x is a layer's 16-bit input, what a checkpoint "
           f"keeps. attn = {number(kv.attn_flops_full)} FLOP per (query, key) pair over {model.name}'s layers."
           + (" **MoE and SwiGLU layers keep more** (the routed experts' and the gate's activations): treat A as a "
              "lower bound for this model." if model.is_moe else ""))

# ---------------------------------------------------------------- charts
lines = [Line(k, names[k], v[:-1] / 1e9) for k, v in sweep.by_key().items()]
fig = fig_remat.memory_vs_depth(depth, lines, l_now=L, now_values=[mem_now[k] / 1e9 for k in names],
                                hbm_gb=M / 1e9, title=f"Activation memory against depth (s = {tokens(seq)}, "
                                                      f"b = {mb:g}, t = {tp:g})")
export.chart(fig, key="rm_depth")
st.caption("Peak activation memory per chip for L layers of this model's width: storing everything grows like "
           "L, checkpointing every layer's input like L with a slope of x instead of A, √L checkpoints like √L, "
           f"and RevNet not at all. Here A = {A / x:.3g}·x, so √L checkpoints keep less than per-layer ones "
           f"only past L = (A/x)² ≈ {l_even:,.0f} layers: a layer's internals outweigh the inputs saved. "
           f"Red dashed: {hw.name}'s HBM, which must also hold weights, gradients and optimizer state.")
keys = list(remat.STRATEGY_KEYS)
parts = {"forward": np.full(4, t_fwd), "backward": np.full(4, 2 * t_fwd),
         "recompute": np.array([t_step[k] - 3 * t_fwd for k in keys])}
fig = fig_remat.trade_bars([names[k] for k in keys], keys, np.array([mem_now[k] for k in keys]) / 1e9, parts,
                           hbm_gb=M / 1e9, title=f"What each strategy costs at L = {L:g}: memory against time")
export.chart(fig, key="rm_trade")
st.caption(f"Left: peak activation memory per chip. Right: one training step on t = {tp:g} chip(s) at {hw.name}'s "
           f"{s.precision.compute} FLOP/s (ideal): forward, backward (twice the forward) and the recomputed forward. "
           "Every rematerialising strategy pays the same one extra forward; they differ in how much memory it buys.")

# ---------------------------------------------------------------- the mirror image
st.subheader("The mirror image of the KV cache")
held, read_s, rec_s = float(mirror["held_bytes"]), float(mirror["read_s"]), float(mirror["recompute_s"])
saved = mem_now["store"] - mem_now["revnet"]
st.markdown(
    f"| | spends | to save |\n|---|---|---|\n"
    f"| **KV cache** (inference, T = {tokens(T)}) | memory: {bytes_(held)} of KV held per sequence | compute: "
    f"re-running the {tokens(T)}-token prefix every step, 2·Na·T/F = {seconds(rec_s)} per step on one chip, "
    f"against {seconds(read_s)} to read the cache ({number(float(mirror['speedup']))}× less) |\n"
    f"| **Rematerialisation** (training, s = {tokens(seq)}) | compute: one extra forward, {seconds(t_fwd)} per step "
    f"on {tp:g} chip(s) (+{100 * (t_step['revnet'] / t_step['store'] - 1):.0f} %) | memory: {bytes_(saved)} of "
    "activations per chip (store all → RevNet) |")
st.caption("Pope: spending memory to save compute is 'generally profitable given where hardwares are' — FLOPs are "
           "plentiful next to HBM capacity, which is why inference caches and training recomputes when memory, not "
           f"compute, is what runs out. For scale: {model.name}'s weights, gradients and Adam state take "
           f"{ADAM_BYTES_PER_PARAM:g} B/param = {bytes_(ADAM_BYTES_PER_PARAM * model.total_params)} (ZeRO, "
           "Rajbhandari et al. 2020), which data-parallel sharding can spread over many chips; a micro-batch's "
           f"activations cannot be spread that way. The KV column reads at {hw.name}'s full HBM bandwidth and counts "
           "matmul FLOPs only, so the recompute figure is a lower bound.")
