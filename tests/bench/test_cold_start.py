"""bench/cold_start.py: its report on hand-made timelines, and one real cold start of the stock app (a server
and a headless Chromium; the events must come in the order they happen, nothing asserted on time)."""

from __future__ import annotations

from bench import cold_start
from tests.browser.helpers import chromium


def test_the_report_prints_each_start_and_the_median_of_each_event(capsys):
    runs = [{"health": 0.5, "page": 1.0, "websocket": 1.2, "first chart": 3.0},
            {"health": 0.7, "page": 1.4, "websocket": 1.6, "plotly.js asked": 2.5, "first chart": 4.0},
            {"health": 0.6, "page": 1.2, "websocket": 1.3, "plotly.js asked": 2.9, "first chart": 3.6}]
    cold_start.report("app", runs)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "app:"
    assert out[1] == "  1: health 0.50  page 1.00  websocket 1.20  plotly.js asked —  first chart 3.00"
    # Medians over the starts that saw the event: plotly.js asked over two, (2.5 + 2.9) / 2 = 2.70.
    assert out[4] == ("  median: health 0.60 s  page 1.20 s  websocket 1.30 s  plotly.js asked 2.70 s  "
                      "first chart 3.60 s")


def test_one_cold_start_of_the_stock_app_sees_its_events_in_order():
    with chromium() as browser:
        seen = cold_start.one(browser, cold_start.ROOT / "bench" / "minimal_app.py", {})
    assert {"health", "page", "websocket", "first chart"} <= set(seen)
    assert 0 < seen["health"] <= seen["page"] <= seen["first chart"]
    assert seen["websocket"] <= seen["first chart"]
