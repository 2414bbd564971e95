"""A lazy expander: what it holds is drawn only while it is open.

Streamlit 1.67's `st.expander(key=..., on_change="rerun")` is a widget: opening or closing it reruns
the fragment it sits in, and `.open` says which.  Widgets out of sight then cost nothing on a move of
another dial: a full rerun re-renders every element it sends, seen or not.  A dial drawn inside keeps
its value while closed only with `persist_state="session"` (Streamlit drops the state of a widget not
drawn in a run).  The open state lives in the session, never in the URL.

    with lazy_expander("Export", key="_export_open") as is_open:
        if is_open:
            st.radio(..., key="img", persist_state="session")

Used by the sidebar's Efficiency and Export dials, Compare's editors and MoE's tensor-parallel part.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import streamlit as st


@contextlib.contextmanager
def lazy_expander(label: str, *, key: str) -> Iterator[bool]:
    """An expander keyed `key` whose open state reruns the page; yields whether it is open."""
    box = st.expander(label, key=key, on_change="rerun")
    with box:
        yield bool(box.open)
