"""The Rematerialisation page's figure builders, without Streamlit: the Feistel diagram, memory against
depth, and the memory/time bars.  Every figure is re-validated with plotly's full validation."""

import numpy as np

from model import remat
from tests.ui.figures.checks import validate, vline_xs
from ui.figures import remat as fig_remat
from ui.figures.remat import STRATEGY_COLORS, Line


def test_feistel_diagram_draws_both_directions():
    fig = fig_remat.feistel_diagram()
    validate(fig)
    texts = [a.text for a in fig.layout.annotations]
    # two f boxes (forward and inverse), an add and a subtract, and the outputs of each direction
    assert [s.type for s in fig.layout.shapes].count("rect") == 2
    assert texts.count("f") == 2 and "⊕" in texts and "⊖" in texts
    assert "<b>y + f(x)</b>" in texts and any("(y + f(x)) − f(x)" in t for t in texts)
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) >= 8 and all(a.axref == "x" and a.ayref == "y" for a in arrows)
    assert fig.layout.xaxis.visible is False and fig.layout.yaxis.visible is False
    # every shape and annotation lies inside the drawn ranges
    x0, x1 = fig.layout.xaxis.range
    assert all(x0 <= s.x0 <= x1 and x0 <= s.x1 <= x1 for s in fig.layout.shapes)
    assert all(x0 <= a.x <= x1 for a in fig.layout.annotations)
    # The wires' names at the divider (forward outputs, inverse inputs) sit above their wires and point
    # away from it, so that on a narrow chart they do not run into each other.
    (divider,) = [s for s in fig.layout.shapes if s.type == "line" and s.line.dash == "dot"]
    near = [a for a in fig.layout.annotations if a.text in ("<b>y + f(x)</b>", "<b>x</b>")
            and abs(a.x - divider.x0) < 2]
    assert len(near) == 4 and all(a.yanchor == "bottom" for a in near)
    assert all((a.xanchor == "right") == (a.x < divider.x0) for a in near)


def _depth_fig(hbm=80.0):
    L = np.arange(1.0, 129.0)
    m = remat.activation_memory(L, 1.14, 0.067)
    lines = [Line(k, name, v) for (k, v), name in zip(m.by_key().items(), remat.STRATEGIES)]
    now = remat.activation_memory(80.0, 1.14, 0.067)
    return fig_remat.memory_vs_depth(L, lines, l_now=80.0, now_values=[float(v) for v in now.by_key().values()],
                                     hbm_gb=hbm), m, now


def test_memory_vs_depth_lines_current_depth_and_hbm():
    fig, m, now = _depth_fig()
    validate(fig)
    lines = [t for t in fig.data if t.mode == "lines" and t.x[0] is not None]
    assert [t.name for t in lines] == list(remat.STRATEGIES)
    assert [t.line.color for t in lines] == [STRATEGY_COLORS[k] for k in remat.STRATEGY_KEYS]
    assert np.allclose(lines[0].y, m.store_all) and np.allclose(lines[3].y, 4 * 0.067 + 1.14)
    marks = [t for t in fig.data if t.mode == "markers"]
    assert [t.y[0] for t in marks] == [float(v) for v in now.by_key().values()]
    assert all(t.x[0] == 80.0 for t in marks)
    assert 80.0 in vline_xs(fig)
    assert any(s.type == "line" and s.y0 == s.y1 == 80.0 for s in fig.layout.shapes)     # HBM 80 GB
    assert "[GB]" in fig.layout.yaxis.title.text and fig.layout.xaxis.type == "linear"
    assert fig.layout.yaxis.range[1] >= max(float(m.store_all.max()), 80.0)


def test_memory_vs_depth_without_hbm():
    fig, _, _ = _depth_fig(hbm=None)
    validate(fig)
    assert not any(s.type == "line" and s.y0 == s.y1 for s in fig.layout.shapes)


def test_trade_bars_two_panels():
    keys = list(remat.STRATEGY_KEYS)
    mem = np.array([91.3, 6.51, 10.9, 1.41])
    t_fwd = 0.607
    parts = {"forward": np.full(4, t_fwd), "backward": np.full(4, 2 * t_fwd),
             "recompute": np.array([0.0, t_fwd, t_fwd, t_fwd])}
    fig = fig_remat.trade_bars(list(remat.STRATEGIES), keys, mem, parts, hbm_gb=80.0)
    validate(fig)
    bars = [t for t in fig.data if t.type == "bar"]
    assert bars[0].xaxis in (None, "x") and list(bars[0].x) == list(mem)
    assert [b.name for b in bars[1:]] == ["forward", "backward", "recompute"]
    assert all(b.xaxis == "x2" and b.yaxis == "y2" for b in bars[1:])
    assert fig.layout.barmode == "stack" and fig.layout.legend.traceorder == "normal"
    assert fig.layout.xaxis.domain[1] < fig.layout.xaxis2.domain[0]           # side by side
    assert "[GB]" in fig.layout.xaxis.title.text and "[s]" in fig.layout.xaxis2.title.text
    assert fig.layout.xaxis2.range[1] >= 4 * t_fwd                             # the longest step fits
    assert 80.0 in vline_xs(fig)
    assert list(bars[0].marker.color) == [STRATEGY_COLORS[k] for k in keys]
