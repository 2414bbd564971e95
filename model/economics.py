"""Economics on top of the roofline: fast mode, and what API prices imply.

Fast mode (lecture §2.4): a provider sells more speed by running a smaller batch.  Per-token
cost ∝ t_step / B, per-user speed ∝ 1 / t_step.  With no KV traffic, the balance batch B*,
a quoted speedup S and price multiple Pm:

    B_std = S · B*       B_fast = B* / Pm          (6× price for 2.5× speed: 2.5·B* and B*/6)

In general (KV, pipelining, per-phase mode) the pair is solved numerically from
    t(B_std) / t(B_fast) = S   and   B_std / B_fast = S · Pm.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .roofline import ArrayLike, System, _decode_step, decode_step, max_batch_that_fits, system_balance_batch
from .specs import _Spec, num


def usd_per_mtok(chips, price_usd_per_hour, t_step_s, tokens_per_step):
    """$ per million tokens: chips · price/3600 · t_step / tokens_per_step · 1e6.  Returns [USD/Mtok]."""
    return np.asarray(chips, float) * price_usd_per_hour / 3600.0 * np.asarray(t_step_s, float) \
        / np.asarray(tokens_per_step, float) * 1e6


@dataclass(frozen=True)
class FastMode:
    speedup: float | None
    price_multiple: float | None
    batch_standard: float | None
    batch_fast: float | None
    batch_balance: float | None
    batch_standard_over_balance: float | None
    batch_fast_over_balance: float | None
    t_step_standard_s: float | None
    t_step_fast_s: float | None
    usd_per_mtok_standard: float | None
    usd_per_mtok_fast: float | None
    reason: str = ""


def _over(x, b_star):
    return None if x is None or not np.isfinite(b_star) else x / b_star


def fast_mode_forward(system: System, batch_standard: float, batch_fast: float,
                      context: float = 0.0) -> FastMode:
    """Speedup and price multiple of running `batch_fast` instead of `batch_standard`.

    speedup = t(B_std) / t(B_fast); price multiple = (t(B_fast)/B_fast) / (t(B_std)/B_std).
    """
    r = decode_step(system, np.array([batch_standard, batch_fast], float), context)
    t_s, t_f = (float(x) for x in r.t_step_s)
    u_s, u_f = (float(x) for x in r.usd_per_mtok)
    b_star = float(system_balance_batch(system, context))
    return FastMode(t_s / t_f, u_f / u_s, batch_standard, batch_fast,
                    b_star if np.isfinite(b_star) else None,
                    _over(batch_standard, b_star), _over(batch_fast, b_star), t_s, t_f, u_s, u_f)


def fast_mode_batches(system: System, speedup: float, price_multiple: float,
                      context: float = 0.0) -> FastMode:
    """The standard and fast batches that give a quoted speedup S at a price multiple Pm.

    No solution (None batches and a reason) when S ≤ 1 or Pm ≤ 1 (not a fast mode), when the
    fast batch would be below one sequence (beyond the latency floor), or when the standard
    batch does not fit in HBM.
    """
    b_star = float(system_balance_batch(system, context))
    bal = b_star if np.isfinite(b_star) else None

    def none(reason: str) -> FastMode:
        return FastMode(speedup, price_multiple, None, None, bal, None, None, None, None, None, None, reason)

    if not (np.isfinite(speedup) and np.isfinite(price_multiple)):
        return none("speedup and price multiple must be finite")
    if speedup <= 1 or price_multiple <= 1:
        return none("a fast mode needs speedup > 1 and price multiple > 1")
    lam = speedup * price_multiple

    def ratio(b_fast):
        r = _decode_step(system, np.stack([lam * b_fast, b_fast]), np.asarray(context, float),
                         np.asarray(system.deployment.chips, float), 0.0)
        return r.t_step_s[0] / r.t_step_s[1]

    # ratio(B) rises from 1 (both memory-bound) to ≤ λ (both compute-bound): bisect in log space.
    lo = np.full(1, -12.0)
    hi = np.full(1, 12.0)
    if ratio(10.0 ** hi)[0] < speedup * (1 - 1e-12):
        return none(f"no batch gives {speedup:g}× speed at {price_multiple:g}× price on this system")
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        above = ratio(10.0 ** mid) >= speedup
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    b_fast = float(10.0 ** hi[0])
    b_std = lam * b_fast
    if b_fast < 1 - 1e-9:
        return none(f"the fast batch would be {b_fast:.3g} < 1 sequence: {speedup:g}× is beyond the "
                    "latency floor at this price multiple")
    b_max = float(max_batch_that_fits(system, context))
    if b_max <= 0:
        return none(f"the weights alone do not fit in the HBM of {system.deployment.chips:g} chips")
    if b_std > b_max * (1 + 1e-9):
        return none(f"the standard batch {b_std:,.0f} does not fit in HBM (at most {b_max:,.0f} "
                    "sequences at this context)")
    fm = fast_mode_forward(system, b_std, b_fast, context)
    return FastMode(speedup, price_multiple, b_std, b_fast, bal, _over(b_std, b_star), _over(b_fast, b_star),
                    fm.t_step_standard_s, fm.t_step_fast_s, fm.usd_per_mtok_standard, fm.usd_per_mtok_fast)


def kv_bytes_from_crossover(active_params, flops, hbm_bandwidth, crossover_context):
    """KV bytes per token implied by a price tier whose step sits at `crossover_context`.

    At large batch the weight fetch is amortised; setting the KV fetch equal to matmul time,
    B·T·kv/bw = 2·B·Na/F, gives kv = 2·Na·bw / (F·T) (lecture §2.5).  The lecture's 1,667 B/token
    is this with Na = 100e9, T = 200e3 and F/bw = 600 (fp8 FLOP/s, 1-byte KV).  The answer is in
    bytes at the dtype whose FLOP/s were used.  Returns [B/token].
    """
    return 2.0 * np.asarray(active_params, float) * hbm_bandwidth / (np.asarray(flops, float)
                                                                    * np.asarray(crossover_context, float))


def decode_efficiency_from_price_ratio(output_input_ratio):
    """Decode MFU relative to prefill implied by an output/input price ratio (lecture §2.6).

    If prices track cost and prefill runs compute-bound, output tokens cost ratio× more because
    decode achieves 1/ratio of prefill's FLOP utilisation: a 5× ratio ⇒ ~1/5.
    """
    r = np.asarray(output_input_ratio, float)
    if np.any(r <= 0) or np.any(~np.isfinite(r)):
        raise ValueError("output/input price ratio must be a finite number > 0")
    return 1.0 / r


# ---------------------------------------------------------------- memory tiers for a prompt cache

@dataclass(frozen=True)
class Tier(_Spec):
    """One place a KV cache can be held: capacity, read bandwidth and rental cost of one device."""

    name: str
    capacity_bytes: float = num("B", doc="capacity of one device")
    bandwidth_bytes_per_s: float = num("B/s", doc="read bandwidth of one device")
    usd_per_hour: float = num("USD/h", doc="rental (or amortised purchase + power) cost of one device")
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def drain_s(self) -> float:
        """capacity / bandwidth: the lecture's ~20 ms (HBM), 1–10 s (DDR), ~1 min (flash), ~1 h (disk)."""
        return self.capacity_bytes / self.bandwidth_bytes_per_s


