"""AppTest: the Compare page — clean with 1, 2 and 3 configurations; its table and charts equal
independent model calls (Systems built by tests/app/helpers.py, not through the page's helper) and hand derivations;
pinned configurations round-trip through the URL; garbled `cmp_` parameters give a notice naming
them and are dropped."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest

from model import (
    Deployment,
    Precision,
    System,
    context_never_compute_bound,
    decode_step,
    max_batch_that_fits,
    presets,
    system_balance_batch,
)
from model import calibrate as cal
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
    predicted_dense,
    sidebar_system,
    written,
)
from ui.figures.compare import CONFIG_COLORS
from ui.figures.plot import panels
from ui.format import number, seconds, usd

HWS, MDS = presets.hardware_presets(), presets.model_presets()
B, T = 64.0, 8192.0                                    # the sidebar's defaults
LECTURE = "lecture-gpu_lecture-deepseek"
B200_FP8 = "b200_deepseek-v3_fp8_fp8_fp8_8_5"
FP8 = Precision(weights="fp8", kv="fp8", compute="fp8")


def column(s: System, batch=B, context=T) -> dict[str, str]:
    """The key numbers the table should show for `s`, from independent model calls."""
    W, C, bw = s.weight_bytes, s.deployment.chips, s.hbm_bandwidth
    b0, bt = float(system_balance_batch(s, 0.0)), float(system_balance_batch(s, context))
    now = decode_step(s, batch, context)
    fit = float(max_batch_that_fits(s, context))
    out = {"B0": number(b0), "BT": number(bt) if math.isfinite(bt) else "none: memory-bound at every batch",
           "floor": seconds(W / (C * bw)), "latency": seconds(float(now.t_step_s)) + ("" if now.fits else
                                                                                     " (does not fit)"),
           "cost": usd(float(now.usd_per_mtok)), "fit": f"{math.floor(fit):,}",
           "kv": f"{context_never_compute_bound(s):,.0f}"}
    if math.isfinite(bt):
        star = decode_step(s, bt, context)
        out["star"] = usd(float(star.usd_per_mtok)) + ("" if star.fits else " (does not fit)")
    else:
        out["star"] = "— (no B*(T))"
    return out


ROWS = {"B0": "Balance batch B*, KV ignored [sequences]", "BT": "Balance batch B*(T) at T = 8k [sequences]",
        "star": "Cost at B*(T) [$/Mtok]", "floor": "Latency floor W/(C·bw)",
        "kv": "KV overtakes compute past T [tokens]", "fit": "Max batch that fits at T = 8k [sequences]",
        "latency": "Ideal latency per token at B = 64", "cost": "Ideal cost at B = 64 [$/Mtok]"}


def table(at) -> dict[int, dict[str, str]]:
    """The page's table as {config number: {row label: cell}}."""
    df = at.table[0].value
    return {int(c.split()[1]): {r: df.loc[r, c] for r in df.index} for c in df.columns}


def assert_column(cells: dict[str, str], s: System) -> None:
    want = column(s)
    # The last two rows say which estimate they read: the ideal roofline, or the roofline at the efficiency dials.
    word = "Ideal" if s.deployment.mfu == s.deployment.bw_util == 1 else "Roofline"
    for k, row in ROWS.items():
        row = row.replace("Ideal ", f"{word} ") if k in ("latency", "cost") else row
        assert cells[row] == want[k], (row, cells[row], want[k])
    assert cells["Chip"] == s.hardware.name and cells["Model"] == s.model.name
    p = s.precision
    assert cells["Weights / KV / compute"] == f"{p.weights}/{p.kv}/{p.compute}"
    assert cells["Price [$/chip-h]"] == f"${s.hardware.price_usd_per_hour:.2f}"



def lines(f: dict) -> list[dict]:
    """The solid (fitting) curve of each configuration, in config order (not the band's edges, drawn without a
    line, nor a legend-only entry)."""
    return [t for t in f["data"] if t.get("mode") == "lines" and t["line"].get("dash") is None
            and t["line"].get("width") != 0 and list(t["x"]) != [None]]


cmp_app = partial(clean_app, page="compare")


