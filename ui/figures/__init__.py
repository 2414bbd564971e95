"""Figure builders: pure functions, arrays in, plotly figures (or their dicts) out; no Streamlit, no physics."""
