"""AppTest: the MoE layout page — numbers equal model.cluster (and the CLI), URL dials, extremes, no tracebacks."""

import pytest

from model import Precision, cluster, decode_step
from model.roofline import bound_of, combine
from tests.app.helpers import (
    V1,
    app,
    assert_clean,
    charts,
    latex_text,
    metric_list,
    metrics,
    page_text,
    sidebar_system,
    written,
)
from tests.cli.helpers import run_json
from ui.format import bytes_, number, seconds

DSV3 = {"chip": "gb200", "model": "deepseek-v3"}


def test_lecture_layout_256_experts_over_64_gpus():
    """DeepSeek on a Blackwell rack, 64 of its 72 GPUs: 256/64 = 4 experts per GPU (lecture §2.9)."""
    at = app({**DSV3, "c": "64", "b": "2048"}, page="moe")
    assert_clean(at)
    s = sidebar_system("gb200", "deepseek-v3", chips=64, batch=2048)
    a = cluster.moe_alltoall(s, 2048)
    r = decode_step(s, 2048, 8192, t_comm=a.t_comm_s)
    m = metrics(at)
    assert float(cluster.experts_per_gpu(256, 64)) == 4.0
    assert m["Experts/GPU"] == "4"
    assert m["All-to-all/step"] == bytes_(float(a.bytes_per_step))
    assert m["All-to-all/GPU"] == bytes_(float(a.bytes_per_gpu))
    assert m["Over scale-out"] == "0 %"
    assert m["t_comm"] == seconds(float(a.t_comm_s))
    assert m["Step with t_comm"] == seconds(float(r.t_step_s))
    assert m["Bound"] == str(r.bound)
    assert m["Experts touched/layer"] == number(float(cluster.expected_distinct_experts(256, 8, 2048)))
    # The bytes equation with today's numbers: B · 2 · k · d · a · L.
    tex = latex_text(at)
    assert r"\Big\lceil \frac{256}{64} \Big\rceil = 4" in tex
    assert r"2{,}048 \times 2 \times 8 \times 7{,}168 \times 2\,\text{B} \times 58" in tex
    assert len(charts(at)) >= 4


def test_page_agrees_with_the_cli(capsys):
    at = app({**DSV3, "c": "64", "b": "2048"}, page="moe")
    cli = run_json(capsys, "layout", "--hardware", "gb200", "--model", "deepseek-v3", "--gpus", "64", "--batch", "2048",
                   "--context", "8192")
    m = metrics(at)
    assert m["Experts/GPU"] == number(cli["experts_per_gpu"])
    assert m["All-to-all/step"] == bytes_(cli["alltoall_bytes_per_step"])
    assert m["All-to-all/GPU"] == bytes_(cli["alltoall_bytes_per_gpu"])
    assert m["Over scale-out"] == f"{100 * cli['share_scaleout']:.3g} %"
    assert m["t_comm"] == seconds(cli["t_comm_s"])
    assert m["Step with t_comm"] == seconds(cli["t_step_s"])
    assert m["Bound"] == cli["bound"]


def test_two_racks_half_the_traffic_leaves_and_the_layer_gets_slower():
    at = app({**DSV3, "c": "72", "g": "144"}, page="moe")
    assert_clean(at)
    s = sidebar_system("gb200", "deepseek-v3", chips=144)
    a = cluster.moe_alltoall(s, 64)
    m = metrics(at)
    assert m["Experts/GPU"] == "2"
    assert m["Over scale-out"] == "50 %"
    assert m["t_comm"] == seconds(float(a.t_comm_s))
    assert float(a.t_scaleout_s) > float(a.t_scaleup_s)          # the slow link sets t_comm
    fig = charts(at)[0]
    edges = [sh["x0"] for sh in fig["layout"]["shapes"] if sh["type"] == "line" and sh["x0"] == sh["x1"]]
    assert 72 in edges                                            # the domain edge marked on chart 1
    assert any("one rack bounds an expert layer" in c.value for c in at.caption)


def test_comm_can_become_the_bound():
    # Four NVL72 racks at a large batch and short context: the scale-out all-to-all outlasts the memory side.
    at = app({"chip": "gb200", "model": "deepseek-v3", "g": "288", "b": "16384", "ctx": "1024"}, page="moe")
    assert_clean(at)
    s = sidebar_system("gb200", "deepseek-v3", chips=288, batch=16384, context=1024)
    a = cluster.moe_alltoall(s, 16384)
    r = decode_step(s, 16384, 1024, t_comm=a.t_comm_s)
    assert str(r.bound) == "comm"
    assert metrics(at)["Bound"] == "comm"