def test_defaults_one_config_follows_the_sidebar():
    at = cmp_app(V1)
    assert at.title[0].value == "Compare configurations"
    # Two charts: latency and cost against batch as one figure of two panels (ui.figures.plot.side_by_side, one plotly
    # draw per move instead of two), and cost against context.
    assert len(charts(at)) == 2 and len(latex(at)) == 2
    assert [len(panels(f["data"], f["layout"])) for f in charts(at)] == [2, 1]
    assert written(at) == {}                       # nothing pinned: nothing in the URL
    assert at.toggle(key="cmp1_follow").value is True and at.toggle(key="cmp2_on").value is False
    cols = table(at)
    assert list(cols) == [1]
    s = sidebar_system("h100", "llama-3.1-70b")
    assert s.deployment.chips == 8
    assert_column(cols[1], s)
    c = cols[1]
    # By hand: B* = 989.4e12 / 3.35e12 × 1 × 2/2 = 295; floor = 141.2 GB / (8 × 3.35 TB/s) = 5.27 ms;
    # KV overtakes compute at 2·Na·bw / (F·kv_tok) = 2 × 70.6e9 × 3.35e12 / (989.4e12 × 327,680) = 1,459 tokens;
    # max batch = (8 × 80 GB − 141.2 GB) / (8192 × 327,680 B) = 185.8 → 185.  At 8k, kv/bw > 2Na/F: no B*(T).
    assert (c[ROWS["B0"]], c[ROWS["floor"]], c[ROWS["kv"]], c[ROWS["fit"]]) == ("295", "5.27 ms", "1,459", "185")
    assert c[ROWS["BT"]] == "none: memory-bound at every batch"
    assert any("Turn on config 2" in x.value for x in at.info)
    # the charts draw the model's sweep for this system
    f = fig(at, "Latency per token against batch")
    (line,) = lines(f)
    x = arr(line["x"])
    sweep = decode_step(s, x, T)
    y = arr(line["y"])
    assert np.allclose(y[sweep.fits], sweep.t_step_s[sweep.fits] * 1e3) and np.all(np.isnan(y[~sweep.fits]))
    assert line["line"]["color"] == CONFIG_COLORS[0]
    f = fig(at, "Cost per million tokens against context")
    (line,) = lines(f)
    t = arr(line["x"])
    sweep = decode_step(s, B, t)
    assert np.allclose(arr(line["y"])[sweep.fits], sweep.usd_per_mtok[sweep.fits])
    # KV > compute line on the context chart, at the table's context
    assert [sh["x0"] for sh in f["layout"]["shapes"] if sh["line"]["color"] == CONFIG_COLORS[0]] == \
        [pytest.approx(context_never_compute_bound(s))]


def test_one_config_the_lectures_2400():
    at = cmp_app({"chip": "lecture-gpu", "model": "lecture-deepseek", "ctx": "1024"})
    cols = table(at)
    assert list(cols) == [1]
    # (2.4e15 / 8e12) × (700B / 87.5B) × 2/2 = 300 × 8 = 2,400
    assert cols[1][ROWS["B0"]] == "2,400"
    assert r"300 \times 8 \times \frac{2}{2} = 2{,}400" in latex(at)[0].value
    s = sidebar_system("lecture-gpu", "lecture-deepseek", context=1024)
    # B*(T = 1024) = (W/bw) / (2Na/F − kv(T)/bw) = 0.175 s / (72.9 µs − 9.0 µs) = 2,739: marked on both batch charts
    bt = float(system_balance_batch(s, 1024))
    assert bt == pytest.approx(0.175 / (2 * 87.5e9 / 2.4e15 - 70_272 * 1024 / 8e12))
    for title in ("Latency per token against batch", "Cost per million tokens against batch"):
        xs = [sh["x0"] for sh in fig(at, title)["layout"]["shapes"] if sh["line"]["color"] == CONFIG_COLORS[0]]
        assert xs == [pytest.approx(bt)]


def test_two_configs_from_the_url():
    at = cmp_app({"cmp_2": LECTURE})
    assert at.toggle(key="cmp2_on").value is True
    cols = table(at)
    assert list(cols) == [1, 2]
    assert_column(cols[1], sidebar_system("h100", "llama-3.1-70b"))
    lec = sidebar_system("lecture-gpu", "lecture-deepseek")
    # auto: 1.4 TB + 64 × 8192 × 70,272 B = 1.437 TB over 0.9 × 192 GB → 8.3 → 16 chips
    assert lec.deployment.chips == 16 and cols[2]["Chips C"] == "16 (auto)"
    assert_column(cols[2], lec)
    # floor = 1.4 TB / (16 × 8 TB/s) = 10.9 ms; B* = 2,400
    assert cols[2][ROWS["floor"]] == "10.9 ms" and cols[2][ROWS["B0"]] == "2,400"
    f = fig(at, "Cost per million tokens against batch")
    first, second = lines(f)
    assert second["line"]["color"] == CONFIG_COLORS[1] and second["name"].startswith("2: lecture-gpu")
    sweep = decode_step(lec, arr(second["x"]), T)
    assert np.allclose(arr(second["y"])[sweep.fits], sweep.usd_per_mtok[sweep.fits])
    assert written(at) == {"cmp_2": LECTURE}


