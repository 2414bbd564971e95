"""model/economics.py: fast mode and what prices imply, against hand-derived values."""

import numpy as np
import pytest

from model import Deployment, System, decode_step, system_balance_batch
from model.economics import (
    decode_efficiency_from_price_ratio,
    fast_mode_batches,
    fast_mode_forward,
    kv_bytes_from_crossover,
    usd_per_mtok,
)


def test_fast_mode_closed_form_no_kv(lecture_gpu, lecture_deepseek):
    # docs/design.md "Closed forms": 6× price for 2.5× speed ⇒ B_std = 2.5·B*, B_fast = B*/6 (B* = 2,400).
    s = System(lecture_gpu, lecture_deepseek, deployment=Deployment(chips=72))  # 1.4 TB needs a rack
    fm = fast_mode_batches(s, 2.5, 6.0, context=0)
    assert fm.batch_standard == pytest.approx(6000.0, rel=1e-9)
    assert fm.batch_fast == pytest.approx(400.0, rel=1e-9)
    assert fm.batch_standard_over_balance == pytest.approx(2.5, rel=1e-9)
    assert fm.batch_fast_over_balance == pytest.approx(1 / 6, rel=1e-9)
    assert fm.reason == ""


def test_fast_mode_forward_inverts_the_solver(sys70):
    # With KV at 1,000 tokens (numerical solve), feeding the batches back reproduces the quote.
    fm = fast_mode_batches(sys70.with_(chips=8), 2.0, 3.0, context=1000)
    assert fm.reason == "", fm.reason
    back = fast_mode_forward(sys70.with_(chips=8), fm.batch_standard, fm.batch_fast, context=1000)
    assert back.speedup == pytest.approx(2.0, rel=1e-6)
    assert back.price_multiple == pytest.approx(3.0, rel=1e-6)


@pytest.mark.parametrize("dep", [dict(chips=8), dict(chips=8, mode="per-phase"),
                                 dict(chips=8, pipeline_stages=4, pipeline_hop_s=2e-4),
                                 dict(chips=8, mode="per-phase", pipeline_stages=2, pipeline_hop_s=1e-3)])
def test_fast_mode_solution_has_the_quoted_speedup_in_every_mode(sys70, dep):
    # The solver probes the step time from per-sequence terms; decode_step (the model the page draws)
    # must give the quoted speedup and price multiple at the batches it returns, in each step mode
    # and with pipeline hops (a constant added to both steps).
    s = sys70.with_(**dep)
    fm = fast_mode_batches(s, 1.5, 4.0, context=2048)
    assert fm.reason == "", fm.reason
    r = decode_step(s, np.array([fm.batch_standard, fm.batch_fast]), 2048)
    assert r.t_step_s[0] / r.t_step_s[1] == pytest.approx(1.5, rel=1e-9)
    assert r.usd_per_mtok[1] / r.usd_per_mtok[0] == pytest.approx(4.0, rel=1e-9)


def test_fast_mode_forward_by_hand(lecture_gpu, lecture_deepseek):
    # Both batches memory-bound (≤ B*): same step, so speedup 1 and price ∝ 1/B.
    s = System(lecture_gpu, lecture_deepseek)
    fm = fast_mode_forward(s, 2000, 500)
    assert fm.speedup == pytest.approx(1.0)
    assert fm.price_multiple == pytest.approx(4.0)


@pytest.mark.parametrize("S,Pm", [(1.0, 6.0), (2.5, 1.0), (0.5, 2.0)])
def test_not_a_fast_mode(lecture_gpu, lecture_deepseek, S, Pm):
    fm = fast_mode_batches(System(lecture_gpu, lecture_deepseek), S, Pm)
    assert fm.batch_fast is None and "fast mode needs" in fm.reason


def test_fast_batch_below_one_has_no_solution(lecture_gpu, lecture_deepseek):
    # B*/Pm < 1 when Pm > B* = 2,400.
    fm = fast_mode_batches(System(lecture_gpu, lecture_deepseek, deployment=Deployment(chips=72)), 2.0, 5000.0)
    assert fm.batch_fast is None and "< 1" in fm.reason


def test_standard_batch_must_fit(sys70):
    # At 8k context at most ~186 sequences fit on 8 H100s; KV-bound, 4× speed at 2× price needs
    # (W + 8kB)/(W + kB) = 4 ⇒ B_fast = 3W/(4k) ≈ 39.5 and B_std = 8 · 39.5 ≈ 316 > 186.
    fm = fast_mode_batches(sys70, 4.0, 2.0, context=8192)
    assert fm.batch_standard is None and fm.reason


def test_kv_from_price_lecture_1667():
    # Lecture §2.5: (bw/F) · Na / T with F/bw = 600 at fp8: 2·1e11·8e12 / (4.8e15·2e5) = 1,666.7 B.
    assert float(kv_bytes_from_crossover(100e9, 4.8e15, 8e12, 200e3)) == pytest.approx(1666.67, abs=0.01)
    # With H100 bf16 FLOP/s (F/bw = 295) it is ≈ 3.4 KB of bf16 KV.
    assert float(kv_bytes_from_crossover(100e9, 989e12, 3.35e12, 200e3)) == pytest.approx(3387.3, abs=0.1)


def test_kv_from_price_is_the_crossover(lecture_gpu, lecture_deepseek):
    # At the implied KV figure, the KV fetch equals matmul time at large batch and T = 200k.
    s = System(lecture_gpu, lecture_deepseek)
    kv = float(kv_bytes_from_crossover(s.model.active_params, s.flops, s.hbm_bandwidth, 200e3))
    r = decode_step(s.with_(kv_bytes_per_token=kv), 1e6, 200e3)
    assert float(r.t_kv_s) == pytest.approx(float(r.t_matmul_s))


def test_decode_efficiency_from_price_ratio():
    # Lecture §2.6: 5× output/input ⇒ decode MFU ≈ 1/5 of prefill.
    assert decode_efficiency_from_price_ratio(5.0) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        decode_efficiency_from_price_ratio(0.0)


def test_usd_per_mtok_formula():
    # 8 chips at $2/h, 20 ms step, 1,000 tokens per step: 16/3600·0.02/1000·1e6 = $0.0889/Mtok.
    assert float(usd_per_mtok(8, 2.0, 0.02, 1000)) == pytest.approx(16 / 3600 * 0.02 / 1000 * 1e6)


def test_unbatched_costs_about_1000x_more(lecture_gpu, lecture_deepseek):
    # Lecture §2.3: "a thousand times worse" — cost/token at B = 1 over cost at B* ≈ B* (weights-bound).
    s = System(lecture_gpu, lecture_deepseek)
    b_star = float(system_balance_batch(s))
    r = decode_step(s, np.array([1.0, b_star]), 0)
    assert r.usd_per_mtok[0] / r.usd_per_mtok[1] == pytest.approx(2400.0)


def test_weights_that_do_not_fit_have_no_fast_mode(lecture_gpu, lecture_deepseek):
    fm = fast_mode_batches(System(lecture_gpu, lecture_deepseek), 2.5, 6.0)  # 1.4 TB on one 192 GB chip
    assert fm.batch_standard is None and "weights alone do not fit" in fm.reason
