"""The Pipelining page's figure builders, without Streamlit: traces, the highlighted P, lines, axes.

Every figure is also re-validated with plotly's full validation (`tests.ui.figures.checks.validate`,
i.e. `go.Figure(fig.to_dict())` with no key changed), since `ui.figures.plot.Spec` skips it at run time.
"""

import numpy as np
import pytest

from model import Deployment, Precision, System
from model.cluster import pipeline, pipeline_cut_ratio, training_bubble_fraction
from tests.ui.figures.checks import validate
from ui.elements import export
from ui.figures import pipeline as fig_pipeline
from ui.figures.batch import NOW_MARKER

STAGES = np.array([1.0, 2.0, 4.0, 8.0, 16.0])


def _bars(p_now=4.0, hbm=80.0):
    w = 141.2 / (8 * STAGES)
    kv = np.full(STAGES.shape, 21.5)
    return fig_pipeline.memory_bars(STAGES, w, kv, hbm_gb=hbm, p_now=p_now), w, kv


def test_memory_bars_stack_weights_and_kv_with_the_current_p_outlined():
    fig, w, kv = _bars()
    validate(fig)
    bars = [t for t in fig.data if t.type == "bar"]
    assert [t.name.split()[0] for t in bars] == ["weights", "KV"]
    assert list(bars[0].x) == ["1", "2", "4", "8", "16"]
    assert np.allclose(bars[0].y, w) and np.allclose(bars[1].y, kv)
    assert fig.layout.barmode == "stack"
    # Only the current P's bars are outlined (both parts), in the current-point colour.
    for t in bars:
        assert list(t.marker.line.width) == [0, 0, 4, 0, 0]
        assert t.marker.line.color == NOW_MARKER["color"]
    # The label sits on the current bar: category index 2, at the stack's top.
    lab = next(a for a in fig.layout.annotations if a.text.startswith("current P"))
    assert lab.text == "current P = 4" and lab.x == 2 and lab.y == pytest.approx(w[2] + kv[2])
    # HBM capacity: a horizontal line at 80 GB, named in the legend.
    hl = [s for s in fig.layout.shapes if s.type == "line" and s.y0 == s.y1]
    assert [s.y0 for s in hl] == [80.0]
    assert any(t.name == "HBM capacity per chip" for t in fig.data)
    assert fig.layout.xaxis.type == "category" and "P" in fig.layout.xaxis.title.text
    assert "[GB]" in fig.layout.yaxis.title.text and fig.layout.yaxis.type == "linear"
    assert fig.layout.yaxis.range[1] >= max(w + kv)


def test_memory_bars_without_the_current_p_and_over_hbm():
    fig, w, kv = _bars(p_now=3.0, hbm=10.0)         # 3 is not among the bars: nothing outlined
    validate(fig)
    assert all(list(t.marker.line.width) == [0] * 5 for t in fig.data if t.type == "bar")
    assert not any(a.text.startswith("current P") for a in fig.layout.annotations)
    assert fig.layout.yaxis.range[1] >= max(w + kv)  # the bars over HBM are not cut off


def test_latency_vs_stages_two_axes_and_the_current_point():
    P = np.array([1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0])
    lat = 11.7 + np.where(P > 1, P * 5.0, 0.0)
    tps = P * 64 / (lat / 1e3)
    fig = fig_pipeline.latency_vs_stages(P, lat, 11.7, tps, p_now=4.0, latency_now_ms=lat[3], tps_now=tps[3],
                                         hop_ms=5.0)
    validate(fig)
    names = [t.name for t in fig.data]
    assert names[:4] == ["stage times summed (no hops)", "per-token latency (hop 5 ms)",
                         "tokens/s of one replica (right axis)", "current P = 4"]
    assert np.allclose(fig.data[0].y, 11.7) and np.allclose(fig.data[1].y, lat)
    assert fig.data[2].yaxis == "y2" and np.allclose(fig.data[2].y, tps)
    # The current P: two dot shapes in the axes' domain (every range is set), a circle on the latency
    # (left axis) and a square on the throughput (right axis, y2), read back through the ranges as the
    # CSV does; the square's legend entry stays out of the legend.
    dots = [s for s in fig.layout.shapes if s.name == "now"]
    assert [(d.xref, d.yref) for d in dots] == [("x domain", "y domain"), ("x domain", "y2 domain")]
    assert [export.dot_value(fig.layout, d.xref, d.xanchor) for d in dots] == [4.0, 4.0]
    assert export.dot_value(fig.layout, "y domain", dots[0].yanchor) == pytest.approx(lat[3], rel=1e-9)
    assert export.dot_value(fig.layout, "y2 domain", dots[1].yanchor) == pytest.approx(tps[3], rel=1e-9)
    assert dots[0].path.startswith("M8.0,0 C") and dots[1].path == "M-8.0,-8.0 L8.0,-8.0 L8.0,8.0 L-8.0,8.0 Z"
    assert list(fig.data[3].x) == [None] and fig.data[3].showlegend is not False
    assert fig.data[4].name == "current P = 4, tok/s" and fig.data[4].showlegend is False
    rows = export.figure_frame(fig)
    assert rows[rows.trace == "current P = 4, tok/s"].y.item() == pytest.approx(tps[3], rel=1e-9)
    assert fig.layout.yaxis2.overlaying == "y" and fig.layout.yaxis2.side == "right"
    assert "[ms]" in fig.layout.yaxis.title.text and "[tok/s]" in fig.layout.yaxis2.title.text
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.tickvals) == list(P)