def test_three_configs_table_and_charts_equal_the_model():
    at = cmp_app({"cmp_2": LECTURE, "cmp_3": B200_FP8})
    cols = table(at)
    assert list(cols) == [1, 2, 3]
    b200 = sidebar_system("b200", "deepseek-v3", precision=FP8, chips=8, price=5.0)
    h100, lec = sidebar_system("h100", "llama-3.1-70b"), sidebar_system("lecture-gpu", "lecture-deepseek")
    for i, s in ((1, h100), (2, lec), (3, b200)):
        assert_column(cols[i], s)
    # config 3 by hand: B* = F·W / (2·Na·bw) = 4.5e15 × 671e9 / (2 × 37e9 × 8e12) = 5,101 (fp8 weights: 1 B/param)
    assert b200.hardware.flops_fp8_per_s == 4.5e15 and cols[3][ROWS["B0"]] == "5,101"
    assert cols[3]["Price [$/chip-h]"] == "$5.00" and cols[3]["Chips C"] == "8"
    f = fig(at, "Latency per token against batch")
    ls = lines(f)
    assert [t["line"]["color"] for t in ls] == list(CONFIG_COLORS)
    sweep = decode_step(b200, arr(ls[2]["x"]), T)
    assert np.allclose(arr(ls[2]["y"])[sweep.fits], sweep.t_step_s[sweep.fits] * 1e3)
    marks = [dot(f, f"{i}:") for i in (1, 2, 3)]          # each config's value at the sidebar's batch
    assert [x for x, _ in marks] == [pytest.approx(64.0)] * 3
    assert marks[2][1] == pytest.approx(float(decode_step(b200, B, T).t_step_s) * 1e3)
    for tex in (r"B^*_3 &= 562 \times 18.1 \times \frac{1}{2} = 5{,}101", r"t_{floor,2}"):
        assert any(tex in x.value for x in latex(at)), tex
    assert written(at) == {"cmp_2": LECTURE, "cmp_3": B200_FP8}


def test_slot_three_alone():
    at = cmp_app({"cmp_3": "mi300x_qwen3-235b-a22b_fp8_fp8_fp8_8"})
    cols = table(at)
    assert list(cols) == [1, 3]
    assert_column(cols[3], sidebar_system("mi300x", "qwen3-235b-a22b", precision=FP8, chips=8))


def test_widgets_write_the_url_and_the_link_reopens_the_same_page():
    at = cmp_app(V1)
    at.toggle(key="cmp2_on").set_value(True).run()
    assert written(at) == {"cmp_2": "h100_llama-3.1-70b"}      # a copy of config 1 to start from
    at.selectbox(key="cmp2_chip").set_value("gb200").run()
    at.selectbox(key="cmp2_c").set_value(72).run()
    at.number_input(key="cmp2_price").set_value(3.5).run()
    at.toggle(key="cmp3_on").set_value(True).run()
    at.selectbox(key="cmp3_model").set_value("deepseek-v3").run()
    at.selectbox(key="cmp3_w").set_value("fp8").run()
    at.toggle(key="cmp1_follow").set_value(False).run()
    at.selectbox(key="cmp1_cd").set_value("fp8").run()
    assert_clean(at)
    want = {"cmp_1": "h100_llama-3.1-70b_bf16_bf16_fp8", "cmp_2": "gb200_llama-3.1-70b_bf16_bf16_bf16_72_3.5",
            "cmp_3": "h100_deepseek-v3_fp8"}
    assert written(at) == want
    cols = table(at)
    assert_column(cols[2], sidebar_system("gb200", "llama-3.1-70b", chips=72, price=3.5))
    assert_column(cols[1], sidebar_system("h100", "llama-3.1-70b", precision=Precision(compute="fp8")))
    # The copied link opens the same three configurations, widgets included: their editors start closed
    # (a config from the link is read, not edited), and opening one shows its values.
    again = cmp_app(want)
    assert table(again) == cols
    assert again.toggle(key="cmp1_follow").value is False
    assert not [w for w in again.selectbox if w.key.startswith(("cmp1_", "cmp2_", "cmp3_"))]
    again.session_state["cmp2_edit"] = True                 # what a click on "Change config 2" does
    again.run()
    assert again.selectbox(key="cmp2_chip").value == "gb200" and again.selectbox(key="cmp2_c").value == 72
    assert again.number_input(key="cmp2_price").value == 3.5
    assert written(again) == want
    # Hiding a config drops it from the URL.
    again.toggle(key="cmp3_on").set_value(False).run()
    assert "cmp_3" not in written(again) and list(table(again)) == [1, 2]


