"""Batch: the balance batch B*, the step time and the latency floor (lecture §1.2–1.5, §2.2).

B* is shown on the Batch, Fast mode and Compare pages and the walkthrough; the latency floor on the
Compare and Scale-up pages and the walkthrough; the step time on the Batch page and the walkthrough.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from model import System, decode_step, system_balance_batch
from model.roofline import kv_fetch_time, matmul_time, weight_fetch_time
from ui.equations import STRUT, params, tex_int, tex_num, tex_time

# B* with KV ignored, the lecture's "≈ 300 × sparsity": with W = N_total · bytes/param the factors split.
B_STAR = (r"\frac{F \cdot W}{2\,N_a\cdot bw} = \frac{F}{bw}\cdot\frac{N_{total}}{N_a}"
          r"\cdot\frac{\text{bytes/param}}{2}")
FLOOR = r"\frac{W}{C\cdot bw}"


def _balance_numbers(s: System) -> str:
    return (rf"{s.flops / s.hbm_bandwidth:.0f} \times {s.model.sparsity:.3g} \times "
            rf"\frac{{{s.precision.weight_bytes_per_param:g}}}{{2}} = {tex_int(float(system_balance_batch(s, 0.0)))}")


def balance_batch(s: System) -> str:
    """B* = F·W/(2·Na·bw), KV ignored: where the weight fetch takes as long as the matmuls."""
    return f"B^* = {B_STAR} = {_balance_numbers(s)}"


def _table(formula: str, rows: Iterable[str]) -> str:
    """The formula, then one row of numbers per configuration, aligned at their '='."""
    return r"\begin{aligned}" + r" \\ ".join([formula, *rows]) + STRUT + r"\end{aligned}"


def balance_batch_table(systems: Mapping[int, System]) -> str:
    """B* of several configurations, one row each under the formula (the Compare page)."""
    return _table(rf"B^* &= {B_STAR}", (rf"B^*_{i} &= {_balance_numbers(s)}" for i, s in systems.items()))


def balance_batch_kv(s: System, context: float) -> str:
    """B*(T) with each sequence's KV read at context T, or why there is none (memory-bound at every batch)."""
    F, bw, Na = s.flops, s.hbm_bandwidth, s.model.active_params
    kv_t = float(s.kv_read(context)) if context > 0 else 0.0
    t_w = float(weight_fetch_time(s.weight_bytes, 1.0, bw))          # W/bw
    t_mm = float(matmul_time(Na, 1.0, 1.0, F))                         # 2·Na/F
    t_kv = float(kv_fetch_time(1.0, kv_t, 1.0, bw))                    # kv(T)/bw
    b_star = float(system_balance_batch(s, context))
    if np.isfinite(b_star):
        return (rf"B^*(T{{=}}{tex_int(context)}) = \frac{{W/bw}}{{2N_a/F - kv(T)/bw}} = "
                rf"\frac{{{tex_num(t_w, 's')}}}{{{tex_num(t_mm, 's')} - {tex_num(t_kv, 's')}}} = {tex_int(b_star)}")
    return (rf"\frac{{kv(T)}}{{bw}} = {tex_num(t_kv, 's')} \;\ge\; \frac{{2N_a}}{{F}} = {tex_num(t_mm, 's')}"
            r"\quad\Rightarrow\quad\text{memory-bound at every batch}")


def step_time(s: System, batch: float, context: float) -> str:
    """The decode step as the sidebar's roofline mode combines its terms (model.roofline.combine), each
    side with today's number, so the printed terms give the printed t_step; t_comm and the pipeline hops
    appear only when they are not zero."""
    now = decode_step(s, batch, context)
    t_mm, t_w, t_kv, t_at = (float(now.t_matmul_s), float(now.t_weights_s), float(now.t_kv_s), float(now.t_attn_s))
    t_cm, t_hop = float(now.t_comm_s), float(now.t_hops_s)
    comm_sym, comm_num = (r",\ t_{comm}", rf",\ {tex_num(t_cm, 's')}") if t_cm > 0 else ("", "")
    hop_sym, hop_num = (r" + P\,t_{hop}", rf" + {tex_num(t_hop, 's')}") if t_hop > 0 else ("", "")
    if s.deployment.mode == "per-phase":
        step_sym = (rf"\max\Big(\tfrac{{2 N_a B}}{{C F}},\ \tfrac{{W}}{{C\,bw}}{comm_sym}\Big) + "
                    r"\max\Big(\tfrac{B\,\mathrm{attn}(T)}{C F},\ \tfrac{B\,kv(T)}{C\,bw}\Big)")
        step_num = (rf"\max({tex_num(t_mm, 's')},\ {tex_num(t_w, 's')}{comm_num}) + "
                    rf"\max({tex_num(t_at, 's')},\ {tex_num(t_kv, 's')})")
    else:
        step_sym = rf"\max\Big(\tfrac{{2 N_a B}}{{C F}},\ \tfrac{{W + B\,kv(T)}}{{C\,bw}}{comm_sym}\Big)"
        step_num = rf"\max({tex_num(t_mm, 's')},\ {tex_num(t_w + t_kv, 's')}{comm_num})"
    P = s.deployment.pipeline_stages
    return (rf"t_{{step}} = {step_sym}{hop_sym} = {step_num}{hop_num} = {tex_num(float(now.t_step_s), 's')}"
            rf"\allowbreak\quad(N_a = {params(s.model.active_params)},\ W = {tex_num(s.weight_bytes, 'B')},\ "
            rf"C = {s.deployment.chips:g}" + (rf",\ P = {P}" if P > 1 else "") + ")")


def _floor_numbers(s: System) -> str:
    C, bw = s.deployment.chips, s.hbm_bandwidth
    return (rf"\frac{{{tex_num(s.weight_bytes, 'B')}}}{{{C:g} \times {tex_num(bw, 'B/s')}}} = "
            rf"{tex_time(float(weight_fetch_time(s.weight_bytes, C, bw)))}")


def latency_floor(s: System) -> str:
    """t_floor = W/(C·bw): every weight read once per step over the C chips' bandwidth; no batch is faster."""
    return rf"t_{{floor}} = {FLOOR} = {_floor_numbers(s)}"


def latency_floor_table(systems: Mapping[int, System]) -> str:
    """The latency floor of several configurations, one row each under the formula (the Compare page)."""
    return _table(rf"t_{{floor}} &= {FLOOR}", (rf"t_{{floor,{i}}} &= {_floor_numbers(s)}" for i, s in systems.items()))
