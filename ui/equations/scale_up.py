"""Scale-up domain (lecture §1.7): what C chips in one domain buy, the largest model they hold and what a
token costs on them — the Scale-up page."""

from __future__ import annotations

from model import System, decode_step
from model.cluster import largest_model_params
from ui.equations import STRUT, params, row, tex_num, tex_time
from ui.equations.batch import latency_floor
from ui.format import usd


def domain(s: System) -> str:
    """Bandwidth and capacity both grow with C, so the latency floor W/(C·bw) falls as 1/C."""
    C, bw, M = s.deployment.chips, s.hbm_bandwidth, s.hardware.hbm_bytes
    return (rf"\begin{{aligned}}bw_{{agg}} &= C\cdot bw = {C:g}\times{tex_num(bw, 'B/s')} = "
            rf"{tex_num(C * bw, 'B/s')}\\[4pt] M_{{agg}} &= C\cdot M = {C:g}\times{tex_num(M, 'B')} = "
            rf"{tex_num(C * M, 'B')}\\[4pt] " + row(latency_floor(s)) + STRUT + r"\end{aligned}")


def tex_usd(x: float) -> str:
    """Dollars as the page writes them ('$1.20'), for KaTeX: '\\$1.20' (no thousands comma: KaTeX spaces it)."""
    return usd(x).replace("$", r"\$").replace(",", "{,}")


def largest_model(s: System, batch: float, context: float) -> str:
    """The most parameters whose weights fit in C·M next to the KV of B sequences at T
    (model.cluster.largest_model_params), against the sidebar's model."""
    C, M, bpp, model = s.deployment.chips, s.hardware.hbm_bytes, s.precision.weight_bytes_per_param, s.model
    kv_seq = float(s.kv.stored_bytes(context)) if context > 0 else 0.0
    n_max = float(largest_model_params(s, batch, context))
    return (rf"\begin{{aligned}}N_{{max}} &= \frac{{C\cdot M - B\cdot kv(T)}}{{\text{{bytes/param}}}} = "
            rf"\frac{{{tex_num(C * M, 'B')} - {batch:g}\times{tex_num(kv_seq, 'B') if kv_seq >= 1 else '0'}}}"
            rf"{{{bpp:g}\,\text{{B}}}}\\[6pt] &= "
            + (rf"{params(n_max)}" if n_max > 0 else r"0\ \text{(the KV alone does not fit)}")
            + (r"\ \ge\ " if n_max >= model.total_params else r"\ <\ ")
            + rf"{params(model.total_params)}\ \text{{({model.name})}}" r"\end{aligned}")


def cost(s: System, batch: float, context: float) -> str:
    """Cost per million tokens: C chips' rental for one step, shared by the B tokens it makes."""
    now = decode_step(s, batch, context)
    C, price = s.deployment.chips, s.hardware.price_usd_per_hour
    return (rf"\begin{{aligned}}\$/\text{{Mtok}} &= \frac{{C\cdot\text{{price}}}}{{3600}}\cdot\frac{{t_{{step}}}}{{B}}"
            rf"\cdot 10^6\\[6pt] &= \frac{{{C:g}\times{tex_usd(price)}}}{{3600}}"
            rf"\cdot\frac{{{tex_time(float(now.t_step_s))}}}{{{batch:g}}}"
            rf"\cdot 10^6 = {tex_usd(float(now.usd_per_mtok))}{STRUT}\end{{aligned}}")
