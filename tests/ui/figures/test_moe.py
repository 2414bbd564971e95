"""The MoE layout page's figure builders, without Streamlit: traces, the domain edge, markers, units."""

import numpy as np
import plotly.graph_objects as go
import pytest

from model import cluster, decode_step
from tests.ui.figures.checks import validate, vline_xs
from ui.figures import batch as figures
from ui.figures import moe as fig_moe
from ui.figures.plot import COUNT_DECADES


def _names(fig: go.Figure) -> list[str]:
    return [t.name for t in fig.data]


@pytest.fixture
def dsv3_lecture(lecture_gpu, deepseek):
    """DeepSeek-V3 shapes (+ the expert width) on the lecture's 72-GPU rack (scale-out 8× slower)."""
    from model import Deployment, Precision, System
    hw = lecture_gpu.with_(scaleup_bandwidth_bytes_per_s=900e9, scaleout_bandwidth_bytes_per_s=112.5e9)
    m = deepseek.with_(moe_intermediate_size=2048, n_moe_layers=58)
    return System(hw, m, Precision(), Deployment(chips=64))


def _comm_fig(system, fits=None):
    g = np.unique(np.concatenate([np.round(np.geomspace(1, 512, 80)), [64, 72, 144]]))
    at = cluster.moe_alltoall(system, 2048, gpus=g)
    r = decode_step(system, 2048, 8192, chips=g, t_comm=np.stack([np.zeros_like(g), at.t_comm_s]))
    fits = r.fits[1] if fits is None else fits
    return g, at, r, fig_moe.comm_vs_gpus(g, at.t_scaleup_s, at.t_scaleout_s, at.t_comm_s, r.t_step_s[0],
                                          r.t_step_s[1], r.bound[1], fits, domain=72, g_now=64,
                                          t_step_now=float(r.t_step_s[1][g == 64][0]))


def test_comm_vs_gpus_validates_and_marks_the_domain_edge(dsv3_lecture):
    g, at, r, fig = _comm_fig(dsv3_lecture)
    validate(fig)
    assert 72 in vline_xs(fig)                                      # the scale-up domain's edge
    band = [s for s in fig.layout.shapes if s.type == "rect" and s.x0 == 72]
    assert band and band[0].x1 == g[-1]                            # shaded past the domain
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "scale-up domain D = 72" in texts and "scale-out" in texts
    names = _names(fig)
    for n in ("scale-up links", "scale-out network", "t_comm (all-to-all)", "step without t_comm",
              "step with t_comm", "G = 64"):
        assert n in names
    # Units on both axes, log–log, x range covering the grid.
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "G (chips)" in fig.layout.xaxis.title.text and "[ms]" in fig.layout.yaxis.title.text
    lo, hi = fig.layout.xaxis.range
    assert lo < 0 < np.log10(512) < hi
    # Times in ms; t_comm at G = 1 (no traffic leaves the GPU) is left out of the log plot.
    tc = np.asarray(next(t for t in fig.data if t.name == "t_comm (all-to-all)").y, float)
    assert np.isnan(tc[0]) and tc[g == 64][0] == pytest.approx(float(at.t_comm_s[g == 64][0]) * 1e3)
    # The current G: a dot shape on the step curve at G = 64 (a G move redraws the dot, not the curves),
    # its legend entry a point-less trace, room for it along the step curve.
    now = next(t for t in fig.data if t.name == "G = 64")
    assert list(now.x) == [None]
    dot = [s for s in fig.layout.shapes if s.name == "now"]
    assert len(dot) == 1 and dot[0].xanchor == 64
    assert dot[0].yanchor == pytest.approx(float(r.t_step_s[1][g == 64][0]) * 1e3)
    room = next(t for t in fig.data if t.meta == "now-room")
    assert min(room.x) == 1 and max(room.x) == 512


