"""ui/figures/fast_mode.py: the Fast Mode page's two-panel figure, as a pure function (no Streamlit)."""

import itertools
import re

import numpy as np
import pytest

from model import decode_step, system_balance_batch
from model.economics import fast_mode_batches
from tests.ui.figures.checks import validate, vline_xs
from tests.ui.figures.label_boxes import boxes, overlaps
from ui.figures import fast_mode as ffm
from ui.figures import plot
from ui.figures.batch import Prediction
from ui.figures.plot import NARROW_META


@pytest.fixture
def setup(sys70):
    """H100 × Llama-70B on 8 chips at 1k context: the quote solves there (and without KV)."""
    grid = np.geomspace(1, 65536, 97)
    T = 1024.0
    r = decode_step(sys70, grid[None, :], np.array([[T], [0.0]]))
    fm = fast_mode_batches(sys70, 2.5, 6.0, T)
    ref = fast_mode_batches(sys70, 2.5, 6.0, 0.0)
    assert fm.batch_standard is not None and ref.batch_standard is not None
    points = [("standard", fm.batch_standard, fm.t_step_standard_s, fm.usd_per_mtok_standard, ffm.STANDARD_COLOR),
              ("fast", fm.batch_fast, fm.t_step_fast_s, fm.usd_per_mtok_fast, ffm.FAST_COLOR)]
    ref_points = [("standard, no KV", ref.batch_standard, ref.t_step_standard_s, ref.usd_per_mtok_standard, "#00f"),
                  ("fast, no KV", ref.batch_fast, ref.t_step_fast_s, ref.usd_per_mtok_fast, "#f00")]
    floors = decode_step(sys70, np.array([1.0, 1e12]), T)
    b_star = float(system_balance_batch(sys70, T))
    fig = ffm.fast_mode_curves(grid, r.t_step_s[0], r.usd_per_mtok[0], r.fits[0], r.bound[0], points,
                               float(floors.t_weights_s[0]), float(floors.usd_per_mtok[1]), b_star,
                               curve_name="roofline at T = 1k",
                               reference=("no KV (T = 0)", r.t_step_s[1], r.usd_per_mtok[1]),
                               reference_points=ref_points)
    return {"fig": fig, "fm": fm, "ref": ref, "floors": floors, "b_star": b_star, "r": r, "grid": grid}


def _traces(fig, name, xaxis):
    return [t for t in fig.data if t.name == name and t.xaxis == xaxis]


def test_trace_names_and_count(setup):
    fig, fm = setup["fig"], setup["fm"]
    names = [t.name for t in fig.data]
    std, fast = f"standard: B = {ffm.batch_text(fm.batch_standard)}", f"fast: B = {ffm.batch_text(fm.batch_fast)}"
    # Per panel: reference curve, roofline, does-not-fit part, 2 hollow reference points, 2 operating points.
    assert len(fig.data) == 2 * 7
    for n in ("no KV (T = 0)", "roofline at T = 1k", "does not fit in HBM", "standard, no KV", "fast, no KV",
              std, fast):
        assert names.count(n) == 2
        assert sum(bool(t.showlegend) for t in fig.data if t.name == n) == 1     # one legend entry each


def test_operating_points_sit_at_their_batches_on_both_panels(setup):
    fig, fm = setup["fig"], setup["fm"]
    std = f"standard: B = {ffm.batch_text(fm.batch_standard)}"
    fast = f"fast: B = {ffm.batch_text(fm.batch_fast)}"
    (s1,), (s2,) = _traces(fig, std, "x"), _traces(fig, std, "x2")
    (f1,), (f2,) = _traces(fig, fast, "x"), _traces(fig, fast, "x2")
    assert list(s1.x) == list(s2.x) == [fm.batch_standard]
    assert list(f1.x) == list(f2.x) == [fm.batch_fast]
    # Left panel in ms, right panel in $/Mtok.
    assert s1.y[0] == pytest.approx(fm.t_step_standard_s * 1e3) and f1.y[0] == pytest.approx(fm.t_step_fast_s * 1e3)
    assert s2.y[0] == pytest.approx(fm.usd_per_mtok_standard) and f2.y[0] == pytest.approx(fm.usd_per_mtok_fast)
    # The fast point is left of (smaller batch) and below (quicker) the standard one, and dearer.
    assert f1.x[0] < s1.x[0] and f1.y[0] < s1.y[0] and f2.y[0] > s2.y[0]
    # Labels sit on the points (log axes: annotations take log10 of the data).
    labels = [a for a in fig.layout.annotations if a.text and a.text.startswith("<b>fast</b>")]
    assert {round(a.x, 9) for a in labels} == {round(np.log10(fm.batch_fast), 9)}
    assert len(labels) == 2


