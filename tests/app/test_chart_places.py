"""A dial move keeps every chart, and every other element, where it was in the page's element tree.

Streamlit's frontend keeps an element's DOM node only while the element stays at the same place
(delta path); a notice that appears above a chart moves the chart one place down, so its element
is mounted anew and plotly draws it from scratch (`newPlot`) instead of `Plotly.react` — on the MoE
page every move of G did that to all six charts.  Pages put their conditional notices in one
fixed `st.container()` slot; this holds them to it for the ends of each page slider's range and
the sidebar's batch and context (tests/app/chart_places.py).
"""

from __future__ import annotations

import pytest

from tests.app.chart_places import chart_places, dial_moves, element_places
from tests.app.helpers import PAGES, app, assert_clean

CHART_PAGES = [p for p in PAGES if p != "custom"]


@pytest.mark.parametrize("page", CHART_PAGES)
def test_dial_moves_keep_every_chart_and_element_in_its_place(page):
    """Every chart keeps its delta path, and so does every other element: where an element of another
    kind takes an element's place, the frontend removes the one and mounts the other, and so on down
    the page (Fast mode: a note that came and went with the context remounted the heading, the text
    and the table under it, each move).  An element of the same kind in the same place is updated in
    place; elements that only appear, or go, at the end of a block (a notice slot) move nothing."""
    at = app(page=page)
    assert_clean(at)
    charts, elements = chart_places(at), element_places(at)
    assert charts, f"/{page} draws no chart"
    moves = dial_moves(at)
    assert moves
    for where, key, value in moves:
        moved = app(page=page)
        root = moved.main if where == "main" else moved.sidebar
        widget = next(w for w in [*root.select_slider, *root.slider] if w.key == key)
        widget.set_value(value).run()
        assert_clean(moved)
        now = chart_places(moved)
        shifted = {k.rsplit("-", 1)[-1]: (charts[k], now[k]) for k in charts.keys() & now.keys() if charts[k] != now[k]}
        assert not shifted, f"/{page}, {key} = {value!r}: charts moved (path before, after): {shifted}"
        now = element_places(moved)
        changed = {p: (elements[p], now[p]) for p in sorted(elements.keys() & now.keys()) if elements[p] != now[p]}
        assert not changed, f"/{page}, {key} = {value!r}: another element in these places (before, after): {changed}"
