"""Property tests (hypothesis): monotonicity and invariances the roofline must have."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from model import Deployment, Hardware, ModelArch, Precision, System, decode_step, system_balance_batch

pos = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


@st.composite
def systems(draw, kv=True):
    hw = Hardware(name="h", flops_bf16_per_s=draw(st.floats(1e13, 1e16)),
                  hbm_bytes=draw(st.floats(1e10, 1e12)), hbm_bandwidth_bytes_per_s=draw(st.floats(1e11, 3e13)),
                  price_usd_per_hour=draw(st.floats(0.1, 20)))
    total = draw(st.floats(1e9, 2e12))
    sparsity = draw(st.floats(1, 64))
    m = ModelArch(name="m", total_params=total, active_params=total / sparsity,
                  kv_bytes_per_token=draw(st.floats(0, 1e6)) if kv else 0.0)
    dep = Deployment(chips=draw(st.integers(1, 576)), mode=draw(st.sampled_from(["lecture", "per-phase"])))
    return System(hw, m, Precision(), dep)


@settings(max_examples=60, deadline=None)
@given(systems(), st.floats(1, 1e5), st.floats(0, 1e6))
def test_step_time_non_decreasing_in_batch_and_context(s, b, t):
    batches = b * np.array([1.0, 1.5, 3.0, 10.0])
    r = decode_step(s, batches, t)
    assert np.all(np.diff(r.t_step_s) >= -1e-15 * r.t_step_s[:-1])
    contexts = t * np.array([1.0, 2.0, 4.0]) + np.array([0.0, 1.0, 2.0])
    r = decode_step(s, b, contexts)
    assert np.all(np.diff(r.t_step_s) >= -1e-15 * r.t_step_s[:-1])


@settings(max_examples=60, deadline=None)
@given(systems(kv=False), st.floats(1, 1e5))
def test_cost_per_token_non_increasing_in_batch_without_kv(s, b):
    r = decode_step(s, b * np.array([1.0, 2.0, 7.0, 100.0]), 0)
    assert np.all(np.diff(r.usd_per_mtok) <= 1e-12 * r.usd_per_mtok[:-1])


@settings(max_examples=60, deadline=None)
@given(systems(kv=False))
def test_at_balance_batch_matmul_equals_weights(s):
    b = float(system_balance_batch(s))
    if b >= 1:
        r = decode_step(s, b, 0)
        assert np.isclose(r.t_matmul_s, r.t_weights_s, rtol=1e-9)


@settings(max_examples=60, deadline=None)
@given(systems(kv=False), st.floats(1e-3, 1e3), st.integers(1, 576))
def test_balance_batch_independent_of_scale_and_chips(s, scale, chips):
    # Same sparsity, model scaled by any factor, any chip count: same B*.
    m = s.model
    bigger = s.with_(total_params=m.total_params * scale, active_params=m.active_params * scale, chips=chips)
    assert np.isclose(system_balance_batch(bigger), system_balance_batch(s), rtol=1e-9)
