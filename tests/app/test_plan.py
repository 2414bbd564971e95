"""AppTest: the Plan page — clean at the defaults; its card, chart, equation and table are `model.plan.plan`
called here with the same inputs (and, on one chip, the roofline by hand); every input lives in the URL; bad
input is named and the page keeps drawing; an infeasible target shows the closest point; the link to the
Batch page opens it on the winner's configuration."""

from __future__ import annotations

import re
from functools import partial
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest
from numpy.testing import assert_allclose

from model import Precision, System, decode_step, presets
from model import calibrate as cal
from model.cluster import layout_comm_time
from model.plan import Config, Traffic, evaluate, plan, searchable_hardware
from model.roofline import chunked_prefill
from tests.app.helpers import (
    V1,
    app,
    arr,
    assert_clean,
    assert_notice,
    charts,
    clean_app,
    dot,
    fig,
    latex,
    metrics,
    page_text,
    trace,
    written,
)
from tests.ui.figures.checks import validate
from ui import estimate
from ui.equations import tex_time
from ui.equations.plan import binding_term, predicted_step
from ui.figures import plan as fig_plan
from ui.format import number, seconds, usd
from ui.state import dials

HW = presets.hardware_presets()
pl_app = partial(clean_app, page="plan")
POINTS = "Every configuration"
# Three chips on the version-1 sidebar (H100 × Llama 3.1 70B): a search of a few seconds' worth of pages.
ROOF = {"pl_eff": "roofline"}     # plan on the roofline at the sidebar's Efficiency dials (1 on V1: the ideal)
THREE = {**V1, **ROOF, "pl_hw": "h100,mi355x,gb200", "pl_i": "3000", "pl_o": "300", "pl_ttft": "0.5",
         "pl_tpot": "30"}
LINK = re.compile(r"\]\((batch\?[^)\s]+)\)")


def planned(at, chips: list[str], I: float, O: float, ttft: float, tpot: float, **kw):
    """`plan` called directly with the page's inputs: the sidebar's model and deployment, the chip presets."""
    view = at.session_state["_view"]
    hw = {k: (view.system.hardware if k == view.chip_key else HW[k]) for k in chips}
    return plan(view.system.model, hw, Traffic.single(I, O), ttft_s=ttft, tpot_s=tpot,
                deployment=view.system.deployment, **kw)


def link(at) -> dict[str, str]:
    """The Open-on-Batch link's query, as a dict."""
    found = [m.group(1) for m in LINK.finditer(page_text(at, "markdown"))]
    assert len(found) == 1, found
    return dict(parse_qsl(urlsplit(found[0]).query))


def card_of(pt: dict, ttft: float, tpot: float) -> dict[str, str]:
    """The card's metrics for point `pt`, formatted as the page formats them."""
    return {"Batch": f"{pt['batch']:,}", "Precision": f"{pt['weight_dtype']} / {pt['kv_dtype']}", "Mode": pt["mode"],
            "TTFT": seconds(pt["ttft_s"]), "TPOT": seconds(pt["tpot_s"]),
            "Tokens/s per user": number(pt["tokens_per_s_per_user"]),
            "Tokens/s per chip": number(pt["tokens_per_s_per_chip"]),
            "$/Mtok output": usd(pt["usd_per_mtok_output"]), "$/Mtok input": usd(pt["usd_per_mtok_input"]),
            "$ per request": usd(pt["usd_per_request"]), "Bound": pt["bound"],
            "Chips per replica": f"{pt['chips']:,}" + (f" × {pt['pipeline_stages']}" if pt["pipeline_stages"] > 1
                                                      else "")}


@pytest.mark.parametrize("query", [{}, V1], ids=["today", "v1"])
def test_defaults_draw_the_card_the_chart_and_the_table_and_write_nothing(query):
    at = pl_app(query)
    assert at.title[0].value.startswith("Plan")
    assert len(charts(at)) == 2 and len(latex(at)) == 1
    assert written(at) == {}
    m = metrics(at)
    assert {"Chips per replica", "Batch", "TTFT", "TPOT", "$/Mtok output", "Bound"} <= set(m)
    text = page_text(at, "markdown")
    assert "Cheapest configuration that meets both targets" in text and "The 10 best" in text
    f = fig(at, POINTS)
    assert any(t["type"] == "scattergl" for t in f["data"])
    assert trace(f, "frontier")["x"] is not None


