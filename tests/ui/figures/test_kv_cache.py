"""The KV-cache page's figure builders, without Streamlit: traces, markers, heatmap categories, bars."""

import numpy as np
import pytest

from tests.ui.figures.checks import validate, vline_xs
from ui.figures import kv_cache as fig_kv
from ui.figures.batch import BOUND_COLORS, BOUND_LABELS
from ui.figures.plot import Spec

CTX = np.geomspace(128, 1e7, 50)


def _cost_fig(markers, tier=None, fits=None):
    usd = np.where(CTX < 5e3, 1.0, CTX / 5e3)            # flat, then linear
    bound = np.where(CTX < 5e3, "weights", "kv")
    fits = np.ones(CTX.shape, bool) if fits is None else fits
    return fig_kv.cost_vs_context(CTX, usd, fits, bound, markers=markers, t_now=8192.0, usd_now=1.6, tier=tier)


def test_cost_vs_context_markers_at_their_contexts_and_off_range_ones_left_out():
    fig = _cost_fig([("KV = weights", 6733.0, "orange"), ("KV = compute", 1459.0, "black"),
                     ("beyond", 9e7, "red"), ("never", np.inf, "red")])
    assert sorted(vline_xs(fig)) == pytest.approx([1459.0, 6733.0])
    texts = [a.text for a in fig.layout.annotations]
    assert "KV = weights" in texts and "KV = compute" in texts and "beyond" not in texts
    # The labels are staggered (different heights), so they do not overlap.
    ys = {a.text: a.y for a in fig.layout.annotations if a.text in ("KV = weights", "KV = compute")}
    assert ys["KV = weights"] != ys["KV = compute"]
    # Log–log, the x range pinned to the swept contexts (shapes must not stretch it).
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert list(fig.layout.xaxis.range) == pytest.approx([np.log10(128), 7.0])
    assert "context T (tokens)" in fig.layout.xaxis.title.text
    assert "$" in fig.layout.yaxis.title.text


def test_cost_vs_context_traces_and_current_point():
    fits = CTX < 1e6
    fig = _cost_fig([], fits=fits)
    names = [t.name for t in fig.data]
    assert names == ["roofline cost, $/Mtok", "does not fit in HBM", "current T"]
    cur = fig.data[-1]
    assert list(cur.x) == [8192.0] and list(cur.y) == [1.6]
    # Fitting part drawn in black, the rest grey; nan elsewhere so they do not overlap.
    fit_y = np.asarray(fig.data[0].y, float)
    assert np.all(np.isnan(fit_y[~fits]))


def test_cost_vs_context_tier_overlay_is_a_price_step_at_the_threshold():
    tier = fig_kv.Tier("Gemini 2.5 Pro", 200e3, 10.0, 15.0)
    fig = _cost_fig([], tier=tier)
    step = next(t for t in fig.data if t.name == "Gemini 2.5 Pro (list price)")
    assert list(step.x) == pytest.approx([128, 200e3, 200e3, 1e7])
    assert list(step.y) == [10.0, 10.0, 15.0, 15.0]
    assert 200e3 in vline_xs(fig)
    # A tier without long-context prices still gets its threshold line, but no step.
    fig = _cost_fig([], tier=fig_kv.Tier("x", 200e3))
    assert 200e3 in vline_xs(fig) and not any("list price" in (t.name or "") for t in fig.data)


def _map(fits=None):
    batch = np.array([1.0, 8.0, 64.0, 512.0])
    ctx = np.array([1e3, 1e4, 1e5, 1e6])
    bound = np.array([["weights", "weights", "kv", "kv"],
                      ["weights", "weights", "kv", "kv"],
                      ["compute", "weights", "kv", "kv"],
                      ["compute", "kv", "kv", "kv"]])
    cross = np.array([2e6, 3e5, 4e4, np.inf])
    return batch, ctx, bound, fig_kv.bound_map(batch, ctx, bound, fits, crossover=cross, never_context=2e3,
                                               now=(64.0, 8192.0))


