"""model/speculative.py against values worked out by hand."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from model import Deployment, Hardware, ModelArch, Precision, System
from model.speculative import break_even_acceptance, expected_tokens_per_step, speculative_step

# A toy chip and model with round numbers: F = 1e15 FLOP/s, bw = 1e12 B/s, $2/h; 1e9 params at bf16, so
# W = 2e9 B and t_weights = W / bw = 2 ms; t_matmul = 2·Na·B / F = 2e-6·B s.  Context 0: no KV.
CHIP = Hardware(name="toy", flops_bf16_per_s=1e15, hbm_bytes=80e9, hbm_bandwidth_bytes_per_s=1e12,
                price_usd_per_hour=2.0)
MODEL = ModelArch(name="toy", total_params=1e9, active_params=1e9)
TOY = System(CHIP, MODEL, Precision(), Deployment(chips=1))


def test_expected_tokens_by_hand():
    # E = 1 + α + … + α^k
    assert_allclose(expected_tokens_per_step([0.0, 0.5, 0.8, 1.0], [3, 2, 3, 3]),
                    [1.0, 1 + 0.5 + 0.25, 1 + 0.8 + 0.64 + 0.512, 4.0])
    assert_allclose(expected_tokens_per_step(0.7, 0), 1.0)         # no draft: one token per step


@pytest.mark.parametrize(("a", "k"), [(-0.1, 3), (1.1, 3), (np.nan, 3), (0.5, -1)])
def test_bad_inputs_are_refused(a, k):
    with pytest.raises(ValueError):
        expected_tokens_per_step(a, k)


def test_memory_bound_step_gives_the_full_gain():
    # B = 100, k = 3: 4 positions → t_matmul = 2e-6 · 400 = 0.8 ms < t_weights = 2 ms: the step stays 2 ms.
    r = speculative_step(TOY, 100, 0, 0.8, 3)
    assert_allclose(r.t_step_plain_s, 2e-3)
    assert_allclose(r.t_step_s, 2e-3)
    assert_allclose(r.speedup, 2.952)
    assert_allclose(r.tokens_per_s_per_user, 2.952 / 2e-3)


def test_compute_bound_step_divides_the_gain_by_k_plus_one():
    # B = 2000: plain t_matmul = 4 ms > 2 ms; with 4 positions 16 ms.  Speed-up = E / 4.
    r = speculative_step(TOY, 2000, 0, 0.8, 3)
    assert_allclose(r.t_step_plain_s, 4e-3)
    assert_allclose(r.t_step_s, 16e-3)
    assert_allclose(r.speedup, 2.952 / 4)
    # $/Mtok: C·price/3600 · t_step / (B·E) · 1e6 = 2/3600 · 16e-3 / (2000 · 2.952) · 1e6
    assert_allclose(r.usd_per_mtok, 2 / 3600 * 16e-3 / (2000 * 2.952) * 1e6)
    assert_allclose(r.usd_per_mtok_plain, 2 / 3600 * 4e-3 / 2000 * 1e6)


def test_break_even_between_the_bounds():
    # B = 750: plain t_matmul = 1.5 ms < 2 ms → 2 ms; with 4 positions 6 ms → ratio 3.
    r = speculative_step(TOY, 750, 0, 0.5, 3)
    ratio = float(r.t_step_s / r.t_step_plain_s)
    assert_allclose(ratio, 3.0)
    a = float(break_even_acceptance(ratio, 3))
    assert_allclose(1 + a + a**2 + a**3, 3.0, rtol=1e-9)            # E(α) = 3 …
    assert a == pytest.approx(0.8105, abs=1e-3)                     # … at α ≈ 0.8105 (by hand, bisection)
    assert float(break_even_acceptance(1.0, 3)) == 0.0              # a free check pays at any α
    assert np.isnan(break_even_acceptance(4.5, 3))                  # E ≤ k + 1 = 4 never reaches 4.5


def test_arrays_broadcast():
    r = speculative_step(TOY, np.array([[100.0], [2000.0]]), 0, np.array([0.0, 0.8]), 3)
    assert r.speedup.shape == (2, 2)
    assert_allclose(r.speedup, [[1.0, 2.952], [0.25, 2.952 / 4]])
