"""model/plan.py and the terms it added to the step: hand-derived toy plans, the comm terms, chunked
prefill, infeasible targets, a brute-force search of a small space and the vectorised points held to
one-configuration-at-a-time `decode_step` / `prefill` calls.

The toy chip and model keep the arithmetic round:
  F = 1e15 FLOP/s (bf16 only), bw = 1e12 B/s, M = 100e9 B, $3.6/chip-hour (κ = 1e-3 $/chip-s),
  scale-out 50e9 B/s per chip, a domain of one chip
  N = Na = 10e9 params (bf16: W = 20e9 B), kv = 1e5 B/token (no attention shapes: no attention FLOPs)
  traffic I = 1,000 input, O = 100 output tokens → decode context I + O/2 = 1,050, longest 1,100
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from model import presets
from model.cluster import LAYOUTS, layout_comm_time, moe_alltoall, tensor_parallel_allreduce_time
from model.plan import (
    KV_DTYPES,
    MODES,
    PREFILL_BATCHES,
    WEIGHT_DTYPES,
    Config,
    Traffic,
    evaluate,
    plan,
    searchable_hardware,
)
from model.roofline import System, chunked_prefill, decode_step, prefill, prefill_attention_flops
from model.specs import Deployment, Hardware, ModelArch, Precision

TOY = Hardware(name="toy", flops_bf16_per_s=1e15, hbm_bytes=100e9, hbm_bandwidth_bytes_per_s=1e12,
               price_usd_per_hour=3.6, scaleout_bandwidth_bytes_per_s=50e9)
TOY_MODEL = ModelArch(name="toy-10b", total_params=10e9, active_params=10e9, kv_bytes_per_token=1e5)
ONE = {"weight_dtypes": ("bf16",), "kv_dtypes": ("bf16",), "max_chips": 1}
TRAFFIC = Traffic.single(1000, 100)


def toy_plan(hw=TOY, model=TOY_MODEL, traffic=TRAFFIC, **kw):
    args = {**ONE, "ttft_s": 0.5, "tpot_s": 0.03, **kw}
    return plan(model, {"toy": hw}, traffic, **args)


# ---------------------------------------------------------------- the terms the step gained

def test_layout_comm_time_tp_is_the_ring_all_reduce():
    # Llama 3.1 70B on 8 H100s, 64 tokens: per layer two ring all-reduces of 64·8192·2 B, each moving
    # 2·7/8 of it at 450 GB/s plus 2·7 hops of 1 µs; 80 layers.
    s = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b"), deployment=Deployment(chips=8))
    expect = 80 * 2 * (2 * 7 / 8 * 64 * 8192 * 2 / 450e9 + 2 * 7 * 1e-6)
    assert float(layout_comm_time(s, 64, "tp", link_latency_s=1e-6)) == pytest.approx(expect, rel=1e-12)
    assert float(layout_comm_time(s, 64, "tp", link_latency_s=1e-6)) == pytest.approx(
        float(tensor_parallel_allreduce_time(s, 64, hop_latency_s=1e-6)), rel=1e-15)
    assert float(layout_comm_time(s, 64, "none")) == 0.0
    assert float(layout_comm_time(s.with_(chips=1), 64, "tp")) == 0.0          # one chip: nothing to reduce
    with pytest.raises(ValueError, match="leaves the scale-up domain"):
        layout_comm_time(s.with_(chips=16), 64, "tp")
    with pytest.raises(ValueError, match="no routed experts"):
        layout_comm_time(s, 64, "ep")
    with pytest.raises(ValueError, match="choose one of"):
        layout_comm_time(s, 64, "dp")
    assert LAYOUTS == ("none", "tp", "ep")


def test_layout_comm_time_ep_is_the_moe_alltoall_across_domains():
    # DeepSeek-V3 over 16 H100s (domain 8): half the traffic stays on NVLink, half crosses the NICs.
    s = System(presets.get("hardware", "h100"), presets.get("model", "deepseek-v3"), deployment=Deployment(chips=16))
    a = moe_alltoall(s, 256)
    assert float(layout_comm_time(s, 256, "ep")) == float(a.t_comm_s)
    # 256 tokens · 2·8·7168·2 B · 58 MoE layers, 1/16 per GPU; 8/16 of it over 50 GB/s scale-out
    per_gpu = 256 * 2 * 8 * 7168 * 2 * 58 / 16
    assert float(a.t_comm_s) == pytest.approx(per_gpu * 8 / 16 / 50e9, rel=1e-12)


def test_tensor_parallel_on_a_4x8_slice_overtakes_the_weight_fetch():
    # The sharding check for a TPU v5e 4×8 slice (32 chips) serving Llama 3.1 70B in bf16, the kind the
    # JAX scaling book makes: per step the all-reduces cost 80 layers · 2 · 2·31/32 · B·8192·2 B / 200 GB/s
    # = B · 25.395 µs, the weights W/(C·bw) = 141.2e9/(32 · 819e9) = 5.3876 ms and the matmuls
    # 2·70.6e9·B/(32 · 197e12) = B · 22.398 µs.  Past B = 5.3876 ms / 25.395 µs ≈ 212 the collective,
    # not the weights, sets the step — and before the matmuls do (its slope is the larger).
    s = System(presets.get("hardware", "tpu-v5e"), presets.get("model", "llama-3.1-70b"),
               deployment=Deployment(chips=32))
    per_b = 80 * 2 * 2 * 31 / 32 * 8192 * 2 / 200e9
    assert per_b == pytest.approx(25.395e-6, rel=1e-4)
    t_w = 141.2e9 / (32 * 819e9)
    B = np.array([128.0, 256.0])
    r = decode_step(s, B, 0.0, t_comm=layout_comm_time(s, B, "tp"))
    assert r.bound.tolist() == ["weights", "comm"]
    assert float(r.t_step_s[0]) == pytest.approx(t_w, rel=1e-12)
    assert float(r.t_step_s[1]) == pytest.approx(256 * per_b, rel=1e-12)
    plain = decode_step(s, 256.0, 0.0)                 # without the term the step is compute-bound
    assert str(plain.bound) == "compute" and float(plain.t_step_s) < float(r.t_step_s[1])
    # The same 256 on a 2×4 slice: 80·2·2·7/8·256·16,384/200e9 = 5.87 ms, under both the weights,
    # W/(8·bw) = 21.55 ms, and the matmuls, 2·70.6e9·256/(8 · 197e12) = 22.94 ms: the narrower slice hides it.
    r8 = decode_step(s.with_(chips=8), 256.0, 0.0, t_comm=layout_comm_time(s.with_(chips=8), 256.0, "tp"))
    assert float(r8.t_comm_s) == pytest.approx(80 * 2 * 2 * 7 / 8 * 256 * 16384 / 200e9, rel=1e-12)
    assert str(r8.bound) == "compute"


def test_chunked_prefill_by_hand():
    s = System(TOY, TOY_MODEL)
    pf = chunked_prefill(s, 1000, 100)
    # x = a·I/O = 10 prompt tokens per sequence per step; 2·Na·x = 2e11 FLOP; KV writes 10 · 1e5 B.
    assert (pf.prompt_tokens, pf.matmul_flops, pf.attn_flops, pf.kv_write_bytes) == (10.0, 2e11, 0.0, 1e6)
    # A mix: shares 3:1 of (1000, 100) and (5000, 500): x = (0.75·1000 + 0.25·5000)/(0.75·100 + 0.25·500) = 10.
    mix = chunked_prefill(s, [1000, 5000], [100, 500], [3, 1])
    assert mix.prompt_tokens == pytest.approx(10.0) and mix.kv_write_bytes == pytest.approx(1e6)
    # Two tokens per step: prompts arrive twice as often per step.
    assert chunked_prefill(s.with_(tokens_per_step=2.0), 1000, 100).prompt_tokens == 20.0
    # Attention over the causal triangle, Llama 3.1 8B (32 layers · 4·32·128 FLOP per attended token):
    # a prompt of 1,000 attends Σ p = 1000·999/2 tokens; per step a/O of that.
    l8 = System(TOY, presets.get("model", "llama-3.1-8b"))
    per_tok = 32 * 4 * 32 * 128
    assert float(prefill_attention_flops(l8.kv, 1000)) == pytest.approx(per_tok * 1000 * 999 / 2)
    assert chunked_prefill(l8, 1000, 100).attn_flops == pytest.approx(per_tok * 1000 * 999 / 2 / 100)
    for bad in ([0], [1.5e400], [-1]):
        with pytest.raises(ValueError):
            chunked_prefill(s, bad, [100])


def test_decode_step_with_chunked_prefill_by_hand():
    # B = 94 at T = 1,050: matmul 2·Na·B·(1 + x)/F = 2e10·94·11/1e15 = 20.68 ms; memory W/bw + B·(kv·T + x·kv)/bw
    # = 20 + 94·(1.05e8 + 1e6)/1e12 s = 29.964 ms → weights-bound.  Without the prompts: 29.87 ms.
    s = System(TOY, TOY_MODEL)
    r = decode_step(s, 94.0, 1050.0, prefill=chunked_prefill(s, 1000, 100))
    assert float(r.t_matmul_s) == pytest.approx(20.68e-3, rel=1e-12)
    assert float(r.t_step_s) == pytest.approx(29.964e-3, rel=1e-12) and str(r.bound) == "weights"
    assert float(decode_step(s, 94.0, 1050.0).t_step_s) == pytest.approx(29.87e-3, rel=1e-12)
    # Per-phase mode: the prompts' attention goes to t_attn, not to the matmul.
    l8 = System(TOY, presets.get("model", "llama-3.1-8b"), deployment=Deployment(mode="per-phase"))
    pf = chunked_prefill(l8, 1000, 100)
    a = decode_step(l8, 8.0, 1050.0, prefill=pf)
    b = decode_step(l8, 8.0, 1050.0)
    assert float(a.t_attn_s - b.t_attn_s) == pytest.approx(8 * pf.attn_flops / 1e15, rel=1e-9)
    assert float(a.t_matmul_s - b.t_matmul_s) == pytest.approx(8 * pf.matmul_flops / 1e15, rel=1e-9)


def test_prefill_with_comm_and_without_is_unchanged():
    s = System(TOY, TOY_MODEL)
    p0 = prefill(s, 1000)
    # compute 2·Na·1000/F = 20 ms against memory W/bw + 1000·kv/bw = 20.1 ms
    assert float(p0.t_prefill_s) == pytest.approx(20.1e-3, rel=1e-12) and str(p0.bound) == "memory"
    p1 = prefill(s, 1000, t_comm=0.03)
    assert float(p1.t_prefill_s) == 0.03 and str(p1.bound) == "comm"


# ---------------------------------------------------------------- hand-derived plans

def test_aggregated_toy_tpot_binds():
    # TPOT 30 ms: memory 0.02 + 1.06e-4·B ≤ 0.03 → B ≤ 94.34; matmul 2.2e-4·B ≤ 0.03 → B ≤ 136 → B = 94.
    # HBM would hold (100e9 − 20e9)/(1e5 · 1,100) = 727 sequences.  $/token falls with B, so B = 94:
    #   t_step 29.964 ms, TTFT = prefill of 1,000 tokens = max(20 ms, 20.1 ms) = 20.1 ms
    #   $/Mtok out = κ · t_step(no prompts)/B · 1e6 = 1e-3 · 0.02987/94 · 1e6 = 0.317766
    #   $/Mtok in  = κ · (the prompts' KV writes, B·x·kv/bw)/(B·x) · 1e6 = 1e-3 · 1e-7 · 1e6 = 1e-4
    #   $/request  = (1,000 · 1e-4 + 100 · 0.317766)/1e6 = 3.18766e-5 = κ · t_step · O/B
    p = toy_plan(modes=("aggregated",))
    b = p.point(p.best)
    assert (b["batch"], b["chips"], b["mode"], b["bound"]) == (94, 1, "aggregated", "weights")
    assert b["max_batch_tpot"] == pytest.approx(0.01 / 1.06e-4) and b["max_batch_fit"] == pytest.approx(80e9 / 1.1e8)
    assert b["tpot_s"] == pytest.approx(0.029964, rel=1e-12) and b["ttft_s"] == pytest.approx(0.0201, rel=1e-12)
    assert b["usd_per_mtok_output"] == pytest.approx(1e-3 * 0.02987 / 94 * 1e6, rel=1e-12)
    assert b["usd_per_mtok_input"] == pytest.approx(1e-4, rel=1e-9)
    assert b["usd_per_request"] == pytest.approx(1e-3 * 0.029964 * 100 / 94, rel=1e-12)
    assert b["hbm_bytes_per_chip"] == pytest.approx(20e9 + 94 * 1.1e8) and b["context"] == 1050.0


def test_aggregated_toy_hbm_binds():
    # M = 30e9: (30e9 − 20e9)/1.1e8 = 90.9 sequences fit; TPOT 50 ms would allow 227 → B = 90,
    # t_step = 0.02 + 90 · 1.06e-4 = 29.54 ms; $/request = 1e-3 · 0.02954 · 100/90.
    p = toy_plan(hw=TOY.with_(hbm_bytes=30e9), modes=("aggregated",), tpot_s=0.05)
    b = p.point(p.best)
    assert b["batch"] == 90 and b["max_batch_fit"] < b["max_batch_tpot"]
    assert b["usd_per_request"] == pytest.approx(1e-3 * 0.02954 * 100 / 90, rel=1e-12)


def test_disaggregated_toy():
    # Decode alone: 0.02 + 1.05e-4·B ≤ 0.03 → B = 95, t_step = 29.975 ms, $/Mtok out = 1e-3·0.029975/95·1e6.
    # Prefill replica (one chip): a pass of b prompts takes max(b · 20 ms, 20 ms + b · 0.1 ms) — compute-bound
    # from b = 2, so b = 2, 4, … cost the same per token and the tie goes to b = 2: 40 ms, plus the KV
    # handed over, 1,000 · 1e5 B / 50e9 B/s = 2 ms → TTFT 42 ms; $/Mtok in = 1e-3 · 0.04/2000 · 1e6 = 0.02.
    # Prefill chips per decode chip: (0.04/2) / (0.029975 · 100/95) = 0.6339.
    p = toy_plan(modes=("disaggregated",))
    b = p.point(p.best)
    assert (b["batch"], b["prefill_batch"], b["prefill_chips"], b["decode_chips"]) == (95, 2, 1, 1)
    assert b["ttft_s"] == pytest.approx(0.042, rel=1e-12) and b["tpot_s"] == pytest.approx(0.029975, rel=1e-12)
    assert b["usd_per_mtok_output"] == pytest.approx(1e-3 * 0.029975 / 95 * 1e6, rel=1e-12)
    assert b["usd_per_mtok_input"] == pytest.approx(0.02, rel=1e-12)
    assert b["usd_per_request"] == pytest.approx((1000 * 0.02 + 100 * 1e-3 * 0.029975 / 95 * 1e6) / 1e6, rel=1e-12)
    assert b["prefill_decode_chip_ratio"] == pytest.approx(0.02 / (0.029975 * 100 / 95), rel=1e-12)
    # TTFT 30 ms rules out b = 2 (42 ms): one prompt a pass, 20.1 + 2 = 22.1 ms, $/Mtok in 0.0201.
    p1 = toy_plan(modes=("disaggregated",), ttft_s=0.03)
    b1 = p1.point(p1.best)
    assert b1["prefill_batch"] == 1 and b1["ttft_s"] == pytest.approx(0.0221, rel=1e-12)
    assert b1["usd_per_mtok_input"] == pytest.approx(0.0201, rel=1e-12)
    # Both modes: aggregated wins (3.19e-5 against 5.16e-5 per request) — the prompts ride on the weight read.
    both = toy_plan()
    assert both.point(both.best)["mode"] == "aggregated"


def test_throughput_sizes_replicas_by_hand():
    # M = 30e9 (B ≤ 90), 10 requests/s at ≤ 70 %: one replica must serve 14.29 requests/s, i.e.
    # B/(t_step(B) · O) ≥ 14.29 with t_step = 0.02 + 1.06e-4·B → B ≥ 33.7.  On the grid 90·2^(−k/8) the
    # batches near it are 37, 34, 31: 34 serves 34/(0.023604 · 100) = 14.40 (one replica), 31 only 13.31
    # (two).  $/hour ties for every batch from 34 up (one chip), and the tie goes to the faster: B = 34.
    p = toy_plan(hw=TOY.with_(hbm_bytes=30e9), modes=("aggregated",), tpot_s=0.05, throughput=10.0)
    b = p.point(p.best)
    assert p.ranked_by == "usd_per_hour"
    assert (b["batch"], b["replicas"], b["chips_total"]) == (34, 1, 1) and b["usd_per_hour"] == 3.6
    assert p.replicas() == {"replicas": 1, "prefill_replicas": 0, "chips": 1, "usd_per_hour": 3.6,
                            "requests_per_s": 10.0, "utilisation": 0.7}
    # 100 requests/s: at B = 90 a replica serves 30.47/s, 21.33 at 70 % → ⌈100/21.33⌉ = 5 replicas.
    p5 = toy_plan(hw=TOY.with_(hbm_bytes=30e9), modes=("aggregated",), tpot_s=0.05, throughput=100.0)
    b5 = p5.point(p5.best)
    assert b5["replicas"] == 5 and b5["chips_total"] == 5
    # Output tokens/s: 1,000 tokens/s of 100-token answers is 10 requests/s.
    pt = toy_plan(hw=TOY.with_(hbm_bytes=30e9), modes=("aggregated",), tpot_s=0.05, throughput=1000.0,
                  throughput_unit="tokens")
    assert pt.throughput_requests_per_s == 10.0 and pt.point(pt.best)["batch"] == 34


def test_a_mix_is_planned_on_the_context_it_holds():
    # Shares 3:1 of (1,000 → 100) and (9,000 → 900): sequences of the second class stay 9× longer, so
    # they are 0.25·900/(0.75·100 + 0.25·900) = 75 % of a batch; the context read is
    # 0.25·1,050 + 0.75·9,450 = 7,350 — not the mean request's 0.75·1,050 + 0.25·9,450 = 3,150.
    # HBM holds every sequence at the longest class, 9,900.
    mix = Traffic.mix([(1000, 100, 3), (9000, 900, 1)])
    assert mix.shares == (0.75, 0.25) and mix.longest == 9900
    p = toy_plan(traffic=mix, modes=("disaggregated",), tpot_s=0.1, ttft_s=1.0)
    b = p.point(p.best)
    assert b["context"] == pytest.approx(7350.0)
    assert b["hbm_bytes_per_chip"] == pytest.approx(20e9 + b["batch"] * 9900 * 1e5)
    # TTFT is the longer prompt's: a pass of 9,000 tokens (≥ 180 ms) plus its KV, 9,000 · 1e5/50e9 = 18 ms.
    assert b["ttft_s"] >= 0.18 + 0.018
    # A sliding-window model's read is not linear in T: the context is the one whose read matches.
    oss = presets.get("model", "gpt-oss-20b")
    s = System(TOY, oss)
    T = mix.decode_context(s.kv)
    target = 0.25 * s.kv.read_bytes(1050.0) + 0.75 * s.kv.read_bytes(9450.0)
    assert float(s.kv.read_bytes(T)) == pytest.approx(float(target), rel=1e-9)


def test_ties_go_to_fewer_chips_per_replica():
    # A domain of 4 and a dense model: at a compute-bound batch $/token is C·κ·(2·Na/(C·F)) on any C.
    hw = TOY.with_(scaleup_domain_chips=4, scaleup_bandwidth_bytes_per_s=1e15)
    m = ModelArch(name="toy-d", total_params=10e9, active_params=10e9, n_layers=10, d_model=1000, kv_bytes_per_token=0)
    p = plan(m, {"toy": hw}, TRAFFIC, ttft_s=10.0, tpot_s=10.0, weight_dtypes=("bf16",), kv_dtypes=("bf16",),
             max_chips=4, modes=("aggregated",))
    top = [p.point(i) for i in p.top]
    costs = [t["usd_per_request"] for t in top]
    assert costs[0] == pytest.approx(costs[1], rel=1e-9)
    assert top[0]["chips"] < top[1]["chips"]


# ---------------------------------------------------------------- nothing feasible

def test_tpot_below_the_weight_floor_closest_is_w_over_c_bw():
    # Four chips at most: the fastest a step can be is W/(C·bw) = 20e9/(4 · 1e12) = 5 ms (no KV, the
    # all-reduce of one token far smaller).  A 4 ms target is out of reach; the closest point is that floor.
    hw = TOY.with_(scaleup_domain_chips=4, scaleup_bandwidth_bytes_per_s=1e12)
    m = ModelArch(name="toy-d", total_params=10e9, active_params=10e9, n_layers=10, d_model=1000, kv_bytes_per_token=0)
    p = plan(m, {"toy": hw}, TRAFFIC, ttft_s=1.0, tpot_s=0.004, weight_dtypes=("bf16",), kv_dtypes=("bf16",),
             max_chips=4)
    assert p.best is None and p.binding == "tpot" and "0.005" in p.reason
    c = p.point(p.closest)
    assert c["tpot_s"] == pytest.approx(20e9 / (4 * 1e12), rel=1e-12)
    # Any batch up to where the matmuls catch up, 2·Na·B/(C·F) = W/(C·bw) at B = 1,000, is that fast;
    # the closest is the cheapest of them.
    assert (c["chips"], c["bound"]) == (4, "weights") and c["batch"] <= 1000
    assert c["usd_per_request"] > 0 and p.top.size == 0 and p.frontier.size > 0


def test_ttft_out_of_reach_closest_is_the_fastest_prefill():
    # One chip: a 1,000-token prompt takes max(2·Na·I/F, W/bw + I·kv/bw) = 20.1 ms; 10 ms cannot be met.
    p = toy_plan(ttft_s=0.01)
    assert p.best is None and p.binding == "ttft"
    assert p.point(p.closest)["ttft_s"] == pytest.approx(0.0201, rel=1e-12)


def test_both_targets_out_of_reach_and_nothing_that_fits():
    p = toy_plan(ttft_s=0.01, tpot_s=0.001)
    assert p.best is None and p.binding == "ttft+tpot" and p.closest is not None
    big = ModelArch(name="toy-1t", total_params=1e12, active_params=1e11, kv_bytes_per_token=1e5)
    p = toy_plan(model=big)
    assert p.best is None and p.binding == "hbm" and "nothing fits" in p.reason
    assert not p.point(p.closest)["fits"]


# ---------------------------------------------------------------- the search against the slow way

def _config(pt):
    return Config(pt["chips"], pt["pipeline_stages"], pt["batch"], pt["weight_dtype"], pt["kv_dtype"], pt["mode"],
                  pt["prefill_chips"] // pt["prefill_stages"], pt["prefill_stages"], pt["prefill_batch"])


@pytest.mark.parametrize(("model", "traffic", "deployment"), [
    ("llama-3.1-8b", Traffic.single(2000, 300), Deployment()),
    ("qwen3-30b-a3b", Traffic.mix([(500, 200, 1), (4000, 400, 1)]),
     Deployment(mode="per-phase", mfu=0.6, bw_util=0.8, tokens_per_step=1.5, pipeline_hop_s=1e-5)),
])
def test_points_are_decode_step_and_prefill_one_at_a_time(model, traffic, deployment):
    hw = {k: presets.get("hardware", k) for k in ("h100", "b200", "tpu-v6e")}
    m = presets.get("model", model)
    p = plan(m, hw, traffic, ttft_s=0.5, tpot_s=0.03, deployment=deployment, link_latency_s=1e-6, max_chips=64)
    rng = np.random.default_rng(1)
    for i in [*rng.choice(p.configs_evaluated, 40, replace=False), *p.top[:3]]:
        pt = p.point(int(i))
        ref = evaluate(m, hw[pt["hardware"]], _config(pt), traffic, deployment=deployment, link_latency_s=1e-6)
        for k in ("t_step_s", "tpot_s", "ttft_s", "usd_per_mtok_output", "usd_per_request", "tokens_per_s_per_chip",
                  "hbm_bytes_per_chip", "context"):
            assert pt[k] == pytest.approx(ref[k], rel=1e-9), (k, pt)
        assert pt["usd_per_mtok_input"] == pytest.approx(ref["usd_per_mtok_input"], rel=1e-6, abs=1e-12)
        assert (pt["bound"], pt["fits"]) == (ref["bound"], ref["fits"])


def test_brute_force_finds_nothing_cheaper():
    """Two chips × C = 1, 2, 4, 8 × bf16/fp8 weights × a few batches × both modes (disaggregated: a few
    prefill replicas), one configuration at a time; no feasible point is cheaper than plan's best."""
    hw = {k: presets.get("hardware", k) for k in ("h100", "b200")}
    m = presets.get("model", "llama-3.1-8b")
    traffic = Traffic.single(2000, 300)
    kw = {"ttft_s": 0.3, "tpot_s": 0.02}
    p = plan(m, hw, traffic, **kw, weight_dtypes=("bf16", "fp8"), kv_dtypes=("bf16",), max_chips=8)
    best = p.point(p.best)
    cheapest = math.inf
    for chip in hw.values():
        for C in (1, 2, 4, 8):
            for w in ("bf16", "fp8"):
                for B in (1, 7, 32, 100, 300, 1000, 3000):
                    for mode, pre in [("aggregated", [(1, 1)]),
                                      ("disaggregated", [(cp, bp) for cp in (1, 2, 8) for bp in (1, 4, 16)])]:
                        for cp, bp in pre:
                            cfg = Config(C, 1, B, w, "bf16", mode, cp, 1, bp)
                            r = evaluate(m, chip, cfg, traffic)
                            if r["fits"] and r["ttft_s"] <= kw["ttft_s"] and r["tpot_s"] <= kw["tpot_s"]:
                                cheapest = min(cheapest, r["usd_per_request"])
    assert math.isfinite(cheapest)
    assert best["usd_per_request"] <= cheapest * (1 + 1e-9)
    ref = evaluate(m, hw[best["hardware"]], _config(best), traffic)
    assert ref["fits"] and ref["ttft_s"] <= kw["ttft_s"] and ref["tpot_s"] <= kw["tpot_s"]
    assert ref["usd_per_request"] == pytest.approx(best["usd_per_request"], rel=1e-12)


