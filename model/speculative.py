"""Speculative decoding: more than one token per decode step, for more compute per step.

A draft (a small model, or the target's own multi-token-prediction heads) proposes k tokens; the target
model checks all of them in one step, running k + 1 positions per sequence (the last accepted token and
the k drafts).  With each draft token accepted with probability α, independently, a step yields on
average

    E = 1 + α + α² + … + α^k = (1 − α^(k+1)) / (1 − α)     tokens per sequence   (α = 1: k + 1)

(Leviathan et al. 2023, "Fast Inference from Transformers via Speculative Decoding", eq. 1).

On the roofline the check is a decode step whose compute terms carry (k + 1)·B tokens while its memory
terms do not: the weights are read once, and each sequence's KV cache once, for all k + 1 positions.
So where the step is memory-bound the extra positions are nearly free and tokens/s per user rises by
up to E; where it is compute-bound the step grows by up to (k + 1) and the speed-up is E / (k + 1) < 1.
The draft's own cost is left out (multi-token-prediction heads are a small fraction of the model).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from model.roofline import System, combine, decode_step


def expected_tokens_per_step(acceptance: ArrayLike, draft_tokens: ArrayLike) -> np.ndarray:
    """E = (1 − α^(k+1)) / (1 − α): tokens a sequence gains per verification step.

    acceptance α [-] in [0, 1]; draft_tokens k [tokens] ≥ 0.  Returns [tokens] in [1, k + 1].
    """
    a = np.asarray(acceptance, float)
    k = np.asarray(draft_tokens, float)
    if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
        raise ValueError("acceptance must be a number from 0 to 1")
    if np.any(~np.isfinite(k)) or np.any(k < 0):
        raise ValueError("draft tokens must be a finite number ≥ 0")
    one = np.isclose(a, 1.0)
    safe = np.where(one, 0.5, a)
    return np.where(one, k + 1.0, (1.0 - safe ** (k + 1.0)) / (1.0 - safe))


@dataclass(frozen=True)
class SpeculativeStep:
    """A verification step against plain decoding at the same batch and context (arrays, SI units)."""

    tokens_per_step: np.ndarray           # E [tokens per sequence per step]
    t_step_s: np.ndarray                  # the verification step (k + 1 positions per sequence)
    t_step_plain_s: np.ndarray            # one position per sequence
    tokens_per_s_per_user: np.ndarray     # E / t_step
    tokens_per_s_per_user_plain: np.ndarray
    speedup: np.ndarray                   # tokens/s per user, speculative ÷ plain
    usd_per_mtok: np.ndarray              # one replica's chip cost per million accepted tokens
    usd_per_mtok_plain: np.ndarray


def speculative_step(system: System, batch: ArrayLike, context: ArrayLike, acceptance: ArrayLike,
                     draft_tokens: ArrayLike) -> SpeculativeStep:
    """The verification step of B sequences at context T with k draft tokens accepted at rate α.

    t_step = combine((k+1)·t_matmul, (k+1)·t_attn, t_weights, t_kv, t_comm)   (the page's roofline mode)
    speed-up = E · t_step(1 position) / t_step(k + 1 positions)
    $/Mtok   = (plain $/Mtok) · t_step / (E · t_step_plain)
    Arrays broadcast; the system's own tokens-per-step setting is replaced by E.
    """
    k = np.asarray(draft_tokens, float)
    e = expected_tokens_per_step(acceptance, k)
    plain = decode_step(system.with_(tokens_per_step=1.0), batch, context)
    mode = system.deployment.mode
    t_spec = combine((k + 1.0) * plain.t_matmul_s, (k + 1.0) * plain.t_attn_s, plain.t_weights_s, plain.t_kv_s,
                     plain.t_comm_s, mode) + plain.t_hops_s
    t_plain = plain.t_step_s
    tps_user = e / t_spec
    tps_user_plain = 1.0 / t_plain
    usd = plain.usd_per_mtok * t_spec / (e * t_plain)
    out = np.broadcast_arrays(e, t_spec, t_plain, tps_user, tps_user_plain, tps_user / tps_user_plain, usd,
                              plain.usd_per_mtok)
    return SpeculativeStep(*out)


def break_even_acceptance(step_ratio: ArrayLike, draft_tokens: ArrayLike) -> np.ndarray:
    """The acceptance rate α at which E(α, k) equals `step_ratio` = t_step(k+1) / t_step(1): speculation
    pays above it.  NaN when even α = 1 (E = k + 1) does not reach the ratio.  Solved by bisection on
    the monotone E(α) (vectorised, 60 halvings)."""
    r = np.asarray(step_ratio, float)
    k = np.asarray(draft_tokens, float)
    r, k = np.broadcast_arrays(r, k)
    lo, hi = np.zeros(r.shape), np.ones(r.shape)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        above = expected_tokens_per_step(mid, k) >= r
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    out = np.where(r <= 1.0, 0.0, hi)
    return np.where(r > k + 1.0, np.nan, out)