def test_the_card_chart_and_table_are_plan_called_directly():
    at = pl_app(THREE)
    res = planned(at, ["h100", "mi355x", "gb200"], 3000, 300, 0.5, 0.030)
    best = res.point(res.best)
    m = metrics(at)
    for k, v in card_of(best, 0.5, 0.030).items():
        assert m[k] == v, (k, m[k], v)
    heading = next(t for t in page_text(at, "markdown").split("\n") if t.startswith("**Cheapest"))
    assert heading.endswith(f"{best['batch']:,}, {best['weight_dtype']} weights, {best['kv_dtype']} KV, {best['mode']}")
    assert m["Chips per replica"] == f"{best['chips']:,}"
    f = fig(at, POINTS)
    # The frontier is the plan's, in order; the winner's dot is the best point; the TPOT line at 1/TPOT.
    fr = trace(f, "frontier")
    assert_allclose(arr(fr["x"]), [res.point(int(i))["tokens_per_s_per_user"] for i in res.frontier])
    assert_allclose(arr(fr["y"]), [res.point(int(i))["usd_per_mtok"] for i in res.frontier])
    assert dot(f, "cheapest") == pytest.approx((best["tokens_per_s_per_user"], best["usd_per_mtok"]), rel=1e-9)
    assert [s["x0"] for s in f["layout"]["shapes"] if s.get("type") == "line"] == pytest.approx([1 / 0.030])
    # The dots: the configurations that fit, thinned; each dot is an evaluated point's (x, y).
    p = res.points
    fits = np.flatnonzero(p["fits"])
    dots_x = np.concatenate([arr(t["x"]) for t in f["data"] if t["type"] == "scattergl"])
    y = p["usd_per_mtok"][fits]
    keep = fig_plan.thin(p["tokens_per_s_per_user"][fits], y, p["hardware"][fits], fig_plan.cells_per_decade(3),
                         rank=np.where(p["meets_ttft"][fits], y, y * 1e100))
    assert [fig_plan.cells_per_decade(h) for h in (1, 3, 6, 15, 40)] == [12, 12, 10, 6, 4]   # round(24/√h), 4 … 12
    assert dots_x.size == keep.size and 1000 < keep.size < fits.size / 10
    assert np.isin(dots_x, p["tokens_per_s_per_user"][fits]).all()
    # The table: the plan's ten best, in order.
    table = at.dataframe[0].value
    assert list(table["batch"]) == [res.point(int(i))["batch"] for i in res.top]
    assert_allclose(table["$/request"], [res.point(int(i))["usd_per_request"] for i in res.top])


def test_one_a100_by_hand():
    """Llama 3.1 8B on one A100 (bf16 FLOP/s only), 1,536 prompt and 1,024 output tokens: the winner is one chip,
    compute-bound with the prompts chunked in.  Per sequence and step: 2·Na·(1 + I/O) matmul FLOPs plus the
    prompt's causal attention 4·L·h·d·I(I−1)/2 spread over its O steps; the step without prompts is memory-bound,
    (W + B·kv(T))/bw with kv(T) = 2·L·kvh·d·1 B·T at fp8 and T = I + O/2 = 2,048."""
    at = pl_app({**V1, **ROOF, "model": "llama-3.1-8b", "pl_hw": "a100", "pl_i": "1536", "pl_o": "1024"})
    m = metrics(at)
    assert m["Chips per replica"] == "1" and m["Mode"] == "aggregated" and m["Bound"] == "compute"
    B = int(m["Batch"].replace(",", ""))
    Na, F, bw = 8e9, 312e12, 2.039e12                          # presets: Llama 3.1 8B, A100 bf16 and HBM
    t_step = B * (2 * Na * (1 + 1536 / 1024) + 4 * 32 * 32 * 128 * 1536 * 1535 / 2 / 1024) / F
    t_base = max(2 * Na * B / F, (8e9 + B * 2 * 32 * 8 * 128 * 2048) / bw)
    assert m["TPOT"] == seconds(t_step)
    assert m["Tokens/s per user"] == number(1 / t_step)
    assert m["$/Mtok output"] == usd(1.3 / 3600 * t_base / B * 1e6)
    tex = latex(at)[0].value
    assert tex.startswith(r"\begin{aligned}t_{matmul}") and rf"{t_step * 1e3:.3g}\,\text{{ms}}" in tex
    assert rf"{B} \times" in tex and r"(1 + 1.5)" in tex


