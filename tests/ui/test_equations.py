"""The equation builders (ui/equations/): each shows the numbers worked out by hand from its formula and the
preset figures written out below, agrees with the model's own value on two systems, and one builder gives
the page, the walkthrough step and the offline deck the same TeX.

Preset figures used (presets/*.yaml):
  H100 SXM5: F = 989.4e12 FLOP/s (bf16), bw = 3.35e12 B/s, M = 80e9 B, $2.95 per hour, scale-up 8 chips,
      450e9 B/s scale-up, 50e9 B/s scale-out.
  GB200 (per Blackwell GPU): F = 5e15 FLOP/s (fp8), bw = 8e12 B/s, M = 186e9 B, $10.5 per hour,
      scale-up 72 chips, 900e9 B/s scale-up, 50e9 B/s scale-out.
  Llama 3.1 70B: N_total = N_a = 70.6e9; KV 80 layers × 2 (K, V) × 8 heads × 128 × 2 B (bf16) = 327,680 B/token.
  DeepSeek-V3: N_total = 671e9, N_a = 37e9, 256 routed experts, k = 8, d = 7168, 58 MoE layers; MLA KV
      61 layers × (512 + 64) × 1 B (fp8) = 35,136 B/token.
  gpt-oss-120b: N_a = 5.1e9; KV per token 36,864 B in the full-attention layers and 36,864 B in the
      128-token windowed ones (bf16).
  Flash tier: 15.36e12 B, 14e9 B/s, $0.044 per hour.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from model import (
    KVLayout,
    System,
    context_never_compute_bound,
    decode_step,
    kv_crossover_context,
    presets,
    system_balance_batch,
)
from model.economics import cache_tier_costs, fast_mode_batches, fast_mode_forward, hbm_tier, recompute_cost
from model.specs import Precision
from model.training import overtrain
from tests.app.helpers import V1, app, latex
from ui.equations import batch, context, fast_mode, kv_cache, memory_tiers, moe, pipeline, prices, tex_int, training
from ui.format import duration
from ui.present import deck
from ui.present import walkthrough as wk

HW, MD = presets.hardware_presets(), presets.model_presets()
# System A: H100 × Llama 3.1 70B, bf16, C = 8.   System B: GB200 × DeepSeek-V3, fp8, C = 72.
A = System(HW["h100"], MD["llama-3.1-70b"]).with_(chips=8)
B = System(HW["gb200"], MD["deepseek-v3"], Precision("fp8", "fp8", "fp8")).with_(chips=72)
FLASH = presets.load("tier")["nvme-gen5"]

F_A, BW_A, NA_A, W_A, KV_A = 989.4e12, 3.35e12, 70.6e9, 70.6e9 * 2, 327_680.0
F_B, BW_B, NA_B, W_B, KV_B = 5e15, 8e12, 37e9, 671e9 * 1, 35_136.0


def _num(tex: str) -> float:
    """The last number of an equation (its result), KaTeX's braced thousands separators undone."""
    return float(re.findall(r"[0-9][0-9{},.]*", tex)[-1].replace("{,}", "").rstrip("."))


def test_the_systems_are_the_presets_written_above():
    for s, (F, bw, na, w, kv) in ((A, (F_A, BW_A, NA_A, W_A, KV_A)), (B, (F_B, BW_B, NA_B, W_B, KV_B))):
        assert (s.flops, s.hbm_bandwidth, s.model.active_params, s.weight_bytes, s.kv.bytes_per_token) == (
            F, bw, na, w, kv)


# ---------------------------------------------------------------- batch: B*, B*(T), the step, the floor

