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


# ================================================================ the efficiency model (prediction)

TRUE = cal.Efficiency(bandwidth=0.7, compute=0.45, expert=0.12, layer_s=2e-4, prompt_layer_s=5e-4)
SYN = ("bandwidth", "compute", "expert", "layer_s", "prompt_layer_s")    # the terms TRUE sets, all fitted


def _setup(model, hardware, chips, weights, compute, *, scope="decode", L=1000.0, O=1000.0, T=None,
           parallelism="", engine="") -> Measurement:
    return Measurement(name=f"{model} on {chips} {hardware}", model=model, hardware=hardware, publisher="test",
                       weights=weights, kv=weights, compute=compute, scope=scope, gpus=chips, chips_per_replica=chips,
                       input_tokens=L, output_tokens=O, context_tokens=T, throughput=1.0,
                       throughput_metric="output per GPU", parallelism=parallelism, engine=engine)


SETUPS = {   # dense and MoE, one chip and several, decode-only and prompts in the step
    "8b": _setup("llama-3.1-8b", "h100", 1, "fp8", "fp8", T=2000.0),
    "70b-sys": _setup("llama-3.1-70b", "h200", 2, "fp8", "fp8", scope="system", L=2000.0, O=500.0),
    "30b-sys": _setup("qwen3-30b-a3b", "b200", 1, "fp4", "fp4", scope="system", L=1000.0, O=1000.0),
    "ds-dec": _setup("deepseek-v3", "gb200", 8, "fp4", "fp4", T=1500.0, parallelism="EP8, DP attention"),
    "scout-sys": _setup("llama-4-scout", "h200", 4, "fp8", "fp8", scope="system", L=5000.0, O=500.0),
}


def _synthetic_points(eff: cal.Efficiency, batches, *, noise: float = 0.0, seed: int = 1, speed: bool = False) -> dict:
    """Points generated by the efficiency model itself at known terms: each setup at each batch, its
    concurrency published (or, with `speed`, only its per-user speed), throughput × e^(noise·N(0, 1)).
    Batches past what fits in HBM are left out."""
    rng = np.random.default_rng(seed)
    items = {}
    for name, m in SETUPS.items():
        p = cal.parts(m)
        for b in batches:
            if b > float(p.b_cap):
                continue
            r = cal.predict_step(p, float(b), eff)
            tps = float(r["tokens_per_s_per_gpu"]) * float(np.exp(noise * rng.standard_normal()))
            load = {"tokens_per_s_per_user": float(r["tokens_per_s_per_user"])} if speed else {"concurrency": float(b)}
            items[f"{name}-B{b}"] = m.with_(throughput=tps, **load)
    return items


def test_predict_step_by_hand():
    """Round numbers: one chip, per sequence 1 ms dense + 0.5 ms expert matmul, 0.25 ms attention, 2 ms prompt
    matmuls; 10 ms of weights per step and 0.1 ms of KV per sequence; 10 layers; a = 1; a/O = 0.01."""
    one = np.array(1.0)
    p = cal.Parts(dense=1e-3 * one, expert=0.5e-3 * one, attn=0.25e-3 * one, prefill_dense=2e-3 * one,
                  prefill_expert=0 * one, prefill_attn=0 * one, weights=10e-3 * one, kv=0.1e-4 * one,
                  layers=10 * one, a=one, chips=one, prompt_rate=0.01 * one, b_cap=1e9 * one, esize=0 * one)
    eff = cal.Efficiency(bandwidth=0.5, compute=0.5, prefill=0.25, expert=0.1, layer_s=1e-4, prompt_layer_s=1e-3)
    B = 100.0
    comp = B * ((1e-3 + 0.25e-3) / 0.5 + 0.5e-3 / 0.1 + 2e-3 / 0.25)          # 0.25 + 0.5 + 0.8 = 1.55 s
    mem = (10e-3 + B * 1e-5) / 0.5                                             # 0.022 s
    fixed = 10 * (1e-4 + 1e-3 * (1 - np.exp(-B * 0.01)))                       # 1 − e^(−1) of steps carry a prompt
    r = cal.predict_step(p, B, eff)
    assert float(r["t_compute_s"]) == pytest.approx(comp) and float(r["t_memory_s"]) == pytest.approx(mem)
    assert float(r["t_step_s"]) == pytest.approx(max(comp, mem) + fixed) and str(r["bound"]) == "compute"
    assert float(r["tokens_per_s_per_gpu"]) == pytest.approx(B / (max(comp, mem) + fixed))
    # η_p left out: the prompt work runs at η_c.
    r2 = cal.predict_step(p, B, cal.Efficiency(bandwidth=0.5, compute=0.5, expert=0.1))
    assert float(r2["t_compute_s"]) == pytest.approx(B * (1.25e-3 / 0.5 + 0.5e-3 / 0.1 + 2e-3 / 0.5))
    # The ideal divides nothing and adds nothing.
    r3 = cal.predict_step(p, B, cal.IDEAL)
    assert float(r3["t_step_s"]) == pytest.approx(max(B * 3.75e-3, 10e-3 + B * 1e-5))


