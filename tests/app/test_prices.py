"""AppTest: the Prices decoded page — clean at defaults and at dial extremes; the numbers it shows equal
`model.pricing` (and the CLI) computed here; pr_ dials seeded from the URL; bad parameters reported."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from model import Deployment, Precision, System, auto_chips, decode_step, presets, pricing
from tests.app.helpers import (
    V1,
    app,
    arr,
    assert_clean,
    assert_notice,
    charts,
    clean_app,
    fig,
    latex_text,
    metrics,
    written,
)
from tests.cli.helpers import run_json
from ui.format import bytes_, number

OFFERS = presets.price_presets()
prices_app = partial(clean_app, page="prices")


def table(at):
    """Section 5's table of every preset: it sits in a lazy expander (drawn only while open), so open it."""
    if not at.session_state["pr_table_open"]:
        at.session_state["pr_table_open"] = True                  # what a click on the expander does
        at.run()
        assert_clean(at)
    return next(d.value for d in at.dataframe if "implied KV [B/token]" in d.value.columns)


def test_defaults_reproduce_the_lectures_numbers():
    at = prices_app(V1)
    assert at.title[0].value.startswith("Prices decoded")
    m = metrics(at)
    # Claude Opus 4.6 (the default featured price): $25 / $5 = 5× ⇒ decode at 1/5 of prefill (§2.6).
    assert m["Output ÷ input price"] == "5×" and m["Decode MFU ÷ prefill MFU"] == "1/5 = 20 %"
    # Gemini 3 Pro's tier at 200k, Na = 100B, F/bw = 600, fp8: 2e11 / (600 · 2e5) = 1,667 B (§2.5) …
    assert m["Implied KV per token"] == bytes_(1e11 / (300 * 2e5)) == "1.67 kB"
    assert m["…in fp8 elements"] == "1,667"
    # … against 1 × 2 × 128 × 8 × 1 B = 2,048 B; 1,666.7 / 2,048 = 0.814.
    assert m["Architecture cross-check"] == bytes_(2048) and m["Implied ÷ architecture"] == "0.814×"
    # $5 fresh / $0.50 hit = 10× (§2.7); recompute ÷ HBM read = 2e11 / (600 · 2048) = 162,760.
    assert m["Price discount"] == "10×" and m["Roofline: recompute ÷ HBM read"] == "162,760×"
    t = latex_text(at)
    assert r"\frac{\$25}{\$5} = 5" in t and "0.2" in t
    assert "1{,}667" in t and "2{,}048" in t and r"600 \times 200{,}000" in t
    assert r"\frac{\$150}{\$25} = 6\times" in t and r"0.167\,B^*" in t      # fast mode 6× for 2.5×
    assert len(charts(at)) == 3
    assert written(at) == {}                   # defaults stay out of the URL
    for f in charts(at):                                # units on every value axis
        assert "[" in f["layout"]["xaxis"]["title"]["text"]
    # Both neighbouring pages are linked.
    assert {p.proto.page for p in at.get("page_link")} == {"fast-mode", "memory-tiers"}


def test_page_agrees_with_the_cli(capsys):
    # The same inputs through `python -m model kv-from-price` (F/bw = 600 as 4.8e15 / 8e12).
    at = prices_app({"pr_na": "100", "pr_fpb": "600"})
    kv = run_json(capsys, "kv-from-price", "--flops", "4.8e15", "--hbm-bw", "8e12", "--total-params", "1e12",
                  "--active-params", "100e9", "--crossover-context", "200e3")["kv_bytes_per_token"]
    assert metrics(at)["Implied KV per token"] == bytes_(kv)
    assert table(at)["implied KV [B/token]"].dropna().iloc[0] == pytest.approx(kv)


