"""Presenter walkthrough — the lecture's argument, one step at a time (ui/present/walkthrough.py has the steps).

← / → (or the buttons) move between steps; the step is in the URL (`wk_step`), so a link opens at
that step; `wk_present=1` hides the app's chrome and enlarges the type for a projector. Charts with
a sweep have a ▶ button that runs the batch (or context) across the curve in the browser.
"""

import html

import streamlit as st

from ui.elements import export
from ui.elements.live_tex import latex
from ui.figures.context import TITLE_LINE_PX
from ui.present import deck, qr
from ui.present.walkthrough import STEPS
from ui.state import dials
from ui.state.dials import choice_dial, page_dial
from ui.state.view import current_view, show_view_notes, system_caption
from views import script

PAGE = ("walkthrough",)
N = len(STEPS)
ss = st.session_state

page_dial(choice_dial("wk_step", list(range(1, N + 1)), 1, PAGE))
page_dial(choice_dial("wk_present", [0, 1], 0, PAGE))

PRESENT_CHART_PX = 500          # the chart of a slide with a two-line sentence and one equation
PRESENT_LINE_CHARS = 150        # characters of the sentence per line at 1.7rem on a 1920 px screen
PRESENT_LINE_PX = 42            # one more line of the sentence
PRESENT_EQUATION_PX = 58        # one more equation
LEGEND_GAP_PX = 80              # from the plot's bottom to a legend under it: tick labels and axis title