def test_the_experts_efficiency_grows_with_their_size_by_hand():
    """s½ = 10 M elements, η_c = 0.4: experts of s = 10 M run at 0.4 · 10/(10 + 10) = 0.2, of 30 M at 0.3; the
    step divides the expert work by it.  A model's s is d_model × moe_intermediate_size (DeepSeek-V3:
    7,168 × 2,048 = 14,680,064), 0 for a dense model (its experts' η_e is then the plain term)."""
    eff = cal.Efficiency(bandwidth=0.5, compute=0.4, expert=0.9, expert_size_half=10e6)
    assert np.allclose(eff.expert_at(np.array([10e6, 30e6, 0.0])), [0.2, 0.3, 0.9])
    one = np.array(1.0)
    p = cal.Parts(dense=1e-3 * one, expert=0.5e-3 * one, attn=0 * one, prefill_dense=0 * one,
                  prefill_expert=0 * one, prefill_attn=0 * one, weights=1e-3 * one, kv=0 * one,
                  layers=10 * one, a=one, chips=one, prompt_rate=0 * one, b_cap=1e9 * one, esize=30e6 * one)
    r = cal.predict_step(p, 100.0, eff)
    assert float(r["t_compute_s"]) == pytest.approx(100 * (1e-3 / 0.4 + 0.5e-3 / 0.3))
    ds, dense = presets.get("model", "deepseek-v3"), presets.get("model", "llama-3.1-8b")
    assert cal.expert_size(ds) == 7168 * 2048 and cal.expert_size(dense) == 0
    resolved = eff.for_model(ds)
    assert resolved.expert_size_half == 0 and resolved.expert == pytest.approx(0.4 * 14_680_064 / 24_680_064)
    assert float(cal.parts(SETUPS["ds-dec"]).esize) == 7168 * 2048
    assert "this model's are 7,168 × 2,048" in cal.expert_phrase(eff, ds)
    assert cal.expert_phrase(cal.Efficiency(expert=0.1)) == "routed experts at 10 % of peak"
    assert cal.expert_phrase(eff, dense) == "no routed experts in this model"


TRUE_SIZE = cal.Efficiency(bandwidth=0.7, compute=0.45, prompt_layer_s=5e-4, expert_size_half=12e6)


def test_fit_recovers_the_expert_size_term_the_model_fits_by_default():
    """The default terms (η_bw, η_c, t_ℓp, s½) from points made with them: exact without noise.  With 5 %
    scatter, over ten draws, the reported σ is honest: each term within 3.5σ of the truth every time and within
    2σ in at least 85 % of the 40 cases (a normal error: 95 %).  Three expert sizes (Qwen3-30B 1.6 M,
    DeepSeek-V3 14.7 M, Llama 4 Scout 41.9 M elements) pin s½."""
    exact = cal.fit_efficiency(_synthetic_points(TRUE_SIZE, [1, 8, 64, 256, 1024]), cal.MODEL_TERMS)
    for name in cal.MODEL_TERMS:
        assert getattr(exact.efficiency, name) == pytest.approx(getattr(TRUE_SIZE, name), rel=1e-3), name
    assert not exact.determined["expert"]
    z = []
    for seed in range(1, 11):
        f = cal.fit_efficiency(_synthetic_points(TRUE_SIZE, [1, 8, 64, 256, 1024], noise=0.05, seed=seed),
                               cal.MODEL_TERMS)
        for name in cal.MODEL_TERMS:
            want, sd = getattr(TRUE_SIZE, name), f.stderr[name]
            assert np.isfinite(sd) and 0 < sd < 0.3 * want, (seed, name, sd)      # σ means something
            z.append((getattr(f.efficiency, name) - want) / sd)
    z = np.abs(np.array(z))
    assert z.max() <= 3.5 and np.mean(z <= 2) >= 0.85, z.round(2)


