"""model/roofline.py against values derived by hand from the formulas and the lecture."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from model import (
    Deployment,
    Hardware,
    KVLayout,
    ModelArch,
    Precision,
    System,
    auto_chips,
    balance_batch,
    context_never_compute_bound,
    decode_step,
    hbm_drain_time,
    kv_crossover_context,
    max_batch_that_fits,
    prefill,
    presets,
    request,
    system_balance_batch,
)
from model.roofline import bound_of, combine, read_tokens


def test_a_dense_models_balance_batch_on_h100_is_its_flops_per_byte_295(h100, llama70):
    # Scaling book / lecture §2.1: H100 989e12 bf16 FLOP/s ÷ 3.35e12 B/s ≈ 295.  A dense model with weights
    # and FLOP/s at one precision (bf16) has B* = (F/bw) × (total/active) = F/bw.
    assert float(system_balance_batch(System(h100, llama70))) == pytest.approx(295.22, abs=0.01)
    assert float(balance_batch(989e12, 3.35e12, 2 * 70.6e9, 70.6e9)) == pytest.approx(295.22, abs=0.01)


def test_balance_batch_is_300_times_sparsity(lecture_gpu, lecture_deepseek):
    # Lecture §2.2 / flashcard 8: B* = (F/bw) · (total/active) = 300 · 8 = 2,400.
    s = System(lecture_gpu, lecture_deepseek)
    assert float(system_balance_batch(s)) == pytest.approx(2400.0)
    # fp8 weights with fp8 FLOP/s: same precision convention, same answer.
    s8 = System(lecture_gpu, lecture_deepseek, Precision(weights="fp8", kv="fp8", compute="fp8"))
    assert float(system_balance_batch(s8)) == pytest.approx(2400.0)


def test_balance_batch_h100_deepseek_lecture_numbers(h100, lecture_deepseek):
    # 989/3.35 · 8 = 2361.8 (the lecture rounds F/bw to 300).
    assert float(system_balance_batch(System(h100, lecture_deepseek))) == pytest.approx(989 / 3.35 * 8)


def test_balance_batch_equalises_matmul_and_weights(sys70):
    b = float(system_balance_batch(sys70))
    r = decode_step(sys70, b, 0)
    assert_allclose(r.t_matmul_s, r.t_weights_s, rtol=1e-12)


def test_kv_bytes_per_token_against_published_configs(llama70, deepseek):
    # Llama 3.1 70B GQA: 2 (K,V) · 80 layers · 8 KV heads · 128 · 2 B = 327,680 B.
    assert KVLayout.from_model(llama70, 2.0).bytes_per_token == 327_680
    # DeepSeek-V3 MLA: 61 layers · (512 + 64) · 2 B = 70,272 B; fp8 cache halves it.
    assert KVLayout.from_model(deepseek, 2.0).bytes_per_token == 70_272
    assert KVLayout.from_model(deepseek, 1.0).bytes_per_token == 35_136


def test_windowed_layers_stop_growing():
    # gpt-oss-120b shape: 36 layers, half sliding-128; per layer 2·8·64·2 = 2,048 B.
    m = ModelArch(name="oss", total_params=116.8e9, active_params=5.1e9, n_layers=36, d_model=2880,
                  n_heads=64, n_kv_heads=8, head_dim=64, n_window_layers=18, window_tokens=128)
    kv = KVLayout.from_model(m, 2.0)
    assert kv.bytes_per_token == 73_728                     # all 36 layers within the window
    assert float(kv.stored_bytes(100)) == 73_728 * 100
    assert float(kv.stored_bytes(10_000)) == 36_864 * 10_000 + 36_864 * 128


def test_override_is_used_as_is(llama70):
    kv = KVLayout.from_model(llama70.with_(kv_bytes_per_token=1667.0), 2.0)
    assert float(kv.read_bytes(1000)) == 1_667_000


@pytest.mark.parametrize("override", [None, 36_864.0, 1_000.0])
def test_windowed_attention_flops_cap_at_the_window_with_or_without_a_kv_override(override):
    # gpt-oss-120b shape: 36 layers, 18 sliding-128; 64 query heads × head_dim 64.
    # Attention FLOPs per attended token per layer: QKᵀ and AV, a multiply and an add each,
    # 4 · 64 · 64 = 16,384.  At T = 100,000: 18 full layers attend 100,000 tokens, 18 windowed ones 128:
    #   18 · 16,384 · 100,000 + 18 · 16,384 · 128 = 29,491,200,000 + 37,748,736 = 29,528,948,736 FLOP.
    # (Charging all 36 layers over the whole context would give 58,982,400,000 — 2× too many.)
    m = ModelArch(name="oss", total_params=116.8e9, active_params=5.1e9, n_layers=36, d_model=2880,
                  n_heads=64, n_kv_heads=8, head_dim=64, n_window_layers=18, window_tokens=128,
                  kv_bytes_per_token=override)
    kv = KVLayout.from_model(m, 2.0)
    assert float(kv.attn_flops(100_000)) == 29_528_948_736
    # Inside the window every layer attends to all T tokens: 36 · 16,384 · 100 = 58,982,400.
    assert float(kv.attn_flops(100)) == 58_982_400
    if override is not None:
        assert float(kv.read_bytes(100_000)) == override * 100_000      # the byte figure is used as is
    # t_attn on one chip of F = 1e15 FLOP/s at B = 2: 2 · 29,528,948,736 / 1e15 = 5.9057897472e-5 s.
    hw = Hardware(name="x", flops_bf16_per_s=1e15, hbm_bytes=1e12, hbm_bandwidth_bytes_per_s=1e12,
                  price_usd_per_hour=1.0)
    r = decode_step(System(hw, m, deployment=Deployment(mode="per-phase")), 2, 100_000)
    assert float(r.t_attn_s) == pytest.approx(5.9057897472e-5, rel=1e-12)
    # Prefill of 1,000 tokens: full layers attend Σ_{p<1000} p = 499,500 tokens, windowed layers
    # Σ min(p, 128) = 128·127/2 + 872·128 = 8,128 + 111,616 = 119,744; FLOPs = 18·16,384·(499,500 + 119,744).
    p = prefill(System(hw, m), 1000)
    want_attn = 18 * 16_384 * (499_500 + 119_744)
    want_mm = 2 * 5.1e9 * 1000
    assert float(p.t_compute_s) == pytest.approx((want_attn + want_mm) / 1e15, rel=1e-12)


def test_llama4_chunked_attention_flops_cap_with_the_override():
    # Llama 4 Maverick: 48 layers, 36 chunked at 8,192; 40 heads × 128: 4 · 40 · 128 = 20,480 FLOP
    # per attended token per layer.  At T = 1,000,000 with a KV override:
    #   12 · 20,480 · 1,000,000 + 36 · 20,480 · 8,192 = 245,760,000,000 + 6,039,797,760 = 251,799,797,760.
    m = presets.get("model", "llama-4-maverick").with_(kv_bytes_per_token=49_152.0)
    assert float(KVLayout.from_model(m, 2.0).attn_flops(1_000_000)) == 251_799_797_760


def test_missing_architecture_needs_a_kv_figure():
    m = ModelArch(name="bare", total_params=1e9, active_params=1e9)
    with pytest.raises(ValueError, match="kv_bytes_per_token"):
        KVLayout.from_model(m, 2.0)


def test_step_terms_by_hand(sys70):
    # Llama 3.1 70B bf16 on 8 × H100, B = 64, T = 8192.
    r = decode_step(sys70, 64, 8192)
    t_w = 141.2e9 / (8 * 3.35e12)                    # 5.2687 ms
    t_mm = 2 * 70.6e9 * 64 / (8 * 989e12)            # 1.1421 ms
    t_kv = 64 * 8192 * 327_680 / (8 * 3.35e12)       # 6.4110 ms
    t_at = 64 * 80 * 4 * 64 * 128 * 8192 / (8 * 989e12)
    assert_allclose([r.t_weights_s, r.t_matmul_s, r.t_kv_s, r.t_attn_s], [t_w, t_mm, t_kv, t_at], rtol=1e-12)
    t = max(t_mm, t_w + t_kv)                        # lecture mode
    assert_allclose(r.t_step_s, t, rtol=1e-12)
    assert r.bound == "kv"                           # memory wins, and KV > weights
    assert_allclose(r.tokens_per_s_per_user, 1 / t)
    assert_allclose(r.tokens_per_s, 64 / t)
    assert_allclose(r.tokens_per_s_per_chip, 64 / t / 8)
    assert_allclose(r.usd_per_mtok, 8 * 2.0 / 3600 * t / 64 * 1e6)
    hbm = (141.2e9 + 64 * 8192 * 327_680) / 8        # 39.1 GB
    assert_allclose(r.hbm_bytes_per_chip, hbm)
    assert bool(r.fits)
    assert_allclose(r.joules_per_token, 8 * 700 * t / 64)


def test_per_phase_mode(sys70):
    s = sys70.with_(mode="per-phase")
    r = decode_step(s, 64, 8192)
    expect = max(r.t_matmul_s, r.t_weights_s) + max(r.t_attn_s, r.t_kv_s)
    assert_allclose(r.t_step_s, expect)


def test_combine_and_bound_rules():
    assert combine(2.0, 9.0, 1.0, 0.5, 0.0, "lecture") == 2.0      # attention left out
    assert combine(1.0, 0.0, 1.0, 0.5, 0.0, "lecture") == 1.5
    assert combine(2.0, 3.0, 1.0, 0.5, 0.0, "per-phase") == 5.0
    assert bound_of(1.5, 0, 1.0, 0.5, 0, "lecture") == "compute"  # tie goes to compute
    assert bound_of(1.0, 0, 0.6, 0.6, 0, "lecture") == "weights"  # weights/kv tie → weights
    assert bound_of(1.0, 0, 0.2, 0.1, 2.0, "lecture") == "comm"
    assert bound_of(1.0, 5.0, 0.2, 0.1, 0.0, "per-phase") == "attention"
    with pytest.raises(ValueError):
        combine(1, 1, 1, 1, 1, "roof")


def test_hbm_drain_rubin():
    # Lecture §1.4: Rubin 288 GB / 20 TB/s = 14.4 ms (quoted as "≈15 ms").
    assert float(hbm_drain_time(288e9, 20e12)) == pytest.approx(14.4e-3)


def test_64_b_tokens_per_s_at_a_15_6_ms_step(lecture_gpu):
    # Lecture §1.5: t_step ≈ 15.6 ms ⇒ tokens/s ≈ 64 · B; B = 2,000 → 128,000 tok/s.
    # Weights chosen so W/bw = 15.6 ms on one lecture GPU (124.8 GB), sparsity 8 so B* = 2,400 > 2,000.
    m = ModelArch(name="m", total_params=62.4e9, active_params=62.4e9 / 8, kv_bytes_per_token=0.0)
    r = decode_step(System(lecture_gpu, m), np.array([1.0, 2000.0]), 0)
    assert_allclose(r.t_step_s, 0.0156)
    assert_allclose(r.tokens_per_s, [64.1, 128_205], rtol=1e-3)


def test_balance_batch_with_kv_closed_form(sys70):
    # B*(T) = (W/bw) / (2·Na/F − T·kv/bw); at T = 1000 (below the 1,460-token limit).
    T = 1000
    expect = (141.2e9 / 3.35e12) / (2 * 70.6e9 / 989e12 - T * 327_680 / 3.35e12)
    assert float(system_balance_batch(sys70, T)) == pytest.approx(expect)
    r = decode_step(sys70, expect, T)
    assert_allclose(r.t_matmul_s, r.t_weights_s + r.t_kv_s, rtol=1e-9)


def test_context_never_compute_bound(sys70):
    # T = 2·Na·bw / (F·kv) = 2·70.6e9·3.35e12 / (989e12·327,680) = 1,459.6 tokens.
    expect = 2 * 70.6e9 * 3.35e12 / (989e12 * 327_680)
    assert context_never_compute_bound(sys70) == pytest.approx(expect)
    assert np.isinf(system_balance_batch(sys70, 2 * expect))


def test_kv_crossover(sys70):
    # T× = W / (B · kv) = 141.2e9 / (64 · 327,680) = 6,733 tokens.
    assert float(kv_crossover_context(sys70, 64)) == pytest.approx(141.2e9 / (64 * 327_680))


def test_balance_batch_vectorised_over_sparsity():
    b = balance_batch(300.0, 1.0, 2.0 * 700e9, 700e9 / np.array([1.0, 8.0, 32.0]))
    assert_allclose(b, [300, 2400, 9600])


def test_sparse_attention_reads():
    # sqrt rule with knee K: T ≤ K read fully, above it √(K·T).
    assert_allclose(read_tokens([1000, 1e6], "sqrt", 2048), [1000, np.sqrt(2048e6)])
    assert_allclose(read_tokens([1000, 1e6], "topk", 2048), [1000, 2048])
    assert_allclose(read_tokens([1000], "fraction", 0.25), [250])


def test_sparse_attention_changes_reads_not_storage(sys70):
    dense = decode_step(sys70, 8, 1_000_000)
    sparse = decode_step(sys70.with_(sparse_attention="sqrt", sparse_param=2048.0), 8, 1_000_000)
    assert_allclose(sparse.hbm_bytes_per_chip, dense.hbm_bytes_per_chip)
    assert_allclose(sparse.t_kv_s / dense.t_kv_s, np.sqrt(2048e6) / 1e6)


def test_context_for_read_inverts_read_bytes():
    kv = KVLayout(1000.0, 500.0, 128.0)
    for sparse, p in (("dense", 0), ("sqrt", 2048.0), ("fraction", 0.5)):
        T = np.array([50.0, 5000.0, 3e6])
        back = kv.context_for_read(kv.read_bytes(T, sparse, p), sparse, p)
        assert_allclose(back, T, rtol=1e-9)
    assert np.isinf(KVLayout(0.0, 500.0, 128.0).context_for_read(1e9))


def test_max_batch_that_fits(sys70):
    # (C·M − W) / kv_stored(T) = (640e9 − 141.2e9) / (8192 · 327,680) = 185.8 sequences.
    b = float(max_batch_that_fits(sys70, 8192))
    assert b == pytest.approx((640e9 - 141.2e9) / (8192 * 327_680))
    assert bool(decode_step(sys70, np.floor(b), 8192).fits)
    assert not bool(decode_step(sys70, np.floor(b) + 1, 8192).fits)


def test_pipeline_keeps_kv_per_chip_and_latency(sys70):
    # Lecture §1.6: weights per chip fall as 1/P; KV per chip (micro-batch b per stage) is unchanged;
    # with no hop latency, per-token latency and $/token are unchanged and throughput grows P×.
    base = decode_step(sys70, 32, 8192)
    for P in (2, 4, 8):
        r = decode_step(sys70.with_(pipeline_stages=P), 32, 8192)
        kv_per_chip = 32 * 8192 * 327_680 / 8
        assert_allclose(r.hbm_bytes_per_chip - 141.2e9 / (8 * P), kv_per_chip)
        assert_allclose(r.t_step_s, base.t_step_s)
        assert_allclose(r.tokens_per_s, P * base.tokens_per_s)
        assert_allclose(r.usd_per_mtok, base.usd_per_mtok)
    hop = decode_step(sys70.with_(pipeline_stages=4, pipeline_hop_s=2e-3), 32, 8192)
    assert_allclose(hop.t_step_s, base.t_step_s + 4 * 2e-3)


def test_tokens_per_step_multiplies_tokens_not_time(sys70):
    a = decode_step(sys70, 16, 4096)
    b = decode_step(sys70.with_(tokens_per_step=1.8), 16, 4096)
    assert_allclose(b.t_step_s, a.t_step_s)
    assert_allclose(b.tokens_per_s, 1.8 * a.tokens_per_s)
    assert_allclose(b.usd_per_mtok, a.usd_per_mtok / 1.8)


def test_efficiency_factors_scale_terms(sys70):
    r = decode_step(sys70.with_(mfu=0.5, bw_util=0.8), 64, 8192)
    ideal = decode_step(sys70, 64, 8192)
    assert_allclose(r.t_matmul_s, 2 * ideal.t_matmul_s)
    assert_allclose(r.t_weights_s, ideal.t_weights_s / 0.8)


def test_broadcasting_shapes(sys70):
    r = decode_step(sys70, np.array([1, 8, 64])[:, None], np.array([0, 1024, 8192, 32768])[None, :])
    assert r.t_step_s.shape == (3, 4) and r.bound.shape == (3, 4) and r.fits.shape == (3, 4)
    chips = decode_step(sys70, 64, 8192, chips=np.array([1, 2, 4, 8, 16]))
    assert_allclose(chips.t_weights_s * np.array([1, 2, 4, 8, 16]), 141.2e9 / 3.35e12)


@pytest.mark.parametrize("bad", [{"batch": 0}, {"batch": np.nan}, {"context": -1}, {"chips": 0.5}])
def test_bad_inputs_raise(sys70, bad):
    kw = {"batch": 1, "context": 0, **bad}
    with pytest.raises(ValueError):
        decode_step(sys70, kw.pop("batch"), kw.pop("context"), **kw)


def test_auto_chips(h100, llama70, deepseek):
    # 141.2 GB of bf16 weights: 1 chip holds 72 GB (90 % of 80), 2 chips hold 144 GB → C = 2.
    assert auto_chips(h100, llama70) == 2
    # 1.34 TB of DeepSeek weights do not fit in 8 × 72 GB: capped at the domain (8).
    assert auto_chips(h100, deepseek) == 8
    # Plus 64 sequences × 8k tokens of KV: 141.2 + 64·8192·327,680 B = 313 GB > 4 × 72 GB → C = 8.
    assert auto_chips(h100, llama70, batch=64, context=8192) == 8


def test_prefill_by_hand(sys70):
    # L = 8192, B = 1: FLOPs = 2·Na·L + attention over the causal triangle.
    L = 8192
    attn = 80 * 4 * 64 * 128 * L * (L - 1) / 2
    t_comp = (2 * 70.6e9 * L + attn) / (8 * 989e12)
    p = prefill(sys70, L)
    assert_allclose(p.t_compute_s, t_comp)
    assert p.bound == "compute"
    assert_allclose(p.usd_per_mtok_input, 8 * 2.0 / 3600 * t_comp / L * 1e6)
    # A full cache hit leaves nothing to compute.
    assert float(prefill(sys70, L, 1, L).t_compute_s) == 0.0


def test_request_cache_hit_makes_prompt_cheaper(sys70):
    miss = request(sys70, 20_000, 500, batch=32, prefill_batch=4)
    hit = request(sys70, 20_000, 500, batch=32, prefill_batch=4, cache_hit_rate=0.9)
    assert float(hit.usd_prefill) < 0.2 * float(miss.usd_prefill)
    assert_allclose(hit.usd_decode, miss.usd_decode)
    assert_allclose(miss.latency_s, miss.ttft_s + miss.decode_s)


def test_deployment_defaults_are_the_ideal_roofline():
    d = Deployment()
    assert (d.mfu, d.bw_util, d.tokens_per_step, d.mode) == (1.0, 1.0, 1.0, "lecture")


def test_mla_prefill_attends_decompressed_decode_absorbed():
    """DeepSeek-V3 (config: 128 heads, kv_lora 512, rope 64, qk_nope = v_head_dim = 128): per layer per
    attended token, decode (absorbed) 2·128·576 + 2·128·512 = 278,528 FLOPs; prefill (decompressed)
    2·128·(128 + 64) + 2·128·128 = 81,920 FLOPs, 3.4× fewer."""
    from model.roofline import KVLayout
    m = presets.get("model", "deepseek-v3")
    kv = KVLayout.from_model(m, 2.0)
    assert kv.attn_flops_full == pytest.approx(m.n_layers * 278_528)
    assert kv.prefill_flops_full == pytest.approx(m.n_layers * 81_920)
    s = System(presets.get("hardware", "h100"), m).with_(chips=8)
    L = 32_768
    p = prefill(s, L)
    causal = L * (L - 1) / 2                                   # Σ p for p = 0 … L−1: the causal triangle
    want = (2 * m.active_params * L + m.n_layers * 81_920 * causal) / (8 * s.flops)
    assert float(p.t_compute_s) == pytest.approx(want, rel=1e-9)


def test_gqa_prefill_uses_the_decode_attention_flops():
    from model.roofline import KVLayout
    kv = KVLayout.from_model(presets.get("model", "llama-3.1-70b"), 2.0)
    assert kv.prefill_flops_full is None
