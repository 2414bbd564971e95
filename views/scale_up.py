"""Scale-up domain — bigger racks buy bandwidth (lecture §1.6, §1.7, §2.9; 00:31:59 and 01:03:27).

The weight fetch of one decode step is spread over every chip of the scale-up domain, so its time —
the latency floor — is W / (C·bw): C chips add bandwidth as well as capacity.  Pipeline stages add
capacity only: they run one after another, so a token still waits for W over one stage's bandwidth.
Scale-up sizes: Hopper 8 → Blackwell 72 → Rubin Ultra 144 packages (576 dies).
"""

import numpy as np
import streamlit as st

from model import decode_step, hbm_drain_time, max_batch_that_fits
from model.cluster import largest_model_params, pipeline
from model.presets import hardware_presets
from ui.elements import export, metrics
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.elements.section import section
from ui.equations import STRUT, tex_num, tex_time
from ui.equations import scale_up as eq
from ui.figures import batch as figures
from ui.figures import scale_up as fig_scaleup
from ui.figures.plot import side_by_side
from ui.figures.scale_up import COMPARE_COLORS, Line, Panel
from ui.format import bytes_, number, seconds, tokens, usd
from ui.state.dials import BATCH_OPTIONS, choice_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("scale-up",)
SX_OPTIONS = [2, 4, 8]
SU_OPTIONS = ["B", "fill"]
C_SWEEP_MAX = 576
B_FILL_MAX = float(BATCH_OPTIONS[-1])      # the "fill" curve's batch is capped where the batch dial ends
GENERATIONS = {8: "Hopper 8", 72: "Blackwell 72", 144: "Rubin Ultra 144", 576: "576 dies"}
PARAM_TICKS = [(10.0 ** k, f"{10.0 ** k:g}B" if k < 3 else f"{10 ** (k - 3):,}T") for k in range(-2, 8)]  # in billions


view = current_view()
s, B, T = view.system, view.batch, view.context
C = float(view.chips)
hw, model = s.hardware, s.model
bw, M, bpp = s.hbm_bandwidth, hw.hbm_bytes, s.precision.weight_bytes_per_param
W = s.weight_bytes
D = int(hw.scaleup_domain_chips)
price = hw.price_usd_per_hour
ss = st.session_state

page_header(heading("scale-up"), view)

# ---------------------------------------------------------------- page dials (URL-backed)
page_dial(choice_dial("su", SU_OPTIONS, "B", PAGE))
page_dial(choice_dial("sx", SX_OPTIONS, 4, PAGE))
fill = ss["su"] == "fill"

# ---------------------------------------------------------------- the C sweep: one call for every C (and batch)
x_max = max(C_SWEEP_MAX, C)
grid = np.unique(np.concatenate([np.arange(1, C_SWEEP_MAX + 1, dtype=float),
                                 np.round(np.geomspace(C_SWEEP_MAX, x_max, 60)), [C]]))
i_now = int(np.searchsorted(grid, C))
if fill:
    # The largest whole batch that fits at each C (capped at the batch dial's end), next to the current B.
    b_fill = np.minimum(np.floor(max_batch_that_fits(s, T, chips=grid)), B_FILL_MAX)
    fill_ok = b_fill >= 1
    sweep = decode_step(s, np.stack([np.full(grid.shape, B), np.maximum(b_fill, 1.0)]), T, chips=grid)
    cur = {k: getattr(sweep, k)[0] for k in ("t_step_s", "t_weights_s", "usd_per_mtok", "fits", "bound",
                                            "hbm_bytes_per_chip")}
    fill_fits = sweep.fits[1] & fill_ok
else:
    sweep = decode_step(s, B, T, chips=grid)
    cur = {k: getattr(sweep, k) for k in ("t_step_s", "t_weights_s", "usd_per_mtok", "fits", "bound",
                                         "hbm_bytes_per_chip")}
# Largest model at each C: with the KV of B sequences at T, and with no KV (weights alone), in one call.
largest = largest_model_params(s, np.array([[B], [0.0]]), T, chips=grid[None, :])

t_floor, t_step = float(cur["t_weights_s"][i_now]), float(cur["t_step_s"][i_now])
usd_now, fits_now = float(cur["usd_per_mtok"][i_now]), bool(cur["fits"][i_now])
bound_now, hbm_chip_now = str(cur["bound"][i_now]), float(cur["hbm_bytes_per_chip"][i_now])
n_max_now = float(largest[0, i_now])
fit_idx = np.flatnonzero(cur["fits"])
c_min = float(grid[fit_idx[0]]) if fit_idx.size else float("nan")
kv_seq = float(s.kv.stored_bytes(T)) if T > 0 else 0.0       # KV bytes one sequence holds at T
bw_agg, cap_agg = C * bw, C * M

