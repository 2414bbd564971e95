"""The Training tokens page's figure builders, without Streamlit: traces, marked points, axes, ranges.

Every figure is re-validated with plotly's full validation (`tests.ui.figures.checks.validate`), since
`ui.figures.plot.Spec` skips it at run time.
"""

import numpy as np
import pytest

from model.training import (
    chinchilla_loss,
    chinchilla_optimal_size,
    cost_optimal_size,
    heuristic_size,
    overtrain,
    size_for_quality,
)
from tests.ui.figures.checks import validate
from ui.figures import training as fig_training
from ui.figures.batch import NOW_MARKER

D_INF = 2.592e14


def test_tokens_bars_log_axis_labels_and_costs_in_the_hover():
    tokens = np.array([2e12, D_INF, 1.728e14, D_INF])
    flops = np.array([np.nan, 1.5552e26, 1.5552e26, 1.5552e26])
    fig = fig_training.tokens_bars(["Chinchilla<br>20·N", "pretraining<br>D_pre", "RL<br>D_RL", "inference<br>D_inf"],
                                   tokens, flops, ["#111111", "#222222", "#333333", "#444444"], title="Tokens")
    validate(fig)
    (bar,) = fig.data
    assert bar.type == "bar" and np.allclose(bar.y, tokens)
    assert list(bar.text) == ["2T tokens", "259T tokens", "173T tokens", "259T tokens"]
    assert [c[0] for c in bar.customdata] == ["a reference, not a cost"] + ["1.56e+26 FLOP"] * 3
    assert bar.customdata[1][1] == "pretraining D_pre"             # hover names without the line break
    assert fig.layout.yaxis.type == "log" and "[tokens]" in fig.layout.yaxis.title.text
    lo, hi = fig.layout.yaxis.range
    assert lo < np.log10(2e12) and hi > np.log10(D_INF)             # every bar and its label fit


def test_overtrain_vs_rate_one_line_per_na_the_current_bold_and_marked():
    rates = np.geomspace(1e6, 1e11, 51)
    na = [10e9, 100e9, 1e12]
    o = overtrain(np.array(na)[:, None], rates[None, :], 60, models=10)
    fig = fig_training.overtrain_vs_rate(rates, o.overtrain_factor, na, na_now=100e9, now=(5e8, 129.6))
    validate(fig)
    lines = [t for t in fig.data if t.mode == "lines"]
    assert [t.name for t in lines] == ["N_active = 10B", "N_active = 100B (current)", "N_active = 1T"]
    assert [t.line.width for t in lines] == [2, 4, 2]
    assert np.allclose(lines[1].y, o.overtrain_factor[1])
    cur = next(t for t in fig.data if t.name.startswith("current"))
    assert cur.x[0] == 5e8 and cur.y[0] == 129.6 and cur.marker.color == NOW_MARKER["color"]
    assert [s.y0 for s in fig.layout.shapes if s.type == "line"] == [1.0]      # Chinchilla's 1×
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "[tokens/s]" in fig.layout.xaxis.title.text and "[×]" in fig.layout.yaxis.title.text
    lo, hi = fig.layout.yaxis.range
    assert lo < 0 < hi                                                   # the 1× line is on the chart


def _cost_case(d_inf=D_INF):
    L = float(chinchilla_loss(100e9, D_INF))
    opt = cost_optimal_size(L, d_inf)
    h = heuristic_size(L, d_inf)
    c = chinchilla_optimal_size(L)
    grid = np.geomspace(30e9, 3e12, 200)
    sq = size_for_quality(L, d_inf, np.concatenate([grid, [float(h.params), float(c.params)]]))
    pts = [("cost-optimal N*", float(opt.params), float(opt.total_flops), "#D62728", "star"),
           ("heuristic: equal costs", float(h.params), float(sq.total_flops[-2]), "#F58518", "diamond-open"),
           ("Chinchilla-optimal (fit)", float(c.params), float(sq.total_flops[-1]), "#7F7F7F", "square")]
    return grid, sq, pts


