"""AppTest: the KV-cache page — clean at defaults and at dial extremes, numbers equal hand derivations,
page dials seeded from the URL, bad page parameters reported."""

import pytest

from model import context_never_compute_bound, presets
from tests.app.helpers import (
    PAGES,
    V1,
    app,
    assert_clean,
    charts,
    latex_text,
    metrics,
    page_text,
    sidebar_system,
    written,
)

# Preset figures the hand derivations use (presets/hardware.yaml, presets/models.yaml).
H100_F_BF16 = 989.4e12      # FLOP/s, dense bf16
H100_BW = 3.35e12           # B/s
L70_NA = 70.6e9             # Llama 3.1 70B: dense, total = active
L70_KV = 80 * 2 * 8 * 128 * 2   # 80 layers × (K, V) × 8 KV heads × head_dim 128 × 2 B (bf16) = 327,680 B/token
DSV3_KV = 61 * (512 + 64) * 2   # DeepSeek-V3 MLA: 61 layers × (latent 512 + RoPE key 64) × 2 B = 70,272 B/token

CROSS = "KV = weights at B = {b} [tokens]"
NEVER = "KV = compute: never compute-bound past [tokens]"
IMPLIED = "Implied KV per token"


def kv_app(query: dict[str, str] | None = None, page_query: dict[str, str] | None = None):
    """Open the KV-cache page.  Sidebar parameters go in with the first run (default page); the page's
    own parameters are added before the page's first run, as when a link to the page is opened (the
    first run on the Batch page writes the URL back without them)."""
    at = app(query or V1)
    for k, v in (page_query or {}).items():
        at.query_params[k] = v
    at.switch_page(PAGES["kv-cache"]).run()
    return at


def _num(text: str) -> float:
    return float(text.replace(",", "").split()[0])


def test_defaults_clean_three_charts_and_the_definitions():
    at = app(V1, page="kv-cache")
    assert_clean(at)
    assert at.title[0].value.startswith("KV cache")
    figs = charts(at)
    assert len(figs) == 3
    titles = [f["layout"]["title"]["text"] for f in figs]
    assert titles[0].startswith("Cost per token against context") and "batch × context" in titles[1]
    assert len(at.caption) >= 4        # a one-line definition under each chart (plus the system line)
    assert written(at) == {}  # page dials at their defaults stay out of the URL


def test_crossovers_equal_hand_derivations_llama70_h100_bf16():
    at = app(V1, page="kv-cache")          # defaults: H100, Llama 3.1 70B, bf16 everywhere, B = 64, T = 8k
    m = metrics(at)
    # T_never = 2·Na·bw / (F·kv) = 2 × 70.6e9 × 3.35e12 / (989.4e12 × 327,680) = 1,459.0 tokens
    t_never = 2 * L70_NA * H100_BW / (H100_F_BF16 * L70_KV)
    assert context_never_compute_bound(sidebar_system()) == pytest.approx(t_never, rel=1e-12)   # the model agrees
    assert _num(m[NEVER]) == round(t_never) == 1459
    # T× = W / (B·kv) = 141.2e9 / (64 × 327,680) = 6,732.9 tokens
    t_cross = 2 * L70_NA / (64 * L70_KV)
    assert _num(m[CROSS.format(b=64)]) == round(t_cross) == 6733
    assert m["KV stored per token"] == "328 kB"
    # The same numbers appear in the equations (KaTeX thousands separators).
    tex = latex_text(at)
    assert "6{,}733" in tex and "1{,}459" in tex
    # At another batch T× scales as 1/B: B = 8 → 53,864.
    at = app({"b": "8"}, page="kv-cache")
    assert _num(metrics(at)[CROSS.format(b=8)]) == round(2 * L70_NA / (8 * L70_KV)) == 53864


def test_deepseek_mla_crossover_equals_hand_derivation():
    at = app({"model": "deepseek-v3"}, page="kv-cache")
    assert_clean(at)
    # 2 × 37e9 × 3.35e12 / (989.4e12 × 70,272) = 3,565.5 tokens
    assert _num(metrics(at)[NEVER]) == round(2 * 37e9 * H100_BW / (H100_F_BF16 * DSV3_KV)) == 3566
    assert metrics(at)["KV stored per token"] == "70.3 kB"


