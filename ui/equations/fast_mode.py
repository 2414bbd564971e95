"""Fast mode: the standard and fast batches of a quoted speedup S at a price multiple Pm (lecture §1.3,
§2.4) — the Fast mode page and the walkthrough."""

from __future__ import annotations

from model import System, system_balance_batch
from model.economics import FastMode
from model.pricing import fast_batch_multiples
from ui.equations import tex_num
from ui.figures.fast_mode import batch_text


def tex_batch(x: float) -> str:
    """A batch as the charts label it (6.31, 94.7, 2,048), its thousands separators braced for KaTeX."""
    return batch_text(x).replace(",", "{,}")


def no_kv(s: System, speedup: float, price_multiple: float) -> str:
    """Without KV the fast batch sits on the latency floor and the standard one on the compute line:
    B_std = S·B*, B_fast = B*/Pm (model.pricing.fast_batch_multiples)."""
    b_star = float(system_balance_batch(s, 0.0))
    std, fast = (float(m) * b_star for m in fast_batch_multiples(speedup, price_multiple))
    return (rf"B_{{std}} = S\cdot B^* = {speedup:.3g} \times {tex_batch(b_star)} = {tex_batch(std)},\qquad "
            rf"B_{{fast}} = \frac{{B^*}}{{P_m}} = \frac{{{tex_batch(b_star)}}}{{{price_multiple:.3g}}} = "
            rf"{tex_batch(fast)}")


def solved(s: System, fm: FastMode) -> str:
    """The pair the model solved numerically with KV (model.economics.fast_mode_batches), on the
    sidebar's roofline mode, or that there is none."""
    lhs = (r"t(B) = \max\!\Big(\tfrac{2N_aB}{CF},\ \tfrac{W + B\,kv(T)}{C\,bw}\Big)" if s.deployment.mode == "lecture"
           else r"t(B) = \max\!\Big(\tfrac{2N_aB}{CF},\ \tfrac{W}{C\,bw}\Big) + \max\!\Big(t_{attn},\ "
                r"\tfrac{B\,kv(T)}{C\,bw}\Big)")
    if fm.batch_standard is not None and fm.batch_fast is not None:
        return lhs + (rf",\quad \frac{{t(B_{{std}})}}{{t(B_{{fast}})}} = S,\ \ \frac{{B_{{std}}}}{{B_{{fast}}}} = "
                      rf"S\,P_m \;\Rightarrow\; B_{{std}} = {tex_batch(fm.batch_standard)},\ "
                      rf"B_{{fast}} = {tex_batch(fm.batch_fast)}")
    return lhs + (r",\quad \frac{t(B_{std})}{t(B_{fast})} = S,\ \ \frac{B_{std}}{B_{fast}} = S\,P_m"
                  r"\;\Rightarrow\;\text{no solution}")


def chosen(fm: FastMode) -> str:
    """The speedup and price multiple of two chosen batches (model.economics.fast_mode_forward)."""
    return (rf"S = \frac{{t(B_{{std}})}}{{t(B_{{fast}})}} = \frac{{{tex_num(fm.t_step_standard_s, 's')}}}"
            rf"{{{tex_num(fm.t_step_fast_s, 's')}}} = {fm.speedup:.3g},\qquad "
            rf"P_m = \frac{{t(B_{{fast}})/B_{{fast}}}}{{t(B_{{std}})/B_{{std}}}} = "
            rf"\frac{{{tex_num(fm.t_step_fast_s, 's')}/{fm.batch_fast:g}}}{{{tex_num(fm.t_step_standard_s, 's')}"
            rf"/{fm.batch_standard:g}}} = {fm.price_multiple:.3g}")
