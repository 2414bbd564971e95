"""Every use of Streamlit's private internals, in one place, each with the reason it is needed.

The app relies on a few things Streamlit does not promise to keep.  They are checked on the Streamlit
minor version that requirements.txt pins, and the tests named beside each use fail if a later version
moves them.  Nothing outside this module touches a private Streamlit name.
"""

from __future__ import annotations

from typing import Any


def rearm_page(page: Any) -> None:
    """Let `page.run()` be called again in this run.

    Why: `StreamlitPage.run()` allows one call per run of app.py, and a fragment rerun runs the page
    once more without app.py.  Streamlit 1.67 keeps that flag in `_can_be_called`
    (tests/browser/test_fragment.py fails if a later version changes this)."""
    page._can_be_called = True