# ---------------------------------------------------------------- headline numbers
metrics.grid([     # four to a line: seven numbers in one row truncate on a laptop
    Metric("Bandwidth C·bw", f"{bytes_(bw_agg)}/s",
           help=f"{C:g} chips × {bytes_(bw)}/s each: what one decode step's reads are spread over."),
    Metric("Capacity C·M", bytes_(cap_agg), help=f"{C:g} chips × {bytes_(M)} each."),
    Metric("Floor W/(C·bw)", seconds(t_floor),
           help="Every weight is read once per step, over the whole domain's bandwidth: no batch is faster."),
    Metric("Latency per token", seconds(t_step), help=f"One decode step at B = {B:g}, T = {tokens(T)}."),
    Metric("Cost [$/Mtok]", usd(usd_now), help="C chips × price × step time ÷ B tokens."),
    Metric("Largest model", number(n_max_now) if n_max_now > 0 else "none",
           delta=("holds this model" if n_max_now >= model.total_params else "this model is too big"),
           delta_color="green" if n_max_now >= model.total_params else "red", delta_arrow="off",
           help="Weights (at this weight dtype) plus the KV of B sequences at T in C·M."),
    Metric("Smallest C that fits", f"{c_min:,.0f}" if np.isfinite(c_min) else f"> {grid[-1]:,.0f}",
           help="The smallest scale-up size whose HBM holds the weights plus the KV cache of B sequences at T."),
], columns=4)

# conditional notices in one fixed slot: the elements below keep their place, so the charts keep their DOM nodes
notices = st.container()
if not fits_now:
    where = (f"the smallest scale-up size that holds them is **C = {c_min:,.0f}**" if np.isfinite(c_min) else
             f"not even **C = {grid[-1]:,.0f}** chips hold them: lower the batch or the context")
    notices.warning(f"At C = {C:g}, {model.name}'s weights plus the KV cache of B = {B:g} at T = {tokens(T)} "
                    f"need {bytes_(hbm_chip_now)} per chip, more than {hw.name}'s {bytes_(M)}: {where}. The numbers "
                    "below are what the roofline would give if they fitted (greyed in the charts).", icon="⚠️")
if n_max_now <= 0:
    notices.info(f"The KV cache alone — B = {B:g} sequences × {bytes_(kv_seq)} at T = {tokens(T)} = "
                 f"{bytes_(B * kv_seq)} — is more than C·M = {bytes_(cap_agg)}: no model of any size fits next to it.",
                 icon="ℹ️")

# ---------------------------------------------------------------- the equations, with today's numbers
st.markdown(f"**What C = {C:g} chips in one scale-up domain buy** — every chip reads its share of the weights "
            f"and the KV cache at the same time, so bandwidth and capacity both grow with C (lecture §1.7).")
e1, e2 = st.columns(2)
with e1:
    latex(eq.domain(s), key="scale-up.domain")
with e2:
    latex(eq.largest_model(s, B, T), key="scale-up.largest")
    latex(eq.cost(s, B, T), key="scale-up.cost")

# ---------------------------------------------------------------- row 1: latency and cost against C
st.radio("Sweep curves", SU_OPTIONS, key="su", horizontal=True, persist_state="session",
         # option labels that do not change with another dial: the frontend showed neither option
         # selected after a batch move when the first label carried B
         format_func={"B": "at the sidebar's batch B",
                      "fill": "also at the largest batch that fits at each C"}.get,
         help=f"The sidebar's batch is B = {B:g} now. 'largest batch that fits': the whole batch whose weights "
              f"+ KV fill the domain's HBM (capped at {B_FILL_MAX:,.0f}) — the lecture's 'use all of HBM and read "
              "it once per step'.")
gen_marks = [(float(x), t) for x, t in GENERATIONS.items()]
if D in GENERATIONS:
    gen_marks = [(x, t + " (this chip)" if x == D else t) for x, t in gen_marks]
elif D <= x_max:
    gen_marks.append((float(D), f"this chip's domain {D:,}"))
now_label = f"current C = {C:g}"
# One figure, two panels (latency, cost; side by side, stacked on a phone): one chart to draw per move, not two.
lines = [Line("latency floor W/(C·bw)", cur["t_weights_s"] * 1e3, fig_scaleup.FLOOR_COLOR, dash="dot", width=3),
         Line(f"latency per token at B = {B:g}", cur["t_step_s"] * 1e3, fig_scaleup.STEP_COLOR, cur["fits"])]
if fill:
    lines.append(Line("at the largest batch that fits", np.where(fill_ok, sweep.t_step_s[1] * 1e3, np.nan),
                      fig_scaleup.FILL_COLOR, fill_fits, dash="dash", width=3, batch=b_fill))
