"""MoE across the rack (lecture §1.8): experts per GPU and the all-to-all of one decode step (the MoE page and
the walkthrough), and the step with a layout's communication."""

from __future__ import annotations

from model import StepResult, System
from model.cluster import experts_per_gpu as _experts_per_gpu
from model.cluster import moe_alltoall
from ui.equations import tex_num


def tex_s(t: float) -> str:
    """A time in ns below 1 µs, in ms between 1 ms and 1 s (tex_num would write 0.0386 s)."""
    if 0 < t < 1e-6:
        return rf"{t * 1e9:.3g}\,\text{{ns}}"
    return tex_num(t * 1e3, "ms") if 1e-3 <= t < 1 else tex_num(t, "s")


def experts_per_gpu(s: System) -> str:
    """⌈E/G⌉ routed experts on each GPU of an expert layer spread over the system's G = C chips."""
    E, G = int(s.model.n_experts), int(s.deployment.chips)
    return (rf"\text{{experts/GPU}} = \Big\lceil \frac{{E}}{{G}} \Big\rceil = \Big\lceil \frac{{{E}}}{{{G}}}"
            rf" \Big\rceil = {float(_experts_per_gpu(E, G)):g}")


def alltoall_time(s: System, batch: float, activation_bytes: float = 2.0) -> str:
    """t_comm: each GPU's dispatch + combine bytes, the share that stays in the scale-up domain over its
    links and the share that leaves it over scale-out; the links work in parallel (model.cluster.moe_alltoall)."""
    hw = s.hardware
    G, D = int(s.deployment.chips), int(hw.scaleup_domain_chips)
    bw_up, bw_out = hw.scaleup_bandwidth_bytes_per_s, hw.scaleout_bandwidth_bytes_per_s
    at = moe_alltoall(s, batch, activation_bytes=activation_bytes)
    per_gpu = tex_num(float(at.bytes_per_gpu), "B")
    up_frac = rf"\frac{{{min(G, D) - 1}}}{{{G}}}"
    out_frac = rf"\frac{{{max(G - D, 0)}}}{{{G}}}"
    out_bw = tex_num(bw_out, "B/s") if bw_out else r"\text{—}"
    return (r"\begin{aligned}"
            rf"t_{{comm}} &= \max\Big(\frac{{\text{{bytes}}}}{{G}}\cdot\frac{{\min(G,D)-1}}{{G\cdot bw_{{up}}}},\ "
            rf"\frac{{\text{{bytes}}}}{{G}}\cdot\frac{{\max(G-D,0)}}{{G\cdot bw_{{out}}}}\Big) \\ &= "
            rf"\max\Big(\frac{{{per_gpu}\cdot {up_frac}}}{{{tex_num(bw_up, 'B/s')}}},\ "
            rf"\frac{{{per_gpu}\cdot {out_frac}}}{{{out_bw}}}\Big) = "
            rf"\max({tex_s(float(at.t_scaleup_s))},\ {tex_s(float(at.t_scaleout_s))}) = "
            rf"{tex_s(float(at.t_comm_s))}\end{{aligned}}")


def step_terms(r: StepResult, mode: str, t_comm: float, t_weights: float, t_step: float) -> str:
    """The decode step as the roofline mode combines its named terms, with the communication time and
    weight fetch of the layout at hand (the all-to-all or a tensor-parallel all-reduce; every weight, or
    the busiest GPU's touched experts) and the step they give (model.roofline.combine)."""
    mm, kv, at = float(r.t_matmul_s), float(r.t_kv_s), float(r.t_attn_s)
    if mode == "per-phase":
        return (rf"t_{{step}} = \max(t_{{matmul}}, t_{{weights}}, t_{{comm}}) + \max(t_{{attn}}, t_{{kv}}) = "
                rf"\max({tex_s(mm)}, {tex_s(t_weights)}, {tex_s(t_comm)}) + "
                rf"\max({tex_s(at)}, {tex_s(kv)}) = {tex_s(t_step)}")
    return (rf"t_{{step}} = \max(t_{{matmul}},\ t_{{weights}} + t_{{kv}},\ t_{{comm}}) = "
            rf"\max({tex_s(mm)},\ {tex_s(t_weights)} + {tex_s(kv)},\ "
            rf"{tex_s(t_comm)}) = {tex_s(t_step)}")
