"""model/calibrate.py: the ideal bound of a measurement's exact setup, measured ÷ ideal for every published
point (none above 1), and the fit that recovers known efficiencies from points the model generates."""

from __future__ import annotations

import numpy as np
import pytest

from model import calibrate as cal
from model import presets
from model.presets import Measurement
from model.roofline import decode_step

ITEMS = presets.measurement_presets()
CHECK = cal.check(ITEMS)

# DeepSeek-V3 MLA (config_671B.json): per layer and attended token, absorbed attention is
# 2·128·(512 + 64) + 2·128·512 = 278,528 FLOPs; 61 layers.  KV (512 + 64) · 2 B · 61 = 70,272 B/token (bf16).
DS_ATTN = 61 * (2 * 128 * 576 + 2 * 128 * 512)
DS_KV = 61 * 576 * 2
H100_FP8, H100_BW, H100_HBM = 1978.9e12, 3.35e12, 80e9            # the h100 preset (NVIDIA datasheet)


@pytest.mark.parametrize("key", list(ITEMS))
def test_no_measured_point_is_above_its_ideal_bound(key):
    i = CHECK.keys.index(key)
    assert CHECK.ideal[i] > 0, f"{key}: the bound says this setup cannot reach its measured speed"
    assert CHECK.measured[i] <= CHECK.ideal[i], (
        f"{key}: measured {CHECK.measured[i]:,.0f} > ideal {CHECK.ideal[i]:,.0f} tok/s/GPU — the data (metric, "
        "MTP, cache hits, per-GPU vs per-group) or the model is wrong")
    assert 0 < CHECK.efficiency[i] <= 1


def test_deepseek_production_bound_by_hand():
    """H800 decode unit (EP144): 1,850 tok/s/GPU at 21 tok/s/user, mean KV length 4,989."""
    t = cal.terms(ITEMS["deepseek-h800-production"])
    C, T, k = 144, 4989, 2
    assert t.chips == C and t.a == pytest.approx(1.9)
    assert t.c == pytest.approx(k * (2 * 37e9 + DS_ATTN * T) / (C * H100_FP8))   # matmuls + absorbed attention
    assert t.m0 == pytest.approx(671e9 / (C * H100_BW))                         # fp8 weights, 1 B/param
    assert t.m == pytest.approx(T * DS_KV / (C * H100_BW))
    b_fit = (C * H100_HBM - 671e9) / (T * DS_KV)
    assert t.b_fit == pytest.approx(b_fit) and round(b_fit) == 30_945
    i = CHECK.keys.index("deepseek-h800-production")
    # At 21 tok/s/user the step may take 1.9/21 = 90 ms: compute allows 0.0905/t.c ≈ 81,000 sequences and memory
    # ≈ 124,000, so HBM capacity caps it: ideal = B_fit · u / C.
    assert CHECK.bound[i] == "capacity"
    assert CHECK.ideal[i] == pytest.approx(b_fit * 21 / C) and round(CHECK.ideal[i]) == 4513
    assert CHECK.efficiency[i] == pytest.approx(1850 / (b_fit * 21 / C))        # ≈ 41 %


def test_whole_system_bound_adds_each_steps_share_of_the_prompt():
    """TensorRT-LLM Llama 3.1 8B FP8 on one H100, 5000/500: prompts are prefilled on the same GPU."""
    m = ITEMS["trtllm-llama-3.1-8b-h100-tp1-5000-500"]
    t = cal.terms(m)
    L, O, T = 5000, 500, 5250
    kv = 2 * 32 * 8 * 128 * 1                       # fp8 KV: 65,536 B/token
    attn = 32 * 4 * 32 * 128                        # GQA: 4 · heads · head_dim per layer per attended token
    share = 1 / O                                   # a/O prompts begin per sequence per step
    assert t.c == pytest.approx((2 * 8e9 + attn * T) / H100_FP8 + share * 2 * 8e9 * L / H100_FP8)
    assert t.m0 == pytest.approx(8e9 / H100_BW)
    assert t.m == pytest.approx((T * kv + share * L * kv) / H100_BW)
    assert t.b_fit == pytest.approx((H100_HBM - 8e9) / (T * kv))
    # A decode-only figure of the same setup carries no prompt share.
    d = cal.terms(m.with_(scope="decode"))
    assert d.c == pytest.approx((2 * 8e9 + attn * T) / H100_FP8) and d.m == pytest.approx(T * kv / H100_BW)


