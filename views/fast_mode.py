"""Fast mode — buying speed with price (lecture §1.3, §1.7, §2.4).

A provider sells speed by running a smaller batch: each step still reads every weight, so fewer
sequences share that cost.  Two operating points on one system — standard and fast — either chosen
as batches or solved from a quoted speedup and price multiple (default: a price preset's fast mode).
"""

import numpy as np
import streamlit as st

from model import decode_step, hbm_drain_time, max_batch_that_fits, presets, system_balance_batch
from model.economics import fast_mode_batches, fast_mode_forward
from ui import estimate
from ui.elements import export, metrics, tables
from ui.elements.lazy import lazy_expander
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import batch as eq_batch
from ui.equations import fast_mode as eq
from ui.figures.fast_mode import FAST_COLOR, STANDARD_COLOR, batch_text, fast_mode_curves
from ui.format import bytes_, number, seconds, tokens, usd
from ui.state import dials
from ui.state.dials import BATCH_OPTIONS, choice_dial, number_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("fast-mode",)
DEFAULT_OFFER = "claude-opus-4.6"   # the lecture's "6× the price for 2.5× the speed" (§2.4)

view = current_view()
s, T, C = view.system, view.context, view.chips
F, bw = s.flops, s.hbm_bandwidth
mode = s.deployment.mode

page_header(heading("fast-mode"), view)

# ---------------------------------------------------------------- the page's dials (URL-backed)
offers = {k: p for k, p in presets.price_presets().items()
          if p.fast_speedup is not None and p.fast_price_multiple is not None}
default_offer = DEFAULT_OFFER if DEFAULT_OFFER in offers else next(iter(offers), "custom")
seed = offers.get(default_offer)
# Custom S and Pm start at the default offer's quote (the multiple is computed, never typed in).
S0 = float(np.clip(seed.fast_speedup, 1.01, 100)) if seed else 2.0
Pm0 = float(np.clip(seed.fast_price_multiple, 1.01, 1000)) if seed else 2.0

page_dial(choice_dial("fm", ["quote", "batches"], "quote", PAGE))
page_dial(choice_dial("offer", [*offers, "custom"], default_offer, PAGE))
page_dial(number_dial("S", 1.01, 100, S0, PAGE))
page_dial(number_dial("Pm", 1.01, 1000, Pm0, PAGE))
# Batches-mode defaults: near the default quote's solution on the default system (H100 × Llama-70B, 8k).
page_dial(choice_dial("bs", BATCH_OPTIONS, 96, PAGE))
page_dial(choice_dial("bf", BATCH_OPTIONS, 6, PAGE))


def _offer_label(key: str) -> str:
    if key == "custom":
        return "custom quote"
    p = offers[key]
    return f"{p.model or p.name}: {p.fast_price_multiple:.3g}× price, {p.fast_speedup:.3g}× speed"


ss = st.session_state
c = st.columns([1.1, 2.2, 1, 1] if ss.get("fm", "quote") == "quote" else [1.1, 2, 2, 0.2])
c[0].radio("Operating points", ["quote", "batches"], key="fm", persist_state="session",
           format_func={"quote": "from a quote", "batches": "choose batches"}.get,
           help="From a quote: solve the standard and fast batches for a speedup and a price multiple. "
                "Choose batches: pick both batches and read off the speedup and price multiple.")
