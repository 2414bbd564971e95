"""The Context-limits page's figure builders, without Streamlit: traces, marks, bands, labels, axes.

Every figure is re-validated with plotly's full validation (`tests.ui.figures.checks.validate`).
"""

import numpy as np
import pytest

from tests.ui.figures.checks import validate, vline_xs
from ui.figures import context as fig_context
from ui.figures.context import Curve, Series, label_positions

T = np.geomspace(512, 1e8, 50)


def _cost(**kw):
    dense = 0.5 + T / 1e4
    curves = [Curve("dense attention (reads T)", dense, "#222"), Curve("reads f·T, f = 0.1", 0.5 + T / 1e5, "#4C78A8",
                                                                       "dash")]
    floors = [Curve("matmul cost alone (compute floor)", np.full(T.shape, 0.1), "#4C78A8", "dot", 2)]
    args = dict(floors=floors, markers=[("KV = compute (dense)", 1459.6, "#222"), ("off the chart", 1e12, "#333")],
                t_now=8192.0, usd_now=0.5 + 8192 / 1e4, nofit_from=20_000.0, band=(100e3, 200e3))
    args.update(kw)
    return fig_context.cost_vs_context(T, curves, **args)


def test_cost_vs_context_curves_floors_marks_and_shading():
    fig = _cost()
    validate(fig)
    names = [t.name for t in fig.data]
    assert names == ["matmul cost alone (compute floor)", "dense attention (reads T)", "reads f·T, f = 0.1",
                     "current T (dense)"]
    assert fig.data[1].line.width == 4 and fig.data[2].line.dash == "dash" and fig.data[0].line.dash == "dot"
    # a crossover inside the range is drawn as a vertical line; one outside is not
    assert vline_xs(fig) == [1459.6]
    rects = [(s.x0, s.x1) for s in fig.layout.shapes if s.type == "rect"]
    assert (100e3, 200e3) in rects                       # the 100–200k band
    assert (20_000.0, 1e8) in rects                      # does not fit from 20k to the end
    texts = [a.text for a in fig.layout.annotations]
    assert "batch does not fit in HBM" in texts and any(t.startswith("100–200k") for t in texts)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "(tokens)" in fig.layout.xaxis.title.text and "[$ per million" in fig.layout.yaxis.title.text
    # the y range covers every curve (log10 of 0.1 … 1e4)
    assert fig.layout.yaxis.range[0] <= -1 and fig.layout.yaxis.range[1] >= np.log10(0.5 + 1e4)
    # ticks at powers of ten on both axes (1k, 10k … on x): the curves span five decades
    assert (fig.layout.xaxis.dtick, fig.layout.xaxis.tickformat) == (1, "~s")
    assert fig.layout.yaxis.dtick == 1


def test_cost_vs_context_everything_fits():
    fig = _cost(nofit_from=None, band=None)
    validate(fig)
    assert not [s for s in fig.layout.shapes if s.type == "rect"]


def _series(labels=True):
    y_ref = np.array([319e3, 165e3, 87e3])
    return [Series("lecture reference", y_ref, "#7F3C8D", "diamond", labels=labels,
                   curve_x=np.geomspace(100, 700, 20), curve_y=2e11 / (np.geomspace(100, 700, 20) * 4096)),
            Series("Llama 3.1 70B, dense", y_ref / 113, "#222")]


def test_crossover_by_chip_year_axis():
    fig = fig_context.crossover_by_chip(np.array([2020.83, 2022.17, 2024.33]), _series([True, False, True]),
                                        names=["A100 (2020-11)", "H100 (2022-03)", "TPU v6e (2024-05)"],
                                        short=["A100", "H100", "TPU v6e"], x_title="chip announced (year)",
                                        x_is_year=True, current=1, band=(100e3, 200e3), month=100e6)
    validate(fig)
    pts = next(t for t in fig.data if t.name == "lecture reference")
    assert list(pts.text) == ["A100", "", "TPU v6e"]          # only the chosen points are labelled
    assert list(pts.customdata) == ["A100 (2020-11)", "H100 (2022-03)", "TPU v6e (2024-05)"]
    assert fig.layout.xaxis.type == "linear" and fig.layout.yaxis.type == "log"
    assert "[tokens]" in fig.layout.yaxis.title.text
    # the current chip is ringed on both series and named in the legend
    rings = [t for t in fig.data if t.marker.symbol == "circle-open" and t.x[0] is not None]
    assert len(rings) == 2 and all(r.x[0] == 2022.17 for r in rings)
    assert any(t.name == "current chip: H100" for t in fig.data)
    # the band is a horizontal rectangle named in the legend, the month line a horizontal line at 100M
    assert any(s.type == "rect" and (s.y0, s.y1) == (100e3, 200e3) for s in fig.layout.shapes)
    assert any((t.name or "").startswith("100–200k") for t in fig.data)
    assert any(s.type == "line" and s.y0 == s.y1 == 100e6 for s in fig.layout.shapes)
    # no curves in year mode
    assert not [t for t in fig.data if t.mode == "lines" and t.x[0] is not None]