def test_prefix_cache_hits_skip_prompt_matmuls_but_read_the_cached_kv():
    m = ITEMS["trtllm-llama-3.1-8b-h100-tp1-5000-500"]
    full, half = cal.terms(m), cal.terms(m.with_(cache_hit_rate=0.5))
    kv = 65_536
    assert full.c - half.c == pytest.approx((1 / 500) * 2 * 8e9 * 2500 / H100_FP8)
    # Written: 2,500 new tokens instead of 5,000; read: the 2,500 cached ones — the same bytes here.
    assert half.m == pytest.approx(full.m) and half.m == pytest.approx((5250 * kv + 5000 * kv / 500) / H100_BW)


HAND = cal.Terms(c=1e-4, m0=1e-2, m=1e-5, b_fit=500.0, a=1.0, chips=2.0)


@pytest.mark.parametrize("u, tps, bound", [
    (1.0, 500 * 1 / 2, "capacity"),          # τ = 1 s: 10,000 by compute, 99,000 by memory → HBM's 500
    (50.0, 200 * 50 / 2, "compute"),         # τ = 20 ms: compute 200, memory (20 − 10)/0.01 = 1,000
    (95.0, (1 / 95 - 1e-2) / 1e-5 * 95 / 2, "memory"),  # τ = 10.5 ms: memory 52.6 < compute 105
    (200.0, 0.0, "memory"),                  # τ = 5 ms < the 10 ms weight stream: not even one sequence
])
def test_bound_at_a_speed_by_hand(u, tps, bound):
    p = cal.at_speed(HAND, u)
    assert float(p["tokens_per_s_per_chip"]) == pytest.approx(tps)
    assert str(p["bound"]) == bound


def test_bound_without_a_speed_is_the_top_of_the_frontier():
    g = {k: np.array([v]) for k, v in HAND.__dict__.items()}
    p = cal.predict(g, np.array([np.nan]))
    # B = 500: t = max(500 · 0.1 ms, 10 ms + 500 · 0.01 ms) = 50 ms → 500 / (2 · 0.05 s) = 5,000 tok/s/chip.
    assert p["tokens_per_s_per_chip"][0] == pytest.approx(5000) and p["bound"][0] == "compute"
    assert p["batch"][0] == 500
    # Half the MFU halves it (still compute-bound); efficiencies never raise the bound.
    assert cal.predict(g, np.array([np.nan]), 0.5, 1.0)["tokens_per_s_per_chip"][0] == pytest.approx(2500)


def test_frontier_curve_meets_the_bound_at_the_hbm_knee():
    t = cal.terms(ITEMS["sglang-deepseek-h100-decode"])
    u_top, u_max = cal.speed_range(t)
    fr = cal.frontier(t, np.array([t.b_fit, 1.0]))
    assert fr["tokens_per_s_per_user"] == pytest.approx([u_top, u_max])
    at = cal.at_speed(t, np.array([u_top, u_top / 3]))["tokens_per_s_per_chip"]
    assert at[0] == pytest.approx(fr["tokens_per_s_per_chip"][0])
    assert at[1] == pytest.approx(t.b_fit * (u_top / 3) / t.chips)        # below the knee: B_fit · u / C


def _synthetic(mfu: float, bwu: float, batches, contexts, *, a: float = 1.0, k: float = 1.0) -> dict:
    """Points generated by roofline.decode_step at known efficiencies (Llama 3.1 70B, bf16, 8 × H100)."""
    items = {}
    for T in contexts:
        base = Measurement(name=f"synthetic T={T}", model="llama-3.1-70b", hardware="h100", publisher="test",
                           weights="bf16", kv="bf16", compute="bf16", scope="decode", gpus=8, chips_per_replica=8,
                           input_tokens=T, output_tokens=1.0, context_tokens=T, throughput=1.0,
                           throughput_metric="output per GPU", tokens_per_step=a, tokens_computed_per_step=k)
        s = cal.system_for(base).with_(mfu=mfu, bw_util=bwu)
        r = decode_step(s, np.asarray(batches, float), T)
        t = np.maximum(k * (r.t_matmul_s + r.t_attn_s), r.t_weights_s + r.t_kv_s)   # every FLOP and byte, overlapped
        u = a / t
        for b, uu, tt, fits in zip(batches, u, t, r.fits):
            if fits:                                  # only batches whose weights and KV fit in HBM
                items[f"T{T}-B{b}"] = base.with_(throughput=float(b * a / (8 * tt)), tokens_per_s_per_user=float(uu))
    return items