def test_parts_of_a_measurement_split_the_bounds_terms():
    """The parts add up to the bound's own terms (`terms`) where they overlap; the expert share is
    3·d·d_e·k·L_moe / N_active (Qwen3-30B-A3B: 3 · 2048 · 768 · 8 · 48 / 3.3e9 = 0.549)."""
    m = SETUPS["30b-sys"]
    p, t = cal.parts(m), cal.terms(m)
    assert cal.expert_share(presets.get("model", "qwen3-30b-a3b")) == pytest.approx(3 * 2048 * 768 * 8 * 48 / 3.3e9)
    # Attention runs at the bf16 peak, the matmuls at fp4's: on a B200 9 / 2.25 PFLOP/s = 4 times longer.
    assert float(p.dense + p.expert + p.attn / 4 + p.prefill_dense + p.prefill_expert) == pytest.approx(t.c)
    assert float(p.weights) == pytest.approx(t.m0) and float(p.kv) == pytest.approx(t.m)
    assert float(p.prompt_rate) == pytest.approx(1 / 1000) and float(p.layers) == 48
    assert float(p.prefill_attn) > 0                     # the prompt's causal attention, which the bound leaves out
    d = cal.parts(SETUPS["8b"])
    assert float(d.expert) == 0 and float(d.prompt_rate) == 0 and float(d.prefill_dense) == 0


def test_attention_runs_at_the_bf16_peak_whatever_the_compute_dtype():
    """g = F(compute)/F(bf16), from the datasheets' dense figures: H100 SXM fp8 1,978.9 / bf16 989.4 TFLOP/s = 2
    (NVIDIA H100 datasheet); B200 fp4 9 / bf16 2.25 PFLOP/s = 4 (NVIDIA DGX B200 datasheet, per GPU); GB300
    fp4 15 / bf16 2.5 = 6 (NVIDIA GB300 NVL72 page, per GPU); a bf16 model 1.  The parts' attention, decode
    and prompt, is the roofline's times g; the matmuls are not."""
    hw = presets.hardware_presets()
    assert cal.attention_slowdown(hw["h100"], "fp8") == pytest.approx(1978.9 / 989.4)
    assert cal.attention_slowdown(hw["b200"], "fp4") == pytest.approx(4.0)
    assert cal.attention_slowdown(hw["gb300"], "fp4") == pytest.approx(6.0)
    assert cal.attention_slowdown(hw["h100"], "bf16") == 1.0
    m = SETUPS["30b-sys"]
    s = cal.system_for(m)
    fp4, bf16 = cal.parts(m), cal.parts_for(s.with_(compute="bf16"), m.decode_context,
                                            input_tokens=m.input_tokens, output_tokens=m.output_tokens)
    assert float(fp4.attn) == pytest.approx(float(bf16.attn)) and float(fp4.attn) > 0
    assert float(fp4.prefill_attn) == pytest.approx(float(bf16.prefill_attn)) and float(fp4.prefill_attn) > 0
    assert float(fp4.dense) == pytest.approx(float(bf16.dense) / 4)


def test_capacity_is_what_the_weights_leave_per_kv_of_the_context():
    """Llama 3.1 8B FP8 on one H100, 128/2048: 90 % of the 72 GB the weights leave, per 65,536 B of fp8 KV
    per token over the mean context L + O/2 = 1,152 tokens — 858 sequences; an engine that reserves the
    whole L + O = 2,176 (`reserve_tokens`) holds 454, and `max_batch` caps it."""
    m = ITEMS["trtllm-llama-3.1-8b-h100-tp1-128-2048"]
    assert cal.load_of(m)[0] == "capacity" and np.isnan(cal.load_of(m)[1])
    assert float(cal.parts(m).b_cap) == pytest.approx(0.9 * 72e9 / (65_536 * 1152))
    s = cal.system_for(m)
    assert float(cal.parts_for(s, 1152, reserve_tokens=2176).b_cap) == pytest.approx(0.9 * 72e9 / (65_536 * 2176))
    assert float(cal.parts_for(s, 1152, max_batch=256).b_cap) == 256
    # Arrays broadcast: one call for a curve of contexts.
    caps = cal.parts_for(s, np.array([1152.0, 2304.0])).b_cap
    assert caps == pytest.approx([0.9 * 72e9 / (65_536 * 1152), 0.9 * 72e9 / (65_536 * 2304)])