ALL_INPUTS = {"pl_hw": "h100,b200,custom", "pl_i": "4096", "pl_o": "256", "pl_ttft": "2.0", "pl_by": "tps",
              "pl_tpot": "25", "pl_tps": "40", "pl_rps": "12.5", "pl_u": "0.8", "pl_eff": "ideal",
              "xhw": "h100~bw:4e12~n:Fast H100"}


def test_the_url_carries_every_input():
    at = pl_app({**V1, **ALL_INPUTS})
    assert (at.session_state["pl_hw"], at.session_state["pl_i"], at.session_state["pl_tps"]) == \
        (["h100", "b200", "custom"], 4096, 40)
    at.select_slider(key="pl_ttft").set_value(3.0).run()
    assert_clean(at)
    assert written(at) == {**ALL_INPUTS, "pl_ttft": "3.0"}
    # The custom chip is searched under its own name.
    assert any(t.get("name") == "Fast H100" for t in fig(at, POINTS)["data"])


def test_moving_the_inputs_writes_them_and_replans():
    at = pl_app(V1)
    at.multiselect(key="pl_hw").set_value(["a100", "h100"]).run()
    at.number_input(key="pl_i").set_value(1536).run()
    at.number_input(key="pl_o").set_value(1024).run()
    at.radio(key="pl_by").set_value("tps").run()
    at.select_slider(key="pl_tps").set_value(50).run()
    at.radio(key="pl_eff").set_value("ideal").run()
    assert_clean(at)
    assert written(at) == {"pl_hw": "a100,h100", "pl_i": "1536", "pl_o": "1024", "pl_by": "tps", "pl_tps": "50",
                           "pl_eff": "ideal"}
    res = planned(at, ["a100", "h100"], 1536, 1024, 1.0, 1 / 50, ideal=True)
    assert metrics(at)["$ per request"] == usd(res.point(res.best)["usd_per_request"])


@pytest.mark.parametrize(("query", "name"), [
    ({"pl_ttft": "0"}, "pl_ttft"), ({"pl_ttft": "-1"}, "pl_ttft"), ({"pl_tpot": "0"}, "pl_tpot"),
    ({"pl_tps": "nan"}, "pl_tps"), ({"pl_i": "-5"}, "pl_i"), ({"pl_o": "20000000"}, "pl_o"), ({"pl_i": "1.5"}, "pl_i"),
    ({"pl_hw": "h100,zz"}, "pl_hw"), ({"pl_hw": ","}, "pl_hw"), ({"pl_hw": "h100,,b200"}, "pl_hw"),
    ({"pl_rps": "-3"}, "pl_rps"), ({"pl_u": "1.5"}, "pl_u"), ({"pl_eff": "garbled"}, "pl_eff"),
    ({"pl_by": "<b>x</b>"}, "pl_by"), ({"model": "no-such-model"}, "model"),
    ({"pl_mix": "1000"}, "pl_mix"), ({"pl_mix": "1000:200:-1"}, "pl_mix"), ({"pl_wd": "fp16"}, "pl_wd"),
    ({"pl_kd": ""}, "pl_kd"), ({"pl_md": "both"}, "pl_md"), ({"pl_ru": "bytes"}, "pl_ru"),
])
def test_bad_input_is_named_and_the_page_keeps_planning(query, name):
    at = pl_app({**V1, **query})
    assert_notice(at, name)
    if name in dials.REGISTRY.dials and name.startswith("pl_"):
        assert at.session_state[name] == dials.REGISTRY.dials[name].default
    assert len(charts(at)) == 2 and "Cheapest configuration" in page_text(at, "markdown")


