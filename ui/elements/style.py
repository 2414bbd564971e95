"""The app's one stylesheet: every page readable on a phone (390 px wide), unchanged on a desktop.

app.py calls `inject()` once per run, right after `st.set_page_config`.  The rules key on
Streamlit 1.67's `data-testid` attributes and on KaTeX's and Plotly's own class names;
tests/browser/test_layout.py holds them (phone 390 × 844 and projector 1920 × 1080 screenshots of
every page; it fails on horizontal overflow).

What it does, and why:
  * Equations (ui/elements/live_tex.py or st.latex → KaTeX `.katex-display`): on a narrow screen a long
    equation wraps at its top-level relations and operators (=, +, ≥, ⇒ …) instead of running off the right edge.  KaTeX
    already splits a formula into unbreakable `.base` boxes at those points (for inline math);
    display math only forbids the line break (`white-space: nowrap`), so allowing it wraps the
    equation like text.  What still does not fit (one wide fraction, an aligned block) scrolls
    sideways inside its own box (overflow-x: auto), never the page.
  * Metrics (ui/elements/metrics.py's grid; the st.metric rules are kept for any st.metric): on a
    phone Streamlit stacks every column full width, so six metrics took a whole screen.  A grid
    (or a column holding one metric) keeps three to a line (two in a row of four), with a smaller
    value; labels wrap instead of being cut with "…".
  * Charts (Plotly): on a touch screen the mode bar is always shown, over the chart's title, and a
    title at projector size runs off a 390 px chart: hide the mode bar on phones (the CSV button
    and Streamlit's full-screen button stay) and draw titles, axis titles, legends and notes a size smaller.
  * Links to other pages (st.page_link): Streamlit keeps the label on one line and cuts it with "…" (at
    390 px the Prices page's "…on the sidebar's system" lost its last letter); on a phone it wraps.
  * Navigation: below 640 px Streamlit 1.67 folds the top navigation bar into the sidebar, whose
    only handle is a small "»" icon; the handle gets a border and a label, "Pages & dials".
On a screen wider than 640 px nothing changes, except that a too-wide equation scrolls in its box.
"""

from __future__ import annotations

import streamlit as st

PHONE_MAX_PX = 640   # Streamlit's own breakpoint: below it columns stack and the top nav folds into the sidebar
NAV_LABEL = "Pages & dials"

# A column whose only element is a metric.  (:has() cannot nest, so "a row of metrics only" cannot
# be said in CSS; the rule is per column, and a column in a mixed row simply keeps its share.)
_METRIC_COL = ('[data-testid="stColumn"]:has(> [data-testid="stVerticalBlock"] > '
               '[data-testid="stElementContainer"]:only-child > [data-testid="stMetric"])')
_ROW_OF_4 = '[data-testid="stColumn"]:first-child:nth-last-child(4)'
_METRIC_ROW = ('[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] > [data-testid="stVerticalBlock"] > '
               '[data-testid="stElementContainer"]:only-child > [data-testid="stMetric"])')
_UNCLIP = "white-space: normal; overflow: visible; text-overflow: clip;"   # undo Streamlit's one-line ellipsis

