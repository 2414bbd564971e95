"""The Compare page's pure parts, without Streamlit: the URL code of a pinned configuration, how a
configuration becomes a System (as the sidebar builds one), and the overlay figures.

Every figure is re-validated with plotly's full validation (`tests.ui.figures.checks.validate`).
"""

import numpy as np
import pytest

from model import Deployment, Precision, System, auto_chips, decode_step, presets, system_balance_batch
from tests.ui.figures.checks import validate
from ui.figures import compare as fig_compare
from ui.figures.compare import CONFIG_COLORS, Config, Curve, decode, encode, view_for

HWS, MDS = presets.hardware_presets(), presets.model_presets()


# ---------------------------------------------------------------- the URL code

@pytest.mark.parametrize("cfg, code", [
    (Config("h100", "llama-3.1-70b"), "h100_llama-3.1-70b"),                       # all defaults: short form
    (Config("h100", "llama-3.1-70b", "fp8", "fp8", "fp8", 8, 2.95), "h100_llama-3.1-70b_fp8_fp8_fp8_8_2.95"),
    (Config("lecture-gpu", "lecture-deepseek", compute="fp8"), "lecture-gpu_lecture-deepseek_bf16_bf16_fp8"),
    (Config("gb200", "deepseek-v3", chips=72), "gb200_deepseek-v3_bf16_bf16_bf16_72"),
    (Config("b200", "kimi-k2", price=5.0), "b200_kimi-k2_bf16_bf16_bf16_auto_5"),   # a middle default is kept
    (Config("tpu-v5e", "llama-3.1-8b", "fp4", "fp32", "bf16", "auto", 0.01),
     "tpu-v5e_llama-3.1-8b_fp4_fp32_bf16_auto_0.01"),
])
def test_encode_is_compact_and_decode_reads_it_back(cfg, code):
    assert encode(cfg) == code
    assert decode(code) == cfg


def test_the_short_form_fills_in_the_defaults():
    assert decode("h100_llama-3.1-70b_fp8") == Config("h100", "llama-3.1-70b", weights="fp8")
    assert decode("h100_llama-3.1-70b_bf16_bf16_bf16_auto_preset") == Config("h100", "llama-3.1-70b")
    assert decode("  a100_mixtral-8x7b_bf16_bf16_bf16_16 ") == Config("a100", "mixtral-8x7b", chips=16)


def test_every_preset_pair_fits_in_one_url_value_and_round_trips():
    longest = 0
    for chip in HWS:
        for model in MDS:
            cfg = Config(chip, model, "fp16", "fp32", "fp8", 576, 999.99)
            code = encode(cfg)
            longest = max(longest, len(code))
            assert decode(code) == cfg
    assert longest <= fig_compare.MAX_CODE_CHARS == 64           # the app's cap on one URL value


def test_keys_with_the_separator_in_them_are_still_split_right():
    chips, models = {"my_chip", "my"}, {"chip_x", "m_1"}
    assert decode("my_chip_m_1_fp8", chips, models) == Config("my_chip", "m_1", weights="fp8")
    assert decode("my_chip_x", chips, models) == Config("my", "chip_x")


@pytest.mark.parametrize("code, why", [
    ("", "empty"),
    ("h200", "unknown model"),
    ("h999_llama-3.1-70b", "unknown chip 'h999'"),
    ("h100_nope", "unknown model 'nope'"),
    ("h100_llama-3.1-70b_int8", "weights dtype 'int8'"),
    ("h100_llama-3.1-70b_bf16_bf17", "KV dtype 'bf17'"),
    ("h100_llama-3.1-70b_bf16_bf16_fp32", "compute dtype 'fp32'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_7", "chips '7'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_-8", "chips '-8'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_8_0", "price '0'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_8_-2", "price '-2'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_8_nan", "price 'nan'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_8_inf", "price 'inf'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_8_1e9", "price '1e9'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_8_cheap", "price 'cheap'"),
    ("h100_llama-3.1-70b_bf16_bf16_bf16_8_2_x", "8 fields"),
    ("h100_llama-3.1-70b_" + "x" * 60, "characters; at most 64"),
])
def test_garbled_codes_are_rejected_with_the_reason(code, why):
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace("*", r"\*")):
        decode(code)


# ---------------------------------------------------------------- a configuration's System

def test_view_for_builds_the_system_the_sidebar_would():
    hw, m = HWS["h100"], MDS["llama-3.1-70b"]
    v = view_for(Config("h100", "llama-3.1-70b"), 64, 8192)
    # auto: weights 141.2 GB + KV 64 × 8192 × 327,680 B = 171.8 GB → 313 GB over 0.9 × 80 GB per chip → 8 chips
    assert auto_chips(hw, m, Precision(), 64, 8192) == 8
    assert v.system == System(hw, m, Precision(), Deployment(chips=8)) and v.chips == 8 and v.chips_auto
    assert (v.batch, v.context, v.chip_key, v.model_key, v.warnings) == (64, 8192, "h100", "llama-3.1-70b", ())
    # the sidebar's mode and efficiencies are passed through
    v2 = view_for(Config("h100", "llama-3.1-70b", chips=4), 64, 8192, mfu=0.5, bw_util=0.8, mode="per-phase")
    assert v2.system.deployment == Deployment(chips=4, mfu=0.5, bw_util=0.8, mode="per-phase")
    assert v2.system.flops == pytest.approx(0.5 * 989.4e12) and v2.system.hbm_bandwidth == pytest.approx(0.8 * 3.35e12)


