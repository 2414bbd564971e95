"""model/training.py: the lecture's over-training arithmetic (§2.11, flashcards)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.training import chip_seconds, overtrain, phase_costs


def test_lecture_overtraining_130x():
    # 50M tok/s × 60 days × 86,400 s = 2.592e14 ("≈ 200T"); Chinchilla 20 × 100B = 2e12;
    # default coefficients give D_pre = D_inf, so the factor is 2.592e14 / 2e12 = 129.6 (the "~100×").
    o = overtrain(100e9, 50e6, 60)
    assert float(o.inference_tokens) == pytest.approx(2.592e14)
    assert float(o.chinchilla_tokens) == pytest.approx(2e12)
    assert float(o.overtrain_factor) == pytest.approx(129.6)


def test_flashcard_ratios():
    # 6·D_pre = 3·D_RL·3 = 2·D_inf·3 ⇒ D_pre = 1.5·D_RL = D_inf.
    o = overtrain(100e9, 50e6, 60)
    assert float(o.pretrain_tokens) == pytest.approx(float(o.inference_tokens))
    assert float(o.pretrain_tokens) == pytest.approx(1.5 * float(o.rl_tokens))


def test_costs_are_equal():
    o = overtrain(37e9, 1e7, 30, c_rl=5.0, ineff_rl=2.0, ineff_inf=4.0)
    c_pre = 6 * 37e9 * float(o.pretrain_tokens)
    c_rl = 5.0 * 37e9 * float(o.rl_tokens) * 2.0
    c_inf = 2 * 37e9 * float(o.inference_tokens) * 4.0
    assert c_pre == pytest.approx(c_rl) and c_pre == pytest.approx(c_inf)


def test_500m_tok_s_two_months():
    # Lecture: 500M tok/s × 2 months ≈ 2.6e15 tokens.
    assert float(overtrain(1e9, 5e8, 60).inference_tokens) == pytest.approx(2.592e15)


# ---------------------------------------------------------------- the page's inputs: a lab's global rate, models

def test_global_rate_shared_by_ten_models():
    # Lecture §2.11: 500M tok/s over the lab, "divide by 5–10×" for a family → 50M tok/s per model;
    # 5e8 / 10 × 60 × 86,400 = 2.592e14 tokens, the same as the per-model call (and the CLI's flag).
    o = overtrain(100e9, 500e6, 60, models=10)
    assert float(o.inference_tokens) == pytest.approx(2.592e14)
    assert float(o.overtrain_factor) == pytest.approx(129.6)
    assert float(overtrain(100e9, 500e6, 60, models=5).inference_tokens) == pytest.approx(5.184e14)


def test_phase_costs_by_hand():
    # 6 · 100e9 · 2.592e14 = 1.5552e26 FLOP each; RL 3·3·100e9·1.728e14 = 1.5552e26; inference 2·3·100e9·2.592e14.
    o = overtrain(100e9, 50e6, 60)
    pc = phase_costs(100e9, o.pretrain_tokens, o.rl_tokens, o.inference_tokens)
    assert float(pc.pretrain_flops) == pytest.approx(1.5552e26)
    assert float(pc.rl_flops) == pytest.approx(1.5552e26)
    assert float(pc.inference_flops) == pytest.approx(1.5552e26)
    assert float(pc.total_flops) == pytest.approx(4.6656e26)


def test_chip_seconds_by_hand():
    # 1.5552e26 FLOP at 989.4e12 FLOP/s (H100 bf16 dense, MFU 1) = 1.5718e11 chip-s = 1.819e6 chip-days.
    assert float(chip_seconds(1.5552e26, 989.4e12)) / 86_400 == pytest.approx(1.5552e26 / 989.4e12 / 86_400)
    assert float(chip_seconds(1.5552e26, 989.4e12)) / 86_400 == pytest.approx(1.819e6, rel=1e-3)


@settings(max_examples=80, deadline=None)
@given(st.floats(1e8, 1e13), st.floats(1e3, 1e11), st.floats(1, 3650), st.floats(1, 1000), st.floats(2, 6),
       st.floats(1, 20), st.floats(1, 20))
def test_the_heuristic_spends_exactly_a_third_on_each_phase(na, rate, days, models, c_rl, i_rl, i_inf):
    # What "equal thirds" means in the lecture's own arithmetic: by construction, for any inputs.
    o = overtrain(na, rate, days, models=models, c_rl=c_rl, ineff_rl=i_rl, ineff_inf=i_inf)
    pc = phase_costs(na, o.pretrain_tokens, o.rl_tokens, o.inference_tokens, c_rl=c_rl, ineff_rl=i_rl,
                     ineff_inf=i_inf)
    for part in (pc.pretrain_flops, pc.rl_flops, pc.inference_flops):
        assert float(part / pc.total_flops) == pytest.approx(1 / 3, rel=1e-12)
    assert float(o.inference_tokens) == pytest.approx(rate / models * days * 86_400, rel=1e-12)


def test_broadcasts_one_call_for_a_chart():
    o = overtrain(np.array([10e9, 100e9])[:, None], np.geomspace(1e6, 1e9, 4)[None, :], 60, models=10)
    assert o.overtrain_factor.shape == (2, 4)
    # factor ∝ rate / Na: ten times the params, a tenth of the factor
    assert np.allclose(o.overtrain_factor[0] / o.overtrain_factor[1], 10.0)
