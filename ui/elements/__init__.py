"""Streamlit elements the pages draw with: the in-place chart and equation components, metric grids,
tables, lazy expanders, sections, the stylesheet, chart export."""
