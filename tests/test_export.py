"""Export: the toolbar's image options and the CSV of a chart's points (ui/export.py)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from tests.apptest_helpers import PAGES, app, assert_clean, charts
from ui import export
from ui.plot import Spec


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


@pytest.mark.parametrize("page", sorted(set(PAGES) - {"custom"}))
def test_every_chart_on_a_page_has_a_csv_button_and_the_chosen_image_format(page):
    at = app({"img": "svg"}, page=page)
    assert_clean(at)
    n = len(charts(at))
    assert n >= 1
    buttons = [b for b in at.get("download_button") if b.key.endswith(export.CSV_SUFFIX)]
    assert len(buttons) == n
    for el in at.get("plotly_chart"):
        assert '"format": "svg"' in el.proto.config or '"format":"svg"' in el.proto.config


def test_pages_table_is_complete():
    assert {"batch", "custom"} <= set(PAGES)
