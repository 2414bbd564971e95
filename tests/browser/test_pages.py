"""Real-browser user stories: the app in Debian's Chromium, driven by Playwright.

Each story opens the running app (one `streamlit run app.py` per xdist worker, on a free port) in a
fresh browser context.  Missing /usr/bin/chromium fails every test with a message; nothing skips.

    python -m pytest -q -m browser tests/browser/test_pages.py
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.browser.helpers import (
    MISSING_CHROMIUM,
    RUN_TIMEOUT_MS,
    VIEWPORT,
    arm_plot_observer,
    assert_page_clean,
    chartless_paths,
    open_app,
    page_headings,
    press_and_time,
    require_chromium,
    slider_thumb,
    wait_for_app_run,
)
from ui.state import dials

pytestmark = pytest.mark.browser

PAGES = page_headings()        # path → the start of its heading
NO_CHART = chartless_paths()
CHART_TIMEOUT_MS = 10_000  # counted after the script run has ended

# A fingerprint of every drawn Plotly figure's data (Plotly keeps it on the graph div as `.data`).
PLOT_DATA_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .map(g => JSON.stringify(g.data || null))"""


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def _path(url: str) -> str:
    return urlsplit(url).path or "/"


def _cost_metric(page) -> str:
    """The batch page's cost metric ($/Mtok): the label is "Ideal cost …" (not "Ideal unbatched cost ÷ best")."""
    label = page.get_by_test_id("rfMetricLabel").get_by_text(re.compile(r"^(Ideal|Roofline|Predicted) cost\b"))
    metric = page.get_by_test_id("stMain").get_by_test_id("rfMetric").filter(has=label)
    expect(metric).to_have_count(1)
    return metric.get_by_test_id("rfMetricValue").inner_text()


def _heading(page) -> str:
    """The page's title (its first h1 in the main area)."""
    h1 = page.get_by_test_id("stMain").locator("h1").first
    expect(h1).to_be_visible()
    return h1.inner_text().strip()


def test_debian_chromium_is_installed():
    """The browser stories need /usr/bin/chromium; without it this fails (and the stories error), never skips."""
    try:
        require_chromium()
    except RuntimeError:
        ok = False
    else:
        ok = True
    if not ok:
        pytest.fail(MISSING_CHROMIUM, pytrace=False)


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_draws_a_chart_and_no_error(app_page, app_url, path):
    """A visitor opening any page sees at least one Plotly chart, and never an exception or traceback."""
    open_app(app_page, app_url + path, charts=False)
    if path in NO_CHART:
        assert _heading(app_page).startswith(PAGES[path])
        assert_page_clean(app_page, path)
        return
    try:
        app_page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=CHART_TIMEOUT_MS)
    except PlaywrightTimeoutError:
        headings = app_page.get_by_test_id("stMain").locator("h1").all_inner_texts()
        pytest.fail(f"{path}: no Plotly chart (.js-plotly-plot) visible after {CHART_TIMEOUT_MS / 1000:g} s; "
                    f"page headings: {headings}", pytrace=False)
    want = "/batch" if path == "/" else path        # `/` forwards to the Batch page's own path
    assert _path(app_page.url) == want, f"opened {path}, the app moved to {app_page.url}"
    assert _heading(app_page).startswith(PAGES[path])
    assert_page_clean(app_page, path)


def test_batch_dial_by_keyboard_moves_chart_and_url_and_the_link_restores_it(app_page, app_url, chromium_browser):
    """A user nudges the batch dial with the keyboard: the chart redraws, the URL names the next batch
    (and the link version), and that URL opened in a fresh browser shows the same dial and the same cost."""
    b0 = dials.DEFAULTS["b"]
    b1 = str(dials.BATCH_OPTIONS[dials.BATCH_OPTIONS.index(b0) + 1])
    version = str(dials.URL_VERSION)
    page = app_page
    open_app(page, app_url + "/")
    thumb = slider_thumb(page, "Batch")
    expect(thumb).to_have_count(1)
    expect(thumb).to_have_attribute("aria-valuetext", str(b0))
    assert "b" not in _query(page.url), f"the default batch must stay out of the URL: {page.url}"
    cost_before = _cost_metric(page)
    data_before = page.evaluate(PLOT_DATA_JS)

    arm_plot_observer(page)
    thumb.focus()
    press_and_time(page, thumb, "ArrowRight", timeout=RUN_TIMEOUT_MS)  # raises if no chart changed
    wait_for_app_run(page)

    expect(thumb).to_have_attribute("aria-valuetext", b1)
    expect(page).to_have_url(re.compile(rf"[?&]b={b1}(&|$)"))
    assert _query(page.url) == {"b": [b1], "v": [version]}, f"only the moved dial belongs in the URL: {page.url}"
    data_after = page.evaluate(PLOT_DATA_JS)
    assert data_after != data_before, "the chart's DOM changed but no figure's data did"
    cost_after = _cost_metric(page)
    assert cost_after != cost_before, f"cost metric did not follow the batch dial ({cost_before})"
    assert_page_clean(page, "after moving the batch dial")

    shared = page.url
    context = chromium_browser.new_context(viewport=VIEWPORT)
    try:
        fresh = context.new_page()
        open_app(fresh, shared)
        expect(slider_thumb(fresh, "Batch")).to_have_attribute("aria-valuetext", b1)
        assert _cost_metric(fresh) == cost_after, "the shared link shows a different cost"
        assert _query(fresh.url) == {"b": [b1], "v": [version]}, f"the shared link lost its parameter: {fresh.url}"
        assert_page_clean(fresh, f"opening the shared link {shared}")
    finally:
        context.close()