def present_chart_px(sentence: str, equations: int) -> int:
    """The chart's height on a slide: what the step's longer sentence or further equations take is
    taken off the chart, so that the whole step stays on one 1080 px screen."""
    lines = -(-len(sentence) // PRESENT_LINE_CHARS)
    return max(300, PRESENT_CHART_PX - PRESENT_LINE_PX * max(0, lines - 2)
               - PRESENT_EQUATION_PX * max(0, equations - 1))


PRESENT_CSS = """
<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stHeader"],
[data-testid="stToolbar"], [data-testid="stDecoration"] { display: none !important; }
[data-testid="stMainBlockContainer"] { padding-top: 1.2rem !important; padding-bottom: 1rem !important;
                                        max-width: 100% !important; }
[class*="__chart_csv"] { display: none !important; }   /* a slide has no CSV button (the deck and the page do) */
[data-testid="stMarkdown"] p { font-size: 1.7rem !important; line-height: 1.4 !important; }
/* The controls' labels a size of their own: at the sentence's 1.7rem a 1400 px screen cut them off ("← B…"). */
[data-testid="stButton"] p, [data-testid="stLinkButton"] p, [data-testid="stDownloadButton"] p,
[data-testid="stPageLink"] p, [data-testid="stCheckbox"] p { font-size: 1.2rem !important; }
[data-testid="stCaptionContainer"] p { font-size: 1.15rem !important; }
[data-testid="stSlider"] p, [data-testid="stSlider"] div { font-size: 1rem !important; }
.katex { font-size: 1.6em !important; }
h1 { font-size: 3rem !important; }
</style>
"""


def _go(target: int) -> None:
    """Go to a step.  The target is fixed when the button is drawn, so a key press that reaches the
    app twice (two reruns racing on a busy machine) still moves one step, not two."""
    ss["wk_step"] = min(N, max(1, int(target)))


def _jump() -> None:
    ss["wk_step"] = int(ss["_wk_jump"])


def _toggle_qr() -> None:
    ss[QR_KEY] = not ss.get(QR_KEY, False)


QR_KEY = "_wk_qr"        # session only, not a URL dial: the audience's copy of the link opens without it
QR_CSS = """
<style>
.wk-qr { display: flex; flex-direction: column; align-items: center; gap: 0.6rem; margin: 0.5rem 0 1.5rem; }
.wk-qr img { width: min(78vh, 92vw); height: auto; display: block; image-rendering: pixelated; }
.wk-qr p { font-size: 1.4rem; word-break: break-all; text-align: center; margin: 0; }
</style>
"""


def audience_qr(title: str) -> None:
    """The share link of what is on screen now, as a QR code big enough to read from the back of a room
    (78 % of the screen's height: on a 2 m projection ≈ 1.5 m, read by a phone ~10 m away)."""
    # The app writes the URL after the page: write it now (and judge this page's URL keys first, as the
    # app would), so the link holds a step the buttons changed in this very run.
    dials.note_unknown_page_keys()
    dials.write_url()
    link = dials.share_link()
    # as an <img> of the SVG: st.html's sanitiser drops inline <svg> (checked in Chromium)
    st.html(QR_CSS + f'<div class="wk-qr" data-link="{html.escape(link)}"><img src="{qr.svg_data_uri(link, title)}" '
            f'alt="QR code of this view\'s link"><p>Scan for this view: {html.escape(link)}</p></div>')


view = current_view()
present = int(ss["wk_present"]) == 1
if present:
    st.html(PRESENT_CSS)     # a fixed stylesheet; no user text goes into it

k = int(ss["wk_step"])
step = STEPS[k - 1]

top = st.columns([1.25, 1.25, 4.5, 2.2, 1.3] if present else [1, 1, 5, 2.2])
top[0].button("← Back", key="wk_prev", shortcut="Left", disabled=k == 1, on_click=_go, args=(k - 1,),
              help="Previous step (← key)")
top[1].button("Next →", key="wk_next", shortcut="Right", disabled=k == N, on_click=_go, args=(k + 1,),
              type="primary", help="Next step (→ key)")
# The jump slider has its own key: bound to wk_step itself, its stale browser value could undo a
# step the buttons just made when reruns overlap.
ss["_wk_jump"] = k
top[2].select_slider("Step", options=list(range(1, N + 1)), key="_wk_jump", on_change=_jump,
                     format_func=lambda i: f"{i}. {STEPS[i - 1].title}", label_visibility="collapsed")
top[3].toggle("Presentation mode", key="wk_present_toggle", value=present,
              help="Hides the sidebar and the app's header and enlarges the type. In a link: wk_present=1.",
              on_change=lambda: ss.__setitem__("wk_present", 1 if ss["wk_present_toggle"] else 0))

if present:
    top[4].button("QR code", key="wk_qr_button", shortcut="q", on_click=_toggle_qr, type="secondary",
                  help="Show or hide a QR code of this view's link for the audience (q key).")

st.title(f"{k}. {step.title}")
if present and ss.get(QR_KEY):
    audience_qr(f"Step {k}: {step.title}")
if not present:
    st.caption(system_caption(view))
    show_view_notes(view)

try:
    shown = step.build(view)
except ValueError as exc:    # e.g. a model with neither attention shapes nor a KV figure
    st.warning(f"This step cannot be drawn for this chip and model: {exc}. Change a dial in the sidebar.",
               icon="⚠️")
    st.stop()

st.markdown(shown.sentence)
fig = shown.fig
# Presentation mode is a slide: the step's sentence, chart, equation and links on one 1080 px screen
# (tests/browser/test_layout.py), so a shorter chart and no caption under it (its CSV button is hidden).
fig.layout.height = present_chart_px(shown.sentence, len(shown.latex)) if present else 600
# A title wrapped for phones (ui.figures.context.titled_layout) took its lines from the top margin: give them back.
fig.layout.height += TITLE_LINE_PX * (fig.layout.title.text or "").count("<br>")
if present and fig.layout.legend.orientation == "h" and fig.layout.legend.y is not None and fig.layout.legend.y < 0:
    # A legend under the plot sits a share of the plot's height below it: keep it LEGEND_GAP_PX clear of
    # the axis, past the tick labels and the axis title, however short the slide's chart is.
    m = fig.layout.margin
    plot_px = fig.layout.height - (m.t if m.t is not None else 60) - (m.b if m.b is not None else 110)
    fig.layout.legend.y = min(fig.layout.legend.y, -LEGEND_GAP_PX / max(plot_px, 1))
export.chart(fig, key=f"wk_{step.key}")
if shown.note and not present:
    st.caption(shown.note)
for i, tex in enumerate(shown.latex):
    latex(tex, key=f"walkthrough.{step.key}.{i}")

h, m_, s_ = step.video_s // 3600, step.video_s % 3600 // 60, step.video_s % 60
links = st.columns([2, 2, 2, 3])
links[0].link_button(f"▶ The lecture at {h:d}:{m_:02d}:{s_:02d}", step.video_url,
                     help=f"Chapter: {step.chapter} (Dwarkesh Podcast, Reiner Pope, 2026).")
links[1].page_link(script(step.page), label="Open the chapter page →")
links[2].download_button("⬇ Download deck", data=lambda: deck.build_html(view), key="wk_deck",
                         file_name=f"roofline-walkthrough-{view.chip_key}-{view.model_key}.html", mime="text/html",
                         on_click="ignore",
                         help="Every step of this walkthrough, from these dials, as one HTML file that needs no "
                              "network: ← / → to move, a slider in each chart scrubs the batch or the context. "
                              "Same as `python -m ui.present.deck --out talk.html` with the model CLI's flags.")
links[3].caption(f"Step {k} of {N} · ← / → to move · the address bar holds this step"
                 + (" · presentation mode · q: QR code of this view" if present else ""))
