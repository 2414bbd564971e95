"""Economics on top of the roofline: fast mode, what API prices imply, and memory tiers for a prompt cache.

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

from .roofline import ArrayLike, System, _decode_step, combine, decode_step, max_batch_that_fits, system_balance_batch
from .specs import _Spec, choice, num


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

    # Every term of the step is linear in B (matmul, attention, KV) or constant (weights, hops), so
    # one step at B = 1 gives the per-sequence terms and the ratio needs only `combine` on them: the
    # same step time as _decode_step's, operation for operation, without its other outputs (cost,
    # HBM, bound labels) on every probe (tests/model/test_economics.py checks it against decode_step).
    unit = _decode_step(system, np.ones(1), np.asarray(context, float),
                        np.asarray(system.deployment.chips, float), 0.0)
    mm, at, w, kv, hop = (float(x[0]) for x in (unit.t_matmul_s, unit.t_attn_s, unit.t_weights_s,
                                                  unit.t_kv_s, unit.t_hops_s))
    mode = system.deployment.mode

    def step(b):
        t = combine(mm * b, at * b, w, kv * b, 0.0, mode)
        return t + hop if hop else t

    def ratio(b_fast):
        return step(lam * b_fast) / step(b_fast)

    # ratio(B) rises from 1 (both memory-bound) to ≤ λ (both compute-bound): search log10(B) in
    # [-12, 12] for the first batch where it reaches S.  Each pass evaluates 1,023 points of the
    # bracket in one vectorised call and keeps the interval where the ratio crosses S (a 1,024-way
    # bisection): six passes narrow 24 decades to ~1e-17, where 80 one-point bisection steps took
    # 80 calls (≈15 ms of a page rerun).
    lo, hi = -12.0, 12.0
    if ratio(np.array([10.0 ** hi]))[0] < speedup * (1 - 1e-12):
        return none(f"no batch gives {speedup:g}× speed at {price_multiple:g}× price on this system")
    for _ in range(8):
        pts = np.linspace(lo, hi, 1025)[1:-1]
        above = ratio(10.0 ** pts) >= speedup
        i = int(np.argmax(above)) if above.any() else len(pts)
        lo, hi = (pts[i - 1] if i > 0 else lo), (pts[i] if i < len(pts) else hi)
        if hi - lo <= 1e-15 * max(1.0, abs(hi)):
            break
    b_fast = float(10.0 ** hi)
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
#
# Lecture §2.7 (chapter 01:32:52): a cached token's KV can stay in HBM, or be parked in DDR, flash or
# disk and copied back into HBM when the prompt returns, or be thrown away and recomputed by a prefill
# pass.  Per token of KV (kv bytes) held for a time t:
#
#     hold      = kv / capacity · price · t         (the share of the device it occupies, for t)
#     retrieve  = kv / bandwidth · price            (the device's time to read it back; 0 in HBM)
#     recompute = 2·Na / F · price_chip             (a compute-bound prefill of that token)
#
# Each tier is a straight line in t; the cheapest option moves to ever cheaper-per-byte (slower) tiers
# as t grows and ends at recompute.  Within a tier, hold = retrieve at t = capacity/bandwidth, the
# tier's drain time: the lecture's rule "pick the tier whose drain time ≈ the hold time".

TIER_MEDIA = ("hbm", "dram", "flash", "disk", "other")

# The lecture's drain times (§2.7), (low, high) seconds and as said: "HBM ≈ 20 ms", "DDR ≈ 1–10 s
# ('an order of magnitude or two off')", "flash ≈ 1 minute", "spinning disk ≈ 1 hour".
LECTURE_DRAIN_S: dict[str, tuple[float, float, str]] = {
    "hbm": (0.015, 0.036, "≈ 20 ms"), "dram": (1.0, 10.0, "1–10 s"),
    "flash": (60.0, 60.0, "~1 min"), "disk": (3600.0, 3600.0, "~1 h"),
}


@dataclass(frozen=True)
class Tier(_Spec):
    """One place a KV cache can be held: capacity, read bandwidth and rental cost of one device."""

    name: str
    capacity_bytes: float = num("B", doc="capacity of one device")
    bandwidth_bytes_per_s: float = num("B/s", doc="read bandwidth of one device")
    usd_per_hour: float = num("USD/h", doc="rental (or amortised purchase + power) cost of one device")
    medium: str = choice(TIER_MEDIA, "other", doc="hbm: the accelerator's own memory (nothing to copy back)")
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def drain_s(self) -> float:
        """capacity / bandwidth: the lecture's ~20 ms (HBM), 1–10 s (DDR), ~1 min (flash), ~1 h (disk)."""
        return self.capacity_bytes / self.bandwidth_bytes_per_s

    @property
    def usd_per_byte_s(self) -> float:
        """Cost of holding one byte for one second: price / capacity.  [USD/(B·s)]"""
        return self.usd_per_hour / 3600.0 / self.capacity_bytes