def test_cost_vs_size_lines_points_and_the_optimum_drawn_last():
    grid, sq, pts = _cost_case()
    g = len(grid)
    fig = fig_training.cost_vs_size(grid, sq.pretrain_flops[:g], sq.inference_flops[:g], sq.total_flops[:g], points=pts)
    validate(fig)
    names = [t.name for t in fig.data]
    assert names[:3] == ["pretraining  6·N·D(N)", "inference  2·ineff·N·D_inf", "total"]
    assert names[-1] == "cost-optimal N*"                          # on top of the heuristic's ring beside it
    assert np.allclose(fig.data[2].y, sq.total_flops[:g])
    star = fig.data[-1]
    assert star.marker.symbol == "star" and star.x[0] == pts[0][1]
    ring = next(t for t in fig.data if t.name.startswith("heuristic"))
    assert ring.marker.symbol == "diamond-open" and ring.marker.line.width == 3
    # the optimum is the lowest total on the chart (the grid cannot beat the solver)
    assert star.y[0] <= float(np.min(sq.total_flops[:g])) * (1 + 1e-9)
    lo, hi = fig.layout.yaxis.range
    assert all(lo < np.log10(p[2]) < hi for p in pts)
    assert "[FLOP" in fig.layout.yaxis.title.text and fig.layout.xaxis.type == "log"


def test_cost_vs_size_skips_an_unreachable_point():
    grid, sq, pts = _cost_case()
    g = len(grid)
    pts = [*pts, ("nowhere", float("inf"), float("nan"), "#000000", "circle")]
    fig = fig_training.cost_vs_size(grid, sq.pretrain_flops[:g], sq.inference_flops[:g], sq.total_flops[:g], points=pts)
    validate(fig)
    assert "nowhere" not in [t.name for t in fig.data]


def test_split_vs_volume_two_axes_shading_and_current_point():
    L = float(chinchilla_loss(100e9, D_INF))
    d = np.geomspace(1e11, 1e17, 61)
    opt = cost_optimal_size(L, d)
    h = heuristic_size(L, d)
    c = chinchilla_optimal_size(L)
    under = ~(np.isfinite(h.params) & (h.params <= c.params))
    exc = np.where(~under, h.total_flops / opt.total_flops - 1, np.nan)
    fig = fig_training.split_vs_volume(d, opt.pretrain_flops / opt.total_flops, exc, under_below=float(d[under].max()),
                                       now=(D_INF, 0.455, 0.0072))
    validate(fig)
    share = next(t for t in fig.data if t.name.startswith("pretraining share"))
    assert np.allclose(share.y, 100 * opt.pretrain_flops / opt.total_flops)
    ex = next(t for t in fig.data if t.name.startswith("heuristic's extra"))
    assert ex.yaxis == "y2" and np.isnan(ex.y[0]) and np.nanmax(ex.y) < 100     # ≤ 2× on the over-trained side
    assert [s.y0 for s in fig.layout.shapes if s.type == "line"] == [50.0]      # the equal split
    rect = next(s for s in fig.layout.shapes if s.type == "rect")
    assert rect.x0 == pytest.approx(1e11) and rect.x1 == pytest.approx(float(d[under].max()))
    cur = [t for t in fig.data if t.x is not None and len(t.x) == 1]
    assert sorted(float(t.y[0]) for t in cur) == pytest.approx([0.72, 45.5])
    assert "[%]" in fig.layout.yaxis.title.text and "[%]" in fig.layout.yaxis2.title.text
    assert fig.layout.yaxis.range == (0.0, 100.0) and fig.layout.yaxis2.range[1] >= np.nanmax(ex.y)
    assert fig.layout.xaxis.exponentformat == "power" and fig.layout.xaxis.dtick == 1    # 6 decades: each one


def test_split_vs_volume_without_shading_or_heuristic_point():
    d = np.geomspace(1e3, 1e17, 11)
    fig = fig_training.split_vs_volume(d, np.linspace(0.9, 0.1, 11), np.full(11, np.nan), under_below=None,
                                       now=(1e14, 0.5, float("nan")))
    validate(fig)
    assert fig.layout.xaxis.dtick == 2                          # 14 decades: every other one, labels apart
    assert not [s for s in fig.layout.shapes if s.type == "rect"]
    assert len([t for t in fig.data if t.x is not None and len(t.x) == 1]) == 1
    assert fig.layout.yaxis2.range[1] >= 10                     # a readable axis even with nothing on it
