"""AppTest: the app shell (dials, URL contract) and the Batch page."""

import re

import numpy as np
import pytest

from model import Deployment, Precision, System, auto_chips, decode_step, presets, system_balance_batch
from model import calibrate as cal
from tests.app.helpers import (
    V1,
    app,
    arr,
    assert_clean,
    charts,
    dot,
    fig,
    latex,
    latex_text,
    metric_list,
    metrics,
    page_text,
    predicted_dense,
    sidebar_system,
    trace,
    written,
)
from ui.format import number, seconds, usd
from ui.state import dials
from ui.state.dials import BATCH_OPTIONS, CONTEXT_OPTIONS


def test_defaults_run_clean_and_match_the_model():
    at = app(V1)
    assert_clean(at)
    s = sidebar_system()
    r = decode_step(s, 64, 8192)                       # sidebar defaults: B = 64, T = 8k, C auto
    m = metrics(at)
    assert m["Ideal latency per token"] == seconds(float(r.t_step_s))     # the default estimate: the roofline
    assert m["Ideal cost [$/Mtok]"] == usd(float(r.usd_per_mtok))
    assert m["Ideal bound"] == str(r.bound)
    assert len(charts(at)) == 4
    # A version-1 link is written back as today's link to the same view: the old defaults spelled out.
    assert dict(at.query_params) == {"chip": "h100", "model": "llama-3.1-70b", "w": "bf16", "kv": "bf16",
                                     "cd": "bf16", "b": "64", "ctx": "8192", "c": "auto", "v": "2"}


def test_url_seeds_the_dials():
    at = app({"chip": "lecture-gpu", "model": "lecture-deepseek", "c": "72", "b": "2048", "ctx": "1024"})
    assert_clean(at)
    s = sidebar_system("lecture-gpu", "lecture-deepseek", chips=72)
    # The lecture's B* = 300 × 8 = 2,400, and the batch from the URL is used.
    assert float(system_balance_batch(s)) == pytest.approx(2400)
    r = decode_step(s, 2048, 1024)
    assert metrics(at)["Ideal cost [$/Mtok]"] == usd(float(r.usd_per_mtok))
    assert dict(at.query_params)["b"] == "2048"


def test_moving_a_dial_changes_the_numbers_and_the_url():
    at = app(V1)
    before = metrics(at)["Ideal cost [$/Mtok]"]
    at.select_slider(key="b").set_value(1024).run()
    assert_clean(at)
    r = decode_step(sidebar_system(batch=1024), 1024, 8192)
    assert metrics(at)["Ideal cost [$/Mtok]"] == usd(float(r.usd_per_mtok)) != before
    assert written(at) == {"b": "1024"}


@pytest.mark.parametrize("query,name", [
    ({"b": "abc"}, "'b'"), ({"b": "7"}, "'b'"), ({"ctx": "-5"}, "'ctx'"), ({"chip": "h1000"}, "'chip'"),
    ({"sp": "nan"}, "'sp'"), ({"price": "inf"}, "'price'"), ({"mfu": "2"}, "'mfu'"), ({"zzz": "1"}, "'zzz'"),
    ({"b": "9" * 500}, "'b'"),
])
def test_garbled_parameters_give_a_notice_and_defaults(query, name):
    at = app(query)
    assert_clean(at)
    notes = " ".join(w.value for w in at.warning)
    assert "URL parameter" in notes and name in notes
    # A link that names a dial and no v is read on version 1's defaults; one naming no dial on today's.
    old = any(k in dials.REGISTRY.dials for k in query)
    assert (at.session_state["b"], at.session_state["ctx"]) == ((64, 8192) if old else
                                                                 (dials.DEFAULTS["b"], dials.DEFAULTS["ctx"]))


def test_sparsity_and_price_overrides():
    at = app({"model": "lecture-deepseek", "chip": "h100", "sp": "4", "price": "3"})
    assert_clean(at)
    m = presets.get("model", "lecture-deepseek").with_sparsity(4)
    hw = presets.get("hardware", "h100").with_(price_usd_per_hour=3.0)
    s = System(hw, m, Precision(), Deployment(chips=auto_chips(hw, m, Precision(), 64, 8192)))
    r = decode_step(s, 64, 8192)
    assert metrics(at)["Ideal cost [$/Mtok]"] == usd(float(r.usd_per_mtok))


def test_compute_dtype_missing_on_chip_falls_back_with_a_warning():
    at = app({"chip": "a100", "cd": "fp8"})
    assert_clean(at)
    assert any("no fp8" in w.value for w in at.warning)