def test_balance_batch():
    # B* = F·W / (2·Na·bw) = F/bw × N_total/N_a × bytes/2
    # A: 989.4e12 / 3.35e12 = 295.3 × 1 × 2/2 = 295.   B: 5e15 / 8e12 = 625 × 671/37 = 18.1 × 1/2 = 5,667.
    for s, F, bw, w, na, shown in ((A, F_A, BW_A, W_A, NA_A, r"295 \times 1 \times \frac{2}{2} = 295"),
                                   (B, F_B, BW_B, W_B, NA_B, r"625 \times 18.1 \times \frac{1}{2} = 5{,}667")):
        tex = batch.balance_batch(s)
        by_hand = F * w / (2 * na * bw)
        assert tex.startswith(r"B^* = \frac{F \cdot W}{2\,N_a\cdot bw}") and tex.endswith(shown)
        assert by_hand == pytest.approx(float(system_balance_batch(s)), rel=1e-12)
        assert _num(tex) == round(by_hand)


def test_balance_batch_with_kv_and_memory_bound():
    # B*(T) = (W/bw) / (2·Na/F − kv(T)/bw).  A at T = 8,192: kv = 327,680 × 8,192 = 2.68 GB, kv/bw = 801 µs
    # > 2·Na/F = 143 µs: memory-bound at every batch.
    tex = batch.balance_batch_kv(A, 8192)
    assert r"= 801\,\text{µs} \;\ge\; \frac{2N_a}{F} = 143\,\text{µs}" in tex
    assert "memory-bound at every batch" in tex and not np.isfinite(system_balance_batch(A, 8192))
    # B at T = 2,048: kv = 35,136 × 2,048 = 72.0 MB; W/bw = 0.0839 s, 2Na/F = 14.8 µs, kv/bw = 8.99 µs → 14,448.
    T = 2048
    by_hand = (W_B / BW_B) / (2 * NA_B / F_B - KV_B * T / BW_B)
    tex = batch.balance_batch_kv(B, T)
    assert r"\frac{0.0839\,\text{s}}{14.8\,\text{µs} - 8.99\,\text{µs}}" in tex
    assert by_hand == pytest.approx(float(system_balance_batch(B, T)), rel=1e-12)
    assert tex.endswith(tex_int(by_hand)) and tex.startswith(r"B^*(T{=}2{,}048)")


def test_step_time():
    # t_step = max(2·Na·B/(C·F), (W + B·kv(T))/(C·bw)).
    # A, B = 64, T = 8,192: max(1.14 ms, (141.2 GB + 64 × 2.68 GB) / (8 × 3.35 TB/s) = 0.0117 s).
    # B, B = 256, T = 2,048: max(52.6 µs, (671 GB + 256 × 72.0 MB) / (72 × 8 TB/s) = 1.2 ms).
    for s, F, bw, na, w, kv, b, T, C, shown in (
            (A, F_A, BW_A, NA_A, W_A, KV_A, 64, 8192, 8,
             r"\max(1.14\,\text{ms},\ 0.0117\,\text{s}) = 0.0117\,\text{s}"),
            (B, F_B, BW_B, NA_B, W_B, KV_B, 256, 2048, 72,
             r"\max(52.6\,\text{µs},\ 1.2\,\text{ms}) = 1.2\,\text{ms}")):
        by_hand = max(2 * na * b / (C * F), (w + b * kv * T) / (C * bw))
        assert by_hand == pytest.approx(float(decode_step(s, b, T).t_step_s), rel=1e-12)
        tex = batch.step_time(s, b, T)
        assert shown in tex and rf"C = {C}" in tex


def test_latency_floor():
    # t_floor = W/(C·bw): A 141.2 GB / (8 × 3.35 TB/s) = 5.27 ms; B 671 GB / (72 × 8 TB/s) = 1.16 ms.
    for s, w, C, bw, shown in (
            (A, W_A, 8, BW_A, r"\frac{141\,\text{GB}}{8 \times 3.35\,\text{TB/s}} = 5.27\,\text{ms}"),
            (B, W_B, 72, BW_B, r"\frac{671\,\text{GB}}{72 \times 8\,\text{TB/s}} = 1.16\,\text{ms}")):
        by_hand = w / (C * bw)
        assert by_hand == pytest.approx(float(decode_step(s, 1, 0).t_weights_s), rel=1e-12)
        assert batch.latency_floor(s) == r"t_{floor} = \frac{W}{C\cdot bw} = " + shown


