"""Plan: the term that sets the winner's decode step, with its numbers (model.roofline.decode_step's terms).

The Plan page shows one equation: the binding term of the chosen configuration's step, as
`decode_step` combines it — in the lecture's roofline the compute side (the matmuls, with the prompts
chunked into the step) or the memory side (weights + KV read together), in per-phase mode the single
largest term — or the layout's communication.  Its printed result is the step's own term.
"""

from __future__ import annotations

from model import System
from model.cluster import alltoall_bytes_per_token, moe_alltoall
from model.roofline import ChunkedPrefill, StepResult
from ui.equations import STRUT, params, tex_int, tex_num, tex_time


def _rows(lhs: str, formula: str, numbers: str, t: float, *notes: str) -> str:
    """lhs = formula, then = its numbers, then = its time, each a row aligned at '=' (a card is narrow);
    each of `notes` (TeX: what a symbol stands for) on a row of its own under them."""
    return (rf"\begin{{aligned}}{lhs} &= {formula} \\ &= {numbers} \\ &= {tex_time(t)}"
            + "".join(rf" \\ &\phantom{{=}}\ {n}" for n in notes) + STRUT + r"\end{aligned}")


def binding_term(s: System, step: StepResult, batch: float, context: float, prefill: ChunkedPrefill | None,
                 layout: str, activation_bytes: float = 2.0) -> str:
    """The step's binding term (`step.bound`, in `s.deployment.mode`): its formula, its numbers, its time.

    `prefill` is the chunked prompts the step carries (aggregated serving) or None; `layout` the
    communication layout (none, tp, ep) of the step's C chips."""
    d, m = s.deployment, s.model
    lecture = d.mode == "lecture"
    bound = str(step.bound)
    C, F, bw, B = d.chips, s.flops, s.hbm_bandwidth, float(batch)
    Bt, Ct, Tt = tex_int(B), f"{C:g}", tex_int(context)
    Ft, bwt, Wt, Nat = tex_num(F, "FLOP/s"), tex_num(bw, "B/s"), tex_num(s.weight_bytes, "B"), params(m.active_params)
    x = prefill.prompt_tokens if prefill is not None else 0.0
    if bound == "compute":
        t = float(step.t_matmul_s)
        if prefill is None:
            return _rows("t_{matmul}", r"\frac{2\,N_a\,B}{C\,F}",
                         rf"\frac{{2 \times {Nat} \times {Bt}}}{{{Ct} \times {Ft}}}", t)
        a_p = prefill.attn_flops if lecture else 0.0
        extra_sym, extra_num = (r" + A_p", rf" + {tex_num(a_p, 'FLOP')}") if a_p > 0 else ("", "")
        return _rows("t_{matmul}", rf"\frac{{B\,\big(2N_a\,(1 + x){extra_sym}\big)}}{{C\,F}}",
                     rf"\frac{{{Bt} \times \big(2 \times {Nat} \times (1 + {x:.3g}){extra_num}\big)}}"
                     rf"{{{Ct} \times {Ft}}}", t,
                     r"x\text{: prompt tokens chunked into a sequence's step}",
                     *([r"A_p\text{: their attention FLOPs}"] if a_p > 0 else []))
    kv_t = float(s.kv_read(context))
    kv_w = prefill.kv_write_bytes if prefill is not None else 0.0
    kv_sym = r"\big(kv(T) + kv_w\big)" if kv_w > 0 else r"kv(T)"
    kv_num = rf"({tex_num(kv_t, 'B')} + {tex_num(kv_w, 'B')})" if kv_w > 0 else tex_num(kv_t, "B")
    kv_note = [rf"kv(T)\text{{: a sequence's KV read at }}T = {Tt}",
               *([r"kv_w\text{: the KV its chunked prompt writes}"] if kv_w > 0 else [])]
    if bound in ("weights", "kv") and lecture:
        return _rows("t_{weights} + t_{kv}", rf"\frac{{W + B\,{kv_sym}}}{{C\,bw}}",
                     rf"\frac{{{Wt} + {Bt} \times {kv_num}}}{{{Ct} \times {bwt}}}",
                     float(step.t_weights_s + step.t_kv_s), *kv_note)
    if bound == "weights":
        return _rows("t_{weights}", r"\frac{W}{C\,bw}",
                     rf"\frac{{{Wt}}}{{{Ct} \times {bwt}}}",
                     float(step.t_weights_s))
    if bound == "kv":
        return _rows("t_{kv}", rf"\frac{{B\,{kv_sym}}}{{C\,bw}}",
                     rf"\frac{{{Bt} \times {kv_num}}}{{{Ct} \times {bwt}}}", float(step.t_kv_s), *kv_note)
    if bound == "attention":
        at = float(s.kv.attn_flops(context, d.sparse_attention, d.sparse_param))
        a_p = prefill.attn_flops if prefill is not None else 0.0
        sym, num = ((r"\big(\mathrm{attn}(T) + A_p\big)", rf"({tex_num(at, 'FLOP')} + {tex_num(a_p, 'FLOP')})")
                    if a_p > 0 else (r"\mathrm{attn}(T)", tex_num(at, "FLOP")))
        return _rows("t_{attn}", rf"\frac{{B\,{sym}}}{{C\,F}}",
                     rf"\frac{{{Bt} \times {num}}}{{{Ct} \times {Ft}}}", float(step.t_attn_s),
                     rf"T = {Tt}", *([r"A_p\text{: the chunked prompts' attention FLOPs}"] if a_p > 0 else []))
    # communication: the layout's collectives over the step's tokens n = B·(1 + x)
    n = B * (1.0 + x)
    t = float(step.t_comm_s)
    n_sym = r"B\,(1 + x)" if x > 0 else "B"
    if layout == "tp":
        return _rows("t_{comm}", rf"2L \cdot \frac{{2(C-1)}}{{C}} \cdot \frac{{{n_sym}\,d\,a}}{{bw_{{up}}}}",
                     rf"2 \times {m.n_layers} \times \frac{{2 \times {C - 1:g}}}{{{Ct}}} \times "
                     rf"\frac{{{tex_int(n)} \times {m.d_model} \times {activation_bytes:g}\,\text{{B}}}}"
                     rf"{{{tex_num(s.hardware.scaleup_bandwidth_bytes_per_s, 'B/s')}}}", t,
                     r"\text{two ring all-reduces per layer}")
    a2a = moe_alltoall(s, n, activation_bytes=activation_bytes)
    per_tok = alltoall_bytes_per_token(m, activation_bytes)
    D = s.hardware.scaleup_domain_chips
    if float(a2a.t_scaleout_s) > float(a2a.t_scaleup_s):
        share, link, link_sym, share_sym = (f"{max(C - D, 0.0):g}", s.hardware.scaleout_bandwidth_bytes_per_s,
                                            r"bw_{out}", r"\frac{C - D}{C}")
    else:
        share, link, link_sym, share_sym = (f"{min(C, D) - 1.0:g}", s.hardware.scaleup_bandwidth_bytes_per_s,
                                            r"bw_{up}", r"\frac{\min(C, D) - 1}{C}")
    formula = rf"\frac{{{n_sym} \cdot 2k\,d\,a\,L_{{moe}}}}{{C}} \cdot {share_sym} \cdot \frac{{1}}{{{link_sym}}}"
    return _rows("t_{comm}", formula, rf"\frac{{{tex_int(n)} \times {tex_num(per_tok, 'B')}}}{{{Ct}}} \times "
                 rf"\frac{{{share}}}{{{Ct}}} \times \frac{{1}}{{{tex_num(link, 'B/s')}}}", t,
                 r"\text{the experts' all-to-all}")


