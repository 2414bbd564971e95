"""model/context.py: where the KV read overtakes compute, across chips and sparse-attention rules.

Expected values worked by hand from T_c = 2·Na·bw/(F·kv_tok) (lecture §2.5) and the lecture's numbers.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from model import KVLayout, context_never_compute_bound, decode_step, presets
from model.context import (
    LECTURE_ACTIVE_PARAMS,
    LECTURE_KV_ELEMENTS_PER_TOKEN,
    compute_crossover_context,
    cost_terms,
    decimal_year,
    fraction_crossover,
    generations,
    preset_dates,
    sqrt_crossover,
)

LLAMA70_KV = KVLayout(327_680.0)   # 80 layers × 2 × 8 KV heads × 128 × 2 B (bf16)


def test_llama70_on_h100_by_hand(sys70):
    # 2 · 70.6e9 · 3.35e12 / (989e12 · 327,680) = 4.7302e23 / 3.2408e20 = 1,459.6 tokens
    t = float(compute_crossover_context(LLAMA70_KV, 70.6e9, 989e12, 3.35e12))
    assert t == pytest.approx(1459.6, rel=1e-4)
    assert t == pytest.approx(context_never_compute_bound(sys70))      # the roofline's scalar version agrees


def test_the_lectures_200k():
    # §2.5: Na = 100B, F/bw = 600 (fp8 FLOP/s, 1-byte KV), 1,667 B/token → 2e11 / (600 · 1,666.7) = 200,000
    t = float(compute_crossover_context(KVLayout(1e11 / (300 * 200e3)), 100e9, 600.0, 1.0))
    assert t == pytest.approx(200_000, rel=1e-9)
    # The 2 × 128 × 8 = 2,048-element reference at matching precision is the same on any dtype pair:
    # bf16 (F/bw 300, 4,096 B) and fp8 (F/bw 600, 2,048 B) both give 2e11 / 1,228,800 = 162,760 tokens.
    assert LECTURE_KV_ELEMENTS_PER_TOKEN == 2048 and LECTURE_ACTIVE_PARAMS == 100e9
    bf16 = float(compute_crossover_context(KVLayout(2048 * 2.0), 100e9, 300.0, 1.0))
    fp8 = float(compute_crossover_context(KVLayout(2048 * 1.0), 100e9, 600.0, 1.0))
    assert bf16 == pytest.approx(fp8) == pytest.approx(162_760.4, rel=1e-6)


def test_vectorised_over_chips_is_elementwise():
    F = np.array([312e12, 989.4e12, 2.25e15])      # A100, H100, B200 bf16
    bw = np.array([2.039e12, 3.35e12, 8e12])
    t = compute_crossover_context(LLAMA70_KV, 70.6e9, F, bw)
    assert t.shape == (3,)
    assert_allclose(t, [float(compute_crossover_context(LLAMA70_KV, 70.6e9, f, b)) for f, b in zip(F, bw)])
    # A100's F/bw = 153 is about half of H100's 295, so its crossover is about twice as far out
    assert t[0] / t[1] == pytest.approx((989.4e12 / 3.35e12) / (312e12 / 2.039e12))


def test_sparse_rules_closed_forms_and_solver_agree():
    dense = float(compute_crossover_context(LLAMA70_KV, 70.6e9, 989e12, 3.35e12))
    # reading f = 0.1 → T_c / 0.1 = 14,596
    frac = float(compute_crossover_context(LLAMA70_KV, 70.6e9, 989e12, 3.35e12, "fraction", 0.1))
    assert frac == pytest.approx(dense / 0.1, rel=1e-9) == pytest.approx(float(fraction_crossover(dense, 0.1)))
    # √T rule with K = 512 < T_c: √(512·T) = 1,459.6 → T = 1,459.6² / 512 = 4,161
    sq = float(compute_crossover_context(LLAMA70_KV, 70.6e9, 989e12, 3.35e12, "sqrt", 512.0))
    assert sq == pytest.approx(dense ** 2 / 512, rel=1e-9) == pytest.approx(4161, rel=1e-3)
    assert sq == pytest.approx(float(sqrt_crossover(dense, 512.0)))
    # with K = 2,048 > T_c every token up to the crossover is read: the dense answer stands
    assert float(sqrt_crossover(dense, 2048.0)) == dense
    assert float(compute_crossover_context(LLAMA70_KV, 70.6e9, 989e12, 3.35e12, "sqrt", 2048.0)) == \
        pytest.approx(dense, rel=1e-9)


def test_an_array_of_fractions_in_one_call():
    f = np.array([0.001, 0.01, 0.1, 1.0])
    t = compute_crossover_context(LLAMA70_KV, 70.6e9, 989e12, 3.35e12, "fraction", f)
    assert_allclose(t, 1459.598 / f, rtol=1e-5)


def test_windowed_layers_solved_numerically():
    # kv(T) = 1,000·T + 500·min(T, 100); target 2·Na·bw/F = 2e6 (Na = 1e6, F = bw = 1):
    # past the window 1,000·T + 50,000 = 2e6 → T = 1,950
    kv = KVLayout(1000.0, 500.0, 100.0)
    assert float(compute_crossover_context(kv, 1e6, 1.0, 1.0)) == pytest.approx(1950.0, rel=1e-9)
    # windowed only: the read stops growing at 1,500·100 = 150,000 B → never reaches 2e6
    assert float(compute_crossover_context(KVLayout(0.0, 1500.0, 100.0), 1e6, 1.0, 1.0)) == np.inf


def test_dates_and_generations():
    assert decimal_year("2022-03") == pytest.approx(2022 + 2 / 12)
    assert decimal_year("2020") == 2020.0
    assert np.isnan(decimal_year("soon"))
    d = preset_dates("hardware")
    assert d["h100"] == "2022-03" and d["a100"] == "2020-11"     # presets/hardware.yaml entry dates
    hws = presets.hardware_presets()
    g = generations(hws, "bf16")
    assert "lecture-gpu" not in g.keys and not g.skipped             # illustrative chip left out
    assert list(g.year) == sorted(g.year) and g.keys[0] == "a100"    # oldest first
    i = g.keys.index("h100")
    assert g.flops_per_byte[i] == pytest.approx(989.4e12 / 3.35e12)  # 295.3, the lecture's "≈ 300"
    assert g.flops.shape == g.hbm_bandwidth.shape == g.year.shape == (len(g.keys),)
    g8 = generations(hws, "fp8")
    assert "NVIDIA A100 SXM4 80GB" in g8.skipped and "a100" not in g8.keys   # no fp8 tensor cores
    assert g8.flops[g8.keys.index("h100")] == 1978.9e12


def test_cost_terms_split_the_step(sys70):
    r = decode_step(sys70, 64.0, np.array([1024.0, 8192.0, 1e6]))
    t = cost_terms(r)
    # the larger side of max(matmul, weights + kv) is the whole cost
    top = np.maximum(t["matmul"], t["weights + kv"])
    assert_allclose(top, r.usd_per_mtok)
    assert_allclose(t["weights"] + t["kv"], t["weights + kv"])
    # the matmul cost per token does not depend on context
    assert_allclose(t["matmul"], t["matmul"][0])
