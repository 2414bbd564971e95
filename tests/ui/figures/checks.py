"""Checks for figures built without plotly's run-time validation (ui/figures/plot.Spec), and readers of them."""

from __future__ import annotations

import plotly.graph_objects as go


def key_paths(d, path=()) -> set[tuple]:
    """Every dict key in a nested dict/list structure, as a path."""
    out = set()
    if isinstance(d, dict):
        for k, v in d.items():
            out |= {(*path, k)} | key_paths(v, (*path, k))
    elif isinstance(d, (list, tuple)):
        for i, v in enumerate(d):
            out |= key_paths(v, (*path, i))
    return out


def vline_xs(fig: go.Figure) -> list[float]:
    """x of every vertical line shape, in drawing order (a vrect of the bound shading has x0 != x1)."""
    return [s.x0 for s in fig.layout.shapes if s.type == "line" and s.x0 == s.x1]


def validate(fig: go.Figure) -> None:
    """Full plotly validation: a misspelled property raises ValueError.  Validation also expands
    "magic underscore" keys nested in dicts (`marker={"line_width": 3}`), which the unvalidated
    figure would send to the browser as they are (plotly.js ignores them): no key may change."""
    raw = fig.to_dict()
    assert key_paths(go.Figure(raw).to_dict()) == key_paths(raw)
