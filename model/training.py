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


# ---------------------------------------------------------------- beyond the heuristic: Chinchilla's loss fit

# Hoffmann et al. 2022 ("Training Compute-Optimal Large Language Models"), approach 3, eq. (10):
# L(N, D) = E + A / N^α + B / D^β.
CHINCHILLA_FIT = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}


def chinchilla_loss(params, tokens, fit: dict = CHINCHILLA_FIT) -> np.ndarray:
    """Predicted pretraining loss [nats/token] of N params trained on D tokens (Hoffmann et al. 2022)."""
    n, d = np.asarray(params, float), np.asarray(tokens, float)
    return fit["E"] + fit["A"] / n ** fit["alpha"] + fit["B"] / d ** fit["beta"]


def tokens_for_loss(params, target_loss, fit: dict = CHINCHILLA_FIT) -> np.ndarray:
    """Tokens D that bring N params to `target_loss`: D = (B / (L − E − A/N^α))^(1/β); +inf if N is
    too small to ever reach it."""
    n = np.asarray(params, float)
    gap = np.asarray(target_loss, float) - fit["E"] - fit["A"] / n ** fit["alpha"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap > 0, (fit["B"] / np.where(gap > 0, gap, 1.0)) ** (1.0 / fit["beta"]), np.inf)


def params_for_loss(tokens, target_loss, fit: dict = CHINCHILLA_FIT) -> np.ndarray:
    """Params N that reach `target_loss` on D tokens (the mirror of tokens_for_loss); +inf if never."""
    d = np.asarray(tokens, float)
    gap = np.asarray(target_loss, float) - fit["E"] - fit["B"] / d ** fit["beta"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap > 0, (fit["A"] / np.where(gap > 0, gap, 1.0)) ** (1.0 / fit["alpha"]), np.inf)


@dataclass(frozen=True)
class SizeForQuality:
    params: np.ndarray            # the N grid
    pretrain_tokens: np.ndarray   # D(N) reaching the target loss
    pretrain_flops: np.ndarray    # c_pre · N · D
    inference_flops: np.ndarray   # c_inf · ineff_inf · N · D_inf
    total_flops: np.ndarray
    best: int                     # index of the cheapest N
    chinchilla_best: int          # index of the N that minimises pretraining alone


def size_for_quality(target_loss: float, inference_tokens: float, params_grid, *, c_pre: float = 6.0,
                     c_inf: float = 2.0, ineff_inf: float = 3.0, fit: dict = CHINCHILLA_FIT) -> SizeForQuality:
    """For a target quality, the model size that minimises pretraining + inference FLOPs.

    Along N: D(N) from the loss fit; cost(N) = c_pre·N·D(N) + c_inf·ineff_inf·N·D_inf.  Pretraining
    alone is cheapest at the Chinchilla point; serving D_inf tokens pushes the optimum to a smaller
    model trained on more tokens (over-training).  FLOPs with Na = N (dense-equivalent).
    """
    n = np.asarray(params_grid, float)
    d = tokens_for_loss(n, target_loss, fit)
    pre = c_pre * n * d
    inf = c_inf * ineff_inf * n * float(inference_tokens)
    total = pre + inf
    return SizeForQuality(n, d, pre, inf, total, int(np.argmin(total)), int(np.argmin(pre)))
