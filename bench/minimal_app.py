"""The benchmarks' baseline: one sidebar select_slider (the app's batch options) and one Plotly line.

bench_ui.py and bench_load.py run this next to the app, in the same run, and report ratios to it.
"""
import numpy as np
import plotly.graph_objects as go
import streamlit as st

OPTIONS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]
b = st.sidebar.select_slider("Batch", options=OPTIONS, value=64)
x = np.geomspace(1, 65536, 241)
y = 1.0 / x + b * 1e-4 * np.log1p(x)
st.plotly_chart(go.Figure(go.Scatter(x=x, y=y, mode="lines")), key="chart")