def hbm_tier(hardware) -> Tier:
    """The chip's own HBM as a tier: capacity, bandwidth and the whole chip's rental price (an HBM
    byte occupies a share of the chip, compute included — lecture §2.7).  Sources carried over."""
    meta = getattr(hardware, "meta", {}) or {}
    moved = {"hbm_bytes": "capacity_bytes", "hbm_bandwidth_bytes_per_s": "bandwidth_bytes_per_s",
             "price_usd_per_hour": "usd_per_hour"}
    return Tier(f"HBM ({hardware.name})", hardware.hbm_bytes, hardware.hbm_bandwidth_bytes_per_s,
                hardware.price_usd_per_hour, "hbm", meta={new: meta[old] for old, new in moved.items() if old in meta})


def hold_cost(tier: Tier, kv_bytes: ArrayLike, hold_s: ArrayLike) -> np.ndarray:
    """USD to keep `kv_bytes` in `tier` for `hold_s` seconds: the share of the device's capacity,
    for that long, at its rental price (lecture §2.7).  [USD]"""
    return np.asarray(kv_bytes, float) / tier.capacity_bytes * tier.usd_per_hour / 3600.0 * np.asarray(hold_s, float)


def retrieve_cost(tier: Tier, kv_bytes: ArrayLike) -> np.ndarray:
    """USD to read `kv_bytes` back into HBM: the device's time at full bandwidth, at its price (§2.7).
    Zero for HBM itself ("retrieve cost ≈ 0, already in HBM": decode reads it there anyway).  [USD]"""
    if tier.medium == "hbm":
        return np.zeros_like(np.asarray(kv_bytes, float))
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
    retrieve_usd: np.ndarray = field(default_factory=lambda: np.zeros(0))     # per tier, per token
    hold_usd_per_s: np.ndarray = field(default_factory=lambda: np.zeros(0))   # per tier, per token

    @property
    def cheapest_usd(self) -> np.ndarray:
        """The cheapest option's cost per token at each hold time.  [USD]"""
        allc = np.concatenate([self.tier_usd, self.recompute_usd[None]], axis=0)
        return np.min(allc, axis=0)

    @property
    def cheapest_tier(self) -> np.ndarray:
        """Index of the cheapest *tier* (recompute left out) at each hold time: where a cache hit's KV
        would be held."""
        return np.argmin(self.tier_usd, axis=0)


