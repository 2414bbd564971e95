"""Context limits — why context stalled near 100–200k (lecture §1.1–1.3, §2.5, §2.8; 01:32:52 onwards).

Past the context T_c where one sequence's KV read per decode step takes as long as its matmuls,
kv(T_c)/bw = 2·Na/F, no batch size makes decode compute-bound and every extra token of context
costs more.  T_c depends on the chip only through bw/F.  The lecture calls F/bw "around 300" and
"reasonably stable" from A100 to H100 to B100; the chip presets say otherwise (bf16: A100 153, H100 295,
B200 281, Rubin Ultra 544, TPU v6e 560), and the page shows both.
Sparse attention reads a fraction of the context and moves T_c out
by 1/f (or to T_c²/K for the lecture's rough "square root in this term"), at a quality risk.
The KV-cache page (views/kv_cache.py) has the batch × context bound map and the price-tier inversion.
"""

import itertools
from functools import partial

import numpy as np
import streamlit as st

from model import KVLayout, decode_step, kv_crossover_context
from model.context import (
    LECTURE_ACTIVE_PARAMS,
    LECTURE_KV_ELEMENTS_PER_TOKEN,
    MONTH_ON_THE_JOB_TOKENS,
    STALLED_CONTEXT_TOKENS,
    compute_crossover_context,
    cost_terms,
    generations,
)
from model.presets import hardware_presets
from ui.elements import export, metrics, tables
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import context as eq
from ui.equations import kv_cache as eq_kv
from ui.figures import context as fig_context
from ui.figures.context import Curve, Series
from ui.format import bytes_, number, seconds, short_name, tokens, usd
from ui.state.dials import choice_dial, number_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading, script

PAGE = ("context",)
F_OPTIONS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
KNEE_OPTIONS = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
X_OPTIONS = ["year", "ratio"]
T_MIN, T_MAX = 512.0, 1e8                 # the cost chart's range: up to Dwarkesh's 100M tokens
LABELLED_CHIPS = ("a100", "h100", "h200", "b200", "vera-rubin", "rubin-ultra")
LECTURE_RATIO = 300.0                      # §2.1: F/bw "somewhere around 300" on most GPUs
LECTURE_RATIO_CHIPS = ("a100", "h100", "b200")   # "reasonably stable" A100 → H100 → B100 (B100: no preset; B200)
LECTURE_RATIO_DTYPE = "bf16"               # … at bf16 FLOP/s per byte (lecture §2.1: A100 153, H100 295)
NEAR = (200.0, 400.0)                      # "near 300": within a third of it
VIDEO = "https://youtu.be/xmkSf5IS-zw?t=5572"   # 01:32:52 deducing long-context memory costs from prices


chip_label = partial(short_name, terse=True)   # 'NVIDIA H100 SXM5 80GB' → 'H100', beside points


def where(t: float) -> str:
    """A crossover context for a metric: a number of tokens, or 'never'."""
    if not np.isfinite(t):
        return "never"
    return tokens(t) if t < 1e12 else f"{t:.3g}"


view = current_view()
s, B, T = view.system, view.batch, view.context
hw, model = s.hardware, s.model
F, bw, W, Na = s.flops, s.hbm_bandwidth, s.weight_bytes, model.active_params
ss = st.session_state

page_header(heading("context"), view)
# What the KV-cache page adds, as a caption that wraps; the link's own label stays short, since a page link is one
# line that clips what does not fit (a phone would lose the end of a sentence).
st.caption("The KV-cache page has the batch × context bound map, KV bytes model by model and what a long-context "
           "price tier implies.")
st.page_link(script("kv-cache"), label="Open the KV-cache page →", icon=":material/link:")

# ---------------------------------------------------------------- page dials (URL-backed)
page_dial(choice_dial("cx_f", F_OPTIONS, 0.1, PAGE))
page_dial(choice_dial("cx_knee", KNEE_OPTIONS, 2048, PAGE))
page_dial(choice_dial("cx_x", X_OPTIONS, "year", PAGE))
page_dial(number_dial("cx_na", 1, 10_000, LECTURE_ACTIVE_PARAMS / 1e9, PAGE))
page_dial(number_dial("cx_kve", 1, 10_000_000, float(LECTURE_KV_ELEMENTS_PER_TOKEN), PAGE))