def test_attention_data_parallel_holds_the_dense_weights_on_every_chip():
    """Llama 4 Maverick FP8 on eight H100 with attention DP: the routed experts (128 · 3 · 5120 · 8192 · 24 =
    386.5e9 params) are split, the other 13.5e9 held by every chip: W_e/8 + W_d per chip, not W/8."""
    m = ITEMS["trtllm-llama-4-maverick-h100-tp8-128-2048"]
    assert cal.attention_data_parallel(m)
    w_e = 128 * 3 * 5120 * 8192 * 24
    w_d = 400e9 - w_e
    p, plain = cal.parts(m), cal.parts(m.with_(parallelism="TP8"))      # capacity at L + O/2 = 1,152
    assert float(p.weights) == pytest.approx((w_e / 8 + w_d) / H100_BW)
    assert float(plain.weights) == pytest.approx(400e9 / 8 / H100_BW)
    assert float(p.b_cap) == pytest.approx(float(plain.b_cap) * (640e9 - 400e9 - 7 * w_d) / (640e9 - 400e9))
    assert cal.attention_data_parallel(ITEMS["deepseek-h800-production"])            # "… DP144"
    assert not cal.attention_data_parallel(ITEMS["trtllm-llama-3.1-405b-h100-tp8-128-2048"])


def test_load_of_a_measurement():
    assert cal.load_of(ITEMS["rtp-llm-deepseek-h800"]) == ("batch", 13_200 * 144 / 144)
    assert cal.load_of(ITEMS["inferencex-dsr1-fp4-gb200-c16130"]) == ("batch", pytest.approx(16_130 * 4 / 32))
    assert cal.load_of(ITEMS["deepseek-h800-production"]) == ("speed", 21.0)


def test_batch_at_speed_inverts_the_step():
    p = cal.parts(SETUPS["70b-sys"])
    for b in (1.0, 37.0, 500.0):
        u = cal.predict_step(p, b, TRUE)["tokens_per_s_per_user"]
        assert float(cal.batch_at_speed(p, u, TRUE)) == pytest.approx(b, rel=1e-6)
    # Faster than one sequence can go: a batch below 1; slower than a full HBM: the capacity.
    u1 = float(cal.predict_step(p, 1.0, TRUE)["tokens_per_s_per_user"])
    assert float(cal.batch_at_speed(p, 2 * u1, TRUE)) < 1
    assert float(cal.batch_at_speed(p, 1e-3, TRUE)) == pytest.approx(float(p.b_cap))


def test_fit_recovers_known_terms_exactly_from_noise_free_points():
    items = _synthetic_points(TRUE, [1, 8, 64, 256, 1024])
    f = cal.fit_efficiency(items, SYN)
    for name in SYN:
        assert getattr(f.efficiency, name) == pytest.approx(getattr(TRUE, name), rel=1e-3), name
    assert all(f.determined[t] for t in SYN) and not f.determined["prefill"]
    assert np.allclose(f.fitted.predicted, f.fitted.measured, rtol=1e-4)


def test_fit_recovers_each_term_within_its_reported_uncertainty():
    """5 % log-normal scatter on 25 points from known terms: every term within 3σ of the truth, and σ
    small enough to mean something (a tenth of the value or less)."""
    items = _synthetic_points(TRUE, [1, 8, 64, 256, 1024], noise=0.05, seed=7)
    f = cal.fit_efficiency(items, SYN)
    for name in SYN:
        got, want, sd = getattr(f.efficiency, name), getattr(TRUE, name), f.stderr[name]
        assert np.isfinite(sd) and 0 < sd < 0.1 * want, (name, got, sd)
        assert abs(got - want) <= 3 * sd, (name, got, want, sd)
    assert f.sigma_log == pytest.approx(0.05, rel=0.5)
    rows = {r["field"]: r for r in f.terms()}
    assert rows["layer_s"]["unit"] == "s" and rows["bandwidth"]["symbol"] == "η_bw" and rows["expert"]["source"]


