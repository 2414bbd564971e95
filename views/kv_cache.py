"""KV cache and context — why long context costs more, and what a price tier implies (lecture §1.1–1.3, §2.5)."""

import numpy as np
import streamlit as st

from model import KVLayout, context_never_compute_bound, decode_step, kv_crossover_context, presets
from model.economics import kv_bytes_from_crossover
from model.specs import DTYPE_BYTES
from ui.elements import export, metrics
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import kv_cache as eq
from ui.figures import batch as figures
from ui.figures import kv_cache as fig_kv
from ui.format import bytes_, number, tokens, usd
from ui.state import dials
from ui.state.dials import CONTEXT_OPTIONS
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("kv-cache",)
T_MIN, T_MAX = 128.0, 10_000_000.0          # the context range every chart covers
LECTURE_NA = 100e9                         # the lecture's conjectured active params (§2.5)
LECTURE_ARCH_ELEMENTS = 2 * 128 * 8        # 1 unique KV layer × (K, V) × d_head 128 × 8 KV heads (§2.5)

view = current_view()
base, B, T = view.system, view.batch, view.context
offers = presets.price_presets()
tier_keys = [k for k, o in offers.items() if o.long_context_threshold_tokens]

page_header(heading("kv-cache"), view)

# ---------------------------------------------------------------- page dials (URL-backed)
d_sa = dials.page_dial(dials.choice_dial("sa", ["dense", "sqrt"], "dense", PAGE))
d_knee = dials.page_dial(dials.number_dial("knee", 1, T_MAX, 2048.0, PAGE))
d_tier = None
if tier_keys:
    d_tier = dials.page_dial(dials.choice_dial(
        "tier", tier_keys, "gemini-2.5-pro" if "gemini-2.5-pro" in tier_keys else tier_keys[0], PAGE))
d_na = dials.page_dial(dials.number_dial("na", 0.1, 100_000, LECTURE_NA / 1e9, PAGE))

k = st.columns([1.3, 1, 1.5, 1])
k[0].radio("Attention reads", ["dense", "sqrt"], key="sa", horizontal=True,
           format_func=lambda v: {"dense": "dense (∝ T)", "sqrt": "sparse (∝ √T, rough)"}[v],
           help="Sparse: each full-attention layer reads every token up to the knee K, then √(K·T) of them. "
                "The lecture's rough argument (§1.1): DeepSeek's sparse attention 'ends up putting a square root "
                "in this term'; no formula was given.")
k[1].number_input("Sparse knee K (tokens)", min_value=1.0, max_value=T_MAX, step=1024.0, format="%.0f", key="knee",
                  disabled=st.session_state["sa"] == "dense",
                  help="Context up to which sparse attention still reads every token.")
if d_tier is not None:
    k[2].selectbox("Long-context price tier", tier_keys, key="tier",
                   format_func=lambda o: f"{offers[o].name} — above {tokens(offers[o].long_context_threshold_tokens)}",
                   help="A list price that steps up above a context threshold.")
k[3].number_input("Assumed active params Na (billions)", min_value=0.1, max_value=100_000.0, step=10.0,
                  format="%.4g", key="na",
                  help="For reading the tier's KV bytes per token: the lecture conjectures 100B active.")

sparse = st.session_state["sa"] == "sqrt"
knee = float(st.session_state["knee"])
s = base.with_(sparse_attention="sqrt", sparse_param=knee) if sparse else base
if sparse:
    st.info(f"**Sparse attention on** (every chart): each full-attention layer reads T tokens up to K = "
            f"{tokens(knee)}, then √(K·T). This is the lecture's rough argument — sparse attention 'puts a square "
            "root in this term' — not a published formula. **Storage is unchanged**: every token's KV is still "
            "held in HBM; only what is read per step shrinks.", icon="ℹ️")

kv = s.kv
kv_tok = kv.full_bytes_per_token                 # growth per extra token of context (full-attention layers)
windowed = kv.window_bytes_per_token > 0
closed_form = not sparse and not windowed
F, bw, W, Na = s.flops, s.hbm_bandwidth, s.weight_bytes, s.model.active_params