def test_hollow_reference_points_are_the_no_kv_closed_form(setup, sys70):
    fig, ref = setup["fig"], setup["ref"]
    b_star0 = float(system_balance_batch(sys70, 0.0))            # ≈ 989/3.35 ≈ 295 (bf16, dense)
    (s1,) = _traces(fig, "standard, no KV", "x")
    (f1,) = _traces(fig, "fast, no KV", "x")
    assert s1.x[0] == pytest.approx(2.5 * b_star0, rel=1e-6)       # B_std = S·B*
    assert f1.x[0] == pytest.approx(b_star0 / 6.0, rel=1e-6)       # B_fast = B*/Pm
    assert s1.marker.color == "white"                              # hollow
    assert s1.x[0] == ref.batch_standard


def test_floors_are_drawn_with_labels(setup):
    fig, floors = setup["fig"], setup["floors"]
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    lat_floor_ms = float(floors.t_weights_s[0]) * 1e3            # W/(C·bw) = 141.2 GB / (8 × 3.35 TB/s) ≈ 5.27 ms
    assert lat_floor_ms == pytest.approx(141.2e9 / (8 * 3.35e12) * 1e3, rel=1e-3)
    assert any(s.yref == "y" and s.y0 == pytest.approx(lat_floor_ms) and s.y1 == s.y0 for s in lines)
    cost_floor = float(floors.usd_per_mtok[1])
    assert any(s.yref == "y2" and s.y0 == pytest.approx(cost_floor) and s.y1 == s.y0 for s in lines)
    texts = [a.text for a in fig.layout.annotations]
    assert any("latency floor W/(C·bw)" in t and f"{lat_floor_ms:.3g} ms" in t for t in texts)
    assert any("slow-mode floor" in t for t in texts)
    # B* (with KV at 1k) marked on both panels.
    b_star = setup["b_star"]
    assert np.isfinite(b_star)
    assert sum(1 for s in lines if s.x0 == pytest.approx(b_star) and s.x1 == s.x0) == 2


def test_axes_are_log_with_units(setup):
    lay = setup["fig"].layout
    for ax in (lay.xaxis, lay.xaxis2, lay.yaxis, lay.yaxis2):
        assert ax.type == "log"
    assert "batch" in lay.xaxis.title.text and "batch" in lay.xaxis2.title.text
    assert "[ms]" in lay.yaxis.title.text
    assert "[$ per million output tokens]" in lay.yaxis2.title.text
    assert lay.yaxis2.tickprefix == "$"
    assert lay.yaxis.tickfont.size >= 15 and lay.xaxis.title.font.size >= 17   # readable on a projector
    # The y ranges hold every curve point that is drawn.
    r = setup["r"]
    lo, hi = lay.yaxis.range
    lat = np.log10(r.t_step_s * 1e3)
    assert lo < lat.min() and hi > lat.max()


def test_without_points_reference_or_bstar():
    grid = np.geomspace(1, 1024, 11)
    lat = np.full(grid.shape, 0.02)
    usd = 1.0 / grid
    fits = np.ones(grid.shape, bool)
    bound = np.array(["weights"] * grid.size)
    fig = ffm.fast_mode_curves(grid, lat, usd, fits, bound, [], 0.02, None, float("inf"))
    assert [t.name for t in fig.data] == ["roofline", "roofline"]     # no 'does not fit', no points
    assert not vline_xs(fig)                                            # no B* line (infinite)
    assert not any("slow-mode" in (a.text or "") for a in fig.layout.annotations)


