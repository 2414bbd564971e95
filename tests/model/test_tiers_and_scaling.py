"""Memory tiers for a prompt cache (economics) and the Chinchilla loss trade-off (training)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model import System, presets
from model.economics import Tier, cache_tier_costs, hold_cost, recompute_cost, retrieve_cost
from model.training import (
    CHINCHILLA_FIT,
    chinchilla_loss,
    params_for_loss,
    size_for_quality,
    tokens_for_loss,
)

HBM = Tier("HBM", 80e9, 3.35e12, 2.95)          # one H100: 80 GB at 3.35 TB/s, $2.95/h
DDR = Tier("DDR", 1.5e12, 460e9, 1.0)
FLASH = Tier("flash", 7.68e12, 7e9, 0.2)
DISK = Tier("disk", 20e12, 270e6, 0.05)


def test_drain_times():
    # capacity / bandwidth: 80e9 / 3.35e12 = 23.9 ms (the lecture's ~20 ms); 1.5e12 / 460e9 = 3.26 s.
    assert HBM.drain_s == pytest.approx(0.02388, rel=1e-3)
    assert DDR.drain_s == pytest.approx(3.26, rel=1e-3)
    assert DISK.drain_s == pytest.approx(20e12 / 270e6)


def test_hold_and_retrieve_by_hand():
    kv = 327_680  # one Llama-70B token, bf16
    assert float(hold_cost(HBM, kv, 60)) == pytest.approx(kv / 80e9 * 2.95 / 3600 * 60)
    assert float(retrieve_cost(HBM, kv)) == pytest.approx(kv / 3.35e12 * 2.95 / 3600)


def test_recompute_cost_by_hand():
    # 2 · 70.6e9 FLOPs per token at 989e12 FLOP/s on a $2.95/h chip.
    s = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b"))
    assert float(recompute_cost(s)) == pytest.approx(2 * 70.6e9 / s.flops * s.hardware.price_usd_per_hour / 3600)


@settings(max_examples=50, deadline=None)
@given(st.floats(1e2, 1e7), st.floats(1e-12, 1e-3))
def test_cheapest_tier_moves_to_slower_tiers_as_hold_time_grows(kv, recompute):
    tiers = [HBM, DDR, FLASH, DISK]
    hold = np.geomspace(1e-3, 1e7, 400)
    c = cache_tier_costs(tiers, kv, recompute, hold)
    tier_idx = np.where(c.cheapest < len(tiers), c.cheapest, -1)
    held = tier_idx[tier_idx >= 0]
    assert np.all(np.diff(held) >= 0)      # never back to a faster tier


def test_chinchilla_loss_by_hand():
    # E + A/N^α + B/D^β at N = 70e9, D = 1.4e12 (Chinchilla itself).
    f = CHINCHILLA_FIT
    expect = f["E"] + f["A"] / 70e9 ** f["alpha"] + f["B"] / 1.4e12 ** f["beta"]
    assert float(chinchilla_loss(70e9, 1.4e12)) == pytest.approx(expect)
    assert 1.9 < expect < 2.0


def test_tokens_and_params_for_loss_invert_the_fit():
    L = float(chinchilla_loss(30e9, 3e12))
    assert float(tokens_for_loss(30e9, L)) == pytest.approx(3e12, rel=1e-9)
    assert float(params_for_loss(3e12, L)) == pytest.approx(30e9, rel=1e-9)
    assert np.isinf(tokens_for_loss(1e6, L))           # too small to ever get there


def test_inference_volume_pushes_to_smaller_overtrained_models():
    n = np.geomspace(1e9, 1e13, 801)
    L = float(chinchilla_loss(100e9, 2e12))
    none = size_for_quality(L, 0.0, n)
    assert none.best == none.chinchilla_best
    served = size_for_quality(L, 2.592e14, n)           # the lecture's 50M tok/s × 60 days
    assert n[served.best] < n[none.best]
    assert served.pretrain_tokens[served.best] / n[served.best] > 20 * 10
    # At the optimum the rising and falling costs are of one order (the lecture's equal-costs heuristic).
    ratio = served.pretrain_flops[served.best] / served.inference_flops[served.best]
    assert 0.2 < ratio < 5
