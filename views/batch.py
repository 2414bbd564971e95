"""Batch — why tokens cost what they cost (lecture §1.2–1.5, 00:00:00)."""

import numpy as np
import streamlit as st

from model import decode_step, system_balance_batch
from ui import estimate
from ui.elements import export, metrics
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import batch as eq
from ui.figures import batch as figures
from ui.format import bytes_, number, seconds, usd
from ui.state.dials import BATCH_OPTIONS
from ui.state.view import current_view, page_header
from views import heading

view = current_view()
s, B, T = view.system, view.batch, view.context
C, F, bw = view.chips, s.flops, s.hbm_bandwidth
price = s.hardware.price_usd_per_hour

page_header(heading("batch"), view)

# One vectorised call per chart: the whole batch sweep, then the current point.
grid = np.unique(np.concatenate([np.geomspace(1, 65536, 97), BATCH_OPTIONS, [B]]))  # 6 points per octave
sweep = decode_step(s, grid, T)
now = decode_step(s, B, T)
# With efficiencies below 1 (sidebar, or fitted on the Reality-check page), the ideal curve is drawn too.
realistic = s.deployment.mfu < 1 or s.deployment.bw_util < 1
ideal = decode_step(s.with_(mfu=1.0, bw_util=1.0), grid, T) if realistic else None
IDEAL = "ideal roofline (efficiency 1)"
# The fitted model's prediction over the same sweep (one call for both charts), drawn beside the roofline; the
# sidebar's Estimate switch says which of the two the numbers read.
pred = estimate.predict(s, grid, T)
i_now = int(np.searchsorted(grid, B))                    # B is on the grid
est = view.estimate
word = estimate.word(est, s)
b_star_kv = float(system_balance_batch(s, T))
b_star0 = float(system_balance_batch(s, 0.0))
# The numbers the switch picks: the roofline's at B, or the prediction's.
if view.predicted:
    t_now, u_now, chip_now = (float(pred.t_step_s[i_now]), float(pred.tokens_per_s_per_user[i_now]),
                              float(pred.tokens_per_s_per_chip[i_now]))
    usd_now, bound_now, cost_curve = float(pred.usd_per_mtok[i_now]), str(pred.bound[i_now]), pred.usd_per_mtok
else:
    t_now, u_now, chip_now = float(now.t_step_s), float(now.tokens_per_s_per_user), float(now.tokens_per_s_per_chip)
    usd_now, bound_now, cost_curve = float(now.usd_per_mtok), str(now.bound), sweep.usd_per_mtok
lo, hi = estimate.band()
# "Unbatched costs N× more": B = 1 against the cheapest batch that fits (B* when it fits).
fit_cost = np.where(sweep.fits, cost_curve, np.inf)
best = int(np.argmin(fit_cost))
unbatched_ratio = float(cost_curve[0] / fit_cost[best]) if np.isfinite(fit_cost[best]) else float("nan")
QUIET = {"delta_color": "off", "delta_arrow": "off"}
band_help = (f" Predicted: the efficiency model fitted to the published measurements; 8 in 10 of them, held out, "
             f"measured between {lo:.2f}× and {hi:.2f}× the predicted time (the range under the number).")
basis_help = band_help if view.predicted else (
    " The ideal roofline: every FLOP at peak, every byte at full HBM bandwidth." if word == "Ideal" else
    f" The roofline at the sidebar's Efficiency dials (MFU {s.deployment.mfu:g}, bandwidth {s.deployment.bw_util:g}).")

metrics.grid([
    Metric(f"{word} latency per token", seconds(t_now), help="Time of one decode step: each sequence "
           "gets one token per step." + basis_help,
           **({"delta": f"{seconds(t_now * lo)} – {seconds(t_now * hi)}", **QUIET} if view.predicted else {})),
    Metric(estimate.labelled(est, s, "Speed per user [tok/s]"), number(u_now)),
    Metric(estimate.labelled(est, s, "Throughput per chip [tok/s]"), number(chip_now),
           help="Tokens per second from all B sequences, divided by the chips serving them."),
    Metric(estimate.labelled(est, s, "Cost [$/Mtok]"), usd(usd_now),
           help="Chip-hours × price ÷ tokens produced." + basis_help,
           **({"delta": f"{usd(usd_now * lo)} – {usd(usd_now * hi)}", **QUIET} if view.predicted else {})),
    Metric(f"{word} bound", bound_now, help="The largest term of the step time" + (
        ": compute (matmuls and attention) or memory (weights + KV), in the fitted model." if view.predicted
        else ".")),
    Metric("Balance batch B*(T)", number(b_star_kv) if np.isfinite(b_star_kv) else "none",
           help=f"Where matmul time equals weight + KV time at context T, on the roofline. With KV ignored (the "
                f"lecture's B*): {number(b_star0)}. 'none': memory-bound at every batch at this context."),
], columns=3)    # two rows: six labels in one row truncate

st.markdown("**The balance batch** — weight fetch time equals matmul time (KV ignored): "
            "the lecture's *≈ 300 × sparsity*.")
latex(eq.balance_batch(s), key="batch.balance")
latex(eq.balance_batch_kv(s, T), key="batch.balance_kv")
latex(eq.step_time(s, B, T), key="batch.step")