def test_garbled_url_shows_a_notice_not_a_traceback(app_page, app_url):
    """Someone pastes a mangled link: the app names the bad parameters and falls back to defaults."""
    open_app(app_page, app_url + "/?b=abc&foo=1")
    notices = app_page.get_by_test_id("stAlert")
    expect(notices.filter(has_text="URL parameter 'b'")).to_have_count(1)
    expect(notices.filter(has_text="'foo'")).to_have_count(1)
    expect(slider_thumb(app_page, "Batch")).to_have_attribute("aria-valuetext", "64")
    assert_page_clean(app_page, "/?b=abc&foo=1")


def test_shared_link_keeps_its_page(app_page, app_url):
    """A link to the KV page with a context opens the KV page with that context, and its share box
    offers a link to the same page."""
    open_app(app_page, app_url + "/kv-cache?ctx=200000&v=2", charts=False)
    assert _path(app_page.url) == "/kv-cache", f"the link landed on {app_page.url}"
    assert _query(app_page.url) == {"ctx": ["200000"], "v": ["2"]}
    assert _heading(app_page).startswith("KV cache")
    expect(slider_thumb(app_page, "Context")).to_have_attribute("aria-valuetext", "200k")
    share = app_page.get_by_test_id("stSidebar").get_by_test_id("stCode").last
    expect(share).to_contain_text("/kv-cache?ctx=200000")
    assert_page_clean(app_page, "/kv-cache?ctx=200000&v=2")


def test_walkthrough_arrow_keys_move_the_step_and_the_url(app_page, app_url):
    """A speaker presses → and ← on the walkthrough: the step and the URL follow; the link reopens there."""
    page = app_page
    open_app(page, app_url + "/walkthrough?wk_present=1")
    expect(page.get_by_test_id("stSidebar")).to_be_hidden()          # presentation mode hides the chrome
    assert _heading(page).startswith("1. ")
    page.get_by_test_id("stMain").locator("h1").first.click()        # focus the page, not a widget
    page.keyboard.press("ArrowRight")
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text(re.compile(r"^2\. "))
    expect(page).to_have_url(re.compile(r"[?&]wk_step=2(&|$)"))
    page.keyboard.press("ArrowRight")
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text(re.compile(r"^3\. "))
    page.keyboard.press("ArrowLeft")
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text(re.compile(r"^2\. "))
    expect(page).to_have_url(re.compile(r"[?&]wk_step=2(&|$)"))
    assert _query(page.url).get("wk_present") == ["1"]
    assert_page_clean(page, "walkthrough after arrow keys")


def test_csv_download_has_the_charts_rows(app_page, app_url):
    """The CSV button under a chart downloads that chart's plotted points."""
    page = app_page
    open_app(page, app_url + "/pipeline")
    first_chart = page.locator(".js-plotly-plot").first
    n_points = page.evaluate("""() => {
        const g = document.querySelector('.js-plotly-plot');
        return g.data.filter(t => t.name !== undefined || t.x !== undefined)
                     .reduce((n, t) => n + (t.x ? t.x.length : (t.y ? t.y.length : 0)), 0);
    }""")
    assert n_points > 0
    with page.expect_download() as dl:
        page.get_by_test_id("stDownloadButton").first.locator("button").first.click()
    text = open(dl.value.path(), encoding="utf-8").read()
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert lines[0] == "chart,trace,x,y"
    assert len(lines) - 1 == n_points, f"{len(lines) - 1} CSV rows for {n_points} plotted points"
    expect(first_chart).to_be_visible()


def test_a_batch_move_leaves_every_radio_with_its_choice(app_page, app_url):
    """A radio whose option labels carried another dial's value (Scale-up's 'Sweep curves' named the
    batch) showed neither option selected after that dial moved: every radio keeps one choice checked."""
    page = app_page
    open_app(page, app_url + "/scale-up")
    checked = "() => [...document.querySelectorAll('[data-testid=stRadio]')].map(r => " \
              "[...r.querySelectorAll('input')].filter(i => i.checked).length)"
    assert set(page.evaluate(checked)) == {1}
    thumb = slider_thumb(page, "Batch")
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_app_run(page)
    expect(thumb).not_to_have_attribute("aria-valuetext", str(dials.DEFAULTS["b"]))
    assert set(page.evaluate(checked)) == {1}, page.evaluate(checked)