def where_words(t: float) -> str:
    """A crossover context in words: a number, or why there is none on the chart."""
    if not np.isfinite(t):
        return "never (the KV read stops growing)"
    if t > T_MAX:
        return f"not within 10M tokens (≈ {tokens(t)})"
    return f"{t:,.0f} tokens"


def metric_words(t: float) -> str:
    """The same, short enough for a metric (the unit is in its label)."""
    if not np.isfinite(t):
        return "never"
    return "never within 10M" if t > T_MAX else f"{t:,.0f}"


# ---------------------------------------------------------------- model calls (one per chart)
t_cross = float(kv_crossover_context(s, B))                 # KV fetch = weight fetch at this batch
t_never = context_never_compute_bound(s)                     # KV fetch = matmul, at every batch
grid = np.unique(np.concatenate([np.geomspace(T_MIN, T_MAX, 121), CONTEXT_OPTIONS, [T]]))
sweep = decode_step(s, B, grid)                              # chart 1: cost against context
realistic = s.deployment.mfu < 1 or s.deployment.bw_util < 1     # then the ideal curve is drawn too
ideal = decode_step(s.with_(mfu=1.0, bw_util=1.0), B, grid).usd_per_mtok if realistic else None
i_now = int(np.searchsorted(grid, T))
# The map: 3 cells per octave of batch (every power of two a row) × 71 contexts, uniform in log so
# each cell is the same size on screen.  ~3,500 cells: a 97 × 141 map cost ≈50 ms of browser time
# and ≈30 ms of server time per dial move (plotly paints every cell, then encodes a PNG).
b_grid = np.geomspace(1, 65536, 49)
c_grid = np.geomspace(T_MIN, T_MAX, 71)
bmap = decode_step(s, b_grid[:, None], c_grid[None, :])      # chart 2: bound over batch × context
cross_line = kv_crossover_context(s, b_grid)                 # chart 2: the KV = weights line

bound_now = str(sweep.bound[i_now])
metrics.grid([
    Metric("KV stored per token" + (" (within the window)" if windowed else ""), bytes_(kv.bytes_per_token),
           delta=f"{bytes_(kv_tok)} per extra token past {tokens(kv.window_tokens)}" if windowed else None,
           delta_color="off",
           help="All layers, at the KV dtype. Sparse attention does not change this."
                + (f" Windowed layers stop growing past {tokens(kv.window_tokens)} tokens; beyond that each extra "
                   f"token adds {bytes_(kv_tok)} (the full-attention layers)." if windowed else "")),
    Metric(f"KV read per sequence per step at T = {tokens(T)}", bytes_(float(s.kv_read(T))),
           help="Bytes one sequence reads per decode step (with sparse attention: fewer than are stored)."),
    Metric(f"Cost at T = {tokens(T)} [$/Mtok]", usd(float(sweep.usd_per_mtok[i_now])),
           help="Chip-hours × price ÷ output tokens, on the ideal roofline."),
    Metric(f"KV = weights at B = {B:g} [tokens]", metric_words(t_cross),
           help="Context where the batch's KV fetch equals the weight fetch: B · kv(T) = W. "
                f"Here: {where_words(t_cross)}."),
    Metric("KV = compute: never compute-bound past [tokens]", metric_words(t_never),
           help="Context where one sequence's KV fetch takes as long as its matmuls: kv(T)/bw = 2·Na/F. "
                f"Past it no batch size makes decode compute-bound; independent of B. Here: {where_words(t_never)}."),
    Metric(f"Bound at B = {B:g}, T = {tokens(T)}", figures.BOUND_LABELS.get(bound_now, bound_now)),
], columns=3)

# ---------------------------------------------------------------- equations with today's numbers
st.markdown("**Two crossover contexts.** Where the KV read of the whole batch equals the weight read, and "
            "where one sequence's KV read equals its matmul time (then no batch can be compute-bound).")
latex(eq.weights_crossover(s, B), key="kv-cache.weights")
latex(eq.compute_crossover(s), key="kv-cache.compute")
if not closed_form:
    st.caption("No closed form here" + (" (windowed layers add a fixed amount per sequence)" if windowed else "")
               + (" (sparse reads grow like √T)" if sparse else "") + ": the model solves kv(T) = target numerically.")
if s.deployment.mode == "per-phase":
    st.caption("These crossovers are the lecture's single-roofline closed forms; the charts use the per-phase roofline "
               "chosen in the sidebar.")

