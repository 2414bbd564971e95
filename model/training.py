"""Training-token economics: Chinchilla against equalised pretrain / RL / inference cost.

Costs (lecture §2.11; FLOPs per active parameter per token, × an inefficiency multiple):
    C_pre = 6 · Na · D_pre                      (2 forward + 4 backward)
    C_RL  = c_RL · Na · D_RL · ineff_RL          (c_RL between 2 and 6)
    C_inf = 2 · Na · D_inf · ineff_inf
A sum of a rising and a falling cost is least near where they are equal, so set the three
equal; Na cancels.  With c_RL = 3, ineff_RL = ineff_inf = 3 (decode at 1/3 of prefill MFU):
6·D_pre = 9·D_RL = 6·D_inf, i.e. D_pre = 1.5·D_RL = D_inf (the lecture's flashcard).

Beyond the heuristic: with a loss fit L(N, D) = E + A/N^α + B/D^β (Hoffmann et al. 2022; Besiroglu et al.
2024's refit) a target loss ties D to N, so pretraining + inference cost along N has a true minimum
(`cost_optimal_size`) to set beside the equal-cost answer (`heuristic_size`).  RL has no such fit.
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
              chinchilla_tokens_per_param: float = 20.0, models=1.0) -> Overtrain:
    """Tokens for pretraining and RL that equalise their cost with a deployment's inference.

    active_params [-]; inference_tokens_per_s [tokens/s] served by the `models` [-] models that share
    the traffic equally (1: by this one model, as the CLI's flag); days [d].
    D_inf = rate / models · days · 86,400;  D_pre = c_inf·ineff_inf·D_inf / c_pre;
    D_RL = c_inf·ineff_inf·D_inf / (c_rl·ineff_rl);  Chinchilla D = 20 · Na (Hoffmann et al. 2022);
    over-training factor = D_pre / D_chinchilla.  50M tok/s × 60 days, Na = 100B ⇒ ≈ 130×.
    """
    na = np.asarray(active_params, float)
    d_inf = (np.asarray(inference_tokens_per_s, float) / np.asarray(models, float) * np.asarray(days, float)
             * SECONDS_PER_DAY)
    c_each = c_inf * ineff_inf * d_inf          # cost per Na of inference, set equal for all three
    d_pre = c_each / c_pre
    d_rl = c_each / (c_rl * ineff_rl)
    d_chin = chinchilla_tokens_per_param * na
    return Overtrain(d_inf, d_pre, d_rl, d_chin, d_pre / d_chin)


@dataclass(frozen=True)
class PhaseCosts:
    pretrain_flops: np.ndarray    # c_pre · Na · D_pre
    rl_flops: np.ndarray          # c_RL · Na · D_RL · ineff_RL
    inference_flops: np.ndarray   # c_inf · Na · D_inf · ineff_inf
    total_flops: np.ndarray


def phase_costs(active_params, pretrain_tokens, rl_tokens, inference_tokens, *, c_pre: float = 6.0,
                c_rl: float = 3.0, c_inf: float = 2.0, ineff_rl: float = 3.0, ineff_inf: float = 3.0) -> PhaseCosts:
    """The lecture's three costs [FLOP at training efficiency: inefficiency multiples included] (§2.11).

    C_pre = c_pre·Na·D_pre,  C_RL = c_RL·Na·D_RL·ineff_RL,  C_inf = c_inf·Na·D_inf·ineff_inf.
    """
    na = np.asarray(active_params, float)
    pre = c_pre * na * np.asarray(pretrain_tokens, float)
    rl = c_rl * ineff_rl * na * np.asarray(rl_tokens, float)
    inf = c_inf * ineff_inf * na * np.asarray(inference_tokens, float)
    return PhaseCosts(pre, rl, inf, pre + rl + inf)


def chip_seconds(flops, flops_per_s_per_chip) -> np.ndarray:
    """Chip-time [chip·s] to do `flops` [FLOP] on chips of `flops_per_s_per_chip` [FLOP/s] (peak × MFU)."""
    return np.asarray(flops, float) / np.asarray(flops_per_s_per_chip, float)


# ---------------------------------------------------------------- beyond the heuristic: Chinchilla's loss fit

# Hoffmann et al. 2022 ("Training Compute-Optimal Large Language Models", arXiv 2203.15556), approach 3,
# eq. (10): L(N, D) = E + A / N^α + B / D^β  [nats/token], the rounded constants printed in the paper.
CHINCHILLA_FIT = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}
# Besiroglu, Erdil, Barnett & You 2024 ("Chinchilla Scaling: A replication attempt", arXiv 2404.10102,
# Epoch AI): the same form refitted to data read off Hoffmann et al.'s figure; its compute-optimal
# tokens per parameter stay near 20 at every scale, which the rounded 2022 constants do not.
BESIROGLU_FIT = {"E": 1.8172, "A": 482.01, "B": 2085.43, "alpha": 0.3478, "beta": 0.3658}
FITS = {"hoffmann": CHINCHILLA_FIT, "besiroglu": BESIROGLU_FIT}


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


# ---------------------------------------------------------------- the optimum along the iso-loss curve

@dataclass(frozen=True)
class SizePoint:
    params: np.ndarray            # N [-]
    pretrain_tokens: np.ndarray   # D [tokens] with L(N, D) = target
    pretrain_flops: np.ndarray    # c_pre · N · D
    inference_flops: np.ndarray   # c_inf · ineff_inf · N · D_inf
    total_flops: np.ndarray


def _point(n, d, inference_tokens, c_pre, c_inf, ineff_inf) -> SizePoint:
    pre = c_pre * n * d
    inf = c_inf * ineff_inf * n * np.asarray(inference_tokens, float)
    return SizePoint(n, d, pre, inf, pre + inf)


def cost_optimal_size(target_loss, inference_tokens, *, c_pre: float = 6.0, c_inf: float = 2.0,
                      ineff_inf: float = 3.0, fit: dict = CHINCHILLA_FIT, iterations: int = 200) -> SizePoint:
    """The (N, D) on the iso-loss curve L(N, D) = target that minimises c_pre·N·D + c_inf·ineff_inf·N·D_inf.

    target_loss [nats/token] (> E, else NaN); inference_tokens D_inf [tokens]; broadcasts.
    On the curve write t = (B/D^β)/(L − E), the data term's share of the reducible loss, so
    A/N^α = (L − E)(1 − t) and B/D^β = (L − E)·t.  d(cost)/dN = 0 gives
        c_pre·D·(1 − (α/β)·(1 − t)/t) + c_inf·ineff_inf·D_inf = 0,
    whose left side rises with t; with D_inf = 0 the root is t = α/(α+β) (Chinchilla: pretraining alone),
    with D_inf > 0 it lies below (a smaller model, more tokens).  Vectorised bisection on log t.
    At the root C_inf / C_pre = (α/β)·(A/N^α)/(B/D^β) − 1.
    """
    L = np.asarray(target_loss, float)
    d_inf = np.asarray(inference_tokens, float)
    a, b = fit["alpha"], fit["beta"]
    reach = L - fit["E"]
    ok = reach > 0
    G = np.where(ok, reach, 1.0)
    k = c_inf * ineff_inf * d_inf

    def slope(t):
        d = (fit["B"] / (G * t)) ** (1.0 / b)
        return c_pre * d * (1.0 - (a / b) * (1.0 - t) / t) + k

    t_chin = a / (a + b)
    lo = np.full(np.broadcast(G, k).shape, np.log(1e-30))
    hi = np.full(lo.shape, np.log(t_chin))
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            if np.all((mid == lo) | (mid == hi)):
                break                # every bracket is two adjacent floats: further steps change nothing
            up = slope(np.exp(mid)) > 0
            hi = np.where(up, mid, hi)
            lo = np.where(up, lo, mid)
    t = np.exp(hi)
    t = np.where(k > 0, t, t_chin)
    n = np.where(ok, (fit["A"] / (G * (1.0 - t))) ** (1.0 / a), np.nan)
    d = np.where(ok, (fit["B"] / (G * t)) ** (1.0 / b), np.nan)
    return _point(n, d, d_inf, c_pre, c_inf, ineff_inf)


def chinchilla_optimal_size(target_loss, *, c_pre: float = 6.0, fit: dict = CHINCHILLA_FIT) -> SizePoint:
    """The (N, D) reaching `target_loss` with least pretraining compute (no inference), closed form:
    A/N^α = (L − E)·β/(α+β),  B/D^β = (L − E)·α/(α+β)  (Hoffmann et al. 2022, eq. 4 seen from the loss)."""
    L = np.asarray(target_loss, float)
    a, b = fit["alpha"], fit["beta"]
    reach = L - fit["E"]
    G = np.where(reach > 0, reach, np.nan)
    n = (fit["A"] * (a + b) / (G * b)) ** (1.0 / a)
    d = (fit["B"] * (a + b) / (G * a)) ** (1.0 / b)
    return _point(n, d, 0.0, c_pre, 2.0, 1.0)


def params_for_loss_at_ratio(target_loss, tokens_per_param: float = 20.0, fit: dict = CHINCHILLA_FIT,
                             iterations: int = 200) -> np.ndarray:
    """N such that L(N, ρ·N) = target (ρ tokens per parameter; 20 = the Chinchilla rule); NaN if L ≤ E.
    L(N, ρN) falls with N, so bisect on log N over 1 … 1e30."""
    L = np.asarray(target_loss, float)
    lo = np.zeros(L.shape)
    hi = np.full(L.shape, 30.0)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        if np.all((mid == lo) | (mid == hi)):
            break                    # every bracket is two adjacent floats: further steps change nothing
        n = 10.0 ** mid
        above = chinchilla_loss(n, tokens_per_param * n, fit) > L     # still too small
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return np.where(L > fit["E"], 10.0 ** hi, np.nan)


def smallest_params_for_loss(target_loss, fit: dict = CHINCHILLA_FIT) -> np.ndarray:
    """The size N below which no token count reaches `target_loss`: A/N^α = L − E (D → ∞); NaN if L ≤ E."""
    gap = np.asarray(target_loss, float) - fit["E"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap > 0, (fit["A"] / np.where(gap > 0, gap, 1.0)) ** (1.0 / fit["alpha"]), np.nan)


def loss_term_ratio(params, tokens, fit: dict = CHINCHILLA_FIT) -> np.ndarray:
    """(A/N^α) / (B/D^β) [-]: the parameter term of the loss over the data term.  At the pretraining-only
    optimum it is β/α; at the cost optimum with inference, C_inf/C_pre = (α/β)·ratio − 1."""
    n, d = np.asarray(params, float), np.asarray(tokens, float)
    return (fit["A"] / n ** fit["alpha"]) / (fit["B"] / d ** fit["beta"])


def heuristic_size(target_loss, inference_tokens, *, c_pre: float = 6.0, c_inf: float = 2.0,
                   ineff_inf: float = 3.0, fit: dict = CHINCHILLA_FIT) -> SizePoint:
    """The lecture's equal-costs answer seen on the iso-loss curve: train on D_pre = c_inf·ineff_inf·D_inf/c_pre
    tokens (pretraining cost = inference cost; N cancels) and take the N that reaches the target on them.
    N = +inf when D_pre tokens cannot reach the target at any size."""
    d_inf = np.asarray(inference_tokens, float)
    d = c_inf * ineff_inf * d_inf / c_pre
    n = params_for_loss(d, target_loss, fit)
    return _point(n, np.broadcast_to(d, np.shape(n)).astype(float), d_inf, c_pre, c_inf, ineff_inf)