if ss["fm"] == "quote":
    c[1].selectbox("Quote (price presets with a fast mode)", [*offers, "custom"], key="offer",
                   format_func=_offer_label, persist_state="session",
                   help="A provider's fast-mode offer: output price multiple and quoted output-speed multiple.")
    custom = ss["offer"] == "custom"
    if custom:
        c[2].number_input("Speedup S [×]", min_value=1.01, max_value=100.0, step=0.1, key="S",
                          persist_state="session", help="Fast output tokens/s per user ÷ standard.")
        c[3].number_input("Price multiple Pm [×]", min_value=1.01, max_value=1000.0, step=0.5, key="Pm",
                          persist_state="session", help="Fast $/output token ÷ standard.")
        S, Pm = float(ss["S"]), float(ss["Pm"])
    else:
        offer = offers[ss["offer"]]
        S, Pm = float(offer.fast_speedup), float(offer.fast_price_multiple)
        c[2].markdown(f"output **\\${offer.output_usd_per_mtok:g} → \\${offer.fast_output_usd_per_mtok:g}**"
                      f" /Mtok  \n= **{Pm:.3g}×** the price")
        when = f" ({offer.meta['fast_speedup'].date})" if "fast_speedup" in offer.meta else ""
        c[3].markdown(f"quoted **{S:.3g}×** output tokens/s per user{when}")
else:
    c[1].select_slider("Standard batch B_std", options=BATCH_OPTIONS, key="bs", persist_state="session",
                       help="Sequences per step in the standard (cheap) mode.")
    c[2].select_slider("Fast batch B_fast", options=BATCH_OPTIONS, key="bf", persist_state="session",
                       help="Sequences per step in the fast mode: smaller, so each step is shorter.")
    B_std_pick, B_fast_pick = float(ss["bs"]), float(ss["bf"])

st.markdown("Each decode step reads **every weight once**, however many sequences share it. "
            "Cost per token ∝ step time ÷ batch; speed per user = 1 ÷ step time. A **fast mode** runs a "
            "*smaller* batch: the step shrinks toward the latency floor (faster), but fewer tokens share the "
            "weight fetch (dearer).")

# ---------------------------------------------------------------- the model: operating points and curves
try:
    b_star0 = float(system_balance_batch(s, 0.0))       # lecture's B* (no KV)
    b_star = float(system_balance_batch(s, T))          # B*(T) with this context's KV reads
    b_max = float(max_batch_that_fits(s, T))
    ref0 = fast_mode_batches(s, S, Pm, 0.0) if ss["fm"] == "quote" else None   # the no-KV closed form
    if ss["fm"] == "quote":
        fm = fast_mode_batches(s, S, Pm, T)
    else:
        fm = fast_mode_forward(s, B_std_pick, B_fast_pick, T)
    # Batch axis: up to ~8× the largest batch of interest (a power of two), so the operating points fill it.
    of_interest = [x for x in (fm.batch_standard, ref0.batch_standard if ref0 else None, b_star0, b_star,
                               min(b_max, 1e6)) if x is not None and np.isfinite(x) and x > 0]
    b_hi = float(np.clip(2.0 ** np.ceil(np.log2(8 * max(of_interest, default=2048))), 64, BATCH_OPTIONS[-1]))
    # 6 points per octave (as on the Batch page), the dial batches, and the batches the page marks, so the
    # kink at B* and the markers sit on the curves exactly.
    marks = [x for x in (*of_interest, fm.batch_fast, ref0.batch_fast if ref0 else None)
             if x is not None and np.isfinite(x) and 1 <= x <= b_hi]
    grid = np.unique(np.concatenate([np.geomspace(1, b_hi, int(6 * np.log2(b_hi)) + 1),
                                     [o for o in BATCH_OPTIONS if o <= b_hi], marks]))
    # One call for the chart: rows = (context T, no KV), columns = the batch grid.
    sweep = decode_step(s, grid[None, :], np.array([[T], [0.0]]))
    # Floors: the weight fetch alone (B → 0) and the cost per token as B → ∞ (compute + KV, nothing to share).
    floors = decode_step(s, np.array([1.0, 1e12]), T)
    kv_t = float(s.kv_read(T))
    # The fitted model on the chart's batches at T (one call), drawn beside the roofline with its band.
    pred = estimate.predict(s, grid, T)
