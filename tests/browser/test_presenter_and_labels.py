"""Real browser: a presentation link typed by hand opens today's defaults, and a link's label shows whole on a
phone (390 px).

    python -m pytest -q -m browser tests/browser/test_presenter_and_labels.py
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser.helpers import wait_for_app_run
from ui.state import dials

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "device_scale_factor": 2}
LOAD_TIMEOUT_MS = 120_000   # a page's first run on a busy 2-core machine (not a timing assertion)
TOLERANCE_PX = 1            # sub-pixel rounding

# What of a link's label the reader cannot see: any element inside the link whose content is wider than its box
# (a label on one line, clipped by `overflow: hidden`), and the label's text running past the viewport.
CLIPPED_JS = """([sel, tol]) => {
  const link = document.querySelector(sel);
  if (!link) return {found: false};
  const out = [];
  for (const el of [link, ...link.querySelectorAll('*')]) {
    if (el.scrollWidth > el.clientWidth + tol && getComputedStyle(el).overflowX !== 'visible')
      out.push(`${el.tagName.toLowerCase()}: content ${el.scrollWidth} px wide in a ${el.clientWidth} px box`);
  }
  const label = link.querySelector("[data-testid='stMarkdownContainer']") || link;
  const range = document.createRange();
  range.selectNodeContents(label);
  const r = range.getBoundingClientRect();
  if (r.left < -tol || r.right > window.innerWidth + tol)
    out.push(`the label's text spans x = ${Math.round(r.left)}…${Math.round(r.right)} px, ` +
             `viewport ${window.innerWidth} px`);
  for (let x = label.parentElement; x && x !== document.body; x = x.parentElement) {
    const o = getComputedStyle(x).overflowX;
    if (o === 'hidden' || o === 'clip') {
      const b = x.getBoundingClientRect();
      if (r.right > b.right + tol)
        out.push(`the label's text ends at ${Math.round(r.right)} px, its box at ${Math.round(b.right)} px`);
    }
  }
  return {found: true, text: label.innerText, problems: out};
}"""


@pytest.fixture(scope="module")
def phone(chromium_browser):
    context = chromium_browser.new_context(**PHONE)
    page = context.new_page()
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    try:
        yield page
    finally:
        context.close()


def _open(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=LOAD_TIMEOUT_MS)
    wait_for_app_run(page, LOAD_TIMEOUT_MS)
    page.locator("[data-testid='stMain'] .js-plotly-plot").first.wait_for(state="visible", timeout=LOAD_TIMEOUT_MS)


def test_context_page_link_to_the_kv_cache_page_shows_its_whole_label_on_a_phone(phone, app_url):
    _open(phone, app_url + "/context")
    sel = "[data-testid='stMain'] a[data-testid='stPageLink-NavLink'][href$='kv-cache']"
    got = phone.evaluate(CLIPPED_JS, [sel, TOLERANCE_PX])
    assert got["found"], "no link to the KV-cache page on /context"
    assert got["text"].strip(), "the link has no label"
    assert not got["problems"], f"the link's label {got['text']!r} is cut off at 390 px: " + "; ".join(got["problems"])
    # what the KV-cache page holds is said in text that wraps, whole on screen
    said = phone.get_by_test_id("stCaptionContainer").filter(has_text="The KV-cache page has")
    assert said.count() == 1
    box = said.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["viewport"]["width"] + TOLERANCE_PX, box


@pytest.mark.parametrize("path", ["/prices", "/context"])
def test_every_link_to_another_page_shows_its_whole_label_on_a_phone(phone, app_url, path):
    """Streamlit cuts a page link's label to one line; at 390 px the Prices page's "Fast mode: solve these batches
    on the sidebar's system" lost its last letter. On a phone every such label wraps."""
    _open(phone, app_url + path)
    links = phone.locator("[data-testid='stMain'] a[data-testid='stPageLink-NavLink']")
    n = links.count()
    assert n, f"no link to another page on {path}"
    for i in range(n):
        href = links.nth(i).get_attribute("href")
        got = phone.evaluate(CLIPPED_JS, [f"[data-testid='stMain'] a[data-testid='stPageLink-NavLink'][href='{href}']",
                                          TOLERANCE_PX])
        assert got["found"] and got["text"].strip(), href
        assert not got["problems"], f"{path}: {got['text']!r} is cut off at 390 px: " + "; ".join(got["problems"])


def test_a_presentation_link_typed_by_hand_opens_today_s_defaults(app_page, app_url):
    """The README's `/walkthrough?wk_present=1`, typed without `v`: the lecture's defaults, and the address the app
    writes back carries the presentation key and today's `v`, none of version 1's dials spelled out."""
    _open(app_page, app_url + "/walkthrough?wk_present=1")
    app_page.wait_for_function("() => location.search.includes('v=')", timeout=LOAD_TIMEOUT_MS)
    query = {k: v[0] for k, v in parse_qs(urlsplit(app_page.url).query).items()}
    assert query == {"wk_present": "1", dials.VERSION_KEY: str(dials.URL_VERSION)}, app_page.url
    assert app_page.get_by_test_id("stSidebar").is_hidden()           # presentation mode hides the sidebar
