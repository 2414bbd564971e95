"""Checks for figures built without plotly's run-time validation (ui/plot.Spec)."""

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


def validate(fig: go.Figure) -> None:
    """Full plotly validation: a misspelled property raises ValueError.  Validation also expands
    "magic underscore" keys nested in dicts (`marker={"line_width": 3}`), which the unvalidated
    figure would send to the browser as they are (plotly.js ignores them): no key may change."""
    raw = fig.to_dict()
    assert key_paths(go.Figure(raw).to_dict()) == key_paths(raw)