# ---------------------------------------------------------------- the price tier
tier = None
implied = float("nan")
if d_tier is not None:
    offer = offers[st.session_state["tier"]]
    thr = float(offer.long_context_threshold_tokens)
    na = float(st.session_state["na"]) * 1e9
    implied = float(kv_bytes_from_crossover(na, F, bw, thr))
    tier = fig_kv.Tier(offer.name, thr, offer.output_usd_per_mtok, offer.long_context_output_usd_per_mtok)

# ---------------------------------------------------------------- chart 1 and chart 2
c1, c2 = st.columns(2)
with c1:
    marks = [(f"KV = weights (B = {B:g})", t_cross, figures.BOUND_COLORS["weights"]),
             ("KV = compute: never compute-bound →", t_never, "#222")]
    fig = fig_kv.cost_vs_context(grid, sweep.usd_per_mtok, sweep.fits, sweep.bound, markers=marks, t_now=T,
                                 usd_now=float(sweep.usd_per_mtok[i_now]), tier=tier, ideal=ideal,
                                 title=f"Cost per token against context at B = {B:g}")
    export.chart(fig, key="kv_cost_vs_context")
    st.caption("Cost per output token at this batch, on the ideal roofline. Flat while the weight read or the matmuls "
               "set the step, then rising once the KV read dominates — linearly in T for dense attention"
               + (", like √T with sparse reads" if sparse else "") + ". Grey dashed: weights + KV do not fit in HBM. "
               "Purple dotted: the chosen API's list output price, stepping up at its long-context threshold "
               "(another provider's model, drawn for scale).")
    outside = [f"{name} is {where_words(x)}" for name, x in (("KV = weights", t_cross), ("KV = compute", t_never))
               if not (np.isfinite(x) and T_MIN <= x <= T_MAX)]
    if outside:
        st.caption("Off the chart: " + "; ".join(outside) + ".")
with c2:
    fig = fig_kv.bound_map(b_grid, c_grid, bmap.bound, bmap.fits, crossover=cross_line,
                           never_context=t_never, now=(B, T))
    export.chart(fig, key="kv_bound_map")
    st.caption("Each cell: the term that sets the step at that batch and context. Dashed: KV read = weight read "
               "(T× = W/(B·kv) — falls as the batch grows). Dotted vertical: past it, KV alone outweighs the matmuls "
               "at any batch. Faded cells, above the grey line: weights + KV do not fit in HBM."
               + ("" if bool(bmap.fits.any()) else f" **Here nothing fits**: the weights alone "
                  f"({bytes_(W)}) are more than the HBM of C = {view.chips:g} chips."))

# ---------------------------------------------------------------- what the tier implies
st.subheader("What a long-context price step implies about KV size")
if d_tier is None:
    st.info("No price preset has a long-context tier, so there is nothing to read off here.")