def test_a_point_left_out_is_predicted_within_the_tolerance_the_terms_imply():
    items = _synthetic_points(TRUE, [1, 8, 64, 256, 1024], noise=0.05, seed=11)
    keys = list(items)
    for out in keys[::4]:
        f = cal.fit_efficiency({k: m for k, m in items.items() if k != out}, SYN)
        pts = cal.points({out: items[out]})
        got = cal.predict_points(pts, f.efficiency)
        tol = 3 * float(f.log_sigma(pts)[0])                  # terms' uncertainty carried through + one point's scatter
        assert abs(np.log(got.ratio[0])) <= tol, (out, got.ratio[0], tol)
        assert float(f.log_sigma(pts, residual=False)[0]) < float(f.log_sigma(pts)[0])


def test_points_with_a_published_speed_are_predicted_at_the_batch_that_speed_allows():
    items = _synthetic_points(TRUE, [4, 64, 512], speed=True)
    pred = cal.predict_measurements(items, TRUE)
    assert set(pred.load) == {"speed"} and pred.reachable.all()
    assert np.allclose(pred.predicted, pred.measured, rtol=1e-6)
    assert sorted(set(np.round(pred.batch).astype(int))) == [4, 64, 512]
    f = cal.fit_efficiency(items, SYN)
    assert f.efficiency.bandwidth == pytest.approx(TRUE.bandwidth, rel=1e-2)


def test_a_term_no_point_constrains_is_held_and_reported():
    dense = {k: m for k, m in _synthetic_points(TRUE, [1, 16, 256]).items() if k.startswith(("8b", "70b"))}
    f = cal.fit_efficiency(dense, SYN)
    assert not f.determined["expert"] and f.efficiency.expert == 1.0 and np.isnan(f.stderr["expert"])
    assert f.efficiency.bandwidth == pytest.approx(TRUE.bandwidth, rel=1e-3)
    # No prompt work at all: the prompt-step time cannot be fitted either.
    decode = {k: m for k, m in dense.items() if k.startswith("8b")}
    g = cal.fit_efficiency(decode, ("bandwidth", "layer_s", "prompt_layer_s"))
    assert not g.determined["prompt_layer_s"] and g.efficiency.prompt_layer_s == 0.0


def test_fit_rejects_unknown_terms_and_bad_points():
    items = _synthetic_points(TRUE, [8])
    with pytest.raises(ValueError, match="unknown term 'magic'"):
        cal.fit_efficiency(items, ("bandwidth", "magic"))
    with pytest.raises(ValueError, match="no measurements"):
        cal.fit_efficiency({})
    with pytest.raises(ValueError, match="> 0"):
        cal.fit_points(cal.Points(("x",), cal.stack_parts([cal.parts(SETUPS["8b"])]), np.array([0]), np.array([4.0]),
                                  np.array([0.0])))


def test_groups_for_cross_validation():
    g = cal.groups_of(ITEMS, "k5")
    assert sorted(set(g)) == [f"fold {i}" for i in range(1, 6)]
    counts = [int(np.sum(g == f)) for f in sorted(set(g))]
    assert max(counts) - min(counts) <= 1                                  # dealt round-robin
    assert (cal.groups_of(ITEMS, "k5") == g).all() and not (cal.groups_of(ITEMS, "k5", seed=1) == g).all()
    assert set(cal.groups_of(ITEMS, "chip")) == {m.hardware for m in ITEMS.values()}
    with pytest.raises(ValueError, match="choose one of publisher, chip, model, k5"):
        cal.groups_of(ITEMS, "engine")


def test_cross_validation_never_lets_a_fit_see_the_point_it_predicts():
    """The held-out prediction of a group equals a fit on everything else, predicting it."""
    items = _synthetic_points(TRUE, [1, 64, 1024], noise=0.05, seed=3)
    cv = cal.cross_validate(items, "k5", terms=SYN)
    first = cv.groups[0]
    rest = {k: m for k, m, g in zip(items, items.values(), cv.groups) if g != first}
    mine = {k: m for k, m, g in zip(items, items.values(), cv.groups) if g == first}
    again = cal.predict_measurements(mine, cal.fit_efficiency(rest, SYN).efficiency).predicted
    assert np.allclose(cv.predicted[cv.groups == first], again)
    assert cv.median_error < 0.1                          # 5 % scatter about terms the model has
    lo, hi = cv.band
    assert lo <= np.median(cv.ratio) <= hi
    with pytest.raises(ValueError, match="one model only"):
        cal.cross_validate({k: m for k, m in items.items() if k.startswith("8b")}, "model", terms=SYN)