except ValueError as exc:   # e.g. a model with neither attention shapes nor a KV figure
    st.warning(f"This combination cannot be computed: {exc}. Change a dial in the sidebar.", icon="⚠️")
    dials.write_url()       # st.stop ends the run before the app writes the URL
    st.stop()

latency_floor_s = float(floors.t_weights_s[0])
cost_floor = float(floors.usd_per_mtok[1])
solved = fm.batch_standard is not None and fm.batch_fast is not None
weights_fit = b_max > 0
# The metrics' latency and cost read the sidebar's Estimate: the roofline's at the two batches, or the fitted
# model's at the same batches (the operating points are solved on the roofline either way).
word = estimate.word(view.estimate, s)
if solved and view.predicted:
    at_pts = estimate.predict(s, np.array([fm.batch_standard, fm.batch_fast]), T)
    t_std, t_fast = (float(x) for x in at_pts.t_step_s)
    u_std, u_fast = (float(x) for x in at_pts.usd_per_mtok)
elif solved:
    t_std, t_fast = fm.t_step_standard_s, fm.t_step_fast_s
    u_std, u_fast = fm.usd_per_mtok_standard, fm.usd_per_mtok_fast


def _times_b_star(batch_, over):
    """A batch as a multiple of B*(T); of the no-KV B*₀ when decode is memory-bound at every batch."""
    if batch_ is None:
        return "no solution"
    if over is not None:
        return f"{over:.3g} × B*(T)"      # plain text: the metrics grid is HTML, not Markdown
    return f"{batch_ / b_star0:.3g} × B*₀ (B*(T) = ∞)"


# ---------------------------------------------------------------- metrics
QUIET = {"delta_color": "off", "delta_arrow": "off"}
metrics.grid([
    Metric("Speedup S [×]", f"{fm.speedup:.3g}" if fm.speedup is not None else "—",
           help="Output tokens/s per user, fast ÷ standard (= standard step time ÷ fast step time)."),
    Metric("Price multiple Pm [×]", f"{fm.price_multiple:.3g}" if fm.price_multiple is not None else "—",
           help="$ per output token, fast ÷ standard (= (t_fast/B_fast) ÷ (t_std/B_std))."),
    Metric("Standard batch B_std", number(fm.batch_standard) if solved else "—",
           delta=_times_b_star(fm.batch_standard, fm.batch_standard_over_balance), **QUIET,
           help="Sequences per step in standard mode, as a multiple of the balance batch B*(T) at this context "
                "(B*₀: the balance batch without KV, when KV makes B*(T) infinite)."),
    Metric("Fast batch B_fast", number(fm.batch_fast) if solved else "—",
           delta=_times_b_star(fm.batch_fast, fm.batch_fast_over_balance), **QUIET,
           help="Sequences per step in fast mode, as a multiple of the balance batch B*(T) at this context "
                "(B*₀: the balance batch without KV, when KV makes B*(T) infinite)."),
    Metric(f"{word} latency std → fast [ms]", f"{t_std * 1e3:.3g} → {t_fast * 1e3:.3g}" if solved else "—",
           help="Time per output token (one decode step) in each mode"
                + (", predicted by the fitted model at the same two batches." if view.predicted else "."),
           **({"delta": f"{t_std / t_fast:.3g}× speed, predicted", **QUIET} if solved and view.predicted else {})),
    Metric(f"{word} cost std → fast [$/Mtok]", f"{u_std:.3g} → {u_fast:.3g}" if solved else "—",
           help="Cost per million output tokens at the chip-hour price (not the API's list price)"
                + (", predicted by the fitted model at the same two batches." if view.predicted else
                   ", on the roofline."),
           **({"delta": f"{u_fast / u_std:.3g}× price, predicted", **QUIET} if solved and view.predicted else {})),
], columns=3)    # two rows: "14.8 → 5.93" does not fit a sixth of the page

