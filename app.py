"""roofline — why LLM tokens cost what they cost.  Entry point: `streamlit run app.py`.

Page config, the shared sidebar dials (seeded from and written back to the URL), navigation.
The chapter scripts live in views/: a folder named pages/ would put Streamlit into its
folder-discovery mode at start-up, and the first deep link (/kv-cache) would show "Page not found".
"""

import logging
import os

import streamlit as st

import views
from ui.elements import section, style
from ui.runtime import assets, coalesce, gc_tuning, streamlit_internals, warm
from ui.state import dials
from ui.state.view import render_sidebar

coalesce.install()        # one event-loop wake-up per burst of messages (ui/runtime/coalesce.py)
assets.install()          # Streamlit's bundle gzipped once (ui/runtime/bundle.py); the charts' files cached
st.set_page_config(page_title="roofline · LLM inference economics", page_icon="📈", layout="wide")
style.inject()            # the one stylesheet (ui/elements/style.py): phones and projectors


def home() -> None:
    """`/` opens the default page at its own address (/batch), keeping the link's parameters: Streamlit
    serves its default page only at `/`, so the first page gets a path that a link can name."""
    st.switch_page(ST_PAGES[views.DEFAULT], query_params=st.query_params.to_dict())


# The navigation, built from the one list of pages (views/__init__.py).
ST_PAGES = {p.name: st.Page(p.script, title=p.title, url_path=p.name) for p in views.PAGES}
NAVIGATION = {section: [ST_PAGES[p.name] for p in views.PAGES if p.section == section] for section in views.SECTIONS}
NAVIGATION[views.SECTIONS[0]].insert(0, st.Page(home, title="Home", url_path="home", default=True,
                                                visibility="hidden"))

page = st.navigation(NAVIGATION, position="top")
# The sidebar dials are drawn by the `shell` fragment below, into this box (so they stay above the
# share link).
dial_box = st.sidebar.container()
# Test hook (tests/browser/test_fragment.py): count full runs, shell runs and page-fragment runs on screen.
TRACE_RUNS = os.environ.get("ROOFLINE_TRACE_RUNS") == "1"


def _count_run(what: str, where: st.delta_generator.DeltaGenerator) -> None:
    if TRACE_RUNS:
        st.session_state[f"_{what}_runs"] = st.session_state.get(f"_{what}_runs", 0) + 1
        where.caption(f"{what} runs: {st.session_state[f'_{what}_runs']}")


_count_run("full", st.sidebar)


def sync_url(write_url: bool = True) -> None:
    """The URL write-back and the sidebar's share link: after the page, or after a section of it that
    reran alone (ui/elements/section.py; in a page run a section only refreshes the box)."""
    if write_url:
        dials.write_url()
    share.code(dials.share_link(), language=None)


@st.fragment
def page_body() -> None:
    """The page, its URL notices and the URL write-back.  A fragment: a page's own dial reruns only
    this (the sidebar and its View are kept from the last full run), which is most of a move's cost
    saved.  Widgets must be drawn inside the fragment, so the notices box (with its Dismiss button)
    is here too, above the page."""
    dials.begin_run()
    _count_run("page", st)
    notice_box = st.container()  # filled after the page ran, so its own URL parameters are judged too
    streamlit_internals.rearm_page(page)   # a fragment rerun runs the page again without app.py
    try:
        with section.page_running(after_section=sync_url):    # ui/elements/section.py: a part that reruns alone
            page.run()
    except Exception as exc:  # never a traceback in front of a user; the dials stay usable
        logging.getLogger("roofline").exception("page failed")
        st.error(f"This view could not be drawn ({type(exc).__name__}: {exc}). "
                 "Change a dial or open the page without URL parameters.")
    dials.note_unknown_page_keys()
    with notice_box:
        dials.show_notices()
    sync_url()
    gc_tuning.freeze_new_imports()   # after a run that imported modules: see ui/runtime/gc_tuning.py


with st.sidebar:
    st.divider()
    st.caption("Share this view: the address bar holds every dial. "
               "Copy it, or use the copy button below.")
    share = st.empty()    # the link, refreshed by the page fragment (a page dial changes it too)


@st.fragment
def shell() -> None:
    """The sidebar dials, then the page.  A fragment too, with the page's fragment nested in it: a
    sidebar dial reruns this (new View, then the page), not app.py, whose navigation, stylesheet and
    share box stay as drawn; a page dial still reruns only the page.  Streamlit 1.67 lets a fragment
    draw into a sidebar box made in the full run (`dial_box`), and a widget it drew there reruns the
    fragment.  Measured against drawing the dials in the full run: a sidebar move's last chart arrives
    7–13 % sooner (docs/performance.md)."""
    render_sidebar(dial_box)
    _count_run("shell", dial_box)
    page_body()


shell()
warm.start()   # the full fit and its cross-validation, once per process, after the first page (ui/runtime/warm.py)
