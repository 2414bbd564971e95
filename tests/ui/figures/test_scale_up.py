"""The Scale-up page's figure builders, without Streamlit: traces, fit split, marks, axes, bars.

Every figure is also re-validated with plotly's full validation (`tests.ui.figures.checks.validate`,
i.e. `go.Figure(fig.to_dict())` with no key changed), since `ui.figures.plot.Spec` skips it at run time.
"""

import numpy as np
import pytest

from model import Deployment, Precision, System, decode_step
from model.cluster import largest_model_params
from tests.ui.figures.checks import validate, vline_xs
from tests.ui.figures.label_boxes import boxes, overlaps
from ui.figures import scale_up as fig_scaleup
from ui.figures.batch import GREY, NOW_MARKER
from ui.figures.scale_up import Line, Panel

C = np.arange(1, 577, dtype=float)
MARKS = [(8.0, "Hopper 8 (this chip)"), (72.0, "Blackwell 72"), (144.0, "Rubin Ultra 144"), (576.0, "576 dies")]


def test_sweep_lines_fit_split_marks_and_current_point():
    floor = 141.2e9 / (C * 3.35e12) * 1e3
    step = 2.2 * floor
    fits = C >= 4
    fig = fig_scaleup.sweep_vs_chips(
        C, [Line("floor", floor, "#F58518", dash="dot", width=3), Line("step", step, "#222", fits)],
        title="Latency", y_title="time per token [ms]", unit="ms", now=(8.0, float(step[7]), "current C = 8"),
        marks=MARKS)
    validate(fig)
    names = [t.name for t in fig.data]
    assert names == ["floor", "step", "does not fit in HBM", "current C = 8"]
    assert np.allclose(fig.data[0].y, floor) and np.allclose(fig.data[0].x, C)
    assert np.isnan(fig.data[1].y[:3]).all() and np.allclose(fig.data[1].y[3:], step[3:])
    grey = fig.data[2]
    assert grey.line.color == GREY and grey.line.dash == "dash" and np.allclose(grey.y[:4], step[:4])
    assert fig.data[3].marker.color == NOW_MARKER["color"] and list(fig.data[3].x) == [8.0]
    # One dotted line per mark, labelled above the plot in alternating rows; the chip's own domain in colour.
    assert sorted(vline_xs(fig)) == [8.0, 72.0, 144.0, 576.0]
    labels = {a.text: a for a in fig.layout.annotations}
    assert labels["Hopper 8 (this chip)"].font.color == fig_scaleup.DOMAIN_COLOR
    assert labels["Blackwell 72"].yshift != labels["Rubin Ultra 144"].yshift   # neighbours on different rows
    assert labels["576 dies"].xanchor == "right"                                  # at the right edge
    assert labels["Hopper 8 (this chip)"].x == pytest.approx(np.log10(8))
    # Units and log axes; the y range covers every curve and the point; decades-only ticks over 4 decades.
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "[chips" in fig.layout.xaxis.title.text and "[ms]" in fig.layout.yaxis.title.text
    assert 576 in fig.layout.xaxis.tickvals and 72 in fig.layout.xaxis.tickvals
    lo, hi = fig.layout.yaxis.range
    assert 10 ** lo <= floor.min() and 10 ** hi >= step.max()
    assert all(np.log10(t) == pytest.approx(round(np.log10(t))) for t in fig.layout.yaxis.tickvals)


def test_flat_line_gets_room_and_fine_ticks():
    fig = fig_scaleup.sweep_vs_chips(C, [Line("$/Mtok", np.full(C.shape, 1.2), "#222", C >= 4)], title="Cost",
                                     y_title="cost [$ per million tokens]", unit="$/Mtok",
                                     now=(8.0, 1.2, "current C = 8"), marks=MARKS)
    validate(fig)
    lo, hi = fig.layout.yaxis.range
    assert hi - lo >= 0.5 and 10 ** lo < 1.2 < 10 ** hi
    assert 1.0 in fig.layout.yaxis.tickvals and 1.5 in fig.layout.yaxis.tickvals