def test_crossover_by_chip_ratio_axis_draws_the_curves():
    x = np.array([153.0, 295.0, 560.0])
    fig = fig_context.crossover_by_chip(x, _series(), names=["a", "b", "c"], short=["A", "B", "C"],
                                        x_title="chip FLOP/s ÷ HBM bytes/s at bf16 [FLOP/B]", x_is_year=False,
                                        current=None, band=None)
    validate(fig)
    assert fig.layout.xaxis.type == "log" and "[FLOP/B]" in fig.layout.xaxis.title.text
    curves = [t for t in fig.data if t.mode == "lines"]
    assert len(curves) == 1 and curves[0].line.dash == "dot"
    assert all(lo <= v <= hi for v in fig.layout.xaxis.tickvals for lo, hi in [(153 / 1.2, 560 * 1.2)])
    assert not any(t.marker.symbol == "circle-open" for t in fig.data)


def test_label_positions_keep_neighbours_apart():
    x = np.array([2025.17, 2025.17, 2025.17, 2022.17])
    y = np.array([130e3, 157e3, 90e3, 165e3])
    pos = label_positions(x, y, [True, True, True, True], log_x=False)
    # same year: highest right, next left, then below; a lone point right
    assert pos == ["middle left", "middle right", "bottom center", "middle right"]
    assert label_positions(x, y, [True, False, True, True], log_x=False)[:3] == ["middle right", "middle right",
                                                                                 "middle left"]


def test_crossover_vs_fraction():
    f = np.geomspace(0.001, 1, 31)
    fig = fig_context.crossover_vs_fraction(
        f, [Curve("Llama 3.1 70B", 1459.6 / f, "#222"), Curve("lecture reference", 165e3 / f, "#7F3C8D")],
        f_now=0.1, now_values=[14_596.0, 1.65e6], sqrt_lines=[("√T rule: reference", 13.3e6, "#7F3C8D"),
                                                            ("√T rule: never", np.inf, "#222")],
        band=(100e3, 200e3), month=100e6)
    validate(fig)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    now = [t for t in fig.data if t.mode == "markers"]
    assert [t.y[0] for t in now] == [14_596.0, 1.65e6] and all(t.x[0] == 0.1 for t in now)
    hl = sorted(s.y0 for s in fig.layout.shapes if s.type == "line" and s.y0 == s.y1)
    assert hl == [13.3e6, 100e6]                               # the infinite √T line is left out
    assert 0.1 in vline_xs(fig)
    assert fig.layout.yaxis.range[1] >= np.log10(165e3 / 0.001)


@pytest.mark.parametrize("now", [[float("nan"), float("inf")], [1.0, 2.0]])
def test_crossover_vs_fraction_tolerates_missing_points(now):
    f = np.array([0.01, 0.1, 1.0])
    fig = fig_context.crossover_vs_fraction(f, [Curve("a", np.array([1e5, 1e4, 1e3]), "#222"),
                                                Curve("b", np.array([np.inf, np.inf, np.inf]), "#444")],
                                            f_now=0.1, now_values=now)
    validate(fig)


def test_ratio_by_chip_points_values_and_the_lectures_line():
    # The datasheet ratios of three chips (bf16 FLOP/s ÷ HBM B/s: 312e12/2.039e12 = 153, 989e12/3.35e12 = 295,
    # 918e12/1.64e12 = 560) against their years, the lecture's 300 as a dashed line.
    fig = fig_context.ratio_by_chip(np.array([2020.83, 2022.17, 2024.33]), np.array([153.0, 295.2, 559.8]),
                                    names=["A100 (2020-11)", "H100 (2022-03)", "TPU v6e (2024-05)"],
                                    short=["A100", "H100", "TPU v6e"], labelled=[True, True, False], current=1,
                                    claim=300.0, claim_text="lecture: ≈ 300", dtype="bf16")
    validate(fig)
    pts = next(t for t in fig.data if t.name.startswith("chip preset"))
    assert list(pts.y) == [153.0, 295.2, 559.8]
    # names and values where asked, and on the lowest and highest (TPU v6e, not asked for); the rest on hover
    assert list(pts.text) == ["A100 153", "H100 295", "TPU v6e 560"]
    fig2 = fig_context.ratio_by_chip(np.array([2020.83, 2022.17, 2023.9, 2024.33]), np.array([153.0, 295.2, 247.0,
                                                                                              559.8]),
                                     names=["a", "b", "c", "d"], short=["A100", "H100", "MI300X", "TPU v6e"],
                                     labelled=[False, False, False, False], current=None, claim=300.0,
                                     claim_text="lecture", dtype="bf16")
    assert list(next(t for t in fig2.data if t.name.startswith("chip preset")).text) == ["A100 153", "", "",
                                                                                         "TPU v6e 560"]
    assert list(next(t for t in fig2.data if t.name.startswith("chip preset")).customdata) == ["a", "b", "c", "d"]
    assert any(s.type == "line" and s.y0 == s.y1 == 300.0 and s.line.dash == "dash" for s in fig.layout.shapes)
    assert any(t.name == "lecture: ≈ 300" and t.line.dash == "dash" for t in fig.data)      # named in the legend
    ring = next(t for t in fig.data if t.name == "current chip: H100")
    assert ring.x[0] == 2022.17 and ring.y[0] == 295.2
    assert fig.layout.yaxis.type == "linear" and "[FLOP/B]" in fig.layout.yaxis.title.text
    assert "bf16" in fig.layout.yaxis.title.text
    assert fig.layout.yaxis.range[1] > 559.8 and fig.layout.yaxis.range[0] == 0.0