def test_non_finite_points_are_skipped():
    grid = np.geomspace(1, 1024, 11)
    fig = ffm.fast_mode_curves(grid, np.full(11, 0.02), 1 / grid, np.ones(11, bool), np.array(["weights"] * 11),
                               [("fast", float("nan"), 0.01, 1.0, "#f00")], 0.02, 0.5, None)
    assert all(not (t.name or "").startswith("fast") for t in fig.data)


def test_log_axis_ticks_and_batch_text():
    assert ffm._log_axis([[1.0, 1e4]])["dtick"] == 1          # four decades: powers of ten
    assert ffm._log_axis([[1.0, 30.0]])["dtick"] == "D2"       # 1.5 decades: 1-2-5
    assert ffm._log_axis([[np.nan, -1.0]]) == {}
    assert [ffm.batch_text(b) for b in (6.312, 94.68, 2048.0)] == ["6.31", "94.7", "2,048"]


def test_full_figure_validates_and_has_no_magic_keys(setup):
    """Every feature at once (reference curve and points, both floors, B*, a does-not-fit segment) passes
    plotly's full validation, and validation changes no key: a nested magic-underscore key such as
    `title_font` would be expanded to `title.font` here, while the app (no validation) would drop it."""
    fig = setup["fig"]
    assert any(t.name == "does not fit in HBM" for t in fig.data)
    assert np.isfinite(setup["b_star"]) and len(fig.layout.shapes) > 4
    validate(fig)                                              # full validation; no key may change


def test_two_panels_laid_out_by_hand(setup):
    lay = setup["fig"].layout
    assert tuple(lay.xaxis.domain) == (0.0, 0.455) and tuple(lay.xaxis2.domain) == (0.545, 1.0)
    assert lay.xaxis.anchor == "y" and lay.xaxis2.anchor == "y2" and lay.yaxis2.anchor == "x2"
    assert lay.xaxis.dtick == 1 and lay.xaxis.tickformat == "~s"          # 1, 10, 100, 1k …
    # Subplot titles: annotations centred over each panel, just above the plot area, headline-sized.
    # (The size is 1.3 em of the annotation's font, on an inner span: ui.figures.plot.panel_title_annotation.)
    titles = [a for a in lay.annotations if a.name == plot.PANEL_TITLE]
    assert [re.sub(r"<[^>]+>", "", a.text) for a in titles] == ["Latency per token", "Cost per token"]
    assert [(a.xref, a.x, a.yanchor) for a in titles] == [("x domain", 0.5, "bottom"), ("x2 domain", 0.5, "bottom")]
    assert all(a.y >= 1.0 and a.font.size * 1.3 >= 20 and "font-size:1.3em" in a.text for a in titles)
    assert lay.meta[plot.PANELS_META] == ["Latency per token", "Cost per token"]        # the CSV's chart names
    # Each trace sits on one panel; the second panel's traces are not in the legend again.
    assert {(t.xaxis, t.yaxis) for t in setup["fig"].data} == {("x", "y"), ("x2", "y2")}
    assert not any(t.showlegend for t in setup["fig"].data if t.xaxis == "x2")


def test_bounds_are_shaded_on_both_panels(setup):
    """make_subplots silently dropped the shading (add_vrect on a subplot with no trace yet); now it is drawn."""
    fig = setup["fig"]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert {s.xref for s in rects} == {"x", "x2"}
    for xref in ("x", "x2"):
        mine = sorted((s.x0, s.x1) for s in rects if s.xref == xref)
        assert mine[0][0] == pytest.approx(setup["grid"][0]) and mine[-1][1] == pytest.approx(setup["grid"][-1])
        assert all(a[1] == pytest.approx(b[0]) for a, b in itertools.pairwise(mine))      # contiguous runs
    # The regions' names and B*'s label on the latency panel only (the cost panel is shaded alike); B*'s
    # dashed line on both.
    named = [a for a in fig.layout.annotations if a.text in ("weight-fetch-bound", "compute-bound")
             or a.text.startswith("B* = ")]
    assert named and {a.xref for a in named} == {"x"}
    assert [a.text for a in named].count("weight-fetch-bound") == 1
    b_star_lines = [s for s in fig.layout.shapes if s.type == "line" and s.x0 == s.x1
                    and s.x0 == pytest.approx(setup["b_star"])]
    assert {s.xref for s in b_star_lines} == {"x", "x2"}