def test_bound_map_categories_colours_and_lines():
    batch, ctx, bound, fig = _map()
    heat = fig.data[0]
    assert heat.type == "heatmap"
    z = np.asarray(heat.z, float)
    order = [b for b in BOUND_COLORS if np.any(bound == b)]          # compute, weights, kv
    assert order == ["compute", "weights", "kv"]
    for i, b in enumerate(order):
        assert np.all(z[bound == b] == i)
        # The colour scale maps category i to that bound's colour.
        assert any(c == BOUND_COLORS[b] and i / 3 <= s <= (i + 1) / 3 for s, c in heat.colorscale)
    assert np.asarray(heat.customdata)[0, 0] == BOUND_LABELS["weights"]
    legend = [t.name for t in fig.data[1:]]
    assert {BOUND_LABELS[b] for b in order} <= set(legend)
    line = next(t for t in fig.data if t.name == "KV fetch = weight fetch")
    # Only crossovers inside the context range are drawn (2e6 and inf are not).
    assert list(line.x) == [3e5, 4e4] and list(line.y) == [8.0, 64.0]
    assert 2e3 in vline_xs(fig)
    # The current (T, B): a dot shape at its fraction of each axis's explicit log range, in domain
    # units (plotly clips no domain-anchored shape, so it stays whole on the map's edge), so a batch
    # move redraws the dot, not the maps.  T = 8192 = 2^13 on 1e3…1e6: (13·log10 2 − 3) / 3;
    # B = 64 = 8^2 on 1…512 = 8^3: 2/3.  Its legend entry is a point-less trace.
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert list(fig.layout.xaxis.range) == [3.0, 6.0]
    assert list(fig.layout.yaxis.range) == pytest.approx([0, np.log10(512)])
    dot = [sh for sh in fig.layout.shapes if sh.name == "now"]
    assert len(dot) == 1 and (dot[0].xref, dot[0].yref) == ("x domain", "y domain")
    assert dot[0].xanchor == pytest.approx((13 * np.log10(2) - 3) / 3, rel=1e-12)
    assert dot[0].yanchor == pytest.approx(2 / 3, rel=1e-12)
    legend = next(t for t in fig.data if t.name == "current (T, B)")
    assert list(legend.x) == [None] and legend.meta == "now"
    assert [t.name for t in fig.data if t.name == "current (T, B)"] == ["current (T, B)"]   # no marker trace left


def test_bound_map_dot_on_the_edge_is_pinned_whole():
    batch, ctx = np.array([1.0, 8.0, 64.0, 512.0]), np.array([1e3, 1e4, 1e5, 1e6])
    bound = np.full((4, 4), "weights")
    for now, want in [((512.0, 1e3), (0.0, 1.0)), ((1.0, 1e6), (1.0, 0.0)), ((1e5, 1e9), (1.0, 1.0))]:
        fig = fig_kv.bound_map(batch, ctx, bound, None, crossover=np.full(4, np.inf), never_context=None, now=now)
        dot = next(sh for sh in fig.layout.shapes if sh.name == "now")
        assert (dot.xanchor, dot.yanchor) == want


def test_bound_map_marks_cells_that_do_not_fit():
    batch, ctx, bound, fig = _map()
    assert not any(t.name == "does not fit in HBM" for t in fig.data)
    fits = np.ones(bound.shape, bool)
    fits[3, 3] = False
    _, _, _, fig = _map(fits)
    over = next(t for t in fig.data if t.type == "heatmap" and t.name == "does not fit in HBM")
    z = np.asarray(over.z, float)
    assert z[3, 3] == 1 and np.isnan(z[0, 0])
    # The edge: the largest batch that fits in each context column (none where every batch fits).
    edge = next(t for t in fig.data if t.name == "HBM full above")
    assert np.isnan(np.asarray(edge.y, float)[:3]).all() and edge.y[3] == 64.0


def test_kv_bars_sorted_coloured_and_highlighted():
    names = ["Llama 3.1 70B", "DeepSeek-V3", "gpt-oss-120b", "Llama 3.1 405B"]
    vals = [327_680, 70_272, 36_864, 516_096]
    kinds = ["GQA", "MLA", "GQA + windowed", "GQA"]
    fig = fig_kv.kv_per_token_bars(names, vals, kinds, "Llama 3.1 70B", "t",
                                   refs=[("tier implies 3,386 B", 3386.0, "purple")])
    # Category order ascending: plotly puts the first at the bottom, so the largest is on top.
    assert list(fig.layout.yaxis.categoryarray) == ["gpt-oss-120b", "DeepSeek-V3", "Llama 3.1 70B",
                                                   "Llama 3.1 405B"]
    assert fig.layout.yaxis.type == "category"
    bars = {t.name: t for t in fig.data if t.type == "bar"}
    assert set(bars) == {"GQA", "MLA", "GQA + windowed"}
    assert bars["MLA"].marker.color == fig_kv.KIND_COLORS["MLA"]
    gqa = bars["GQA"]
    assert list(gqa.y) == ["Llama 3.1 70B", "Llama 3.1 405B"]
    assert list(gqa.x) == pytest.approx([327.68, 516.096])          # kB
    assert list(gqa.marker.line.width) == [4, 0]                     # only the current model outlined
    assert list(bars["MLA"].marker.line.width) == [0]
    # The current model is named in red, bold, on its own axis label; the other labels are the plain names.
    ticks = dict(zip(fig.layout.yaxis.tickvals, fig.layout.yaxis.ticktext))
    assert ticks["Llama 3.1 70B"] == '<span style="color:#D62728"><b>Llama 3.1 70B ▶</b></span>'
    assert ticks["DeepSeek-V3"] == "DeepSeek-V3"
    # Reference line at 3.386 kB, named in the legend.
    assert 3.386 in [pytest.approx(x) for x in vline_xs(fig)]
    assert any(t.name == "tier implies 3,386 B" for t in fig.data)
    assert fig.layout.xaxis.type == "log" and "kB" in fig.layout.xaxis.title.text