def test_view_for_price_override_and_its_uncertain_note():
    base = view_for(Config("h100", "llama-3.1-70b"), 64, 8192)
    assert any("price" in n for n in base.uncertain)            # H100's rental price is flagged [U] in the preset
    cheap = view_for(Config("h100", "llama-3.1-70b", price=1.5), 64, 8192)
    assert cheap.system.hardware.price_usd_per_hour == 1.5
    assert not any("price" in n for n in cheap.uncertain)        # the user's own price is not a preset figure


def test_view_for_falls_back_to_bf16_and_warns_past_the_domain():
    v = view_for(Config("a100", "llama-3.1-70b", compute="fp8", chips=16), 64, 8192)
    assert v.system.precision.compute == "bf16" and v.system.flops == 312e12
    assert any("no fp8 FLOP/s" in w for w in v.warnings)
    assert any("scale-up domain of 8" in w for w in v.warnings)


def test_lecture_balance_batch_is_2400():
    v = view_for(Config("lecture-gpu", "lecture-deepseek"), 64, 8192)
    # (F/bw) × (total/active) × (bytes/param ÷ 2) = (2.4e15 / 8e12) × (700B / 87.5B) × 2/2 = 300 × 8 = 2,400
    assert float(system_balance_batch(v.system, 0.0)) == pytest.approx(2400.0)
    # auto: 1.4 TB of weights + 64 × 8192 × 70,272 B of MLA KV = 1.437 TB over 0.9 × 192 GB → 16 chips
    assert v.chips == 16


# ---------------------------------------------------------------- figures

B = np.geomspace(1, 65536, 50)


def _curve(i: int, fits=None, marks=()) -> Curve:
    y = 10.0 + B * (i + 1) / 100
    fits = np.ones(B.shape, bool) if fits is None else fits
    return Curve(f"{i + 1}: config", CONFIG_COLORS[i], y, fits, np.array(["weights"] * B.size), float(y[10]),
                 fig_compare.CONFIG_SYMBOLS[i], marks)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_vs_batch_has_one_curve_and_marker_per_config(n):
    curves = [_curve(i, marks=((f"B* ({i + 1})", 100.0 * (i + 1)),)) for i in range(n)]
    fig = fig_compare.vs_batch(B, curves, b_now=float(B[10]), unit="ms", title="Latency", y_title="time [ms]")
    validate(fig)
    lines = [t for t in fig.data if t.mode == "lines"]
    dots = [t for t in fig.data if t.mode == "markers"]
    assert [t.name for t in lines] == [c.label for c in curves]             # all fit: no dotted parts, no legend
    assert [t.line.color for t in lines] == list(CONFIG_COLORS[:n])
    # batch ticks at powers of ten (1, 10, 100, 1k …); y likewise when the curves span two decades or more:
    # 10 … 10 + n × 655 ms, 1.8 decades for one config (plotly's own ticks), 2.1 and 2.3 for two and three
    assert (fig.layout.xaxis.dtick, fig.layout.xaxis.tickformat) == (1, "~s")
    assert fig.layout.yaxis.dtick == (None if n == 1 else 1)
    for t, c in zip(lines, curves):
        assert np.allclose(t.y, c.y) and np.allclose(t.x, B)
    # the current values are dot shapes, not marker traces (only their legend entries and the invisible
    # room markers are marker traces, neither with a point to show)
    assert all(t.meta in ("now", "now-room") for t in dots)
    assert all(list(t.x) == [None] for t in dots if t.meta == "now")
    # one dot per config: x at B[10]'s fraction of the log x range, y at the config's value, its symbol
    shapes = [s for s in fig.layout.shapes if s.name == "now"]
    x0, x1 = fig.layout.xaxis.range
    assert [(s.xref, s.yref) for s in shapes] == [("x domain", "y")] * n
    assert [s.xanchor for s in shapes] == [pytest.approx((np.log10(B[10]) - x0) / (x1 - x0))] * n
    assert [s.yanchor for s in shapes] == [c.y_now for c in curves]
    assert [s.path.startswith({"circle": "M7.5,0 C", "square": "M-7.5,-7.5 L", "diamond": "M9.75,0 L"}[c.symbol])
            for s, c in zip(shapes, curves)] == [True] * n
    legend = [t for t in fig.data if t.meta == "now"]
    assert [t.name for t in legend] == [f"{c.label} at B = {B[10]:.3g}" for c in curves]
    assert all(t.showlegend is False for t in legend)
    # one B* line per config in its colour, plus the grey current-batch line
    vlines = [s for s in fig.layout.shapes if s.type == "line"]
    assert sorted((s.x0, s.line.color) for s in vlines if s.line.color in CONFIG_COLORS) == \
        [(100.0 * (i + 1), CONFIG_COLORS[i]) for i in range(n)]
    assert any(s.x0 == B[10] and s.line.color == fig_compare.GREY for s in vlines)
    assert {a.text for a in fig.layout.annotations} >= {f"B* ({i + 1})" for i in range(n)} | {f"B = {B[10]:.3g}"}
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "batch B" in fig.layout.xaxis.title.text and "[ms]" in fig.layout.yaxis.title.text
    assert "ms" in lines[0].hovertemplate and "bound" in lines[0].hovertemplate