def test_frontiers_are_the_pareto_sets():
    hw = {k: presets.get("hardware", k) for k in ("h100", "mi300x")}
    p = plan(presets.get("model", "llama-3.1-8b"), hw, Traffic.single(1000, 200), ttft_s=0.2, tpot_s=0.02,
             kv_dtypes=("bf16",), max_chips=8)
    pts = p.points
    cand = np.flatnonzero(pts["fits"] & pts["meets_ttft"])
    assert 100 < cand.size < 20_000
    for front, x, x_better in ((p.frontier, pts["usd_per_request"], np.less_equal),
                               (p.frontier_per_chip, pts["tokens_per_s_per_chip"], np.greater_equal)):
        u = pts["tokens_per_s_per_user"]
        xc, uc = x[cand], u[cand]
        # nothing beats a frontier point on both axes (at least as good on both, better on one)
        for i in front:
            beats = x_better(xc, x[i]) & (uc >= u[i]) & ((xc != x[i]) | (uc > u[i]))
            assert not beats.any()
        # and every candidate is matched or beaten by a frontier point
        fx, fu = x[front], u[front]
        covered = (x_better(fx[None, :], xc[:, None]) & (fu[None, :] >= uc[:, None])).any(axis=1)
        assert covered.all()
        assert np.all(np.diff(u[front]) > 0)                       # by tokens/s/user ascending
    # The best is on the $ frontier up to ties: nothing cheaper is at least as fast (it would be feasible).
    b = p.best
    cheaper = pts["usd_per_request"][cand] < pts["usd_per_request"][b] * (1 - 1e-9)
    assert not (cheaper & (pts["tokens_per_s_per_user"][cand] >= pts["tokens_per_s_per_user"][b])).any()


