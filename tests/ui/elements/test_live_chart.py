"""The in-place chart element's payload (ui/live_chart.payload) is exactly what plotly.io.to_json writes.

payload() serialises the figure's own validated dicts with orjson and plotly's base64 typed-array
format, skipping plotly's deep copy; the browser and the tests' readers rely on the same JSON.  Each
figure here is compared, parsed, against `{"config": …, "figure": json.loads(pio.to_json(fig))}`, the
reference being plotly's own serialiser.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest

from model import decode_step
from tests.app.helpers import PAGES, app, assert_clean
from ui.elements import live_chart
from ui.figures import batch as figures
from ui.figures import kv_cache as fig_kv
from ui.figures.plot import Spec, SpecFigure, as_plotly


def reference(fig, config) -> dict:
    return {"config": config, "figure": json.loads(pio.to_json(fig, validate=False))}


def real_figures(system):
    grid = np.unique(np.concatenate([np.geomspace(1, 65536, 97), [4096.0]]))
    r = decode_step(system, grid, 8192)
    yield figures.curve_vs_batch(grid, r.t_step_s * 1e3, r.fits, r.bound, name="latency", unit="ms", title="t",
                                 y_title="ms", b_star=700.0, b_star_no_kv=600.0, b_now=64, y_now=1.0,
                                 extra=[("matmul", r.t_matmul_s * 1e3, "#123456")])
    yield figures.pareto(r.tokens_per_s_per_user, r.tokens_per_s_per_chip, grid, r.fits, (1.0, 2.0, 64.0))
    b, c = np.geomspace(1, 65536, 17), np.geomspace(128, 1 << 20, 14)
    m = decode_step(system, b[:, None], c[None, :])
    yield fig_kv.bound_map(b, c, m.bound, m.fits, crossover=np.full(b.shape, 5000.0), never_context=None,
                           now=(64.0, 8192.0))


def odd_figure():
    """Every kind of array the payload treats specially: NaN, 2-D (a shape), int64 narrowed (and one too
    wide for base64), uint64, float32, text, an empty array, a skipped key (range)."""
    sp = Spec()
    x = np.geomspace(1, 1000, 7)
    sp.scatter(x=x, y=np.where(x > 100, np.nan, x), name="nan", customdata=np.array(["a"] * 7, dtype=object))
    sp.trace("heatmap", z=np.arange(12.0).reshape(3, 4), x=[1, 2, 3, 4], y=np.arange(3))
    sp.scatter(x=np.arange(5, dtype=np.int64) * 10**12, y=np.arange(5, dtype=np.uint64) * 1000,
               marker={"size": np.arange(5, dtype=np.float32)}, customdata=np.arange(5, dtype=np.int64))
    sp.scatter(x=np.array([], float), y=np.array([], float), name="empty")
    sp.layout = figures.base_layout("odd", xaxis={"range": np.array([0.0, 3.0])})
    return sp.figure()


def test_payload_is_plotlys_json_for_the_apps_figures(sys70):
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 3}}
    for fig in [*real_figures(sys70), odd_figure()]:
        assert json.loads(live_chart.payload(fig, config)) == reference(fig, config)


def test_payload_without_orjson_is_the_same(sys70, monkeypatch):
    fig = odd_figure()
    fast = json.loads(live_chart.payload(fig, {}))
    monkeypatch.setattr(live_chart, "orjson", None)
    assert json.loads(live_chart.payload(fig, {})) == fast == reference(fig, {})


@pytest.mark.parametrize("use_orjson", [True, False])
def test_the_message_is_config_and_figure_only(monkeypatch, use_orjson):
    if not use_orjson:
        monkeypatch.setattr(live_chart, "orjson", None)
    assert set(json.loads(live_chart.payload(odd_figure(), {"scrollZoom": False}))) == {"config", "figure"}


def test_typed_arrays_are_base64_with_their_shape():
    f = json.loads(live_chart.payload(odd_figure(), {}))["figure"]
    z = f["data"][1]["z"]
    assert z["dtype"] == "f8" and z["shape"] == "3, 4"
    assert f["data"][2]["customdata"]["dtype"] == "i1"          # int64 0..4 narrowed as plotly does
    assert isinstance(f["data"][2]["x"], list)                   # 4e12 fits no 32-bit type: plain numbers
    assert f["layout"]["xaxis"]["range"] == [0.0, 3.0]           # plotly never base64s a range


@pytest.mark.parametrize("bad", [object()])
def test_payload_refuses_what_json_cannot_hold(bad):
    with pytest.raises(TypeError):
        live_chart._leftover(bad)


# ---------------------------------------------------------------- every chart the app draws

@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_chart_of_every_page_sends_plotlys_json(page, monkeypatch):
    """What each page's charts send is plotly's own JSON of the figure, and a figure that nothing read
    as a go.Figure is sent straight from its dicts (no go.Figure built per chart per rerun)."""
    real, sent = live_chart.payload, []

    def spy(fig, config):
        built = not isinstance(fig, SpecFigure) or fig.built
        out = real(fig, config)
        sent.append((fig, config, out, built))
        return out

    monkeypatch.setattr(live_chart, "payload", spy)
    at = app(page=page)          # runs the default page first, then this one
    sent.clear()
    at.run()                     # this page's charts only
    assert_clean(at)
    if page == "custom":         # the editor draws no chart
        assert not sent
        return
    assert sent, f"/{page} drew no chart"
    for fig, config, out, _ in sent:
        ref = reference(as_plotly(fig), config)
        ref["figure"].pop("frames", None)      # the walkthrough's scrub frames are for the deck export only
        assert json.loads(out) == ref
    from_dicts = [not built for *_, built in sent]
    if page != "walkthrough":          # the walkthrough sizes its figure through go.Figure's layout
        assert all(from_dicts), f"/{page}: {from_dicts.count(False)} of {len(sent)} figures built a go.Figure first"