per_phase = s.deployment.mode == "per-phase"
c1, c2 = st.columns(2)
with c1:
    extra = [("matmul", sweep.t_matmul_s * 1e3, figures.TERM_COLORS["matmul"]),
             ("weights + KV", (sweep.t_weights_s + sweep.t_kv_s) * 1e3, figures.TERM_COLORS["weights"])]
    if per_phase:
        extra.append(("attention", sweep.t_attn_s * 1e3, figures.TERM_COLORS["attention"]))
    if ideal is not None:
        extra.append((IDEAL, ideal.t_step_s * 1e3, figures.GREY))
    fig = figures.curve_vs_batch(grid, sweep.t_step_s * 1e3, sweep.fits, sweep.bound, name=estimate.ideal_name(s),
                                 unit="ms", title="Latency per token against batch", y_title="time per step [ms]",
                                 b_star=b_star_kv, b_star_no_kv=b_star0, b_now=B, y_now=t_now * 1e3,
                                 extra=extra, predicted=estimate.time_prediction(pred.t_step_s * 1e3, sweep.fits),
                                 dot_on_predicted=view.predicted)
    export.chart(fig, key="latency_vs_batch")
    w0 = float(sweep.t_weights_s[0] / sweep.t_step_s[0])
    st.caption("Latency per token = one decode step. Every weight must be read once per step: the latency floor "
               f"W/(C·bw) = {seconds(float(sweep.t_weights_s[0]))}. At B = {grid[0]:g} the weight read is "
               f"{100 * w0:.3g} % of the step, so the curve "
               + ("starts flat, near the floor, " if w0 >= 0.5 else "is already off the floor ")
               + "and rises as compute or KV reads take over. Grey: weights + KV do not fit in HBM.")
with c2:
    per_tok = C * price / 3600.0 / (grid * s.deployment.tokens_per_step) * 1e6
    extra = [("matmul", sweep.t_matmul_s * per_tok, figures.TERM_COLORS["matmul"]),
             ("weights/B", sweep.t_weights_s * per_tok, figures.TERM_COLORS["weights"]),
             ("KV", sweep.t_kv_s * per_tok, figures.TERM_COLORS["kv"])]
    if ideal is not None:
        extra.append((IDEAL, ideal.usd_per_mtok, figures.GREY))
    fig = figures.curve_vs_batch(grid, sweep.usd_per_mtok, sweep.fits, sweep.bound, name=estimate.ideal_name(s),
                                 unit="$/Mtok", title="Cost per million tokens against batch",
                                 y_title="cost [$ per million tokens]", b_star=b_star_kv, b_star_no_kv=b_star0, b_now=B,
                                 y_now=usd_now, extra=extra,
                                 predicted=estimate.time_prediction(pred.usd_per_mtok, sweep.fits),
                                 dot_on_predicted=view.predicted)
    export.chart(fig, key="cost_vs_batch")
    st.caption(f"Cost per token ∝ step time ÷ batch: the weight fetch is shared by the batch (a hyperbola); "
               f"compute and KV are paid per token. Unbatched (B = 1) costs **{number(unbatched_ratio)}×** more "
               f"than the cheapest batch that fits (B = {grid[best]:,.0f}), "
               + ("predicted." if view.predicted else "on the roofline."))
st.caption(estimate.caption(s) + f" The numbers above read the {'prediction' if view.predicted else 'roofline'} "
           "(the sidebar's Estimate).")

c3, c4 = st.columns(2)
with c3:
    terms = {"matmul": float(now.t_matmul_s), "attention": float(now.t_attn_s), "weights": float(now.t_weights_s),
             "kv": float(now.t_kv_s), "comm": float(now.t_comm_s), "hops": float(now.t_hops_s)}
    export.chart(figures.step_breakdown(terms, s.deployment.mode, f"Where the step goes at B = {B:g}"),
                    key="breakdown")
    if per_phase:
        st.caption("Per-phase mode: the step is the matmul phase (the larger of the matmuls and the weight read) "
                   "plus the attention phase (the larger of the attention FLOPs and the KV read).")
    else:
        st.caption("The step is the larger side (lecture mode): compute (matmuls) or memory (weights + KV reads).")
    j = float(now.joules_per_token) * t_now / float(now.t_step_s)     # energy ∝ the step time
    metrics.grid([
        Metric("HBM per chip", bytes_(float(now.hbm_bytes_per_chip)),
               delta="fits" if bool(now.fits) else f"exceeds {bytes_(s.hardware.hbm_bytes)}",
               delta_color="normal" if bool(now.fits) else "inverse"),
        Metric(estimate.labelled(est, s, "Batch-train latency"), f"{seconds(1.5 * t_now)} avg",
               delta=f"{seconds(2 * t_now)} worst", delta_color="off",
               help="A new request waits for the next step to leave (up to one step), then rides it: "
                    "worst case 2 × step, average 1.5 × step (lecture §1.4)."),
        Metric(estimate.labelled(est, s, "Energy per token [J]"), f"{j:.3g}" if np.isfinite(j) else "—",
               help="Chips × board power × step ÷ tokens: an upper bound (chips at full power)."
                    + ("" if np.isfinite(j) else f" {s.hardware.name} has no power figure in the presets.")),
        Metric(estimate.labelled(est, s, "Unbatched cost ÷ best"), f"{number(unbatched_ratio)}×"),
    ], columns=2)
with c4:
    export.chart(figures.pareto(sweep.tokens_per_s_per_user, sweep.tokens_per_s_per_chip, grid, sweep.fits,
                                   (float(now.tokens_per_s_per_user), float(now.tokens_per_s_per_chip), B)),
                    key="pareto")
    st.caption("Each batch is one point: bigger batches give more tokens per chip (cheaper) but fewer per user "
               "(slower). The curve is the roofline's bound on this hardware: no engine does better at the sidebar's "
               "MFU and bandwidth utilisation.")