_RULES = """
/* ---- equations: never wider than their column ---- */
.katex-display { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
/* the equation element (ui/elements/live_tex.py) spaced as st.latex's markdown block, which ends 1rem short */
.stLiveTex { margin-bottom: -1rem; display: flex; justify-content: center; }   /* centred, shrink-wrapped */
.stLiveTex > .katex-display { min-width: 0; }
.stLiveTexSource { font-family: monospace; white-space: pre-wrap; margin-bottom: 0; }

/* ---- metrics (ui/elements/metrics.py): one grid element, st.metric's look ---- */
.rf-metrics { display: grid; column-gap: 1rem; row-gap: 0.75rem; margin-bottom: 0.25rem; }
.rf-cols-1 { grid-template-columns: minmax(0, 1fr); }
.rf-cols-2 { grid-template-columns: repeat(2, minmax(0, 1fr)); }
.rf-cols-3 { grid-template-columns: repeat(3, minmax(0, 1fr)); }
.rf-cols-4 { grid-template-columns: repeat(4, minmax(0, 1fr)); }
.rf-cols-5 { grid-template-columns: repeat(5, minmax(0, 1fr)); }
.rf-cols-6 { grid-template-columns: repeat(6, minmax(0, 1fr)); }
.rf-metric { min-width: 0; display: flex; flex-direction: column; container-type: inline-size; }
.rf-metric > .rf-metric-label { flex: 1 0 auto; }   /* a label that wraps pushes nothing: values line up */
.rf-metric-label { font-size: 0.875rem; line-height: 1.4; overflow-wrap: anywhere; }
.rf-help { display: inline-flex; align-items: center; justify-content: center; width: 0.95rem; height: 0.95rem;
           margin-left: 0.35rem; border: 1px solid currentColor; border-radius: 50%; font-size: 0.65rem;
           line-height: 1; vertical-align: 0.05rem; opacity: 0.55; cursor: help; }
.rf-metrics { --rf-vs: 2.25rem; }
.rf-metric-value { font-size: var(--rf-vs); line-height: 1.25; padding-bottom: 0.1rem; overflow-wrap: anywhere; }
/* a long word (metrics.FIT_FROM: --rf-w is its length) shrinks to its card's width instead of breaking */
.rf-metric-value[style*="--rf-w"] { font-size: min(var(--rf-vs), 100cqi / (var(--rf-w) * 0.52)); }
.rf-metric-delta { font-size: 1rem; line-height: 1.4; width: fit-content; max-width: 100%;
                   padding: 0 0.4rem; border-radius: 0.5rem;
                   background: color-mix(in srgb, currentColor 10%, transparent); }

@media (max-width: PHONEpx) {
  /* ---- equations wrap at = + ≥ ⇒ like text; a box that still does not fit scrolls sideways ---- */
  .katex-display { margin: 0.6em 0; padding-bottom: 0.15em; }
  .katex-display > .katex { white-space: normal; text-align: left; }
  .katex-display > .katex > .katex-html { white-space: normal; }
  .katex-display > .katex > .katex-html > .base { margin: 0.1em 0; }
  .katex-display > .katex > .katex-html > .tag { position: static; display: block; text-align: right; }

  /* ---- headings a size down: a three-line title pushes the page's point below the fold ---- */
  [data-testid="stMain"] h1 { font-size: 1.85rem; }
  [data-testid="stMain"] h2 { font-size: 1.4rem; }
  [data-testid="stMain"] h3 { font-size: 1.2rem; }

  /* ---- metrics: three to a line (two in a row of four), smaller value, labels wrap ---- */
  METRIC_ROW { column-gap: 0.6rem; row-gap: 0.5rem; }
  METRIC_COL { min-width: calc(33.3% - 0.6rem) !important; flex: 1 1 calc(33.3% - 0.6rem) !important; }
  ROW_OF_4METRIC_HAS, ROW_OF_4 ~ METRIC_COL {
    min-width: calc(50% - 0.6rem) !important; flex: 1 1 calc(50% - 0.6rem) !important;
  }
  .rf-metrics { column-gap: 0.6rem; row-gap: 0.5rem; }
  .rf-cols-4 { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .rf-cols-5, .rf-cols-6 { grid-template-columns: repeat(3, minmax(0, 1fr)); }
  .rf-metrics { --rf-vs: 1.3rem; }
  .rf-metric-value { line-height: 1.2; }
  .rf-metric-label { font-size: 0.8rem; line-height: 1.25; }
  .rf-metric-delta { font-size: 0.8rem; }
  [data-testid="stMetricValue"] { font-size: 1.3rem; }
  [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"],
  [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p { UNCLIP line-height: 1.2; }
  [data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"],
  [data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"] p {
    UNCLIP font-size: 0.8rem; line-height: 1.25;
  }
  [data-testid="stMetricDelta"] { font-size: 0.8rem; height: auto; }
  [data-testid="stMetricDelta"] [data-testid="stMarkdownContainer"],
  [data-testid="stMetricDelta"] [data-testid="stMarkdownContainer"] p { UNCLIP }

  /* ---- charts: no floating mode bar over the title; titles and notes a size smaller ---- */
  .js-plotly-plot .modebar-container { display: none !important; }
  .js-plotly-plot .gtitle { font-size: 14px !important; }
  .js-plotly-plot .xtitle, .js-plotly-plot .ytitle, .js-plotly-plot .x2title, .js-plotly-plot .y2title {
    font-size: 13px !important;
  }
  .js-plotly-plot .legendtext { font-size: 12px !important; }
  .js-plotly-plot .annotation-text { font-size: 11px !important; }

  /* ---- links to other pages: a long label wraps instead of ending in a cut-off letter ---- */
  [data-testid="stPageLink-NavLink"] span, [data-testid="stPageLink-NavLink"] [data-testid="stMarkdownContainer"],
  [data-testid="stPageLink-NavLink"] p { UNCLIP }

  /* ---- navigation: the sidebar (all pages, then the dials) gets a labelled handle ---- */
  [data-testid="stExpandSidebarButton"] {
    width: auto !important; padding: 0.2rem 0.6rem 0.2rem 0.35rem !important;
    border: 1px solid rgba(49, 51, 63, 0.3) !important; border-radius: 0.5rem !important;
  }
  [data-testid="stExpandSidebarButton"]::after {
    content: "NAV"; margin-left: 0.25rem; font-size: 0.95rem; font-weight: 600; color: rgb(49, 51, 63);
  }
}
"""

CSS = "<style>" + (_RULES.replace("PHONE", str(PHONE_MAX_PX))
                   .replace("METRIC_ROW", _METRIC_ROW)
                   .replace("ROW_OF_4METRIC_HAS", _ROW_OF_4 + _METRIC_COL.removeprefix('[data-testid="stColumn"]'))
                   .replace("ROW_OF_4", _ROW_OF_4)
                   .replace("METRIC_COL", _METRIC_COL)
                   .replace("UNCLIP", _UNCLIP)
                   .replace('"NAV"', f'"{NAV_LABEL}"')) + "</style>"


def inject() -> None:
    """Add the stylesheet to the page (a fixed string: no user text goes into it)."""
    st.html(CSS)