# ---------------------------------------------------------------- messages when there is no answer
HINT = {"HBM": "More chips (C) give more HBM; a shorter context needs less KV per sequence.",
        "latency floor": "A smaller price multiple gives a larger fast batch (B_fast = B*/Pm without KV).",
        "a fast mode needs": "Pick a fast batch smaller than the standard batch."}
# conditional notices in one fixed slot: the elements below keep their place, so the charts keep their DOM nodes
notices = st.container()
if ss["fm"] == "quote" and not solved:
    hint = next((h for k, h in HINT.items() if k in fm.reason), "") if weights_fit else ""
    notices.warning(f"No fast mode for {S:.3g}× speed at {Pm:.3g}× price on this system at T = {tokens(T)}: "
                    f"{fm.reason}. {hint}", icon="⚠️")
if not weights_fit:
    notices.warning(f"The weights ({bytes_(s.weight_bytes)}) do not fit in the HBM of C = {C:g} × "
                    f"{s.hardware.name} ({bytes_(C * s.hardware.hbm_bytes)}): every point below is hypothetical.",
                    icon="⚠️")
if ss["fm"] == "batches":
    if B_fast_pick >= B_std_pick:
        notices.info("The fast batch is not smaller than the standard batch, so the 'fast' mode is not faster "
                     "(speedup ≤ 1). Pick B_fast < B_std.")
    elif weights_fit and B_std_pick > b_max:
        notices.warning(f"The standard batch {B_std_pick:,.0f} does not fit in HBM at T = {tokens(T)} "
                        f"(at most {b_max:,.0f} sequences on {C:g} chips).", icon="⚠️")

# ---------------------------------------------------------------- the two-panel chart
points, ref_points = [], []
if solved:
    points = [("standard", fm.batch_standard, fm.t_step_standard_s, fm.usd_per_mtok_standard, STANDARD_COLOR),
              ("fast", fm.batch_fast, fm.t_step_fast_s, fm.usd_per_mtok_fast, FAST_COLOR)]
if ref0 is not None and ref0.batch_standard is not None:
    ref_points = [("standard, no KV", ref0.batch_standard, ref0.t_step_standard_s, ref0.usd_per_mtok_standard,
                   STANDARD_COLOR),
                  ("fast, no KV", ref0.batch_fast, ref0.t_step_fast_s, ref0.usd_per_mtok_fast, FAST_COLOR)]
titles = (f"Latency: fast is {fm.speedup:.3g}× quicker" if solved else "Latency per token",
          f"Cost: fast is {fm.price_multiple:.3g}× dearer" if solved else "Cost per token")
# One figure, two panels: side by side on a wide screen, one under the other on a phone (the chart element
# switches to the figure's narrow layout).  One chart draws a move faster than two: bench/profile_move.py,
# sidebar Context, 4 rounds of 12 moves, last chart p50 132 → 117 ms.
fig = fast_mode_curves(grid, sweep.t_step_s[0], sweep.usd_per_mtok[0], sweep.fits[0], sweep.bound[0], points,
                       latency_floor_s, cost_floor, b_star if np.isfinite(b_star) else None,
                       curve_name=f"roofline at T = {tokens(T)}",
                       reference=("no KV (T = 0)", sweep.t_step_s[1], sweep.usd_per_mtok[1]),
                       reference_points=ref_points, titles=titles,
                       predicted=(estimate.time_prediction(pred.t_step_s, sweep.fits[0]),
                                  estimate.time_prediction(pred.usd_per_mtok, sweep.fits[0])))
export.chart(fig, key="fast_mode_curves")
drain = float(hbm_drain_time(s.hardware.hbm_bytes, bw))
slower_saves = 1 - cost_floor / fm.usd_per_mtok_standard if solved and fm.usd_per_mtok_standard else None
if slower_saves is None:
    slower_note = ""
elif slower_saves < 5e-4:         # below the printed precision: the standard batch is at the floor already
    slower_note = f": the standard batch's {usd(fm.usd_per_mtok_standard)}/Mtok is already there"
