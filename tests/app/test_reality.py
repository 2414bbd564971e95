"""AppTest: the Reality check page — clean at defaults and across measurements and filters; the numbers it
shows equal model/calibrate.py; URL parameters seed the dials; bad ones give a notice; the fitted
efficiency button sets the sidebar's dials (and so every page's curves)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from model import calibrate as cal
from model import presets
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
    trace,
    written,
)
from ui.format import number

ITEMS = presets.measurement_presets()
CHECK = cal.check(ITEMS)
rc_app = partial(clean_app, page="reality")


def expected(key: str) -> tuple[float, float, float]:
    i = CHECK.keys.index(key)
    return float(CHECK.measured[i]), float(CHECK.ideal[i]), float(CHECK.efficiency[i])


def test_defaults_show_deepseek_production_against_its_bound():
    at = rc_app(V1)
    assert at.title[0].value.startswith("Reality check")
    assert at.session_state["rc_m"] == "deepseek-h800-production" and written(at) == {}
    meas, ideal, eff = expected("deepseek-h800-production")
    m = metrics(at)
    assert m["Measured [out tok/s/GPU]"] == number(meas) == "1,850"          # 14,800 per node / 8
    assert m["Ideal bound [out tok/s/GPU]"] == number(ideal) == "4,513"      # B_fit · 21 / 144
    assert m["Measured ÷ ideal"] == f"{100 * eff:.3g} %" == "41 %"
    assert m["What caps the ideal batch"] == "capacity"
    assert len(charts(at)) == 2 and len(latex(at)) >= 4
    assert any("4,989" in x.value or "4.99k" in x.value for x in at.markdown)   # the published mean KV length
    # The fit over every measurement, shown and offered to the sidebar.
    f = cal.fit_check(CHECK)
    assert m["Compute MFU"].startswith(f"{f.mfu:.2f}") and m["HBM bandwidth util."].startswith(f"{f.bwu:.2f}")
    assert m["Points in the fit"] == str(len(ITEMS))
    assert at.button(key="rc_apply").label == f"Use MFU {round(f.mfu, 2):.2f} and bandwidth {round(f.bwu, 2):.2f} " \
                                              "on every page"
    for fg in charts(at):                       # units on every axis with numbers
        assert "[" in fg["layout"]["xaxis"]["title"]["text"]
    assert "[tok/s]" in fig(at, "This setup's bound")["layout"]["yaxis"]["title"]["text"]


def test_the_frontier_chart_is_the_model_at_this_setup():
    at = rc_app(V1)
    t = cal.terms(ITEMS["deepseek-h800-production"])
    f = fig(at, "This setup's bound")
    ideal = trace(f, "ideal bound (MFU = BWU = 1)")
    u, y = arr(ideal["x"]), arr(ideal["y"])
    want = cal.at_speed(t, u)["tokens_per_s_per_chip"]
    assert np.allclose(y, np.where(want > 0, want, np.nan), equal_nan=True, rtol=1e-9)
    chosen = trace(f, "chosen measurement")
    assert chosen["x"] == [21.0] and chosen["y"] == [1850.0]
    # Every other published point lies on or under this setup's ideal curve: the strip shows all ≤ 100 %.
    strip = fig(at, "Measured ÷ ideal")
    xs = np.concatenate([arr(tr["x"]) for tr in strip["data"]])
    assert np.all(xs <= 100.0) and len(xs) == len(ITEMS) + 1                # + the chosen marker


@pytest.mark.parametrize("key", ["sglang-deepseek-gb200-nvfp4", "trtllm-llama-3.1-405b-h100-tp8-20000-2000",
                                 "inferencex-dsr1-fp4-gb200-c2253", "inferencex-gptoss-mi300x-1k-1k",
                                 "rtp-llm-deepseek-h800"])
def test_each_kind_of_measurement_from_the_url(key):
    at = rc_app({"rc_m": key})
    assert at.session_state["rc_m"] == key
    meas, ideal, eff = expected(key)
    m = metrics(at)
    assert m["Measured [out tok/s/GPU]"] == number(meas) and m["Ideal bound [out tok/s/GPU]"] == number(ideal)
    assert m["Measured ÷ ideal"] == f"{100 * eff:.3g} %"
    f = fig(at, "This setup's bound")
    if ITEMS[key].tokens_per_s_per_user is None:       # no speed: a dotted line at the measured throughput
        assert [s["y0"] for s in f["layout"]["shapes"]] == [meas]
    else:
        assert trace(f, "chosen measurement")["y"] == [pytest.approx(meas)]
    assert written(at) == {"rc_m": key}


def test_filters_narrow_the_list_and_the_fit():
    at = rc_app({"rc_model": "deepseek-v3", "rc_chip": "gb200"})
    sel = cal.select(ITEMS, model="deepseek-v3", hardware="gb200")
    assert at.session_state["rc_m"] == next(iter(sel))            # the default is not on GB200: first match
    assert at.selectbox(key="rc_m").options == [ITEMS[k].name for k in sel]
    f = cal.fit_check(CHECK, np.isin(np.array(CHECK.keys), np.array(list(sel))))
    m = metrics(at)
    assert m["Points in the fit"] == str(len(sel)) and m["Compute MFU"].startswith(f"{f.mfu:.2f}")
    strip = fig(at, "Measured ÷ ideal")
    grey = [tr for tr in strip["data"] if "(not selected)" in (tr.get("name") or "")]
    assert sum(len(arr(tr["x"])) for tr in grey) == len(ITEMS) - len(sel)
    # Widening a filter keeps the chosen measurement.
    chosen = at.session_state["rc_m"]
    at.selectbox(key="rc_chip").set_value("all").run()
    assert_clean(at)
    assert at.session_state["rc_m"] == chosen


def test_choosing_another_measurement_redraws():
    at = rc_app(V1)
    at.selectbox(key="rc_m").set_value("sglang-deepseek-h100-decode").run()
    assert_clean(at)
    meas, ideal, _ = expected("sglang-deepseek-h100-decode")
    assert metrics(at)["Ideal bound [out tok/s/GPU]"] == number(ideal)
    chosen = trace(fig(at, "This setup's bound"), "chosen measurement")
    assert chosen["x"] == [pytest.approx(10.88)] and chosen["y"] == [pytest.approx(22_282 / 8)]
    assert written(at) == {"rc_m": "sglang-deepseek-h100-decode"}


def test_filters_that_match_nothing_say_so():
    at = rc_app({"rc_model": "gpt-oss-120b", "rc_chip": "h100"})
    assert any("No measurement matches" in x.value for x in at.info)
    assert not charts(at)


@pytest.mark.parametrize("query, name", [({"rc_m": "nope"}, "rc_m"), ({"rc_model": "gpt-7"}, "rc_model"),
                                         ({"rc_chip": "h9000"}, "rc_chip"), ({"rc_pub": "x" * 80}, "rc_pub")])
def test_bad_parameters_give_a_notice_and_the_default(query, name):
    at = rc_app(query)
    assert_notice(at, name)
    assert len(charts(at)) == 2


def test_apply_sets_the_sidebar_efficiency_for_every_page_and_reset_restores_it():
    at = rc_app({"rc_pub": "NVIDIA"})
    sel = cal.select(ITEMS, publisher="NVIDIA")
    f = cal.fit_check(CHECK, np.isin(np.array(CHECK.keys), np.array(list(sel))))
    at.button(key="rc_apply").click().run()
    assert_clean(at)
    mfu, bwu = round(f.mfu, 2), round(f.bwu, 2)
    assert at.session_state["mfu"] == mfu and at.session_state["bwu"] == bwu
    dep = at.session_state["_view"].system.deployment                     # what every page draws with
    assert (dep.mfu, dep.bw_util) == (mfu, bwu)
    assert at.query_params["mfu"] == f"{mfu:g}" and at.query_params["bwu"] == f"{bwu:g}"
    at.button(key="rc_reset").click().run()
    assert at.session_state["mfu"] == 1.0 and at.session_state["bwu"] == 1.0
    assert "mfu" not in written(at)