else:
    cd = s.precision.compute
    el_bytes = DTYPE_BYTES[cd]
    meta = offer.meta.get("long_context_threshold_tokens") or offer.meta.get("output_usd_per_mtok")
    src = f"{meta.source}, {meta.date}" if meta is not None else "source not recorded"
    step_in = (offer.long_context_input_usd_per_mtok or float("nan")) / offer.input_usd_per_mtok
    step_out = (offer.long_context_output_usd_per_mtok or float("nan")) / offer.output_usd_per_mtok
    st.markdown(
        f"If a provider prices near cost, the price should step up where the KV read starts to outweigh the "
        f"matmuls (lecture §2.5). **{offer.name}** charges {usd(offer.input_usd_per_mtok)} → "
        f"{usd(offer.long_context_input_usd_per_mtok)} input and {usd(offer.output_usd_per_mtok)} → "
        f"{usd(offer.long_context_output_usd_per_mtok)} output per Mtok above **{tokens(thr)}** tokens "
        f"(×{step_in:.2g} and ×{step_out:.2g}). Source: {src}.")
    latex(eq.tier_kv(s, na, thr), key="kv-cache.tier")
    metrics.grid([
        Metric("Implied KV per token", f"{implied:,.0f} B",
               help=f"Bytes, read as KV stored at the compute dtype ({cd}): Na = {number(na)}, "
                    f"F = {F:.3g} FLOP/s ({s.hardware.name}, {cd}), bw = {bw:.3g} B/s."),
        Metric(f"= elements at {cd}", f"{implied / el_bytes:,.0f}",
               help=f"{el_bytes:g} byte(s) per {cd} element."),
        Metric("Lecture's architecture [elements]", f"{LECTURE_ARCH_ELEMENTS:,}",
               help="One unique KV layer (shared across layers, Character.AI/Gemma style) × 2 (K and V) × d_head 128 "
                    "× 8 KV heads = 2,048 — '2 KB' at 1 byte per element."),
        Metric(f"{s.model.name} stores", f"{bytes_(kv_tok)}/token",
               delta=f"{kv_tok / implied:,.0f}× the implied size" if implied > 0 else None, delta_color="off",
               help="Per extra token of context at the KV dtype (full-attention layers)."),
    ], columns=4)
    st.caption(f"Assumptions, all visible: Na = {float(st.session_state['na']):g}B active parameters (the lecture's "
               f"conjecture is 100B), F/bw = {F / bw:,.0f} from {s.hardware.name} at {cd} (sidebar), large batch so "
               f"the weight read is amortised. The answer is in bytes at the compute dtype: {implied:,.0f} B of {cd} "
               f"= {implied / el_bytes:,.0f} elements, against the lecture's 2 × 128 × 8 = 2,048 elements "
               f"({LECTURE_ARCH_ELEMENTS * el_bytes:,.0f} B at {cd}). The lecture's own 1,667 B uses F/bw ≈ 600 "
               "(fp8 FLOP/s) and 1-byte KV."
               + (" With sparse attention the lecture says all of these numbers get bigger, × 1/sparsity; the "
                  "inversion above assumes dense reads." if sparse else ""))

# ---------------------------------------------------------------- chart 3: KV bytes per token by model
st.subheader("KV bytes per token, model by model")
kv_dtype = s.precision.kv
models = presets.model_presets()
names, per_tok, kinds, notes, reads = [], [], [], [], []
for mdl in models.values():   # one KVLayout per preset model (each is a different architecture)
    try:
        lay = KVLayout.from_model(mdl, s.precision.kv_bytes_per_element)
    except ValueError:
        continue
    kind = mdl.attention.upper() + (" + windowed" if lay.window_bytes_per_token > 0 else "")
    names.append(mdl.name)
    per_tok.append(lay.full_bytes_per_token)
    kinds.append(kind)
    notes.append(f"{mdl.n_window_layers} of {mdl.n_layers} layers {mdl.window_kind} to {mdl.window_tokens:,} tokens; "
                 f"within the window {lay.bytes_per_token / 1e3:.4g} kB/token" if lay.window_bytes_per_token > 0
                 else ("from the preset's kv_bytes_per_token" if mdl.kv_bytes_per_token is not None else
                       f"{mdl.n_layers} layers"))
    if sparse:
        reads.append(float(lay.read_bytes(T, "sqrt", knee)) / T if T > 0 else 0.0)
refs = []
if d_tier is not None and np.isfinite(implied):
    refs.append((f"{offer.name} tier implies {implied:,.0f} B ({s.precision.compute} F/bw)", implied,
                 fig_kv.TIER_COLOR))
refs.append(("lecture: 2 × 128 × 8 = 2,048 B (1-byte KV)", float(LECTURE_ARCH_ELEMENTS), "#555"))
fig = fig_kv.kv_per_token_bars(
    names, per_tok, kinds, s.model.name if view.model_key in models else None,
    f"KV bytes per extra token of context, at {kv_dtype}", notes=notes,
    read_per_token=reads if sparse else None, read_label=f"read per context token at T = {tokens(T)} (sparse)",
    refs=refs)
export.chart(fig, key="kv_models")
st.caption(f"KV bytes each extra token of context adds, all layers, at the KV dtype ({kv_dtype}). MLA caches one "
           "compressed latent per layer; GQA shares K/V across query heads; windowed (or chunked) layers stop "
           "growing past their window, so only the full-attention layers count at long context (hover for the "
           "within-window total). The current model is outlined in red."
           + (" Sparse attention leaves these bars unchanged (storage); the diamonds show what is read per token "
              "of context at the current T." if sparse else ""))