# ---------------------------------------------------------------- the whole space, efficiency, bad input

def test_every_preset_is_a_search_of_over_100k_configurations():
    p = plan(presets.get("model", "llama-3.1-70b"), searchable_hardware(), Traffic.single(2000, 500), ttft_s=1.0,
             tpot_s=0.05)
    assert p.configs_evaluated >= 100_000 and p.best is not None
    assert "lecture-gpu" not in p.hardware_keys                    # the made-up chip only when asked for
    n = p.configs_evaluated
    assert all(v.shape == (n,) for v in p.points.values())
    assert set(p.points["weight_dtype"].tolist()) == set(range(len(WEIGHT_DTYPES)))
    assert set(p.points["kv_dtype"].tolist()) == set(range(len(KV_DTYPES)))
    assert set(p.points["mode"].tolist()) == set(range(len(MODES)))
    # fp4 weights only where the chip has fp4 FLOP/s (the H100 has none)
    h100 = p.hardware_keys.index("h100")
    assert not np.any((p.points["hardware"] == h100) & (p.points["weight_dtype"] == WEIGHT_DTYPES.index("fp4")))
    # fp8 weights on an A100 run at bf16 compute
    a100 = p.points["hardware"] == p.hardware_keys.index("a100")
    assert set(p.points["compute_dtype"][a100 & (p.points["weight_dtype"] == 1)].tolist()) == {0}
    assert PREFILL_BATCHES[0] == 1