def test_log_ticks():
    assert fig_scaleup.log_ticks(0.6, 2.8) == [0.7, 1.0, 1.5, 2.0]
    assert fig_scaleup.log_ticks(0.45, 130) == [0.5, 1, 2, 5, 10, 20, 50, 100]
    assert fig_scaleup.log_ticks(0.003, 120) == [0.01, 0.1, 1, 10, 100]


def test_hline_custom_ticks_batch_hover_and_empty_curves():
    big = np.full(C.shape, np.nan)                     # a curve that is nowhere defined (the KV alone does not fit)
    fig = fig_scaleup.sweep_vs_chips(
        C, [Line("weights alone", C * 40.0, "#F58518"), Line("with KV", big, "#222", batch=np.ones(C.shape))],
        title="Largest", y_title="largest model [parameters]", unit="B params", now=(8.0, 0.0, "current"),
        marks=[(8.0, "Hopper 8"), (256.0, "this chip's domain 256"), *MARKS[1:]],
        hline=(70.6, "Llama: 70.6B"), y_ticks=[(10.0, "10B"), (100.0, "100B"), (1000.0, "1T"), (1e6, "1,000T")])
    validate(fig)
    assert [t.name for t in fig.data] == ["weights alone", "with KV"]   # no point at y = 0, no grey part
    assert "customdata" in fig.data[1].hovertemplate
    hl = [s for s in fig.layout.shapes if s.type == "line" and s.y0 == s.y1]
    assert [s.y0 for s in hl] == [70.6]
    assert any(a.text == "Llama: 70.6B" and a.y == pytest.approx(np.log10(70.6)) for a in fig.layout.annotations)
    # The curve spans 40 … 23,040 billion: the ticks inside that range only, with their own labels.
    assert list(fig.layout.yaxis.ticktext) == ["100B", "1T"] and list(fig.layout.yaxis.tickvals) == [100.0, 1000.0]
    # Five marks use three label rows (more top margin).
    shifts = {a.yshift for a in fig.layout.annotations if a.text in dict((t, x) for x, t in MARKS) or
              a.text.startswith("this chip")}
    assert len(shifts) == 3 and fig.layout.margin.t == 70 + 3 * fig_scaleup.MARK_ROW_PX


def test_unlabelled_marks_draw_their_lines_only():
    """A panel beside one that labels the generations' marks (Scale-up's cost panel) draws their lines alone
    and keeps base_layout's top margin room for its title only."""
    args = dict(title="Cost", y_title="cost [$ per million tokens]", unit="$/Mtok", now=(8.0, 1.2, "current"),
                marks=MARKS)
    lab = fig_scaleup.sweep_vs_chips(C, [Line("$/Mtok", np.full(C.shape, 1.2), "#222")], **args)
    bare = fig_scaleup.sweep_vs_chips(C, [Line("$/Mtok", np.full(C.shape, 1.2), "#222")], labelled=False, **args)
    validate(bare)
    dotted = [s.x0 for s in bare.layout.shapes if s.line.dash == "dot"]
    assert dotted == [s.x0 for s in lab.layout.shapes if s.line.dash == "dot"] and len(dotted) == len(MARKS)
    assert not [a for a in bare.layout.annotations if a.text in {t for _, t in MARKS}]
    assert bare.layout.margin.t == 70 < lab.layout.margin.t


def test_sweep_beyond_576_extends_the_ticks():
    x = np.unique(np.concatenate([C, [1024.0, 2048.0]]))
    fig = fig_scaleup.sweep_vs_chips(x, [Line("a", 1 / x, "#000")], title="t", y_title="y [s]", unit="s",
                                     now=(2048.0, 1 / 2048, "current"), marks=MARKS)
    validate(fig)
    assert 1152 in fig.layout.xaxis.tickvals and 4608 not in fig.layout.xaxis.tickvals
    assert fig.layout.xaxis.range[1] == pytest.approx(np.log10(2048) + 0.02)