@pytest.mark.parametrize("query", [
    {"b": str(BATCH_OPTIONS[0]), "ctx": str(CONTEXT_OPTIONS[0])},
    {"b": str(BATCH_OPTIONS[-1]), "ctx": str(CONTEXT_OPTIONS[-1])},
    {"c": "1", "chip": "tpu-v5e", "model": "llama-3.1-405b"},
    {"c": "576", "chip": "rubin-ultra", "model": "kimi-k2", "w": "fp4", "kv": "fp4", "cd": "fp4"},
    {"mode": "per-phase", "mfu": "0.01", "bwu": "0.01", "sp": "1000", "price": "0.01"},
    {"model": "gpt-oss-120b", "ctx": "10000000", "b": "65536"},
])
def test_extremes_run_clean(query):
    at = app(query)
    assert_clean(at)
    assert len(charts(at)) == 4


def test_unbatched_ratio_is_the_lecture_thousandfold():
    # Lecture chip and model on a 72-chip rack at 1k context: B = 1 costs ≈ B*-fold more than at B*.
    at = app({"chip": "lecture-gpu", "model": "lecture-deepseek", "c": "72", "ctx": "1024"})
    ratio = metrics(at)["Ideal unbatched cost ÷ best"]
    s = sidebar_system("lecture-gpu", "lecture-deepseek", chips=72)
    grid = np.unique(np.concatenate([np.geomspace(1, 65536, 241), BATCH_OPTIONS, [64.0]]))
    r = decode_step(s, grid, 1024)
    cost = np.where(r.fits, r.usd_per_mtok, np.inf)
    assert ratio == f"{number(float(r.usd_per_mtok[0] / cost.min()))}×"
    assert 1000 < r.usd_per_mtok[0] / cost.min() < 3000


def test_equation_shows_todays_numbers():
    at = app({"chip": "lecture-gpu", "model": "lecture-deepseek", "c": "72"})
    tex = latex_text(at)
    assert "300 \\times 8" in tex and "2{,}400" in tex


def test_below_ideal_efficiency_draws_the_ideal_curve_too():
    """With a fitted (or chosen) efficiency, the realistic and the ideal curves show together."""
    at = app({"mfu": "0.5", "bwu": "0.25", "c": "8"})
    assert_clean(at)
    lat = charts(at)[0]
    names = [t.get("name") for t in lat["data"]]
    assert "ideal roofline (efficiency 1)" in names
    ideal = next(t for t in lat["data"] if t.get("name") == "ideal roofline (efficiency 1)")
    x = np.asarray(arr(ideal["x"]), float)
    y = np.asarray(arr(ideal["y"]), float)
    s = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b")).with_(chips=8)
    assert np.allclose(y, decode_step(s, x, 8192).t_step_s * 1e3)       # efficiency 1: the plain roofline
    # ... and the main curve is the realistic one: at B = 1 (weight-bound) it is 4× slower (bw_util 0.25).
    main = next(t for t in lat["data"] if t.get("name") == "roofline at MFU 0.5, bandwidth 0.25")
    assert np.asarray(arr(main["y"]), float)[0] == pytest.approx(4 * y[0], rel=1e-9)
    assert "ideal roofline (efficiency 1)" not in [t.get("name") for t in charts(app({"c": "8"}))[0]["data"]]


# ---- the step-time equation: the printed terms give the printed t_step, in the mode in force

_UNIT = {"": 1.0, "m": 1e-3, "µ": 1e-6, "k": 1e3}
_SECONDS = r"([0-9.]+(?:e[-+]?\d+)?)\\,\\text\{([kmµ]?)s\}"      # ui.equations.tex_num(x, "s")


def _seconds(tex: str) -> list[float]:
    return [float(v) * _UNIT[p] for v, p in re.findall(_SECONDS, tex)]


def _step_equation(at) -> tuple[str, list[list[float]], list[float], float]:
    """The t_step equation's numbers: the numeric \\max(…) groups, any added terms, the result."""
    tex = next(l.value for l in latex(at) if "t_{step}" in l.value)
    numeric = tex.split(r"\allowbreak")[0].split(r"\Big)")[-1]        # after the symbolic side
    groups = re.findall(r"\\max\(([^()]*)\)", numeric)
    head, result = numeric.rsplit("=", 1)
    added = _seconds(head[head.rindex(")") + 1:])
    return tex, [_seconds(g) for g in groups], added, _seconds(result)[0]