def test_a_custom_chip_that_is_missing_or_broken_is_left_out_with_a_notice():
    at = pl_app({**V1, "pl_hw": "custom"})
    assert any("custom chip is left out" in w.value for w in at.warning)
    assert any("every searchable chip" in w.value for w in at.warning)
    assert len(fig(at, POINTS)["data"]) > 10           # planned over every searchable chip instead
    at = pl_app({**V1, "pl_hw": "custom,h100", "xhw": "h100~bw:"})
    assert_notice(at, "xhw")
    assert any("custom chip is left out" in w.value for w in at.warning)
    assert {t.get("legendgroup") for t in fig(at, POINTS)["data"] if t["type"] == "scattergl"} == {"chip0"}


def test_the_sidebars_c_and_precision_warnings_are_not_shown_here():
    """The plan searches C and the compute dtype, so the sidebar's warnings about them do not apply."""
    at = pl_app({**V1, "c": "72", "cd": "fp4", "pl_hw": "h100"})
    assert at.session_state["_view"].warnings                   # the sidebar has two to say …
    assert not [w.value for w in at.warning if "scale-up domain" in w.value or "FLOP/s" in w.value]   # … not here


def test_every_searchable_chip_when_the_list_is_empty():
    at = pl_app(V1)
    assert at.session_state["pl_hw"] == []
    names = {t["name"] for t in fig(at, POINTS)["data"] if t["type"] == "scattergl" and t.get("showlegend", True)}
    assert len(names) == len(searchable_hardware())


@pytest.mark.parametrize(("query", "binding"), [
    ({"pl_hw": "a100,h100", "pl_i": "200000", "pl_ttft": "0.05"}, "ttft"),
    ({"pl_hw": "a100,h100", "pl_by": "tps", "pl_tps": "1000"}, "tpot"),
    ({"pl_hw": "a100,h100", "pl_i": "10000000"}, "hbm"),      # 10M tokens of KV: more than 8 chips' HBM hold
])
def test_nothing_feasible_names_the_binding_target_and_shows_the_closest_point(query, binding):
    at = pl_app({**V1, **ROOF, **query})
    tpot = 1e-3 if binding == "tpot" else 0.05
    res = planned(at, ["a100", "h100"], float(query.get("pl_i", 2000)), 500, float(query.get("pl_ttft", 1.0)),
                  tpot if binding == "tpot" else 0.05)
    assert res.best is None and res.binding == binding
    close = res.point(res.closest)
    warn = " ".join(w.value for w in at.warning)
    said = "HBM capacity binds" if binding == "hbm" else f"the {binding.upper()} target binds"
    assert f"({said})" in warn and res.reason in warn
    assert f"TTFT {seconds(close['ttft_s'])}, TPOT {seconds(close['tpot_s'])}" in warn
    assert "Closest point — not feasible" in page_text(at, "markdown")
    m = metrics(at)
    assert m["TTFT"] == seconds(close["ttft_s"]) and m["TPOT"] == seconds(close["tpot_s"])
    assert m["$ per request"] == usd(close["usd_per_request"])
    assert dot(fig(at, POINTS), "closest point") == pytest.approx((close["tokens_per_s_per_user"],
                                                                    close["usd_per_mtok"]), rel=1e-9)
    assert at.dataframe[0].value.shape[0] == 0 and "none — no configuration" in page_text(at, "markdown")


def _batch_metrics(q: dict[str, str]) -> dict[str, str]:
    at = app(q, page="batch")
    assert_clean(at)
    assert not at.warning or all("URL parameter" not in w.value for w in at.warning)
    return metrics(at)