def cache_tier_costs(tiers: list[Tier], kv_bytes_per_token: float, recompute_usd_per_token: float,
                     hold_s: ArrayLike) -> TierCosts:
    """Cost per token of holding a token's KV for `hold_s` in each tier (then reading it back), and
    of recomputing it instead; the cheapest option at each hold time (ties go to the faster tier)."""
    if not tiers:
        raise ValueError("at least one memory tier is needed")
    kv = float(kv_bytes_per_token)
    if not (np.isfinite(kv) and kv > 0):
        raise ValueError(f"KV bytes per token must be a finite number > 0, got {kv_bytes_per_token!r}")
    rec_usd = float(recompute_usd_per_token)
    if not (np.isfinite(rec_usd) and rec_usd >= 0):
        raise ValueError(f"recompute cost per token must be a finite number ≥ 0, got {recompute_usd_per_token!r}")
    t = np.asarray(hold_s, float)
    if np.any(~np.isfinite(t)) or np.any(t < 0):
        raise ValueError("hold times must be finite and ≥ 0 seconds")
    retrieve = np.array([float(retrieve_cost(tr, kv)) for tr in tiers])
    rate = np.array([kv * tr.usd_per_byte_s for tr in tiers])
    per = retrieve.reshape((-1,) + (1,) * t.ndim) + rate.reshape((-1,) + (1,) * t.ndim) * t[None]
    rec = np.full(t.shape, rec_usd)
    allc = np.concatenate([per, rec[None]], axis=0)
    return TierCosts(t, per, rec, (*(tr.name for tr in tiers), "recompute"), np.argmin(allc, axis=0),
                     retrieve, rate)


@dataclass(frozen=True)
class Envelope:
    """The cheapest option over all hold times t > 0: `order` lists option indices (tiers, then
    recompute = len(tiers)) in the order they become cheapest; `switch_s[i]` is the hold time where
    `order[i]` hands over to `order[i + 1]`.  [s]"""

    order: tuple[int, ...]
    switch_s: tuple[float, ...]


def cheapest_envelope(costs: TierCosts) -> Envelope:
    """Exact hand-over hold times of the cheapest option (straight lines a + b·t, recompute b = 0).

    From t = 0 (ties: the flatter line, then the faster tier) follow the current line until the
    first flatter line crosses below it: t× = (a_j − a_i) / (b_i − b_j).  A loop over options,
    at most one step per option (slopes only fall), not over points.
    """
    a = np.append(costs.retrieve_usd, costs.recompute_usd.flat[0] if costs.recompute_usd.size else 0.0)
    b = np.append(costs.hold_usd_per_s, 0.0)
    n = len(a)
    i = min(range(n), key=lambda k: (a[k], b[k], k))
    order, switch = [i], []
    t = 0.0
    while True:
        flatter = [j for j in range(n) if b[j] < b[i]]
        if not flatter:
            break
        cross = {j: max(t, (a[j] - a[i]) / (b[i] - b[j])) for j in flatter}
        t_next = min(cross.values())
        # Among lines meeting at t_next the flattest wins from there on (ties: the faster tier).
        j = min((k for k in flatter if cross[k] <= t_next * (1 + 1e-12) + 1e-300), key=lambda k: (b[k], k))
        switch.append(float(t_next))
        order.append(j)
        i, t = j, t_next
    return Envelope(tuple(order), tuple(switch))


@dataclass(frozen=True)
class CachedRequest:
    usd_prefill: np.ndarray   # the uncached part of the prompt (and reading the cached prefix from HBM)
    usd_decode: np.ndarray
    usd_cache: np.ndarray     # holding the cached prefix for the hold time, then reading it back
    usd_total: np.ndarray


def request_with_cache(system: System, prompt_tokens: float, output_tokens: float, cache_hit_rate: ArrayLike,
                       cache_usd_per_token: float, *, batch: float = 1.0,
                       prefill_batch: float | None = None) -> CachedRequest:
    """Cost of one request whose prompt is a fraction h in a prefix cache (roofline.request), plus
    h·L tokens of KV held and read back at `cache_usd_per_token` (a tier's hold + retrieve).  Decode
    runs at `batch`; prefill passes batch `prefill_batch` prompts (default: the same batch).  [USD]"""
    from .roofline import request
    h = np.asarray(cache_hit_rate, float)
    r = request(system, prompt_tokens, output_tokens, batch=batch,
                prefill_batch=batch if prefill_batch is None else prefill_batch, cache_hit_rate=h)
    cache = h * float(prompt_tokens) * float(cache_usd_per_token)
    usd_pre = np.broadcast_to(r.usd_prefill, h.shape).astype(float)
    usd_dec = np.broadcast_to(r.usd_decode, h.shape).astype(float)
    return CachedRequest(usd_pre, usd_dec, cache, usd_pre + usd_dec + cache)