# Llama 3.1 70B on 8 H100s, B = 1,024 at 1k context (fits in HBM): matmul (18.3 ms) outweighs the
# weight fetch (5.3 ms), and the KV read (12.8 ms) the attention FLOPs (0.35 ms), so the lecture's
# max(matmul, weights + KV) = 18.3 ms and the per-phase max(matmul, weights) + max(attention, KV)
# = 31.1 ms differ (checked below): a wrong combination cannot pass by accident.
_QUERY, _B, _T = {"c": "8", "ctx": "1024", "b": "1024"}, 1024, 1024


def test_step_equation_lecture_mode_adds_up():
    at = app(_QUERY)
    assert_clean(at)
    tex, groups, added, result = _step_equation(at)
    r = decode_step(sidebar_system(chips=8), _B, _T)
    assert len(groups) == 1 and len(groups[0]) == 2 and added == [], tex     # max(matmul, weights + KV)
    # Each printed term is the model's, to display rounding (3 significant digits: ≤ 0.5 %).
    assert groups[0] == pytest.approx([float(r.t_matmul_s), float(r.t_weights_s + r.t_kv_s)], rel=5e-3)
    # The printed terms give the printed result: max(a, b) = t_step, within two roundings (≤ 1 %).
    assert max(groups[0]) == pytest.approx(result, rel=1e-2)
    assert result == pytest.approx(float(r.t_step_s), rel=5e-3)
    assert r"\max\Big(\tfrac{2 N_a B}{C F},\ \tfrac{W + B\,kv(T)}{C\,bw}\Big)" in tex
    assert "t_{comm}" not in tex and "t_{hop}" not in tex                      # zero here: not printed


def test_step_equation_per_phase_mode_adds_up():
    at = app({**_QUERY, "mode": "per-phase"})
    assert_clean(at)
    tex, groups, added, result = _step_equation(at)
    r = decode_step(sidebar_system(chips=8).with_(mode="per-phase"), _B, _T)
    # max(t_matmul, t_weights) + max(t_attn, t_kv)  (docs/design.md "The physics", per-phase)
    assert [len(g) for g in groups] == [2, 2] and added == [], tex
    assert groups[0] == pytest.approx([float(r.t_matmul_s), float(r.t_weights_s)], rel=5e-3)
    assert groups[1] == pytest.approx([float(r.t_attn_s), float(r.t_kv_s)], rel=5e-3)
    assert max(groups[0]) + max(groups[1]) == pytest.approx(result, rel=1e-2)
    assert result == pytest.approx(float(r.t_step_s), rel=5e-3)
    # The lecture's single max of the same terms is a different number here: printing it (the old
    # equation) would not have given this result.
    lecture_max = max(groups[0][0], groups[0][1] + groups[1][1])
    assert abs(lecture_max - result) > 0.05 * result
    assert r"\mathrm{attn}(T)" in tex
    # The breakdown's caption names the mode in force (it used to say "lecture mode" here too).
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Per-phase mode: the step is the matmul phase") for c in captions), captions
    assert not any("(lecture mode)" in c for c in captions), captions


def test_sidebar_efficiency_and_export_dials_are_lazy_and_keep_their_values():
    """The sidebar's Efficiency and Export expanders draw their dials only while open (three
    widgets fewer to redraw per sidebar move).  Closed, the values from the link still feed the page and
    stay in the URL; set while open, they survive the expander closing and later moves."""
    from ui.state.view import EFFICIENCY_OPEN_KEY, EXPORT_OPEN_KEY
    at = app({"mfu": "0.5", "img": "svg"})
    assert_clean(at)
    assert [s.key for s in at.slider] == [] and [r.key for r in at.radio if r.key == "img"] == []
    assert at.session_state["mfu"] == 0.5 and written(at) == {"mfu": "0.5", "img": "svg"}
    at.select_slider(key="b").set_value(256).run()
    assert written(at) == {"b": "256", "mfu": "0.5", "img": "svg"}
    at.session_state[EFFICIENCY_OPEN_KEY] = True                 # what a click on the expander does
    at.session_state[EXPORT_OPEN_KEY] = True
    at.run()
    assert at.slider(key="mfu").value == 0.5 and at.slider(key="bwu").value == 1.0
    assert at.radio(key="img").value == "svg"
    at.slider(key="mfu").set_value(0.7).run()
    at.session_state[EFFICIENCY_OPEN_KEY] = False
    at.run()
    at.select_slider(key="b").set_value(512).run()
    assert [s.key for s in at.slider] == []
    assert written(at) == {"b": "512", "mfu": "0.7", "img": "svg"}
    # the page reads the efficiency it does not draw: the step at MFU 0.7 (compute term ÷ 0.7)
    assert at.session_state["_view"].system.deployment.mfu == 0.7
    assert written(at).get(EFFICIENCY_OPEN_KEY) is None          # the open state is not a dial


