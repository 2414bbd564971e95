"""ui/figures/batch.py builders as pure functions (no Streamlit)."""

import numpy as np
import pytest

from model import Deployment, Precision, System, decode_step, presets, system_balance_batch
from tests.ui.figures.checks import validate
from tests.ui.figures.label_boxes import boxes, overlaps
from ui.elements.export import dot_value
from ui.figures import batch as figures
from ui.figures.plot import FONT_SIZE
from ui.state.dials import BATCH_OPTIONS


def test_segments_split_runs_at_geometric_midpoints():
    segs = figures._segments(np.array([1, 2, 4, 8]), np.array(["weights", "weights", "compute", "compute"]))
    assert segs == [(1.0, np.sqrt(8), "weights"), (np.sqrt(8), 8.0, "compute")]


def test_split_fit_shares_the_boundary_point():
    y = np.array([1.0, 2, 3, 4])
    y_fit, y_no = figures.split_fit(y, np.array([True, True, False, False]))
    assert np.isnan(y_fit[2:]).all() and not np.isnan(y_fit[:2]).any()
    assert np.isnan(y_no[0]) and not np.isnan(y_no[1:]).any()       # continuous across the boundary
    y_fit, y_no = figures.split_fit(y, True)                           # a scalar broadcasts
    assert list(y_fit) == list(y) and np.isnan(y_no).all()


def test_curve_vs_batch_marks_b_star_current_batch_and_fit(sys70):
    grid = np.geomspace(1, 65536, 65)
    r = decode_step(sys70, grid, 8192)
    b_star = float(system_balance_batch(sys70, 0))
    fig = figures.curve_vs_batch(grid, r.t_step_s * 1e3, r.fits, r.bound, name="latency", unit="ms", title="t",
                                 y_title="time per step [ms]", b_star=b_star, b_now=64.0, y_now=1.0)
    names = [t.name for t in fig.data]
    assert "latency" in names and "does not fit in HBM" in names and "B = 64" in names
    # The current batch: a 16 px circle shape at (64, 1.0) (a moved shape redraws alone, a moved trace
    # redraws the chart), its legend entry a point-less trace in the same red.
    legend = next(t for t in fig.data if t.name == "B = 64")
    assert list(legend.x) == [None] and legend.marker.color == figures.NOW_MARKER["color"]
    dot = [s for s in fig.layout.shapes if s.name == "now"]
    # x anchored in the x domain (the batch axis has a set range, so a dot at either end stays whole).
    assert len(dot) == 1 and dot[0].xref == "x domain" and dot[0].yref == "y"
    assert (dot_value(fig.layout, dot[0].xref, dot[0].xanchor), dot[0].yanchor) == (64.0, 1.0)
    assert dot[0].xsizemode == dot[0].ysizemode == "pixel" and dot[0].fillcolor == figures.NOW_MARKER["color"]
    # the path: a circle of radius 8 px around the anchor (Bézier quarters start at (8, 0), (0, 8), …)
    assert dot[0].path.startswith("M8.0,0 C") and " 0,8.0 " in dot[0].path and " -8.0,0 " in dot[0].path
    # Room for the dot at the curve's ends: invisible 16 px markers at the extreme points of the curve.
    room = next(t for t in fig.data if t.mode == "markers" and t.marker.opacity == 0)
    y = r.t_step_s * 1e3
    assert min(room.x) == 1 and max(room.x) == 65536 and max(room.y) == y.max() and min(room.y) == y.min()
    assert room.hoverinfo == "skip" and room.showlegend is False
    vlines = [s for s in fig.layout.shapes if s.type == "line"]
    assert any(abs(s.x0 - b_star) < 1e-9 for s in vlines)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "[ms]" in fig.layout.yaxis.title.text and "batch" in fig.layout.xaxis.title.text
    # One shaded rectangle per run of the same bound.
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(rects) == len(figures._segments(grid, r.bound))


