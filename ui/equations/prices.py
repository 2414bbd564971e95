"""Prices decoded (lecture §2.5): the KV bytes per token a long-context price tier implies, and the
architecture that would store them — the Prices page and the walkthrough."""

from __future__ import annotations

from model import pricing
from ui.equations import params, tex_int


def kv_from_tier(active_params: float, flops_per_byte: float, read_fraction: float, threshold: float,
                 head_dim: int, kv_heads: int, kv_layers: float, bytes_per_element: float) -> str:
    """kv = 2·Na / ((F/bw)·f·T×): the KV read that overtakes the matmuls at the tier's threshold T×
    (model.pricing.implied_kv_bytes), against layers × (K, V) × d_head × KV heads × bytes
    (model.pricing.kv_bytes_architecture)."""
    implied = float(pricing.implied_kv_bytes(active_params, flops_per_byte, threshold, read_fraction))
    arch = float(pricing.kv_bytes_architecture(head_dim, kv_heads, kv_layers, bytes_per_element))
    f_tex = "" if read_fraction == 1 else rf"\times {read_fraction:g}"
    return (rf"\begin{{aligned}}kv &= \frac{{2\,N_a}}{{(F/bw)\cdot f\cdot T_\times}} = "
            rf"\frac{{2\times {params(active_params)}}}{{{flops_per_byte:g} {f_tex}\times {tex_int(threshold)}}} = "
            rf"{tex_int(implied)}\ \text{{B/token}}\\ "
            rf"kv_{{arch}} &= L\cdot 2\cdot d_{{head}}\cdot n_{{kv}}\cdot b = {kv_layers:g}\times 2\times {head_dim}"
            rf"\times {kv_heads}\times {bytes_per_element:g}\,\text{{B}} = {tex_int(arch)}\ \text{{B/token}}"
            r"\end{aligned}")