def test_efficiency_ideal_or_dials():
    dials = Deployment(mfu=0.5, bw_util=0.5)
    p = toy_plan(deployment=dials, tpot_s=0.1)
    assert p.efficiency == {"source": "dials", "mfu": 0.5, "bw_util": 0.5}
    q = toy_plan(deployment=dials, tpot_s=0.1, ideal=True)
    assert q.efficiency == {"source": "ideal", "mfu": 1.0, "bw_util": 1.0}
    # Half the bandwidth doubles the weight fetch: the same batch is twice as slow.
    assert p.point(p.best)["tpot_s"] > q.point(q.best)["tpot_s"]


@pytest.mark.parametrize(("kw", "match"), [
    ({"ttft_s": 0.0}, "ttft_s"), ({"tpot_s": -1.0}, "tpot_s"), ({"tpot_s": math.nan}, "tpot_s"),
    ({"throughput": 0.0}, "throughput"), ({"utilisation": 1.5}, "utilisation"),
    ({"weight_dtypes": ("fp16",)}, "weight_dtypes"), ({"modes": ()}, "modes"), ({"max_chips": 0}, "max_chips"),
    ({"throughput_unit": "bytes"}, "throughput_unit"),
])
def test_bad_input_raises_naming_it(kw, match):
    with pytest.raises(ValueError, match=match):
        toy_plan(**kw)


