"""The benchmarks' baseline: one sidebar select_slider (the app's batch options) and Plotly lines.

bench_ui.py and bench_load.py run this next to the app, in the same run, and report ratios to it.  By
default it draws one st.plotly_chart (the baseline the UI targets are stated against);
`?charts=N` (1-8) draws N of them, each changing with the slider, so bench_ui.py can also show what
stock Streamlit takes to redraw as many charts as a page redraws per move.
"""
import numpy as np
import plotly.graph_objects as go
import streamlit as st

OPTIONS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]
b = st.sidebar.select_slider("Batch", options=OPTIONS, value=64)
try:
    n = min(max(int(st.query_params.get("charts", "1")), 1), 8)
except ValueError:
    n = 1
x = np.geomspace(1, 65536, 241)
for k in range(n):
    y = 1.0 / x + (k + 1) * b * 1e-4 * np.log1p(x)
    st.plotly_chart(go.Figure(go.Scatter(x=x, y=y, mode="lines")), key="chart" if k == 0 else f"chart{k}")
