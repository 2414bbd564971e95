"""AppTest: the Fast Mode page — quote and batches modes, its URL dials, the alternatives, no tracebacks."""

import numpy as np
import pytest

from model import Precision, decode_step, presets
from model import calibrate as cal
from model.economics import fast_mode_batches, fast_mode_forward
from tests.app.helpers import (
    PAGES,
    V1,
    app,
    arr,
    assert_clean,
    charts,
    fig,
    latex_text,
    metric_list,
    metrics,
    page_text,
    predicted_dense,
    sidebar_system,
    trace,
    written,
)
from ui.figures.plot import NARROW_META, PANELS_META
from ui.format import number
from ui.state.dials import BATCH_OPTIONS

OFFER = presets.price_presets()["claude-opus-4.6"]
FP8 = Precision(weights="fp8", kv="fp8", compute="fp8")


def open_page(page_query: dict[str, str], sidebar_query: dict[str, str] | None = None):
    """Open the app (sidebar URL parameters), then follow a link to /fast-mode?page_query.

    The shared helper's first run is on the Batch page, whose URL write drops parameters it does not
    own; a link to the Fast Mode page brings its own parameters, which seed the page's dials on the
    page's first run (as in a browser opening /fast-mode?...).
    """
    at = app(sidebar_query or V1)
    at.switch_page(PAGES["fast-mode"])
    at.query_params = {**at.query_params, **page_query}
    return at.run()


def test_defaults_run_clean_and_reproduce_the_preset_quote():
    at = app(V1, page="fast-mode")
    assert_clean(at)
    assert at.title[0].value.startswith("Fast mode")
    m = metrics(at)
    # claude-opus-4.6: fast output $150 vs standard $25 → 150/25 = 6× price, quoted 2.5× speed.
    assert OFFER.fast_output_usd_per_mtok / OFFER.output_usd_per_mtok == 6.0
    assert m["Price multiple Pm [×]"] == "6" and m["Speedup S [×]"] == "2.5"
    # The batches are what the model's solver gives for the same system at the sidebar's 8k context.
    fm = fast_mode_batches(sidebar_system(), 2.5, 6.0, 8192)
    assert fm.batch_standard is not None
    assert m["Standard batch B_std"] == number(fm.batch_standard)
    assert m["Fast batch B_fast"] == number(fm.batch_fast)
    # One figure, two panels (latency, cost): side by side on a wide screen, stacked on a phone (its narrow layout).
    (fig,) = charts(at)
    lay = fig["layout"]
    assert "[ms]" in lay["yaxis"]["title"]["text"] and "[$ per million" in lay["yaxis2"]["title"]["text"]
    titles = lay["meta"][PANELS_META]
    assert titles[0].startswith("Latency") and titles[1].startswith("Cost")
    narrow = lay["meta"][NARROW_META]["layout"]
    assert narrow["yaxis2"]["domain"][1] < narrow["yaxis"]["domain"][0]          # stacked: cost under latency
    assert written(at) == {}                       # defaults stay out of the URL


def test_default_equations_show_the_no_kv_closed_form():
    at = app(V1, page="fast-mode")
    tex = latex_text(at)
    # H100 bf16, Llama-70B: B* = (989e12/3.35e12) × 1 (dense) ≈ 295; B_std = 2.5 × 295 ≈ 738; B_fast = 295/6 ≈ 49.2.
    assert "= 295" in tex and "2.5 \\times 295 = 738" in tex and "\\frac{295}{6} = 49.2" in tex


def test_lecture_numbers_in_the_equations():
    # The lecture's chip and model: B* = 300 × 8 = 2,400, so 6× for 2.5× gives 6,000 and 400 (no KV).
    at = app({"chip": "lecture-gpu", "model": "lecture-deepseek", "c": "72", "ctx": "1024"}, page="fast-mode")
    assert_clean(at)
    tex = latex_text(at)
    assert "2{,}400" in tex and "2.5 \\times 2{,}400 = 6{,}000" in tex and "= 400" in tex


def test_url_seeds_the_page_dials_batches_mode():
    at = open_page({"fm": "batches", "bs": "2048", "bf": "64"})
    assert_clean(at)
    assert (at.session_state["fm"], at.session_state["bs"], at.session_state["bf"]) == ("batches", 2048, 64)
    assert [s.value for s in at.select_slider if s.key in ("bs", "bf")] == [2048, 64]
    fm = fast_mode_forward(sidebar_system(), 2048, 64, 8192)
    m = metrics(at)
    assert m["Speedup S [×]"] == f"{fm.speedup:.3g}" and m["Price multiple Pm [×]"] == f"{fm.price_multiple:.3g}"
    assert m["Standard batch B_std"] == "2,048" and m["Fast batch B_fast"] == "64"
    # 2,048 sequences × 2.68 GB of 8k KV do not fit beside 141 GB of weights in 8 × 80 GB: said so.
    assert any("does not fit in HBM" in w.value for w in at.warning)
    assert written(at) == {"fm": "batches", "bs": "2048", "bf": "64"}