def test_the_built_in_fit_and_its_held_out_error():
    """The fitted terms are physical (efficiencies in (0, 1], times ≥ 0, each with a finite σ), and the
    held-out error meets the targets asked for: median ≤ 20 % and 90th percentile ≤ 50 % five-fold, median
    ≤ 30 % leaving a model out (the figures in docs/prediction.md)."""
    f = cal.built_in_fit()
    for t in f.terms():
        if t["field"] in cal.MODEL_TERMS:
            assert t["determined"] and np.isfinite(t["stderr"]) and t["stderr"] > 0, t["field"]
            assert (0 < t["value"] <= 1) if t["unit"] == "-" else (t["value"] >= 0), t
    k5, by_model = cal.built_in_cv("k5"), cal.built_in_cv("model")
    assert len(k5.keys) == len(ITEMS) and np.isfinite(k5.predicted).all() and (k5.predicted > 0).all()
    assert k5.median_error <= 0.20 and k5.p90_error <= 0.50 and by_model.median_error <= 0.30
    # Better than the bound's own two efficiencies, held out the same way.
    two = cal.cross_validate(ITEMS, "k5", terms=("bandwidth", "compute"))
    assert k5.median_error < two.median_error and k5.p90_error < two.p90_error


def test_user_spec_files_are_read_only_from_the_command_lines_folder(tmp_path):
    chip = presets.dump_item(presets.get("hardware", "h100").with_(name="My H100", hbm_bandwidth_bytes_per_s=4e12),
                             "hardware", "my-h100")
    (tmp_path / "my_chip.yaml").write_text(chip)
    csv = ("key,publisher,model,hardware,weights,kv,compute,scope,gpus,chips_per_replica,input_tokens,"
           "output_tokens,context_tokens,throughput,throughput_metric,concurrency\n"
           "mine,Me,llama-3.1-8b,my_chip.yaml,bf16,bf16,bf16,decode,1,1,1000,100,1000,2000,output per GPU,16\n")
    got = cal.load_user_measurements(csv.encode(), "mine.csv", base=tmp_path)
    m = got["mine"]
    assert m.hardware == cal.FILE_PREFIX + str((tmp_path / "my_chip.yaml").resolve())
    assert cal.system_for(m).hardware.hbm_bandwidth_bytes_per_s == 4e12
    assert float(cal.parts(m).weights) == pytest.approx(16e9 / 4e12)
    # The app's upload passes no folder: a file name is an unknown preset, and nothing is read.
    with pytest.raises(presets.PresetError, match=r"'mine'\.hardware: unknown hardware preset 'my_chip.yaml'"):
        cal.load_user_measurements(csv.encode(), "mine.csv")
    with pytest.raises(presets.PresetError, match=r"'mine'\.hardware: cannot read"):
        cal.load_user_measurements(csv.replace("my_chip.yaml", "absent.yaml").encode(), "mine.csv", base=tmp_path)


def test_predict_system_takes_arrays_of_batch_and_context():
    """A batch × context grid in one call, equal point by point to the scalar calls; the fitted model is
    never faster than the ideal it divides."""
    s = presets.get("model", "llama-3.1-70b")
    system = cal.System(presets.get("hardware", "h200"), s).with_(chips=2.0)
    b, T = np.array([1.0, 16.0, 256.0])[:, None], np.array([1000.0, 8000.0])[None, :]
    eff = cal.built_in_fit().efficiency
    grid = cal.predict_system(system, b, T, eff, input_tokens=1000.0, output_tokens=500.0)
    assert grid["tokens_per_s_per_gpu"].shape == (3, 2)
    for i in range(3):
        for j in range(2):
            one = cal.predict_system(system, float(b[i, 0]), float(T[0, j]), eff, input_tokens=1000.0,
                                     output_tokens=500.0)
            assert float(one["t_step_s"]) == pytest.approx(grid["t_step_s"][i, j])
    ideal = cal.predict_system(system, b, T, cal.IDEAL, input_tokens=1000.0, output_tokens=500.0)
    assert np.all(grid["tokens_per_s_per_gpu"] < ideal["tokens_per_s_per_gpu"])
