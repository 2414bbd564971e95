"""Export: the toolbar's image options and the CSV of a chart's points (ui/elements/export.py)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from tests.app.helpers import PAGES, app, assert_clean, chart_configs, chart_elements, charts
from ui.elements import export, live_chart, live_tex
from ui.figures.plot import Spec


def test_image_config_png_is_presentation_size_at_3x_and_svg_is_vector():
    png = export.image_config("png", "latency")["toImageButtonOptions"]
    assert png == {"format": "png", "filename": "latency", "width": 1600, "height": 900, "scale": 3}
    svg = export.image_config("svg", "latency")["toImageButtonOptions"]
    assert svg["format"] == "svg" and "scale" not in svg
    assert export.image_config("gif", "x")["toImageButtonOptions"]["format"] == "png"


def test_csv_has_one_row_per_plotted_point():
    x = np.array([1.0, 2.0, 4.0])
    fig = go.Figure([go.Scatter(x=x, y=x ** 2, name="square"), go.Scatter(x=[8], y=[3], name="now")],
                    layout={"title": {"text": "Demo <b>chart</b>"}, "xaxis": {"title": {"text": "batch B"}},
                            "yaxis": {"title": {"text": "time [ms]"}}})
    text = export.figure_csv(fig)
    first, rest = text.split("\n", 1)
    assert first == "# x: batch B; y: time [ms]"
    df = pd.read_csv(io.StringIO(rest))
    assert list(df.columns) == ["chart", "trace", "x", "y"]
    assert len(df) == 4 and set(df.chart) == {"Demo chart"}
    sq = df[df.trace == "square"]
    assert sq.y.tolist() == [1.0, 4.0, 16.0]


def test_heatmap_cells_are_rows_with_z():
    fig = go.Figure(go.Heatmap(x=[1, 2, 3], y=[10, 20], z=[[1, 2, 3], [4, 5, 6]], name="map"))
    df = export.figure_frame(fig)
    assert len(df) == 6
    assert df[(df.x == 3) & (df.y == 20)].z.item() == 6


def test_spec_built_figures_export_their_arrays():
    spec = Spec()
    spec.trace("scatter", x=np.geomspace(1, 100, 5), y=np.arange(5.0), name="curve")
    df = export.figure_frame(spec.figure())
    assert len(df) == 5 and df.y.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_a_current_dot_drawn_as_a_shape_exports_as_its_point():
    """Spec.now_point draws the current value as a shape: the CSV has its row (legend name, x, y), as
    the one-point marker trace gave, and no row of the invisible room-keeping markers."""
    spec = Spec()
    spec.trace("scatter", x=np.geomspace(1, 100, 5), y=np.arange(1.0, 6.0), name="curve")
    spec.now_point(10.0, 3.0, name="B = 10", marker={"size": 16, "color": "#D62728"},
                   room_x=np.geomspace(1, 100, 5), room_y=np.arange(1.0, 6.0))
    df = export.figure_frame(spec.figure())
    assert df.trace.tolist() == ["curve"] * 5 + ["B = 10"]
    assert (df.x.iloc[-1], df.y.iloc[-1]) == (10.0, 3.0)


def test_a_dot_anchored_in_the_axis_domain_exports_its_data_point():
    """On a chart with explicit ranges (the KV bound map) the dot is anchored at its fraction of each
    axis domain; the CSV turns that back into data units through the ranges (log axes: 10^)."""
    spec = Spec()
    spec.trace("heatmap", x=[1e3, 1e6], y=[1.0, 512.0], z=[[0, 1], [1, 0]], name="map")
    spec.now_point(8192.0, 64.0, name="current (T, B)", marker={"size": 16, "color": "#D62728"},
                   ranges=([3.0, 6.0], [0.0, float(np.log10(512))]))
    spec.layout = {"xaxis": {"type": "log", "range": [3.0, 6.0]},
                   "yaxis": {"type": "log", "range": [0.0, float(np.log10(512))]}}
    df = export.figure_frame(spec.figure())
    assert df.trace.tolist() == ["map"] * 4 + ["current (T, B)"]
    assert (df.x.iloc[-1], df.y.iloc[-1]) == (8192.0, 64.0)


@pytest.mark.parametrize("page", sorted(set(PAGES) - {"custom"}))
def test_every_chart_on_a_page_has_a_csv_button_and_the_chosen_image_format(page):
    at = app({"img": "svg"}, page=page)
    assert_clean(at)
    n = len(charts(at))
    assert n >= 1
    buttons = [b for b in at.get("download_button") if b.key.endswith(export.CSV_SUFFIX)]
    assert len(buttons) == n
    configs = chart_configs(at)
    assert len(configs) == n
    for cfg in configs:
        assert cfg["toImageButtonOptions"]["format"] == "svg"


def test_pages_table_is_complete():
    assert {"batch", "custom"} <= set(PAGES)


# ---------------------------------------------------------------- the in-place chart element and its fallback

def test_every_chart_is_the_in_place_element_by_default():
    at = app()
    assert_clean(at)
    els = chart_elements(at)
    assert len(els) >= 1
    assert all(el.type == "bidi_component" for el in els), [el.type for el in els]
    assert not at.get("plotly_chart")
    # keyed by the chart's key alone: its id survives a rerun with another figure (no remount)
    assert els[0].key == "latency_vs_batch"


def test_a_dial_move_keeps_each_chart_id_and_changes_its_figure():
    at = app()
    ids = [el.proto.id for el in chart_elements(at)]
    before = charts(at)
    at.select_slider(key="b").set_value(96).run()
    assert_clean(at)
    assert [el.proto.id for el in chart_elements(at)] == ids
    assert charts(at)[0]["data"] != before[0]["data"]


def test_the_element_sends_what_st_plotly_chart_would(monkeypatch):
    """The same figure JSON either way: the forced fallback (ROOFLINE_CHART=plotly) draws
    st.plotly_chart, whose spec is the reference."""
    live = app(page="kv-cache")
    assert_clean(live)
    monkeypatch.setenv(live_chart.ENV_SWITCH, "plotly")
    stock = app(page="kv-cache")
    assert_clean(stock)
    assert not [el for el in stock.get("bidi_component") if live_chart.is_chart(el.proto)]
    assert len(stock.get("plotly_chart")) == len(chart_elements(live)) >= 1
    assert charts(stock) == charts(live)
    assert chart_configs(stock) == chart_configs(live)


def test_a_missing_asset_falls_back_to_st_plotly_chart_and_says_why_once(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(live_chart, "ASSET_DIR", tmp_path / "nowhere")
    monkeypatch.setattr(live_chart, "_broken", None)
    monkeypatch.setattr(live_chart, "_mount", None)
    at = app()
    assert_clean(at)
    n = len(at.get("plotly_chart"))
    assert n >= 1 and not [el for el in at.get("bidi_component") if live_chart.is_chart(el.proto)]
    assert len([b for b in at.get("download_button") if b.key.endswith(export.CSV_SUFFIX)]) == n
    at.select_slider(key="b").set_value(96).run()
    assert_clean(at)
    err = capsys.readouterr().err
    assert err.count("in-place chart element unavailable") == 1 and "nowhere" in err


def test_registration_that_raises_falls_back(monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("internals moved")
    from streamlit.components.v2 import component_manager
    monkeypatch.setattr(component_manager.BidiComponentManager, "register_from_manifest", broken)
    for module in (live_chart, live_tex):
        monkeypatch.setattr(module, "_broken", None)
        monkeypatch.setattr(module, "_mount", None)
    at = app()
    assert_clean(at)
    assert len(at.get("plotly_chart")) >= 1 and at.latex and not at.get("bidi_component")
    assert "internals moved" in live_chart._broken and "internals moved" in live_tex._broken


def test_payload_is_plotly_json_with_base64_arrays():
    fig = go.Figure(go.Scatter(x=np.array([1.0, 2.0]), y=np.array([3.0, 4.0]), name="a"),
                    layout={"height": 320})
    msg = json.loads(live_chart.payload(fig, {"displaylogo": False}))
    assert msg["config"] == {"displaylogo": False}
    assert msg["figure"] == json.loads(fig.to_json())
    assert msg["figure"]["data"][0]["x"]["dtype"] == "f8"          # base64 typed array, not a list
    assert live_chart.figure_of(type("P", (), {"bytes": live_chart.payload(fig, {})})()) == msg["figure"]
    assert live_chart.height_of(fig) == 320 and live_chart.height_of(go.Figure()) == live_chart.DEFAULT_HEIGHT


def test_chart_protos_finds_both_kinds_in_a_runs_deltas():
    """What websocket clients (bench_load, test_deploy) read: the element's and st.plotly_chart's protos."""
    from streamlit.proto.Element_pb2 import Element
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    live = Element()
    live.bidi_component.component_name = live_chart.NAME
    live.bidi_component.bytes = live_chart.payload(fig, {"displaylogo": False})
    other = Element()
    other.bidi_component.component_name = "someone.else"
    stock = Element()
    stock.plotly_chart.spec = fig.to_json()
    stock.plotly_chart.config = '{"displaylogo": false}'
    protos = live_chart.chart_protos([live, other, stock])
    assert len(protos) == 2
    assert live_chart.figure_of(protos[0]) == live_chart.figure_of(protos[1]) == json.loads(fig.to_json())
    assert live_chart.message_of(protos[1])["config"] == {"displaylogo": False}