def test_url_seeds_a_custom_quote():
    at = open_page({"offer": "custom", "S": "3", "Pm": "4"}, {"ctx": "1024"})
    assert_clean(at)
    m = metrics(at)
    assert m["Speedup S [×]"] == "3" and m["Price multiple Pm [×]"] == "4"
    fm = fast_mode_batches(sidebar_system(context=1024), 3.0, 4.0, 1024)
    assert m["Standard batch B_std"] == number(fm.batch_standard)
    assert m["Fast batch B_fast"] == number(fm.batch_fast)
    assert {"S", "Pm"} <= {n.key for n in at.number_input}


def test_another_preset_offer_uses_its_own_multiple():
    at = open_page({"offer": "claude-opus-4.8"})
    assert_clean(at)
    p = presets.price_presets()["claude-opus-4.8"]
    assert p.fast_price_multiple == 50 / 25                # $50 vs $25 output: 2×
    assert metrics(at)["Price multiple Pm [×]"] == "2"
    assert metrics(at)["Speedup S [×]"] == f"{p.fast_speedup:.3g}"


@pytest.mark.parametrize("query,name", [
    ({"S": "abc"}, "'S'"), ({"offer": "custom", "S": "abc"}, "'S'"), ({"Pm": "1"}, "'Pm'"),
    ({"bs": "7"}, "'bs'"), ({"fm": "slow"}, "'fm'"), ({"offer": "gpt-5"}, "'offer'"),
])
def test_garbled_page_parameter_gives_a_notice_and_the_default(query, name):
    at = open_page(query)
    assert_clean(at)
    notes = " ".join(w.value for w in at.warning)
    assert "URL parameter" in notes and name in notes
    key = name.strip("'")
    defaults = {"S": OFFER.fast_speedup, "Pm": OFFER.fast_price_multiple, "bs": 96, "fm": "quote",
                "offer": "claude-opus-4.6"}
    assert at.session_state[key] == defaults[key]


def test_switching_to_batches_and_moving_a_slider_updates_numbers_and_url():
    at = app(V1, page="fast-mode")
    at.radio(key="fm").set_value("batches").run()
    assert_clean(at)
    fm = fast_mode_forward(sidebar_system(), 96, 6, 8192)            # the batches mode's default dials
    assert metrics(at)["Speedup S [×]"] == f"{fm.speedup:.3g}"
    assert not at.warning                                     # the defaults fit on the default system
    at.select_slider(key="bf").set_value(16).run()
    assert_clean(at)
    fm = fast_mode_forward(sidebar_system(), 96, 16, 8192)
    assert metrics(at)["Price multiple Pm [×]"] == f"{fm.price_multiple:.3g}"
    assert written(at) == {"fm": "batches", "bf": "16"}
    # Page dials leave the URL on another page and come back with the page.
    at.switch_page(PAGES["batch"]).run()
    assert_clean(at)
    assert written(at) == {}
    at.switch_page(PAGES["fast-mode"]).run()
    assert_clean(at)
    assert written(at) == {"fm": "batches", "bf": "16"}


def test_no_solution_explains_why():
    # A100 × DeepSeek-V3 bf16: 1.34 TB of weights > 8 × 80 GB, the whole scale-up domain.
    at = app({"chip": "a100", "model": "deepseek-v3"}, page="fast-mode")
    assert_clean(at)
    fm = fast_mode_batches(sidebar_system("a100", "deepseek-v3"), 2.5, 6.0, 8192)
    assert fm.batch_standard is None and "do not fit" in fm.reason
    warns = " ".join(w.value for w in at.warning)
    assert fm.reason in warns and "No fast mode" in warns
    assert metrics(at)["Standard batch B_std"] == "—"
    assert len(charts(at)) == 1                               # the curves are still drawn


def test_beyond_the_latency_floor_is_explained():
    at = app({"ctx": "10000000"}, page="fast-mode")
    assert_clean(at)
    fm = fast_mode_batches(sidebar_system(context=1e7), 2.5, 6.0, 1e7)
    assert fm.batch_fast is None and "latency floor" in fm.reason
    assert any(fm.reason in w.value for w in at.warning)