c = st.columns([1.4, 1.2, 1.0, 1.0, 1.0])
c[0].select_slider("Sparse attention: fraction of context read, f", options=F_OPTIONS, key="cx_f",
                   persist_state="session", format_func=lambda v: f"{v:g}",
                   help="Each full-attention layer reads f·T of the T context tokens per decode step (a selector "
                        "picks them). Storage is unchanged: every token's KV is still held.")
c[1].select_slider("√T rule: knee K (tokens)", options=KNEE_OPTIONS, key="cx_knee", persist_state="session",
                   format_func=tokens,
                   help="The lecture's rough reading of DeepSeek's sparse attention, 'a square root in this term': "
                        "every token is read up to K, then √(K·T). No formula was given; K = 2,048 is DeepSeek "
                        "sparse attention's top-k.")
c[2].radio("Chip chart x-axis", X_OPTIONS, key="cx_x", persist_state="session", horizontal=True,
           format_func={"year": "year", "ratio": "FLOP/byte"}.get,
           help="Announcement year of each chip preset, or its FLOP/s ÷ HBM bytes/s at the compute dtype.")
c[3].number_input("Reference Na [billions]", min_value=1.0, max_value=10_000.0, step=10.0, format="%g",
                  key="cx_na", help="The lecture's frontier reference model: '100 billion active' (conjectured, §2.5).")
c[4].number_input("Reference KV elements/token", min_value=1.0, max_value=10_000_000.0, step=256.0, format="%g",
                  key="cx_kve", help="One shared KV layer × 2 (K, V) × d_head 128 × 8 KV heads = 2,048 (§2.5), "
                                     "stored at the sidebar's KV dtype.")

f_now = float(ss["cx_f"])
knee = float(ss["cx_knee"])
na_ref = float(ss["cx_na"]) * 1e9
kv_el = s.precision.kv_bytes_per_element
kv_ref = KVLayout(float(ss["cx_kve"]) * kv_el)

try:
    kv = s.kv
except ValueError as exc:          # a custom model without its attention shapes
    st.info(f"{exc}. This page needs the model's KV bytes per token.", icon="ℹ️")
    st.stop()
kv_tok = kv.full_bytes_per_token
windowed = kv.window_bytes_per_token > 0
s_frac = s.with_(sparse_attention="fraction", sparse_param=f_now)
s_sqrt = s.with_(sparse_attention="sqrt", sparse_param=knee)

# ---------------------------------------------------------------- model calls
tc = {  # KV read = matmul: one call per rule, scalar chip
    "dense": float(compute_crossover_context(kv, Na, F, bw)),
    "fraction": float(compute_crossover_context(kv, Na, F, bw, "fraction", f_now)),
    "sqrt": float(compute_crossover_context(kv, Na, F, bw, "sqrt", knee)),
}
tc_ref = float(compute_crossover_context(kv_ref, na_ref, F, bw))
t_w = float(kv_crossover_context(s, B))               # KV read = weight read at this batch
grid = np.unique(np.concatenate([np.geomspace(T_MIN, T_MAX, 241), [T]]))
i_now = int(np.searchsorted(grid, T))
dense = decode_step(s, B, grid)                       # chart 1: one call per attention rule
frac = decode_step(s_frac, B, grid)
sqrt_ = decode_step(s_sqrt, B, grid)
terms = cost_terms(dense)
nofit = ~np.asarray(dense.fits, bool)
nofit_from = float(grid[np.argmax(nofit)]) if nofit.any() else None

