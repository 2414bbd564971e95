"""Speculative decoding — more than one token per step, paid for with compute the step may have spare.

A draft proposes k tokens and the target model checks them all in one step (k + 1 positions per
sequence).  The weights and each sequence's KV are read once for all of them, so a memory-bound step
barely grows while a sequence gains E(α, k) tokens; a compute-bound step grows with k + 1.  The physics
is model/speculative.py; the batch and context are the sidebar's.
"""

import numpy as np
import streamlit as st

from model.speculative import break_even_acceptance, speculative_step
from ui.elements import export, metrics
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import tex_time
from ui.figures import speculative as fig_speculative
from ui.format import seconds, tokens, usd
from ui.state.dials import choice_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("speculative",)
DRAFT_OPTIONS = [1, 2, 3, 4, 5, 6, 7, 8]
ACCEPT_OPTIONS = [round(0.05 * i, 2) for i in range(20)] + [0.97, 0.99]
ALPHA = np.linspace(0.0, 0.99, 100)

view = current_view()
s, B, T = view.system, view.batch, view.context
page_header(heading("speculative"), view)

page_dial(choice_dial("sd_k", DRAFT_OPTIONS, 3, PAGE))
page_dial(choice_dial("sd_a", ACCEPT_OPTIONS, 0.7, PAGE))
c = st.columns(2)
c[0].select_slider("Draft tokens per step k", options=DRAFT_OPTIONS, key="sd_k", persist_state="session",
                   help="Tokens the draft proposes for each sequence; the target model checks k + 1 positions.")
c[1].select_slider("Acceptance rate α", options=ACCEPT_OPTIONS, key="sd_a", persist_state="session",
                   help="The chance that the target model accepts a draft token (each one independently).")
k, a = float(st.session_state["sd_k"]), float(st.session_state["sd_a"])

# ---------------------------------------------------------------- model calls (one per chart)
now = speculative_step(s, B, T, a, k)
curve = speculative_step(s, B, T, ALPHA, k)
e, ratio = float(now.tokens_per_step), float(now.t_step_s / now.t_step_plain_s)
gain = float(now.speedup)
even = float(break_even_acceptance(ratio, k))

metrics.grid([
    Metric("Tokens per step E", f"{e:.3g}", help="Tokens a sequence gains per verification step."),
    Metric("Step, k + 1 positions", seconds(float(now.t_step_s)),
           delta=f"{ratio:.3g}× the plain step", delta_color="off"),
    Metric("Speed-up per user", f"{gain:.3g}×", delta=f"{float(now.tokens_per_s_per_user):,.0f} tokens/s",
           delta_color="normal" if gain >= 1 else "inverse"),
    Metric("Cost per million tokens", usd(float(now.usd_per_mtok)),
           delta=f"plain {usd(float(now.usd_per_mtok_plain))}", delta_color="off"),
], columns=4)

where = f"at B = {B:g}, T = {tokens(T)}"
export.chart(fig_speculative.gain_vs_acceptance(ALPHA, curve.tokens_per_step, curve.speedup, draft_tokens=int(k),
                                                where=where, now=(a, gain)), key="sd_gain")

latex(rf"E = \frac{{1 - \alpha^{{k+1}}}}{{1 - \alpha}} = \frac{{1 - {a:g}^{{{k + 1:g}}}}}{{1 - {a:g}}} = {e:.3g}"
      rf"\qquad \text{{speed-up}} = E\cdot\frac{{t_{{step}}(1)}}{{t_{{step}}(k+1)}} = "
      rf"\frac{{{e:.3g} \times {tex_time(float(now.t_step_plain_s))}}}{{{tex_time(float(now.t_step_s))}}}"
      rf" = {gain:.3g}\times", key="speculative.gain")

if ratio <= 1.0 + 1e-9:
    st.markdown(f"**{where}:** checking {k + 1:g} positions per sequence takes no longer than checking one — the "
                f"step is bound by reading weights and KV, which the extra positions do not add to — so every "
                f"accepted draft token is free and tokens/s per user rise by the full E = {e:.3g}.")
else:   # ratio ≤ k + 1 (only the compute terms grow), so some α < 1 breaks even
    st.markdown(f"**{where}:** the step with {k + 1:g} positions takes {ratio:.3g}× as long as the plain step, so "
                f"speculation pays only above an acceptance rate of {even:.2f} (where E = {ratio:.3g}).")
st.caption("Acceptance is taken as independent per token (Leviathan et al. 2023, eq. 1); the draft's own cost is "
           "left out, as for multi-token-prediction heads. The speed-up per user is also the cost saving per token.")