else:
    slower_note = (f": at most {100 * slower_saves:.3g} % off the standard batch's "
                   f"{usd(fm.usd_per_mtok_standard)}/Mtok")
st.caption(f"Time per output token (left, or above) and cost per million output tokens (right, or below) against "
           f"batch at "
           f"T = {tokens(T)}. Fast mode moves left, down to the latency floor W/(C·bw) = {seconds(latency_floor_s)} "
           f"(one HBM drain M/bw = {seconds(drain)}), and up the weights ÷ B cost curve. A slower mode (bigger "
           f"batch) cannot go below the floor of {usd(cost_floor)}/Mtok, where compute and KV are paid per token"
           + slower_note + ". Dotted: no KV "
           "(hollow: its operating points); grey dashes: weights + KV do not fit in HBM; shading: the bound.")
st.caption(estimate.caption(s) + " The operating points are solved on the roofline; "
           + ("the latency and cost above read the fitted model at those batches (the sidebar's Estimate)."
              if view.predicted else "the numbers above read the roofline (the sidebar's Estimate)."))

# ---------------------------------------------------------------- the equations with today's numbers
st.subheader("The equations, with today's numbers")
latex(eq_batch.balance_batch(s) + r"\qquad\text{(balance batch, no KV)}", key="fast-mode.balance")
if ss["fm"] == "quote":
    st.markdown("**No KV (the lecture's case).** The fast batch sits on the latency floor (weight-bound), the "
                "standard batch on the compute line, so speed scales as $B_{std}/B^*$ and price as "
                "$B^*/B_{fast}$:")
    latex(eq.no_kv(s, S, Pm), key="fast-mode.no_kv")
    no_ref = st.container()         # a fixed slot: a note that comes and goes leaves the elements below in place
    if ref0 is not None and ref0.batch_standard is None:
        no_ref.caption(f"Even without KV there is no such fast mode here: {ref0.reason}.")
    st.markdown(f"**With KV at T = {tokens(T)}** each sequence also reads kv(T) = {bytes_(kv_t)} per step, so "
                "t(B) is no longer two straight lines meeting at $B^*$; the pair is solved **numerically** "
                "(model.economics.fast_mode_batches)"
                + (" on the per-phase roofline" if mode == "per-phase" else "") + ":")
    latex(eq.solved(s, fm), key="fast-mode.solved")
else:
    st.markdown(f"**Chosen batches at T = {tokens(T)}** (kv(T) = {bytes_(kv_t)} per sequence per step): the "
                "speedup is the ratio of step times, the price multiple the ratio of step time per token.")
    latex(eq.chosen(fm), key="fast-mode.chosen")
memory_bound = st.container()       # fixed slot, as above (this note comes and goes with the context dial)
if not np.isfinite(b_star):
    memory_bound.caption(f"At T = {tokens(T)} the KV read per sequence ({bytes_(kv_t)}) costs more bandwidth time "
                         "than its matmuls: decode is memory-bound at every batch (B*(T) = ∞).")

# ---------------------------------------------------------------- the alternative: more chips
st.subheader("The alternative: faster by spreading over more chips")
domain = s.hardware.scaleup_domain_chips
mult = np.array([1, 2, 4, 8], float)
chip_counts = C * mult[(C * mult <= domain) | (mult == 1)]
if solved:
    b_spread, which = fm.batch_standard, "the standard batch"
else:
    b_spread, which = view.batch, "the sidebar's batch: no standard batch was solved"