def test_spreading_over_more_chips_table():
    # GB200 NVL72 (72-chip domain) × DeepSeek-V3 at fp8: C auto = 8, so 8, 16, 32, 64 chips are shown.
    side = {"chip": "gb200", "model": "deepseek-v3", "w": "fp8", "kv": "fp8", "cd": "fp8"}
    at = app(side, page="fast-mode")
    assert_clean(at)
    s = sidebar_system("gb200", "deepseek-v3", precision=FP8)
    C = s.deployment.chips
    assert C == 8
    fm = fast_mode_batches(s, 2.5, 6.0, 8192)
    b = fm.batch_standard if fm.batch_standard is not None else 64.0     # else the sidebar's batch
    df = at.dataframe[0].value
    assert list(df["chips C"]) == ["8 (now)", "16", "32", "64"]
    r = decode_step(s, b, 8192, chips=np.array([8.0, 16, 32, 64]))
    np.testing.assert_allclose(df["time per token [ms]"], r.t_step_s * 1e3)
    # Every roofline term divides by C (no communication charged): k× chips → k× speed at 1× price.
    np.testing.assert_allclose(df["speedup [×]"], [1, 2, 4, 8], rtol=1e-9)
    np.testing.assert_allclose(df["price multiple [×]"], 1.0, rtol=1e-9)


def test_offers_table_lists_every_fast_mode_preset():
    """The offers sit in a lazy expander: absent while closed (a dial move does not redraw them), listed
    once it is opened."""
    at = app(V1, page="fast-mode")
    assert len(at.dataframe) == 1                                  # the spread table only
    at.session_state["fm_offers_open"] = True                      # what a click on the expander does
    at.run()
    assert_clean(at)
    assert written(at).get("fm_offers_open") is None               # the open state is not a dial: not in the URL
    df = at.dataframe[-1].value
    fast = {k: p for k, p in presets.price_presets().items() if p.fast_speedup and p.fast_output_usd_per_mtok}
    assert len(df) == len(fast) >= 1
    row = df[df["model"] == "Claude Opus 4.6"].iloc[0]
    assert row["price multiple [×]"] == 150 / 25 and row["quoted speedup [×]"] == 2.5
    assert row["date"] == "2026-04" and "openrouter.ai" in row["price source"]
    assert {"provider", "standard output [$/Mtok]", "fast output [$/Mtok]", "speedup source"} <= set(df.columns)


@pytest.mark.parametrize("sidebar,page", [
    ({"chip": "a100", "model": "deepseek-v3"}, {}),
    ({"chip": "a100", "model": "deepseek-v3"}, {"fm": "batches"}),
    ({"ctx": "10000000"}, {}),
    ({"ctx": "10000000"}, {"fm": "batches", "bs": "65536", "bf": "1"}),
    ({}, {"fm": "batches", "bs": str(BATCH_OPTIONS[0]), "bf": str(BATCH_OPTIONS[-1])}),
    ({}, {"fm": "batches", "bs": "64", "bf": "64"}),
    ({}, {"offer": "custom", "S": "100", "Pm": "1000"}),
    ({}, {"offer": "custom", "S": "1.01", "Pm": "1.01"}),
    ({"mode": "per-phase", "mfu": "0.01", "bwu": "0.01", "sp": "1000", "price": "0.01"}, {}),
    ({"c": "576", "chip": "rubin-ultra", "model": "kimi-k2", "w": "fp4", "kv": "fp4", "cd": "fp4"}, {}),
    ({"c": "1", "chip": "tpu-v5e", "model": "llama-3.1-405b"}, {"fm": "batches"}),
    ({"chip": "lecture-gpu", "model": "lecture-deepseek", "c": "72", "ctx": "1024"}, {}),
])
def test_extremes_run_clean(sidebar, page):
    at = open_page(page, sidebar)
    assert_clean(at)
    assert len(charts(at)) == 1
    assert at.title[0].value.startswith("Fast mode")


@pytest.mark.parametrize("bs, bf", [("64", "8"), ("4096", "64")])
def test_slower_mode_sentence_states_the_saving_or_that_there_is_none(bs, bf):
    """The caption's "a slower mode … at most X % off the standard batch's cost" is the model's figure,
    and when the standard batch already sits on the cost floor (a saving below the printed precision)
    it says so instead of printing floating-point noise such as "1.11e-14 %"."""
    at = open_page({"fm": "batches", "bs": bs, "bf": bf})
    assert_clean(at)
    s = sidebar_system()
    fm = fast_mode_forward(s, float(bs), float(bf), 8192)
    floor = float(decode_step(s, np.array([1e12]), 8192).usd_per_mtok[0])    # the batch → ∞ cost floor
    saving = 1 - floor / fm.usd_per_mtok_standard
    text = next(c.value for c in at.caption if "cannot go below the floor" in c.value)
    if saving < 5e-4:
        assert "is already there" in text and "% off" not in text, text
    else:
        assert f"at most {100 * saving:.3g} % off the standard batch's" in text, text
        assert "e-" not in f"{100 * saving:.3g}"