def test_bad_traffic_chips_and_models():
    with pytest.raises(ValueError, match="empty"):
        plan(TOY_MODEL, {}, TRAFFIC, ttft_s=1.0, tpot_s=1.0)
    for bad in ((0, 100), (100, math.inf)):
        with pytest.raises(ValueError, match="traffic"):
            Traffic.single(*bad)
    with pytest.raises(ValueError, match="share"):
        Traffic.mix([(100, 10, 0)])
    shapeless = ModelArch(name="no-kv", total_params=1e9, active_params=1e9)
    with pytest.raises(ValueError, match="model"):
        toy_plan(model=shapeless)


def test_a_model_without_d_model_plans_one_chip_per_stage():
    hw = TOY.with_(scaleup_domain_chips=8, scaleup_bandwidth_bytes_per_s=1e12)
    p = plan(TOY_MODEL, {"toy": hw}, TRAFFIC, ttft_s=1.0, tpot_s=0.05, max_chips=8, kv_dtypes=("bf16",))
    assert set(p.points["chips"].tolist()) == {1.0} and any("one chip per stage" in n for n in p.notes)
    assert set(p.points["pipeline_stages"].tolist()) == {1.0, 2.0, 4.0, 8.0}


def test_precision_follows_the_chip():
    # bf16 KV and fp8 KV on a derived-KV model: fp8 halves the KV bytes, so more sequences fit.
    m = presets.get("model", "llama-3.1-8b")
    p = plan(m, {"h100": presets.get("hardware", "h100")}, TRAFFIC, ttft_s=1.0, tpot_s=0.05, max_chips=1,
             weight_dtypes=("bf16",))
    pts = p.points
    fit = {v: pts["max_batch_fit"][(pts["kv_dtype"] == KV_DTYPES.index(v)) & (pts["mode"] == 0)][0]
           for v in KV_DTYPES}
    W = 8e9 * 2
    kv = System(presets.get("hardware", "h100"), m, Precision(kv="bf16")).kv.bytes_per_token
    assert fit["bf16"] == pytest.approx((80e9 - W) / (kv * 1100))
    assert fit["fp8"] == pytest.approx(2 * fit["bf16"])