def test_fit_recovers_known_efficiencies_from_synthetic_points():
    # T = 128: memory-bound below B ≈ 200 and compute-bound above (at MFU 0.42, BWU 0.63), all within HBM.
    items = _synthetic(0.42, 0.63, [4, 16, 64, 512, 2048, 4096], [128, 1024])
    assert len(items) == 10                              # B = 2048, 4096 do not fit at T = 1024 (B_fit ≈ 1,486)
    c = cal.check(items)
    f = cal.fit_check(c)
    assert f.mfu == pytest.approx(0.42, rel=0.01) and f.bwu == pytest.approx(0.63, rel=0.01)
    assert f.mfu_determined and f.bwu_determined and set(f.bound) == {"compute", "memory"}
    assert f.rms_log10 < 0.005
    assert np.allclose(f.predicted, c.measured, rtol=0.02)


def test_fit_recovers_efficiencies_with_mtp():
    items = _synthetic(0.3, 0.8, [8, 64, 1024, 4096], [256], a=1.8, k=2.0)
    f = cal.fit_check(cal.check(items))
    assert f.mfu == pytest.approx(0.3, rel=0.01) and f.bwu == pytest.approx(0.8, rel=0.01)


def test_an_efficiency_no_point_constrains_is_reported_and_left_high():
    items = _synthetic(0.5, 0.4, [2, 8, 32], [8192])         # long context, small batches: all memory-bound
    c = cal.check(items)
    f = cal.fit_check(c)
    assert f.bwu == pytest.approx(0.4, rel=0.01)
    assert not f.mfu_determined and f.mfu == pytest.approx(1.0)    # no evidence of a compute loss
    assert set(f.bound) == {"memory"}


def test_fit_rejects_empty_or_bad_input():
    g = {k: np.array([v]) for k, v in HAND.__dict__.items()}
    with pytest.raises(ValueError, match="no measurements"):
        cal.fit({k: v[:0] for k, v in g.items()}, [], [])
    with pytest.raises(ValueError, match="> 0"):
        cal.fit(g, [0.0], [1.0])


def test_fit_of_the_published_points_is_in_range_and_explains_them_better_than_the_ideal():
    f = cal.fit_check(CHECK)
    assert 0.01 <= f.mfu <= 1 and 0.01 <= f.bwu <= 1 and (f.mfu < 1 or f.bwu < 1)
    assert np.all(np.isfinite(f.residual_log10)) and np.all(f.predicted > 0)
    # Every point is at or under its bound, so the ideal over-predicts all of them: log10(eff) ≤ 0.
    assert f.rms_log10 < np.sqrt(np.mean(np.log10(CHECK.efficiency) ** 2))
    # Residuals are log10(measured / predicted): their RMS is the reported figure.
    assert f.rms_log10 == pytest.approx(np.sqrt(np.mean(f.residual_log10 ** 2)))


def test_select_and_same_setup():
    sel = cal.select(ITEMS, model="deepseek-v3", hardware="gb200")
    assert sel and all(m.model == "deepseek-v3" and m.hardware == "gb200" for m in sel.values())
    assert cal.select(ITEMS, publisher="nvidia") == cal.select(ITEMS, publisher="NVIDIA")
    assert list(cal.select(ITEMS, keys=["rtp-llm-deepseek-h800"])) == ["rtp-llm-deepseek-h800"]
    # Two InferenceX rows with decode workers of EP32 share one frontier; EP4 does not.
    a, b = ITEMS["inferencex-dsr1-fp4-gb200-c180"], ITEMS["inferencex-dsr1-fp4-gb200-c2253"]
    assert cal.same_setup(a, b) and not cal.same_setup(a, ITEMS["inferencex-dsr1-fp4-gb200-c16130"])


def test_a_chip_without_the_compute_format_is_refused():
    m = ITEMS["inferencex-gptoss-mi300x-1k-1k"].with_(compute="fp4")
    with pytest.raises(ValueError, match="no fp4"):
        cal.terms(m)