if s.deployment.mfu < 1 or s.deployment.bw_util < 1:      # a realistic efficiency: the ideal too
    ideal = decode_step(s.with_(mfu=1.0, bw_util=1.0), B, T, chips=grid)
    lines.append(Line("ideal roofline (efficiency 1)", ideal.t_step_s * 1e3, figures.GREY, dash="dot", width=2))
latency = fig_scaleup.sweep_vs_chips(grid, lines, title="Latency per token against scale-up size", unit="ms",
                                     y_title="time per token [ms]", now=(C, t_step * 1e3, now_label),
                                     marks=gen_marks)
lines = [Line(f"$/Mtok at B = {B:g}", cur["usd_per_mtok"], fig_scaleup.STEP_COLOR, cur["fits"])]
if fill:
    lines.append(Line("at the largest batch that fits", np.where(fill_ok, sweep.usd_per_mtok[1], np.nan),
                      fig_scaleup.FILL_COLOR, fill_fits, dash="dash", width=3, batch=b_fill))
cost = fig_scaleup.sweep_vs_chips(grid, lines, title="Cost per million tokens against scale-up size",
                                  unit="$/Mtok", y_title="cost [$ per million tokens]",
                                  now=(C, usd_now, now_label), marks=gen_marks, labelled=False)
export.chart(side_by_side(latency, cost), key="scaleup_sweeps")
st.caption(f"Left (or above): latency floor = all weights read once over the domain's bandwidth, W/(C·bw): it "
           f"halves every time C doubles. Every term of the step scales as 1/C, so the bound ({bound_now}) does not "
           "change with C; grey: weights + KV do not fit. Communication (MoE all-to-all) is not charged here."
           + (f" Blue: a full domain read once per step — while memory-bound that is the HBM drain time M/bw = "
              f"{seconds(float(hbm_drain_time(M, bw)))} (the lecture's ~20 ms 'train'), whatever C."
              if fill else "")
           + " Right (or below): cost per token = C chips × price × step ÷ B: at a fixed batch C cancels (C× the "
           "chips for 1/C of the time), so a bigger domain buys speed, not cheaper tokens"
           + (" — until the extra HBM holds a bigger batch (blue): then the weight fetch is shared by more "
              "sequences and tokens get cheaper." if fill else
              ". Choose 'largest batch that fits' to see what its extra capacity does."))
st.caption("Marks: Hopper HGX 8 → Blackwell NVL72 72 → Rubin Ultra 144 packages. 576 counts Rubin Ultra's dies "
           "(4 per package, NVIDIA's 'NVL576'); with a per-package chip preset the domain is 144. A C beyond this "
           f"chip's own domain ({D:,}) is a what-if: the same chip in a bigger domain.")