# ---------------------------------------------------------------- planning on the fitted efficiency model

def test_fitted_toy_by_hand():
    """The toy model with 10 layers under η_c = 0.25, η_bw = 0.5 and t_ℓp = 1 ms per layer (L·t_ℓp = 10 ms),
    aggregated, TPOT 60 ms.  Per sequence per step: decode matmul 2·10e9/1e15 = 2e-5 s, its prompt share
    x = a·I/O = 10 tokens → 2e-4 s, both ÷ 0.25 → B · 8.8e-4 s of compute; weights 0.02 s ÷ 0.5 = 0.04 s,
    KV read 1,050·1e5/1e12 = 1.05e-4 s plus the prompt's writes 10·1e5/1e12 = 1e-6 s, ÷ 0.5 → B · 2.12e-4.
    New prompts per sequence per step λ = a/O = 0.01, so the fixed part is 0.01·(1 − e^(−0.01·B)) s.
    Compute binds: B = 62 gives 0.05456 + 0.0046208 = 0.0591808 s ≤ 0.06, B = 63 gives 0.0601139 s > 0.06.
    TTFT: one prompt's pass, max(0.02/0.25, (20e9 + 1,000·1e5)/1e12/0.5) + 10 ms = 0.09 s."""
    from model.calibrate import Efficiency

    eff = Efficiency(bandwidth=0.5, compute=0.25, expert=0.1, prompt_layer_s=1e-3)
    model = TOY_MODEL.with_(n_layers=10)
    p = toy_plan(model=model, modes=("aggregated",), tpot_s=0.06, efficiency=eff)
    b = p.point(p.best)
    fixed = 0.01 * -math.expm1(-0.01 * 62)
    assert b["batch"] == 62 and b["bound"] == "compute"
    assert 62 < b["max_batch_tpot"] < 63
    assert b["tpot_s"] == pytest.approx(62 * 8.8e-4 + fixed, rel=1e-12)
    assert b["t_fixed_s"] == pytest.approx(fixed, rel=1e-12)
    assert b["ttft_s"] == pytest.approx(0.09, rel=1e-12)
    base = max(62 * 8e-5, 0.04 + 62 * 2.1e-4)                       # the step without the prompts: 0.05302 s
    assert b["usd_per_mtok_output"] == pytest.approx(1e-3 * base / 62 * 1e6, rel=1e-12)
    assert b["usd_per_mtok_input"] == pytest.approx(1e-3 * (62 * 8.8e-4 + fixed - base) / (62 * 10) * 1e6, rel=1e-9)
    assert p.efficiency["source"] == "predicted" and p.efficiency["compute"] == 0.25
    # The ideal roofline at the same toy allows 4.4× the batch: compute 2.2e-4·B ≤ 0.06 → B ≤ 272.7.
    q = toy_plan(model=model, modes=("aggregated",), tpot_s=0.06)
    assert q.point(q.best)["max_batch_tpot"] == pytest.approx(0.06 / 2.2e-4) and q.efficiency["source"] == "ideal"


