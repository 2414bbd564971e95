"""The page body is a fragment (issue 12): a page's own dial reruns only the page, a sidebar dial
reruns the whole app — and either way the URL and the share box follow.

The server runs with ROOFLINE_TRACE_RUNS=1, which makes app.py print its run counters on screen
("full runs: N" in the sidebar, written by full runs only; "page runs: N" above the page, written by
every run of the page fragment).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser import (
    RUN_TIMEOUT_MS,
    VIEWPORT,
    open_app,
    page_problems,
    slider_thumb,
    streamlit_process,
    wait_for_app_run,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def traced_url() -> Iterator[str]:
    old = os.environ.get("ROOFLINE_TRACE_RUNS")
    os.environ["ROOFLINE_TRACE_RUNS"] = "1"     # read by the server process started below
    try:
        with streamlit_process() as (url, _proc):
            yield url
    finally:
        if old is None:
            os.environ.pop("ROOFLINE_TRACE_RUNS", None)
        else:
            os.environ["ROOFLINE_TRACE_RUNS"] = old


def _count(page, what: str) -> int:
    text = page.get_by_text(re.compile(rf"^{what} runs: \d+$")).first.inner_text()
    return int(text.rsplit(" ", 1)[1])


def _share(page) -> str:
    return page.get_by_test_id("stSidebar").get_by_test_id("stCode").inner_text()


def test_page_dial_reruns_only_the_page_and_updates_url_and_share_box(traced_url, chromium_browser):
    ctx = chromium_browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(RUN_TIMEOUT_MS)
    try:
        open_app(page, traced_url + "/pipeline")
        full0, page0 = _count(page, "full"), _count(page, "page")
        stages = page.get_by_test_id("stMain").get_by_test_id("stSlider").first.get_by_role("slider")
        before = stages.get_attribute("aria-valuetext")
        for _ in range(2):
            stages.press("ArrowRight")
            page.wait_for_timeout(400)
            wait_for_app_run(page)
        expect(page.get_by_text(f"page runs: {page0 + 2}")).to_be_visible()
        assert _count(page, "full") == full0, "a page dial reran the whole app"
        after = stages.get_attribute("aria-valuetext")
        assert after != before
        # The URL and the share box carry the page dial (written by the fragment).
        expect(page).to_have_url(re.compile(r"[?&]p="))
        p_url = parse_qs(urlsplit(page.url).query)["p"][0]
        assert f"p={p_url}" in _share(page)

        # A sidebar dial reruns everything: both counters move.
        slider_thumb(page, "Batch").press("ArrowRight")
        page.wait_for_timeout(400)
        wait_for_app_run(page)
        expect(page.get_by_text(f"full runs: {full0 + 1}")).to_be_visible()
        assert _count(page, "page") == page0 + 3
        assert "b=" in _share(page) and f"p={p_url}" in _share(page)
        assert page_problems(page) == []
    finally:
        ctx.close()