def test_slower_mode_sentence_at_the_app_defaults_says_the_standard_batch_is_on_the_floor():
    """GB200 NVL72 × DeepSeek-V3 at fp8, T = 2k (the app's defaults): the quoted 2.5× / 6× puts the
    standard batch where cost no longer falls with batch, so no "% off" figure is printed."""
    at = app({}, page="fast-mode")
    assert_clean(at)
    s = sidebar_system("gb200", "deepseek-v3", chips=72, batch=4096, context=2048, precision=FP8)
    fm = fast_mode_batches(s, 2.5, 6.0, 2048)
    floor = float(decode_step(s, np.array([1e12]), 2048).usd_per_mtok[0])
    assert 1 - floor / fm.usd_per_mtok_standard < 5e-4          # the model: on the floor to print precision
    text = next(c.value for c in at.caption if "cannot go below the floor" in c.value)
    assert "is already there" in text and "% off" not in text, text


# ---- the fitted model's prediction beside the roofline (the sidebar's Estimate)

def test_both_panels_draw_the_predicted_curve_and_its_band():
    at = app(V1, page="fast-mode")
    assert_clean(at)
    s = sidebar_system()
    lo, hi = cal.built_in_summary().band        # the five-fold 10th–90th pct, as the page reads it
    for title, k, scale in (("Latency", 0, 1e3), ("Cost", 1, 1.0)):
        f = fig(at, title)
        p = trace(f, "predicted (fitted efficiencies)")
        x, y = arr(p["x"]).astype(float), arr(p["y"]).astype(float)
        fits = decode_step(s, x, 8192).fits
        want = predicted_dense(s, x, 8192)[k] * scale
        assert np.allclose(y[fits], want[fits], rtol=1e-9) and np.isnan(y[~fits]).all()
        band = next(t for t in f["data"] if t.get("name") == "held-out error band (10th–90th pct, k5)")
        assert np.allclose(arr(band["y"]).astype(float)[fits], want[fits] * hi, rtol=1e-9)   # time, cost: × hi
        lower = trace(f, "held-out error band (10th–90th pct, k5) (lower edge)")
        assert np.allclose(arr(lower["y"]).astype(float)[fits], want[fits] * lo, rtol=1e-9)
    # one legend entry each, on the latency panel
    names = [(t.get("name"), t.get("showlegend", True)) for t in charts(at)[0]["data"]]
    assert sum(1 for n, show in names if n == "predicted (fitted efficiencies)" and show) == 1


def test_the_latency_and_cost_metrics_follow_the_estimate():
    at = app(V1, page="fast-mode")
    fm = fast_mode_batches(sidebar_system(), 2.5, 6.0, 8192)
    m = metrics(at)
    assert m["Ideal latency std → fast [ms]"] == f"{fm.t_step_standard_s * 1e3:.3g} → {fm.t_step_fast_s * 1e3:.3g}"
    assert m["Ideal cost std → fast [$/Mtok]"] == f"{fm.usd_per_mtok_standard:.3g} → {fm.usd_per_mtok_fast:.3g}"
    at.radio(key="est").set_value("predicted").run()
    assert_clean(at)
    t, cost, _ = predicted_dense(sidebar_system(), np.array([fm.batch_standard, fm.batch_fast]), 8192)
    ms = {x.label: x for x in metric_list(at)}
    assert "Ideal latency std → fast [ms]" not in ms
    lat = ms["Predicted latency std → fast [ms]"]
    assert lat.value == f"{t[0] * 1e3:.3g} → {t[1] * 1e3:.3g}" and lat.delta == f"{t[0] / t[1]:.3g}× speed, predicted"
    cst = ms["Predicted cost std → fast [$/Mtok]"]
    assert cst.value == f"{cost[0]:.3g} → {cost[1]:.3g}" and cst.delta == f"{cost[1] / cost[0]:.3g}× price, predicted"
    assert ms["Speedup S [×]"].value == "2.5"                      # the quote, solved on the roofline
    assert "the latency and cost above read the fitted model" in page_text(at, "caption")
