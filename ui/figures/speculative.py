"""Figure builders for the Speculative decoding page (pure: arrays in, figure out; no Streamlit, no physics)."""

from __future__ import annotations

import numpy as np

from ui.figures.batch import GREY, NOW_MARKER
from ui.figures.plot import Spec, SpecFigure, axis, base_layout

TOKENS_COLOR = "#4C78A8"
SPEEDUP_COLOR = "#E45756"
RANGE_X = (0.0, 1.0)


def gain_vs_acceptance(acceptance: np.ndarray, tokens: np.ndarray, speedup: np.ndarray, *, draft_tokens: int,
                       where: str, now: tuple[float, float],
                       title: str = "Tokens per step and speed-up against acceptance rate") -> SpecFigure:
    """Tokens per step E [tokens] and the speed-up of tokens/s per user [×] against the acceptance rate α
    [-] (linear axes), break-even (1×) as a dashed line, the current α marked on the speed-up curve.

    `where` names the batch and context the speed-up is taken at (the legend says it)."""
    a = np.asarray(acceptance, float)
    spec = Spec()
    spec.log_x = {1: False}
    # The speed-up first and E dashed over it: where the step is memory-bound the two coincide.
    spec.scatter(x=a, y=np.asarray(speedup, float), mode="lines", line={"color": SPEEDUP_COLOR, "width": 4},
                 name=f"speed-up per user {where}",
                 hovertemplate="α = %{x:.2f}: %{y:.3g}× tokens/s per user<extra></extra>")
    spec.scatter(x=a, y=np.asarray(tokens, float), mode="lines",
                 line={"color": TOKENS_COLOR, "width": 3, "dash": "dash"},
                 name=f"tokens per step E (k = {draft_tokens})",
                 hovertemplate="α = %{x:.2f}: E = %{y:.3g} tokens<extra></extra>")
    spec.hline(1.0, color=GREY, dash="dash", width=2)
    spec.now_point(now[0], now[1], name=f"α = {now[0]:.2f}", marker=NOW_MARKER, room_x=a, room_y=speedup,
                   log=(False, False))
    top = float(np.nanmax(np.concatenate([np.ravel(tokens), np.ravel(speedup)])))
    spec.layout = base_layout(title, hovermode="x unified",
                              xaxis=axis("acceptance rate α [-]", log=False, range=list(RANGE_X)),
                              yaxis=axis("tokens per step [tokens] · speed-up [×]", log=False,
                                         range=[0.0, max(1.5, 1.08 * top)]))
    return spec.figure()