# ---- the estimate switch (sidebar, `est`): ideal roofline or the fitted model's prediction

def test_the_estimate_switch_lives_in_the_url_and_defaults_to_ideal():
    at = app(V1)
    assert at.session_state["est"] == "ideal" and at.session_state["_view"].estimate == "ideal"
    assert "est" not in at.query_params                                 # the default stays out of the link
    at.radio(key="est").set_value("predicted").run()
    assert_clean(at)
    assert written(at) == {"est": "predicted"} and at.session_state["_view"].predicted
    at = app({"est": "predicted"})
    assert_clean(at)
    assert at.radio(key="est").value == "predicted" and written(at) == {"est": "predicted"}
    at = app({"est": "realistic"})
    assert_clean(at)
    notes = " ".join(w.value for w in at.warning)
    assert "'est'" in notes and "ideal, predicted" in notes and at.session_state["est"] == "ideal"


PREDICTED, BAND, IDEAL = "predicted (fitted efficiencies)", "held-out error band (10th–90th pct, k5)", "ideal roofline"


def _band() -> tuple[float, float]:
    """10th and 90th percentiles of the held-out (five-fold) predicted ÷ measured tokens/s per GPU."""
    lo, hi = cal.built_in_summary().band        # as the page reads it; equal to the CV's (test_calibrate_summary)
    return float(lo), float(hi)


@pytest.mark.parametrize("est", ["ideal", "predicted"])
def test_the_predicted_curve_and_band_are_the_fitted_model_at_the_pages_dials(est):
    """Llama 3.1 70B (dense) on 8 H100s at 8k: both charts draw the fitted model's decode step beside the
    roofline, whichever estimate the numbers read, with the band where 8 in 10 held-out measurements fall."""
    at = app({"c": "8", "est": est})
    assert_clean(at)
    s = sidebar_system(chips=8)
    lo, hi = _band()
    # A ratio r = predicted ÷ measured throughput means measured = predicted ÷ r; at one batch a time (or a cost)
    # per token goes as 1 / throughput, so measured time = predicted time × r: the band is [× lo, × hi].
    for title, k, scale in (("Latency per token", 0, 1e3), ("Cost per million tokens", 1, 1.0)):
        f = fig(at, title)
        names = [t.get("name") for t in f["data"]]
        assert {IDEAL, PREDICTED, BAND} <= set(names), names
        p = trace(f, PREDICTED)
        x, y = arr(p["x"]).astype(float), arr(p["y"]).astype(float)
        want = predicted_dense(s, x, 8192)[k] * scale
        fits = decode_step(s, x, 8192).fits
        assert np.allclose(y[fits], want[fits], rtol=1e-9) and np.isnan(y[~fits]).all()
        upper = next(t for t in f["data"] if t.get("name") == BAND)
        lower = trace(f, f"{BAND} (lower edge)")
        assert np.allclose(arr(upper["y"]).astype(float)[fits], want[fits] * hi, rtol=1e-9)
        assert np.allclose(arr(lower["y"]).astype(float)[fits], want[fits] * lo, rtol=1e-9)
        assert not np.allclose(arr(upper["y"]).astype(float)[fits], want[fits] / lo, rtol=1e-6)   # not the other way
        # The ideal curve stays drawn: the plain roofline.
        ideal = trace(f, IDEAL)
        r = decode_step(s, arr(ideal["x"]).astype(float), 8192)
        got = arr(ideal["y"]).astype(float)
        assert np.allclose(got[r.fits], ((r.t_step_s * 1e3) if k == 0 else r.usd_per_mtok)[r.fits], rtol=1e-9)
    # The band's direction, checked against the measurements themselves: a held-out point's measured time per
    # token over its predicted one is its ratio, and 8 in 10 of those lie in [lo, hi].
    cv = cal.built_in_cv("k5")
    t_ratio = (1 / cv.measured) / (1 / cv.predicted)
    assert 0.78 <= np.mean((t_ratio >= lo) & (t_ratio <= hi)) <= 0.82
    # The dot sits on the curve the switch picks.
    t_pred, cost_pred, _ = predicted_dense(s, 64.0, 8192)
    r64 = decode_step(s, 64, 8192)
    want_dot = float(t_pred) * 1e3 if est == "predicted" else float(r64.t_step_s) * 1e3
    assert dot(fig(at, "Latency per token"), "B = 64")[1] == pytest.approx(want_dot, rel=1e-9)


