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
    metric_list,
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
    assert len(charts(at)) == 4 and len(latex(at)) >= 4
    assert any("4,989" in x.value or "4.99k" in x.value for x in at.markdown)   # the published mean KV length
    # The fit over every measurement, shown and offered to the sidebar.
    f = cal.fit_check(CHECK)
    assert m["Compute MFU"].startswith(f"{f.mfu:.2f}") and m["HBM bandwidth util."].startswith(f"{f.bwu:.2f}")
    assert m["Points in the fit"] == str(len(ITEMS))
    assert at.button(key="rc_apply").label == f"Use MFU {round(f.mfu, 2):.2f} and bandwidth {round(f.bwu, 2):.2f} " \
                                              "on every page"
    for fg in charts(at):                       # units on every axis with numbers (the bars' x: kinds of hold-out)
        ax = "yaxis" if fg["layout"]["xaxis"].get("type") == "category" else "xaxis"
        assert "[" in fg["layout"][ax]["title"]["text"]
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
    assert len(charts(at)) == 4


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


# ---- the efficiency model (model/calibrate.py's built-in fit) and its held-out error

KINDS = ("k5", "model", "chip", "publisher")


def _errors(ratio) -> tuple[float, float]:
    e = np.abs(np.asarray(ratio) - 1.0)
    return 100 * float(np.median(e)), 100 * float(np.percentile(e, 90))


def test_the_held_out_error_chart_is_each_cross_validation_of_the_built_in_points():
    at = rc_app(V1)
    f = fig(at, "Held-out error of the prediction")
    med, p90 = trace(f, "median"), trace(f, "90th percentile")
    assert list(med["customdata"]) == ["a random fifth", "one model", "one chip", "one publisher", "none (in-sample)"]
    want = [_errors(cal.built_in_cv(k).ratio) for k in KINDS] + [_errors(cal.built_in_fit().fitted.ratio)]
    assert np.allclose(arr(med["y"]).astype(float), [w[0] for w in want], rtol=1e-9)
    assert np.allclose(arr(p90["y"]).astype(float), [w[1] for w in want], rtol=1e-9)
    assert "[%]" in f["layout"]["yaxis"]["title"]["text"]
    # docs/prediction.md's figures: five-fold 17.1 % / 44.6 %, a model out 18.1 % / 47.7 %
    assert (round(want[0][0], 1), round(want[0][1], 1), round(want[1][0], 1)) == (17.1, 44.6, 18.1)


def test_the_predicted_sentence_states_the_fitted_terms():
    at = rc_app(V1)
    s = cal.built_in_summary()
    e = s.efficiency
    (text,) = [m.value for m in at.markdown if "draws this model beside the ideal roofline" in m.value]
    assert f"HBM bandwidth at {100 * e.bandwidth:.3g} %, dense compute at {100 * e.compute:.3g} %" in text
    assert "attention's FLOPs at the chip's bf16 peak" in text and cal.expert_phrase(e) in text
    assert f"{e.prompt_layer_s * 1e3:.3g} ms per layer" in text and f"the {s.n} built-in measurements" in text


@pytest.mark.parametrize("by", ["model", "publisher", "k5"])
def test_the_strip_shows_every_point_held_out_by_group(by):
    at = rc_app({} if by == "model" else {"rc_cv": by})
    assert at.session_state["rc_cv"] == by and written(at) == ({} if by == "model" else {"rc_cv": by})
    cv = cal.built_in_cv(by)
    f = fig(at, "Held-out predicted ÷ measured")
    dots = trace(f, "a measurement, held out")
    assert np.allclose(np.sort(arr(dots["x"]).astype(float)), np.sort(cv.ratio), rtol=1e-9)
    groups = sorted(set(cv.groups))
    assert len(f["layout"]["yaxis"]["ticktext"]) == len(groups)
    medians = sorted(float(np.median(cv.ratio[cv.groups == g])) for g in groups)
    assert np.allclose(arr(trace(f, "the group's median")["x"]).astype(float), medians, rtol=1e-9)
    # The band drawn is the five-fold one, 10th to 90th percentile.
    lo, hi = np.percentile(cal.built_in_cv("k5").ratio, [10, 90])
    rect = next(s for s in f["layout"]["shapes"] if s.get("type") == "rect")
    assert (rect["x0"], rect["x1"]) == (pytest.approx(lo, rel=1e-9), pytest.approx(hi, rel=1e-9))


def test_a_bad_hold_out_kind_is_named():
    at = rc_app({"rc_cv": "seed"})
    assert_notice(at, "rc_cv")
    assert at.session_state["rc_cv"] == "model"


def test_the_chosen_measurement_is_predicted_unseen_and_its_frontier_predicted():
    key = "sglang-deepseek-h100-decode"
    at = rc_app({"rc_m": key})
    cv = cal.built_in_cv("k5")
    i = cv.keys.index(key)
    ms = {x.label: x for x in metric_list(at)}
    got = ms["Predicted [out tok/s/GPU]"]
    assert got.value == number(float(cv.predicted[i]))
    assert got.delta == f"{cv.predicted[i] / cv.measured[i]:.2f}× measured"
    # The frontier's purple curve: the fitted model's largest batch at each speed, B·u/C; the band ÷ hi … ÷ lo
    # (a ratio r = predicted ÷ measured: measured = predicted ÷ r).
    f = fig(at, "This setup's bound")
    p = trace(f, "predicted (fitted efficiencies)")
    u, y = arr(p["x"]).astype(float), arr(p["y"]).astype(float)
    parts = cal.parts(ITEMS[key])
    b = cal.batch_at_speed(parts, u, cal.built_in_summary().efficiency)
    want = np.where(b >= 1, b * u / float(parts.chips), np.nan)
    assert np.allclose(y, want, rtol=1e-9, equal_nan=True) and np.isfinite(y).any()
    lo, hi = np.percentile(cv.ratio, [10, 90])
    upper = next(t for t in f["data"] if t.get("name") == "held-out error band (10th–90th pct, k5)")
    assert np.allclose(arr(upper["y"]).astype(float), want / lo, rtol=1e-9, equal_nan=True)
    lower = trace(f, "held-out error band (10th–90th pct, k5) (lower edge)")
    assert np.allclose(arr(lower["y"]).astype(float), want / hi, rtol=1e-9, equal_nan=True)


def test_choosing_what_is_held_out_redraws_the_strip_and_writes_the_url():
    at = rc_app(V1)
    at.radio(key="rc_cv").set_value("chip").run()
    assert_clean(at)
    assert written(at) == {"rc_cv": "chip"}
    f = fig(at, "Held-out predicted ÷ measured, one chip out")
    assert len(f["layout"]["yaxis"]["ticktext"]) == len(set(cal.built_in_cv("chip").groups))
    assert any(t.startswith("H100 SXM5") for t in f["layout"]["yaxis"]["ticktext"])   # no vendor in a row label