# ---------------------------------------------------------------- row 2: largest model, pipeline vs bigger domain
@section
def row_two() -> None:
    """Row 2 and the text under it: the "Grow by" dial feeds only this, so a move of it reruns this alone
    (ui/elements/section.py).  It is the page's last call, so the page globals it reads are the last page run's; the
    dial it owns it reads itself."""
    sx = int(ss["sx"])
    c3, c4 = st.columns(2)
    with c3:
        lines = [Line("weights alone (B = 0): C·M / bytes", largest[1] / 1e9, fig_scaleup.FLOOR_COLOR, dash="dot",
                      width=3),
                 Line(f"with the KV of B = {B:g} at T = {tokens(T)}",
                      np.where(largest[0] > 0, largest[0], np.nan) / 1e9, fig_scaleup.STEP_COLOR)]
        fig = fig_scaleup.sweep_vs_chips(grid, lines, title="Largest model that fits against scale-up size",
                                         unit="B params", y_title="largest model [parameters]",
                                         now=(C, n_max_now / 1e9, now_label), marks=gen_marks,
                                         hline=(model.total_params / 1e9,
                                                f"{model.name}: {number(model.total_params)}"), y_format=",.4g",
                                         y_ticks=PARAM_TICKS)
        export.chart(fig, key="scaleup_largest")
        st.caption(f"Largest model = HBM left after the KV cache, C·M − B·kv(T), over {bpp:g} bytes per parameter "
                   f"({s.precision.weights} weights). Where the black line is above the red one, {model.name} fits. "
                   "The lecture: a Blackwell rack's 10–20 TB holds a 5T model plus KV.")
    with c4:
        st.radio("Grow by", SX_OPTIONS, key="sx", horizontal=True, persist_state="session",
                 format_func=lambda v: f"×{v}",
                 help="The same number of extra chips, two ways: as pipeline stages (racks in a row, each with C "
                      "chips), or as one scale-up domain of C·× chips.")
        C_big = C * sx
        # Today and the bigger domain: one call (C and C·sx chips, B and sx·B sequences); the pipeline: its own.
        dom = decode_step(s, np.array([B, sx * B]), T, chips=np.array([C, C_big]))
        s_pipe = s.with_(pipeline_stages=sx)
        pip = decode_step(s_pipe, B, T)
        pm = pipeline(s, B, T, float(sx))          # per-chip memory of the P stages (lecture §1.6)
        opts = [f"today<br>{C:g} chips", f"{sx} stages<br>of {C:g}", f"one domain<br>of {C_big:g}"]
        cap = [C * M, C * sx * M, C_big * M]
        bwl = [C * bw, C * bw, C_big * bw]           # the bandwidth one step's weight fetch is spread over
        floor = [float(dom.t_weights_s[0]), float(pip.t_weights_s), float(dom.t_weights_s[1])]
        cost = [float(dom.usd_per_mtok[0]), float(pip.usd_per_mtok), float(dom.usd_per_mtok[1])]
        fits3 = [bool(dom.fits[0]), bool(pip.fits), bool(dom.fits[1])]
        tb = 1e12 if max(cap) >= 1e12 else 1e9
        tb_u = "TB" if tb == 1e12 else "GB"
        panels = [
            Panel("HBM capacity", tb_u, [v / tb for v in cap], [bytes_(v) for v in cap]),
            Panel("bandwidth one step uses", "TB/s", [v / 1e12 for v in bwl], [f"{bytes_(v)}/s" for v in bwl]),
            Panel("latency floor", "ms", [v * 1e3 for v in floor], [seconds(v) for v in floor]),
            Panel("cost", "$/Mtok", cost, [usd(v) + ("" if f else " ✗") for v, f in zip(cost, fits3)]),
        ]
        fig = fig_scaleup.compare_bars(opts, panels, colors=COMPARE_COLORS,
                                       title=f"×{sx} chips: more pipeline stages or a bigger domain?")
        export.chart(fig, key="scaleup_compare")
        st.caption(f"Same chips (C·{sx} = {C_big:g}) and the same {sx * B:g} sequences in flight both ways: {sx} "
                   f"micro-batches of {B:g} through the stages, or one batch of {sx * B:g}. Stages add capacity; "
                   "they run one after another, so a token still waits for all weights over one stage's bandwidth. "
                   "The bigger domain adds both." + ("" if all(fits3) else " ✗: weights + KV do not fit in HBM."))

    latex(rf"\begin{{aligned}}&\text{{pipeline, }}P = {sx}: & M_{{agg}} &= C P M = {tex_num(cap[1], 'B')}, & "
          rf"t_{{floor}} &= \frac{{W}}{{C\,bw}} = \frac{{{tex_num(W, 'B')}}}{{{tex_num(bwl[1], 'B/s')}}} = "
          rf"{tex_time(floor[1])}, & \$/\text{{Mtok}} &= {eq.tex_usd(cost[1])}\\[12pt] "
          rf"&\text{{one domain, }}C' = {C_big:g}: & M_{{agg}} &= C' M = {tex_num(cap[2], 'B')}, & "
          rf"t_{{floor}} &= \frac{{W}}{{C'\,bw}} = \frac{{{tex_num(W, 'B')}}}{{{tex_num(bwl[2], 'B/s')}}} = "
          rf"{tex_time(floor[2])}, & \$/\text{{Mtok}} &= {eq.tex_usd(cost[2])}{STRUT}\end{{aligned}}",
          key="scale-up.pipeline_or_domain")
    hopper, blackwell = hardware_presets()["h100"], hardware_presets()["gb200"]   # the lecture's 'Hopper → Blackwell'
    st.markdown(
        f"**The lecture's point** (§1.7): pipelining fixes capacity; scale-up size fixes bandwidth, and with it "
        f"latency and long context. With {sx} stages each chip holds W/(C·P) = "
        f"{bytes_(float(pm.weight_bytes_per_chip))} of weights but still "
        f"{bytes_(float(pm.kv_bytes_per_chip))} of KV (the P's cancel, §1.6); the {C_big:g}-chip domain holds "
        f"{bytes_(float(dom.hbm_bytes_per_chip[1]))} per chip for {sx} × the sequences and reads them "
        f"with {sx}× the bandwidth. Per-chip bandwidth grows 'maybe 1.5 or 2x per generation'; scale-up size grew "
        f"'8x' from Hopper (the lecture; the presets: {hopper.name} {hopper.scaleup_domain_chips:g} → {blackwell.name} "
        f"{blackwell.scaleup_domain_chips:g} chips, "
        f"{blackwell.scaleup_domain_chips / hopper.scaleup_domain_chips:.3g}×). Pipeline hops are not charged here; "
        "they are on the Pipelining page.")
    if C_big > D:
        st.caption(f"C·{sx} = {C_big:g} is more than {hw.name}'s scale-up domain of {D:,}: the bigger domain here is a "
                   "what-if (a next-generation rack of the same chips).")


row_two()
