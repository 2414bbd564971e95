"""The Memory tiers page's figure builders, without Streamlit: traces, the cheapest option, marks, axes.

Every figure is also re-validated with plotly's full validation (`tests.ui.figures.checks.validate`),
since `ui.figures.plot.Spec` skips it at run time.  Inputs are small hand-made arrays, not model output.
"""

import itertools

import numpy as np
import pytest

from tests.app.helpers import dot
from tests.ui.figures.checks import validate, vline_xs
from ui.figures import memory_tiers as fig_tiers

T = np.geomspace(1e-3, 1e7, 101)                       # 1 ms … 116 days, 10 points per decade
# Three straight lines a + b·t [USD/Mtok] and recompute at 1 USD/Mtok: A is cheapest below ≈ 0.1 s, B up to
# 0.09/8.1e-6 ≈ 1.1e4 s, C until it reaches 1 at t = 1e6 s, then recompute.
A = 1e-1 * T                                         # HBM-like: nothing to read back, dear to hold
B = 1e-2 + 9e-6 * T                                  # DDR-like
C = 1e-1 + 9e-7 * T                                  # flash-like
REC = 1.0
NAMES = ["A", "B", "C", "recompute"]
COLORS = ["#D62728", "#F58518", "#54A24B", "#333333"]


def _cheapest():
    return np.argmin(np.vstack([A, B, C, np.full(T.shape, REC)]), axis=0)


def _cost(**kw):
    lines = [fig_tiers.TierLine(n, y, c) for n, y, c in zip(NAMES, (A, B, C), COLORS)]
    return fig_tiers.cost_vs_hold(T, lines, REC, _cheapest(), NAMES, COLORS, **kw)


def test_cost_vs_hold_lines_envelope_and_shading():
    fig = _cost(now=(300.0, 1e-2 + 9e-6 * 300, "B at 5 min"),
                ttls=[(300.0, "5-min TTL"), (3600.0, "1-h TTL")])
    validate(fig)
    names = [t.name for t in fig.data]
    assert names[:5] == ["cheapest option", "A", "B", "C", "recompute (prefill again)"]
    env = np.asarray(fig.data[0].y)
    assert np.allclose(env, np.minimum.reduce([A, B, C, np.full(T.shape, REC)]))   # the thick line is the minimum
    assert fig.data[0].line.width > max(t.line.width for t in fig.data[1:5])
    assert np.allclose(fig.data[4].y, REC)
    # One shaded band per run of the cheapest option, in its colour, labelled once, in order.
    runs = [NAMES[k] for i, k in enumerate(_cheapest()) if i == 0 or k != _cheapest()[i - 1]]
    assert runs == ["A", "B", "C", "recompute"]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [r.fillcolor for r in rects] == COLORS
    assert [a.text for a in fig.layout.annotations if a.text.startswith("<b>")] == [f"<b>{n}</b>" for n in runs]
    # Bands meet at the geometric midpoints between grid points and cover the whole axis.
    assert rects[0].x0 == pytest.approx(T[0]) and rects[-1].x1 == pytest.approx(T[-1])
    assert all(r1.x0 == pytest.approx(r0.x1) for r0, r1 in itertools.pairwise(rects))
    # The TTLs as vertical lines with labels; the current point.
    assert sorted(vline_xs(fig)) == [300.0, 3600.0]
    assert {"5-min TTL", "1-h TTL"} <= {a.text for a in fig.layout.annotations}
    assert next(t for t in fig.data if t.name.startswith("now")).name == "now: B at 5 min"
    x_now, y_now = dot(fig.to_dict(), "now")        # a shape (Spec.now_point), read back through the ranges
    assert x_now == pytest.approx(300.0) and y_now == pytest.approx(0.0127)
    # Log axes with units; time ticks in words; the y range reaches below the cheapest value.
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "[s" in fig.layout.xaxis.title.text and "USD/Mtok" in fig.layout.yaxis.title.text
    assert list(fig.layout.xaxis.ticktext[:2]) == ["1 ms", "10 ms"] and "100 days" in fig.layout.xaxis.ticktext
    assert 10 ** fig.layout.yaxis.range[0] < env.min() and 10 ** fig.layout.yaxis.range[1] > REC