def test_the_batch_link_opens_the_batch_page_on_the_winner():
    """Llama 3.1 70B on one H100, 2,000 prompt and 96 output tokens (T = 2,048): the winner's batch, context and C
    are the Batch page's own dial values, so the Batch page shows the card's $/Mtok output (the decode step
    without the prompts), and the caption's tokens/s per user."""
    at = pl_app({**V1, **ROOF, "pl_hw": "h100", "pl_i": "2000", "pl_o": "96"})
    q = link(at)
    m = metrics(at)
    assert (q["chip"], q["model"], q["c"], q["b"], q["ctx"]) == ("h100", "llama-3.1-70b", "1", "16", "2048")
    assert (q["w"], q["kv"], q["cd"], q["v"]) == ("fp8", "fp8", "fp8", "2")
    there = _batch_metrics(q)
    assert there["Ideal cost [$/Mtok]"] == m["$/Mtok output"]
    caption = page_text(at, "caption")
    speed, cost = there["Ideal speed per user [tok/s]"], there["Ideal cost [$/Mtok]"]
    assert f"{speed} tokens/s per user, {cost}/Mtok there" in caption
    assert "set values" not in caption                   # nothing rounded


def test_a_winner_off_the_batch_dials_is_rounded_and_says_so():
    at = pl_app(THREE)
    q, m = link(at), metrics(at)
    B = int(m["Batch"].replace(",", ""))
    assert int(q["b"]) == max(b for b in dials.BATCH_OPTIONS if b <= B)
    caption = page_text(at, "caption")
    if int(q["b"]) != B:
        assert f"batch {B:,} → {int(q['b']):,}" in caption
    there = _batch_metrics(q)
    # The caption's numbers are the Batch page's, and both are decode_step at the link's configuration.
    speed, cost = there["Ideal speed per user [tok/s]"], there["Ideal cost [$/Mtok]"]
    assert f"{speed} tokens/s per user, {cost}/Mtok there" in caption
    hw = HW[q["chip"]]
    s = System(hw, presets.get("model", "llama-3.1-70b"), Precision(q["w"], q["kv"], q["cd"])).with_(chips=int(q["c"]))
    step = decode_step(s, int(q["b"]), int(q["ctx"]))
    assert there["Ideal cost [$/Mtok]"] == usd(float(step.usd_per_mtok))
    assert there["Ideal speed per user [tok/s]"] == number(float(step.tokens_per_s_per_user))


def test_the_link_carries_the_sidebars_model_efficiencies_and_mode_and_a_custom_chip():
    q = {**V1, **ROOF, "pl_hw": "custom", "xhw": "h100~bw:4e12~n:Fast H100", "mfu": "0.5", "bwu": "0.8",
         "mode": "per-phase", "sp": "12"}
    at = pl_app(q)
    got = link(at)
    assert (got["chip"], got["xhw"], got["mfu"], got["bwu"], got["mode"], got["sp"]) == \
        ("custom", q["xhw"], "0.5", "0.8", "per-phase", "12")
    _batch_metrics(got)
    at = pl_app({**q, "pl_eff": "ideal"})
    assert "mfu" not in link(at) and "ideal roofline" in page_text(at, "caption")


@pytest.mark.parametrize("word", ["roofline", "realistic"])     # realistic: what older links said for the dials
def test_roofline_plans_on_the_sidebars_efficiencies_and_says_so(word):
    q = {**V1, "pl_eff": word, "pl_hw": "h100,mi300x", "mfu": "0.5", "bwu": "0.7"}
    at = pl_app(q)
    assert at.session_state["pl_eff"] == "roofline"
    assert "MFU 0.5, HBM bandwidth utilisation 0.7" in page_text(at, "caption")
    res = planned(at, ["h100", "mi300x"], 2000, 500, 1.0, 0.05)
    assert res.efficiency == {"source": "dials", "mfu": 0.5, "bw_util": 0.7}
    assert metrics(at)["$ per request"] == usd(res.point(res.best)["usd_per_request"])
    ideal = pl_app({**q, "pl_eff": "ideal"})
    res = planned(ideal, ["h100", "mi300x"], 2000, 500, 1.0, 0.05, ideal=True)
    assert metrics(ideal)["$ per request"] == usd(res.point(res.best)["usd_per_request"])
    assert "ideal roofline" in page_text(ideal, "caption")
    assert metrics(ideal)["$ per request"] != metrics(at)["$ per request"]


