"""model/pricing.py: what API prices imply, against values derived by hand from the lecture (§2.4–2.7)."""

import numpy as np
import pytest

from model import Deployment, System, economics, presets, pricing
from model.presets import PriceOffer, Sourced
from model.roofline import KVLayout
from tests.cli.helpers import run_json

# ---------------------------------------------------------------- §2.6 output / input → decode efficiency

def test_decode_efficiency_one_fifth_from_a_five_times_ratio():
    # Lecture §2.6, flashcard "API pricing 4": output 5× input ⇒ decode MFU ≈ 1/5 of prefill's.
    r = pricing.price_ratio(25.0, 5.0)                      # Opus: $25 out / $5 in
    assert r == pytest.approx(5.0)
    assert pricing.decode_efficiency(r) == pytest.approx(0.2)
    # 3× (the low end of the lecture's 3–5×) ⇒ 1/3; agrees with economics' scalar function.
    assert pricing.decode_efficiency([3.0, 5.0]) == pytest.approx([1 / 3, 1 / 5])
    assert economics.decode_efficiency_from_price_ratio(4.0) == pytest.approx(pricing.decode_efficiency(4.0))


def test_missing_or_bad_prices_give_nan_not_an_exception():
    r = pricing.price_ratio([10.0, None, 3.0, 4.0], [2.0, 1.0, 0.0, np.nan])
    assert r[0] == pytest.approx(5.0) and np.all(np.isnan(r[1:]))
    eff = pricing.decode_efficiency([5.0, None, -1.0, np.inf])
    assert eff[0] == pytest.approx(0.2) and np.all(np.isnan(eff[1:]))
    assert np.isnan(pricing.decode_efficiency(None))
    assert np.isnan(pricing.cache_discount(5.0, None))


# ---------------------------------------------------------------- §2.5 long-context tier → KV bytes per token

def test_the_lectures_1667_bytes_per_token():
    # Lecture §2.5: (mem_bw/FLOPs) · N_active / len_ctx = (1/300) · 100e9 / 200e3 = 1,666.7 B ("almost two
    # kilobytes").  Counted in FLOPs (2 per multiply-add) the chip's 300 multiplies/B is 600 FLOP/B:
    # 2 · 100e9 / (600 · 200e3) = 2e11 / 1.2e8 = 1,666.67.
    assert pricing.implied_kv_bytes(100e9, 600.0, 200e3) == pytest.approx(1e11 / (300 * 2e5))
    assert pricing.implied_kv_bytes(100e9, 600.0, 200e3) == pytest.approx(1666.6667, rel=1e-6)
    # bf16 FLOP/s (≈ 300 FLOP/B) read 2-byte KV: the same 1,667 elements are 3,333 bytes
    # (docs/design.md "Closed forms").
    assert pricing.implied_kv_bytes(100e9, 300.0, 200e3) == pytest.approx(3333.333, rel=1e-6)
    # Sparse attention reading a tenth of the context: the stored KV is 10× bigger ("multiply by 1/sparsity").
    assert pricing.implied_kv_bytes(100e9, 600.0, 200e3, 0.1) == pytest.approx(16666.67, rel=1e-6)
    # Vectorised over contexts; a missing threshold is NaN.
    kv = pricing.implied_kv_bytes(100e9, 600.0, [100e3, 200e3, None])
    assert kv[:2] == pytest.approx([3333.333, 1666.667], rel=1e-6) and np.isnan(kv[2])


def test_implied_kv_agrees_with_the_cli(capsys):
    # The README's command for the lecture's number, and the page's function with the same inputs.
    out = run_json(capsys, "kv-from-price", "--flops", "4.8e15", "--compute-dtype", "fp8", "--hbm-bw", "8e12",
                   "--total-params", "1e12", "--active-params", "100e9", "--crossover-context", "200e3")
    assert out["flops_per_byte"] == pytest.approx(600.0)
    assert out["kv_bytes_per_token"] == pytest.approx(float(pricing.implied_kv_bytes(100e9, 4.8e15 / 8e12, 200e3)))
    assert out["kv_bytes_per_token"] == pytest.approx(1666.667, rel=1e-6)


def test_architecture_cross_check_2048_and_llama():
    # Lecture §2.5: one shared KV layer × 2 (K, V) × d_head 128 × 8 KV heads × 1 byte = 2,048 B.
    assert pricing.kv_bytes_architecture(128, 8, 1, 1.0) == 2048.0
    # Llama 3.1 70B at bf16: 80 layers × 2 × 128 × 8 × 2 B = 327,680 B — the roofline's KVLayout agrees.
    assert pricing.kv_bytes_architecture(128, 8, 80, 2.0) == 327_680.0