def test_comm_vs_gpus_no_scaleout_trace_when_nothing_leaves_the_domain(dsv3_lecture):
    g = np.arange(1.0, 73.0)
    at = cluster.moe_alltoall(dsv3_lecture, 64, gpus=g)
    r = decode_step(dsv3_lecture, 64, 0, chips=g, t_comm=np.stack([np.zeros_like(g), at.t_comm_s]))
    fig = fig_moe.comm_vs_gpus(g, at.t_scaleup_s, at.t_scaleout_s, at.t_comm_s, r.t_step_s[0], r.t_step_s[1],
                               r.bound[1], np.zeros(g.shape, bool), domain=72, g_now=72, t_step_now=1e-3)
    validate(fig)
    names = _names(fig)
    assert "scale-out network" not in names
    assert "weights + KV do not fit in HBM" in names               # greyed where it does not fit
    assert not any(s.type == "rect" and s.x0 == 72 for s in fig.layout.shapes)   # nothing past the edge


def test_experts_touched_vs_batch(dsv3_lecture):
    b = np.geomspace(1, 65536, 60)
    d = cluster.expected_distinct_experts(256, 8, b)
    bz = cluster.busiest_gpu_experts(256, 8, b, 64)
    fig = fig_moe.experts_touched_vs_batch(b, d, 256, bz, 4, b_now=b[30], b_even=32)
    validate(fig)
    whole, busiest = fig.data[0], fig.data[1]
    assert np.asarray(whole.y) == pytest.approx(100 * d / 256)
    assert np.asarray(busiest.y) == pytest.approx(100 * bz / 4)
    assert np.asarray(whole.customdata) == pytest.approx(d)                 # counts in the hover
    assert np.all(np.asarray(busiest.y) >= np.asarray(whole.y) - 1e-9)      # the busiest GPU saturates first
    assert 32 in vline_xs(fig)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "linear"
    assert "%" in fig.layout.yaxis.title.text and "batch B" in fig.layout.xaxis.title.text
    now = fig.data[-1]
    assert list(now.x) == [b[30], b[30]]


def test_experts_touched_leaves_out_an_off_range_even_batch():
    b = np.geomspace(1, 100, 10)
    fig = fig_moe.experts_touched_vs_batch(b, np.ones(10), 8, np.ones(10), 1, b_now=10, b_even=1e6)
    validate(fig)
    assert vline_xs(fig) == []


def test_weight_bytes_vs_batch(dsv3_lecture):
    b = np.geomspace(1, 65536, 60)
    touched = cluster.touched_weight_bytes_per_gpu(dsv3_lecture, b)
    all_b = dsv3_lecture.weight_bytes / 64
    bw = dsv3_lecture.hbm_bandwidth
    fig = fig_moe.weight_bytes_vs_batch(b, touched, all_b, bw, b_now=64, touched_now=float(touched[20]))
    validate(fig)
    flat, curve, now = fig.data
    assert np.asarray(flat.y) == pytest.approx(np.full(b.shape, all_b / 1e9))          # GB
    assert np.asarray(curve.y) == pytest.approx(touched / 1e9)
    assert np.asarray(curve.customdata) == pytest.approx(touched / bw * 1e3)          # ms in the hover
    assert curve.y[0] < flat.y[0]                                                     # small batch reads less
    assert curve.y[-1] == pytest.approx(flat.y[-1])                                   # 64 divides 256: all read
    assert "[GB]" in fig.layout.yaxis.title.text and fig.layout.yaxis.range[0] == 0
    assert list(now.x) == [64]


def _tp_fig(sys70):
    """The TP chart for Llama 70B on H100 NVLink (450 GB/s per direction), G = 1…8, B = 64, T = 8k."""
    sys70 = sys70.with_(scaleup_bandwidth_bytes_per_s=450e9)
    g = np.arange(1.0, 9.0)
    t = cluster.tensor_parallel_allreduce_time(sys70, 64, gpus=g, hop_latency_s=2e-6)
    r = decode_step(sys70, 64, 8192, chips=g, t_comm=np.stack([np.zeros_like(g), t]))
    return fig_moe.tp_vs_gpus(g, t, r.t_weights_s[1], r.t_step_s[0], r.t_step_s[1], r.bound[1], r.fits[1],
                              domain=8, g_now=8, t_step_now=float(r.t_step_s[1][-1]))


