"""AppTest: the app shell (dials, URL contract) and the Batch page."""

import numpy as np
import pytest

from model import Deployment, Precision, System, auto_chips, decode_step, presets, system_balance_batch
from tests.apptest_helpers import V1, app, arr, assert_clean, charts, metrics, written
from ui.dials import BATCH_OPTIONS, CONTEXT_OPTIONS
from ui.format import number, seconds, usd


def _system(chip="h100", model="llama-3.1-70b", chips=None, batch=64, context=8192):
    hw, m = presets.get("hardware", chip), presets.get("model", model)
    c = chips or auto_chips(hw, m, Precision(), batch, context)
    return System(hw, m, Precision(), Deployment(chips=c))


def test_defaults_run_clean_and_match_the_model():
    at = app(V1)
    assert_clean(at)
    s = _system()
    r = decode_step(s, 64, 8192)                       # sidebar defaults: B = 64, T = 8k, C auto
    m = metrics(at)
    assert m["Latency per token"] == seconds(float(r.t_step_s))
    assert m["Cost [$/Mtok]"] == usd(float(r.usd_per_mtok))
    assert m["Bound"] == str(r.bound)
    assert len(charts(at)) == 4
    # A version-1 link is written back as today's link to the same view: the old defaults spelled out.
    assert dict(at.query_params) == {"chip": "h100", "model": "llama-3.1-70b", "w": "bf16", "kv": "bf16",
                                     "cd": "bf16", "b": "64", "ctx": "8192", "c": "auto", "v": "2"}


def test_url_seeds_the_dials():
    at = app({"chip": "lecture-gpu", "model": "lecture-deepseek", "c": "72", "b": "2048", "ctx": "1024"})
    assert_clean(at)
    s = _system("lecture-gpu", "lecture-deepseek", 72)
    # The lecture's B* = 300 × 8 = 2,400, and the batch from the URL is used.
    assert float(system_balance_batch(s)) == pytest.approx(2400)
    r = decode_step(s, 2048, 1024)
    assert metrics(at)["Cost [$/Mtok]"] == usd(float(r.usd_per_mtok))
    assert dict(at.query_params)["b"] == "2048"


def test_moving_a_dial_changes_the_numbers_and_the_url():
    at = app(V1)
    before = metrics(at)["Cost [$/Mtok]"]
    at.select_slider(key="b").set_value(1024).run()
    assert_clean(at)
    r = decode_step(_system(batch=1024), 1024, 8192)
    assert metrics(at)["Cost [$/Mtok]"] == usd(float(r.usd_per_mtok)) != before
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
    assert at.session_state["b"] == 64 and at.session_state["ctx"] == 8192


def test_sparsity_and_price_overrides():
    at = app({"model": "lecture-deepseek", "chip": "h100", "sp": "4", "price": "3"})
    assert_clean(at)
    m = presets.get("model", "lecture-deepseek").with_sparsity(4)
    hw = presets.get("hardware", "h100").with_(price_usd_per_hour=3.0)
    s = System(hw, m, Precision(), Deployment(chips=auto_chips(hw, m, Precision(), 64, 8192)))
    r = decode_step(s, 64, 8192)
    assert metrics(at)["Cost [$/Mtok]"] == usd(float(r.usd_per_mtok))


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
    ratio = metrics(at)["Unbatched cost ÷ best"]
    s = _system("lecture-gpu", "lecture-deepseek", 72)
    grid = np.unique(np.concatenate([np.geomspace(1, 65536, 241), BATCH_OPTIONS, [64.0]]))
    r = decode_step(s, grid, 1024)
    cost = np.where(r.fits, r.usd_per_mtok, np.inf)
    assert ratio == f"{number(float(r.usd_per_mtok[0] / cost.min()))}×"
    assert 1000 < r.usd_per_mtok[0] / cost.min() < 3000


def test_equation_shows_todays_numbers():
    at = app({"chip": "lecture-gpu", "model": "lecture-deepseek", "c": "72"})
    tex = " ".join(l.value for l in at.latex)
    assert "300 \\times 8" in tex and "2{,}400" in tex


def test_below_ideal_efficiency_draws_the_ideal_curve_too():
    """Issue 7: with a fitted (or chosen) efficiency, the realistic and the ideal curves show together."""
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
    main = next(t for t in lat["data"] if t.get("name") == "latency per token")
    assert np.asarray(arr(main["y"]), float)[0] == pytest.approx(4 * y[0], rel=1e-9)
    assert "ideal roofline (efficiency 1)" not in [t.get("name") for t in charts(app({"c": "8"}))[0]["data"]]
