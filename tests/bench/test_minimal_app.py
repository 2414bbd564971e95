"""bench/minimal_app.py, the benchmarks' stock baseline: one chart by default, `?charts=N` draws N
(bench_ui.py times the stock app drawing as many charts as a page redraws), bad values fall back."""


import pytest
from streamlit.testing.v1 import AppTest

from tests import ROOT

APP = ROOT / "bench" / "minimal_app.py"


def charts(query: str | None) -> int:
    at = AppTest.from_file(str(APP), default_timeout=30)
    if query is not None:
        at.query_params["charts"] = query
    at.run()
    assert not at.exception
    return len(at.get("plotly_chart"))


@pytest.mark.parametrize(("query", "n"), [(None, 1), ("1", 1), ("4", 4), ("6", 6),
                                          ("0", 1), ("-3", 1), ("99", 8), ("four", 1), ("", 1)])
def test_charts_parameter(query, n):
    assert charts(query) == n


def test_every_chart_follows_the_slider():
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params["charts"] = "3"
    at.run()
    before = [c.proto.spec for c in at.get("plotly_chart")]
    at.sidebar.select_slider[0].set_value(128).run()
    after = [c.proto.spec for c in at.get("plotly_chart")]
    assert len(before) == len(after) == 3
    assert all(b != a for b, a in zip(before, after))
