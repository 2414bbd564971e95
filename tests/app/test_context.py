"""AppTest: the Context-limits page — clean at defaults and at dial extremes; the numbers it shows equal
model/context.py and the roofline computed here; page dials seeded from the URL; bad parameters reported."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from model import KVLayout, decode_step, kv_crossover_context, presets
from model.context import compute_crossover_context, generations
from tests.app.helpers import (
    V1,
    arr,
    assert_clean,
    assert_notice,
    charts,
    clean_app,
    fig,
    latex,
    metrics,
    sidebar_system,
    trace,
    written,
)
from ui.format import tokens, usd

cx_app = partial(clean_app, page="context")


def test_defaults_clean_four_charts_equations_and_link():
    at = cx_app()
    assert at.title[0].value.startswith("Context limits")
    assert len(charts(at)) == 4                 # cost, F/bw by chip, crossover by chip, sparse fraction
    assert len(latex(at)) == 4
    assert len(at.caption) >= 4
    assert written(at) == {}
    assert at.session_state["cx_f"] == 0.1 and at.session_state["cx_knee"] == 2048
    assert at.session_state["cx_x"] == "year" and at.session_state["cx_na"] == 100.0
    assert at.session_state["cx_kve"] == 2048.0
    link = at.get("page_link")
    assert len(link) == 1 and link[0].proto.page == "kv-cache"       # links to, does not repeat, the KV page
    assert any("Quality is the catch" in w.value for w in at.warning)
    for f in charts(at):
        assert "[" in f["layout"]["yaxis"]["title"]["text"]           # units on every y axis


def test_headline_numbers_equal_the_model():
    at = cx_app(V1)
    s = sidebar_system()
    kv, Na, F, bw = s.kv, s.model.active_params, s.flops, s.hbm_bandwidth
    m = metrics(at)
    # 2 · 70.6e9 · 3.35e12 / (989.4e12 · 327,680) = 1,459 tokens
    tc = float(compute_crossover_context(kv, Na, F, bw))
    assert tc == pytest.approx(1459.0, rel=1e-3)
    assert m["KV = compute, dense [tokens]"] == tokens(tc) == "1.46k"
    assert m["Reading f = 0.1 [tokens]"] == tokens(tc / 0.1) == "14.6k"
    assert m["√T rule, K = 2k [tokens]"] == tokens(tc)                  # T_c < K: every token read
    # 141.2 GB / (64 · 327,680 B) = 6,733 tokens
    assert m["KV = weights at B = 64 [tokens]"] == tokens(float(kv_crossover_context(s, 64.0))) == "6.73k"
    assert m["Cost at T = 8k, dense"] == usd(float(decode_step(s, 64.0, 8192.0).usd_per_mtok)) + "/Mtok"
    frac = s.with_(sparse_attention="fraction", sparse_param=0.1)
    assert m["… reading f = 0.1"] == usd(float(decode_step(frac, 64.0, 8192.0).usd_per_mtok)) + "/Mtok"
    # the lecture's reference: 2 · 100e9 / (295.3 · 2,048 · 2 B) = 165,327 tokens
    assert m["Lecture model: KV = compute"] == "165k"
    tex = latex(at)[0].value
    assert "70.6" in tex and "3.35" in tex and "989" in tex and "328" in tex and "1{,}459" in tex
    assert "165{,}327" in latex(at)[1].value and "14{,}590" in latex(at)[2].value and "6{,}733" in latex(at)[3].value


def test_charts_carry_the_model_arrays():
    at = cx_app(V1)
    s = sidebar_system()
    cost = fig(at, "Cost per token against context")
    dense = trace(cost, "dense attention")
    T = arr(dense["x"])
    assert T.min() == 512 and T.max() == 1e8 and 8192.0 in T
    assert np.allclose(arr(dense["y"]), decode_step(s, 64.0, T).usd_per_mtok)
    # T_c < K: the √T rule's crossover is the dense one, so it gets no line of its own
    marks = [s_["x0"] for s_ in cost["layout"]["shapes"] if s_["type"] == "line" and s_["x0"] == s_["x1"]]
    assert len(marks) == 3
    sq = trace(cost, "reads √(K·T)")
    assert np.allclose(arr(sq["y"]), decode_step(s.with_(sparse_attention="sqrt", sparse_param=2048.0), 64.0,
                                                 T).usd_per_mtok)
    gen = fig(at, "Where KV overtakes compute")
    g = generations(presets.hardware_presets(), "bf16")
    ref = trace(gen, "lecture reference")
    assert np.allclose(arr(ref["x"]), g.year)
    assert np.allclose(arr(ref["y"]), compute_crossover_context(KVLayout(4096.0), 100e9, g.flops, g.hbm_bandwidth))
    mod = trace(gen, "Llama 3.1 70B, dense")
    assert np.allclose(arr(mod["y"]), compute_crossover_context(s.kv, 70.6e9, g.flops, g.hbm_bandwidth))
    # every bf16 reference crossover sits between 87k (TPU v6e, F/bw 560) and 319k (A100, F/bw 153)
    y = arr(ref["y"])
    assert 85e3 < y.min() < 90e3 and 315e3 < y.max() < 325e3
    assert any(t.get("name") == "current chip: H100" for t in gen["data"])


def test_url_seeds_the_dials_and_the_numbers_follow():
    at = cx_app({"cx_f": "0.01", "cx_knee": "512", "cx_x": "ratio", "cx_na": "200", "cx_kve": "1024"})
    assert at.session_state["cx_f"] == 0.01 and at.session_state["cx_knee"] == 512
    assert at.session_state["cx_x"] == "ratio"
    assert written(at) == {"cx_f": "0.01", "cx_knee": "512", "cx_x": "ratio", "cx_na": "200",
                                     "cx_kve": "1024"}
    m = metrics(at)
    assert m["Reading f = 0.01 [tokens]"] == "146k"              # 1,459 / 0.01
    assert m["√T rule, K = 512 [tokens]"] == "4.16k"            # 1,459² / 512
    # 2 · 200e9 / (295.3 · 1,024 · 2 B) = 661,309 → 4× the default reference (2× Na, ½ the KV)
    assert m["Lecture model: KV = compute"] == "661k"
    gen = fig(at, "Where KV overtakes compute")
    assert gen["layout"]["xaxis"]["type"] == "log" and "[FLOP/B]" in gen["layout"]["xaxis"]["title"]["text"]
    g = generations(presets.hardware_presets(), "bf16")
    assert np.allclose(arr(trace(gen, "lecture reference")["x"]), g.flops_per_byte)


@pytest.mark.parametrize("query", [
    {"cx_f": "0.001", "cx_knee": "32768", "ctx": "10000000", "b": "65536", "chip": "rubin-ultra"},
    {"cx_f": "1", "cx_na": "10000", "cx_kve": "10000000", "b": "1", "ctx": "1024"},
    {"cx_na": "1", "cx_kve": "1", "model": "deepseek-v3", "chip": "gb200", "cd": "fp4", "kv": "fp4"},
])
def test_extremes_run_clean(query):
    at = cx_app(query)
    assert len(charts(at)) == 4                 # cost, F/bw by chip, crossover by chip, sparse fraction
    assert all(v for v in metrics(at).values())


def test_fp8_leaves_out_chips_without_fp8():
    at = cx_app({"cd": "fp8", "kv": "fp8"})
    gen = fig(at, "Where KV overtakes compute")
    assert "fp8 FLOP/s" in gen["layout"]["title"]["text"]
    cap = next(c.value for c in at.caption if c.value.startswith("Each point"))
    assert "no fp8 FLOP/s figure" in cap and "A100" in cap
    # H100 at fp8: 2 · 70.6e9 / (590.7 · 163,840 B) — the same as bf16 (both halve): 1,459 tokens
    assert metrics(at)["KV = compute, dense [tokens]"] == "1.46k"


def test_efficiency_factors_and_per_phase_mode():
    at = cx_app({"mode": "per-phase", "mfu": "0.5", "bwu": "0.8"})
    # T_c ∝ bw·0.8 / (F·0.5): 1,459 × 1.6 = 2,334 tokens
    assert metrics(at)["KV = compute, dense [tokens]"] == "2.33k"
    assert any("per-phase roofline" in c.value for c in at.caption)


def test_windowed_model_uses_the_numeric_form():
    at = cx_app({"model": "gpt-oss-120b"})
    s = sidebar_system(model="gpt-oss-120b")
    assert s.kv.window_bytes_per_token > 0
    assert r"\min(T_c" in latex(at)[0].value
    assert any("no closed form" in c.value for c in at.caption)
    assert metrics(at)["KV = compute, dense [tokens]"] == tokens(float(compute_crossover_context(
        s.kv, s.model.active_params, s.flops, s.hbm_bandwidth)))


def test_illustrative_chip_is_said_to_be_off_the_chart():
    at = cx_app({"chip": "lecture-gpu"})
    cap = next(c.value for c in at.caption if c.value.startswith("Each point"))
    assert "is not a real chip" in cap
    assert not any((t.get("name") or "").startswith("current chip") for t in fig(at, "Where KV")["data"])
    # the lecture GPU: F/bw = 300 exactly → 2e11 / (300 · 4,096 B) = 162,760 tokens
    assert metrics(at)["Lecture model: KV = compute"] == "163k"


@pytest.mark.parametrize("query, name", [({"cx_f": "abc"}, "cx_f"), ({"cx_f": "0.3"}, "cx_f"),
                                         ({"cx_knee": "5"}, "cx_knee"), ({"cx_x": "decade"}, "cx_x"),
                                         ({"cx_na": "-3"}, "cx_na"), ({"cx_kve": "1e99"}, "cx_kve"),
                                         ({"cx_na": "nan"}, "cx_na")])
def test_bad_page_parameters_give_a_notice_and_the_default(query, name):
    at = cx_app(query)
    assert_notice(at, name)
    assert len(charts(at)) == 4                 # cost, F/bw by chip, crossover by chip, sparse fraction
    assert metrics(at)["KV = compute, dense [tokens]"] == "1.46k"


def test_moving_the_dials_redraws_and_writes_the_url():
    at = cx_app(V1)
    at.select_slider(key="cx_f").set_value(0.5).run()
    at.select_slider(key="cx_knee").set_value(256).run()
    at.radio(key="cx_x").set_value("ratio").run()
    at.number_input(key="cx_na").set_value(50.0).run()
    assert_clean(at)
    m = metrics(at)
    assert m["Reading f = 0.5 [tokens]"] == tokens(1459.0 / 0.5) == "2.92k"
    assert m["√T rule, K = 256 [tokens]"] == "8.32k"             # 1,459² / 256
    assert m["Lecture model: KV = compute"] == "82.7k"            # half of 165,327
    assert written(at) == {"cx_f": "0.5", "cx_knee": "256", "cx_x": "ratio", "cx_na": "50"}