def test_a_throughput_counts_replicas_and_chips():
    at = pl_app({**THREE, "pl_rps": "100", "pl_u": "0.5"})
    res = planned(at, ["h100", "mi355x", "gb200"], 3000, 300, 0.5, 0.030, throughput=100.0, utilisation=0.5)
    rep = res.replicas()
    m = metrics(at)
    assert m["Replicas"] == f"{rep['replicas']:,}" and m["Chips in all"] == f"{rep['chips']:,}"
    assert metrics(at)["$ per request"] == usd(res.point(res.best)["usd_per_request"])
    assert "$/hour" in at.dataframe[0].value.columns


@pytest.mark.parametrize("query", [
    {**V1, **ROOF, "pl_hw": "h100", "pl_i": "1536", "pl_o": "1024", "model": "llama-3.1-8b"},  # lecture: memory
    {**THREE, "mode": "per-phase"},
    {**V1, **ROOF, "pl_hw": "gb200", "model": "deepseek-v3", "pl_tpot": "10"},            # experts' all-to-all
    {**V1, **ROOF, "pl_hw": "h100", "model": "llama-3.1-8b", "pl_i": "2000", "pl_o": "96"},
])
def test_the_equation_is_the_winners_binding_term(query):
    """The equation ends with the step term that bounds the winner's step, as decode_step computes it."""
    at = pl_app(query)
    view = at.session_state["_view"]
    chips = query["pl_hw"].split(",")
    res = planned(at, chips, float(query.get("pl_i", 2000)), float(query.get("pl_o", 500)), 1.0,
                  float(query.get("pl_tpot", 50)) / 1e3)
    pt = res.point(res.best)
    prec = Precision(pt["weight_dtype"], pt["kv_dtype"], pt["compute_dtype"])
    s = System(HW[pt["hardware"]], view.system.model, prec,
               view.system.deployment.with_(chips=float(pt["chips"]), pipeline_stages=pt["pipeline_stages"]))
    tr = Traffic.single(float(query.get("pl_i", 2000)), float(query.get("pl_o", 500)))
    pf = chunked_prefill(s, tr.input_tokens, tr.output_tokens, tr.shares) if pt["mode"] == "aggregated" else None
    n = pt["batch"] if pf is None else float(pf.tokens(pt["batch"]))
    step = decode_step(s, pt["batch"], pt["context"], t_comm=layout_comm_time(s, n, pt["layout"]), prefill=pf)
    assert float(step.t_step_s) == pytest.approx(pt["t_step_s"], rel=1e-12)
    tex = latex(at)[0].value
    assert tex == binding_term(s, step, pt["batch"], pt["context"], pf, pt["layout"])
    lecture = s.deployment.mode == "lecture"
    term = {"compute": step.t_matmul_s, "comm": step.t_comm_s, "attention": step.t_attn_s,
            "weights": step.t_weights_s + step.t_kv_s if lecture else step.t_weights_s,
            "kv": step.t_weights_s + step.t_kv_s if lecture else step.t_kv_s}[pt["bound"]]
    assert rf"&= {tex_time(float(term))}" in tex


def test_thin_keeps_the_cheapest_point_of_each_cell_and_group():
    x = np.array([10.0, 10.5, 11.0, 100.0, 10.2, np.nan, 0.0])
    y = np.array([1.0, 0.9, 1.05, 1.0, 0.95, 1.0, 1.0])
    g = np.array([0, 0, 0, 0, 1, 0, 0])
    # 10, 10.5 and 11 share a 1/6-decade cell in x (log10 x in [1, 1.17)); in y, 1.0 and 1.05 share [0, 0.17) and
    # 0.9 sits in the cell below; 100 is a cell of its own, and group 1 another.
    keep = fig_plan.thin(x, y, g, per_decade=6)
    assert list(keep) == [0, 1, 3, 4]
    assert list(fig_plan.thin(x, y, g, per_decade=6, rank=np.array([5, 0, 1, 0, 0, 0, 0.0]))) == [1, 2, 3, 4]
    assert fig_plan.thin(np.array([]), np.array([]), np.array([])).size == 0


