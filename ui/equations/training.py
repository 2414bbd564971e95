"""Training tokens (lecture §2.11): pretraining, RL and inference at equal cost, and the over-training
factor against Chinchilla — the Training page and the walkthrough."""

from __future__ import annotations

import numpy as np

from model.training import overtrain
from ui.equations import params, row, tex_num


def tex_tok(x: float) -> str:
    """Token counts: 259 T below 1e15, then a power of ten (not '3.15e+05 P')."""
    x = float(x)
    if np.isfinite(x) and x >= 1e15:
        e = int(np.floor(np.log10(x)))
        return rf"{x / 10 ** e:.3g}\times 10^{{{e}}}"
    return tex_num(x)


def tex_factor(x: float) -> str:
    """A plain multiple: 130, or a power of ten far from 1 (not '1.05e+07')."""
    x = float(x)
    if np.isfinite(x) and x > 0 and not 1e-3 <= x < 1e4:
        e = int(np.floor(np.log10(x)))
        return rf"{x / 10 ** e:.3g}\times 10^{{{e}}}"
    return f"{x:.3g}"


def overtraining(active_params: float, rate: float, days: float, models: float, **coef: float) -> str:
    """Pretraining tokens ÷ Chinchilla's 20 per active parameter (model.training.overtrain; `coef`:
    c_rl, ineff_rl, ineff_inf)."""
    o = overtrain(active_params, rate, days, models=models, **coef)
    per_param = float(o.chinchilla_tokens) / active_params
    return (rf"\text{{over-training}} = \frac{{D_{{pre}}}}{{{per_param:g}\,N_{{active}}}} = "
            rf"\frac{{{tex_tok(float(o.pretrain_tokens))}}}{{{per_param:g}\times{params(active_params)}}} = "
            rf"{tex_factor(float(o.overtrain_factor))}\times")


def equal_costs(active_params: float, rate: float, days: float, models: float, *, c_rl: float, ineff_rl: float,
                ineff_inf: float) -> str:
    """The lecture's rule: spend as much on pretraining and on RL as on inference; the inference tokens
    of a deployment then fix the pretraining and RL tokens, and the over-training factor."""
    coef = {"c_rl": c_rl, "ineff_rl": ineff_rl, "ineff_inf": ineff_inf}
    o = overtrain(active_params, rate, days, models=models, **coef)
    d_inf, d_pre, d_rl = float(o.inference_tokens), float(o.pretrain_tokens), float(o.rl_tokens)
    return (rf"\begin{{aligned}}D_{{inf}} &= \frac{{R}}{{n}}\cdot \text{{days}}\cdot 86{{,}}400 = "
            rf"\frac{{{tex_num(rate)}}}{{{models:g}}}\times {days:g}\times 86{{,}}400 = {tex_tok(d_inf)}"
            r"\ \text{tokens}\\ "
            rf"6\,D_{{pre}} &= c_{{RL}}\,\text{{ineff}}_{{RL}}\,D_{{RL}} = 2\,\text{{ineff}}_{{inf}}\,D_{{inf}}"
            rf"\;\Rightarrow\; 6\,D_{{pre}} = {c_rl:g}\times{ineff_rl:g}\,D_{{RL}} = 2\times{ineff_inf:g}\times "
            rf"{tex_tok(d_inf)}\\ "
            rf"D_{{pre}} &= {tex_tok(d_pre)},\quad D_{{RL}} = {tex_tok(d_rl)}"
            rf"\quad(D_{{pre}} = {d_pre / d_rl:.3g}\,D_{{RL}} = {d_pre / d_inf:.3g}\,D_{{inf}})\\ "
            + row(overtraining(active_params, rate, days, models, **coef)) + r"\end{aligned}")


def pretrain_tokens(active_params: float, rate: float, days: float, models: float, *, c_rl: float,
                    ineff_rl: float, ineff_inf: float) -> str:
    """D_pre straight from the serving rate: 6·D_pre = 2·ineff_inf·D_inf."""
    o = overtrain(active_params, rate, days, models=models, c_rl=c_rl, ineff_rl=ineff_rl, ineff_inf=ineff_inf)
    return (rf"D_{{pre}} = \frac{{2\,\text{{ineff}}_{{inf}}}}{{6}}\cdot\frac{{R}}{{n}}\cdot t = "
            rf"\frac{{2\times{ineff_inf:g}}}{{6}}\times\frac{{{tex_num(rate, 'tok/s')}}}{{{models:g}}}\times "
            rf"{days:g}\,\text{{d}}\times 86{{,}}400\,\tfrac{{\text{{s}}}}{{\text{{d}}}} = "
            rf"{tex_num(float(o.pretrain_tokens))}\ \text{{tokens}}")