# ---------------------------------------------------------------- headline numbers
metrics.grid([
    Metric("KV = compute, dense [tokens]", where(tc["dense"]),
           help="Context where one sequence's KV read per step takes as long as its matmuls: kv(T)/bw = 2·Na/F. "
                "Past it no batch makes decode compute-bound. Independent of B."),
    Metric(f"Reading f = {f_now:g} [tokens]", where(tc["fraction"]),
           help="The same crossover when each full-attention layer reads f·T tokens: T_c/f."),
    Metric(f"√T rule, K = {tokens(knee)} [tokens]", where(tc["sqrt"]),
           help="The same crossover when a layer reads √(K·T) tokens past K: T_c²/K."),
    Metric(f"KV = weights at B = {B:g} [tokens]", where(t_w),
           help="Context where the batch's KV read equals the weight read: B·kv(T) = W. Above it the KV is the "
                "larger memory term."),
    Metric(f"Cost at T = {tokens(T)}, dense", usd(float(dense.usd_per_mtok[i_now])) + "/Mtok",
           help="Chip-hours × price ÷ output tokens at the sidebar's batch, on the ideal roofline."),
    Metric(f"… reading f = {f_now:g}", usd(float(frac.usd_per_mtok[i_now])) + "/Mtok"),
    Metric("… √T rule", usd(float(sqrt_.usd_per_mtok[i_now])) + "/Mtok"),
    Metric("Lecture model: KV = compute", where(tc_ref),
           help=f"Na = {number(na_ref)} active, {float(ss['cx_kve']):,.0f} KV elements/token at {s.precision.kv} "
                f"({bytes_(kv_ref.full_bytes_per_token)}/token), on {hw.name} at {s.precision.compute}."),
], columns=4)

# ---------------------------------------------------------------- equations with today's numbers
st.markdown("**Where the KV read overtakes compute** (lecture §2.5, [01:32:52]("
            f"{VIDEO})): set one sequence's KV read per step equal to its matmul time. Only the chip's "
            f"FLOP/s per byte/s enters: F/bw = {F / bw:,.0f} FLOP/B on {chip_label(hw.name)} at "
            f"{s.precision.compute}. How much that ratio moved from chip to chip is charted below.")
latex(eq_kv.compute_crossover(s), key="context.compute")
latex(eq.reference_crossover(s, na_ref, kv_ref), key="context.reference")
if not windowed:
    latex(eq.sparse_crossovers(s, f_now, knee), key="context.sparse")
    latex(eq_kv.weights_crossover(s, B), key="context.weights")
else:
    st.caption("Windowed layers add a fixed amount per sequence, so the sparse and weight crossovers have no "
               f"closed form here: the model solves kv(T) = target numerically (f = {f_now:g}: "
               f"{where(tc['fraction'])}; √T rule: {where(tc['sqrt'])}; KV = weights: {where(t_w)}).")
if s.deployment.mode == "per-phase":
    st.caption("The crossovers are the lecture's single-roofline forms; the cost chart uses the per-phase roofline "
               "chosen in the sidebar.")

# ---------------------------------------------------------------- chart 1: cost against context
curves = [Curve("dense attention (reads T)", dense.usd_per_mtok, fig_context.DENSE_COLOR),
          Curve(f"reads f·T, f = {f_now:g}", frac.usd_per_mtok, fig_context.FRACTION_COLOR, "dash", 3.5),
          Curve(f"reads √(K·T), K = {tokens(knee)}", sqrt_.usd_per_mtok, fig_context.SQRT_COLOR, "dashdot", 3.5)]
floors = [Curve("matmul cost alone (compute floor)", terms["matmul"], fig_context.COMPUTE_COLOR, "dot", 2),
          Curve("weight read alone (÷ B)", terms["weights"], fig_context.WEIGHTS_COLOR, "dot", 2)]
marks = [("KV = compute (dense)", tc["dense"], "#222"), (f"KV = weights (B = {B:g})", t_w, fig_context.WEIGHTS_COLOR),
         (f"KV = compute, f = {f_now:g}", tc["fraction"], fig_context.FRACTION_COLOR)]
if not np.isclose(tc["sqrt"], tc["dense"], rtol=1e-6):   # below the knee the √T rule reads every token: the same line
    marks.append(("KV = compute, √T", tc["sqrt"], fig_context.SQRT_COLOR))
fig = fig_context.cost_vs_context(grid, curves, floors=floors, markers=marks, t_now=T,
                                  usd_now=float(dense.usd_per_mtok[i_now]), nofit_from=nofit_from,
                                  band=STALLED_CONTEXT_TOKENS,
                                  title=f"Cost per token against context: {model.name} on {chip_label(hw.name)}, "
                                        f"B = {B:g}")