@pytest.mark.parametrize(("model", "traffic"), [
    ("llama-3.1-70b", Traffic.single(2000, 300)),
    ("deepseek-v3", Traffic.mix([(500, 200, 1), (4000, 400, 1)])),
])
def test_fitted_points_are_evaluate_one_at_a_time(model, traffic):
    from model.calibrate import built_in_fit

    eff = built_in_fit().efficiency
    hw = {k: presets.get("hardware", k) for k in ("h100", "b200", "mi355x")}
    m = presets.get("model", model)
    p = plan(m, hw, traffic, ttft_s=0.5, tpot_s=0.05, link_latency_s=1e-6, max_chips=64, efficiency=eff)
    rng = np.random.default_rng(2)
    for i in [*rng.choice(p.configs_evaluated, 40, replace=False), *p.top[:3]]:
        pt = p.point(int(i))
        ref = evaluate(m, hw[pt["hardware"]], _config(pt), traffic, link_latency_s=1e-6, efficiency=eff)
        for k in ("t_step_s", "tpot_s", "ttft_s", "usd_per_mtok_output", "usd_per_request", "tokens_per_s_per_chip",
                  "hbm_bytes_per_chip", "t_fixed_s", "t_comm_s"):
            assert pt[k] == pytest.approx(ref[k], rel=1e-9, abs=1e-15), (k, pt)
        assert pt["usd_per_mtok_input"] == pytest.approx(ref["usd_per_mtok_input"], rel=1e-6, abs=1e-12)
        assert (pt["bound"], pt["fits"]) == (ref["bound"], ref["fits"])