def test_kv_bars_sparse_read_markers():
    fig = fig_kv.kv_per_token_bars(["a", "b"], [2e3, 1e3], ["GQA", "MLA"], None, "t",
                                   read_per_token=[1e3, 0.5e3], read_label="read (sparse)")
    dia = next(t for t in fig.data if t.name == "read (sparse)")
    assert list(dia.y) == ["b", "a"] and list(dia.x) == pytest.approx([0.5, 1.0])
    assert list(fig.layout.yaxis.ticktext) == list(fig.layout.yaxis.tickvals) == ["b", "a"]   # none highlighted


def test_every_builder_validates_with_all_options():
    """Every builder, with every option the page uses (fits, tier, refs, sparse reads), is a valid figure."""
    fits = CTX < 1e6
    markers = [("KV = weights (B = 64)", 6733.0, BOUND_COLORS["weights"]),
               ("KV = compute: never compute-bound →", 1459.0, "#222"),
               ("beyond", 9e7, "red"), ("never", np.inf, "red")]
    for tier in (None, fig_kv.Tier("Gemini 2.5 Pro", 200e3, 10.0, 15.0), fig_kv.Tier("no prices", 200e3)):
        for f in (None, fits):
            validate(_cost_fig(markers, tier=tier, fits=f))
    fig = _cost_fig(markers, tier=fig_kv.Tier("Gemini 2.5 Pro", 200e3, 10.0, 15.0), fits=fits)
    # Labels on the log x axis are placed at log10(x); shapes at x.
    ann = {a.text: a for a in fig.layout.annotations}
    assert ann["KV = weights (B = 64)"].x == pytest.approx(np.log10(6733.0))
    assert ann["↑ list price steps up"].xanchor == "left"

    # A realistic map: 25 batches × 40 contexts, some cells too big for HBM, and a context past which
    # the step is never compute-bound.
    batch, ctx = np.geomspace(1, 4096, 25), np.geomspace(128, 1e7, 40)
    b, t = np.meshgrid(batch, ctx, indexing="ij")
    bound = np.where(b * t * 3.2e5 > 1.4e11, "kv", np.where(b > 300, "compute", "weights"))
    cells_fit = 1.4e11 + b * t * 3.2e5 < 8e11
    for f in (None, cells_fit):
        validate(fig_kv.bound_map(batch, ctx, bound, f, crossover=1.4e11 / (batch * 3.2e5), never_context=3e4,
                                   now=(64.0, 200e3)))
    validate(fig_kv.bound_map(batch, ctx, bound, ~np.ones(bound.shape, bool), crossover=np.full(batch.shape, np.inf),
                               never_context=None, now=(64.0, 200e3)))    # nothing fits, no lines

    names = ["Llama 3.1 70B", "DeepSeek-V3", "gpt-oss-120b", "Llama 3.1 405B", "some MQA"]
    vals = [327_680, 70_272, 36_864, 516_096, 20_000]
    kinds = ["GQA", "MLA", "GQA + windowed", "GQA", "unknown kind"]
    fig = fig_kv.kv_per_token_bars(
        names, vals, kinds, "Llama 3.1 70B", "KV bytes per extra token", notes=[f"note {i}" for i in range(5)],
        read_per_token=[3e4, 2e4, 1e4, 5e4, 2e3], read_label="read per context token at T = 200k (sparse)",
        refs=[("tier implies 3,386 B", 3386.0, fig_kv.TIER_COLOR), ("lecture: 2,048 B", 2048.0, "#555"),
              ("not finite", float("nan"), "red")])
    validate(fig)
    assert fig.layout.margin.b == 110 and fig.layout.yaxis.automargin     # the names push the left margin
    assert fig.layout.barmode == "overlay" and fig.layout.hovermode == "closest"
    validate(fig_kv.kv_per_token_bars(names, vals, kinds, None, "t"))


def test_mark_puts_the_label_left_of_a_line_near_the_right_edge():
    for x, anchor in ((1e3, "left"), (1e6, "right")):
        spec = Spec()
        fig_kv.mark(spec, x, "m", "black", x_range=(1e2, 1e7))
        spec.layout = {"xaxis": {"type": "log"}}
        fig = spec.figure()
        validate(fig)
        assert fig.layout.annotations[0].xanchor == anchor
        assert fig.layout.shapes[0].x0 == x and fig.layout.annotations[0].x == pytest.approx(np.log10(x))