export.chart(fig, key="cx_cost")
st.caption(f"Cost per output token at B = {B:g} on C = {view.chips:g} chips (ideal roofline): flat while the "
           "matmuls (blue dotted) or the weight read set the step, then rising with the KV read — linearly for dense "
           "attention, f times slower when a fraction f is read, like √T past the knee. Grey: the batch's KV no "
           f"longer fits in HBM (storage is the same for every rule). Yellow: 100–200k, where frontier context has "
           f"sat since GPT-4 (§2.8).")

# ---------------------------------------------------------------- F/bw chip by chip: the lecture's claim and the data
# The lecture's ≈ 300 is bf16 FLOP/s per byte (lecture §2.1), so this section reads the presets at bf16.
gens16 = generations(hardware_presets(), LECTURE_RATIO_DTYPE)
r16 = gens16.flops_per_byte                           # datasheet F/bw at bf16 [FLOP/B]
if len(gens16.keys):
    st.subheader(f"F/bw chip by chip: the lecture's ≈ {LECTURE_RATIO:.0f} and the presets")
    cur16 = gens16.keys.index(view.chip_key) if view.chip_key in gens16.keys else None
    fig = fig_context.ratio_by_chip(
        gens16.year, r16, names=[f"{n} ({d})" for n, d in zip(gens16.names, gens16.date)],
        short=[chip_label(n) for n in gens16.names],
        labelled=[k in LABELLED_CHIPS or k == view.chip_key for k in gens16.keys], current=cur16,
        claim=LECTURE_RATIO, claim_text=f"the lecture: ≈ {LECTURE_RATIO:.0f}, 'reasonably stable' A100 → H100 → B100",
        dtype=LECTURE_RATIO_DTYPE,
        title=f"FLOP/s ÷ HBM bytes/s of each chip preset ({LECTURE_RATIO_DTYPE} FLOP/s, datasheet)")
    export.chart(fig, key="cx_ratio")
    tables.dataframe({
        "chip": [chip_label(n) for n in gens16.names], "announced": list(gens16.date),
        f"{LECTURE_RATIO_DTYPE} FLOP/s": [f"{v / 1e12:,.0f} T" for v in gens16.flops],
        "HBM bandwidth": [f"{v / 1e12:.3g} TB/s" for v in gens16.hbm_bandwidth],
        "F/bw [FLOP/B]": [round(float(v)) for v in r16]}, width="stretch", height=250)
    lec = [(chip_label(gens16.names[gens16.keys.index(k)]), float(r16[gens16.keys.index(k)]))
           for k in LECTURE_RATIO_CHIPS if k in gens16.keys]
    steps = " → ".join(f"{n} **{v:.0f}**" for n, v in lec)
    moves = ", ".join(f"×{b[1] / a[1]:.2g} from {a[0]} to {b[0]}" for a, b in itertools.pairwise(lec))
    lo_r, hi_r = int(np.argmin(r16)), int(np.argmax(r16))
    near = int(np.sum((r16 >= NEAR[0]) & (r16 <= NEAR[1])))
    top = np.argsort(-r16)[:2]
    verdict = (f"every chip here is within {NEAR[0]:.0f}–{NEAR[1]:.0f}, so 'about {LECTURE_RATIO:.0f}' holds"
               if near == len(r16) else
               f"so 'about {LECTURE_RATIO:.0f}' fits {near} of {len(r16)} chips — a rule of thumb, not a constant")
    st.markdown(
        f"**The lecture** (§2.1): FLOP/s ÷ memory bandwidth is 'somewhere around {LECTURE_RATIO:.0f}' on most "
        "GPUs and has stayed 'reasonably stable' from A100 to H100 to B100. **The presets** "
        f"({LECTURE_RATIO_DTYPE} FLOP/s ÷ HBM bytes/s, datasheet figures): "
        + (f"{steps} ({moves}; B100 has no preset, B200 stands in). " if len(lec) > 1 else "")
        + f"Across all {len(r16)} chips it runs from **{r16[lo_r]:.0f}** ({chip_label(gens16.names[lo_r])}) to "
        f"**{r16[hi_r]:.0f}** ({chip_label(gens16.names[hi_r])}), a {r16[hi_r] / r16[lo_r]:.2g}× spread; the highest "
        "are " + " and ".join(f"{chip_label(gens16.names[i])} ({r16[i]:.0f})" for i in top)
        + f"; {near} of {len(r16)} lie within {NEAR[0]:.0f}–{NEAR[1]:.0f}: {verdict}. Since T_c ∝ bw/F, the "
          "context where KV overtakes compute moves inversely with it.")
    if s.precision.compute != LECTURE_RATIO_DTYPE and view.chip_key in gens16.keys \
            and s.precision.compute in hw.compute_dtypes():
        st.caption(f"The sidebar computes at {s.precision.compute}: {chip_label(hw.name)} gives "
                   f"{hw.flops(s.precision.compute) / hw.hbm_bandwidth_bytes_per_s:,.0f} {s.precision.compute} "
                   f"FLOP per byte against {r16[cur16]:.0f} at {LECTURE_RATIO_DTYPE} — the lecture's "
                   f"{LECTURE_RATIO:.0f} is the {LECTURE_RATIO_DTYPE} figure.")