def test_touched_experts_toggle_from_the_url():
    at = app({**DSV3, "c": "64", "b": "1", "tw": "1", "g": "64"}, page="moe")
    assert_clean(at)
    assert at.session_state["tw"] is True and at.session_state["g"] == 64
    assert [t.value for t in at.toggle if t.key == "tw"] == [True]
    s = sidebar_system("gb200", "deepseek-v3", chips=64, batch=1)
    now = decode_step(s, 1, 8192)
    touched = float(cluster.touched_weight_bytes_per_gpu(s, 1))
    assert touched < s.weight_bytes / 64                             # one token touches 8 of 256 experts
    t_w = touched / s.hbm_bandwidth
    t_step = float(combine(now.t_matmul_s, now.t_attn_s, t_w, now.t_kv_s, now.t_comm_s, "lecture"))
    m = metrics(at)
    assert m["Busiest GPU reads"] == bytes_(touched)
    assert m["Step, touched only"] == seconds(t_step)
    assert m["Busiest GPU touches"] == number(float(cluster.busiest_gpu_experts(256, 8, 1, 64)))
    assert "touched experts only" in latex_text(at)
    assert str(bound_of(now.t_matmul_s, now.t_attn_s, t_w, now.t_kv_s, now.t_comm_s, "lecture")) in latex_text(at)
    assert written(at).get("tw") == "1" and written(at).get("g") == "64"


def test_touched_and_even_split_weights_are_labelled_as_what_they_count():
    """At the defaults (DeepSeek-V3's 256 experts over G = C = 72 GPUs at fp8, B = 4096) the busiest GPU holds
    ⌈256/72⌉ = 4 experts, more than an even split's 256/72 = 3.56, and B = 4096 touches all four: it reads
    always/72 + 4·W_expert, more than W/72, every weight spread evenly.  Read as "touched" against "all" that is a
    contradiction; the labels say what each counts."""
    at = app(page="moe")
    assert_clean(at)
    s = sidebar_system("gb200", "deepseek-v3", chips=72, batch=4096, context=2048,
                       precision=Precision(weights="fp8", kv="fp8", compute="fp8"))
    per_expert, always = cluster.expert_bytes(s.model, 1.0)                     # fp8: one byte a parameter
    touched = float(cluster.touched_weight_bytes_per_gpu(s, 4096))
    assert touched == pytest.approx(always / 72 + 4 * per_expert, rel=1e-6)     # all 4 of its experts touched
    assert touched > s.weight_bytes / 72                                        # more than the even split
    shown = {mt.label: mt for mt in metric_list(at)}
    mt = shown["Busiest GPU reads"]
    assert mt.value == bytes_(touched)
    assert mt.delta == f"W/G even split: {bytes_(s.weight_bytes / 72)}"
    assert "fetches only the experts its tokens touched" in mt.help
    assert "every weight every step spread evenly over the G GPUs" in mt.help
    assert "⌈E/G⌉ = ⌈256/72⌉ = 4 experts" in mt.help and "E/G = 3.56" in mt.help
    assert "can exceed 'Step with t_comm'" in shown["Step, touched only"].help
    # the chart's flat line is the even split, its curve the busiest GPU's
    fig = next(f for f in charts(at) if "Weight bytes the busiest GPU reads" in f["layout"]["title"]["text"])
    assert [t["name"] for t in fig["data"][:2]] == ["every weight, split evenly (W/G, the lecture)",
                                                    "only touched experts (busiest GPU)"]
    # where G divides E the busiest GPU reads at most W/G, and the help says so
    at = app({"g": "64", "v": "2"}, page="moe")
    mt = {mt.label: mt for mt in metric_list(at)}["Busiest GPU reads"]
    assert "G = 64 divides E = 256" in mt.help and "more than W/G" not in mt.help


def test_dense_model_shows_tensor_parallelism_and_says_moe_needs_an_moe_model():
    at = app(V1, page="moe")                       # defaults: H100 × Llama 3.1 70B
    assert_clean(at)
    assert "dense model" in page_text(at, "warning", "info") and "MoE model" in page_text(at, "warning", "info")
    s = sidebar_system()
    G = int(s.deployment.chips)
    t = float(cluster.tensor_parallel_allreduce_time(s, 64, activation_bytes=2.0, hop_latency_s=2e-6))
    r = decode_step(s, 64, 8192, t_comm=t)
    m = metrics(at)
    assert m["TP all-reduce"] == seconds(t)
    assert m["Step with TP"] == seconds(float(r.t_step_s))
    assert "Experts/GPU" not in m
    assert rf"\frac{{{2 * (G - 1)}}}{{{G}}}" in latex_text(at)
    assert len(charts(at)) == 2
    assert written(at) == {}          # defaults stay out of the URL