def test_log_range_pads_and_rounds_out_to_eighths_of_a_decade():
    assert fig_plan.log_range(np.array([1.0, 100.0])) == (-0.125, 2.125)       # 0 − 0.08 → −1/8; 2.08 → 17/8
    assert fig_plan.log_range(np.array([np.nan, -1.0])) == (0.0, 1.0)


def test_the_figure_validates_against_plotlys_schema():
    n = 6
    f = fig_plan.plan_figure(np.geomspace(1, 100, n), np.geomspace(10, 0.1, n), np.array([0, 0, 1, 1, 0, 1]),
                             np.array([0, 1, 0, 1, 0, 0]), np.array([True, True, False, True, True, False]),
                             ["fp8 weights, fp8 KV"] * n, np.ones((n, len(fig_plan.CUSTOM))), chip_names=["A", "B"],
                             chip_colors=fig_plan.CHIP_COLORS, frontier_x=np.array([1.0, 10.0]),
                             frontier_y=np.array([0.5, 1.0]), frontier_text=["a", "b"], winner=(10.0, 1.0),
                             feasible=True, target_x=20.0, target_label="TPOT ≤ 50 ms", evaluated=n, per_decade=6,
                             band=(0.8, 1.4))
    validate(f.plotly)
    b = next(t for t in f.spec_data if t.get("fill") == "toself")
    assert_allclose(arr(b["x"]), [1 / 0.8, 10 / 0.8, 10 / 1.4, 1 / 1.4, 1 / 0.8])
    assert_allclose(arr(b["y"]), [0.5 * 0.8, 0.8, 1.4, 0.5 * 1.4, 0.5 * 0.8])
    terms = {"t_dense_s": 1e-3, "t_expert_s": 2e-3, "t_attn_s": 0.0, "t_weights_s": 4e-3, "t_kv_s": 1e-3,
             "t_comm_s": 0.0, "t_fixed_s": 5e-4, "t_hops_s": 0.0}
    bars = fig_plan.predicted_breakdown(terms, "step")
    validate(bars.plotly)
    got = {t["name"]: (t["y"][[x > 0 for x in t["x"]].index(True)], max(t["x"])) for t in bars.spec_data}
    assert got == {"dense": ("compute", 1.0), "experts": ("compute", 2.0), "weights": ("memory", 4.0),
                   "kv": ("memory", 1.0), "fixed": ("fixed", 0.5)}
    assert [t["name"] for t in f.spec_data if t.get("showlegend", True) and t["type"] == "scattergl"] == ["A", "B"]


