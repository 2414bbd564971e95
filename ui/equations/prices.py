"""Prices decoded (lecture §2.4–2.7): what a price list reads out — decode efficiency, the KV bytes per token
a long-context tier implies (and the architecture that would store them), the cache-hit discount and a
fast mode's batches — the Prices page and the walkthrough."""

from __future__ import annotations

from model import pricing
from model.presets import PriceOffer
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


def decode_efficiency(offer: PriceOffer) -> str:
    """Output ÷ input price r: priced at cost, decode runs at ≈ 1/r of prefill's FLOP utilisation (§2.6)."""
    r = float(pricing.price_ratio(offer.output_usd_per_mtok, offer.input_usd_per_mtok))
    return (rf"r = \frac{{p_{{out}}}}{{p_{{in}}}} = \frac{{\${offer.output_usd_per_mtok:g}}}"
            rf"{{\${offer.input_usd_per_mtok:g}}} = {r:.3g}\qquad \frac{{\eta_{{decode}}}}{{\eta_{{prefill}}}} "
            rf"\approx \frac{{1}}{{r}} = {float(pricing.decode_efficiency(r)):.3g}")


def cache_discount(offer: PriceOffer, active_params: float, flops_per_byte: float, kv_bytes: float) -> str:
    """The cache-hit discount against the roofline's recompute ÷ HBM read of one token's KV (§2.7)."""
    disc = float(pricing.cache_discount(offer.input_usd_per_mtok, offer.cache_read_usd_per_mtok))
    reload = float(pricing.recompute_over_reload(active_params, flops_per_byte, kv_bytes))
    return (rf"\frac{{p_{{in}}}}{{p_{{hit}}}} = \frac{{\${offer.input_usd_per_mtok:g}}}"
            rf"{{\${offer.cache_read_usd_per_mtok:g}}} = {disc:.3g}\times\qquad "
            rf"\frac{{t_{{recompute}}}}{{t_{{read}}}} = \frac{{2N_a}}{{(F/bw)\cdot kv}} = "
            rf"\frac{{2\times {params(active_params)}}}{{{flops_per_byte:g}\times {tex_int(kv_bytes)}\,\text{{B}}}} = "
            rf"{tex_int(reload)}\times")


def fast_multiples(offer: PriceOffer) -> str:
    """A fast mode's price multiple and quoted speedup as batches, in multiples of B* with no KV (§2.4)."""
    S = float(offer.fast_speedup)
    Pm = float(pricing.price_ratio(offer.fast_output_usd_per_mtok, offer.output_usd_per_mtok))
    std, fast = (float(x) for x in pricing.fast_batch_multiples(S, Pm))
    return (rf"P_m = \frac{{\${offer.fast_output_usd_per_mtok:g}}}{{\${offer.output_usd_per_mtok:g}}} = {Pm:.3g}\times,"
            rf"\quad S = {S:.3g}\times\qquad B_{{std}} = S\cdot B^* = {std:.3g}\,B^*,\quad "
            rf"B_{{fast}} = \frac{{B^*}}{{P_m}} = {fast:.3g}\,B^*")