# ---------------------------------------------------------------- chart 2: chip generations (one vectorised call)
gens = generations(hardware_presets(), s.precision.compute)
ratio_g = gens.flops_per_byte                         # datasheet F/bw at the compute dtype [FLOP/B]
cur = gens.keys.index(view.chip_key) if view.chip_key in gens.keys else None
F_g = gens.flops * s.deployment.mfu
bw_g = gens.hbm_bandwidth * s.deployment.bw_util
tc_ref_g = compute_crossover_context(kv_ref, na_ref, F_g, bw_g)
tc_mod_g = compute_crossover_context(kv, Na, F_g, bw_g)
tc_frac_g = compute_crossover_context(kv, Na, F_g, bw_g, "fraction", f_now)
ratio_mode = ss["cx_x"] == "ratio"
x = gens.flops_per_byte * s.deployment.mfu / s.deployment.bw_util if ratio_mode else gens.year
curve_x = np.geomspace(float(x.min()) / 1.2, float(x.max()) * 1.2, 120) if ratio_mode and x.size else None
ref_name = f"lecture reference: {number(na_ref)} active, {bytes_(kv_ref.full_bytes_per_token)}/token"
# label NVIDIA's line and the current chip; the rest are named on hover (too many share a year to label all)
labelled = [k in LABELLED_CHIPS or k == view.chip_key for k in gens.keys]
series = [Series(f"{model.name}, dense", tc_mod_g, fig_context.DENSE_COLOR, "circle",
                 curve_x=curve_x, curve_y=compute_crossover_context(kv, Na, curve_x, 1.0)
                 if curve_x is not None else None),
          Series(f"{model.name}, reading f = {f_now:g}", tc_frac_g, fig_context.FRACTION_COLOR, "square"),
          Series(ref_name, tc_ref_g, fig_context.REFERENCE_COLOR, "diamond", labels=labelled,   # drawn on top
                 curve_x=curve_x, curve_y=compute_crossover_context(kv_ref, na_ref, curve_x, 1.0)
                 if curve_x is not None else None)]
if len(gens.keys):
    fig = fig_context.crossover_by_chip(
        x, series, names=[f"{n} ({d})" for n, d in zip(gens.names, gens.date)],
        short=[chip_label(n) for n in gens.names],
        x_title="chip announced (year)" if not ratio_mode else f"chip FLOP/s ÷ HBM bytes/s at {s.precision.compute} "
                                                                "[FLOP/B]",
        x_is_year=not ratio_mode, current=cur, band=STALLED_CONTEXT_TOKENS, month=MONTH_ON_THE_JOB_TOKENS,
        title=f"Where KV overtakes compute, chip by chip ({s.precision.compute} FLOP/s, {s.precision.kv} KV)")
    export.chart(fig, key="cx_generations")
    lo_i, hi_i = int(np.nanargmin(tc_ref_g)), int(np.nanargmax(tc_ref_g))
    f0, f1 = 0, int(np.argmax(gens.flops))            # the earliest chip and the one with most FLOP/s
    st.caption(f"Each point: one chip preset, T_c = 2·Na·bw/(F·kv_tok) — only bw/F of the chip enters. From "
               f"{chip_label(gens.names[f0])} to {chip_label(gens.names[f1])} FLOP/s grew "
               f"{gens.flops[f1] / gens.flops[f0]:.3g}× and bandwidth "
               f"{gens.hbm_bandwidth[f1] / gens.hbm_bandwidth[f0]:.3g}×, "
               f"so F/bw moved {ratio_g[f1] / ratio_g[f0]:.3g}×: the lecture's reference model crosses "
               f"between {tokens(tc_ref_g[lo_i])} ({chip_label(gens.names[lo_i])}) and {tokens(tc_ref_g[hi_i])} "
               f"({chip_label(gens.names[hi_i])}) across the chips here. {model.name} stores "
               f"{bytes_(kv_tok)} of KV per token ({kv_tok / kv_ref.full_bytes_per_token:,.3g}× the reference's) for "
               f"{number(Na)} active parameters, so on {chip_label(hw.name)} it crosses at {where(tc['dense'])} "
               f"tokens instead of {where(tc_ref)}. Announced, not shipping: "
               + (", ".join(chip_label(n) for n, st_ in zip(gens.names, gens.status) if st_ == "announced") or "none")
               + "." + (f" Left out (no {s.precision.compute} FLOP/s figure): {', '.join(gens.skipped)}."
                        if gens.skipped else "")
               + ("" if cur is not None else f" {hw.name} is not a real chip, so it is not on the chart."))