def test_implied_kv_bytes_of_the_gemini_tier():
    at = app(V1, page="kv-cache")
    assert presets.price_presets()["gemini-2.5-pro"].long_context_threshold_tokens == 200e3
    assert at.session_state["tier"] == "gemini-2.5-pro"
    # kv = 2·Na·bw / (F·T) = 2 × 100e9 × 3.35e12 / (989.4e12 × 200e3) = 3,385.9 B of bf16
    implied = 2 * 100e9 * H100_BW / (H100_F_BF16 * 200e3)
    m = metrics(at)
    assert m[IMPLIED] == f"{implied:,.0f} B" == "3,386 B"
    assert m["= elements at bf16"] == f"{implied / 2:,.0f}"
    assert m["Lecture's architecture [elements]"] == "2,048"
    text = page_text(at, "markdown", "caption")
    assert "2026-03" in text and "deploybase.ai" in text          # the price's date and source
    assert "bytes at the compute dtype" in text
    # At fp8 FLOP/s (1,978.9e12) the same tier implies half: 1,693 B = 1,693 fp8 elements.
    at = app({"cd": "fp8"}, page="kv-cache")
    assert metrics(at)[IMPLIED] == f"{2 * 100e9 * H100_BW / (1978.9e12 * 200e3):,.0f} B" == "1,693 B"


def test_url_seeds_the_page_dials():
    at = kv_app(None, {"sa": "sqrt", "knee": "4096", "tier": "gemini-3-pro", "na": "37"})
    assert_clean(at)
    ss = at.session_state
    assert (ss["sa"], ss["knee"], ss["tier"], ss["na"]) == ("sqrt", 4096.0, "gemini-3-pro", 37.0)
    assert at.radio(key="sa").value == "sqrt"
    assert any("Storage is unchanged" in i.value for i in at.info)
    m = metrics(at)
    # √ reads past the knee: kv(T) = kv_tok·√(K·T) = W/B  ⇒  T× = (W/(B·kv_tok))² / K = 6,732.9² / 4096 = 11,068
    assert _num(m[CROSS.format(b=64)]) == round((2 * L70_NA / (64 * L70_KV)) ** 2 / 4096) == 11068
    # T_never = 1,459 < K: dense reads up to the knee, so unchanged.
    assert _num(m[NEVER]) == 1459
    # Gemini 3 Pro's tier is also at 200k: 2 × 37e9 × 3.35e12 / (989.4e12 × 200e3) = 1,253 B
    assert m[IMPLIED] == f"{2 * 37e9 * H100_BW / (H100_F_BF16 * 200e3):,.0f} B" == "1,253 B"
    assert {k: v for k, v in at.query_params.items() if k in ("sa", "knee", "tier", "na")} == \
        {"sa": "sqrt", "knee": "4096", "tier": "gemini-3-pro", "na": "37"}
    # Sparse reads show as diamonds on the models chart; the stored bars are unchanged.
    names = [t.get("name") or "" for t in charts(at)[2]["data"]]
    assert any("sparse" in n for n in names)


@pytest.mark.parametrize("key, bad", [("sa", "bogus"), ("knee", "-5"), ("tier", "no-such-offer"), ("na", "abc"),
                                      ("knee", "1e99"), ("na", "nan")])
def test_garbled_page_param_gives_the_notice(key, bad):
    at = kv_app(None, {key: bad})
    assert_clean(at)
    warnings = [w.value for w in at.warning]
    assert any(f"URL parameter '{key}'" in w and "using the default" in w for w in warnings), warnings
    assert len(charts(at)) == 3