spread = decode_step(s, b_spread, T, chips=chip_counts)     # one call: every chip count at once
base_t, base_u = float(spread.t_step_s[0]), float(spread.usd_per_mtok[0])
table = {
    "chips C": [f"{c:g}" + (" (now)" if i == 0 else "") for i, c in enumerate(chip_counts)],
    "time per token [ms]": spread.t_step_s * 1e3,
    "speed per user [tok/s]": spread.tokens_per_s_per_user,
    "cost [$/Mtok]": spread.usd_per_mtok,
    "speedup [×]": base_t / spread.t_step_s,
    "price multiple [×]": spread.usd_per_mtok / base_u,
    "fits in HBM": spread.fits,
}
st.markdown(f"Same batch B = {batch_text(b_spread)} ({which}) at T = {tokens(T)}, split over more chips of one "
            f"scale-up domain ({s.hardware.name}: {domain} chips). Every term of the step divides by C, so "
            "speed grows with C while chip-hours per token stay the same: **speed without the price**, "
            "up to the domain's size (lecture §1.7)."
            + (f" Compare fast mode: **{fm.speedup:.3g}×** speed for **{fm.price_multiple:.3g}×** price."
               if solved else ""))
tables.dataframe(table, key="spread_table",
                 column_config={"time per token [ms]": st.column_config.NumberColumn(format="%.3g"),
                                "speed per user [tok/s]": st.column_config.NumberColumn(format="%.4g"),
                                "cost [$/Mtok]": st.column_config.NumberColumn(format="$%.3g"),
                                "speedup [×]": st.column_config.NumberColumn(format="%.3g"),
                                "price multiple [×]": st.column_config.NumberColumn(format="%.3g")})
domain_full = st.container()        # fixed slot, as above
if len(chip_counts) == 1:
    domain_full.info(f"C = {C:g} already fills {s.hardware.name}'s scale-up domain ({domain} chips): going wider "
                     "means the slower scale-out network.")
st.caption("Ideal roofline: the all-to-all and tensor-parallel communication that more chips need is not "
           "charged here, so the price multiple stays at 1× — in practice it rises, and a fast mode needs no "
           "bigger domain.")

# ---------------------------------------------------------------- the offers (reference: drawn only while open)
OFFERS_OPEN_KEY = "fm_offers_open"      # the expander's open state: session only, never in the URL


def _src(p, field):
    m = p.meta.get(field)
    return (m.source + (" [uncertain]" if m.uncertain else "")) if m else ""


# A lazy expander (ui/elements/lazy.py): a reference table with its sources is drawn only while open, so a dial move
# does not redraw it.
with lazy_expander(f"Fast-mode offers in the price presets ({len(offers)}), with their sources",
                   key=OFFERS_OPEN_KEY) as is_open:
    if is_open and offers:
        rows = [{
            "provider": p.provider, "model": p.model or p.name,
            "standard output [$/Mtok]": p.output_usd_per_mtok, "fast output [$/Mtok]": p.fast_output_usd_per_mtok,
            "price multiple [×]": p.fast_price_multiple, "quoted speedup [×]": p.fast_speedup,
            "date": p.meta["fast_output_usd_per_mtok"].date if "fast_output_usd_per_mtok" in p.meta else "",
            "price source": _src(p, "fast_output_usd_per_mtok"),
            "speedup source": _src(p, "fast_speedup") + (f" — {p.meta['fast_speedup'].note}"
                                                         if "fast_speedup" in p.meta and p.meta["fast_speedup"].note
                                                         else ""),
        } for p in offers.values()]
        tables.dataframe(rows, key="offers_table",
                         column_config={"standard output [$/Mtok]": st.column_config.NumberColumn(format="$%.2f"),
                                        "fast output [$/Mtok]": st.column_config.NumberColumn(format="$%.2f"),
                                        "price multiple [×]": st.column_config.NumberColumn(format="%.3g"),
                                        "quoted speedup [×]": st.column_config.NumberColumn(format="%.3g")})
        st.caption("Price multiple = fast ÷ standard output price, from the presets. API prices carry margin and "
                   "prefill, so only the ratios are comparable with the roofline above. Quoted speedups are "
                   "'up to' figures. Check the vendor's page before relying on a price.")
    elif is_open:
        st.info("No price preset has a fast mode; use a custom quote.")