def hold_cost(tier: Tier, kv_bytes: ArrayLike, hold_s: ArrayLike) -> np.ndarray:
    """USD to keep `kv_bytes` in `tier` for `hold_s` seconds: the share of the device's capacity,
    for that long, at its rental price (lecture §2.7).  [USD]"""
    return np.asarray(kv_bytes, float) / tier.capacity_bytes * tier.usd_per_hour / 3600.0 * np.asarray(hold_s, float)


def retrieve_cost(tier: Tier, kv_bytes: ArrayLike) -> np.ndarray:
    """USD to read `kv_bytes` back: the device's time at full bandwidth, at its price (§2.7).  [USD]"""
    return np.asarray(kv_bytes, float) / tier.bandwidth_bytes_per_s * tier.usd_per_hour / 3600.0


def recompute_cost(system, tokens: ArrayLike = 1.0) -> np.ndarray:
    """USD to rebuild `tokens` tokens of KV with a compute-bound prefill: 2·Na FLOPs per token on
    chips at F, priced per chip-second (attention's quadratic part left out, as in §2.7).  [USD]"""
    return (2.0 * system.model.active_params * np.asarray(tokens, float) / system.flops
            * system.hardware.price_usd_per_hour / 3600.0)


@dataclass(frozen=True)
class TierCosts:
    hold_s: np.ndarray
    tier_usd: np.ndarray          # shape (tiers, *hold_s.shape): hold + retrieve, per token
    recompute_usd: np.ndarray     # per token, independent of hold time
    names: tuple[str, ...]        # tier names, then "recompute"
    cheapest: np.ndarray          # index into names for each hold time


def cache_tier_costs(tiers: list[Tier], kv_bytes_per_token: float, recompute_usd_per_token: float,
                     hold_s: ArrayLike) -> TierCosts:
    """Cost per token of holding a token's KV for `hold_s` in each tier (then reading it back), and
    of recomputing it instead; the cheapest option at each hold time (ties go to the faster tier)."""
    t = np.asarray(hold_s, float)
    per = np.stack([hold_cost(tr, kv_bytes_per_token, t) + retrieve_cost(tr, kv_bytes_per_token) for tr in tiers])
    rec = np.full(t.shape, float(recompute_usd_per_token))
    allc = np.concatenate([per, rec[None]], axis=0)
    return TierCosts(t, per, rec, (*(tr.name for tr in tiers), "recompute"), np.argmin(allc, axis=0))
