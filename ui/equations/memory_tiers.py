"""Memory tiers for a prompt cache (lecture §2.7): drain times, what holding a token's KV in a tier and
reading it back costs against recomputing it, and a request's cost at a prefix-cache hit rate — the
Memory tiers page and the walkthrough.

A tier costs a + b·t per token held for t (model/economics.py): the hold, kv/capacity · p · t, plus the
read-back, kv/bandwidth · p (nothing from HBM); recomputing costs 2·Na/F · p_chip.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model import System
from model.economics import Tier, cache_tier_costs, recompute_cost, request_with_cache
from ui.equations import params, tex_int, tex_num
from ui.format import duration


def tex_duration(t: float) -> str:
    """A drain time in words: 23.9 ms, 1.2 min."""
    return rf"\text{{{duration(t)}}}"


def tex_s(t: float) -> str:
    """A hold time in seconds (it multiplies a rate in $/s)."""
    return rf"{t:g}\,\text{{s}}" if t >= 1e-3 else tex_num(t, "s")


def tex_usd(x: float) -> str:
    """A small dollar amount: 1.17e-07 → '1.17 \\times 10^{-7}\\,\\$'."""
    if not np.isfinite(x):
        return r"\infty"
    if x == 0:
        return r"0\,\$"
    e = int(np.floor(np.log10(abs(x))))
    if -2 <= e <= 3:
        return rf"{x:.3g}\,\$"
    return rf"{x / 10 ** e:.3g}\times 10^{{{e}}}\,\$"


def drain_times(tiers: Sequence[Tier], labels: Sequence[str]) -> str:
    """Each tier's drain time, capacity ÷ bandwidth: the lecture's rule puts a hold time in the tier
    that drains in about that long."""
    lines = [rf"\text{{{lab}}}: &\ \frac{{{tex_num(t.capacity_bytes, 'B')}}}"
             rf"{{{tex_num(t.bandwidth_bytes_per_s, 'B/s')}}} = {tex_duration(t.drain_s)}"
             for t, lab in zip(tiers, labels)]
    return (r"\begin{aligned}t_{drain} &= \frac{\text{capacity}}{\text{bandwidth}}\\ " + r"\\ ".join(lines)
            + r"\end{aligned}")


def hold_or_recompute(s: System, tier: Tier, label: str, kv: float, hold: float) -> str:
    """One token's KV held in `tier` for `hold` seconds and read back, against recomputing it on the chip."""
    rec = float(recompute_cost(s))
    usd = float(cache_tier_costs([tier], kv, rec, hold).tier_usd[0])
    p_s = tier.usd_per_hour / 3600.0
    if tier.medium == "hbm":
        tier_tex = (rf"c_{{\text{{{label}}}}}(t) &= \frac{{kv}}{{M}}\,p\,t = \frac{{{tex_num(kv, 'B')}}}"
                    rf"{{{tex_num(tier.capacity_bytes, 'B')}}}\times{tex_usd(p_s)}/\text{{s}}\times{tex_s(hold)}"
                    rf" = {tex_usd(usd)}")
    else:
        tier_tex = (rf"c_{{\text{{{label}}}}}(t) &= \frac{{kv}}{{cap}}\,p\,t + \frac{{kv}}{{bw}}\,p = \left("
                    rf"\frac{{{tex_num(kv, 'B')}}}{{{tex_num(tier.capacity_bytes, 'B')}}}\times{tex_s(hold)} + "
                    rf"\frac{{{tex_num(kv, 'B')}}}{{{tex_num(tier.bandwidth_bytes_per_s, 'B/s')}}}\right)\times"
                    rf"{tex_usd(p_s)}/\text{{s}} = {tex_usd(usd)}")
    return (r"\begin{aligned}" + tier_tex + r"\text{ per token}\\ "
            rf"c_{{re}} &= \frac{{2\,N_a}}{{F}}\,p_{{chip}} = \frac{{2\times{params(s.model.active_params)}}}"
            rf"{{{tex_num(s.flops, 'FLOP/s')}}}\times{tex_usd(s.hardware.price_usd_per_hour / 3600.0)}/\text{{s}} = "
            rf"{tex_usd(rec)}\text{{ per token}}\end{{aligned}}")


def request_cost(s: System, prompt: float, output: float, hit: float, label: str, cache_usd: float,
                 batch: float) -> str:
    """One request with a share h of its prompt in the cache: prefill of the rest, decode, and the cached
    prefix held in the tier `label` at `cache_usd` per token (model.economics.request_with_cache)."""
    cr = request_with_cache(s, prompt, output, hit, cache_usd, batch=batch)
    return (rf"\begin{{aligned}}\text{{cost}}(h) &= \text{{prefill}}\big((1-h)\,L\big) + \text{{decode}}(O) + "
            rf"h\,L\,c_{{\text{{{label}}}}}(t)\\ &= {tex_usd(float(cr.usd_prefill))} + "
            rf"{tex_usd(float(cr.usd_decode))} + {hit:.3g}\times{tex_int(prompt)}\times{tex_usd(cache_usd)}"
            rf" = {tex_usd(float(cr.usd_total))}\end{{aligned}}")
