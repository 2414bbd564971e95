"""Where each chart sits in a page's element tree (AppTest), to check that dial moves keep it there."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.elements import live_chart
from ui.state import dials


def _nodes(at: AppTest):
    """(delta path, node) for every block and element of the page's tree, in order."""
    def walk(node, path):
        yield path, node
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for i, child in children.items():
                yield from walk(child, (*path, i))

    return walk(at._tree, ())


def chart_places(at: AppTest) -> dict[str, tuple[int, ...]]:
    """{chart element id: its delta path} for the in-place chart elements on the page."""
    return {node.proto.id: path for path, node in _nodes(at)
            if getattr(node, "type", None) == "bidi_component" and live_chart.is_chart(node.proto)}


def element_places(at: AppTest) -> dict[tuple[int, ...], str]:
    """{delta path: what the element there is} for every block and element on the page: its type, with
    a v2 component's name and id (the chart and equation elements are keyed)."""
    out = {}
    for path, node in _nodes(at):
        if isinstance(getattr(node, "children", None), dict):
            out[path] = f"block:{getattr(node, 'type', '')}"
            continue
        kind = str(getattr(node, "type", type(node).__name__))
        proto = getattr(node, "proto", None)
        if kind == "bidi_component" and proto is not None:
            kind += f":{proto.component_name}:{proto.id}"
        out[path] = kind
    return out


def dial_moves(at: AppTest) -> list[tuple[str, str, object]]:
    """(where, key, value): each keyed slider of the page body and the sidebar's batch and context
    sliders, at the ends of their ranges."""
    moves = []
    for where, root in (("main", at.main), ("sidebar", at.sidebar)):
        for w in root.select_slider:
            if w.key and not w.key.startswith("_") and (where == "main" or w.key in ("b", "ctx")):
                options = dials.REGISTRY.dials[w.key].options
                moves += [(where, w.key, options[0]), (where, w.key, options[-1])]
        for w in root.slider:
            if w.key and where == "main":
                moves += [(where, w.key, w.min), (where, w.key, w.max)]
    return moves
