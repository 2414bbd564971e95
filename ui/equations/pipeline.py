"""Pipelining (lecture §1.6): HBM per chip with P stages — the Pipelining page and the walkthrough."""

from __future__ import annotations

import numpy as np

from model import System
from model.cluster import pipeline
from ui.equations import tex_num


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
