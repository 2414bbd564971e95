"""The KV read and its two crossover contexts (lecture §1.1–1.3, §2.5): where the batch's KV read equals
the weight read (T×), and where one sequence's KV read equals its matmuls (T_c: past it no batch is
compute-bound) — the KV-cache and Context pages and the walkthrough.

Dense attention with no windowed layers has closed forms; otherwise the model solves kv(T) = target
numerically and the equation shows the read terms, the target and the answer.
"""

from __future__ import annotations

from model import System, context_never_compute_bound, kv_crossover_context
from model.economics import kv_bytes_from_crossover
from model.roofline import matmul_time
from ui.equations import params, tex_int, tex_num

T_CROSS = r"T_\times"


def _closed_form(s: System) -> bool:
    return s.deployment.sparse_attention == "dense" and s.kv.window_bytes_per_token == 0


def kv_read_terms(s: System, T: str = "T") -> str:
    """What one sequence reads per step at context `T` (a symbol): the full-attention layers' share —
    all of T, a fraction of it, or √(K·T) past the knee K — plus the windowed layers' capped share."""
    kv, d = s.kv, s.deployment
    tok = tex_num(kv.full_bytes_per_token, "B")
    if d.sparse_attention == "sqrt":
        reads = [rf"{tok}\cdot\sqrt{{K\,{T}}}\ ({T} > K = {tex_int(d.sparse_param)})"]
    elif d.sparse_attention == "fraction":
        reads = [rf"{tok}\cdot {d.sparse_param:g}\,{T}"]
    else:
        reads = [rf"{tok}\cdot {T}"]
    if kv.window_bytes_per_token > 0:
        reads.append(rf"{tex_num(kv.window_bytes_per_token, 'B')}\cdot\min({T}, {tex_int(kv.window_tokens)})")
    return " + ".join(reads)


def weights_crossover(s: System, batch: float) -> str:
    """T×: the context where the batch's KV read equals the weight read, B·kv(T×) = W."""
    W, kv_tok = s.weight_bytes, s.kv.full_bytes_per_token
    t_x = float(kv_crossover_context(s, batch))
    if _closed_form(s):
        return (rf"T_\times = \frac{{W}}{{B\cdot kv_{{tok}}}} = \frac{{{tex_num(W, 'B')}}}"
                rf"{{{batch:g} \times {tex_num(kv_tok, 'B')}}} = {tex_int(t_x)}\ \text{{tokens}}")
    return (rf"kv(T_\times) = {kv_read_terms(s, T_CROSS)} = \frac{{W}}{{B}} = "
            rf"\frac{{{tex_num(W, 'B')}}}{{{batch:g}}} = {tex_num(W / batch, 'B')}"
            rf"\;\Rightarrow\; T_\times = {tex_int(t_x)}\ \text{{tokens}}")


def compute_crossover(s: System) -> str:
    """T_c: the context where one sequence's KV read takes as long as its matmuls, kv(T_c)/bw = 2·Na/F
    (model.context_never_compute_bound); independent of the batch."""
    F, bw, Na = s.flops, s.hbm_bandwidth, s.model.active_params
    t_c = context_never_compute_bound(s)
    if _closed_form(s):
        return (rf"T_c = \frac{{2\,N_a\cdot bw}}{{F\cdot kv_{{tok}}}} = \frac{{2 \times {params(Na)} \times "
                rf"{tex_num(bw, 'B/s')}}}{{{tex_num(F, 'FLOP/s')} \times {tex_num(s.kv.full_bytes_per_token, 'B')}}}"
                rf" = {tex_int(t_c)}\ \text{{tokens}}")
    target = float(matmul_time(Na, 1.0, 1.0, F)) * bw          # the KV bytes read in one token's matmul time
    return (rf"kv(T_c) = {kv_read_terms(s, 'T_c')} = \frac{{2\,N_a\cdot bw}}{{F}} = \frac{{2 \times {params(Na)} "
            rf"\times {tex_num(bw, 'B/s')}}}{{{tex_num(F, 'FLOP/s')}}} = {tex_num(target, 'B')}"
            rf"\;\Rightarrow\; T_c = {tex_int(t_c)}\ \text{{tokens}}")


def tier_kv(s: System, active_params: float, threshold: float) -> str:
    """The KV bytes per token that put T_c at a price tier's threshold, on the sidebar's chip
    (model.economics.kv_bytes_from_crossover)."""
    F, bw = s.flops, s.hbm_bandwidth
    implied = float(kv_bytes_from_crossover(active_params, F, bw, threshold))
    return (rf"kv_{{tok}} = \frac{{2\,N_a\cdot bw}}{{F\cdot T_{{tier}}}} = "
            rf"\frac{{2 \times {params(active_params)} \times {tex_num(bw, 'B/s')}}}"
            rf"{{{tex_num(F, 'FLOP/s')} \times {tex_int(threshold)}}} = "
            rf"{tex_int(implied)}\ \text{{B/token}}")

