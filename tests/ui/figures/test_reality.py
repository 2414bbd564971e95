"""The Reality check page's figure builders, without Streamlit: traces, the chosen point, the no-speed line,
axes with units; every figure re-validated with plotly's full validation (`tests.ui.figures.checks.validate`)."""

import numpy as np
import pytest

from model import calibrate as cal
from model import presets
from tests.ui.figures.checks import validate
from ui.figures import reality as fig_reality
from ui.figures.batch import NOW_MARKER

HAND = cal.Terms(c=1e-4, m0=1e-2, m=1e-5, b_fit=500.0, a=1.0, chips=2.0)


def _curves():
    u = np.logspace(0, np.log10(99.0), 50)
    ideal = cal.at_speed(HAND, u)["tokens_per_s_per_chip"]
    real = cal.at_speed(HAND, u, 0.5, 0.5)["tokens_per_s_per_chip"]
    return u, ideal, real


def test_frontier_with_a_measured_point_and_a_point_without_speed():
    u, ideal, real = _curves()
    pts = [fig_reality.Point("run A", 20.0, 1200.0, 2000.0, selected=True),
           fig_reality.Point("run B (offline)", float("nan"), 3000.0, 5000.0)]
    unl = cal.frontier(HAND, np.array([500.0, 1000.0, 5000.0]))
    fig = fig_reality.frontier(u, ideal, tps_real=real, real_label="fitted", points=pts,
                               u_unlimited=unl["tokens_per_s_per_user"], tps_unlimited=unl["tokens_per_s_per_chip"])
    validate(fig)
    names = [t.name for t in fig.data]
    assert names[:3] == ["ideal if HBM held any batch", "ideal bound (MFU = BWU = 1)", "fitted"]
    assert np.allclose(np.asarray(fig.data[1].y, float), np.where(ideal > 0, ideal, np.nan), equal_nan=True)
    # The chosen point is the red "now" marker at its (speed, throughput).
    chosen = next(t for t in fig.data if t.name == "chosen measurement")
    assert list(chosen.x) == [20.0] and list(chosen.y) == [1200.0] and chosen.marker.color == NOW_MARKER["color"]
    assert "60 % of the bound" in chosen.hovertemplate and "run A" in chosen.hovertemplate
    # No speed published: a dotted line at its throughput, labelled at log10(y) on the log axis.
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert [s.y0 for s in lines] == [3000.0] and lines[0].line.dash == "dot"
    lab = next(a for a in fig.layout.annotations if "no speed published" in a.text)
    assert lab.y == pytest.approx(np.log10(3000.0)) and "60 % of the curve's top" in lab.text
    assert any(t.name == "other measurements of this setup (speed not published)" for t in fig.data)
    # Log axes with units; the y range holds every curve point and the measurement.
    assert fig.layout.xaxis.type == "log" and "[tok/s]" in fig.layout.xaxis.title.text
    assert fig.layout.yaxis.type == "log" and "[tok/s]" in fig.layout.yaxis.title.text
    lo, hi = (10 ** v for v in fig.layout.yaxis.range)
    assert lo <= 1200 and hi >= np.nanmax(ideal)


def test_zero_bounds_are_gaps_on_the_log_axis():
    u = np.array([10.0, 50.0, 200.0])                # 200 tok/s/user is faster than one sequence allows
    ideal = cal.at_speed(HAND, u)["tokens_per_s_per_chip"]
    assert ideal[-1] == 0
    fig = fig_reality.frontier(u, ideal)
    validate(fig)
    y = np.asarray(fig.data[0].y, float)
    assert np.isnan(y[-1]) and np.all(y[:2] > 0)
    assert len(fig.data) == 1                        # no optional curves, no points


def test_efficiency_strip_rows_colours_and_the_chosen_one():
    groups = ["NVIDIA", "NVIDIA", "LMSYS", "DeepSeek"]
    names = ["a", "b", "c", "d"]
    eff = np.array([0.2, 0.5, 0.3, 0.41])
    sel = np.array([True, False, True, True])
    fig = fig_reality.efficiency_strip(groups, names, eff, sel, current=3)
    validate(fig)
    assert list(fig.layout.yaxis.ticktext) == ["NVIDIA", "LMSYS", "DeepSeek"]
    assert fig.layout.showlegend is False
    nv = [t for t in fig.data if (t.name or "").startswith("NVIDIA")]
    assert [t.name for t in nv] == ["NVIDIA", "NVIDIA (not selected)"]
    assert list(nv[0].x) == [20.0] and list(nv[1].x) == [50.0] and nv[1].marker.color != nv[0].marker.color
    cur = next(t for t in fig.data if t.name == "chosen measurement")
    assert list(cur.x) == [pytest.approx(41.0)] and abs(cur.y[0] - 2) <= 0.25       # DeepSeek is row 2
    assert [s.x0 for s in fig.layout.shapes if s.type == "line"] == [100.0]          # the ideal bound
    assert fig.layout.xaxis.type == "log" and "[%]" in fig.layout.xaxis.title.text
    assert "100 %" in list(fig.layout.xaxis.ticktext)
    lo, hi = (10 ** v for v in fig.layout.xaxis.range)
    assert lo <= 20 and hi >= 100