@pytest.mark.parametrize("query, page_query", [
    ({"ctx": "10000000"}, {}),
    ({"b": "65536"}, {}),
    ({"b": "65536", "ctx": "10000000"}, {"sa": "sqrt"}),
    ({"chip": "a100"}, {}),
    ({"chip": "a100", "cd": "fp8"}, {}),                 # no fp8 figure: falls back to bf16 with a warning
    ({"model": "gpt-oss-120b"}, {}),                      # windowed layers: no closed form
    ({"model": "gpt-oss-120b", "ctx": "10000000", "b": "65536"}, {"sa": "sqrt", "knee": "1"}),
    ({"model": "deepseek-v3", "kv": "fp8"}, {}),          # MLA
    ({"model": "llama-4-scout", "mode": "per-phase"}, {"sa": "sqrt"}),
    ({"b": "1", "mfu": "0.01", "bwu": "0.01"}, {"na": "100000", "tier": "claude-sonnet-4.5"}),
])
def test_clean_at_dial_extremes(query, page_query):
    at = kv_app(query, page_query)
    assert_clean(at)
    assert len(charts(at)) == 3
    m = metrics(at)
    for label in (NEVER, IMPLIED):
        assert label in m


def test_crossover_outside_the_chart_is_said_in_words():
    # B = 1 with √ reads from a knee of 1 token: T× = (W/kv)² = (430,908)² ≈ 1.9e11 tokens — past 10M.
    at = kv_app({"b": "1"}, {"sa": "sqrt", "knee": "1"})
    assert_clean(at)
    assert metrics(at)[CROSS.format(b=1)] == "never within 10M"
    assert any("Off the chart" in c.value and "not within 10M tokens" in c.value for c in at.caption)


def test_windowed_model_counts_only_full_layers_per_extra_token():
    at = app({"model": "gpt-oss-120b"}, page="kv-cache")
    assert_clean(at)
    tex = latex_text(at)
    assert r"\min(T_c, 128)" in tex                        # the windowed layers' cap is shown
    bars = [t for t in charts(at)[2]["data"] if t.get("type") == "bar"]
    by_name = {y: (x, t["name"]) for t in bars for x, y in zip(t["x"], t["y"])}
    # 18 full-attention layers × 2 × 8 KV heads × 64 × 2 B = 36,864 B per extra token at long context.
    assert by_name["gpt-oss-120b"] == (pytest.approx(36.864), "GQA + windowed")
    assert by_name["DeepSeek-V3 / R1"] == (pytest.approx(DSV3_KV / 1e3), "MLA")
    # Every preset model is on the chart, and the current one is outlined.
    assert set(by_name) == {m.name for m in presets.model_presets().values()}
    outlined = [y for t in bars for y, w in zip(t["y"], t["marker"]["line"]["width"]) if w]
    assert outlined == ["gpt-oss-120b"]


def test_weights_that_do_not_fit_are_said():
    # DeepSeek-V3 in bf16 is 1.34 TB; 8 A100s (its scale-up domain) hold 640 GB: no point fits.
    at = app({"chip": "a100", "model": "deepseek-v3"}, page="kv-cache")
    assert_clean(at)
    assert any("Here nothing fits" in c.value for c in at.caption)
    at = app(V1, page="kv-cache")
    assert not any("Here nothing fits" in c.value for c in at.caption)


def test_below_ideal_efficiency_draws_the_ideal_cost_curve_too():
    """A fitted efficiency shows the realistic and the ideal cost against context together."""
    import numpy as np

    from model import System, decode_step
    from tests.app.helpers import arr, fig, trace
    at = app({"mfu": "0.4", "bwu": "0.5", "c": "8"}, page="kv-cache")
    assert_clean(at)
    f = fig(at, "Cost per token against context")
    ideal = trace(f, "ideal roofline")
    x, y = arr(ideal["x"]).astype(float), arr(ideal["y"]).astype(float)
    s = System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b")).with_(chips=8)
    assert np.allclose(y, decode_step(s, 64, x).usd_per_mtok)
    real = decode_step(s.with_(mfu=0.4, bw_util=0.5), 64, x).usd_per_mtok
    assert np.all(real > y)                                    # below-ideal efficiency costs more everywhere
    plain = fig(app({"c": "8"}, page="kv-cache"), "Cost per token against context")
    assert not any((t.get("name") or "").startswith("ideal roofline") for t in plain["data"])
