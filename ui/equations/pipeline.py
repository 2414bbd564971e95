"""Pipelining (lecture §1.6, §2.10): HBM per chip with P stages (the Pipelining page and the walkthrough), a
token's latency through the stages, and training's bubble."""

from __future__ import annotations

import numpy as np

from model import System
from model.cluster import pipeline, training_bubble_fraction
from ui.equations import tex_int, tex_num, tex_time


def memory_per_chip(s: System, micro_batch: float, context: float, stages: int) -> str:
    """Weights W/(C·P), which shrink with every stage, plus KV b·kv(T)/C, which does not move (a stage
    keeps P micro-batches' KV for 1/P of the layers), against the chip's HBM (model.cluster.pipeline)."""
    C, P, b, hbm = s.deployment.chips, stages, micro_batch, s.hardware.hbm_bytes
    pm = pipeline(s, b, context, np.array([float(P)]))
    w, kv, tot = float(pm.weight_bytes_per_chip[0]), float(pm.kv_bytes_per_chip[0]), float(pm.total_bytes_per_chip[0])
    return (rf"\begin{{aligned}}c_{{mem}} &= \frac{{W}}{{C\,P}} + \frac{{b\,kv(T)}}{{C}} = "
            rf"\frac{{{tex_num(s.weight_bytes, 'B')}}}{{{C:g}\times{P}}} + "
            rf"\frac{{{b:g}\times{tex_num(kv * C / b, 'B')}}}{{{C:g}}}\\ &= {tex_num(w, 'B')} + "
            rf"{tex_num(kv, 'B')} = {tex_num(tot, 'B')}\\ &"
            + (r"\le" if tot <= hbm else r">") + rf"\ {tex_num(hbm, 'B')}\ \text{{(HBM)}}\end{{aligned}}")


def token_latency(s: System, micro_batch: float, context: float, stages: int) -> str:
    """A token waits for the P stages one after another (together the whole model's step) plus a hop per
    stage; a replica has P·b sequences in flight (model.cluster.pipeline)."""
    P, b, hop = stages, micro_batch, s.deployment.pipeline_hop_s
    pm = pipeline(s, b, context, np.array([1.0, float(P)]))
    t_step, lat, tps = float(pm.latency_s[0]), float(pm.latency_s[1]), float(pm.tokens_per_s[1])
    return (rf"\begin{{aligned}}t_{{token}} &= t_{{step}} + P\cdot hop = {tex_time(t_step)} + {P}\times"
            rf"{tex_time(hop) if hop else '0'} = {tex_time(lat)}\\ "
            rf"\text{{tokens/s}} &= \frac{{P\,b}}{{t_{{token}}}} = \frac{{{P}\times{b:g}}}{{{tex_time(lat)}}} = "
            rf"{tex_int(tps)}\ \text{{tok/s}}\end{{aligned}}")


def training_bubble(stages: int, micro_batches: int) -> str:
    """Training's pipeline bubble (model.cluster.training_bubble_fraction); inference streams P
    micro-batches through continuously and has none."""
    P, m = stages, micro_batches
    bubble = float(training_bubble_fraction(P, m))
    return (rf"\begin{{aligned}}\text{{bubble}}_{{train}} &= \frac{{P-1}}{{m+P-1}} = "
            rf"\frac{{{P - 1}}}{{{m}+{P - 1}}} = {100 * bubble:.3g}\,\%\\ "
            r"\text{bubble}_{inference} &= 0\end{aligned}")