def test_labels_sit_on_leader_lines_from_the_operating_points(setup):
    """Each operating point's label sits 55 px up-left (latency) or up-right (cost) of its point, at the
    far end of a leader line drawn from the point as a pixel-sized shape (Spec.leader), not as the
    annotation's own arrow (which plotly measures with a forced page layout on every redraw)."""
    fig, fm = setup["fig"], setup["fm"]
    assert not any(a.showarrow for a in fig.layout.annotations)
    for label, b, lat, usd in (("standard", fm.batch_standard, fm.t_step_standard_s, fm.usd_per_mtok_standard),
                               ("fast", fm.batch_fast, fm.t_step_fast_s, fm.usd_per_mtok_fast)):
        anns = [a for a in fig.layout.annotations if (a.text or "").startswith(f"<b>{label}</b>")]
        (left,), (right,) = [a for a in anns if a.xref == "x"], [a for a in anns if a.xref == "x2"]
        assert left.yref == "y" and right.yref == "y2"
        assert left.x == right.x == pytest.approx(np.log10(b))
        assert left.y == pytest.approx(np.log10(lat * 1e3)) and right.y == pytest.approx(np.log10(usd))
        assert left.xshift == -55 and right.xshift == 55 and left.yshift == right.yshift == 55
        for ann, y, xref in ((left, lat * 1e3, "x"), (right, usd, "x2")):
            (line,) = [sh for sh in fig.layout.shapes if sh.type == "path" and sh.xref == xref
                       and sh.xanchor == pytest.approx(b) and sh.yanchor == pytest.approx(y)]
            assert line.xsizemode == line.ysizemode == "pixel"
            # from the point (0, 0) to the label's centre (plotly's pixel-mode paths: +y is up)
            assert line.path == f"M0,0 L{ann.xshift:g},{ann.yshift:g}"
            assert line.line.color == ann.font.color


def test_narrow_layout_stacks_the_panels(setup):
    """On a phone the chart element applies the figure's narrow layout (ui.figures.plot.NARROW_META): both panels full
    width, latency above cost with room between them, a taller chart.  Wide, they sit side by side."""
    lay = setup["fig"].layout
    assert [list(lay.xaxis.domain), list(lay.xaxis2.domain)] == [list(d) for d in plot.PANEL_DOMAINS]
    narrow = lay.meta[NARROW_META]
    assert narrow["below_px"] == plot.NARROW_BELOW_PX
    n = narrow["layout"]
    assert n["xaxis"]["domain"] == n["xaxis2"]["domain"] == [0.0, 1.0]
    (lat_lo, lat_hi), (cost_lo, cost_hi) = n["yaxis"]["domain"], n["yaxis2"]["domain"]
    assert lat_hi == 1.0 and cost_lo == 0.0 and cost_hi < lat_lo                 # latency above, a gap, cost
    # The gap holds the latency panel's ticks, its axis title and the cost panel's title: ≥ 90 px.
    plot_px = n["height"] - n["margin"]["t"] - n["margin"]["b"]
    assert (lat_lo - cost_hi) * plot_px >= 90
    assert n["height"] > lay.height



def test_a_prediction_on_both_panels_with_room_on_the_axes(setup):
    r, grid = setup["r"], setup["grid"]
    t, usd = r.t_step_s[0], r.usd_per_mtok[0]
    pred = (Prediction(3 * t, 2 * t, 9 * t), Prediction(3 * usd, 2 * usd, 9 * usd))
    fig = ffm.fast_mode_curves(grid, t, usd, r.fits[0], r.bound[0], [], float(setup["floors"].t_weights_s[0]),
                               float(setup["floors"].usd_per_mtok[1]), setup["b_star"], predicted=pred)
    validate(fig)
    for xaxis, scale, y in (("x", 1e3, t), ("x2", 1.0, usd)):
        (p,) = _traces(fig, "predicted (fitted efficiencies)", xaxis)
        (band,) = _traces(fig, "held-out error band (10th–90th pct, k5)", xaxis)
        assert np.allclose(p.y, 3 * y * scale) and np.allclose(band.y, 9 * y * scale) and band.fill == "tonexty"
        assert bool(p.showlegend) == (xaxis == "x")
    # the explicit y ranges hold the band's top (log10 of the largest value)
    assert fig.layout.yaxis.range[1] >= np.log10(np.nanmax(9 * t * 1e3))
    assert fig.layout.yaxis2.range[1] >= np.log10(np.nanmax(9 * usd))