def predicted_step(ev: dict, eff, batch: float, layers: float, prompt_rate: float) -> str:
    """The winner's step on the fitted efficiency model (model.plan.evaluate with an efficiency: its terms):
    the step as max(compute, memory, comm) + fixed time with its numbers, then the binding side's sum with
    each peak-rate time divided by its fitted efficiency, and the fixed time per layer of a step with prompt
    work when there is one (`prompt_rate` λ new prompts per sequence per step, 0 when disaggregated).
    Rows stay short (a phone's card); what the symbols mean goes in the page's caption (`PREDICTED_NOTE`)."""
    compute = ev["t_dense_s"] + ev["t_expert_s"] + ev["t_attn_s"]
    memory = ev["t_weights_s"] + ev["t_kv_s"]
    comm, fixed, hops = ev["t_comm_s"], ev["t_fixed_s"], ev["t_hops_s"]
    tail_sym = (r" + t_{fixed}" if fixed > 0 else "") + (r" + t_{hops}" if hops > 0 else "")
    tail_num = (rf" + {tex_time(fixed)}" if fixed > 0 else "") + (rf" + {tex_time(hops)}" if hops > 0 else "")
    rows = [rf"t_{{step}} &= \max(t_{{compute}},\ t_{{memory}},\ t_{{comm}}){tail_sym}",
            rf"&= \max({tex_time(compute)},\ {tex_time(memory)},\ {tex_time(comm)}){tail_num}",
            rf"&= {tex_time(ev['t_step_s'])}"]
    bound = ev["bound"]
    if bound == "compute":
        parts = [(ev["t_dense_s"], eff.compute, r"\eta_c", "dense"),
                 (ev["t_expert_s"], eff.expert, r"\eta_e", "expert"),
                 (ev["t_attn_s"], eff.compute, r"\eta_c", "attn")]
        parts = [p for p in parts if p[0] > 0]
        rows.append(r"t_{compute} &= " + " + ".join(rf"\frac{{t^{{peak}}_{{{n}}}}}{{{sym}}}" for _, _, sym, n in parts))
        rows.append("&= " + " + ".join(rf"\frac{{{tex_time(t * e)}}}{{{e:.3g}}}" for t, e, _, _ in parts)
                    + rf" = {tex_time(compute)}")
    elif bound in ("weights", "kv"):
        rows.append(r"t_{memory} &= \frac{t^{peak}_{weights} + t^{peak}_{kv}}{\eta_{bw}}")
        rows.append(rf"&= \frac{{{tex_time(ev['t_weights_s'] * eff.bandwidth)} + "
                    rf"{tex_time(ev['t_kv_s'] * eff.bandwidth)}}}{{{eff.bandwidth:.3g}}} = {tex_time(memory)}")
    else:
        rows.append(rf"t_{{comm}} &= {tex_time(comm)}\ \text{{(the layout's collectives, at peak link rates)}}")
    if fixed > 0 and eff.prompt_layer_s > 0 and prompt_rate > 0:
        rows.append(r"t_{fixed} &= L\,t_{\ell p}\,\big(1 - e^{-B\lambda}\big)")
        rows.append(rf"&= {layers:g} \times {tex_time(eff.prompt_layer_s)} \times \big(1 - e^{{-{tex_int(batch)} "
                    rf"\times {prompt_rate:.3g}}}\big) = {tex_time(fixed)}")
    return r"\begin{aligned}" + r" \\ ".join(rows) + STRUT + r"\end{aligned}"


PREDICTED_NOTE = ("t^peak: a term's time at the chip's peak FLOP/s (attention at its bf16 peak: engines read an "
                  "fp8 KV cache into 16-bit attention) or HBM bandwidth, divided by its fitted efficiency "
                  "(η_c dense compute and attention, η_e routed experts, η_bw HBM); t_fixed: L layers × "
                  "t_ℓp per layer of a step that carries prompt work, paid with probability 1 − e^(−Bλ), "
                  "λ = a/O new prompts per sequence per step.")
