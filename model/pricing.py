"""What API prices reveal about serving (lecture §2.4–2.7; 01:32:52 "deducing long-context memory
costs from API pricing").

If a price tracks the provider's cost (else a competitor undercuts it, §2.5), its structure reads
out the roofline:

  output / input price  r          → decode MFU ≈ 1/r of prefill's              (§2.6: 5× ⇒ 1/5)
  long-context tier at T×          → kv = 2·Na / ((F/bw) · f · T×)               (§2.5: 1,667 B/token)
  cached-input discount            → reading KV back is ~10× cheaper than recomputing it  (§2.7)
  fast mode: S× speed for Pm× price → B_std/B* = S, B_fast/B* = 1/Pm (no KV)     (§2.4; docs/design.md "Closed forms")

Notation as in model/roofline.py: Na active params, F FLOP/s (1 FLOP = 1 multiply or 1 add),
bw HBM bytes/s, F/bw the chip's FLOP per byte, f the fraction of the context attention reads
(1 = dense).  Prices in USD per million tokens.  Every function broadcasts numpy arrays; a missing
price (None or NaN) gives NaN, never an exception, so a whole table is one call per column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .economics import decode_efficiency_from_price_ratio, kv_bytes_from_crossover
from .presets import PriceOffer, Sourced

ArrayLike = object

LECTURE_OUTPUT_INPUT_BAND = (3.0, 5.0)   # "output tokens 3–5× more expensive than input" (§2.6)
LECTURE_CACHE_DISCOUNT = 10.0            # "cache hits ~10× cheaper" (§2.7)


def _arr(x: ArrayLike) -> np.ndarray:
    """Prices as a float array; None → NaN (a price the preset does not give)."""
    if x is None:
        return np.array(np.nan)
    if isinstance(x, (list, tuple)):
        return np.array([np.nan if v is None else v for v in x], float)
    return np.asarray(x, float)


def price_ratio(numerator_usd: ArrayLike, denominator_usd: ArrayLike) -> np.ndarray:
    """numerator ÷ denominator price [×]; NaN where either is missing or not > 0."""
    a, b = _arr(numerator_usd), _arr(denominator_usd)
    ok = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, a / np.where(ok, b, 1.0), np.nan)


def decode_efficiency(output_input_ratio: ArrayLike) -> np.ndarray:
    """Decode MFU relative to prefill implied by output/input price ratios (§2.6), NaN-tolerant.

    η_decode / η_prefill ≈ 1 / r — economics.decode_efficiency_from_price_ratio on the valid entries.
    Returns [-] (0…∞; > 1 would mean decode is cheaper per token than prefill).
    """
    r = _arr(output_input_ratio)
    ok = np.isfinite(r) & (r > 0)
    out = np.full(r.shape, np.nan)
    if np.any(ok):
        out[ok] = decode_efficiency_from_price_ratio(r[ok])
    return out if out.ndim else out[()]


def cache_discount(input_usd_per_mtok: ArrayLike, cache_read_usd_per_mtok: ArrayLike) -> np.ndarray:
    """How many times cheaper a cache hit is than fresh input: input ÷ cache read [×] (§2.7).

    A fresh input token is a prefill (recompute the KV); a hit reads the stored KV back.  If prices
    track cost, this is recompute cost ÷ (hold + reload) cost.  Anthropic $5 vs $0.50 → 10×.
    """
    return price_ratio(input_usd_per_mtok, cache_read_usd_per_mtok)


def implied_kv_bytes(active_params: ArrayLike, flops_per_byte: ArrayLike, crossover_context: ArrayLike,
                     read_fraction: ArrayLike = 1.0) -> np.ndarray:
    """KV bytes per token (stored) implied by a price tier that starts at context T× (§2.5).

    At large batch the weight fetch is amortised; KV fetch = matmul time at T×:
        B·f·T×·kv/bw = 2·B·Na/F   ⇒   kv = 2·Na / ((F/bw) · f · T×)
    economics.kv_bytes_from_crossover with F = F/bw, bw = 1 and T = f·T× (sparse attention that
    reads a fraction f of the context makes the stored KV 1/f bigger: "multiply by 1/sparsity").
    The bytes are real bytes: at F/bw = 600 (fp8 FLOP/s) and 1-byte KV this is the lecture's 1,667.

    active_params [-]; flops_per_byte [FLOP/B]; crossover_context [tokens]; read_fraction [-] (0, 1].
    Returns [B/token]; NaN where the context is missing or not > 0.
    """
    t = _arr(crossover_context) * _arr(read_fraction)
    ok = np.isfinite(t) & (t > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        kv = kv_bytes_from_crossover(active_params, flops_per_byte, 1.0, np.where(ok, t, 1.0))
    return np.where(ok, kv, np.nan)


def kv_bytes_architecture(head_dim: ArrayLike, kv_heads: ArrayLike, kv_layers: ArrayLike,
                          bytes_per_element: ArrayLike) -> np.ndarray:
    """The lecture's cross-check: KV bytes per token = layers × 2 (K and V) × d_head × kv_heads × bytes.

    Character.AI / Gemma-style global KV shared across layers: 1 × 2 × 128 × 8 × 1 B = 2,048 B (§2.5).
    Returns [B/token].
    """
    return (np.asarray(kv_layers, float) * 2.0 * np.asarray(head_dim, float) * np.asarray(kv_heads, float)
            * np.asarray(bytes_per_element, float))


def recompute_over_reload(active_params: ArrayLike, flops_per_byte: ArrayLike,
                          kv_bytes_per_token: ArrayLike) -> np.ndarray:
    """Roofline time to recompute one token's KV ÷ time to read it back from HBM, on one chip [×].

    Recompute: a compute-bound prefill, 2·Na FLOPs at F.  Reload: kv bytes at bw.
        (2·Na/F) / (kv/bw) = 2·Na / ((F/bw) · kv)
    With the kv a price tier implies this is exactly its T× (reading T× tokens of KV costs one
    token's compute) — 10⁵ or so, far above the ~10× cache discount: what a cache hit is charged
    for is mostly *holding* the KV (capacity × time; the Memory tiers page), not reading it.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * np.asarray(active_params, float) / (np.asarray(flops_per_byte, float)
                                                         * np.asarray(kv_bytes_per_token, float))


def context_cost_multiple(context: ArrayLike, active_params: ArrayLike, flops_per_byte: ArrayLike,
                          kv_bytes_per_token: ArrayLike, read_fraction: ArrayLike = 1.0) -> np.ndarray:
    """Cost per token at context T ÷ cost at short context, at large batch (lecture mode, §2.5 sketch).

    Weights amortised: t/B = max(2·Na/F, f·T·kv/bw) ⇒ multiple = max(1, f·T·kv·(F/bw) / (2·Na)):
    flat (compute-bound) up to the crossover T× = 2·Na/((F/bw)·f·kv), then linear in T.  [×]
    """
    x = (_arr(read_fraction) * _arr(context) * _arr(kv_bytes_per_token) * _arr(flops_per_byte)
         / (2.0 * _arr(active_params)))
    return np.maximum(1.0, x)


def tier_price_multiple(context: ArrayLike, threshold_tokens: ArrayLike, jump: ArrayLike) -> np.ndarray:
    """A tiered price ÷ its base price at context T: 1 up to the threshold, `jump` above it [×].

    (Gemini 2.5 Pro, Mar 2026: input $1.25 → $2.50 above 200k, a jump of 2×.)"""
    T = _arr(context)
    return np.where(T > _arr(threshold_tokens), _arr(jump), 1.0)


def crossover_context(active_params: ArrayLike, flops_per_byte: ArrayLike, kv_bytes_per_token: ArrayLike,
                      read_fraction: ArrayLike = 1.0) -> np.ndarray:
    """T× = 2·Na / ((F/bw) · f · kv): the context where KV fetch equals matmul time [tokens]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * _arr(active_params) / (_arr(flops_per_byte) * _arr(read_fraction) * _arr(kv_bytes_per_token))


def fast_batch_multiples(speedup: ArrayLike, price_multiple: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Standard and fast batches as multiples of the balance batch B*, no KV (lecture §2.4;
    docs/design.md "Closed forms").

    Above B* cost/token is flat and speed ∝ 1/B; below it speed is flat at the latency floor and
    cost ∝ 1/B.  So B_std = S·B* and B_fast = B*/Pm (6× price for 2.5× speed: 2.5·B* and B*/6).
    Returns (B_std/B*, B_fast/B*) [×]; NaN where S ≤ 1 or Pm ≤ 1 (not a fast mode) or missing.
    """
    s, p = _arr(speedup), _arr(price_multiple)
    ok = np.isfinite(s) & np.isfinite(p) & (s > 1) & (p > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, s, np.nan), np.where(ok, 1.0 / np.where(ok, p, 1.0), np.nan)


# ---------------------------------------------------------------- the providers table

# Which price fields each implied quantity reads (provenance for the UI).
USES: dict[str, tuple[str, ...]] = {
    "decode": ("input_usd_per_mtok", "output_usd_per_mtok"),
    "cache": ("input_usd_per_mtok", "cache_read_usd_per_mtok"),
    "kv": ("long_context_threshold_tokens",),
    "jump": ("input_usd_per_mtok", "output_usd_per_mtok", "long_context_input_usd_per_mtok",
             "long_context_output_usd_per_mtok"),
    "fast": ("output_usd_per_mtok", "fast_output_usd_per_mtok", "fast_speedup"),
}


@dataclass(frozen=True)
class PriceTable:
    """One row per price preset; every column an array (NaN where the preset lacks the price)."""

    keys: tuple[str, ...]
    input_usd_per_mtok: np.ndarray
    output_usd_per_mtok: np.ndarray
    cache_read_usd_per_mtok: np.ndarray
    cache_write_5m_over_input: np.ndarray        # [×]
    cache_write_1h_over_input: np.ndarray        # [×]
    output_input_ratio: np.ndarray               # [×]
    decode_efficiency: np.ndarray                # [-] decode MFU / prefill MFU
    cache_discount: np.ndarray                   # [×] input / cache read
    long_context_threshold_tokens: np.ndarray    # [tokens]
    long_input_jump: np.ndarray                  # [×] above-threshold input / base input
    long_output_jump: np.ndarray                 # [×]
    implied_kv_bytes_per_token: np.ndarray       # [B/token] at the assumption dials
    fast_price_multiple: np.ndarray              # [×] fast output / output
    fast_speedup: np.ndarray                     # [×]
    fast_batch_standard_over_balance: np.ndarray
    fast_batch_fast_over_balance: np.ndarray
    uncertain: tuple[tuple[str, ...], ...]       # per row: the implied quantities (USES keys) on an uncertain price

    def __len__(self) -> int:
        return len(self.keys)


def price_table(offers: Mapping[str, PriceOffer], active_params: float, flops_per_byte: float,
                read_fraction: float = 1.0) -> PriceTable:
    """Every implied quantity for every price preset, one vectorised call per column."""
    keys = tuple(offers)
    ps: Sequence[PriceOffer] = [offers[k] for k in keys]

    def col(name: str) -> np.ndarray:
        return _arr([getattr(p, name) for p in ps]) if ps else np.zeros(0)

    inp, out = col("input_usd_per_mtok"), col("output_usd_per_mtok")
    ratio = price_ratio(out, inp)
    thr = col("long_context_threshold_tokens")
    std, fast = fast_batch_multiples(col("fast_speedup"), price_ratio(col("fast_output_usd_per_mtok"), out))
    unc = tuple(tuple(q for q, fs in USES.items() if any(f in uncertain_price_fields(p) for f in fs)
                      and _has(p, fs)) for p in ps)
    return PriceTable(
        keys=keys, input_usd_per_mtok=inp, output_usd_per_mtok=out,
        cache_read_usd_per_mtok=col("cache_read_usd_per_mtok"),
        cache_write_5m_over_input=price_ratio(col("cache_write_5m_usd_per_mtok"), inp),
        cache_write_1h_over_input=price_ratio(col("cache_write_1h_usd_per_mtok"), inp),
        output_input_ratio=ratio, decode_efficiency=decode_efficiency(ratio),
        cache_discount=cache_discount(inp, col("cache_read_usd_per_mtok")),
        long_context_threshold_tokens=thr,
        long_input_jump=price_ratio(col("long_context_input_usd_per_mtok"), inp),
        long_output_jump=price_ratio(col("long_context_output_usd_per_mtok"), out),
        implied_kv_bytes_per_token=implied_kv_bytes(active_params, flops_per_byte, thr, read_fraction),
        fast_price_multiple=price_ratio(col("fast_output_usd_per_mtok"), out), fast_speedup=col("fast_speedup"),
        fast_batch_standard_over_balance=std, fast_batch_fast_over_balance=fast, uncertain=unc)


def _has(p: PriceOffer, fields: Sequence[str]) -> bool:
    return all(getattr(p, f) is not None for f in fields)


def uncertain_price_fields(p: PriceOffer) -> list[str]:
    """The fields of a price preset whose figure is flagged uncertain."""
    return [k for k, m in (p.meta or {}).items() if m.uncertain]


def provenance(p: PriceOffer, fields: Sequence[str]) -> list[tuple[str, Sourced | None]]:
    """(field, where its number came from) for each field a figure used; None when unrecorded."""
    meta = p.meta or {}
    return [(f, meta.get(f)) for f in fields]
