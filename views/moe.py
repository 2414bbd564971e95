"""MoE layout — experts over GPUs, the all-to-all, and why one rack bounds an expert layer
(lecture §1.8, §2.9, §2.10).

The expert layer spans G GPUs (default: the sidebar's C).  Each token's hidden state goes out to its
k experts and comes back (dispatch + combine) on every MoE layer; inside one scale-up domain that
traffic rides the fast links, past it part of it crosses the scale-out network.  The all-to-all time
enters the step as t_comm.  Also: how many experts a batch really touches (an option beyond the
lecture's "all weights every step"), and, for dense models, the tensor-parallel all-reduce.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import cluster, decode_step
from model.roofline import bound_of, combine
from ui.elements import export, metrics
from ui.elements.lazy import lazy_expander
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.elements.section import section
from ui.equations import moe as eq
from ui.equations import tex_int, tex_num
from ui.figures.moe import breakdown, comm_vs_gpus, experts_touched_vs_batch, tp_vs_gpus, weight_bytes_vs_batch
from ui.format import bytes_, number, seconds
from ui.state.dials import BATCH_OPTIONS, Dial, choice_dial, number_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("moe",)
TP_OPEN_KEY = "moe_tp_open"      # the tensor-parallel expander's open state (a widget: opening it reruns)
G_OPTIONS = ["C", 1, 2, 4, 8, 16, 32, 64, 72, 128, 144, 256, 288, 512, 576, 1024]
E_OPTIONS = ["model", 8, 16, 32, 64, 128, 160, 256, 384, 512, 1024]
K_OPTIONS = ["model", 1, 2, 4, 6, 8, 16, 32]


def _parse_flag(text: str) -> bool:
    flags = {"1": True, "true": True, "on": True, "0": False, "false": False, "off": False}
    if text.strip().lower() in flags:
        return flags[text.strip().lower()]
    raise ValueError(text)


page_dial(choice_dial("g", G_OPTIONS, "C", PAGE))
page_dial(choice_dial("e", E_OPTIONS, "model", PAGE))
page_dial(choice_dial("k", K_OPTIONS, "model", PAGE))
page_dial(choice_dial("ab", [1, 2], 2, PAGE))
page_dial(Dial("tw", False, _parse_flag, lambda v: "1" if v else "0", "1 or 0", PAGE))
page_dial(number_dial("hop_us", 0, 1000, 2.0, PAGE))

view = current_view()
s0, B, T = view.system, view.batch, view.context
hw, m0 = s0.hardware, s0.model
D = int(hw.scaleup_domain_chips)
bw_up, bw_out = hw.scaleup_bandwidth_bytes_per_s, hw.scaleout_bandwidth_bytes_per_s
mode = s0.deployment.mode
ss = st.session_state
is_moe = bool(m0.is_moe and m0.d_model is not None)

# The sidebar warns that C past the domain is not charged; on this page the scale-out share is charged.
page_header(heading("moe"), view, hide_warnings="does not charge")

# ---------------------------------------------------------------- dials
C_now = int(view.chips)
cols = st.columns([3, 1.3, 1.3, 1.2, 1.6])
cols[0].select_slider(
    "GPUs the expert layer spans, G", options=G_OPTIONS, key="g", persist_state="session",
    format_func=lambda v: (f"C = {C_now}" if v == "C" else f"{v} · one domain" if v == D
                           else f"{v} · two domains" if v == 2 * D else str(v)),
    help="Expert parallelism: the routed experts of one layer are spread over G GPUs, each token's "
         "activations go to its k experts and back. 'C' = the sidebar's scale-up size C. "
         f"{hw.name}'s scale-up domain is {D} chips; past it, part of the traffic crosses the scale-out network.")
if is_moe:
    cols[1].selectbox("Routed experts E", E_OPTIONS, key="e", persist_state="session",
                      format_func=lambda v: f"model ({m0.n_experts})" if v == "model" else str(v),
                      help="What-if: the same routed parameters cut into E experts (each expert's width "
                           "scaled by E_model/E). Active parameters stay the sidebar's.")
    cols[2].selectbox("Experts per token k", K_OPTIONS, key="k", persist_state="session",
                      format_func=lambda v: f"model ({m0.experts_per_token})" if v == "model" else str(v),
                      help="Routed experts each token goes to. The lecture's round number is 32 of 256; "
                           "the DeepSeek-V3 report has 8 of 256 (+ 1 shared). Changes routing and traffic only: "
                           "active parameters stay the sidebar's.")
cols[3].radio("Activation bytes a", [1, 2], key="ab", persist_state="session", horizontal=True,
              format_func={1: "1 (fp8)", 2: "2 (bf16)"}.get,
              help="Bytes per element of each dispatched or combined activation.")
if is_moe:
    cols[4].toggle("Touched experts only", key="tw", persist_state="session",
                   help="Beyond the lecture's 'all weights every step': each GPU reads only the experts its "
                        "tokens were routed to (plus attention, shared experts and dense layers, always). "
                        "The busiest GPU, not the average one, sets the step.")

ab = float(ss["ab"])
G_req = C_now if ss["g"] == "C" else int(ss["g"])


def _metric_row(items: list[tuple], per_row: int = 4) -> None:
    """(label, value[, Metric keywords]) as one metrics grid, at most `per_row` to a line (more truncate their
    labels and values on a laptop)."""
    metrics.grid([Metric(label, value, **(rest[0] if rest else {})) for label, value, *rest in items],
                 columns=per_row)


def _terms(r, *, comm: float, weights: float | None = None) -> dict[str, float]:
    return {"matmul": float(r.t_matmul_s), "attention": float(r.t_attn_s),
            "weights": float(r.t_weights_s) if weights is None else weights, "kv": float(r.t_kv_s), "comm": comm}


TOUCHED_LABEL = "Busiest GPU reads"    # its touched experts and the always-read weights
EVEN_SPLIT = "W/G even split"     # the lecture's weight term: every weight, spread evenly over the G GPUs


def _uneven(E: int, G: int) -> str:
    """Why the busiest GPU can read more than W/G: it holds ⌈E/G⌉ experts, more than an even split's E/G
    wherever G does not divide E."""
    if E % G == 0:
        return f"G = {G} divides E = {E}: it reads at most W/G."
    n = -(-E // G)
    return (f"The busiest GPU holds ⌈E/G⌉ = ⌈{E}/{G}⌉ = {n} expert{'s' if n != 1 else ''}, more than the even split's "
            f"E/G = {E / G:.3g}: with all of them touched it reads more than W/G.")


def _int_grid(hi: float, extra: list[float], n: int = 240) -> np.ndarray:
    """Whole numbers 1 … hi, log-spaced, plus the points of interest (display glue, not physics)."""
    pts = np.concatenate([np.round(np.geomspace(1, hi, n)), [e for e in extra if 1 <= e <= hi]])
    return np.unique(pts)


# ================================================================ MoE: the expert layout
def moe_section() -> None:
    G = G_req
    E = m0.n_experts if ss["e"] == "model" else int(ss["e"])
    k = m0.experts_per_token if ss["k"] == "model" else int(ss["k"])
    # conditional notices in one fixed slot: the elements below keep their place, so the charts keep their DOM nodes
    notices = st.container()
    if k > E:
        notices.warning(f"k = {k} experts per token is more than E = {E} experts: using k = {E}.", icon="⚠️")
        k = E
    if G > D and not bw_out:
        notices.warning(f"{hw.name} has no scale-out bandwidth figure in the presets, so an expert layer over "
                        f"G = {G_req} GPUs (more than its scale-up domain of {D}) cannot be priced. "
                        f"Showing G = {D}, one domain.", icon="⚠️")
        G = D
    changes: dict = {"chips": G}
    if E != m0.n_experts:
        changes["n_experts"] = E
        if m0.moe_intermediate_size:
            changes["moe_intermediate_size"] = max(1, round(m0.moe_intermediate_size * m0.n_experts / E))
    if k != m0.experts_per_token:
        changes["experts_per_token"] = k
    s = s0.with_(**changes)
    m = s.model
    L = m.n_moe_layers if m.n_moe_layers is not None else m.n_layers
    shaped = m.moe_intermediate_size is not None

    # ---- the current point: one call each
    at = cluster.moe_alltoall(s, B, activation_bytes=ab)
    now = decode_step(s, B, T, t_comm=at.t_comm_s)
    per_gpu = float(cluster.experts_per_gpu(E, G))
    distinct = float(cluster.expected_distinct_experts(E, k, B))
    busiest = float(cluster.busiest_gpu_experts(E, k, B, G))
    t_comm = float(at.t_comm_s)
    if shaped:
        touched = float(cluster.touched_weight_bytes_per_gpu(s, B))
        t_w_touched = touched / s.hbm_bandwidth
        # The same roofline with the weight term of the touched experts (the model's combine / bound_of).
        t_step_tw = float(combine(now.t_matmul_s, now.t_attn_s, t_w_touched, now.t_kv_s, now.t_comm_s, mode))
        bound_tw = str(bound_of(now.t_matmul_s, now.t_attn_s, t_w_touched, now.t_kv_s, now.t_comm_s, mode))
    tw = bool(ss["tw"]) and shaped
    if ss["tw"] and not shaped:
        notices.info(f"{m.name} has no expert width (moe_intermediate_size) in the presets: the touched-experts "
                     "fetch cannot be computed; every weight is read every step.")

    ratio = bw_up / bw_out if bw_up and bw_out else None
    _metric_row([
        ("Experts/GPU", number(per_gpu), {"help": f"⌈E/G⌉ = ⌈{E}/{G}⌉ routed experts on each (busiest) GPU."}),
        ("All-to-all/step", bytes_(float(at.bytes_per_step)),
         {"help": "Dispatch + combine, every MoE layer, all B tokens: B · 2 · k · d · a · L."}),
        ("All-to-all/GPU", bytes_(float(at.bytes_per_gpu)), {"help": "The step's bytes ÷ G."}),
        ("Over scale-out", f"{100 * float(at.share_scaleout):.3g} %",
         {"help": "Of each GPU's all-to-all traffic, the part whose expert sits in another scale-up domain: "
                  "max(G − D, 0)/G."}),
        ("t_comm", seconds(t_comm), {"help": "max(scale-up time, scale-out time): the links work in parallel."}),
        ("Step with t_comm", seconds(float(now.t_step_s)),
         {"help": "The decode step with every weight read (the lecture) and the all-to-all as t_comm."}),
        ("Bound", str(now.bound), {"help": "The largest term of the step (all weights every step)."}),
    ])
    row2 = [
        ("Experts touched/layer", number(distinct),
         {"delta": f"of {E}", "delta_color": "off", "delta_arrow": "off",
          "help": f"E · (1 − (1 − k/E)^B) at B = {B:g}: routed experts at least one token picked."}),
        ("Busiest GPU touches", number(busiest),
         {"delta": f"of {number(per_gpu)}", "delta_color": "off", "delta_arrow": "off",
          "help": "Expected maximum over the G GPUs of the experts each must read."}),
    ]
    if shaped:
        row2 += [
            (TOUCHED_LABEL, bytes_(touched),
             {"delta": f"{EVEN_SPLIT}: {bytes_(s.weight_bytes / G)}", "delta_color": "off", "delta_arrow": "off",
              "help": "Weight bytes the busiest GPU reads per step when it fetches only the experts its tokens "
                      "touched: attention, shared experts and dense layers (÷ G) plus those experts. "
                      f"'{EVEN_SPLIT}' = W/G, every weight every step spread evenly over the G GPUs (the lecture's "
                      "weight term, in 'Step with t_comm'). " + _uneven(E, G)}),
            ("Step, touched only", seconds(t_step_tw),
             {"delta": f"bound: {bound_tw}", "delta_color": "off", "delta_arrow": "off",
              "help": "The same roofline with the busiest GPU's touched-weight fetch in place of W/(G·bw)"
                      + (": it can exceed 'Step with t_comm' once the busiest GPU's ⌈E/G⌉ experts are all "
                         "touched." if E % G else ".")}),
        ]
    row2 += [("HBM per GPU", bytes_(float(now.hbm_bytes_per_chip)),
              {"delta": "fits" if bool(now.fits) else f"exceeds {bytes_(hw.hbm_bytes)}",
               "delta_color": "normal" if bool(now.fits) else "inverse",
               "help": "(W + B·kv_stored(T)) / G: whether this layout holds the weights and the KV cache."}),
             ("Up ÷ out bandwidth", f"{ratio:.3g}×" if ratio else "—",
              {"help": f"{hw.name}: {bytes_(bw_up)}/s per chip on the scale-up links, "
                       + (f"{bytes_(bw_out)}/s over the NIC. " if bw_out else "no scale-out figure. ")
                       + "The lecture: scale-out is ~8× slower."})]
    _metric_row(row2)
    below = st.container()          # the same for the notes under the metrics
    if G > E:
        below.caption(f"G = {G} is more than E = {E} routed experts: each GPU is counted as holding ⌈E/G⌉ = 1 "
                      "expert (in practice some would hold replicas or none).")
    if not bool(now.fits):
        below.warning(f"At G = {G} the weights and KV cache ({bytes_(float(now.hbm_bytes_per_chip))} per GPU) do not "
                      f"fit in {hw.name}'s {bytes_(hw.hbm_bytes)} of HBM: this layout is hypothetical.", icon="⚠️")

    # ---- equations with today's numbers
    st.markdown("**Experts per GPU and the all-to-all.** Each token goes to its k experts and comes back "
                "(dispatch + combine) on each of the L MoE layers; a token's experts sit on random GPUs, so "
                "(min(G, D) − 1)/G of the traffic rides the scale-up links and max(G − D, 0)/G leaves the domain.")
    latex(eq.experts_per_gpu(s), key="moe.experts_per_gpu")
    latex(rf"\text{{bytes/step}} = B\cdot 2\cdot k\cdot d\cdot a\cdot L = {tex_int(B)} \times 2 \times {k} "
          rf"\times {tex_int(m.d_model)} \times {ab:g}\,\text{{B}} \times {L} = "
          rf"{tex_num(float(at.bytes_per_step), 'B')}\quad(\div G = {tex_num(float(at.bytes_per_gpu), 'B')}"
          r"\text{ per GPU})", key="moe.bytes")
    latex(eq.alltoall_time(s, B, ab), key="moe.comm")
    if tw:
        latex(eq.step_terms(now, mode, t_comm, t_w_touched, t_step_tw)
              + r"\quad\text{(touched experts only, bound: " + bound_tw + ")}", key="moe.step")
    else:
        latex(eq.step_terms(now, mode, t_comm, float(now.t_weights_s), float(now.t_step_s))
              + r"\quad\text{(bound: " + str(now.bound) + ")}", key="moe.step")

    # ---- chart 1: against G (one call each: moe_alltoall and decode_step over the G grid)
    g_hi = max(4 * D, 2 * E, G_req, 64)
    if not bw_out:
        g_hi = D
    g_grid = _int_grid(g_hi, [D, D + 1, 2 * D, G, *[o for o in G_OPTIONS if o != "C"]])
    sweep_at = cluster.moe_alltoall(s, B, gpus=g_grid, activation_bytes=ab)
    sweep = decode_step(s, B, T, chips=g_grid, t_comm=np.stack([np.zeros_like(g_grid), sweep_at.t_comm_s]))
    c1, c2 = st.columns([1.5, 1])
    with c1:
        fig = comm_vs_gpus(g_grid, sweep_at.t_scaleup_s, sweep_at.t_scaleout_s, sweep_at.t_comm_s,
                           sweep.t_step_s[0], sweep.t_step_s[1], sweep.bound[1], sweep.fits[1], domain=D,
                           g_now=G, t_step_now=float(now.t_step_s),
                           title=f"All-to-all and step time against G (B = {B:g})")
        export.chart(fig, key="moe_comm_vs_gpus")
        notes = []
        if bw_out and 2 * D <= g_hi:
            i1, i2 = np.searchsorted(g_grid, D), np.searchsorted(g_grid, 2 * D)
            grow = float(sweep_at.t_comm_s[i2] / sweep_at.t_comm_s[i1]) if sweep_at.t_comm_s[i1] > 0 else np.inf
            notes.append(f"Over two domains (G = {2 * D}) half of each GPU's traffic leaves the domain and "
                         f"t_comm is **{number(grow)}×** its value on one (G = {D}), though each GPU sends half "
                         "the bytes: *one rack bounds an expert layer*.")
        comm_bound = g_grid[sweep.bound[1] == "comm"]
        if comm_bound.size:
            notes.append(f"The all-to-all bounds the step from G = {comm_bound[0]:,.0f}.")
        if not bw_out:
            notes.append(f"{hw.name} has no scale-out figure: the curve stops at its domain.")
        if tw:
            notes.append("This chart reads every weight every step (the touched-expert fetch is computed for "
                         "one G at a time).")
        st.caption("t_comm = the all-to-all time per decode step (dotted: its scale-up and scale-out parts); "
                   "black = the step with it, dashed = without it; shading = what bounds the step. "
                   + " ".join(notes))
    with c2:
        terms = _terms(now, comm=t_comm, weights=t_w_touched if tw else None)
        title = f"Where the step goes at G = {G}" + (", touched experts only" if tw else "")
        export.chart(breakdown(terms, mode, title), key="moe_breakdown")
        st.caption("The step's terms at the current point: the step is the largest side "
                   + ("(matmul phase, then attention phase)." if mode == "per-phase"
                      else "(compute, memory, or communication).")
                   + (" Weights: only the experts the busiest GPU's tokens touched." if tw else ""))

    # ---- chart 2: against batch (one call each over the batch grid)
    st.markdown("**Touched experts.** The lecture reads *all weights every step*. At small batch a layer's "
                "tokens touch only some experts; with shared experts, dense layers and attention always read, "
                "the busiest GPU — not the average one — sets the step.")
    latex(rf"E\Big(1-\big(1-\tfrac{{k}}{{E}}\big)^B\Big) = {E}\Big(1-\big(1-\tfrac{{{k}}}{{{E}}}\big)^"
          rf"{{{tex_int(B)}}}\Big) = {distinct:.4g}\ \text{{distinct experts per layer}}", key="moe.distinct")
    b_grid = np.unique(np.concatenate([np.geomspace(1, BATCH_OPTIONS[-1], 200), BATCH_OPTIONS, [B]]))
    distinct_b = cluster.expected_distinct_experts(E, k, b_grid)
    busiest_b = cluster.busiest_gpu_experts(E, k, b_grid, G)
    if shaped:
        per_expert, always = cluster.expert_bytes(m, s.precision.weight_bytes_per_param)
        latex(r"\begin{aligned}" rf"W_{{GPU}} &= \frac{{W_{{always}}}}{{G}} + "
              rf"W_{{expert}}\cdot\mathbb{{E}}\big[\max_g n_g\big] = "
              rf"\frac{{{tex_num(always, 'B')}}}{{{G}}} + {tex_num(per_expert, 'B')} \times {busiest:.3g} = "
              rf"{tex_num(touched, 'B')}\\ \Rightarrow\ \frac{{W_{{GPU}}}}{{bw}} &= {eq.tex_s(t_w_touched)}"
              rf"\quad\Big(\text{{every weight, split evenly: }}\frac{{W}}{{G\cdot bw}} = "
              rf"{eq.tex_s(float(now.t_weights_s))}\Big)"
              r"\end{aligned}", key="moe.touched")
    c3, c4 = st.columns(2)
    with c3:
        fig = experts_touched_vs_batch(b_grid, distinct_b, E, busiest_b, per_gpu, b_now=B, b_even=E / k,
                                       title=f"Share of experts touched in one layer (G = {G})")
        export.chart(fig, key="moe_experts_touched")
        st.caption("Share of routed experts a batch's tokens pick in one layer: over the whole layer (blue, "
                   "E·(1 − (1 − k/E)^B) ÷ E) and on the busiest of the G GPUs (red), which saturates first.")
    with c4:
        if shaped:
            touched_b = cluster.touched_weight_bytes_per_gpu(s, b_grid)
            fig = weight_bytes_vs_batch(b_grid, touched_b, s.weight_bytes / G, s.hbm_bandwidth, b_now=B,
                                        touched_now=touched, title=f"Weight bytes the busiest GPU reads (G = {G})")
            export.chart(fig, key="moe_weight_bytes")
            uneven = " " + _uneven(E, G) if E % G else ""
            st.caption("Weight bytes per GPU per decode step: every weight split evenly over the G GPUs (W/G, "
                       "the lecture) against only the touched experts plus the always-read weights, on the busiest "
                       "GPU (hover: fetch time). The saving is real only at small batch." + uneven)
        else:
            st.info(f"{m.name} has no expert width in the presets: the touched-weight bytes cannot be computed.")


# ================================================================ tensor parallelism
@section
def tp_part(dense: bool, shown: bool = True) -> None:
    """The tensor-parallel part: its hop-latency dial feeds only this, so a move of it reruns this alone
    (ui/elements/section.py).  It reads the page's dials (G, activation bytes) from the last page run: this is the
    page's last call, so the globals it reads are that run's.  `shown=False` (its expander closed): nothing."""
    if not shown:
        return
    try:
        tp_section(dense)
    except ValueError as exc:
        st.warning(f"Tensor parallelism cannot be computed here: {exc}.", icon="⚠️")


def tp_section(dense: bool) -> None:
    hop_col, text_col = st.columns([1, 3])
    hop_col.number_input("All-reduce hop latency [µs]", min_value=0.0, max_value=1000.0, step=0.5, key="hop_us",
                         persist_state="session",
                         help="Fixed latency per ring step of an all-reduce (each of 2(G − 1) steps). "
                              "0 = bandwidth only, the ideal roofline.")
    text_col.markdown("Tensor parallelism splits every weight matrix over G GPUs: the weight fetch falls as 1/G, "
                      "but every layer now ends in **two all-reduces** of the batch's activations (after attention "
                      "and after the MLP), each 2(G − 1) ring steps, so their time grows with G and can outweigh "
                      "what the split saves. With MoE the experts are small, so DeepSeek-style serving uses expert "
                      "parallelism instead (lecture §2.10).")
    hop = float(ss["hop_us"]) * 1e-6
    notices = st.container()        # one fixed slot for the notices (the charts below keep their place)
    if not bw_up or D < 2:
        notices.info(f"{hw.name} has no scale-up links to split a layer over (domain {D}, "
                     f"bandwidth {bytes_(bw_up) + '/s' if bw_up else '—'}).")
        return
    G_tp = min(G_req, D)
    if G_req > D:
        notices.info(f"Tensor parallelism runs over the scale-up links: G = {G_req} is more than {hw.name}'s domain "
                     f"of {D}, so this part shows G = {D}.")
    s = s0.with_(chips=G_tp)
    t_tp = float(cluster.tensor_parallel_allreduce_time(s, B, activation_bytes=ab, hop_latency_s=hop))
    now = decode_step(s, B, T, t_comm=t_tp)
    free = decode_step(s, B, T)
    g_grid = _int_grid(D, [G_tp, *[o for o in G_OPTIONS if o != "C"]], n=160)
    t_grid = cluster.tensor_parallel_allreduce_time(s, B, gpus=g_grid, activation_bytes=ab, hop_latency_s=hop)
    sweep = decode_step(s, B, T, chips=g_grid, t_comm=np.stack([np.zeros_like(t_grid), t_grid]))
    fit_step = np.where(sweep.fits[1], sweep.t_step_s[1], np.inf)
    best = int(np.argmin(fit_step))
    L_, hop_t = s.model.n_layers, float(2 * s.model.n_layers * 2 * (G_tp - 1) * hop)
    if np.isfinite(fit_step[best]):
        g_best = float(g_grid[best])
        text_col.markdown(
            f"Here (B = {B:g}, hop latency {ss['hop_us']:g} µs) the fastest G of 1 … {D} is **{g_best:,.0f}**"
            + (": the split keeps paying up to the whole domain." if g_best >= float(g_grid[fit_step < np.inf].max())
               else ": past it the all-reduces cost more than the smaller weight fetch saves.")
            + (f" At G = {G_tp}, {100 * hop_t / t_tp:.3g} % of the all-reduce time is hop latency "
               f"({L_} layers × 2 all-reduces × {2 * (G_tp - 1)} steps)." if t_tp > 0 else ""))
    _metric_row([
        ("TP all-reduce", seconds(t_tp),
         {"help": "2 all-reduces per layer, all L layers: bandwidth term + 2(G − 1) hop latencies."}),
        ("Step with TP", seconds(float(now.t_step_s)), {"help": "t_comm = the all-reduce time."}),
        ("Step, comm. free", seconds(float(free.t_step_s))),
        ("Bound (TP)", str(now.bound)),
        ("Fastest TP size", f"G = {g_grid[best]:,.0f}" if np.isfinite(fit_step[best]) else "—",
         {"help": f"Of G = 1 … {D} (where weights + KV fit), the one with the shortest step."}),
    ])
    L, d = s.model.n_layers, s.model.d_model
    latex(rf"t_{{TP}} = L\cdot 2\cdot\Big[\frac{{2(G-1)}}{{G}}\cdot\frac{{B\,d\,a}}{{bw_{{up}}}} + "
          rf"2(G-1)\,t_{{hop}}\Big] = {L}\cdot 2\cdot\Big[\frac{{{2 * (G_tp - 1)}}}{{{G_tp}}}\cdot"
          rf"\frac{{{tex_int(B)}\cdot {tex_int(d)}\cdot {ab:g}\,\text{{B}}}}{{{tex_num(bw_up, 'B/s')}}} + "
          rf"{2 * (G_tp - 1)}\cdot {eq.tex_s(hop) if hop else '0'}\Big] = {eq.tex_s(t_tp)}", key="moe.tp")
    if dense:
        latex(eq.step_terms(now, mode, t_tp, float(now.t_weights_s), float(now.t_step_s))
              + r"\quad\text{(bound: " + str(now.bound) + ")}", key="moe.tp_step")
    c1, c2 = st.columns([1.5, 1])
    with c1:
        fig = tp_vs_gpus(g_grid, t_grid, sweep.t_weights_s[1], sweep.t_step_s[0], sweep.t_step_s[1], sweep.bound[1],
                         sweep.fits[1], domain=D, g_now=G_tp, t_step_now=float(now.t_step_s),
                         title=f"Tensor parallelism against G (B = {B:g})")
        export.chart(fig, key="tp_vs_gpus")
        st.caption("Time per decode step against the tensor-parallel group size G: the weight fetch per GPU "
                   "(dotted) falls as 1/G, the all-reduce (purple) grows with G; black = the step with it, "
                   "dashed = without it.")
    with c2:
        export.chart(breakdown(_terms(now, comm=t_tp), mode, f"Where the step goes at G = {G_tp}"),
                        key="tp_breakdown")
        st.caption("The step's terms at the current G, with the all-reduce as the communication term.")


if is_moe:
    try:
        moe_section()
    except ValueError as exc:     # a chip without a link figure the layout needs, or a bad override
        st.warning(f"The expert layout cannot be computed here: {exc}.", icon="⚠️")
    st.divider()
    # Computed and sent only while open (ui/elements/lazy.py), so a move of G with it closed does not redraw its
    # two charts, equations and metrics out of sight.
    with lazy_expander("Tensor parallelism instead: the dense alternative", key=TP_OPEN_KEY) as is_open:
        tp_part(dense=False, shown=is_open)     # called closed too: a section runs in every full run
else:
    st.info(f"**{m0.name}** is a dense model: it has no routed experts, so there is no expert layout, "
            "all-to-all or touched-expert fetch. Pick an MoE model in the sidebar (DeepSeek-V3, Kimi K2, "
            "Qwen3, gpt-oss, …) for that part. Below: tensor parallelism, how dense models are split over a "
            "scale-up domain, and where it stops paying.")
    st.subheader("Tensor parallelism")
    tp_part(dense=True)