def test_the_compare_tables_are_the_same_equations_row_by_row():
    rows = batch.balance_batch_table({1: A, 2: B})
    assert rf"B^* &= {batch.B_STAR} \\ " in rows
    for i, s in ((1, A), (2, B)):
        assert rf"B^*_{i} &= " + batch.balance_batch(s).removeprefix(rf"B^* = {batch.B_STAR} = ") in rows
    floors = batch.latency_floor_table({1: A, 2: B})
    for i, s in ((1, A), (2, B)):
        assert batch.latency_floor(s).split(" = ", 2)[2] in floors and rf"t_{{floor,{i}}}" in floors


# ---------------------------------------------------------------- fast mode

def test_fast_mode_without_kv():
    # B_std = S·B*, B_fast = B*/Pm; A: B* = 295.3, S = 2.5, Pm = 6: 738, 49.2.
    b_star = F_A / BW_A
    tex = fast_mode.no_kv(A, 2.5, 6.0)
    assert rf"= 2.5 \times 295 = {2.5 * b_star:,.0f}" in tex and rf"= {b_star / 6:.3g}" in tex
    # The model's pair at T = 0 is the same pair: t(B_std)/t(B_fast) = S and B_std/B_fast = S·Pm.
    fm = fast_mode_batches(A, 2.5, 6.0, 0.0)
    assert fm.batch_standard == pytest.approx(2.5 * b_star, rel=1e-3)
    assert fm.batch_fast == pytest.approx(b_star / 6, rel=1e-3)
    solved = fast_mode.solved(A, fm)
    assert rf"B_{{std}} = {2.5 * b_star:.0f},\ B_{{fast}} = {b_star / 6:.3g}" in solved


def test_fast_mode_with_kv_is_the_models_pair_or_none():
    for s, T in ((A, 8192.0), (B, 2048.0)):
        fm = fast_mode_batches(s, 2.5, 6.0, T)
        tex = fast_mode.solved(s, fm)
        assert rf"B_{{std}} = {fast_mode.tex_batch(fm.batch_standard)},\ " in tex
        assert tex.endswith(rf"B_{{fast}} = {fast_mode.tex_batch(fm.batch_fast)}")
    # Beyond the latency floor: no pair.
    none = fast_mode_batches(A, 100.0, 1.01, 8192.0)
    assert none.batch_standard is None and fast_mode.solved(A, none).endswith(r"\text{no solution}")


def test_chosen_batches():
    # A at T = 8,192, B_std = 96, B_fast = 6 (both memory-bound): t = (W + B·kv(T)) / (C·bw).
    t_std = (W_A + 96 * KV_A * 8192) / (8 * BW_A)
    t_fast = (W_A + 6 * KV_A * 8192) / (8 * BW_A)
    fm = fast_mode_forward(A, 96.0, 6.0, 8192.0)
    assert (fm.t_step_standard_s, fm.t_step_fast_s) == pytest.approx((t_std, t_fast), rel=1e-12)
    tex = fast_mode.chosen(fm)
    assert rf"= {t_std / t_fast:.3g},\qquad" in tex and tex.endswith(rf"= {(t_fast / 6) / (t_std / 96):.3g}")


# ---------------------------------------------------------------- the KV crossovers

