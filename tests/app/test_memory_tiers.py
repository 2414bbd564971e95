"""AppTest: the Memory tiers page — clean at defaults and at dial extremes; the numbers it shows equal
`model.economics` and the `cache-tier` CLI computed here; page dials and tier edits seeded from the URL;
bad parameters reported by name."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from model import Precision, System, presets
from model.economics import cache_tier_costs, hbm_tier, recompute_cost, request_with_cache
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
    metrics,
    sidebar_system,
    trace,
    written,
)
from tests.cli.helpers import run_json
from ui.format import usd

KV70 = 327_680.0
mt_app = partial(clean_app, page="memory-tiers")


def test_defaults_clean_three_charts_equations_and_definitions():
    at = mt_app(V1)
    assert at.title[0].value.startswith("Memory tiers")
    figs = charts(at)
    assert len(figs) == 3
    assert len(latex(at)) == 3
    assert len(at.caption) >= 4               # the system line + a one-line definition under each chart
    assert written(at) == {}        # page dials at their defaults stay out of the URL
    ss = at.session_state
    assert (ss["mt_hold"], ss["mt_offer"], ss["mt_out"], ss["mt_hit"]) == (300, "claude-opus-4.6", 1000, 0.9)
    for f in figs:                            # units on every y axis
        assert "[" in f["layout"]["yaxis"]["title"]["text"]
    # The drain-time equation with the default tiers' numbers (by hand: 23.9 ms, 2.67 s, 18.3 min, 23.4 h).
    tex = latex(at)[0].value
    for s in ("80", "3.35", "23.9 ms", "576", "2.67 s", "18.3 min", "285", "23.4 h"):
        assert s in tex, s
    # Uncertain prices flagged in the table.
    table = at.dataframe[0].value
    assert list(table["tier"]) == ["HBM", "DDR", "flash", "disk"]
    assert all("uncertain: price" in f for f in table["flags"])
    assert list(table["lecture"]) == ["≈ 20 ms", "1–10 s", "~1 min", "~1 h"]


def test_page_agrees_with_the_cli_at_five_minutes(capsys):
    at = mt_app(V1)
    d = run_json(capsys, "cache-tier", "--hardware", "h100", "--model", "llama-3.1-70b", "--hold-seconds", "300")
    m = metrics(at)
    assert d["cheapest"] == "nvme-gen5" and m["Cheapest at t = 5 min"] == "flash"
    assert m["Its cost [USD/Mtok]"] == f"${d['cheapest_usd_per_mtok']:.3g}" == "$0.000364"
    assert m["Recompute [USD/Mtok]"] == f"${d['recompute_usd_per_mtok']:.3g}" == "$0.117"
    assert m["KV per token"] == "328 kB"
    # The chart's lines are the CLI's (and the model's) costs, per Mtok, over the whole hold-time grid.
    f = fig(at, "Holding one token's KV")
    t = arr(trace(f, "HBM")["x"])
    assert t.min() == pytest.approx(1e-3) and t.max() == pytest.approx(1e7) and 300.0 in t
    i = int(np.flatnonzero(t == 300.0)[0])
    for name, row in zip(("HBM", "DDR", "flash", "disk"), d["tiers"]):
        assert arr(trace(f, name)["y"])[i] == pytest.approx(row["usd_per_mtok"], rel=1e-9)
    assert arr(trace(f, "recompute")["y"])[0] == pytest.approx(d["recompute_usd_per_mtok"])
    s = sidebar_system()
    costs = cache_tier_costs([hbm_tier(s.hardware), *presets.load("tier").values()], KV70,
                             float(recompute_cost(s)), t)
    assert np.allclose(arr(trace(f, "cheapest option")["y"]), costs.cheapest_usd * 1e6)
    assert trace(f, "now")["name"] == "now: flash at 5 min"      # the dot's legend entry
    x_now, y_now = dot(f, "now")
    assert x_now == pytest.approx(300.0) and y_now == pytest.approx(d["cheapest_usd_per_mtok"])
    # The hand-over times in words follow the CLI's switches: HBM up to 10.4 ms, DDR up to 19.7 s …
    handover = next(x.value for x in at.markdown if x.value.startswith("Cheapest place"))
    assert [round(x["hold_s"], 4) for x in d["switches"][:2]] == [0.0104, 19.6696]
    assert "**HBM** up to 10.4 ms" in handover and "**DDR** up to 19.7 s" in handover
    assert "**flash** up to 21 h" in handover and "**recompute**" in handover
    # Drain times on the bar chart are the CLI's.
    bars = fig(at, "Drain time")["data"][0]
    assert np.allclose(arr(bars["y"]), [r["drain_s"] for r in d["tiers"]])
    # The provider's marks: Opus 4.6's $5 input and $0.50 cache hit; $1.75/Mtok to hold 5 min.
    assert m["Claude Opus 4.6: input ÷ cache hit"] == "10×"
    assert m["List price to hold 5 min"] == "$1.75/Mtok"
    prov = arr(trace(f, "Claude Opus 4.6")["y"])
    assert prov[i] == pytest.approx(1.75) and np.isnan(prov[t > 3600]).all()


def test_request_cost_equals_the_model():
    at = mt_app(V1)
    s = sidebar_system()
    tier_usd = KV70 * 0.044 / 3600 * (300 / 15.36e12 + 1 / 14e9)          # flash at 5 min, by hand
    r = request_with_cache(s, 8192.0, 1000.0, np.array([0.0, 0.9]), tier_usd, batch=64.0)
    m = metrics(at)
    assert m["Request, no hits"] == usd(r.usd_total[0])
    assert m["Request at h = 90%"] == usd(r.usd_total[1])
    assert m["Of which cache hold + read"] == usd(0.9 * 8192 * tier_usd)
    # Opus 4.6 at list prices: (0.1·8,192·5 + 0.9·8,192·0.5 + 1,000·25)/1e6 = $0.03279.
    assert m["List price at h = 90%"] == usd((0.1 * 8192 * 5 + 0.9 * 8192 * 0.5 + 1000 * 25) / 1e6) == "$0.0328"
    f = fig(at, "Cost of a request")
    total = arr(trace(f, "total on the roofline")["y"])
    assert total[0] == pytest.approx(100.0) and total[90] == pytest.approx(100 * r.usd_total[1] / r.usd_total[0])
    assert "8{,}192" in latex(at)[2].value


def test_url_seeds_the_page_dials():
    at = mt_app({"mt_hold": "3600", "mt_offer": "gemini-2.5-pro", "mt_hit": "0.5", "mt_out": "3000"})
    ss = at.session_state
    assert (ss["mt_hold"], ss["mt_offer"], ss["mt_hit"], ss["mt_out"]) == (3600, "gemini-2.5-pro", 0.5, 3000)
    assert written(at) == {"mt_hold": "3600", "mt_offer": "gemini-2.5-pro", "mt_hit": "0.5",
                                     "mt_out": "3000"}
    m = metrics(at)
    assert m["Cheapest at t = 1 h"] == "flash"
    # Gemini 2.5 Pro: $0.125 cache read + $4.50 per Mtok-hour of storage = $4.62/Mtok for an hour.
    assert m["List price to hold 1 h"] == "$4.62/Mtok"
    assert m["Gemini 2.5 Pro: input ÷ cache hit"] == "10×"            # $1.25 / $0.125
    assert "Request at h = 50%" in m


def test_tier_edits_from_the_url_agree_with_a_cli_tier_file(capsys, tmp_path):
    # Flash at $100/h: now far dearer than DDR and disk at 5 minutes.
    at = mt_app({"mt_fl_usd": "100", "mt_hbm_gb": "160"})
    assert at.session_state["mt_fl_usd"] == 100.0
    table = at.dataframe[0].value
    assert "edited: price" in table["flags"][2] and table["capacity"][0] == "160 GB"
    assert "edited: capacity" in table["flags"][0]
    f = tmp_path / "tiers.yaml"
    base = presets.load("tier")
    items = "".join(f"  {k}:\n    name: x\n    medium: {t.medium}\n    source: test\n    date: '2026-12'\n"
                    f"    capacity_bytes: {t.capacity_bytes}\n    bandwidth_bytes_per_s: {t.bandwidth_bytes_per_s}\n"
                    f"    usd_per_hour: {100 if k == 'nvme-gen5' else t.usd_per_hour}\n" for k, t in base.items())
    f.write_text("schema: roofline-presets/1\nkind: tier\nitems:\n" + items)
    d = run_json(capsys, "cache-tier", "--hardware", "h100", "--model", "llama-3.1-70b", "--hbm-bytes", "160e9",
                 "--hold-seconds", "300", "--tiers", str(f))
    assert d["cheapest"] == "ddr5-socket"
    m = metrics(at)
    assert m["Cheapest at t = 5 min"] == "DDR"
    assert m["Its cost [USD/Mtok]"] == f"${d['cheapest_usd_per_mtok']:.3g}"
    fl = arr(trace(fig(at, "Holding one token's KV"), "flash")["y"])
    assert fl.min() == pytest.approx(d["tiers"][2]["retrieve_usd_per_token"] * 1e6, rel=1e-2)
    assert "160" in latex(at)[0].value


@pytest.mark.parametrize("query, name", [({"mt_hold": "7"}, "mt_hold"), ({"mt_offer": "nope"}, "mt_offer"),
                                         ({"mt_hit": "2"}, "mt_hit"), ({"mt_out": "abc"}, "mt_out"),
                                         ({"mt_fl_gb": "-1"}, "mt_fl_gb"), ({"mt_ddr_usd": "nan"}, "mt_ddr_usd")])
def test_bad_page_parameters_give_a_notice_and_the_default(query, name):
    at = mt_app(query)
    assert_notice(at, name)
    assert len(charts(at)) == 3
    assert metrics(at)["Cheapest at t = 5 min"] == "flash"       # the defaults still draw


@pytest.mark.parametrize("hold, best", [("0.001", "HBM"), ("1", "DDR"), ("86400", "disk")])
def test_the_cheapest_tier_follows_the_hold_time(hold, best, capsys):
    at = mt_app({"mt_hold": hold})
    label = next(k for k in metrics(at) if k.startswith("Cheapest at"))
    assert metrics(at)[label] == best
    d = run_json(capsys, "cache-tier", "--hardware", "h100", "--model", "llama-3.1-70b", "--hold-seconds", hold)
    assert metrics(at)["Its cost [USD/Mtok]"] == f"${d['cheapest_usd_per_mtok']:.3g}"


def test_extremes_a_month_no_provider_no_hits():
    at = mt_app({"mt_hold": "2592000", "mt_offer": "none", "mt_hit": "0", "mt_out": "30000"})
    m = metrics(at)
    assert m["Cheapest at t = 30 days"] == "recompute"
    assert any("no tier beats recomputing" in x.value for x in at.info)
    assert not any("list price" in (t.get("name") or "") for f in charts(at) for t in f["data"])
    assert m["Request at h = 0%"] == m["Request, no hits"]
    assert "List price at h = 0%" not in m


def test_extremes_deepseek_on_gb200_at_ten_million_context_full_hits():
    at = mt_app({"chip": "gb200", "model": "deepseek-v3", "ctx": "10000000", "mt_hit": "1", "kv": "fp8"})
    s = System(presets.get("hardware", "gb200"), presets.get("model", "deepseek-v3"), Precision(kv="fp8"))
    kv = s.kv.bytes_per_token                    # MLA: 61 layers × (512 + 64) × 1 B = 35,136 B
    assert kv == 61 * 576
    assert metrics(at)["KV per token"] == "35.1 kB"
    assert "Request at h = 100%" in metrics(at)


def test_moving_the_dials_redraws_and_writes_the_url():
    at = mt_app(V1)
    at.select_slider(key="mt_hold").set_value(86400).run()
    at.slider(key="mt_hit").set_value(0.5).run()
    at.selectbox(key="mt_offer").set_value("gpt-5").run()
    assert_clean(at)
    m = metrics(at)
    assert m["Cheapest at t = 24 h"] == "disk"
    assert m["List price to hold 24 h"] == "$0.125/Mtok"      # GPT-5: cache read, lifetime not priced
    assert "Request at h = 50%" in m
    assert written(at) == {"mt_hold": "86400", "mt_hit": "0.5", "mt_offer": "gpt-5"}