def list_price_request(offer, prompt_tokens: float, output_tokens: float, cache_hit_rate: ArrayLike) -> np.ndarray:
    """What a provider bills for one request at its list prices [USD]: the uncached prompt at the
    input price, the hits at the cache-read price (input when none is listed), the output at the
    output price.  Cache-write premiums and storage fees are left out."""
    h = np.asarray(cache_hit_rate, float)
    read = offer.cache_read_usd_per_mtok if offer.cache_read_usd_per_mtok is not None else offer.input_usd_per_mtok
    L, O = float(prompt_tokens), float(output_tokens)
    return ((1.0 - h) * L * offer.input_usd_per_mtok + h * L * read + O * offer.output_usd_per_mtok) / 1e6


TTL_5M_S, TTL_1H_S = 300.0, 3600.0   # Anthropic's cache lifetimes (5 min default, 1 h opt-in); Gemini's default 1 h


def list_cache_usd_per_mtok(offer, hold_s: ArrayLike) -> tuple[np.ndarray, str]:
    """What a provider charges per million tokens to keep a prompt cached for `hold_s` and read it
    once, and how that was read off its price list:

      write premiums (Anthropic): (write_5m − input) + read up to 5 min, (write_1h − input) + read up
                                  to 1 h, NaN beyond (no such lifetime is sold);
      storage (Gemini):           read + storage per Mtok-hour · t / 3600;
      otherwise (OpenAI, DeepSeek): the cache-read price (the lifetime is not priced).
    NaN everywhere when the offer lists no cache price.  [USD/Mtok]
    """
    t = np.asarray(hold_s, float)
    read = offer.cache_read_usd_per_mtok
    if read is None:
        return np.full(t.shape, np.nan), "no cache price listed"
    w5, w1 = offer.cache_write_5m_usd_per_mtok, offer.cache_write_1h_usd_per_mtok
    if w5 is not None or w1 is not None:
        p5 = np.nan if w5 is None else w5 - offer.input_usd_per_mtok + read
        p1 = np.nan if w1 is None else w1 - offer.input_usd_per_mtok + read
        return (np.where(t <= TTL_5M_S, p5, np.where(t <= TTL_1H_S, p1, np.nan)),
                "write premium over input + cache read (5-min and 1-h lifetimes)")
    if offer.cache_storage_usd_per_mtok_hour is not None:
        return read + offer.cache_storage_usd_per_mtok_hour * t / 3600.0, "cache read + storage per hour"
    return np.full(t.shape, float(read)), "cache read (lifetime not priced)"


def neighbour_handover_s(costs: TierCosts) -> np.ndarray:
    """Hold time at which each option hands over to the next one in the given order (tiers as listed,
    then recompute): option i costs aᵢ + bᵢ·t per token (aᵢ the read-back, bᵢ the hold rate; recompute
    a = its cost, b = 0), so the next option j is cheaper for t above

        t× = (aⱼ − aᵢ) / (bᵢ − bⱼ)      [s]   (lecture §2.7's straight lines, crossed pair by pair)

    kv cancels: with a = kv·p/bw (0 for HBM) and b = kv·p/cap the crossing depends on the devices only.
    0 where j is already cheaper at t = 0; +inf where j never gets cheaper (bⱼ ≥ bᵢ and aⱼ > aᵢ).
    Unlike `cheapest_envelope` this crosses every neighbouring pair, including a tier the envelope skips.
    Returns one hold time per neighbouring pair (len(tiers) values).  [s]
    """
    a = np.append(costs.retrieve_usd, costs.recompute_usd.flat[0] if costs.recompute_usd.size else 0.0)
    b = np.append(costs.hold_usd_per_s, 0.0)
    da, db = a[1:] - a[:-1], b[:-1] - b[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(db > 0, da / db, np.where(da > 0, np.inf, 0.0))
    return np.maximum(t, 0.0)