def test_kv_crossovers_closed_form():
    # T× = W/(B·kv_tok): A, B = 64: 141.2e9 / (64 × 327,680) = 6,733.  B, B = 256: 671e9 / (256 × 35,136) = 74,599.
    # T_c = 2·Na·bw/(F·kv_tok): A 2 × 70.6e9 × 3.35e12 / (989.4e12 × 327,680) = 1,459;
    #                           B 2 × 37e9 × 8e12 / (5e15 × 35,136) = 3,370.
    for s, w, na, F, bw, kv, b in ((A, W_A, NA_A, F_A, BW_A, KV_A, 64), (B, W_B, NA_B, F_B, BW_B, KV_B, 256)):
        t_x, t_c = w / (b * kv), 2 * na * bw / (F * kv)
        assert t_x == pytest.approx(float(kv_crossover_context(s, b)), rel=1e-9)
        assert t_c == pytest.approx(context_never_compute_bound(s), rel=1e-9)
        assert kv_cache.weights_crossover(s, b).endswith(rf"= {tex_int(t_x)}\ \text{{tokens}}")
        tex = kv_cache.compute_crossover(s)
        assert tex.startswith(r"T_c = \frac{2\,N_a\cdot bw}{F\cdot kv_{tok}}")
        assert tex.endswith(rf"= {tex_int(t_c)}\ \text{{tokens}}")


def test_kv_crossovers_solved_numerically_with_windowed_layers():
    # gpt-oss-120b on one H100 (bf16): kv(T) = 36,864·T + 36,864·min(T, 128).
    # T_c: kv = 2 × 5.1e9 × 3.35e12 / 989.4e12 = 34.5 MB → T = 34.5e6/36,864 − 128 = 809.
    # T× at B = 8: kv = W/B = 233.6e9 / 8 = 29.2 GB → T = 29.2e9/36,864 − 128 = 792,000.
    s = System(HW["h100"], MD["gpt-oss-120b"])
    target = 2 * 5.1e9 * BW_A / F_A
    t_c = target / 36_864 - 128
    t_x = s.weight_bytes / 8 / 36_864 - 128
    assert t_c == pytest.approx(context_never_compute_bound(s), rel=1e-6)
    assert t_x == pytest.approx(float(kv_crossover_context(s, 8)), rel=1e-6)
    tex = kv_cache.compute_crossover(s)
    assert tex.startswith(r"kv(T_c) = 36.9\,\text{kB}\cdot T_c + 36.9\,\text{kB}\cdot\min(T_c, 128) = ")
    assert r"= 34.5\,\text{MB}\;\Rightarrow\; T_c = 809\ \text{tokens}" in tex
    tex = kv_cache.weights_crossover(s, 8)
    assert tex.startswith(r"kv(T_\times) = 36.9\,\text{kB}\cdot T_\times") and tex.endswith(
        rf"T_\times = {tex_int(t_x)}\ \text{{tokens}}")
    # the sparse √T rule has no closed form either: the read terms say so
    sq = A.with_(sparse_attention="sqrt", sparse_param=2048.0)
    assert r"\sqrt{K\,T_c}\ (T_c > K = 2{,}048)" in kv_cache.compute_crossover(sq)


def test_tier_kv():
    # kv_tok = 2·Na·bw/(F·T_tier): 2 × 100e9 × 3.35e12 / (989.4e12 × 200,000) = 3,386 B per token (H100).
    by_hand = 2 * 100e9 * BW_A / (F_A * 200_000)
    assert kv_cache.tier_kv(A, 100e9, 200_000).endswith(rf"= {tex_int(by_hand)}\ \text{{B/token}}")


# ---------------------------------------------------------------- context limits

def test_reference_and_sparse_crossovers():
    # T_c^ref = 2·Na / ((F/bw)·kv_ref): 100e9 active, 2,048 elements × 2 B = 4,096 B on H100 (F/bw = 295.3): 165,327.
    ref = KVLayout(4096.0)
    by_hand = 2 * 100e9 / (F_A / BW_A * 4096)
    tex = context.reference_crossover(A, 100e9, ref)
    assert rf"{{295 \times 4.1\,\text{{kB}}}} = {tex_int(by_hand)}\ \text{{tokens}}" in tex
    # T_c(f) = T_c/f, T_c(√) = T_c²/K.  B: T_c = 3,369.8: f = 0.1 → 33,698; K = 2,048 → 5,545.
    t_c = 2 * NA_B * BW_B / (F_B * KV_B)
    tex = context.sparse_crossovers(B, 0.1, 2048.0)
    assert rf"= {tex_int(t_c / 0.1)}\qquad" in tex and tex.endswith(rf"= {tex_int(t_c ** 2 / 2048)}")
    # A: T_c = 1,459 ≤ K: the √T rule reads every token, the crossover does not move.
    assert context.sparse_crossovers(A, 0.1, 2048.0).endswith(r"= 1{,}459\ (T_c \le K\text{: every token read})")