def test_compare_bars_panels_axes_and_labels():
    opts = ["today<br>8 chips", "4 stages<br>of 8", "one domain<br>of 32"]
    panels = [Panel("HBM capacity", "TB", [0.64, 2.56, 2.56], ["640 GB", "2.56 TB", "2.56 TB"]),
              Panel("bandwidth one step uses", "TB/s", [26.8, 26.8, 107.2], ["a", "b", "c"]),
              Panel("latency floor", "ms", [5.27, 5.27, 1.32], ["5.27 ms", "5.27 ms", "1.32 ms"]),
              Panel("cost", "$/Mtok", [1.2, 1.2, 0.79], ["$1.20", "$1.20", "$0.79 ✗"])]
    fig = fig_scaleup.compare_bars(opts, panels, title="×4 chips")
    validate(fig)
    assert len(fig.data) == 4 and all(t.type == "bar" for t in fig.data)
    assert [t.xaxis or "x" for t in fig.data] == ["x", "x2", "x3", "x4"]
    assert [t.yaxis or "y" for t in fig.data] == ["y", "y2", "y3", "y4"]
    assert list(fig.data[0].x) == opts and list(fig.data[3].text) == ["$1.20", "$1.20", "$0.79 ✗"]
    assert list(fig.data[1].marker.color) == list(fig_scaleup.COMPARE_COLORS)
    for i, p in enumerate(panels):
        sfx = "" if i == 0 else str(i + 1)
        ya = fig.layout[f"yaxis{sfx}"]
        assert ya.title.text == f"[{p.unit}]" and ya.range[0] == 0 and ya.range[1] >= max(p.values)
        assert fig.layout[f"xaxis{sfx}"].type == "category"
    # 2 × 2: the panels do not overlap.
    assert fig.layout.xaxis.domain[1] < fig.layout.xaxis2.domain[0]
    assert fig.layout.yaxis3.domain[1] < fig.layout.yaxis.domain[0]
    assert {a.text for a in fig.layout.annotations} == {f"<b>{p.title}</b>" for p in panels}


def test_builders_validate_on_real_model_output(h100, llama70):
    """The page's path: one vectorised decode_step over C, one largest_model_params call for two batches."""
    s = System(h100, llama70, Precision(), Deployment(chips=8))
    r = decode_step(s, 64, 8192, chips=C)
    lm = largest_model_params(s, np.array([[64.0], [0.0]]), 8192, chips=C[None, :])
    assert lm.shape == (2, C.size)
    validate(fig_scaleup.sweep_vs_chips(C, [Line("floor", r.t_weights_s * 1e3, "#F58518"),
                                            Line("step", r.t_step_s * 1e3, "#222", r.fits)],
                                        title="t", y_title="t [ms]", unit="ms",
                                        now=(8.0, float(r.t_step_s[7]) * 1e3, "now"), marks=MARKS))
    validate(fig_scaleup.sweep_vs_chips(C, [Line("w", lm[1] / 1e9, "#000"),
                                            Line("kv", np.where(lm[0] > 0, lm[0], np.nan) / 1e9, "#222")],
                                        title="m", y_title="m [parameters]", unit="B params",
                                        now=(8.0, float(lm[0, 7]) / 1e9, "now"), marks=MARKS, hline=(70.6, "L")))


def test_chip_labels_above_the_plot_clear_each_other():
    """The page's marks on a GB200 (its domain of 72 is Blackwell's): "Blackwell 72 (this chip)" and "576 dies",
    every other label on one row of two, met on a 390 px phone.  Each label is now in the lowest row where it
    clears the others (label_boxes: a phone's widths), and the top margin holds every row."""
    marks = [(8.0, "Hopper 8"), (72.0, "Blackwell 72 (this chip)"), (144.0, "Rubin Ultra 144"), (576.0, "576 dies")]
    fig = fig_scaleup.sweep_vs_chips(C, [Line("floor", 1.0 / C, "#F58518")], title="Latency", y_title="[ms]",
                                     unit="ms", now=None, marks=marks)
    bxs = boxes(fig, fig.layout.xaxis.range, None, 400, keep=lambda a: a.yanchor == "bottom" and a.y == 1.0)
    assert set(bxs) == {t for _, t in marks}
    assert overlaps(bxs) == []
    rows = {a.yshift for a in fig.layout.annotations if a.yanchor == "bottom"}
    assert fig.layout.margin.t >= 70 + fig_scaleup.MARK_ROW_PX * len(rows)