def test_efficiency_strip_rows_are_tighter_when_there_are_many_publishers():
    """Up to 10 rows 80 px each; more (twenty publishers) 52 px each, so the strip stays about a screen tall."""
    def height(n_groups: int) -> float:
        groups = [f"p{i}" for i in range(n_groups)]
        return fig_reality.efficiency_strip(groups, groups, np.full(n_groups, 0.3), np.ones(n_groups, bool),
                                            None).layout.height
    assert height(3) == 390 and height(10) == 150 + 80 * 10 and height(20) == 150 + 52 * 20


def test_builders_validate_on_the_real_measurements():
    items = presets.measurement_presets()
    c = cal.check(items)
    keys = list(c.keys)
    k = "sglang-deepseek-h100-decode"
    t = cal.terms(items[k])
    u_top, u_max = cal.speed_range(t)
    u = np.logspace(np.log10(u_top / 4), np.log10(u_max), 100)
    i = keys.index(k)
    fig = fig_reality.frontier(u, cal.at_speed(t, u)["tokens_per_s_per_chip"],
                               points=[fig_reality.Point(k, float(c.speed[i]), float(c.measured[i]),
                                                         float(c.ideal[i]), True)])
    validate(fig)
    fig = fig_reality.efficiency_strip([items[kk].publisher for kk in keys], keys, c.efficiency,
                                       np.ones(len(keys), bool), i)
    validate(fig)
    assert sum(len(tr.x) for tr in fig.data if tr.name != "chosen measurement") == len(keys)


def test_held_out_error_bars_print_their_values():
    fig = fig_reality.held_out_error(["k5", "model", "in-sample"], [13.8, 15.8, 13.6], [41.5, 43.3, 40.8])
    validate(fig)
    med, p90 = fig.data
    assert list(med.customdata) == ["a random fifth", "one model", "none (in-sample)"]
    assert list(med.x) == ["a fifth<br>(k5)", "a<br>model", "in-<br>sample"] and list(p90.y) == [41.5, 43.3, 40.8]
    assert list(med.text) == ["13.8", "15.8", "13.6"] and fig.layout.barmode == "group"
    assert fig.layout.yaxis.range[1] >= 43.3 and "[%]" in fig.layout.yaxis.title.text


def test_held_out_strip_orders_groups_by_median_and_shades_the_band():
    groups = ["a", "a", "b", "b", "c"]
    ratio = np.array([2.0, 1.8, 0.5, 0.7, 1.0])
    fig = fig_reality.held_out_strip(groups, list("vwxyz"), ratio, (0.7, 1.4), labels={"a": "Alpha"}, current=4)
    validate(fig)
    assert list(fig.layout.yaxis.ticktext) == ["b (2)", "c (1)", "Alpha (2)"]          # medians 0.6, 1, 1.9
    med = next(t for t in fig.data if t.name == "the group's median")
    assert list(med.x) == [0.6, 1.0, 1.9] and list(med.y) == [0, 1, 2]
    rect = next(s for s in fig.layout.shapes if s.type == "rect")
    assert (rect.x0, rect.x1) == (0.7, 1.4)
    dots = next(t for t in fig.data if t.name == "a measurement, held out")
    assert np.allclose(np.round(dots.y), [2, 2, 0, 0, 1])          # each dot in its group's row (± jitter)
    chosen = next(t for t in fig.data if t.name == "chosen measurement")
    assert list(chosen.x) == [1.0]


def test_predicted_vs_measured_draws_the_band_a_ratio_gives():
    fig = fig_reality.predicted_vs_measured(np.array([100.0, 400.0]), np.array([120.0, 300.0]), ["p", "q"],
                                            (0.7, 1.4), fitted=np.array([90.0, 410.0]))
    validate(fig)
    lower, upper = fig.data[0], fig.data[1]
    # predicted ÷ measured in [0.7, 1.4]: predicted between 0.7 × measured and 1.4 × measured
    assert np.allclose(np.asarray(lower.y) / np.asarray(lower.x), 0.7) and upper.fill == "tonexty"
    assert np.allclose(np.asarray(upper.y) / np.asarray(upper.x), 1.4)
    pred = next(t for t in fig.data if t.name == "predicted by the built-in fit (no refit)")
    assert list(pred.y) == [120.0, 300.0]
    assert "[tok/s]" in fig.layout.xaxis.title.text and "[tok/s]" in fig.layout.yaxis.title.text