# ---------------------------------------------------------------- memory tiers

def test_hold_or_recompute():
    # Flash, 300 s: kv/cap·p·t + kv/bw·p, p = $0.044/3600 s.
    #   A: 327,680/15.36e12 × 300 + 327,680/14e9 = 2.34e-5 s-worth … × 1.22e-5 $/s = 3.64e-10 $.
    #   B: 35,136 B: 3.91e-11 $.
    # Recompute 2·Na/F · p_chip: A 2 × 70.6e9/989.4e12 × 2.95/3600 = 1.17e-7 $; B 2 × 37e9/5e15 × 10.5/3600 = 4.32e-8 $.
    for s, kv, na, F, price in ((A, KV_A, NA_A, F_A, 2.95), (B, KV_B, NA_B, F_B, 10.5)):
        p = 0.044 / 3600
        tier = kv / 15.36e12 * p * 300 + kv / 14e9 * p
        rec = 2 * na / F * price / 3600
        assert tier == pytest.approx(float(cache_tier_costs([FLASH], kv, rec, 300.0).tier_usd[0]), rel=1e-12)
        assert rec == pytest.approx(float(recompute_cost(s)), rel=1e-12)
        tex = memory_tiers.hold_or_recompute(s, FLASH, "flash", kv, 300.0)
        assert rf"= {memory_tiers.tex_usd(tier)}\text{{ per token}}" in tex
        assert tex.endswith(rf"= {memory_tiers.tex_usd(rec)}\text{{ per token}}\end{{aligned}}")
    # HBM holds, nothing to read back: 327,680/80e9 × 2.95/3600 × 300 = 1.01e-6 $.
    tex = memory_tiers.hold_or_recompute(A, hbm_tier(HW["h100"]), "HBM", KV_A, 300.0)
    assert r"c_{\text{HBM}}(t) &= \frac{kv}{M}\,p\,t" in tex
    assert rf"= {memory_tiers.tex_usd(KV_A / 80e9 * 2.95 / 3600 * 300)}\text{{ per token}}" in tex


def test_drain_times():
    # capacity/bandwidth: H100 HBM 80e9/3.35e12 = 23.9 ms, flash 15.36e12/14e9 = 18.3 min.
    tex = memory_tiers.drain_times([hbm_tier(HW["h100"]), FLASH], ["HBM", "flash"])
    assert rf"= \text{{{duration(80e9 / 3.35e12)}}}" in tex and rf"= \text{{{duration(15.36e12 / 14e9)}}}" in tex
    assert duration(80e9 / 3.35e12) == "23.9 ms"


# ---------------------------------------------------------------- pipelining, MoE, prices, training

def test_memory_per_chip():
    # W/(C·P) + b·kv(T)/C.
    # A, b = 64, T = 8,192, P = 4: 141.2e9/32 = 4.41 GB + 64 × 2.68e9/8 = 21.5 GB = 25.9 GB ≤ 80 GB.
    # B, b = 256, T = 2,048, P = 2: 671e9/144 = 4.66 GB + 256 × 72.0e6/72 = 256 MB = 4.92 GB ≤ 186 GB.
    for s, w, kv, b, T, C, P, shown in (
            (A, W_A, KV_A, 64, 8192, 8, 4, r"4.41\,\text{GB} + 21.5\,\text{GB} = 25.9\,\text{GB}"),
            (B, W_B, KV_B, 256, 2048, 72, 2, r"4.66\,\text{GB} + 256\,\text{MB} = 4.92\,\text{GB}")):
        assert w / (C * P) + b * kv * T / C == pytest.approx(
            float(decode_step(s.with_(pipeline_stages=P), b, T).hbm_bytes_per_chip), rel=1e-12)
        tex = pipeline.memory_per_chip(s, b, T, P)
        assert shown in tex and r"&\le" in tex