def test_step_breakdown_stacks_terms():
    fig = figures.step_breakdown({"matmul": 1e-3, "weights": 2e-3, "kv": 3e-3}, "lecture")
    assert [t.name for t in fig.data] == ["matmul", "weights", "kv"]
    kv = next(t for t in fig.data if t.name == "kv")
    assert list(kv.x) == [0.0, 3.0, 0.0]          # ms, on the memory side only
    assert fig.layout.barmode == "stack"


def test_step_breakdown_legend_clears_the_axis_title():
    """The legend hangs from the figure's bottom edge (container coordinates), and the bottom margin
    holds the x tick labels, the x-axis title and two legend rows (a phone-width legend wraps):
    at y = -0.2 of the short plot (the old layout) it lay on the axis title."""
    fig = figures.step_breakdown({"matmul": 1e-3, "attention": 1e-4, "weights": 2e-3, "kv": 3e-3, "comm": 1e-4,
                                  "hops": 1e-4}, "per-phase")
    lg = fig.layout.legend
    assert (lg.yref, lg.y, lg.yanchor, lg.orientation) == ("container", 0, "bottom", "h")
    # Line heights ≈ 1.3 × font size; Plotly's legend rows are ≈ font + 10 px; the axis title sits
    # ≈ 10 px under the tick labels.  14 px ticks, 17 px title, 14 px legend text (ui.figures.plot.FONT_SIZE).
    tick, title, row = 1.3 * (FONT_SIZE - 3), 1.3 * FONT_SIZE, (FONT_SIZE - 3) + 10
    assert fig.layout.margin.b >= tick + 10 + title + 2 * row
    assert fig.layout.height - fig.layout.margin.t - fig.layout.margin.b >= 3 * 50   # three readable bars


def test_pareto_has_a_point_per_fitting_batch(sys70):
    grid = np.geomspace(1, 4096, 13)
    r = decode_step(sys70, grid, 8192)
    fig = figures.pareto(r.tokens_per_s_per_user, r.tokens_per_s_per_chip, grid, r.fits, (1.0, 2.0, 64.0))
    fit_trace = fig.data[0]
    assert len(fit_trace.x) == int(r.fits.sum())
    assert "tokens/s per user" in fig.layout.xaxis.title.text
    # The current batch: a dot shape at (1, 2) with its legend entry; room markers at the frontier's
    # extreme points (fitting or not) so that the dot is never clipped.
    dot = [s for s in fig.layout.shapes if s.name == "now"]
    assert len(dot) == 1 and (dot[0].xanchor, dot[0].yanchor) == (1.0, 2.0) and dot[0].xref == "x"
    assert any(t.name == "B = 64" and list(t.x) == [None] for t in fig.data)
    room = next(t for t in fig.data if t.meta == "now-room")
    assert max(room.x) == r.tokens_per_s_per_user.max() and min(room.y) == r.tokens_per_s_per_chip.min()