# ---------------------------------------------------------------- chart 3: the sparse-attention dial
st.subheader("Sparse attention: read less of the context")
f_grid = np.unique(np.concatenate([np.geomspace(F_OPTIONS[0], 1.0, 121), [f_now]]))
tc_f_mod = compute_crossover_context(kv, Na, F, bw, "fraction", f_grid)       # one call per model, every f
tc_f_ref = compute_crossover_context(kv_ref, na_ref, F, bw, "fraction", f_grid)
tc_sqrt_ref = float(compute_crossover_context(kv_ref, na_ref, F, bw, "sqrt", knee))
i_f = int(np.searchsorted(f_grid, f_now))
fig = fig_context.crossover_vs_fraction(
    f_grid, [Curve(f"{model.name}", tc_f_mod, fig_context.DENSE_COLOR, "solid", 4),
             Curve("lecture reference", tc_f_ref, fig_context.REFERENCE_COLOR, "solid", 4)],
    f_now=f_now, now_values=[float(tc_f_mod[i_f]), float(tc_f_ref[i_f])],
    sqrt_lines=[(f"√T rule, K = {tokens(knee)}: {model.name}", tc["sqrt"], fig_context.SQRT_COLOR),
                (f"√T rule, K = {tokens(knee)}: reference", tc_sqrt_ref, fig_context.REFERENCE_COLOR)],
    band=STALLED_CONTEXT_TOKENS, month=MONTH_ON_THE_JOB_TOKENS,
    title=f"Context reachable before KV dominates, against the fraction read ({chip_label(hw.name)})")
export.chart(fig, key="cx_fraction")
read_100m = float(s.kv_read(MONTH_ON_THE_JOB_TOKENS))
st.caption(f"T_c(f): reading a fraction f = {f_now:g} of the context moves {model.name}'s crossover from "
           f"{where(tc['dense'])} to {where(tc['fraction'])} tokens"
           + (f" ({tc['fraction'] / tc['dense']:.3g}×; T_c/f for full attention)"
              if np.isfinite(tc["fraction"]) and np.isfinite(tc["dense"]) and tc["dense"] > 0 else "")
           + ". Dashed: the √T rule — past the knee the crossover jumps to T_c²/K. For scale, one sequence at 100M "
           f"tokens reads "
           f"{bytes_(read_100m)} of {model.name}'s KV per dense step: {seconds(read_100m / bw)} at "
           f"{chip_label(hw.name)}'s bandwidth, per token, against {seconds(2 * Na / F)} of matmuls.")
st.warning(
    "**Quality is the catch.** A token the selector does not read cannot influence the next token, so sparse "
    "attention is a bet that a cheap selector finds the tokens that matter: retrieval of a detail deep in the context "
    "and long-range reasoning are what suffer when it misses. The savings are in reads only — every token's KV is "
    "still stored, so HBM capacity still caps the batch — and the selector itself still scans an index over every "
    "token (not charged here). The √T rule is the lecture's paraphrase of DeepSeek's sparse attention ('a square "
    "root in this term', arXiv 2512.02556), not a published formula.", icon="⚠️")