def test_architecture_matches_the_roofline_kv_layout(llama70):
    assert KVLayout.from_model(llama70, 2.0).bytes_per_token == pricing.kv_bytes_architecture(
        llama70.head_dim, llama70.n_kv_heads, llama70.n_layers, 2.0)


def test_crossover_and_cost_multiple_by_hand():
    # T× = 2·Na / ((F/bw)·f·kv): 2e11 / (600 · 2048) = 162,760.4 tokens for the architecture's 2,048 B.
    assert pricing.crossover_context(100e9, 600.0, 2048.0) == pytest.approx(2e11 / (600 * 2048))
    assert pricing.crossover_context(100e9, 600.0, 2048.0, 0.5) == pytest.approx(2 * 2e11 / (600 * 2048))
    # With the implied kv the crossover is the tier's threshold again (the inversion round-trips).
    kv = pricing.implied_kv_bytes(100e9, 600.0, 200e3)
    assert pricing.crossover_context(100e9, 600.0, kv) == pytest.approx(200e3)
    # Cost multiple: flat at 1 up to T×, then T/T×: 2 at 400k, 50 at 10M.
    m = pricing.context_cost_multiple(np.array([1e3, 200e3, 400e3, 10e6]), 100e9, 600.0, kv)
    assert m == pytest.approx([1.0, 1.0, 2.0, 50.0])
    # Reading half the context halves the slope: 1 at 400k.
    assert pricing.context_cost_multiple(400e3, 100e9, 600.0, kv, 0.5) == pytest.approx(1.0)


def test_tier_price_multiple_steps_above_the_threshold():
    # Gemini 2.5 Pro: input $1.25 → $2.50 above 200k = 2×; at exactly 200k still the base price.
    m = pricing.tier_price_multiple(np.array([100e3, 200e3, 200_001.0, 1e6]), 200e3, 2.0)
    assert list(m) == [1.0, 1.0, 2.0, 2.0]


# ---------------------------------------------------------------- §2.7 cache hits

def test_cache_discount_ten_times():
    # Lecture §2.7: base input $5, cache hit ~10× cheaper ($0.50, Anthropic).  DeepSeek R1 (Feb 2025):
    # $0.55 miss vs $0.14 hit = 3.93×.
    assert pricing.cache_discount(5.0, 0.5) == pytest.approx(10.0)
    assert pricing.cache_discount([5.0, 0.55], [0.5, 0.14]) == pytest.approx([10.0, 0.55 / 0.14])


def test_recompute_over_reload_by_hand():
    # Recompute one token: 2·Na FLOPs at F; reload: kv bytes at bw.  Ratio 2·Na/((F/bw)·kv):
    # 2e11 / (600 · 2048) = 162,760 for the lecture's numbers.
    assert pricing.recompute_over_reload(100e9, 600.0, 2048.0) == pytest.approx(162_760.4, rel=1e-6)
    # With the kv a tier implies, the ratio is exactly the tier's context.
    kv = pricing.implied_kv_bytes(100e9, 600.0, 200e3)
    assert pricing.recompute_over_reload(100e9, 600.0, kv) == pytest.approx(200e3)


# ---------------------------------------------------------------- §2.4 fast mode

def test_fast_batch_multiples_closed_form():
    # docs/design.md "Closed forms": 6× price for 2.5× speed ⇒ B_std = 2.5·B*, B_fast = B*/6.
    std, fast = pricing.fast_batch_multiples(2.5, 6.0)
    assert std == pytest.approx(2.5) and fast == pytest.approx(1 / 6)
    # Not a fast mode (S ≤ 1 or Pm ≤ 1) or missing → NaN.
    std, fast = pricing.fast_batch_multiples([2.5, 1.0, 2.0, None], [2.0, 6.0, 1.0, 3.0])
    assert std[0] == 2.5 and fast[0] == 0.5
    assert np.all(np.isnan(std[1:])) and np.all(np.isnan(fast[1:]))


def test_fast_batch_multiples_agree_with_the_solver(lecture_gpu, lecture_deepseek):
    # economics.fast_mode_batches solves numerically; with no KV it lands on the closed form.
    fm = economics.fast_mode_batches(System(lecture_gpu, lecture_deepseek, deployment=Deployment(chips=72)),
                                     2.5, 6.0, context=0)
    std, fast = pricing.fast_batch_multiples(2.5, 6.0)
    assert fm.batch_standard_over_balance == pytest.approx(float(std), rel=1e-9)
    assert fm.batch_fast_over_balance == pytest.approx(float(fast), rel=1e-9)


