"""Training-token economics: Chinchilla against equalised pretrain / RL / inference cost.

Costs (lecture §2.11; FLOPs per active parameter per token, × an inefficiency multiple):
    C_pre = 6 · Na · D_pre                      (2 forward + 4 backward)
    C_RL  = c_RL · Na · D_RL · ineff_RL          (c_RL between 2 and 6)
    C_inf = 2 · Na · D_inf · ineff_inf
A sum of a rising and a falling cost is least near where they are equal, so set the three
equal; Na cancels.  With c_RL = 3, ineff_RL = ineff_inf = 3 (decode at 1/3 of prefill MFU):
6·D_pre = 9·D_RL = 6·D_inf, i.e. D_pre = 1.5·D_RL = D_inf (the lecture's flashcard).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class Overtrain:
    inference_tokens: np.ndarray
    pretrain_tokens: np.ndarray
    rl_tokens: np.ndarray
    chinchilla_tokens: np.ndarray
    overtrain_factor: np.ndarray


def overtrain(active_params, inference_tokens_per_s, days, *, c_pre: float = 6.0, c_rl: float = 3.0,
              c_inf: float = 2.0, ineff_rl: float = 3.0, ineff_inf: float = 3.0,
              chinchilla_tokens_per_param: float = 20.0) -> Overtrain:
    """Tokens for pretraining and RL that equalise their cost with a deployment's inference.

    active_params [-]; inference_tokens_per_s [tokens/s] served by this one model; days [d].
    D_inf = rate · days · 86,400;  D_pre = c_inf·ineff_inf·D_inf / c_pre;
    D_RL = c_inf·ineff_inf·D_inf / (c_rl·ineff_rl);  Chinchilla D = 20 · Na (Hoffmann et al. 2022);
    over-training factor = D_pre / D_chinchilla.  50M tok/s × 60 days, Na = 100B ⇒ ≈ 130×.
    """
    na = np.asarray(active_params, float)
    d_inf = np.asarray(inference_tokens_per_s, float) * np.asarray(days, float) * SECONDS_PER_DAY
    c_each = c_inf * ineff_inf * d_inf          # cost per Na of inference, set equal for all three
    d_pre = c_each / c_pre
    d_rl = c_each / (c_rl * ineff_rl)
    d_chin = chinchilla_tokens_per_param * na
    return Overtrain(d_inf, d_pre, d_rl, d_chin, d_pre / d_chin)