def test_tp_vs_gpus(sys70):
    fig = _tp_fig(sys70)
    validate(fig)
    names = _names(fig)
    assert names[:4] == ["weight fetch W/(G·bw)", "TP all-reduce", "step, communication free",
                         "step with the all-reduce"]
    ar = np.asarray(fig.data[1].y, float)
    assert np.isnan(ar[0]) and np.all(np.diff(ar[1:]) > 0)          # no all-reduce on one GPU; grows with G
    assert 8 in vline_xs(fig)
    assert "[ms]" in fig.layout.yaxis.title.text and "G (chips)" in fig.layout.xaxis.title.text


def test_breakdown_is_the_shared_step_breakdown():
    terms = {"matmul": 1e-3, "weights": 2e-3, "kv": 1e-3, "comm": 5e-4}
    fig = fig_moe.breakdown(terms, "lecture", "t")
    validate(fig)
    assert [t.name for t in fig.data] == ["matmul", "weights", "kv", "comm"]
    # The legend fix lives in figures.step_breakdown (legend hung from the figure's bottom edge).
    assert fig.to_dict()["layout"] == figures.step_breakdown(terms, "lecture", "t").to_dict()["layout"]
    assert fig.layout.legend.yref == "container" and fig.layout.legend.y == 0


# ---- log-axis labels: never Plotly's small digits 2 3 4 … 9 ("D1")

@pytest.mark.parametrize("lo,hi,want", [
    (1.0, 500.0, 1),          # 2.7 decades: powers of ten only
    (1.0, 100.0, 1),          # exactly 2 decades: powers of ten
    (2.0, 60.0, "D2"),        # 1.5 decades: 1, 2, 5, 10, 20, 50
    (1.0, 10.0, "D2"),        # one decade: 1, 2, 5, 10
    (3.0, 20.0, None),        # 0.8 decade: Plotly's own (few, fully labelled) ticks
])
def test_log_ticks_by_span(lo, hi, want):
    ticks = fig_moe.log_ticks(np.geomspace(lo, hi, 7), [np.nan, 0.0, -1.0])   # NaN, 0, < 0 ignored
    assert ticks.get("dtick") == want
    assert ticks.get("dtick") != "D1"


def test_count_ticks_powers_of_two_under_two_decades():
    # G = 1…8 (a dense model's TP over an 8-GPU node): 1, 2, 4, 8 — not a lone "1" at the left edge.
    t = fig_moe.count_ticks(np.arange(1.0, 9.0))
    assert t["tickvals"] == [1, 2, 4, 8] and t["ticktext"] == ["1", "2", "4", "8"]
    # G = 1…72: 1 … 64 and one more power of two covering 72.
    assert fig_moe.count_ticks(np.arange(1.0, 73.0))["tickvals"] == [2.0 ** i for i in range(8)]
    # ≥ 2 decades: 1, 10, 100, 1k.
    assert fig_moe.count_ticks(np.geomspace(1, 512, 9)) == COUNT_DECADES


def test_moe_log_axes_have_readable_labels(sys70, dsv3_lecture):
    """The TP chart (G = 1…8, step times within two decades) and the all-to-all chart: no axis is
    left to Plotly's automatic log labels, which on a tall chart are the small digits 2 3 4 … 9."""
    tp = _tp_fig(sys70)
    validate(tp)
    assert list(tp.layout.xaxis.tickvals) == [1, 2, 4, 8]
    _, _, _, comm = _comm_fig(dsv3_lecture)
    for fig in (tp, comm):
        y = np.concatenate([np.asarray(tr.y, float) for tr in fig.data if tr.y is not None])
        y = y[np.isfinite(y) & (y > 0)]
        assert np.log10(y.max() / y.min()) >= 1              # a decade or more: Plotly would pick D1 or D2
        assert fig.layout.yaxis.dtick in (1, "D2"), fig.layout.yaxis
        assert fig.layout.xaxis.dtick == 1 or fig.layout.xaxis.tickvals is not None
