"""Context limits (lecture §2.5, §2.8): the compute crossover T_c of the lecture's frontier model on this
chip, and how sparse reads move T_c — the Context page and the walkthrough (T_c itself is
`ui.equations.kv_cache.compute_crossover`)."""

from __future__ import annotations

from model import KVLayout, System
from model.context import compute_crossover_context
from ui.equations import params, tex_int, tex_num


def reference_crossover(s: System, active_params: float, kv: KVLayout) -> str:
    """T_c of a reference model (the lecture's frontier model: Na active, kv bytes per token) on this
    chip: only the chip's F/bw enters."""
    F, bw = s.flops, s.hbm_bandwidth
    t_c = float(compute_crossover_context(kv, active_params, F, bw))
    return (rf"T_c^{{ref}} = \frac{{2 \times {params(active_params)}}}{{(F/bw) \times kv^{{ref}}_{{tok}}}} = "
            rf"\frac{{2 \times {params(active_params)}}}{{{F / bw:,.0f} \times "
            rf"{tex_num(kv.full_bytes_per_token, 'B')}}} = {tex_int(t_c)}\ \text{{tokens}}"
            r"\quad\text{(the lecture's frontier model on this chip)}")


def sparse_crossovers(s: System, fraction: float, knee: float) -> str:
    """T_c when each full-attention layer reads a fraction f of the context (T_c/f), or √(K·T) past the
    knee K (T_c²/K); closed forms, so for a model without windowed layers."""
    kv, Na, F, bw = s.kv, s.model.active_params, s.flops, s.hbm_bandwidth
    dense = float(compute_crossover_context(kv, Na, F, bw))
    frac = float(compute_crossover_context(kv, Na, F, bw, "fraction", fraction))
    sqrt_ = float(compute_crossover_context(kv, Na, F, bw, "sqrt", knee))
    return (rf"T_c(f) = \frac{{T_c}}{{f}} = \frac{{{tex_int(dense)}}}{{{fraction:g}}} = {tex_int(frac)}"
            rf"\qquad T_c(\sqrt{{\ }}) = \frac{{T_c^2}}{{K}} = \frac{{{tex_int(dense)}^2}}{{{tex_int(knee)}}}"
            rf" = {tex_int(sqrt_)}" + (r"\ (T_c \le K\text{: every token read})" if dense <= knee else ""))