# ---------------------------------------------------------------- the providers table

def _offer(name, unc=(), **prices):
    o = PriceOffer(name=name, provider="P", model=name, **prices)
    meta = {k: Sourced("test.example/pricing", "2026-01", k in unc) for k, v in prices.items() if v is not None}
    object.__setattr__(o, "meta", meta)
    return o


def test_price_table_by_hand():
    offers = {
        "a": _offer("a", input_usd_per_mtok=5, output_usd_per_mtok=25, cache_read_usd_per_mtok=0.5,
                    cache_write_5m_usd_per_mtok=6.25, cache_write_1h_usd_per_mtok=10,
                    long_context_threshold_tokens=200e3, long_context_input_usd_per_mtok=10,
                    long_context_output_usd_per_mtok=37.5, fast_output_usd_per_mtok=150, fast_speedup=2.5,
                    unc=("long_context_threshold_tokens",)),
        "b": _offer("b", input_usd_per_mtok=2, output_usd_per_mtok=8, cache_read_usd_per_mtok=0.5,
                    unc=("cache_read_usd_per_mtok",)),
        "c": _offer("c", input_usd_per_mtok=0.28, output_usd_per_mtok=0.42),
    }
    t = pricing.price_table(offers, 100e9, 600.0)
    assert t.keys == ("a", "b", "c") and len(t) == 3
    assert t.output_input_ratio == pytest.approx([5.0, 4.0, 1.5])
    assert t.decode_efficiency == pytest.approx([0.2, 0.25, 1 / 1.5])
    assert t.cache_discount[:2] == pytest.approx([10.0, 4.0]) and np.isnan(t.cache_discount[2])
    assert t.cache_write_5m_over_input[0] == pytest.approx(1.25) and t.cache_write_1h_over_input[0] == 2.0
    assert t.long_input_jump[0] == pytest.approx(2.0) and t.long_output_jump[0] == pytest.approx(1.5)
    assert t.implied_kv_bytes_per_token[0] == pytest.approx(1666.667, rel=1e-6)
    assert np.all(np.isnan(t.implied_kv_bytes_per_token[1:]))
    assert t.fast_price_multiple[0] == pytest.approx(6.0) and np.isnan(t.fast_price_multiple[1])
    assert t.fast_batch_standard_over_balance[0] == 2.5
    assert t.fast_batch_fast_over_balance[0] == pytest.approx(1 / 6)
    # Uncertainty follows the price each reading used: a's threshold → kv; b's cache price → cache.
    assert t.uncertain == (("kv",), ("cache",), ())
    # The dials move the implied KV: twice the active params, twice the bytes; half the read, twice again.
    t2 = pricing.price_table(offers, 200e9, 600.0, 0.5)
    assert t2.implied_kv_bytes_per_token[0] == pytest.approx(4 * 1666.667, rel=1e-6)


def test_price_table_on_the_presets():
    offers = presets.price_presets()
    t = pricing.price_table(offers, 100e9, 600.0)
    assert len(t) == len(offers)
    i = t.keys.index("claude-opus-4.6")             # $5 / $25, hit $0.50, fast $150 (presets/prices.yaml)
    assert t.output_input_ratio[i] == 5.0 and t.cache_discount[i] == pytest.approx(10.0)
    assert t.fast_price_multiple[i] == 6.0
    assert "kv" in t.uncertain[i]                   # its above-200k tier is flagged uncertain
    # Every preset has an output/input ratio; only those with a tier have an implied KV.
    assert np.all(np.isfinite(t.output_input_ratio))
    assert np.array_equal(np.isfinite(t.implied_kv_bytes_per_token),
                          [p.long_context_threshold_tokens is not None for p in offers.values()])


def test_provenance_names_date_source_and_uncertainty():
    p = presets.price_presets()["gemini-3-pro"]
    got = dict(pricing.provenance(p, ("input_usd_per_mtok", "long_context_input_usd_per_mtok")))
    assert got["input_usd_per_mtok"].date == "2026-02-04" and got["input_usd_per_mtok"].source
    assert got["long_context_input_usd_per_mtok"].uncertain
    assert "long_context_input_usd_per_mtok" in pricing.uncertain_price_fields(p)
