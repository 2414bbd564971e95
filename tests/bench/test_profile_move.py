"""bench/profile_move.py's summaries, on small hand-made profiles (no browser, no server)."""

from __future__ import annotations

from bench.profile_move import js_summary, spy_summary, trace_summary
from tests import ROOT


def test_js_summary_self_time_per_move_by_script():
    # root → plotly fn (3 samples) and react fn (1 sample) and idle (2); every sample 1000 µs.
    profile = {
        "nodes": [
            {"id": 1, "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1}, "children": [2, 3, 4]},
            {"id": 2, "callFrame": {"functionName": "react", "url": "http://h/static/js/plotly.min.js?v=1",
                                    "lineNumber": 22}},
            {"id": 3, "callFrame": {"functionName": "render", "url": "http://h/react-dom.js", "lineNumber": 7}},
            {"id": 4, "callFrame": {"functionName": "(idle)", "url": "", "lineNumber": -1}},
        ],
        "samples": [2, 2, 3, 2, 4, 4],
        "timeDeltas": [0, 1000, 1000, 1000, 1000, 1000, 1000],
    }
    lines = js_summary(profile, moves=2)
    assert lines[0].endswith("busy: 2.0 ms per move (sampled)")      # 4 busy samples × 1 ms ÷ 2 moves
    assert any("1.5 ms  plotly.min.js" in x for x in lines)           # 3 ms ÷ 2 moves
    assert any("0.5 ms  react-dom.js" in x for x in lines)
    assert not any("(idle)" in x for x in lines)


def test_trace_summary_subtracts_nested_events():
    meta = {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "CrRendererMain"}}
    ev = [meta,
          {"ph": "X", "name": "RunTask", "pid": 1, "tid": 2, "ts": 0, "dur": 10_000},
          {"ph": "X", "name": "FunctionCall", "pid": 1, "tid": 2, "ts": 1_000, "dur": 6_000},
          {"ph": "X", "name": "Layout", "pid": 1, "tid": 2, "ts": 2_000, "dur": 2_000},
          {"ph": "X", "name": "RunTask", "pid": 9, "tid": 9, "ts": 0, "dur": 50_000}]   # another thread: ignored
    lines = trace_summary(ev, moves=1)
    assert lines[0].endswith("tasks: 10.0 ms per move")
    got = {x.split("ms  ")[1]: float(x.split("ms")[0]) for x in lines[1:]}
    assert got == {"RunTask": 4.0, "FunctionCall": 4.0, "Layout": 2.0}    # self times: 10-6, 6-2, 2


def test_spy_summary_keeps_app_frames_inclusive():
    raw = (f"run (threading.py:1);<module> ({ROOT}/app.py:10);chart ({ROOT}/ui/elements/export.py:95) 250\n"
           f"run (threading.py:1);<module> ({ROOT}/app.py:10) 250\n"
           "select (selectors.py:468) 500\n")
    lines = spy_summary(raw, moves=1, rate=250)
    assert lines[0].strip() == "2000.0 ms  <module> (app.py)"               # 500 samples ÷ 250 Hz
    assert "1000.0 ms  chart (ui/elements/export.py)" in [x.strip() for x in lines]
    assert not any("selectors" in x for x in lines)