def test_editors_are_lazy_and_keep_their_values_while_closed():
    """A pinned config's editors sit in a lazy expander ("Change config i"): drawn only while open. A config
    from the link starts closed, one just switched on starts open; closing keeps its values, and a sidebar
    move with it closed still draws that config (eleven widgets fewer to redraw per move)."""
    at = cmp_app({"cmp_2": LECTURE})
    card = [w.key for w in at.selectbox if w.key.startswith("cmp2_")]
    assert card == [] and at.session_state["cmp2_edit"] is False
    at.toggle(key="cmp3_on").set_value(True).run()               # switched on: a copy of config 1, open
    assert at.session_state["cmp3_edit"] is True and at.selectbox(key="cmp3_chip").value == "h100"
    at.selectbox(key="cmp3_chip").set_value("b200").run()
    at.session_state["cmp3_edit"] = False                        # closed
    at.run()
    assert not [w for w in at.selectbox if w.key.startswith("cmp3_")]
    assert written(at)["cmp_3"].startswith("b200_")
    at.select_slider(key="b").set_value(256).run()               # a sidebar move with the editors closed
    assert_clean(at)
    assert written(at)["cmp_3"].startswith("b200_") and table(at)[3]["Chip"] == HWS["b200"].name
    at.session_state["cmp3_edit"] = True
    at.run()
    assert at.selectbox(key="cmp3_chip").value == "b200"


def test_config_one_follows_the_sidebar_until_pinned():
    at = cmp_app({"cmp_2": LECTURE})
    at.selectbox(key="chip").set_value("h200").run()
    assert table(at)[1]["Chip"] == HWS["h200"].name
    assert "cmp_1" not in written(at)
    at.toggle(key="cmp1_follow").set_value(False).run()
    assert at.query_params["cmp_1"] == "h200_llama-3.1-70b"
    at.selectbox(key="chip").set_value("a100").run()          # the sidebar moves on; pinned config 1 stays
    assert table(at)[1]["Chip"] == HWS["h200"].name
    assert at.query_params["cmp_1"] == "h200_llama-3.1-70b" and at.query_params["chip"] == "a100"


def test_sidebar_mode_and_efficiencies_apply_to_every_config():
    at = cmp_app({"cmp_2": LECTURE, "mode": "per-phase", "mfu": "0.5", "bwu": "0.8"})
    cols = table(at)
    kw = {"mode": "per-phase", "mfu": 0.5, "bw_util": 0.8}
    assert_column(cols[1], sidebar_system("h100", "llama-3.1-70b", **kw))
    assert_column(cols[2], sidebar_system("lecture-gpu", "lecture-deepseek", **kw))


def test_warnings_and_uncertain_figures_are_flagged_per_config():
    at = cmp_app({"cmp_2": "a100_llama-3.1-70b_bf16_bf16_fp8_16"})
    notes = [w.value for w in at.warning]
    assert any(n.startswith("Config 2:") and "no fp8 FLOP/s" in n for n in notes)
    assert any(n.startswith("Config 2:") and "scale-up domain of 8" in n for n in notes)
    assert table(at)[2]["Weights / KV / compute"] == "bf16/bf16/bf16"       # computed at bf16
    # A100's price is an uncertain preset figure: its column is flagged and the note is listed.
    assert "Config 2 ⚠" in at.table[0].value.columns
    assert any("uncertain preset figure" in e.label for e in at.expander)


@pytest.mark.parametrize("query, name", [
    ({"cmp_2": "h100_nope"}, "cmp_2"),
    ({"cmp_3": "h100_llama-3.1-70b_bf16_bf16_bf16_7"}, "cmp_3"),
    ({"cmp_2": "h100_llama-3.1-70b_bf16_bf16_bf16_8_nan"}, "cmp_2"),
    ({"cmp_1": "x" * 80}, "cmp_1"),
    ({"cmp_9": "h100_llama-3.1-70b"}, "cmp_9"),
])
def test_a_garbled_parameter_gives_a_notice_and_is_dropped(query, name):
    at = cmp_app(query)
    assert_notice(at, name)
    assert list(table(at)) == [1] and len(charts(at)) == 2          # the page keeps working without it
    assert name not in written(at)


