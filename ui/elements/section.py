"""Sections: a part of a page whose own dials rerun only that part.

A page is one fragment (app.py's `page_body`): a page dial reruns the whole page, its tables and its
charts, even those the dial does not touch.  A page can mark a stretch of itself whose dials feed
nothing outside it as a `section`: a nested `st.fragment`, so moving one of its dials reruns the
section alone.  Everything else on the page is left as drawn (Streamlit keeps it in the browser).

    @section
    def cross_check(table, Na):          # what it reads from the page: arguments, never globals
        d_head = st.select_slider("d_head", ..., key="pr_dh")
        ...
    cross_check(table, Na)

Rules for a section:
- Its dials must feed only what the section draws.  A dial that another part of the page reads
  belongs outside it.
- An error inside it is shown in its place, as app.py does for a page, and the rest of the page stays.
- It must be called in every full run, even when it has nothing to show (then it returns early): that
  is where Streamlit reserves its slot in the share box.  A section first called in a later run (say,
  in a lazy expander just opened) could not refresh the box on a rerun of its own (the URL still
  follows; the error is logged, not shown).
- It takes what it needs from the page as arguments.  Streamlit replays the arguments of the last
  page run when it reruns the section alone.  A page global may have been reassigned further down
  the page by then.
- On a rerun of its own, no page run follows to write the URL or the share link, so the section runs
  `after_section`, handed over by app.py while the page runs.  In a page run it refreshes the share
  box too (not the URL): Streamlit lets a fragment write to the sidebar on its own rerun only where
  it wrote in the last full run.  The page run's own write after the page lands on the same slot, so
  the last one shows.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import streamlit as st


class _PageRun(threading.local):
    """Set on the script thread while app.py runs a page (a section is then part of that run)."""

    after_section: Callable[..., None] | None = None


_RUN = _PageRun()


@contextlib.contextmanager
def page_running(after_section: Callable[..., None]) -> Iterator[None]:
    """app.py, around `page.run()`: `after_section(write_url=True)` is what a section must do after a
    rerun of its own (the URL write-back and the share link; a page run does them itself, after the
    page).  With `write_url=False` it only refreshes the share box."""
    _RUN.after_section = after_section
    try:
        yield
    finally:
        _RUN.after_section = None


def section(func: Callable[..., None]) -> Callable[..., None]:
    """Decorator: `func` runs as a nested fragment (see the module's docstring)."""
    @st.fragment
    def rerun_alone(after: Callable[..., None] | None, *args: Any, **kwargs: Any) -> None:
        try:
            func(*args, **kwargs)
        except Exception as exc:  # never a traceback in front of a user (app.py's rule, for a rerun of its own)
            logging.getLogger("roofline").exception("section %s failed", func.__name__)
            st.error(f"This part of the page could not be drawn ({type(exc).__name__}: {exc}). "
                     "Change a dial or open the page without URL parameters.")
        if after is not None:
            # Inside a page run too, but then only the share box (app.py writes the URL after the page,
            # once it has judged the URL's parameters): a fragment may write to the sidebar on a rerun
            # of its own only where it wrote in the last full run (Streamlit reserves the slot then;
            # otherwise StreamlitInvalidLayoutContextError).
            try:
                after(write_url=_RUN.after_section is None)
            except Exception:  # a section first drawn outside a full run has no slot there: the box waits
                logging.getLogger("roofline").warning("section %s could not refresh the share box", func.__name__,
                                                      exc_info=True)

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> None:
        rerun_alone(_RUN.after_section, *args, **kwargs)

    return call