def test_cut_ratio_curves_threshold_and_current_point():
    L = np.arange(1, 62, dtype=float)
    lecture = pipeline_cut_ratio(8.0, 1.0, 8, L)
    preset = pipeline_cut_ratio(900e9, 50e9, 8, L)
    assert lecture[0] == pytest.approx(2.0)          # the lecture: (1/8)·2·8·1 = 2
    fig = fig_pipeline.cut_ratio_vs_layers(L, [("preset", preset, "#4C78A8", True),
                                               ("lecture", lecture, "#7F3C8D", False)],
                                           now=(61 / 4, float(pipeline_cut_ratio(900e9, 50e9, 8, 61 / 4))))
    validate(fig)
    assert [t.name for t in fig.data][:2] == ["preset", "lecture"]
    assert fig.data[0].line.width == 4 and fig.data[1].line.width == 2 and fig.data[1].line.dash == "dash"
    # The current point: a dot shape anchored in the axes' domain (both ranges are set), at x = 15.25 on
    # the linear [0, 62] and at its ratio on the log range; its legend entry a point-less trace.
    assert fig.data[2].name.startswith("current") and list(fig.data[2].x) == [None]
    dot = next(s for s in fig.layout.shapes if s.name == "now")
    assert (dot.xref, dot.yref) == ("x domain", "y domain") and dot.xanchor == pytest.approx(15.25 / 62)
    y0, y1 = fig.layout.yaxis.range
    assert dot.yanchor == pytest.approx((np.log10(50 / 900 * 2 * 8 * 15.25) - y0) / (y1 - y0))
    # The ≥ 1 line, and the region under it shaded.
    assert [s.y0 for s in fig.layout.shapes if s.type == "line"] == [1.0]
    rect = next(s for s in fig.layout.shapes if s.type == "rect")
    assert rect.y1 == 1.0 and rect.y0 < min(preset.min(), 1.0)
    # Log y with plain 1-2-5 tick labels that cover the whole range.
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.type == "linear"
    lo, hi = 10 ** fig.layout.yaxis.range[0], 10 ** fig.layout.yaxis.range[1]
    assert lo <= preset.min() and hi >= lecture.max()
    assert 1.0 in fig.layout.yaxis.tickvals and all(lo <= t <= hi for t in fig.layout.yaxis.tickvals)
    assert "layers per stage" in fig.layout.xaxis.title.text and "[×]" in fig.layout.yaxis.title.text


def test_cut_ratio_without_a_current_point_or_below_one():
    L = np.arange(1, 5, dtype=float)
    r = pipeline_cut_ratio(5.2e12, 3.125e9, 1, L)    # far below 1
    fig = fig_pipeline.cut_ratio_vs_layers(L, [("x", r, "#000", True)], now=None)
    validate(fig)
    assert len(fig.data) == 1
    assert 10 ** fig.layout.yaxis.range[0] <= r.min() and 10 ** fig.layout.yaxis.range[1] >= 1.0


def test_log_ticks_are_1_2_5_inside_the_range():
    assert fig_pipeline._log_ticks(0.45, 130) == [0.5, 1, 2, 5, 10, 20, 50, 100]
    assert fig_pipeline._log_ticks(0.9, 1.1) == [1.0]


def test_bubble_curves_per_p_the_current_one_bold_and_inference_at_zero():
    m = 2.0 ** np.arange(0, 10)
    stages = [2, 4, 8, 16]
    bub = training_bubble_fraction(np.array(stages, float)[:, None], m[None, :])
    fig = fig_pipeline.bubble_vs_microbatches(m, stages, bub, p_now=4, m_now=16, bubble_now=3 / 19)
    validate(fig)
    names = [t.name for t in fig.data]
    assert names == ["P = 2", "P = 4 (current)", "P = 8", "P = 16", "current m = 16"]
    assert fig.data[1].line.width == 4 and fig.data[1].line.color == NOW_MARKER["color"]
    assert np.allclose(fig.data[1].y, 100 * 3 / (m + 3))
    assert fig.data[-1].y[0] == pytest.approx(100 * 3 / 19)
    assert [s.y0 for s in fig.layout.shapes if s.type == "line"] == [0.0]
    assert any("inference" in a.text for a in fig.layout.annotations)
    assert "[%]" in fig.layout.yaxis.title.text and fig.layout.yaxis.range[1] == 100
    assert fig.layout.xaxis.type == "log"


def test_builders_validate_on_real_model_output(h100, llama70):
    """The page's path: one vectorised `pipeline` call feeds the bars and the latency chart."""
    s = System(h100, llama70, Precision(), Deployment(chips=8, pipeline_hop_s=0.002))
    P = np.array([1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0])
    pm = pipeline(s, 64, 8192, P)
    validate(fig_pipeline.memory_bars(P, pm.weight_bytes_per_chip / 1e9, pm.kv_bytes_per_chip / 1e9,
                                      hbm_gb=80.0, p_now=3))
    validate(fig_pipeline.latency_vs_stages(P, pm.latency_s * 1e3, float(pm.latency_s[0]) * 1e3, pm.tokens_per_s,
                                            p_now=3, latency_now_ms=float(pm.latency_s[2]) * 1e3,
                                            tps_now=float(pm.tokens_per_s[2]), hop_ms=2.0))