def test_the_metrics_say_which_estimate_they_show_and_change_with_the_switch():
    at = app({"c": "8"})
    s = sidebar_system(chips=8)
    r = decode_step(s, 64, 8192)
    m = metrics(at)
    assert m["Ideal latency per token"] == seconds(float(r.t_step_s)) and m["Ideal cost [$/Mtok]"] == usd(
        float(r.usd_per_mtok))
    assert not any(k.startswith("Predicted") for k in m)
    at.radio(key="est").set_value("predicted").run()
    assert_clean(at)
    t, cost = (float(v) for v in predicted_dense(s, 64.0, 8192)[:2])
    lo, hi = _band()
    ms = {x.label: x for x in metric_list(at)}
    assert not any(k.startswith("Ideal") for k in ms)
    assert ms["Predicted latency per token"].value == seconds(t) != seconds(float(r.t_step_s))
    assert ms["Predicted latency per token"].delta == f"{seconds(t * lo)} – {seconds(t * hi)}"
    assert ms["Predicted cost [$/Mtok]"].value == usd(cost)
    assert ms["Predicted cost [$/Mtok]"].delta == f"{usd(cost * lo)} – {usd(cost * hi)}"
    assert ms["Predicted speed per user [tok/s]"].value == number(1 / t)
    assert ms["Predicted throughput per chip [tok/s]"].value == number(64 / (8 * t))
    e = cal.built_in_summary().efficiency
    r1 = decode_step(s, 64, 8192)
    assert ms["Predicted bound"].value == ("compute" if (r1.t_matmul_s + r1.t_attn_s) / e.compute
                                           >= (r1.t_weights_s + r1.t_kv_s) / e.bandwidth else "memory")
    assert ms["Predicted batch-train latency"].value == f"{seconds(1.5 * t)} avg"
    assert written(at) == {"c": "8", "est": "predicted"}
    # The caption states the fit and the band from the model.
    text = page_text(at, "caption")
    assert f"{lo:.2f}–{hi:.2f}" in text and f"{100 * e.bandwidth:.3g} %" in text
    assert f"fitted to {len(presets.measurement_presets())} published measurements" in text
    assert "The numbers above read the prediction" in text


def test_the_prediction_ignores_the_efficiency_dials_and_says_so():
    at = app({"c": "8", "mfu": "0.5", "bwu": "0.25", "est": "predicted"})
    assert_clean(at)
    t = predicted_dense(sidebar_system(chips=8), 64.0, 8192)[0]
    assert metrics(at)["Predicted latency per token"] == seconds(float(t))
    assert "The prediction ignores the Efficiency dials (MFU 0.5, bandwidth 0.25)" in page_text(at, "caption")
    # At the dials with the roofline, the numbers are the roofline's at those efficiencies, and say so.
    at.radio(key="est").set_value("ideal").run()
    r = decode_step(sidebar_system(chips=8, mfu=0.5, bw_util=0.25), 64, 8192)
    assert metrics(at)["Roofline latency per token"] == seconds(float(r.t_step_s))


@pytest.mark.parametrize("first, then", [("lecture", "per-phase"), ("per-phase", "lecture")])
def test_breakdown_caption_describes_the_mode_the_sidebar_shows(first, then):
    """The caption under the step breakdown describes the roofline mode of the sidebar's radio, and only that one:
    from the link, then after the radio is switched."""
    described = {"lecture": "The step is the larger side (lecture mode)",
                 "per-phase": "Per-phase mode: the step is the matmul phase"}
    at = app({**V1, "mode": first})
    assert_clean(at)
    for mode in (first, then):
        if mode != first:
            at.radio(key="mode").set_value(mode).run()
            assert_clean(at)
        assert at.radio(key="mode").value == mode
        captions = [c.value for c in at.caption]
        other = "per-phase" if mode == "lecture" else "lecture"
        assert any(c.startswith(described[mode]) for c in captions), (mode, captions)
        assert not any(c.startswith(described[other]) for c in captions), (mode, captions)
