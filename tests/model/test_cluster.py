"""model/cluster.py against hand-derived values (lecture §1.6–1.8, §2.9–2.10)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from model import Deployment, System, decode_step, presets
from model.cluster import (
    alltoall_bytes_per_token,
    busiest_gpu_experts,
    expected_distinct_experts,
    expert_bytes,
    experts_per_gpu,
    largest_model_params,
    moe_alltoall,
    moe_layer_count,
    pipeline,
    pipeline_cut_check,
    pipeline_cut_ratio,
    tensor_parallel_allreduce_time,
    touched_weight_bytes_per_gpu,
    training_bubble_fraction,
)


@pytest.fixture
def dsv3_gb200():
    return System(presets.get("hardware", "gb200"), presets.get("model", "deepseek-v3"),
                  deployment=Deployment(chips=64))


def test_deepseek_256_experts_over_64_gpus_is_4():
    # Lecture §2.9: 256 experts on 64 of a rack's 72 GPUs → 4 per GPU.
    assert experts_per_gpu(256, 64) == 4


def test_scale_up_domain_memory():
    # Lecture §2.9: 8 × Hopper 80 GB = 640 GB; a GB200 NVL72 domain holds ~13.4 TB (72 × 186 GB).
    h100, gb200 = presets.get("hardware", "h100"), presets.get("hardware", "gb200")
    assert h100.scaleup_domain_chips * h100.hbm_bytes == pytest.approx(640e9)
    assert gb200.scaleup_domain_chips * gb200.hbm_bytes == pytest.approx(13.4e12, rel=0.01)


def test_distinct_experts():
    # One token touches exactly k; many tokens touch all E.
    assert_allclose(expected_distinct_experts(256, 8, [1, 1e6]), [8, 256])


def test_busiest_gpu_one_expert_each():
    # E = G: each GPU holds one expert, touched with p = 1 − (1 − k/E)^B; the busiest GPU has one
    # touched expert unless none is touched: E[max] = 1 − (1 − p)^G.
    p = 1 - (1 - 8 / 64) ** 3
    assert float(busiest_gpu_experts(64, 8, 3, 64)) == pytest.approx(1 - (1 - p) ** 64)
    # Every expert touched at large batch: the busiest GPU reads all of its ⌈E/G⌉ = 4.
    assert float(busiest_gpu_experts(256, 8, 1e5, 64)) == pytest.approx(4.0)


def test_expert_bytes_deepseek():
    # One expert: 3 · 7168 · 2048 params per layer × 58 MoE layers × 2 B = 5.109 GB.
    per, always = expert_bytes(presets.get("model", "deepseek-v3"), 2.0)
    assert per == pytest.approx(3 * 7168 * 2048 * 58 * 2)
    assert always == pytest.approx(671e9 * 2 - 256 * per)


def test_touched_weights_reach_w_over_g_at_large_batch(dsv3_gb200):
    s = dsv3_gb200
    big, small = touched_weight_bytes_per_gpu(s, [1e5, 1.0])
    assert big == pytest.approx(s.weight_bytes / 64)
    assert small < 0.5 * big


def test_alltoall_by_hand(dsv3_gb200):
    # Per token: 2 (dispatch + combine) · k 8 · d 7168 · 2 B · 58 MoE layers = 13,303,808 B.
    per_token = 2 * 8 * 7168 * 2 * 58
    assert alltoall_bytes_per_token(dsv3_gb200.model) == per_token
    a = moe_alltoall(dsv3_gb200, 2048)
    # 64 GPUs inside the 72-GPU domain: 63/64 of a GPU's traffic on NVLink (900 GB/s per direction).
    assert float(a.bytes_per_gpu) == pytest.approx(2048 * per_token / 64)
    assert float(a.t_scaleup_s) == pytest.approx(2048 * per_token / 64 * 63 / 64 / 900e9)
    assert float(a.share_scaleout) == 0.0


def test_comm_jumps_when_the_expert_layer_leaves_the_domain(dsv3_gb200):
    # One rack bounds an expert layer: at 144 GPUs half of each GPU's traffic crosses the 50 GB/s NIC.
    a = moe_alltoall(dsv3_gb200, 2048, gpus=np.array([64.0, 72.0, 144.0]))
    assert_allclose(a.share_scaleout, [0, 0, 0.5])
    assert a.t_comm_s[2] > 3 * a.t_comm_s[1]
    r = decode_step(dsv3_gb200, 2048, 4096, chips=np.array([72.0, 144.0]), t_comm=a.t_comm_s[1:])
    assert r.t_comm_s[1] == a.t_comm_s[2]


def test_dense_model_has_no_alltoall():
    s = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b"),
               deployment=Deployment(chips=8))
    assert float(moe_alltoall(s, 64).t_comm_s) == 0.0


def test_tensor_parallel_allreduce_by_hand():
    # Llama 3.1 70B on 8 H100s, B = 64: per layer 2 ring all-reduces of 64·8192·2 B, each moving
    # 2·7/8 of it at 450 GB/s, plus 2·7 hops of 2 µs; 80 layers.
    s = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b"),
               deployment=Deployment(chips=8))
    size = 64 * 8192 * 2
    expect = 80 * 2 * (2 * 7 / 8 * size / 450e9 + 2 * 7 * 2e-6)
    assert float(tensor_parallel_allreduce_time(s, 64, hop_latency_s=2e-6)) == pytest.approx(expect)


def test_cut_point_check_lecture():
    # §1.8: (1/8) · 2 · 8 activated experts · 1 layer per stage = 2 ≥ 1.
    assert float(pipeline_cut_ratio(8.0, 1.0, 8, 1)) == pytest.approx(2.0)
    # GB200: 50 GB/s NIC over 900 GB/s NVLink per direction → 1/18 · 16 = 0.89 < 1 at one layer per stage.
    assert float(pipeline_cut_ratio(900e9, 50e9, 8, 1)) == pytest.approx(16 / 18)


def test_cut_check_counts_moe_layers_only():
    # Only MoE layers carry the all-to-all.  DeepSeek-V3: 61 layers, the first 3 dense (config.json
    # first_k_dense_replace 3) → 58 MoE; P = 4 → 14.5 per stage; GB200 50/900 GB/s, k = 8:
    #   (50/900) · 2 · 8 · 14.5 = 12.889   (counting all 61 layers would give 13.556).
    dsv3 = presets.get("model", "deepseek-v3")
    assert moe_layer_count(dsv3) == 58
    c = pipeline_cut_check(dsv3, 900e9, 50e9, [1, 2, 4])
    assert_allclose(c.moe_layers_per_stage, [58, 29, 14.5])
    assert np.isnan(c.ratio[0]) and "no cut" in c.reason[0]                   # P = 1: there is no cut
    assert c.ratio[1:].tolist() == pytest.approx([50 / 900 * 16 * 29, 50 / 900 * 16 * 14.5])
    assert c.reason[1:] == ("", "")
    # Llama 4 Maverick: 48 layers, MoE every 2nd (interleave_moe_layer_step 2) → 24; k = 1; P = 2 → 12:
    #   (50/900) · 2 · 1 · 12 = 1.333   (all 48 layers would give 2.667, 2× off).
    mav = presets.get("model", "llama-4-maverick")
    assert moe_layer_count(mav) == 24
    assert float(pipeline_cut_check(mav, 900e9, 50e9, 2).ratio[0]) == pytest.approx(4 / 3)


def test_cut_check_has_no_answer_without_its_inputs(llama70, deepseek):
    dense = pipeline_cut_check(llama70, 900e9, 50e9, [2])
    assert np.isnan(dense.ratio[0]) and "dense" in dense.reason[0]
    assert moe_layer_count(llama70) == 0
    # A dense model illustrated with the lecture's k = 8 counts all its 80 layers: (1/8)·2·8·40 = 80 at P = 2.
    ill = pipeline_cut_check(llama70, 8.0, 1.0, [2], experts_per_token=8)
    assert float(ill.ratio[0]) == pytest.approx(80.0)
    nolinks = pipeline_cut_check(deepseek, None, 50e9, [2])
    assert np.isnan(nolinks.ratio[0]) and "bandwidth" in nolinks.reason[0]
    # An MoE model without n_moe_layers: every layer counts (the conftest DeepSeek has 61 layers, no count).
    assert deepseek.n_moe_layers is None and moe_layer_count(deepseek) == 61


def test_training_bubble():
    assert float(training_bubble_fraction(4, 4)) == pytest.approx(3 / 7)
    assert float(training_bubble_fraction(1, 8)) == 0.0


def test_pipeline_kv_per_chip_unchanged(dsv3_gb200):
    # §1.6: weights per chip fall as 1/P, KV per chip (micro-batch b) is the same for P = 1, 2, 4, 8.
    s = dsv3_gb200.with_(chips=8, pipeline_hop_s=3e-3)
    pm = pipeline(s, 64, 4096, np.array([1, 2, 4, 8]))
    assert_allclose(pm.weight_bytes_per_chip, s.weight_bytes / (8 * np.array([1, 2, 4, 8])))
    kv = 64 * 4096 * 70_272 / 8
    assert_allclose(pm.kv_bytes_per_chip, kv)
    # Latency: the same step plus P hops (none at P = 1); throughput: P micro-batches in flight.
    base = decode_step(s, 64, 4096)
    assert_allclose(pm.latency_s, base.t_step_s + np.array([0, 2, 4, 8]) * 3e-3)
    assert_allclose(pm.tokens_per_s, np.array([1, 2, 4, 8]) * 64 / pm.latency_s)


def test_largest_model_that_fits():
    # 8 H100s hold 640 GB; 64 sequences × 8k tokens of Llama-70B KV take 171.8 GB; the rest at 2 B/param.
    s = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b"),
               deployment=Deployment(chips=8))
    assert float(largest_model_params(s, 64, 8192)) == pytest.approx((640e9 - 64 * 8192 * 327_680) / 2)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["h100", "gb200", "tpu-v5e", "mi355x"]), st.floats(1, 1e4))
def test_latency_floor_non_increasing_in_domain_size(chip, batch):
    s = System(presets.get("hardware", chip), presets.get("model", "deepseek-v3"))
    chips = np.array([1, 2, 4, 8, 16, 64, 72, 144, 576], float)
    r = decode_step(s, batch, 0, chips=chips)
    assert np.all(np.diff(r.t_weights_s) <= 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 576), st.floats(1, 1e4))
def test_scaleout_share_zero_inside_the_domain(gpus, batch):
    s = System(presets.get("hardware", "gb200"), presets.get("model", "deepseek-v3"))
    a = moe_alltoall(s, batch, gpus=gpus)
    assert (float(a.share_scaleout) == 0.0) == (gpus <= 72)
