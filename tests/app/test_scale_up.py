"""AppTest: the Scale-up domain page — clean at defaults and at dial extremes; the numbers it shows equal
`model` (and the CLI) computed here; page dials seeded from the URL; bad parameters reported."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from model import System, decode_step, max_batch_that_fits, presets
from model.cluster import largest_model_params, pipeline
from tests.app.helpers import (
    V1,
    app,
    arr,
    assert_clean,
    assert_notice,
    charts,
    clean_app,
    fig,
    latex,
    metric_list,
    metrics,
    panel_figures,
    sidebar_system,
    trace,
    written,
)
from tests.cli.helpers import run_json
from ui.format import bytes_, number, seconds, usd

GRID = np.arange(1, 577, dtype=float)
su_app = partial(clean_app, page="scale-up")


def test_defaults_clean_four_charts_equations_and_definitions():
    at = su_app(V1)
    assert at.title[0].value.startswith("Scale-up domain")
    # Four charts in three figures: latency and cost against C are one figure of two panels
    # (ui.figures.plot.side_by_side: one plotly draw per move instead of two).
    assert len(charts(at)) == 3
    figs = panel_figures(at)
    assert len(figs) == 4
    assert len(at.caption) >= 6               # the system line + a one-line definition under each chart
    assert len(latex(at)) == 4
    assert written(at) == {}        # page dials at their defaults stay out of the URL
    assert at.session_state["su"] == "B" and at.session_state["sx"] == 4
    for f in figs:                            # units on every y axis (every panel of the bars)
        for k, ax in f["layout"].items():
            if k.startswith("yaxis"):
                assert "[" in ax["title"]["text"], (f["layout"]["title"]["text"], k)
    for f in figs[:3]:                        # and on the sweeps' x axis
        assert "[chips" in f["layout"]["xaxis"]["title"]["text"]
    assert not at.warning and not at.info


def test_headline_numbers_equal_the_model_and_the_cli(capsys):
    at = su_app(V1)
    s = sidebar_system()
    C = s.deployment.chips
    assert C == 8                                               # auto: 141 GB + 172 GB of KV over 80 GB chips
    r = decode_step(s, 64.0, 8192.0)
    m = metrics(at)
    assert m["Bandwidth C·bw"] == f"{bytes_(8 * 3.35e12)}/s" == "26.8 TB/s"
    assert m["Capacity C·M"] == bytes_(8 * 80e9) == "640 GB"
    assert m["Floor W/(C·bw)"] == seconds(float(r.t_weights_s)) == "5.27 ms"     # 141.2 GB / 26.8 TB/s
    assert m["Latency per token"] == seconds(float(r.t_step_s))
    assert m["Cost [$/Mtok]"] == usd(float(r.usd_per_mtok))
    n_max = float(largest_model_params(s, 64.0, 8192.0))
    assert m["Largest model"] == number(n_max) == "234B"                        # (640 GB − 64 × 2.68 GB) / 2
    assert m["Smallest C that fits"] == "4"                                      # 313 GB over 80 GB chips
    assert next(x for x in metric_list(at) if x.label == "Largest model").delta == "holds this model"
    # The CLI with the same inputs gives the same step.
    row = run_json(capsys, "step", "--hardware", "h100", "--model", "llama-3.1-70b", "--chips", "8", "--batch", "64",
                   "--context", "8192")["rows"][0]
    assert m["Floor W/(C·bw)"] == seconds(row["t_weights_s"])
    assert m["Latency per token"] == seconds(row["t_step_s"]) and m["Cost [$/Mtok]"] == usd(row["usd_per_mtok"])
    tex = latex(at)[0].value
    assert "26.8" in tex and "640" in tex and "5.27" in tex and "141" in tex
    assert "234" in latex(at)[1].value and "70.6" in latex(at)[1].value and r"\ge" in latex(at)[1].value
    assert usd(float(r.usd_per_mtok)).replace("$", r"\$") in latex(at)[2].value


def test_sweep_charts_are_one_vectorised_model_call_over_c():
    at = su_app(V1)
    s = sidebar_system()
    r = decode_step(s, 64.0, 8192.0, chips=GRID)
    f = fig(at, "Latency per token")
    floor = trace(f, "latency floor")
    assert np.allclose(arr(floor["x"]), GRID)
    assert np.allclose(arr(floor["y"]), r.t_weights_s * 1e3)
    step = arr(trace(f, "latency per token")["y"])
    assert np.all(np.isnan(step[~r.fits])) and np.allclose(step[r.fits], r.t_step_s[r.fits] * 1e3)
    assert trace(f, "current C")["x"][0] == 8 and trace(f, "current C")["y"][0] == pytest.approx(r.t_step_s[7] * 1e3)
    marks = {a["text"] for a in f["layout"]["annotations"]}
    assert {"Hopper 8 (this chip)", "Blackwell 72", "Rubin Ultra 144", "576 dies"} <= marks
    # Cost: flat in C where it fits (C× the chips for 1/C of the time).
    cost = arr(trace(fig(at, "Cost per million"), "$/Mtok")["y"])
    assert np.allclose(cost[r.fits], r.usd_per_mtok[r.fits]) and np.allclose(cost[r.fits], cost[r.fits][0])
    # Largest model, with the KV of B at T and with the weights alone.
    lm = largest_model_params(s, np.array([[64.0], [0.0]]), 8192.0, chips=GRID[None, :])
    f = fig(at, "Largest model")
    assert np.allclose(arr(trace(f, "weights alone")["y"]), lm[1] / 1e9)
    kv = arr(trace(f, "with the KV")["y"])
    assert np.allclose(kv[lm[0] > 0], lm[0][lm[0] > 0] / 1e9) and np.isnan(kv[lm[0] <= 0]).all()
    assert any(a["text"].startswith("Llama 3.1 70B") for a in f["layout"]["annotations"])


def test_side_by_side_equals_decode_step_with_stages_and_cluster_pipeline():
    at = su_app(V1)
    s = sidebar_system()
    today_dom = decode_step(s, np.array([64.0, 256.0]), 8192.0, chips=np.array([8.0, 32.0]))
    pip = decode_step(s.with_(pipeline_stages=4), 64.0, 8192.0)
    pm = pipeline(s, 64.0, 8192.0, 4.0)
    f = fig(at, "×4 chips")
    bars = f["data"]
    assert all(b["x"] == bars[0]["x"] for b in bars)
    assert bars[0]["x"] == ["today<br>8 chips", "4 stages<br>of 8", "one domain<br>of 32"]
    cap, bw, floor, cost = (arr(b["y"]) for b in bars)
    assert np.allclose(cap, [0.64, 2.56, 2.56])                          # TB: stages and domain both add capacity
    assert np.allclose(bw, [26.8, 26.8, 107.2])                          # TB/s: only the domain adds bandwidth
    assert np.allclose(floor, [today_dom.t_weights_s[0] * 1e3, pip.t_weights_s * 1e3, today_dom.t_weights_s[1] * 1e3])
    assert floor[1] == pytest.approx(floor[0]) and floor[2] == pytest.approx(floor[0] / 4)
    assert np.allclose(cost, [today_dom.usd_per_mtok[0], pip.usd_per_mtok, today_dom.usd_per_mtok[1]])
    assert cost[2] < cost[1]
    # The pipeline's latency (no hops) is the whole model's step: cluster.pipeline agrees with decode_step.
    assert float(pm.latency_s) == pytest.approx(float(pip.t_step_s))
    point = next(x.value for x in at.markdown if "lecture's point" in x.value)
    assert bytes_(float(pm.weight_bytes_per_chip)) in point and bytes_(float(pm.kv_bytes_per_chip)) in point
    tex = latex(at)[3].value
    assert "P = 4" in tex and "C' = 32" in tex and "5.27" in tex and "1.32" in tex


def test_url_seeds_sx_and_su_and_the_fill_curve_equals_the_model():
    at = su_app({"sx": "8", "su": "fill"})
    assert at.session_state["sx"] == 8 and at.session_state["su"] == "fill"
    assert written(at) == {"sx": "8", "su": "fill"}
    f = fig(at, "×8 chips")
    assert f["data"][0]["x"][2] == "one domain<br>of 64"
    s = sidebar_system()
    b_fill = np.minimum(np.floor(max_batch_that_fits(s, 8192.0, chips=GRID)), 65536.0)
    r = decode_step(s, np.maximum(b_fill, 1.0), 8192.0, chips=GRID)
    ok = (b_fill >= 1) & r.fits
    y = arr(trace(fig(at, "Cost per million"), "at the largest batch")["y"])
    assert np.allclose(y[ok], r.usd_per_mtok[ok]) and np.isnan(y[b_fill < 1]).all()
    assert y[ok][-1] < y[ok][0]                   # filling a bigger domain makes tokens cheaper
    # Its latency sits at the HBM drain time M/bw while memory-bound.
    lat = arr(trace(fig(at, "Latency per token"), "at the largest batch")["y"])
    assert lat[ok][-1] == pytest.approx(80e9 / 3.35e12 * 1e3, rel=0.01)


def test_one_chip_nothing_fits_next_to_the_kv():
    at = su_app({"c": "1"})
    s = sidebar_system(chips=1)
    r = decode_step(s, 64.0, 8192.0)
    m = metrics(at)
    assert m["Floor W/(C·bw)"] == seconds(float(r.t_weights_s)) == "42.1 ms"
    assert m["Largest model"] == "none" and m["Smallest C that fits"] == "4"
    assert any("smallest scale-up size that holds them is **C = 4**" in w.value for w in at.warning)
    assert any("KV cache alone" in i.value for i in at.info)
    assert "the KV alone does not fit" in latex(at)[1].value
    assert not any(t["name"].startswith("current") for t in fig(at, "Largest model")["data"])


def test_rubin_ultra_576_dies_counted_as_chips():
    at = su_app({"chip": "rubin-ultra", "c": "576"})
    hw = presets.hardware_presets()["rubin-ultra"]
    s = sidebar_system("rubin-ultra", chips=576)
    r = decode_step(s, 64.0, 8192.0)
    m = metrics(at)
    assert m["Bandwidth C·bw"] == f"{bytes_(576 * hw.hbm_bandwidth_bytes_per_s)}/s"
    assert m["Capacity C·M"] == bytes_(576 * hw.hbm_bytes)
    assert m["Latency per token"] == seconds(float(r.t_step_s))
    assert m["Cost [$/Mtok]"] == usd(float(r.usd_per_mtok))
    assert any("scale-up domain of 144" in w.value for w in at.warning)   # the sidebar's note about C > domain
    f = fig(at, "Latency per token")
    assert trace(f, "current C")["x"][0] == 576
    assert "Rubin Ultra 144 (this chip)" in {a["text"] for a in f["layout"]["annotations"]}
    assert fig(at, "×4 chips")["data"][0]["x"][2] == "one domain<br>of 2304"


def test_a100_deepseek_nothing_fits_in_the_domain():
    at = su_app({"chip": "a100", "model": "deepseek-v3"})
    s = sidebar_system("a100", "deepseek-v3")
    assert s.deployment.chips == 8                                      # auto stops at the domain
    lm = float(largest_model_params(s, 64.0, 8192.0))
    m = metrics(at)
    assert m["Largest model"] == number(lm) == "302B"
    assert next(x for x in metric_list(at) if x.label == "Largest model").delta == "this model is too big"
    r = decode_step(s, 64.0, 8192.0, chips=GRID)
    c_min = int(GRID[np.flatnonzero(r.fits)[0]])
    assert m["Smallest C that fits"] == str(c_min) == "18"
    assert any(f"**C = {c_min}**" in w.value for w in at.warning)
    assert r"<" in latex(at)[1].value and "671" in latex(at)[1].value
    step = arr(trace(fig(at, "Latency per token"), "latency per token")["y"])
    assert np.isnan(step[:c_min - 1]).all() and np.isfinite(step[c_min - 1:]).all()


def test_ten_million_context_nothing_fits_anywhere_on_the_sweep():
    at = su_app({"ctx": "10000000", "su": "fill"})
    m = metrics(at)
    assert m["Smallest C that fits"] == "> 576" and m["Largest model"] == "none"
    assert any("not even **C = 576**" in w.value for w in at.warning)
    assert any("KV cache alone" in i.value for i in at.info)
    s = sidebar_system(context=1e7)
    r = decode_step(s, 64.0, 1e7)
    assert m["Latency per token"] == seconds(float(r.t_step_s))
    assert len(charts(at)) == 3


@pytest.mark.parametrize("query, name", [({"sx": "garbled"}, "sx"), ({"sx": "3"}, "sx"), ({"su": "max"}, "su")])
def test_bad_page_parameters_give_a_notice_and_the_default(query, name):
    at = su_app(query)
    assert_notice(at, name)
    assert at.session_state["sx"] == 4 and at.session_state["su"] == "B"
    assert len(charts(at)) == 3


def test_moving_the_dials_redraws_and_writes_the_url():
    at = su_app(V1)
    at.radio(key="sx").set_value(2).run()
    at.radio(key="su").set_value("fill").run()
    assert_clean(at)
    assert written(at) == {"sx": "2", "su": "fill"}
    f = fig(at, "×2 chips")
    assert np.allclose(arr(f["data"][1]["y"]), [26.8, 26.8, 53.6])
    assert any(t["name"].startswith("at the largest batch") for t in fig(at, "Latency per token")["data"])
    at.select_slider(key="c").set_value(72).run()
    assert_clean(at)
    assert metrics(at)["Floor W/(C·bw)"] == seconds(141.2e9 / (72 * 3.35e12))


def test_below_ideal_efficiency_draws_the_ideal_latency_too():
    at = app({"mfu": "0.5", "bwu": "0.5"}, page="scale-up")
    assert_clean(at)
    f = fig(at, "Latency per token against scale-up size")
    ideal = trace(f, "ideal roofline")
    x, y = arr(ideal["x"]).astype(float), arr(ideal["y"]).astype(float)
    s = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b"))
    assert np.allclose(y, decode_step(s, 64, 8192, chips=x).t_step_s * 1e3)
