"""Real-browser stories: what is drawn on screen does not collide.  Each test opens a page at a projector's or a
phone's width, waits for every chart to be drawn, and reads the rendered boxes.

  * Fast mode: B*'s label and the latency floor's label (B* stands over the floor at the defaults);
  * Batch: the batch axis ends at the grid's 65,536, and the regions' names and B*'s labels at the top of the
    batch charts clear each other;
  * Batch: the caption under the step breakdown names the sidebar's roofline mode;
  * Scale-up: the chip labels above the plot clear each other on a phone;
  * Walkthrough, presentation mode: the controls' labels read whole at 1400 × 900 and on a phone.

    python -m pytest -q -m browser tests/browser/test_collisions.py
"""

from __future__ import annotations

import itertools

import pytest

from tests.browser.helpers import open_app, wait_for_app_run

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1400, "height": 1000}
PROJECTOR = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
WIDTHS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1400px", "390px"])
TOLERANCE_PX = 0.5          # boxes that share an edge (sub-pixel rounding) do not collide

# Every figure handed to the chart element has been drawn (window.__liveChart is kept by
# ui/elements/live_chart/index.js), as tests/browser/test_chart.py waits for it.
SETTLED_JS = ("() => !!window.__liveChart && window.__liveChart.started > 0"
              " && window.__liveChart.drawn >= window.__liveChart.started")
# The drawn text of every visible annotation of chart i (page order), with its box in page px: the text itself,
# not the annotation's background box (plotly sizes that for the figure's font; a phone's CSS draws it at 11 px).
LABELS_JS = """i => {
  const g = document.querySelectorAll('.js-plotly-plot')[i];
  return [...g.querySelectorAll('g.annotation')].map(a => {
    const t = a.querySelector('text.annotation-text') || a;
    const r = t.getBoundingClientRect();
    return {text: t.textContent, x0: r.left, x1: r.right, y0: r.top, y1: r.bottom};
  }).filter(b => b.x1 - b.x0 > 0 && b.y1 - b.y0 > 0);
}"""


def _open(page, url: str, viewport: dict) -> None:
    page.set_viewport_size(viewport)
    open_app(page, url)
    page.wait_for_function(SETTLED_JS)
    page.wait_for_timeout(300)       # a phone's narrow layout is merged in by a resize observer


def _labels(page, chart: int) -> list[dict]:
    return page.evaluate(LABELS_JS, chart)


def _collisions(boxes: list[dict]) -> list[tuple[str, str]]:
    return [(a["text"], b["text"]) for a, b in itertools.combinations(boxes, 2)
            if a["x0"] < b["x1"] - TOLERANCE_PX and b["x0"] < a["x1"] - TOLERANCE_PX
            and a["y0"] < b["y1"] - TOLERANCE_PX and b["y0"] < a["y1"] - TOLERANCE_PX]


def _one(boxes: list[dict], start: str) -> dict:
    found = [b for b in boxes if b["text"].startswith(start)]
    assert len(found) == 1, f"{start!r}: {[b['text'] for b in boxes]}"
    return found[0]


# ---------------------------------------------------------------- fast mode

@WIDTHS
def test_fast_mode_b_star_label_clears_the_latency_floor_label(app_page, app_url, viewport):
    """At the defaults B* ≈ 14,448 stands over the latency floor's label (bottom right, under the floor): B*'s
    label, once at the bottom, sat on it.  Now no two labels of the chart meet, B*'s and the floor's included."""
    _open(app_page, app_url + "/fast-mode", viewport)
    boxes = _labels(app_page, 0)
    b_star, floor = _one(boxes, "B* = "), _one(boxes, "latency floor")
    assert _collisions([b_star, floor]) == [], (b_star, floor)
    assert _collisions(boxes) == [], boxes


# ---------------------------------------------------------------- batch

def test_batch_axis_ends_at_the_grid(app_page, app_url):
    """The batch charts sweep B = 1 … 65,536: the drawn axis ends there (it ran to past 100k, widened by
    plotly's autorange for a region's name and the dot's room), and no tick past it is labelled."""
    _open(app_page, app_url + "/batch", DESKTOP)
    for i in (0, 1):
        top, ticks = app_page.evaluate("""i => {
            const g = document.querySelectorAll('.js-plotly-plot')[i];
            return [g._fullLayout.xaxis.range[1], [...g.querySelectorAll('.xtick text')].map(t => t.textContent)];
        }""", i)
        assert 10 ** top <= 65536 * (1 + 1e-6), f"chart {i}: the batch axis runs to {10 ** top:,.0f}"
        assert ticks[-1] == "10k", f"chart {i}: the last batch tick is {ticks[-1]!r} ({ticks})"


