"""model/remat.py: activation memory of each strategy and the compute it costs, against hand-worked numbers.

Per-layer activation bytes: Korthikanti et al. 2022 (arXiv 2205.05198, §4): s·b·h·(34 + 5·a·s/h),
34·sbh with flash attention (the s×s tensors dropped), every term ÷ t with tensor + sequence parallelism.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from model import remat


def test_per_layer_bytes_korthikanti():
    # flash: 34 · 2048 · 1 · 4096 = 285,212,672 B
    assert float(remat.activation_bytes_per_layer(2048, 1, 4096, 32)) == 285_212_672
    # stored scores, a = 32: 34 + 5·32·2048/4096 = 34 + 80 = 114 → 2048 · 4096 · 114 = 956,301,312 B
    assert float(remat.activation_bytes_per_layer(2048, 1, 4096, 32, "stored")) == 956_301_312
    # GPT-3 175B in the paper (h = 12288, a = 96, s = 2048): 5·96·2048/12288 = 80 as well → 114·sbh
    a_gpt3 = float(remat.activation_bytes_per_layer(2048, 1, 12288, 96, "stored"))
    assert a_gpt3 == 2048 * 12288 * 114
    # tensor + sequence parallel over t = 8: everything ÷ 8; micro-batch 4: × 4
    assert float(remat.activation_bytes_per_layer(2048, 4, 12288, 96, "stored", 8)) == a_gpt3 * 4 / 8


def test_per_layer_bytes_broadcast_and_quadratic_in_s():
    s = np.array([1024.0, 2048.0, 4096.0])
    flash = remat.activation_bytes_per_layer(s, 1, 4096, 32)
    stored = remat.activation_bytes_per_layer(s, 1, 4096, 32, "stored")
    assert_allclose(flash, 34 * s * 4096)                       # linear in s
    assert_allclose(stored - flash, 5 * 32 * s ** 2)           # the s×s part: 5·a·s²·b
    with pytest.raises(ValueError, match="attention"):
        remat.activation_bytes_per_layer(1, 1, 1, 1, "paged")


def test_layer_input_and_sqrt_checkpoints():
    assert float(remat.layer_input_bytes(4096, 1, 8192)) == 2 * 4096 * 8192       # 67,108,864 B
    assert float(remat.layer_input_bytes(4096, 2, 8192, 8)) == 2 * 4096 * 2 * 8192 / 8
    # k = ⌈√L⌉: √80 = 8.94 → 9; √64 = 8; √1 = 1; √2 = 1.41 → 2
    assert_allclose(remat.sqrt_checkpoints([80, 64, 1, 2]), [9, 8, 1, 2])


def test_strategies_for_llama_70b_at_4k():
    # Llama 3.1 70B: L = 80, h = 8192; s = 4096, b = 1, t = 1, flash.
    A = 34 * 4096 * 8192                 # 1,140,850,688 B per layer
    x = 2 * 4096 * 8192                  # 67,108,864 B per layer input
    m = remat.activation_memory(80, A, x)
    assert float(m.store_all) == 80 * A == 91_268_055_040                 # 91.3 GB
    assert float(m.every_layer) == 80 * x + A == 6_509_559_808             # 6.51 GB
    assert float(m.sqrt_l) == 9 * x + 9 * A == 10_871_635_968             # k = 9, ⌈80/9⌉ = 9
    assert float(m.revnet) == 4 * x + A == 1_409_286_144                  # 1.41 GB
    assert float(m.checkpoints) == 9
    assert set(m.by_key()) == {"store", "every", "sqrt", "revnet"}


def test_memory_against_depth_shapes():
    L = np.arange(1.0, 401.0)
    A, x = 17.0, 1.0                     # Korthikanti's 34·sbh against a 2·sbh input: A = 17·x
    m = remat.activation_memory(L, A, x)
    assert m.store_all.shape == m.revnet.shape == L.shape
    assert_allclose(np.diff(m.store_all), A)                     # linear, slope A
    assert_allclose(np.diff(m.every_layer), x)                   # linear, slope x
    assert np.all(m.revnet == 4 * x + A)                          # flat in depth
    assert np.all(m.sqrt_l <= m.store_all + x)                    # never (much) worse than storing all
    # √L checkpoints only beat per-layer ones past L = (A/x)² = 289: at 100, 10x + 10A = 180 > 80x + A = 117;
    # at 400, 20x + 20A = 360 < 400x + A = 417.
    assert float(remat.sqrt_break_even_layers(A, x)) == 289.0
    assert m.sqrt_l[99] == 180 and m.every_layer[99] == 117
    assert m.sqrt_l[399] == 360 and m.every_layer[399] == 417


def test_causal_pairs_and_forward_flops():
    # Σ_{p=1}^{10} min(p, 4) = 1 + 2 + 3 + 4 + 6·4 = 34; without a window 10·11/2 = 55
    assert float(remat.causal_pairs(10, 4)) == 34
    assert float(remat.causal_pairs(10)) == 55
    assert_allclose(remat.causal_pairs([3, 10], 4), [6, 34])
    # b = 2, Na = 1e9, s = 1000: 2 · 2·1e9·1000 = 4e12, plus attention 1e6 FLOP per pair · 500,500 pairs · 2
    assert float(remat.forward_flops(1e9, 1000, 2)) == 4e12
    assert float(remat.forward_flops(1e9, 1000, 2, 1e6)) == pytest.approx(4e12 + 2 * 1e6 * 500_500)
    # windowed layers: 1e5 FLOP per pair over min(p, 100) pairs: 100·101/2 + 900·100 = 95,050
    assert float(remat.forward_flops(0, 1000, 1, 0, 1e5, 100)) == pytest.approx(1e5 * 95_050)


def test_step_flops_one_extra_forward():
    f = remat.strategy_flops(2e15)
    assert float(f["store"]) == 6e15                  # forward + backward (2×): the 6·N·D rule
    assert all(float(f[k]) == 8e15 for k in ("every", "sqrt", "revnet"))   # + one recomputed forward
    assert float(f["revnet"] / f["store"]) == pytest.approx(4 / 3)         # +33 %
    assert float(remat.step_time(8e15, 8, 1e15)) == 1.0                    # 8e15 FLOP on 8 chips of 1 PFLOP/s


def test_kv_cache_trade_mirror():
    # Llama 3.1 70B on H100 at T = 8192: 327,680 B/token → 2.684 GB held; read 2.684e9/3.35e12 = 0.801 ms;
    # recompute 2·70.6e9·8192/989e12 = 1.1696 s; ratio = 2·Na·bw/(F·kv_tok) = 1,459.6 (= the context where
    # the KV read equals the matmuls, lecture §2.5).
    t = remat.kv_cache_trade(8192 * 327_680, 8192, 70.6e9, 989e12, 3.35e12)
    assert float(t["held_bytes"]) == 8192 * 327_680
    assert float(t["read_s"]) == pytest.approx(8.013e-4, rel=1e-3)
    assert float(t["recompute_s"]) == pytest.approx(1.1696, rel=1e-4)
    assert float(t["speedup"]) == pytest.approx(1459.6, rel=1e-4)
    zero = remat.kv_cache_trade(0.0, 0.0, 70.6e9, 989e12, 3.35e12)
    assert float(zero["speedup"]) == np.inf and float(zero["recompute_s"]) == 0.0