def test_what_does_not_fit_is_dotted_and_marks_off_the_chart_are_left_out():
    fits = B < 1000
    c = _curve(0, fits=fits, marks=(("B* (1)", 1e9), ("never", np.inf)))
    fig = fig_compare.vs_batch(B, [c], b_now=64.0, unit="$/Mtok", title="Cost", y_title="cost [$ per million tokens]")
    validate(fig)
    solid = fig.data[0]
    dotted = next(t for t in fig.data if t.name.endswith("(does not fit)"))
    assert dotted.line.dash == "dot" and dotted.line.color == CONFIG_COLORS[0] and dotted.showlegend is False
    y_s, y_d = np.array(solid.y, float), np.array(dotted.y, float)
    assert np.all(np.isnan(y_s[~fits])) and np.allclose(y_s[fits], c.y[fits])
    k = int(np.argmin(fits))                                      # first batch that does not fit
    assert np.allclose(y_d[k - 1:], c.y[k - 1:]) and np.all(np.isnan(y_d[:k - 1]))  # joined at the boundary
    assert any(t.name == "dotted: does not fit in HBM" for t in fig.data)
    assert not [s for s in fig.layout.shapes if s.line.color == CONFIG_COLORS[0]]   # 1e9 and ∞ are off the chart


def test_vs_context_marks_and_axis():
    T = np.geomspace(1024, 1e7, 40)
    c = Curve("2: x", CONFIG_COLORS[1], T / 1e3, T < 1e6, np.array(["kv"] * T.size), 8.192, "square",
              (("KV > compute (2)", 8301.0),))
    fig = fig_compare.vs_context(T, [c], t_now=8192.0, unit="$/Mtok", title="Cost vs context",
                                 y_title="cost [$ per million tokens]")
    validate(fig)
    assert "context T" in fig.layout.xaxis.title.text
    assert list(fig.layout.xaxis.range) == pytest.approx([np.log10(1024), 7.0])
    assert [s.x0 for s in fig.layout.shapes if s.line.color == CONFIG_COLORS[1]] == [8301.0]
    assert any(a.text == "T = 8,192" for a in fig.layout.annotations)
    assert "T = " in fig.data[0].hovertemplate


def test_a_real_sweep_draws_the_model_arrays():
    v = view_for(Config("h100", "llama-3.1-70b"), 64, 8192)
    sweep = decode_step(v.system, B, 8192)
    c = Curve("1", CONFIG_COLORS[0], sweep.t_step_s * 1e3, sweep.fits, sweep.bound, 11.7)
    fig = fig_compare.vs_batch(B, [c], b_now=64.0, unit="ms", title="t", y_title="time per step [ms]")
    validate(fig)
    y = np.array(fig.data[0].y, float)
    assert np.allclose(y[sweep.fits], sweep.t_step_s[sweep.fits] * 1e3)
    assert list(fig.data[0].customdata) == list(sweep.bound.astype(str))


def test_predicted_curves_dashed_in_each_colour_and_the_band_where_given():
    x = np.geomspace(1, 4096, 30)
    y = 1 + x / 100
    curves = [Curve("1: a", CONFIG_COLORS[0], y, np.ones(x.size, bool), np.array(["weights"] * x.size), 2.0,
                    predicted=2 * y, band=(1.5 * y, 3 * y)),
              Curve("2: b", CONFIG_COLORS[1], 2 * y, np.ones(x.size, bool), np.array(["weights"] * x.size), 2.0,
                    predicted=4 * y)]
    fig = fig_compare.vs_batch(x, curves, b_now=64, unit="ms", title="t", y_title="[ms]", solid_name="ideal roofline")
    validate(fig)
    preds = [t for t in fig.data if t.name.endswith(", predicted")]
    assert [t.line.color for t in preds] == list(CONFIG_COLORS[:2]) and all(t.line.dash == "dash" for t in preds)
    assert np.allclose(preds[1].y, 4 * y) and not any(t.showlegend for t in preds)
    band = [t for t in fig.data if t.name.startswith("held-out error band") and t.fill == "tonexty"]
    assert len(band) == 1 and band[0].name.endswith("config 1") and np.allclose(band[0].y, 3 * y)
    assert band[0].fillcolor == "rgba(0, 114, 178, 0.14)"                     # config 1's blue, light
    names = [t.name for t in fig.data]
    assert "solid: ideal roofline" in names and "dashed: predicted (fitted efficiencies)" in names