def test_b_star_label_clears_the_latency_floor_label_at_the_defaults():
    """The page's defaults (GB200 NVL72 × DeepSeek-V3 at fp8, T = 2k, a 2.5× speed for 6× the price): B* ≈
    14,448 stands over the latency floor's label, which runs along the bottom right under the floor.  B*'s label
    (once at the bottom, on the floor's) is in a top row clear of the regions' names; no two of the latency
    panel's labels meet (label_boxes: a phone's widths; the operating points' labels sit on leader lines)."""
    from model import Deployment, Precision, System, presets
    s = System(presets.get("hardware", "gb200"), presets.get("model", "deepseek-v3"),
               Precision(weights="fp8", kv="fp8", compute="fp8"), Deployment(chips=72))
    grid, T = np.geomspace(1, 65536, 97), 2048.0
    r = decode_step(s, grid, T)
    fm = fast_mode_batches(s, 2.5, 6.0, T)
    points = [("standard", fm.batch_standard, fm.t_step_standard_s, fm.usd_per_mtok_standard, ffm.STANDARD_COLOR),
              ("fast", fm.batch_fast, fm.t_step_fast_s, fm.usd_per_mtok_fast, ffm.FAST_COLOR)]
    floors = decode_step(s, np.array([1.0, 1e12]), T)
    b_star = float(system_balance_batch(s, T))
    fig = ffm.fast_mode_curves(grid, r.t_step_s, r.usd_per_mtok, r.fits, r.bound, points,
                               float(floors.t_weights_s[0]), float(floors.usd_per_mtok[1]), b_star)
    floor_label = next(a.text for a in fig.layout.annotations if a.text.startswith("latency floor"))
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    bxs = boxes(fig, [0.0, np.log10(65536)], fig.layout.yaxis.range, plot_px,
                keep=lambda a: a.name != plot.PANEL_TITLE and abs(a.xshift or 0) < 10)
    assert {f"B* = {b_star:,.0f}", floor_label, "KV-fetch-bound", "compute-bound"} <= set(bxs)
    assert overlaps(bxs) == []


def test_both_batch_axes_span_the_grid(setup):
    """Both panels span the grid, log10 1 … 65,536 (autoranged, the cost panel's axis runs a decade past it, to
    1M, to make room for the standard point's label, shifted right of its dot)."""
    fig = setup["fig"]
    for name in ("xaxis", "xaxis2"):
        lo, hi = fig.layout[name].range
        assert lo == pytest.approx(0.0, abs=1e-6) and hi == pytest.approx(np.log10(65536), abs=1e-6), name


def test_the_cost_panel_labels_a_point_near_the_axis_end_straight_above(setup):
    """The axis ends at the grid's end, so a label shifted right of a point in the grid's last quarter of decades
    would run past it (at 390 px, off the chart): such a point's label sits straight above it; a point further
    left keeps its label to the right, away from the falling curve."""
    r, grid = setup["r"], setup["grid"]

    def xshifts(b_standard: float) -> dict:
        points = [("standard", b_standard, 0.01, 0.05, ffm.STANDARD_COLOR),
                  ("fast", 1000.0, 0.004, 0.3, ffm.FAST_COLOR)]
        fig = ffm.fast_mode_curves(grid, r.t_step_s[0], r.usd_per_mtok[0], r.fits[0], r.bound[0], points, 1e-3, 0.04,
                                   setup["b_star"])
        return {a.text.split("<br>")[0]: a.xshift for a in fig.layout.annotations
                if a.xref == "x2" and a.text.startswith("<b>")}

    # last quarter of log10 1 … 65,536: above 10**(0.75 · 4.82) ≈ 4,096
    assert xshifts(16000.0) == {"<b>standard</b>": 0, "<b>fast</b>": ffm.LABEL_OFFSET_PX}
    assert xshifts(3000.0) == {"<b>standard</b>": ffm.LABEL_OFFSET_PX, "<b>fast</b>": ffm.LABEL_OFFSET_PX}