def test_experts_and_alltoall():
    # DeepSeek-V3 over G GPUs: ⌈256/G⌉ experts each; 2·k·d·a·L = 2 × 8 × 7168 × 2 × 58 = 13.3 MB per token.
    # G = 72 (one domain), B = 256: 3.41 GB per step, 47.3 MB per GPU, 71/72 of it over 900 GB/s = 51.8 µs.
    # G = 144 (two domains): 23.7 MB per GPU, half over 50 GB/s scale-out = 237 µs.
    per_token = 2 * 8 * 7168 * 2 * 58
    for G, n, t_comm in ((72, 4, per_token * 256 / 72 * 71 / 72 / 900e9),
                         (144, 2, per_token * 256 / 144 * 72 / 144 / 50e9)):
        s = B.with_(chips=G)
        assert moe.experts_per_gpu(s).endswith(rf"\Big\lceil \frac{{256}}{{{G}}} \Big\rceil = {n}")
        tex = moe.alltoall_time(s, 256, 2.0)
        assert tex.endswith(rf"= {moe.tex_s(t_comm)}\end{{aligned}}")
    assert moe.tex_s(per_token * 256 / 72 * 71 / 72 / 900e9) == r"51.8\,\text{µs}"


def test_kv_from_tier():
    # kv = 2·Na / ((F/bw)·f·T×): 2 × 100e9 / (600 × 200,000) = 1,667 B; f = 0.5, 300, 128,000: 10,417 B.
    # kv_arch = L × 2 × d_head × n_kv × b: 1 × 2 × 128 × 8 × 1 = 2,048 B; 61 × 2 × 128 × 8 × 2 = 249,856 B.
    assert r"= 1{,}667\ \text{B/token}\\ " in prices.kv_from_tier(100e9, 600.0, 1.0, 200_000, 128, 8, 1.0, 1.0)
    tex = prices.kv_from_tier(100e9, 300.0, 0.5, 128_000, 128, 8, 61.0, 2.0)
    assert r"{300 \times 0.5\times 128{,}000} = 10{,}417\ \text{B/token}" in tex
    assert r"= 249{,}856\ \text{B/token}" in tex


def test_overtraining():
    # D_inf = R/n · days · 86,400; D_pre = 2·ineff_inf·D_inf/6; factor = D_pre/(20·Na).
    # 500e6 tok/s over 10 models for 60 days, ineff 3: D_pre = 259 T, 100e9 active → 130×.
    # 1e6 tok/s, 1 model, 180 days, ineff_inf 2: D_pre = 10.4 T, 37e9 active → 14×.
    for na, rate, days, models, i_inf, d_pre, factor in ((100e9, 500e6, 60.0, 10.0, 3.0, "259", "130"),
                                                         (37e9, 1e6, 180.0, 1.0, 2.0, "10.4", "14")):
        coef = {"c_rl": 3.0, "ineff_rl": 3.0, "ineff_inf": i_inf}
        by_hand = 2 * i_inf * rate / models * days * 86_400 / 6
        o = overtrain(na, rate, days, models=models, **coef)
        assert by_hand == pytest.approx(float(o.pretrain_tokens), rel=1e-12)
        assert by_hand / (20 * na) == pytest.approx(float(o.overtrain_factor), rel=1e-12)
        tex = training.overtraining(na, rate, days, models, **coef)
        assert rf"\frac{{{d_pre}\,\text{{T}}}}{{20\times" in tex and tex.endswith(rf"= {factor}\times")
        assert rf"= {d_pre}\,\text{{T}}\ \text{{tokens}}" in training.pretrain_tokens(na, rate, days, models, **coef)
        assert tex.split(" = ", 1)[1] in training.equal_costs(na, rate, days, models, **coef)