def test_curve_vs_batch_draws_a_predicted_curve_and_its_band_beside_the_ideal(sys70):
    grid = np.geomspace(1, 4096, 25)
    r = decode_step(sys70, grid, 8192)
    y = r.t_step_s * 1e3
    pred = figures.Prediction(2 * y, 1.5 * y, 3 * y)               # any arrays: the builder draws what it is given
    fig = figures.curve_vs_batch(grid, y, r.fits, r.bound, name=figures.IDEAL_NAME, unit="ms", title="t",
                                 y_title="time per step [ms]", b_star=None, b_now=64.0, y_now=2 * y[12],
                                 predicted=pred, dot_on_predicted=True)
    validate(fig)
    by = {t.name: t for t in fig.data}
    lower, upper, curve = (by[f"{figures.BAND_NAME} (lower edge)"], by[figures.BAND_NAME], by[figures.PREDICTED_NAME])
    names = [t.name for t in fig.data]
    # The band: its lower edge, then the upper edge filled down to it (fill "tonexty" fills to the trace before).
    assert names.index(lower.name) + 1 == names.index(upper.name) and upper.fill == "tonexty"
    assert np.allclose(lower.y, 1.5 * y) and np.allclose(upper.y, 3 * y) and np.allclose(curve.y, 2 * y)
    assert lower.showlegend is False and lower.legendgroup == upper.legendgroup       # one legend entry, both edges
    assert curve.line.dash == "dash" and curve.line.color == upper.line.color == figures.PREDICTED_COLOR
    # The legend says which is which, the ideal first.
    assert by[figures.IDEAL_NAME].legendrank < curve.legendrank < upper.legendrank
    # The dot sits on the predicted curve, with room kept along it.
    dot = next(s for s in fig.layout.shapes if s.name == "now")
    assert dot.yanchor == 2 * y[12]
    room = next(t for t in fig.data if t.meta == "now-room")
    assert max(room.y) == 2 * y.max()
    # Without a prediction: none of its traces.
    plain = figures.curve_vs_batch(grid, y, r.fits, r.bound, name="t", unit="ms", title="t", y_title="[ms]",
                                   b_star=None, b_now=64.0, y_now=1.0)
    assert not {figures.PREDICTED_NAME, figures.BAND_NAME} & {t.name for t in plain.data}


# ---- the batch charts at the page's defaults: the axis ends at the grid, the labels at the top clear each other

@pytest.fixture
def defaults():
    """The Batch page at today's defaults: GB200 NVL72 (C = 72) × DeepSeek-V3 at fp8, T = 2k, B = 4096, where
    B*(T) ≈ 14,448 stands between the KV-fetch-bound and compute-bound regions near the axis's right end."""
    s = System(presets.get("hardware", "gb200"), presets.get("model", "deepseek-v3"),
               Precision(weights="fp8", kv="fp8", compute="fp8"), Deployment(chips=72))
    grid = np.unique(np.concatenate([np.geomspace(1, 65536, 97), BATCH_OPTIONS, [4096]]))   # as views/batch.py
    r = decode_step(s, grid, 2048)
    i = int(np.searchsorted(grid, 4096))
    return figures.curve_vs_batch(grid, r.t_step_s * 1e3, r.fits, r.bound, name="ideal roofline", unit="ms",
                                  title="Latency per token against batch", y_title="time per step [ms]",
                                  b_star=float(system_balance_batch(s, 2048)), b_now=4096.0,
                                  y_now=float(r.t_step_s[i] * 1e3), b_star_no_kv=float(system_balance_batch(s, 0)))


def test_the_batch_axis_ends_where_the_grid_does(defaults):
    """The axis spans the grid, 1 … 65,536: autoranged, plotly padded it for the dot's room markers and widened
    it for "compute-bound" near the right end, to past 100k.  The dot, anchored in the x domain, is still at B."""
    assert list(defaults.layout.xaxis.range) == pytest.approx([0.0, np.log10(65536)], abs=1e-6)
    dot = next(s for s in defaults.layout.shapes if s.name == "now")
    assert dot_value(defaults.layout, dot.xref, dot.xanchor) == 4096.0
    # A label anchored at the axis's end lies inside it (plotly hides one anchored past the end).
    lo, hi = defaults.layout.xaxis.range
    assert all(lo <= a.x <= hi for a in defaults.layout.annotations if a.xref == "x")


def test_region_names_and_b_star_labels_clear_each_other_at_the_defaults(defaults):
    """"KV-fetch-bound", "B*(T) = 14,448" and "compute-bound" crowded the top of the chart: each is in a row of
    its own where it would meet another (label_boxes: a phone's widths)."""
    plot_px = 540 - 60 - figures.CURVE_MARGIN_B
    bxs = boxes(defaults, defaults.layout.xaxis.range, None, plot_px)
    assert {"KV-fetch-bound", "compute-bound", "weight-fetch-bound", "B*(T) = 14,448",
            "B* = 5,667 (KV ignored)"} <= set(bxs)
    assert overlaps(bxs) == []