def test_predicted_is_the_default_and_is_plan_on_the_fitted_model():
    """The default plans on the efficiency model fitted to the published measurements: the card, the frontier and
    its held-out band, the equation (the winner's predicted step) and the link (est=predicted: the Batch page's
    predicted metrics, which the caption quotes) all follow from `plan(..., efficiency=…)` called here."""
    at = pl_app({**V1, "pl_hw": "h100,mi355x"})
    assert at.session_state["pl_eff"] == "predicted" and "pl_eff" not in written(at)
    fitted = cal.built_in_summary()                  # what the page reads (equal to the fit: test_calibrate_summary)
    res = planned(at, ["h100", "mi355x"], 2000, 500, 1.0, 0.05, efficiency=fitted.efficiency)
    assert res.efficiency["source"] == "predicted"
    best = res.point(res.best)
    m = metrics(at)
    for k, v in card_of(best, 1.0, 0.05).items():
        assert m[k] == v, (k, m[k], v)
    ideal = planned(at, ["h100", "mi355x"], 2000, 500, 1.0, 0.05, ideal=True)
    assert best["usd_per_request"] > ideal.point(ideal.best)["usd_per_request"]     # slower than the bound
    # The frontier and its band: the frontier swept by r = predicted ÷ measured from lo to hi.
    f = fig(at, POINTS)
    fr = trace(f, "frontier")
    fx = np.array([res.point(int(i))["tokens_per_s_per_user"] for i in res.frontier])
    fy = np.array([res.point(int(i))["usd_per_mtok"] for i in res.frontier])
    assert_allclose(arr(fr["x"]), fx)
    lo, hi = estimate.band()
    band = trace(f, "held-out error")
    assert_allclose(arr(band["x"]), np.concatenate([fx / lo, (fx / hi)[::-1], fx[:1] / lo]))
    assert_allclose(arr(band["y"]), np.concatenate([fy * lo, (fy * hi)[::-1], fy[:1] * lo]))
    # The equation: the winner's predicted step, as evaluate computes it.
    view = at.session_state["_view"]
    cfg = Config(best["chips"], best["pipeline_stages"], best["batch"], best["weight_dtype"], best["kv_dtype"],
                 best["mode"], best["prefill_chips"] // best["prefill_stages"], best["prefill_stages"],
                 best["prefill_batch"])
    ev = evaluate(view.system.model, HW[best["hardware"]], cfg, Traffic.single(2000, 500),
                  deployment=view.system.deployment, efficiency=fitted.efficiency)
    assert ev["t_step_s"] == pytest.approx(best["t_step_s"], rel=1e-12)
    lam = 1 / 500 if best["mode"] == "aggregated" else 0.0
    assert latex(at)[0].value == predicted_step(ev, fitted.efficiency, best["batch"], view.system.model.n_layers, lam)
    text = page_text(at, "caption")
    assert f"fitted to {fitted.n} published measurements" in text and "Shaded: where 8 in 10" in text
    # Where the winner's attention runs: at the bf16 peak, 1/g of its compute format's (g = 1: not said).
    g = cal.attention_slowdown(HW[best["hardware"]], best["compute_dtype"])
    assert (f"of the bf16 peak (1/{g:.3g} of the {best['compute_dtype']} peak)" in text) == (g > 1)
    # The link opens the Batch page on the predicted estimate; the caption quotes its predicted metrics.
    q = link(at)
    assert q["est"] == "predicted"
    there = _batch_metrics(q)
    speed = next(v for k, v in there.items() if k.startswith("Predicted speed per user"))
    cost = next(v for k, v in there.items() if k.startswith("Predicted cost"))
    assert f"predicted {speed} tokens/s per user, {cost}/Mtok there" in text


def test_a_mix_a_token_throughput_and_the_search_space_from_the_url():
    q = {"pl_hw": "h100,b200", "pl_mix": "1000:200:0.7,8000:1000:0.3", "pl_rps": "20000", "pl_ru": "tokens",
         "pl_wd": "bf16,fp8", "pl_kd": "fp8", "pl_md": "aggregated", "pl_eff": "ideal"}
    at = pl_app({**V1, **q})
    assert_clean(at)
    assert written(at) == q
    mix = Traffic.mix([(1000, 200, 0.7), (8000, 1000, 0.3)])
    view = at.session_state["_view"]
    res = plan(view.system.model, {k: HW[k] for k in ("h100", "b200")}, mix, ttft_s=1.0, tpot_s=0.05,
               throughput=20000, throughput_unit="tokens", deployment=view.system.deployment, ideal=True,
               weight_dtypes=("bf16", "fp8"), kv_dtypes=("fp8",), modes=("aggregated",))
    best = res.point(res.best)
    m = metrics(at)
    assert (m["Precision"].split(" / ")[0] in ("bf16", "fp8")) and m["Precision"].endswith("/ fp8")
    assert m["Mode"] == "aggregated" and m["$ per request"] == usd(best["usd_per_request"])
    assert m["Replicas"] == f"{res.replicas()['replicas']:,}"
    assert at.number_input(key="pl_i").disabled and at.number_input(key="pl_o").disabled
    # Typing a mix in another form writes it back in one form; emptying the dtype list searches them all.
    at.text_input(key="pl_mix").set_value("1000:200").run()
    assert at.session_state["pl_mix"] == "1000:200:1"
    at.multiselect(key="pl_kd").set_value([]).run()
    assert any("No KV formats chosen" in i.value for i in at.info)
    assert len(charts(at)) == 2
