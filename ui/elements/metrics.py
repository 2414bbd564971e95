"""Metrics as one element: a grid of label / value / delta cards drawn by a single `st.html`.

Why not `st.metric`: a dial move re-renders, in the browser, every element whose content changed,
and a page's metrics all change with its dials.  Each `st.metric` costs ≈3 ms of browser main-thread
work per move (a React re-render with its tooltip and styled parts) and ≈0.7 ms of server time; one
grid costs about one element.  Measured on the Batch page (bench/profile_move.py, 2 quiet cores):
ten metrics as `st.metric` → last chart settled ≈240 ms; as one grid ≈205 ms.

    metrics.grid([Metric("Latency per token", "12.3 ms", help="…"), …], columns=3)

It looks like `st.metric` (label, large value, coloured delta with an arrow; `delta_color` normal,
inverse, off or a colour name; `delta_arrow` auto, up, down or off) and keeps `help` as the label's
hover text (a ? mark).  The stylesheet is in ui/elements/style.py (phones: three to a line, smaller values).
`parse(body)` reads the metrics back from the HTML (tests; `tests/apptest_helpers.metrics`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import streamlit as st

COLORS = {"green": "#09ab3b", "red": "#ff2b2b", "off": "rgba(49, 51, 63, 0.6)", "gray": "rgba(49, 51, 63, 0.6)",
          "grey": "rgba(49, 51, 63, 0.6)", "orange": "#ff8700", "blue": "#1c83e1", "violet": "#803df5"}
ARROWS = {"up": "↑", "down": "↓", "off": ""}


@dataclass(frozen=True)
class Metric:
    label: str
    value: str
    delta: str | None = None
    delta_color: str = "normal"       # as st.metric: normal (up green), inverse (up red), off, or a colour name
    help: str | None = None
    delta_arrow: str = "auto"         # auto (from the delta's sign), up, down, off


def _direction(delta: str) -> str:
    return "down" if delta.strip().startswith(("-", "−")) else "up"


def _delta_style(m: Metric) -> tuple[str, str]:
    """(colour, arrow) of the delta, as st.metric draws it."""
    way = _direction(m.delta or "")
    if m.delta_color == "normal":
        color = COLORS["green" if way == "up" else "red"]
    elif m.delta_color == "inverse":
        color = COLORS["red" if way == "up" else "green"]
    else:
        color = COLORS.get(m.delta_color, COLORS["off"])
    arrow = ARROWS[way] if m.delta_arrow == "auto" else ARROWS.get(m.delta_arrow, "")
    return color, arrow


# A value's longest unbroken run of characters, from which on the card shrinks it to fit its width
# rather than break it mid-word ("disaggregated" on a phone's three-to-a-line grid).
FIT_FROM = 8


def _fit_style(value: str) -> str:
    """` style="--rf-w: N"` for a value whose longest word has N ≥ FIT_FROM characters, else ""."""
    n = max((len(w) for w in value.split()), default=0)
    return f' style="--rf-w: {n}"' if n >= FIT_FROM else ""


def _card(m: Metric) -> str:
    e = html.escape
    help_mark = (f'<span class="rf-help" title="{e(m.help)}" aria-label="{e(m.help)}">?</span>'
                 if m.help else "")
    out = ['<div class="rf-metric" data-testid="rfMetric">',
           f'<div class="rf-metric-label" data-testid="rfMetricLabel">{e(m.label)}{help_mark}</div>',
           f'<div class="rf-metric-value" data-testid="rfMetricValue"{_fit_style(m.value)}>{e(m.value)}</div>']
    if m.delta:
        color, arrow = _delta_style(m)
        out.append(f'<div class="rf-metric-delta" data-testid="rfMetricDelta" data-color="{e(m.delta_color)}" '
                   f'style="color: {color}">{arrow + " " if arrow else ""}{e(m.delta)}</div>')
    out.append("</div>")
    return "".join(out)


def html_of(items: Iterable[Metric], columns: int = 3) -> str:
    """The grid's HTML: `columns` cards to a line (fewer if there are fewer metrics)."""
    items = list(items)
    n = max(1, min(columns, len(items)))
    return (f'<div class="rf-metrics rf-cols-{n}" data-testid="rfMetrics">'
            + "".join(_card(m) for m in items) + "</div>")


def grid(items: Sequence[Metric], columns: int = 3) -> None:
    """Draw the metrics as one element."""
    if items:
        st.html(html_of(items, columns))


_CARD = re.compile(
    r'<div class="rf-metric" data-testid="rfMetric">'
    r'<div class="rf-metric-label" data-testid="rfMetricLabel">(?P<label>.*?)'
    r'(?:<span class="rf-help" title="(?P<help>[^"]*)"[^>]*>\?</span>)?</div>'
    r'<div class="rf-metric-value" data-testid="rfMetricValue"(?: style="[^"]*")?>(?P<value>.*?)</div>'
    r'(?:<div class="rf-metric-delta" data-testid="rfMetricDelta" data-color="(?P<color>[^"]*)"[^>]*>'
    r'(?:[↑↓] )?(?P<delta>.*?)</div>)?</div>', re.S)


def parse(body: str) -> list[Metric]:
    """The metrics in a grid's HTML, in order (the inverse of `html_of`, arrows dropped)."""
    u = html.unescape
    return [Metric(u(m["label"]), u(m["value"]), u(m["delta"]) if m["delta"] is not None else None,
                   m["color"] or "normal", u(m["help"]) if m["help"] is not None else None)
            for m in _CARD.finditer(body)]