def test_url_seeds_every_pr_dial_and_the_numbers_follow_the_model(capsys):
    q = {"pr_offer": "deepseek-r1-2025", "pr_tier": "gemini-2.5-pro", "pr_na": "37", "pr_fpb": "295",
         "pr_kvdt": "bf16", "pr_dh": "64", "pr_kvh": "1", "pr_kvl": "61", "pr_read": "0.5"}
    at = prices_app(q)
    ss = at.session_state
    assert (ss["pr_offer"], ss["pr_tier"], ss["pr_na"], ss["pr_fpb"], ss["pr_kvdt"]) == \
        ("deepseek-r1-2025", "gemini-2.5-pro", 37.0, 295.0, "bf16")
    assert (ss["pr_dh"], ss["pr_kvh"], ss["pr_kvl"], ss["pr_read"]) == (64, 1, 61.0, 0.5)
    assert written(at) == q                   # a copied link reproduces the view
    m = metrics(at)
    # DeepSeek R1 (Feb 2025): $2.19 / $0.55 = 3.98×; $0.55 / $0.14 = 3.93×.
    assert m["Output ÷ input price"] == f"{2.19 / 0.55:.3g}×" == "3.98×"
    assert m["Price discount"] == f"{0.55 / 0.14:.3g}×" == "3.93×"
    # kv = 2 · 37e9 / (295 · 0.5 · 200e3) = 2,508.5 B; architecture 61 × 2 × 64 × 1 × 2 B = 15,616 B.
    kv = 2 * 37e9 / (295 * 0.5 * 200e3)
    assert m["Implied KV per token"] == bytes_(kv) == bytes_(pricing.implied_kv_bytes(37e9, 295, 200e3, 0.5))
    assert m["Architecture cross-check"] == bytes_(61 * 2 * 64 * 2)
    assert m["…in bf16 elements"] == number(kv / 2)
    # The CLI says the same for the dense read (f = 1 is the CLI's only mode): the page's kv × f.
    d = run_json(capsys, "kv-from-price", "--flops", str(295 * 8e12), "--hbm-bw", "8e12", "--total-params", "1e12",
                 "--active-params", "37e9", "--crossover-context", "200e3")
    assert d["kv_bytes_per_token"] == pytest.approx(kv * 0.5)
    # The context chart's implied curve crosses 1 at 200k; the architecture curve at 2·37e9/(295·0.5·15,616).
    f = fig(at, "Cost per token")
    cross = [t for t in f["data"] if "crossover" in (t.get("name") or "")]
    assert cross[0]["x"][0] == pytest.approx(200e3)
    assert cross[1]["x"][0] == pytest.approx(2 * 37e9 / (295 * 0.5 * 15_616))
    assert "Gemini 2.5 Pro" in f["layout"]["title"]["text"]


@pytest.mark.parametrize("query", [
    {"pr_na": "1", "pr_fpb": "10", "pr_read": "0.01", "pr_kvdt": "fp4", "pr_dh": "32", "pr_kvh": "1"},
    {"pr_na": "5000", "pr_fpb": "10000", "pr_kvl": "256", "pr_kvdt": "fp32", "pr_dh": "256", "pr_kvh": "128"},
])
def test_extremes_run_clean(query):
    at = prices_app(query)
    assert len(charts(at)) == 3
    na, fpb = float(query["pr_na"]) * 1e9, float(query["pr_fpb"])
    f = float(query.get("pr_read", 1.0))
    assert metrics(at)["Implied KV per token"] == bytes_(pricing.implied_kv_bytes(na, fpb, 200e3, f))
    curve = next(t for t in fig(at, "Cost per token")["data"] if t["name"].startswith("roofline, implied"))
    assert np.all(np.isfinite(arr(curve["y"]))) and arr(curve["y"]).min() == 1.0


@pytest.mark.parametrize("query, name", [({"pr_na": "abc"}, "pr_na"), ({"pr_fpb": "0"}, "pr_fpb"),
                                         ({"pr_tier": "nope"}, "pr_tier"), ({"pr_offer": "gpt-99"}, "pr_offer"),
                                         ({"pr_read": "2"}, "pr_read"), ({"pr_kvdt": "int3"}, "pr_kvdt"),
                                         ({"pr_kvh": "7"}, "pr_kvh"), ({"pr_kvl": "nan"}, "pr_kvl")])
def test_garbled_pr_params_give_a_notice_and_the_default(query, name):
    at = prices_app(query)
    assert_notice(at, name)
    assert len(charts(at)) == 3
    assert metrics(at)["Implied KV per token"] == "1.67 kB"        # the defaults
    assert name not in written(at)


def test_moving_a_dial_changes_the_figures_as_the_model_says():
    at = prices_app(V1)
    at.number_input(key="pr_na").set_value(200.0).run()
    at.selectbox(key="pr_kvdt").set_value("bf16").run()
    assert_clean(at)
    kv = float(pricing.implied_kv_bytes(200e9, 600.0, 200e3))         # 3,333 B: twice the active params
    m = metrics(at)
    assert m["Implied KV per token"] == bytes_(kv) == "3.33 kB"
    assert m["Architecture cross-check"] == bytes_(4096)               # 2 × 128 × 8 × 2 B
    assert written(at) == {"pr_na": "200", "pr_kvdt": "bf16"}
    curve = next(t for t in fig(at, "Cost per token")["data"] if t["name"].startswith("roofline, implied"))
    T = np.geomspace(1e3, 1e7, 401)
    assert np.allclose(arr(curve["y"]), pricing.context_cost_multiple(T, 200e9, 600.0, kv))
    at.selectbox(key="pr_offer").set_value("gpt-4o").run()            # $10 / $2.50 = 4×; hit $1.25 = 2×
    m = metrics(at)
    assert m["Output ÷ input price"] == "4×" and m["Price discount"] == "2×"
    bars = fig(at, "Output ÷ input")["data"][0]
    hl = [i for i, c in enumerate(bars["marker"]["color"]) if c == "#D62728"]
    assert len(hl) == 1 and bars["y"][hl[0]].startswith("GPT-4o")


def test_a_price_without_a_cache_hit_price_says_so():
    at = prices_app({"pr_offer": "deepseek-v3.1"})                    # no cache-hit price in the preset
    assert metrics(at)["Price discount"] == "—"
    assert any("no cache-hit price" in i.value for i in at.info)
    bars = fig(at, "Fresh input ÷ cache-hit")["data"][0]
    assert not any(y.startswith("DeepSeek-V3.1") for y in bars["y"])  # left out of the chart