@WIDTHS
def test_batch_region_names_and_b_star_labels_clear_each_other(app_page, app_url, viewport):
    """At the defaults "KV-fetch-bound", "B*(T) = 14,448" and "compute-bound" crowded the top of both batch charts;
    now no two labels of either chart meet."""
    _open(app_page, app_url + "/batch", viewport)
    for i in (0, 1):
        boxes = _labels(app_page, i)
        for start in ("KV-fetch-bound", "compute-bound", "B*(T) = ", "B* = "):
            _one(boxes, start)
        assert _collisions(boxes) == [], (i, boxes)


@pytest.mark.parametrize("mode", ["per-phase", "lecture"])
def test_batch_breakdown_caption_names_the_sidebars_mode(app_page, app_url, mode):
    """The caption under the step breakdown describes the mode the sidebar's Roofline radio shows: the lecture's
    larger side, or the per-phase sum, never the other; switching the radio switches it."""
    _open(app_page, app_url + f"/batch?mode={mode}", DESKTOP)
    captions = {"lecture": "The step is the larger side (lecture mode)",
                "per-phase": "Per-phase mode: the step is the matmul phase"}

    def check(m: str) -> None:
        radio = app_page.get_by_test_id("stSidebar").get_by_test_id("stRadio").filter(has_text="per-phase").first
        checked = radio.locator("input:checked").first.evaluate("e => e.closest('label').innerText").strip()
        assert checked == m, f"the sidebar shows {checked!r}"
        text = app_page.get_by_test_id("stMain").inner_text()
        other = "per-phase" if m == "lecture" else "lecture"
        assert captions[m] in text and captions[other] not in text, f"mode {m}"

    check(mode)
    other = "lecture" if mode == "per-phase" else "per-phase"
    app_page.get_by_test_id("stSidebar").get_by_text(other, exact=True).click()
    wait_for_app_run(app_page)
    app_page.wait_for_function(SETTLED_JS)
    check(other)


# ---------------------------------------------------------------- scale-up

def test_scale_up_chip_labels_clear_each_other_on_a_phone(app_page, app_url):
    """On a 390 px phone "Blackwell 72 (this chip)" and "576 dies", in one row above the plot, overlapped; now
    no two labels of the chart meet."""
    _open(app_page, app_url + "/scale-up", PHONE)
    boxes = _labels(app_page, 0)
    for start in ("Hopper 8", "Blackwell 72 (this chip)", "Rubin Ultra 144", "576 dies"):
        _one(boxes, start)
    assert _collisions(boxes) == [], boxes


# ---------------------------------------------------------------- walkthrough, presentation mode

# Every text of a control that does not show whole: a box narrower than its text that cuts it off (Streamlit
# ends a cut label with an ellipsis), or a control past the viewport's right edge.  Boxes of 1 px or less are
# visually hidden by design (a toggle's input for screen readers), not cut.
CLIPPED_JS = """() => {
  const sel = ['stButton', 'stLinkButton', 'stPageLink', 'stDownloadButton', 'stCheckbox']
    .map(t => `[data-testid=stMain] [data-testid=${t}]`).join(', ');
  const out = [];
  for (const w of document.querySelectorAll(sel)) {
    const name = `${w.dataset.testid} "${w.innerText.trim()}"`;
    for (const el of [w, ...w.querySelectorAll('*')]) {
      const cs = getComputedStyle(el);
      if (el.clientWidth > 1 && el.textContent.trim() && el.scrollWidth > el.clientWidth + 1
          && (cs.overflowX !== 'visible' || cs.textOverflow === 'ellipsis')) {
        out.push(`${name}: ${el.tagName} ${el.scrollWidth} > ${el.clientWidth} px`);
      }
    }
    const r = w.getBoundingClientRect();
    if (r.right > document.documentElement.clientWidth + 1) out.push(`${name} ends at ${r.right} px`);
  }
  return out;
}"""


@pytest.mark.parametrize("viewport", [PROJECTOR, PHONE], ids=["1400x900", "390px"])
def test_walkthrough_controls_read_whole_in_presentation_mode(app_page, app_url, viewport):
    """At 1400 × 900 the controls were cut to "← B…", "Nex…", "Presentation …", "The lecture at 0:0…" and
    "Open the chapter pag…" (the sentence's 1.7rem type reached their labels).  Every control's label reads
    whole, there and on a phone."""
    _open(app_page, app_url + "/walkthrough?wk_present=1", viewport)
    labels = app_page.evaluate("""() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stButton],'
        + ' [data-testid=stMain] [data-testid=stLinkButton], [data-testid=stMain] [data-testid=stPageLink],'
        + ' [data-testid=stMain] [data-testid=stCheckbox]')].map(w => w.innerText.trim())""")
    for start in ("← Back", "Next →", "Presentation mode", "QR code", "▶ The lecture at", "Open the chapter page"):
        assert any(t.startswith(start) for t in labels), (start, labels)
    assert app_page.evaluate(CLIPPED_JS) == []
