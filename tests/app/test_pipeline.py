"""AppTest: the Pipelining page — clean at defaults and at dial extremes; the numbers it shows equal
`model.cluster` (and the CLI) computed here; page dials seeded from the URL; bad parameters reported."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from model import presets
from model.cluster import pipeline, pipeline_cut_ratio, training_bubble_fraction
from tests.app.helpers import (
    V1,
    arr,
    assert_clean,
    assert_notice,
    charts,
    clean_app,
    dot,
    fig,
    latex,
    metric_list,
    metrics,
    sidebar_system,
    trace,
    written,
)
from tests.cli.helpers import run_json
from ui.format import bytes_, number, seconds

P_OPTIONS = [1, 2, 3, 4, 6, 8, 16]
pipe_app = partial(clean_app, page="pipeline")


def test_defaults_clean_four_charts_equations_and_definitions():
    at = pipe_app(V1)
    assert at.title[0].value.startswith("Pipelining")
    figs = charts(at)
    assert len(figs) == 4
    assert len(at.caption) >= 5               # the system line + a one-line definition under each chart
    assert len(latex(at)) == 4
    assert written(at) == {}        # page dials at their defaults stay out of the URL
    assert at.session_state["p"] == 4 and at.session_state["hop"] == 0.0
    assert at.session_state["mb"] == "4P" and at.session_state["cut"] == "preset"
    for f in figs:                            # units on every y axis
        assert "[" in f["layout"]["yaxis"]["title"]["text"]


def test_memory_numbers_equal_model_cluster_and_the_ps_cancel():
    at = pipe_app(V1)
    s = sidebar_system()
    pm = pipeline(s, 64.0, 8192.0, np.array(P_OPTIONS, float))
    i = P_OPTIONS.index(4)
    m = metrics(at)
    assert m["Weights per chip"] == bytes_(pm.weight_bytes_per_chip[i]) == "4.41 GB"   # 141.2 GB / (8·4)
    assert m["KV per chip"] == bytes_(pm.kv_bytes_per_chip[i]) == "21.5 GB"            # 64·8192·327,680 B / 8
    assert m["HBM per chip"] == bytes_(pm.total_bytes_per_chip[i])
    f = fig(at, "HBM per chip")
    w = arr(trace(f, "weights")["y"])
    kv = arr(trace(f, "KV")["y"])
    assert list(trace(f, "weights")["x"]) == ["1", "2", "4", "8", "16"]
    # KV per chip identical for every P at a fixed micro-batch; weights halve with each doubling.
    assert np.allclose(kv, kv[0]) and kv[0] == pytest.approx(64 * 8192 * 327_680 / 8 / 1e9)
    assert np.allclose(w, 141.2 / (8 * np.array([1, 2, 4, 8, 16])))
    assert np.allclose(w[:-1] / w[1:], 2.0)
    tex = latex(at)[0].value
    assert "141" in tex and "4.41" in tex and "21.5" in tex and r"\le" in tex


def test_extremes_p16_hop20_equal_the_model_and_the_cli(capsys):
    at = pipe_app({"p": "16", "hop": "20"})
    assert at.session_state["p"] == 16 and at.session_state["hop"] == 20.0
    assert written(at) == {"p": "16", "hop": "20"}
    s = sidebar_system().with_(pipeline_hop_s=0.020)
    pm = pipeline(s, 64.0, 8192.0, np.array(P_OPTIONS, float))
    m = metrics(at)
    assert m["Latency per token"] == seconds(pm.latency_s[-1]) == "332 ms"     # 11.68 ms + 16 × 20 ms
    assert m["Tokens/s per replica"] == number(pm.tokens_per_s[-1])
    f = fig(at, "Per-token latency")
    assert np.allclose(arr(trace(f, "per-token latency")["y"]), pm.latency_s * 1e3)
    assert np.allclose(arr(trace(f, "tokens/s")["y"]), pm.tokens_per_s)
    assert np.allclose(arr(trace(f, "per-token latency")["x"]), P_OPTIONS)
    # The CLI with the same inputs prints the same numbers (and the same training bubble at m = 64).
    d = run_json(capsys, "pipeline", "--hardware", "h100", "--model", "llama-3.1-70b", "--stages", "1,2,4,16",
                 "--micro-batch", "64", "--context", "8192", "--hop-latency", "0.02", "--micro-batches", "64")
    rows = {r["stages"]: r for r in d["rows"]}
    r16 = rows[16]
    assert r16["latency_s"] == pytest.approx(float(pm.latency_s[-1]))
    assert r16["tokens_per_s"] == pytest.approx(float(pm.tokens_per_s[-1]))
    assert m["KV per chip"] == bytes_(r16["kv_bytes_per_chip"]) and m["Weights per chip"] == bytes_(
        r16["weight_bytes_per_chip"])
    assert m["Training bubble"] == f"{100 * r16['training_bubble']:.3g} %"     # default m = 4·16 = 64
    assert "332" in latex(at)[1].value


def test_deepseek_on_gb200_cut_ratio_equals_model_and_cli(capsys):
    at = pipe_app({"model": "deepseek-v3", "chip": "gb200"})
    hw = presets.hardware_presets()["gb200"]
    assert (hw.scaleup_bandwidth_bytes_per_s, hw.scaleout_bandwidth_bytes_per_s) == (900e9, 50e9)  # per direction
    # Only the 58 MoE layers of 61 carry the all-to-all (config.json first_k_dense_replace 3):
    # (50/900) · 2 · 8 · 58/4 = 12.89
    want = float(pipeline_cut_ratio(900e9, 50e9, 8, 58 / 4))
    assert want == pytest.approx(50 / 900 * 2 * 8 * 58 / 4)
    assert metrics(at)["Cut ratio t_up/t_out"] == f"{want:.3g}" == "12.9"
    d = run_json(capsys, "pipeline", "--hardware", "gb200", "--model", "deepseek-v3", "--stages", "4",
                 "--micro-batch", "64", "--context", "8192")
    assert d["rows"][0]["cut_ratio"] == pytest.approx(want)
    f = fig(at, "Cut check")
    preset = trace(f, "chip: ")
    lecture = trace(f, "lecture")
    assert np.allclose(arr(preset["x"]), np.arange(1, 59))
    assert np.allclose(arr(preset["y"]), pipeline_cut_ratio(900e9, 50e9, 8, np.arange(1, 59)))
    assert arr(lecture["y"])[0] == pytest.approx(2.0)          # the lecture: (1/8)·2·8·1 = 2
    x, y = dot(f, "current")             # a dot shape in the axes' domain, read back through the ranges
    assert x == pytest.approx(58 / 4) and y == pytest.approx(want)
    assert not any("dense" in x.value for x in at.info)
    tex = latex(at)[2].value
    assert "50" in tex and "900" in tex and r"\frac{58}{4}" in tex and "12.9" in tex and "L_{moe}" in tex
    assert any("58 MoE layers of 61" in c.value for c in at.caption)


def test_the_lectures_one_eighth_seeded_from_the_url():
    at = pipe_app({"model": "deepseek-v3", "chip": "gb200", "cut": "1/8", "p": "16"})
    assert at.session_state["cut"] == "1/8"
    # (1/8) · 2 · 8 · 58/16 = 7.25 (58 MoE layers of 61)
    assert metrics(at)["Cut ratio t_up/t_out"] == f"{float(pipeline_cut_ratio(8, 1, 8, 58 / 16)):.3g}" == "7.25"
    assert r"\frac{1}{8}" in latex(at)[2].value
    f = fig(at, "Cut check")
    assert trace(f, "lecture")["line"]["width"] == 4           # the chosen ratio is the bold curve


def test_dense_model_cut_check_is_an_illustration():
    at = pipe_app(V1)                                           # Llama 3.1 70B: dense
    assert any("is dense" in x.value for x in at.info)
    assert "dense" in fig(at, "Cut check")["layout"]["title"]["text"]
    # Illustrated with the lecture's k = 8 and H100's 50/450 GB/s: (50/450)·2·8·80/4 = 35.6
    assert metrics(at)["Cut ratio t_up/t_out"] == f"{float(pipeline_cut_ratio(450e9, 50e9, 8, 80 / 4)):.3g}"


def test_rubin_ultra_without_a_scale_out_figure_falls_back_to_one_eighth():
    at = pipe_app({"chip": "rubin-ultra", "model": "deepseek-v3"})
    assert presets.hardware_presets()["rubin-ultra"].scaleout_bandwidth_bytes_per_s is None
    assert any("no scale-out bandwidth figure" in x.value for x in at.info)
    f = fig(at, "Cut check")
    curves = [t["name"] for t in f["data"] if t.get("mode") == "lines"]
    assert len(curves) == 1 and curves[0].startswith("lecture")          # only the lecture's curve
    assert metrics(at)["Cut ratio t_up/t_out"] == f"{float(pipeline_cut_ratio(8, 1, 8, 58 / 4)):.3g}" == "29"


def test_ten_million_context_shows_the_overflow_without_error():
    at = pipe_app({"ctx": "10000000"})
    m = metrics(at)
    s = sidebar_system(context=10_000_000.0)
    pm = pipeline(s, 64.0, 1e7, 4.0)
    assert m["KV per chip"] == bytes_(pm.kv_bytes_per_chip)
    assert next(x for x in metric_list(at) if x.label == "HBM per chip").delta.startswith("exceeds")
    assert ">" in latex(at)[0].value


def test_bubble_from_url_and_the_default_four_p():
    at = pipe_app({"p": "3", "mb": "64", "hop": "2.5"})
    assert at.session_state["mb"] == 64 and at.session_state["hop"] == 2.5
    assert metrics(at)["Training bubble"] == f"{100 * float(training_bubble_fraction(3, 64)):.3g} %" == "3.03 %"
    f = fig(at, "Training bubble")
    assert trace(f, "current m")["x"][0] == 64
    assert trace(f, "P = 3 (current)")["line"]["width"] == 4
    assert r"\frac{2}{64+2}" in latex(at)[3].value
    # P = 3 is not one of the standard bars: it is added and outlined.
    bars = fig(at, "HBM per chip")
    assert list(trace(bars, "weights")["x"]) == ["1", "2", "3", "4", "8", "16"]
    at = pipe_app({"p": "8"})                                # default m = 4·P = 32: 7/39
    assert metrics(at)["Training bubble"] == f"{100 * 7 / 39:.3g} %"


@pytest.mark.parametrize("query, name", [({"p": "garbled"}, "p"), ({"p": "5"}, "p"), ({"hop": "50"}, "hop"),
                                         ({"mb": "-1"}, "mb"), ({"cut": "1/9"}, "cut")])
def test_bad_page_parameters_give_a_notice_and_the_default(query, name):
    at = pipe_app(query)
    assert_notice(at, name)
    assert len(charts(at)) == 4
    assert metrics(at)["Weights per chip"]                  # the page still draws


def test_moving_the_dials_redraws_and_writes_the_url():
    at = pipe_app(V1)
    at.select_slider(key="p").set_value(16).run()
    at.slider(key="hop").set_value(5.0).run()
    at.radio(key="cut").set_value("1/8").run()
    assert_clean(at)
    s = sidebar_system().with_(pipeline_hop_s=0.005)
    pm = pipeline(s, 64.0, 8192.0, 16.0)
    m = metrics(at)
    assert m["Weights per chip"] == bytes_(pm.weight_bytes_per_chip) == "1.1 GB"
    assert m["Latency per token"] == seconds(pm.latency_s)
    assert m["Cut ratio t_up/t_out"] == f"{float(pipeline_cut_ratio(8, 1, 8, 80 / 16)):.3g}" == "10"
    assert written(at) == {"p": "16", "hop": "5", "cut": "1/8"}


def test_llama4_maverick_counts_its_24_moe_layers(capsys):
    # Maverick: MoE on alternate layers (config.json interleave_moe_layer_step 2): 24 of 48, k = 1.
    # GB200 at P = 4: (50/900) · 2 · 1 · 24/4 = 0.667 < 1 — counting all 48 layers would claim 1.33 ≥ 1.
    at = pipe_app({"model": "llama-4-maverick", "chip": "gb200"})
    want = 50 / 900 * 2 * 1 * 24 / 4
    assert metrics(at)["Cut ratio t_up/t_out"] == f"{want:.3g}" == "0.667"
    assert r"\frac{24}{4}" in latex(at)[2].value and "cut too slow" in latex(at)[2].value
    assert np.allclose(arr(trace(fig(at, "Cut check"), "chip: ")["x"]), np.arange(1, 25))
    d = run_json(capsys, "pipeline", "--hardware", "gb200", "--model", "llama-4-maverick", "--chips", "8",
                 "--stages", "4")
    assert d["rows"][0]["cut_ratio"] == pytest.approx(want)


def test_one_stage_has_no_cut(capsys):
    at = pipe_app({"model": "deepseek-v3", "chip": "gb200", "p": "1"})
    assert_clean(at)
    assert metrics(at)["Cut ratio t_up/t_out"] == "—"
    assert "no cut" in latex(at)[2].value
    assert any("no cut" in c.value for c in at.caption)
    f = fig(at, "Cut check")
    assert not any(str(t.get("name", "")).startswith("current") for t in f["data"])     # no point to mark
    row = run_json(capsys, "pipeline", "--hardware", "gb200", "--model", "deepseek-v3", "--chips", "8",
                   "--stages", "1")["rows"][0]
    assert row["cut_ratio"] is None and "no cut" in row["cut_reason"]
