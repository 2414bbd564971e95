"""model/training.py: the lecture's over-training arithmetic (§2.11, flashcards)."""

import pytest

from model.training import overtrain


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
