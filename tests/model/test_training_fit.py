"""model/training.py beyond the lecture: the Chinchilla loss fit, and the cost-optimal size for a target loss under it.

What "total cost is minimised near equal thirds" can mean, made precise (the page states the same):
  * In the lecture's arithmetic the three costs are equal by construction (tests/model/test_training.py).
  * A trade-off needs a quality model.  The only one here is the Chinchilla loss fit L(N, D), which knows
    pretraining tokens but not RL, so the testable claim is about two terms: for a target loss and an
    inference volume, C(N) = 6·N·D(N) + 2·ineff·N·D_inf.  Along N the pretraining cost falls (on the
    over-trained side of the Chinchilla point) and the inference cost rises.
  * The equal-cost point (the heuristic's N) is not the minimum in general: at the minimum
    C_inf/C_pre = (α/β)·(A/N^α)/(B/D^β) − 1.  What does hold for any fit: on the over-trained side the
    equal-cost total is at most twice the minimum (there the total is 2·max(C_pre, C_inf), and max is
    least where the falling and rising costs cross).  On the under-trained side it can be far worse.
  * Numerically, at the lecture's inputs: within 1 % under Hoffmann et al.'s constants, 19 % under the
    Besiroglu et al. refit; the optimal split drifts with the inference volume.
Expected values come from a brute-force grid over N written out here, not from the model's solver.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from model.training import (
    BESIROGLU_FIT,
    CHINCHILLA_FIT,
    FITS,
    chinchilla_loss,
    chinchilla_optimal_size,
    cost_optimal_size,
    heuristic_size,
    loss_term_ratio,
    params_for_loss,
    params_for_loss_at_ratio,
    size_for_quality,
    smallest_params_for_loss,
    tokens_for_loss,
)

D_INF = 2.592e14            # 50M tok/s × 60 days × 86,400 s (lecture §2.11)


def brute(fit, L, d_inf, ineff=3.0, points=200_001):
    """By hand: D(N) = (B / (L − E − A/N^α))^(1/β) on a fine log grid of N; cost 6·N·D + 2·ineff·N·D_inf."""
    E, A, B, a, b = fit["E"], fit["A"], fit["B"], fit["alpha"], fit["beta"]
    n_min = (A / (L - E)) ** (1 / a)
    n = np.geomspace(n_min * (1 + 1e-9), n_min * 1e5, points)
    d = (B / (L - E - A / n ** a)) ** (1 / b)
    total = 6 * n * d + 2 * ineff * n * d_inf
    i = int(np.argmin(total))
    return n[i], d[i], total[i], 6 * n[i] * d[i] / total[i]


def lecture_loss(fit):
    # the heuristic's own model: 100B active trained on D_pre = D_inf = 2.592e14 tokens
    return fit["E"] + fit["A"] / 100e9 ** fit["alpha"] + fit["B"] / D_INF ** fit["beta"]


# ---------------------------------------------------------------- by hand

def test_lecture_target_loss_by_hand():
    # 1.69 + 406.4/1e11^0.34 + 410.7/2.592e14^0.28 = 1.69 + 0.07396 + 0.03781 = 1.8018 nats/token
    assert float(chinchilla_loss(100e9, D_INF)) == pytest.approx(1.8018, abs=2e-4)
    # … and the hand formula the other tests use for their targets gives the model's loss, under either fit.
    for fit in FITS.values():
        assert float(chinchilla_loss(100e9, D_INF, fit)) == pytest.approx(lecture_loss(fit), rel=1e-12)


def test_chinchilla_loss_at_chinchillas_own_point_by_hand():
    # E + A/N^α + B/D^β at N = 70e9, D = 1.4e12 (Chinchilla itself): 1.69 + 406.4/70e9^0.34 + 410.7/1.4e12^0.28.
    f = CHINCHILLA_FIT
    expect = f["E"] + f["A"] / 70e9 ** f["alpha"] + f["B"] / 1.4e12 ** f["beta"]
    assert float(chinchilla_loss(70e9, 1.4e12)) == pytest.approx(expect)
    assert 1.9 < float(chinchilla_loss(70e9, 1.4e12)) < 2.0


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


@pytest.mark.parametrize("fit_name", list(FITS))
def test_cost_optimum_equals_brute_force_at_the_lectures_numbers(fit_name):
    fit = FITS[fit_name]
    L = lecture_loss(fit)
    n, d, total, share = brute(fit, L, D_INF)
    opt = cost_optimal_size(L, D_INF, fit=fit)
    assert float(opt.params) == pytest.approx(n, rel=1e-3)
    assert float(opt.pretrain_tokens) == pytest.approx(d, rel=1e-3)
    assert float(opt.total_flops) <= total * (1 + 1e-12)          # the solver is at least as good as the grid
    assert float(opt.total_flops) == pytest.approx(total, rel=1e-8)
    assert float(opt.pretrain_flops / opt.total_flops) == pytest.approx(share, abs=1e-3)


def test_lecture_numbers_hoffmann_near_equal_refit_not():
    # Hoffmann et al.'s constants: N* ≈ 108B on ≈ 216T tokens, 45.5 % on pretraining; the heuristic's
    # 100B on 259T costs +0.72 % (brute force above, at the printed precision).
    L = lecture_loss(CHINCHILLA_FIT)
    opt = cost_optimal_size(L, D_INF)
    assert float(opt.params) == pytest.approx(108.2e9, rel=2e-3)
    assert float(opt.pretrain_tokens) == pytest.approx(216.4e12, rel=2e-3)
    assert float(opt.pretrain_flops / opt.total_flops) == pytest.approx(0.455, abs=2e-3)
    h = heuristic_size(L, D_INF)
    assert float(h.params) == pytest.approx(100e9, rel=1e-9)       # the heuristic's own model, recovered
    heur_total = 6 * 100e9 * D_INF + 6 * 100e9 * D_INF
    assert float(h.total_flops) == pytest.approx(heur_total, rel=1e-9)
    assert float(h.total_flops / opt.total_flops) - 1 == pytest.approx(0.0072, abs=5e-4)
    # Besiroglu et al.'s refit: the optimum spends only ~26 % on pretraining; equal costs cost ~19 % more.
    L = lecture_loss(BESIROGLU_FIT)
    opt = cost_optimal_size(L, D_INF, fit=BESIROGLU_FIT)
    assert float(opt.pretrain_flops / opt.total_flops) == pytest.approx(0.258, abs=3e-3)
    assert heur_total / float(opt.total_flops) - 1 == pytest.approx(0.19, abs=0.01)


def test_chinchilla_optimum_closed_form():
    # Pretraining alone: A/N^α : B/D^β = β : α (the loss's two terms in the ratio of the other exponent).
    L = float(chinchilla_loss(100e9, 2e12))
    c = chinchilla_optimal_size(L)
    assert float(loss_term_ratio(c.params, c.pretrain_tokens)) == pytest.approx(0.28 / 0.34, rel=1e-9)
    assert float(chinchilla_loss(c.params, c.pretrain_tokens)) == pytest.approx(L, rel=1e-12)
    n, d, total, _ = brute(CHINCHILLA_FIT, L, 0.0)
    assert float(c.params) == pytest.approx(n, rel=1e-3) and float(c.pretrain_tokens) == pytest.approx(d, rel=1e-3)
    # and the cost optimum with no inference is that point
    assert float(cost_optimal_size(L, 0.0).params) == pytest.approx(float(c.params), rel=1e-9)
    # the grid search of size_for_quality agrees within its grid step
    g = np.geomspace(1e10, 1e13, 3001)
    assert g[size_for_quality(L, 0.0, g).chinchilla_best] == pytest.approx(float(c.params), rel=3e-3)


def test_refit_keeps_chinchilla_near_twenty_tokens_per_param_and_the_rounded_fit_does_not():
    # Besiroglu et al. 2024: the refit's compute-optimal ratio stays ~20; the 2022 rounded constants give
    # ~100+ at 100B scale (one reason to show both).
    for fit, lo, hi in ((BESIROGLU_FIT, 10, 30), (CHINCHILLA_FIT, 60, 200)):
        L = fit["E"] + fit["A"] / 100e9 ** fit["alpha"] + fit["B"] / 2e12 ** fit["beta"]
        c = chinchilla_optimal_size(L, fit=fit)
        assert lo < float(c.pretrain_tokens / c.params) < hi


def test_twenty_tokens_per_param_point_by_substitution():
    L = float(chinchilla_loss(100e9, 2e12))
    n = float(params_for_loss_at_ratio(L, 20.0))
    assert n == pytest.approx(100e9, rel=1e-9)                   # 20·100B = 2T: the lecture's Chinchilla model
    assert np.isnan(params_for_loss_at_ratio(1.5, 20.0))          # below E = 1.69: unreachable


def test_smallest_size_that_can_reach_a_loss():
    L = 1.8
    n_min = float(smallest_params_for_loss(L))
    assert n_min == pytest.approx((406.4 / (1.8 - 1.69)) ** (1 / 0.34), rel=1e-12)
    assert np.isinf(heuristic_size(L, 1e10).params)               # D_pre = 1e10: B/D^β = 0.65 > L − E = 0.11
    assert np.isnan(cost_optimal_size(1.6, D_INF).params)         # below E: no answer, NaN


def test_under_trained_side_breaks_the_two_times_bound():
    # Target: the lecture's Chinchilla model (100B on 2T). With only D_inf = 1e12 tokens to serve the
    # equal-cost rule trains on 1e12 tokens — fewer than Chinchilla-optimal for this loss — so it needs a
    # huge model (~516B) and costs ~5× the optimum.  The 2× bound needs the over-trained side.
    L = float(chinchilla_loss(100e9, 2e12))
    h = heuristic_size(L, 1e12)
    c = chinchilla_optimal_size(L)
    assert float(h.params) > float(c.params)
    _, _, total, _ = brute(CHINCHILLA_FIT, L, 1e12)
    assert float(h.total_flops) / total > 2


# ---------------------------------------------------------------- properties

fits = st.sampled_from(list(FITS))


@settings(max_examples=60, deadline=None)
@given(fits, st.floats(0.02, 1.0), st.floats(9, 17), st.floats(1, 10))
def test_solver_is_the_minimum(fit_name, above_e, log_d_inf, ineff):
    fit = FITS[fit_name]
    L = fit["E"] + above_e
    d_inf = 10.0 ** log_d_inf
    n, d, total, share = brute(fit, L, d_inf, ineff, points=20_001)
    opt = cost_optimal_size(L, d_inf, ineff_inf=ineff, fit=fit)
    assert float(opt.total_flops) <= total * (1 + 1e-9)
    assert float(opt.total_flops) >= total * (1 - 1e-3)           # the grid is within its resolution of it
    assert float(chinchilla_loss(opt.params, opt.pretrain_tokens, fit)) == pytest.approx(L, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(fits, st.floats(0.02, 1.0), st.floats(9, 17), st.floats(1, 10))
def test_first_order_condition_sets_the_split(fit_name, above_e, log_d_inf, ineff):
    # d/dN [6·N·D(N) + k·N] = 0  ⇔  C_inf/C_pre = (α/β)·(A/N^α)/(B/D^β) − 1  (derived in the module docstring)
    fit = FITS[fit_name]
    L = fit["E"] + above_e
    opt = cost_optimal_size(L, 10.0 ** log_d_inf, ineff_inf=ineff, fit=fit)
    r = float(loss_term_ratio(opt.params, opt.pretrain_tokens, fit))
    lhs = float(opt.inference_flops / opt.pretrain_flops)
    assert lhs == pytest.approx(fit["alpha"] / fit["beta"] * r - 1, rel=1e-6, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(fits, st.floats(0.02, 1.0), st.floats(9, 17), st.floats(1, 10))
def test_equal_costs_is_within_twice_the_minimum_on_the_over_trained_side(fit_name, above_e, log_d_inf, ineff):
    fit = FITS[fit_name]
    L = fit["E"] + above_e
    d_inf = 10.0 ** log_d_inf
    h = heuristic_size(L, d_inf, ineff_inf=ineff, fit=fit)
    c = chinchilla_optimal_size(L, fit=fit)
    opt = cost_optimal_size(L, d_inf, ineff_inf=ineff, fit=fit)
    # the over-trained side only (about 3 draws in 4; the bound is nearly tight there — ratios up to ~1.96
    # in 2,000 random draws); the under-trained side has no such bound (test above)
    assume(np.isfinite(h.params) and h.params <= c.params)
    # at the heuristic's N the two costs are equal (that is what it means)
    assert float(h.pretrain_flops) == pytest.approx(float(h.inference_flops), rel=1e-9)
    assert float(opt.total_flops) <= float(h.total_flops) * (1 + 1e-9)
    assert float(h.total_flops) <= 2 * float(opt.total_flops) * (1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(fits, st.floats(0.02, 1.0), st.floats(1, 10))
def test_the_optimal_split_drifts_with_volume(fit_name, above_e, ineff):
    # Equal costs is the optimum at one inference volume only: pretraining's share at the optimum falls
    # from all (no inference) towards nothing as D_inf grows.
    fit = FITS[fit_name]
    L = fit["E"] + above_e
    d = np.geomspace(1e6, 1e20, 60)
    opt = cost_optimal_size(L, d, ineff_inf=ineff, fit=fit)        # one call for every volume
    share = opt.pretrain_flops / opt.total_flops
    assert np.all(np.diff(share) < 0)
    assert share[0] > 0.99 and share[-1] < 0.2
    # smaller models, more tokens, as volume grows
    assert np.all(np.diff(opt.params) < 0) and np.all(np.diff(opt.pretrain_tokens) > 0)