def test_hop_latency_dial():
    at = app({"hop_us": "0"}, page="moe")
    assert_clean(at)
    s = sidebar_system()
    t = float(cluster.tensor_parallel_allreduce_time(s, 64, activation_bytes=2.0, hop_latency_s=0.0))
    assert metrics(at)["TP all-reduce"] == seconds(t)


def test_no_scaleout_figure_says_so_and_stays_in_the_domain():
    at = app({"chip": "rubin-ultra", "model": "deepseek-v3", "g": "576"}, page="moe")
    assert_clean(at)
    notes = page_text(at, "warning", "info")
    assert "no scale-out bandwidth figure" in notes and "G = 144" in notes
    assert metrics(at)["Experts/GPU"] == number(float(cluster.experts_per_gpu(256, 144)))
    assert metrics(at)["Over scale-out"] == "0 %"


@pytest.mark.parametrize("query", [
    {"chip": "tpu-v5e", "model": "deepseek-v3"},
    {"chip": "tpu-v5e", "model": "qwen3-30b-a3b", "g": "1024", "b": "65536"},
    {**DSV3, "b": "1"},
    {**DSV3, "b": "65536", "g": "1", "mode": "per-phase"},
    {**DSV3, "c": "72", "g": "576", "ab": "1"},
    {"chip": "h100", "model": "llama-3.1-405b", "g": "576"},
    {"chip": "gb200", "model": "mixtral-8x7b", "g": "72", "tw": "1"},
    {"chip": "ironwood", "model": "kimi-k2", "g": "1024"},
    {"chip": "a100", "model": "gpt-oss-20b", "c": "1"},
])
def test_extremes_run_clean(query):
    at = app(query, page="moe")
    assert_clean(at)
    assert charts(at)


def test_expert_and_k_overrides():
    at = app({"chip": "gb200", "model": "lecture-deepseek", "c": "64", "k": "32"}, page="moe")
    assert_clean(at)
    s = sidebar_system("gb200", "lecture-deepseek", chips=64)
    a = cluster.moe_alltoall(s.with_(experts_per_token=32), 64)
    assert metrics(at)["All-to-all/step"] == bytes_(float(a.bytes_per_step))
    assert r"\times 32 \times" in latex_text(at)
    at = app({**DSV3, "e": "8", "k": "16"}, page="moe")
    assert_clean(at)
    assert "using k = 8" in page_text(at, "warning", "info")


def test_garbled_g_falls_back_with_a_notice():
    at = app({**DSV3, "g": "banana"}, page="moe")
    assert_clean(at)
    notes = " ".join(w.value for w in at.warning)
    assert "URL parameter 'g'" in notes and "banana" in notes
    assert at.session_state["g"] == "C"


def test_moving_g_changes_the_numbers():
    at = app({**DSV3, "c": "64"}, page="moe")
    at.select_slider(key="g").set_value(128).run()
    assert_clean(at)
    s = sidebar_system("gb200", "deepseek-v3", chips=128)
    a = cluster.moe_alltoall(s, 64)
    m = metrics(at)
    assert m["Experts/GPU"] == "2" and m["t_comm"] == seconds(float(a.t_comm_s))
    assert m["Over scale-out"] == f"{100 * (128 - 72) / 128:.3g} %"


def test_tensor_parallel_expander_is_lazy_for_an_moe_model():
    """With an MoE model the tensor-parallel part sits in an expander that computes and sends it only while
    open (`on_change="rerun"`): a move of G with it closed redraws nothing out of sight."""
    at = app({"chip": "gb200", "model": "deepseek-v3"}, page="moe")
    assert_clean(at)
    closed_charts = len(charts(at))
    assert "TP all-reduce" not in metrics(at) and "Experts/GPU" in metrics(at)
    at.session_state["moe_tp_open"] = True           # what a click on the expander does
    at.run()
    assert_clean(at)
    assert "TP all-reduce" in metrics(at)
    assert len(charts(at)) == closed_charts + 2      # its chart against G and its breakdown
    assert written(at).get("moe_tp_open") is None     # the open state is not a dial: not in the URL