def test_one_garbled_one_good():
    at = cmp_app({"cmp_2": "h100_llama-3.1-70b_int8", "cmp_3": LECTURE})
    assert any("'cmp_2'" in w.value and "weights dtype 'int8'" in w.value for w in at.warning)
    assert list(table(at)) == [1, 3]
    assert written(at) == {"cmp_3": LECTURE}


def test_a_custom_sidebar_chip_is_compared_while_config_one_follows():
    # ui/state/custom.py's link form: H100 with 4 TB/s of HBM bandwidth, renamed.
    at = cmp_app({"chip": "custom", "xhw": "h100~bw:4e12~n:My chip", "cmp_2": "h100_llama-3.1-70b"})
    cols = table(at)
    assert cols[1]["Chip"] == "My chip" and cols[2]["Chip"] == HWS["h100"].name
    mine = System(HWS["h100"].with_(hbm_bandwidth_bytes_per_s=4e12, name="My chip"), MDS["llama-3.1-70b"],
                  Precision(), Deployment(chips=8))
    # B* = 989.4e12 / 4e12 × 1 × 2/2 = 247; floor = 141.2 GB / (8 × 4 TB/s) = 4.41 ms
    assert cols[1][ROWS["B0"]] == number(float(system_balance_batch(mine, 0.0))) == "247"
    assert cols[1][ROWS["floor"]] == seconds(141.2e9 / (8 * 4e12)) == "4.41 ms"
    at.toggle(key="cmp1_follow").set_value(False).run()     # a custom chip cannot be pinned: says so
    assert_clean(at)
    assert any("custom chip or model" in x.value for x in at.info)


# ---- the fitted model's prediction beside each configuration's roofline (the sidebar's Estimate)

@pytest.mark.parametrize("est", ["ideal", "predicted"])
def test_each_config_is_predicted_and_the_first_has_the_band(est):
    at = cmp_app({"cmp_2": "h200_llama-3.1-8b", "est": est})
    systems = [sidebar_system("h100", "llama-3.1-70b"), sidebar_system("h200", "llama-3.1-8b")]
    lo, hi = cal.built_in_summary().band        # the five-fold 10th–90th pct, as the page reads it
    for title, k, scale in (("Latency per token against batch", 0, 1e3), ("Cost per million tokens against", 1, 1)):
        f = fig(at, title)
        preds = [t for t in f["data"] if (t.get("name") or "").endswith(", predicted")]
        assert [t["line"]["color"] for t in preds] == list(CONFIG_COLORS[:2])
        for t, s in zip(preds, systems):
            x, y = arr(t["x"]).astype(float), arr(t["y"]).astype(float)
            t_, c_, fits = predicted_dense(s, x, T)
            want = (t_ if k == 0 else c_) * scale
            assert np.allclose(y[fits], want[fits], rtol=1e-9) and np.isnan(y[~fits]).all()
        bands = [t for t in f["data"] if (t.get("name") or "").startswith("held-out error band")
                 and "lower edge" not in t["name"]]
        assert len(bands) == 1 and bands[0]["name"].endswith("config 1")              # the first config only
        x = arr(bands[0]["x"]).astype(float)
        t_, c_, fits = predicted_dense(systems[0], x, T)
        want = (t_ if k == 0 else c_) * scale
        assert np.allclose(arr(bands[0]["y"]).astype(float)[fits], want[fits] * hi, rtol=1e-9)
        names = [t.get("name") for t in f["data"]]
        assert "solid: ideal roofline" in names and "dashed: predicted (fitted efficiencies)" in names
    # The table's last two rows read the estimate, and say which.
    cols = table(at)
    word = "Predicted" if est == "predicted" else "Ideal"
    for i, s in enumerate(systems, 1):
        t_, c_, _ = predicted_dense(s, 64.0, T)
        r = decode_step(s, 64, T)
        lat = cols[i][f"{word} latency per token at B = 64"]
        cost = cols[i][f"{word} cost at B = 64 [$/Mtok]"]
        if est == "predicted":
            assert lat.startswith(seconds(float(t_))) and cost == usd(float(c_))
        else:
            assert lat.startswith(seconds(float(r.t_step_s))) and cost == usd(float(r.usd_per_mtok))