def test_roofline_decode_mfu_is_the_sidebar_system():
    at = prices_app(V1)
    hw, mdl = presets.hardware_presets()["h100"], presets.model_presets()["llama-3.1-70b"]
    s = System(hw, mdl, Precision(), Deployment(chips=auto_chips(hw, mdl, Precision(), 64, 8192)))
    r = decode_step(s, 64.0, 8192.0)
    assert metrics(at)["Roofline decode MFU (sidebar)"] == f"{100 * float(r.t_matmul_s / r.t_step_s):.3g} %"


def opus_source(df) -> str:
    return df[df["model"] == "Claude Opus 4.6"].iloc[0]["source"]


def test_the_table_names_price_date_source_and_flags():
    at = prices_app(V1)
    df = table(at)
    t = pricing.price_table(OFFERS, 100e9, 600.0)
    assert len(df) == len(OFFERS) == len(t)
    assert np.allclose(df["out ÷ in [×]"], t.output_input_ratio)
    assert np.allclose(df["in ÷ cache hit [×]"], t.cache_discount, equal_nan=True)
    assert (df["date"].str.len() > 0).all()
    # each row's source is the first web address of its input price's source (presets/prices.yaml): one to follow
    assert df["source"].str.match(r"https?://\S+$").all()
    assert opus_source(df) == "https://platform.claude.com/docs/en/about-claude/pricing"
    # and the captions name their publishers without the source strings' trailing commas ("Anthropic,, …")
    assert not any(",," in m.value or ",)" in m.value for m in at.markdown)
    assert df["prices used [$/Mtok]"].str.startswith("in $").all()
    opus = df[df["model"] == "Claude Opus 4.6"].iloc[0]
    assert "kv" in opus["uncertain"] and opus["prices used [$/Mtok]"] == \
        "in $5, out $25, hit $0.5, >200k: $10 / $37.5, fast out $150"
    assert opus["date"] == "2026-04"
    # The uncertain tier is flagged on the page too, with the preset's note.
    assert any("flagged uncertain" in w.value and "recalled" in w.value for w in at.warning)


def test_the_table_of_every_preset_is_drawn_only_while_open_and_follows_the_dials_then():
    """Section 5's table sits in a lazy expander (ui/elements/lazy.py): closed, a move of the f dial draws no grid
    (drawn, it re-rendered on every such move: docs/performance.md "What the figures rest on"); opened, it
    reads the dials' values.
    Its open state is not a dial (not in the URL), and its CSV download is there either way."""
    at = prices_app(V1)
    assert not any("implied KV [B/token]" in d.value.columns for d in at.dataframe)
    assert any(b.label == "Download the table (CSV)" for b in at.get("download_button"))
    at.slider(key="pr_read").set_value(0.5).run()
    assert_clean(at)
    assert not any("implied KV [B/token]" in d.value.columns for d in at.dataframe)
    df = table(at)
    assert written(at).get("pr_table_open") is None and written(at)["pr_read"] == "0.5"
    # implied KV = 2·Na / ((F/bw)·f·T×) at f = 0.5: twice the dense figure, row by row (model.pricing)
    t = pricing.price_table(OFFERS, 100e9, 600.0, 0.5)
    assert np.allclose(df["implied KV [B/token]"], t.implied_kv_bytes_per_token, equal_nan=True)
    dense = pricing.price_table(OFFERS, 100e9, 600.0, 1.0).implied_kv_bytes_per_token
    assert np.allclose(t.implied_kv_bytes_per_token, 2 * dense, equal_nan=True)


def test_the_sidebar_chips_flop_per_byte_is_shown_for_scale():
    # lecture-gpu preset: 2.4e15 bf16 and 4.8e15 fp8 FLOP/s over 8e12 B/s = 300 and 600 FLOP/B (§2.1).
    at = prices_app({"chip": "lecture-gpu", "model": "lecture-deepseek"})
    cap = next(c.value for c in at.caption if c.value.startswith("For scale"))
    assert "300 at bf16" in cap and "600 at fp8" in cap
    at = prices_app(V1)                                   # H100: 989.4e12 / 3.35e12 = 295; 1,978.9e12 / 3.35e12 = 591
    cap = next(c.value for c in at.caption if c.value.startswith("For scale"))
    assert "295 at bf16" in cap and "591 at fp8" in cap


def test_unknown_key_with_this_pages_prefix_gets_a_notice():
    """The URL contract (docs/design.md "The URL"): an unknown parameter is named in a notice (here one that only looks
    like this page's); another page's keys are left alone."""
    at = app({"pr_zzz": "1"}, page="prices")
    assert not at.exception
    assert any("'pr_zzz'" in w.value and "not one this page knows" in w.value for w in at.warning)
    at = app({"pr_offer": "claude-opus-4.6"}, page="batch")
    assert not any("pr_offer" in w.value for w in at.warning)