# ---------------------------------------------------------------- one equation, three places

def _deck_latex(step_key: str, view) -> tuple[str, ...]:
    step = next(s for s in wk.STEPS if s.key == step_key)
    slide = deck.build_slide(step, view)
    return slide.text_at(slide.active).latex


@pytest.fixture(scope="module")
def v1_view():
    """The dials of a version-1 link (tests.app.helpers.V1): H100 × Llama 3.1 70B, bf16, B = 64, T = 8k, C auto."""
    a = deck.make_parser().parse_args(["--hardware", "h100", "--model", "llama-3.1-70b", "--weight-dtype", "bf16",
                                       "--kv-dtype", "bf16", "--compute-dtype", "bf16", "--batch", "64",
                                       "--context", "8192", "--out", "x.html"])
    return deck.view_from_args(a)


@pytest.mark.parametrize(("page", "step", "pick"), [
    ("batch", "balance", lambda tex: [tex[0]]),                     # B*
    ("batch", "floor", lambda tex: [tex[2]]),                       # the step time
    ("kv-cache", "kv", lambda tex: [tex[1]]),                       # T_c
    ("memory-tiers", "tiers", lambda tex: [tex[1]]),                # hold or recompute
    ("context", "context", lambda tex: tex[:2]),                    # T_c, T_c^ref
    ("fast-mode", "fast", lambda tex: [tex[2]]),                    # the pair solved with KV
])
def test_page_walkthrough_and_deck_show_the_same_equation(v1_view, page, step, pick):
    shown = pick([str(t) for t in latex(app(V1, page=page))])
    n = 1 + [s.key for s in wk.STEPS].index(step)
    on_slide = [str(t) for t in latex(app({**V1, "wk_step": str(n)}, page="walkthrough"))]
    in_deck = list(_deck_latex(step, v1_view))
    built = list(next(s for s in wk.STEPS if s.key == step).build(v1_view).latex)
    assert on_slide == in_deck == built
    assert all(tex in in_deck for tex in shown), (shown, in_deck)


def test_plan_predicted_step_by_hand():
    """The fitted step of 64 sequences: dense 2.5 ms and attention 0.625 ms at peak ÷ η_c = 0.25 → 12.5 ms of
    compute against 8 ms of memory; 10 layers × 0.1 ms × (1 − e^(−64 × 0.01)) = 0.473 ms of fixed time."""
    import math

    from model.calibrate import Efficiency
    from ui.equations.plan import predicted_step

    fixed = 10 * 1e-4 * -math.expm1(-0.64)
    ev = {"t_dense_s": 10e-3, "t_expert_s": 0.0, "t_attn_s": 2.5e-3, "t_weights_s": 6e-3, "t_kv_s": 2e-3,
          "t_comm_s": 0.0, "t_fixed_s": fixed, "t_hops_s": 0.0, "t_step_s": 12.5e-3 + fixed, "bound": "compute"}
    tex = predicted_step(ev, Efficiency(bandwidth=0.5, compute=0.25, prompt_layer_s=1e-4), 64, 10, 0.01)
    assert r"\max(12.5\,\text{ms},\ 8\,\text{ms},\ 0\,\text{s}) + 0.473\,\text{ms} \\ &= 13\,\text{ms}" in tex
    assert r"\frac{2.5\,\text{ms}}{0.25} + \frac{0.625\,\text{ms}}{0.25} = 12.5\,\text{ms}" in tex
    assert r"10 \times 0.1\,\text{ms} \times \big(1 - e^{-64 \times 0.01}\big) = 0.473\,\text{ms}" in tex
    ev_mem = {**ev, "bound": "weights", "t_fixed_s": 0.0}
    tex = predicted_step(ev_mem, Efficiency(bandwidth=0.5, compute=0.25), 64, 10, 0.0)
    assert r"\frac{3\,\text{ms} + 1\,\text{ms}}{0.5} = 8\,\text{ms}" in tex and "t_{fixed}" not in tex