@pytest.mark.parametrize(("model", "chip", "weights"), [("llama-3.1-8b", "h100", "bf16"),
                                                         ("qwen3-30b-a3b", "h100", "fp8"),
                                                         ("gpt-oss-120b", "h200", "fp8")])
def test_fitted_step_is_the_calibrated_prediction(model, chip, weights):
    """On one chip (no communication) a planned step is model.calibrate.predict_system's step — the same fitted
    model the Batch page's predicted curve draws — with the prompts chunked in (aggregated) or not."""
    from model.calibrate import built_in_fit, predict_system

    eff = built_in_fit().efficiency
    m, hw = presets.get("model", model), presets.get("hardware", chip)
    cd = weights if weights in hw.compute_dtypes() else "bf16"
    s = System(hw, m, Precision(weights=weights, kv="bf16", compute=cd))
    for mode, kw in (("aggregated", {"input_tokens": 2000, "output_tokens": 500}), ("disaggregated", {})):
        ev = evaluate(m, hw, Config(1, 1, 64, weights, "bf16", mode), Traffic.single(2000, 500), efficiency=eff)
        ref = predict_system(s, 64, 2000 + 500 / 2, eff, **kw)
        assert ev["t_step_s"] == pytest.approx(float(ref["t_step_s"]), rel=1e-12)
        assert ev["t_fixed_s"] == pytest.approx(float(ref["t_fixed_s"]), rel=1e-12, abs=1e-15)


def test_ideal_and_fitted_are_exclusive():
    from model.calibrate import Efficiency

    with pytest.raises(ValueError, match="not both"):
        toy_plan(ideal=True, efficiency=Efficiency())


def test_top_leaves_out_pipeline_stages_that_change_nothing_but_the_chip_count():
    """On the toy chip (a domain of one) TPOT binds the batch per stage, so P = 2, 4, 8 stages give the same cost,
    TTFT and TPOT as one chip with more chips: the ten best keep the one-chip replica only."""
    p = toy_plan(modes=("aggregated",), max_chips=8)
    pts = [p.point(int(i)) for i in p.top]
    assert [q["pipeline_stages"] for q in pts] == [1]
    stages = p.points["pipeline_stages"][p.points["feasible"]]
    assert set(stages) == {1, 2, 4, 8}                          # … though all four were searched and feasible


def test_the_kv_hand_over_runs_over_the_smaller_replicas_nics():
    """The toy's 1,000-token prompt leaves 1e8 B of KV; each chip has a 50 GB/s NIC.  A prefill replica of two
    stages hands it to a one-chip decode replica over one NIC (2 ms), to a two-stage one over two (1 ms)."""
    pass_s = 0.0201                                                   # one prompt's pass: max(20 ms, 20.1 ms)
    one = evaluate(TOY_MODEL, TOY, Config(1, 1, 64, "bf16", "bf16", "disaggregated", 1, 2, 1), TRAFFIC)
    two = evaluate(TOY_MODEL, TOY, Config(1, 2, 64, "bf16", "bf16", "disaggregated", 1, 2, 1), TRAFFIC)
    assert one["ttft_s"] == pytest.approx(pass_s + 1e8 / 50e9, rel=1e-12)
    assert two["ttft_s"] == pytest.approx(pass_s + 1e8 / (2 * 50e9), rel=1e-12)