def test_cost_vs_hold_provider_curve_and_price_lines():
    prov = np.where(T <= 300, 1.75, np.where(T <= 3600, 5.5, np.nan))      # Anthropic-style (see economics)
    fig = _cost(provider=fig_tiers.ProviderCurve("Opus: write premium + read", prov),
                refs=[("input $5/Mtok", 5.0, "#7F3C8D"), ("cache hit $0.5/Mtok", 0.5, "#7F3C8D"),
                      ("no price", float("nan"), "#7F3C8D")])
    validate(fig)
    p = next(t for t in fig.data if t.name.startswith("Opus"))
    y = np.asarray(p.y, float)
    assert np.isnan(y[T > 3600]).all() and p.connectgaps is False           # no lifetime sold beyond 1 h
    hl = sorted(s.y0 for s in fig.layout.shapes if s.type == "line" and s.y0 == s.y1)
    assert hl == [0.5, 5.0]                                                  # the NaN price is left out
    assert 10 ** fig.layout.yaxis.range[1] > 5.5                             # the dearest price is on the chart
    # TTLs outside the hold range are not drawn.
    fig = _cost(ttls=[(1e9, "far")])
    assert not [s for s in fig.layout.shapes if s.type == "line"]


def test_cost_vs_hold_marks_the_hand_over_times():
    # A = 0.1·t meets B = 0.01 + 9e-6·t at t× = 0.01/(0.1 − 9e-6) = 0.100009 s (a point on both lines);
    # a hand-over beyond the axis (1e9 s) or at no finite time is not drawn.
    tx = 0.01 / (0.1 - 9e-6)
    fig = _cost(handovers=[(tx, 0.1 * tx, "A → B 100 ms"), (1e9, 1.0, "far"), (float("inf"), 1.0, "never")])
    validate(fig)
    h = next(t for t in fig.data if t.name.startswith("hand-over"))
    assert list(h.x) == [pytest.approx(tx)] and list(h.y) == [pytest.approx(0.0100009)]
    assert list(h.text) == ["A → B 100 ms"] and h.mode == "markers+text"
    assert not any(t.name.startswith("hand-over") for t in _cost().data)     # none asked for, none drawn


def test_drain_times_bars_and_the_lectures_figures():
    drain = [0.0239, 2.667, 1097.0, 84211.0]
    lec = [(0.015, 0.036, "≈ 20 ms"), (1.0, 10.0, "1–10 s"), (60.0, 60.0, "~1 min"), None]
    fig = fig_tiers.drain_times(["HBM", "DDR", "flash", "disk"], drain, COLORS, lec)
    validate(fig)
    bars = fig.data[0]
    assert bars.type == "bar" and np.allclose(bars.y, drain)
    assert list(bars.text) == ["23.9 ms", "2.67 s", "18.3 min", "23.4 h"]
    assert list(fig.layout.xaxis.ticktext) == ["HBM", "DDR", "flash", "disk"]
    diam = fig.data[1]
    assert len(diam.x) == 3                                                  # the tier without a figure has none
    # The DDR range 1–10 s: the diamond at √10 s with the error bar reaching 1 and 10 s.
    assert diam.y[1] == pytest.approx(np.sqrt(10))
    assert diam.y[1] + diam.error_y.array[1] == pytest.approx(10) and diam.y[1] - diam.error_y.arrayminus[1] == 1
    assert list(diam.x) == [0.4, 1.4, 2.4]                                   # beside, not on, the bars
    assert fig.layout.yaxis.type == "log" and "[s" in fig.layout.yaxis.title.text
    assert 10 ** fig.layout.yaxis.range[1] > max(drain) and 10 ** fig.layout.yaxis.range[0] < min(drain)


def test_request_vs_hit_stacks_the_parts():
    h = np.linspace(0, 1, 11)
    parts = {"prefill": 60 * (1 - h), "cache": 0.5 * h, "decode": np.full(h.shape, 40.0)}
    lst = 100 * (1 - 0.9 * h * 0.8)
    fig = fig_tiers.request_vs_hit(h, parts, lst, h_now=0.9, total_now_pct=46.45, list_name="Opus")
    validate(fig)
    stacked = [t for t in fig.data if t.stackgroup == "cost"]
    assert [t.name.split()[0] for t in stacked] == ["decode", "prefill", "holding"]
    total = next(t for t in fig.data if t.name == "total on the roofline")
    assert np.allclose(total.y, 60 * (1 - h) + 0.5 * h + 40)
    assert np.allclose(total.x, 100 * h)                                     # x in % of prompt tokens
    assert next(t for t in fig.data if t.name == "Opus list price").line.dash == "dash"
    now = next(t for t in fig.data if t.name.startswith("now"))
    assert now.x[0] == pytest.approx(90) and now.y[0] == pytest.approx(46.45)
    assert "[%" in fig.layout.xaxis.title.text and "[%" in fig.layout.yaxis.title.text
    assert fig.layout.yaxis.range[1] >= 100
    # Without a provider: no list-price line.
    fig = fig_tiers.request_vs_hit(h, parts, None, h_now=0.0, total_now_pct=100.0)
    validate(fig)
    assert not any("list price" in (t.name or "") for t in fig.data)
