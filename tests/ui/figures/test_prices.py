"""The Prices decoded page's figure builders, without Streamlit: bars, highlight, hatching, lines, axes.

Every figure is re-validated with plotly's full validation (`tests.ui.figures.checks.validate`), since
`ui.figures.plot.Spec` skips it at run time.
"""

import numpy as np
import pytest

from model import pricing
from tests.ui.figures.checks import validate, vline_xs
from ui.figures import prices as fig_prices

LABELS = ["Gemini 2.5 Pro · 2026-03", "Claude Opus 4.6 · 2026-04", "DeepSeek-V3.2 · 2026-04"]
RATIOS = np.array([8.0, 5.0, 1.5])


def _bars(**kw):
    args = dict(title="Output ÷ input price of each preset", x_title="output ÷ input price [×]", highlight=1,
                uncertain=[False, True, False], band=(3.0, 5.0, "lecture: 3–5×"),
                hover=["a", "b", "c"])
    args.update(kw)
    return fig_prices.offer_bars(LABELS, RATIOS, **args)


def test_offer_bars_values_highlight_and_hatching():
    fig = _bars()
    validate(fig)
    bar = next(t for t in fig.data if t.type == "bar" and t.name == "price presets")
    assert bar.orientation == "h" and list(bar.y) == LABELS and np.allclose(bar.x, RATIOS)
    # The featured preset is coloured and outlined; the others are not.
    assert bar.marker.color[1] == fig_prices.HIGHLIGHT_COLOR
    assert bar.marker.color[0] == bar.marker.color[2] == fig_prices.BAR_COLOR
    assert list(bar.marker.line.width) == [0, 3, 0]
    # The preset resting on an uncertain price is hatched, and the legend says what hatching means.
    assert list(bar.marker.pattern.shape) == ["", "/", ""]
    assert any("uncertain" in (t.name or "") for t in fig.data)
    assert list(bar.text) == ["8×", "5×", "1.5×"]
    assert list(bar.customdata) == ["a", "b", "c"]
    # The lecture's 3–5× band is a shaded x-range; the first preset is at the top.
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [(r.x0, r.x1) for r in rects] == [(3.0, 5.0)]
    assert fig.layout.yaxis.autorange == "reversed"
    assert "[×]" in fig.layout.xaxis.title.text and fig.layout.xaxis.type == "linear"
    assert fig.layout.xaxis.range[1] >= 8.0          # the longest bar is not cut off


def test_offer_bars_reference_line_no_highlight_no_uncertain():
    fig = fig_prices.offer_bars(LABELS, np.array([10.0, 10.0, 3.93]), title="t", x_title="input ÷ hit [×]",
                                ref=(pricing.LECTURE_CACHE_DISCOUNT, "lecture: ~10×"))
    validate(fig)
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert [(s.x0, s.x1) for s in lines] == [(10.0, 10.0)]
    assert any(a.text == "lecture: ~10×" for a in fig.layout.annotations)
    bar = fig.data[0]
    assert all(c == fig_prices.BAR_COLOR for c in bar.marker.color)
    assert len(fig.data) == 1                           # no legend entries for hatching or the highlight


def test_offer_bars_log_axis_and_many_rows():
    labels = [f"preset {i}" for i in range(20)]
    fig = fig_prices.offer_bars(labels, np.geomspace(1, 100, 20), title="t", x_title="x [×]", log=True,
                                band=(3.0, 5.0, "band"))
    validate(fig)
    assert fig.layout.xaxis.type == "log"
    lo, hi = fig.layout.xaxis.range
    assert 10 ** lo < 1.0 and 10 ** hi > 100.0
    assert fig.layout.height >= 150 + 34 * 20           # rows stay readable


def _context_fig(threshold=200e3, steps=True):
    T = np.geomspace(1e3, 1e7, 201)
    kv = float(pricing.implied_kv_bytes(100e9, 600.0, 200e3))
    curves = [("roofline, implied KV", pricing.context_cost_multiple(T, 100e9, 600.0, kv), fig_prices.KV_COLOR,
               "solid"),
              ("roofline, architecture KV", pricing.context_cost_multiple(T, 100e9, 600.0, 2048.0),
               fig_prices.ARCH_COLOR, "dash")]
    st = [("input price ÷ $2", pricing.tier_price_multiple(T, 200e3, 2.0), fig_prices.INPUT_PRICE_COLOR)] if steps \
        else []
    t_arch = float(pricing.crossover_context(100e9, 600.0, 2048.0))
    fig = fig_prices.context_cost(T, curves, st, threshold=threshold,
                                  crossovers=[(200e3, 1.0, "implied crossover", fig_prices.KV_COLOR),
                                              (t_arch, 1.0, "architecture crossover", fig_prices.ARCH_COLOR)])
    return fig, T, curves, t_arch


def test_context_cost_curves_steps_and_threshold():
    fig, T, curves, t_arch = _context_fig()
    validate(fig)
    names = [t.name for t in fig.data]
    assert names == ["roofline, implied KV", "roofline, architecture KV", "input price ÷ $2", "implied crossover",
                     "architecture crossover"]
    assert np.allclose(fig.data[0].y, curves[0][1])
    # The roofline is flat at 1 below its crossover and 50× at 10M tokens (10M / 200k).
    assert fig.data[0].y[0] == 1.0 and fig.data[0].y[-1] == pytest.approx(50.0)
    step = fig.data[2]
    assert step.line.shape == "hv" and step.y[0] == 1.0 and step.y[-1] == 2.0
    assert fig.data[4].x[0] == pytest.approx(t_arch)
    assert vline_xs(fig) == [200e3]
    assert any("200,000" in a.text for a in fig.layout.annotations)
    assert fig.layout.xaxis.type == "log" and "[tokens]" in fig.layout.xaxis.title.text
    assert fig.layout.yaxis.type == "log" and "[×]" in fig.layout.yaxis.title.text
    assert list(fig.layout.xaxis.ticktext) == ["1k", "10k", "100k", "1M", "10M"]
    assert 10 ** fig.layout.yaxis.range[1] > 50.0        # the top of the curve is inside the plot


def test_context_cost_without_a_tier():
    fig, *_ = _context_fig(threshold=None, steps=False)
    validate(fig)
    assert not [s for s in fig.layout.shapes if s.type == "line"]
    assert len(fig.data) == 4
