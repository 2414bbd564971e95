"""Every page answers on its own path on a fresh server: `/batch` used to open a "Page not
found" dialog because Streamlit serves its default page only at `/`.  `/` now forwards to `/batch`
with the link's parameters, and the share box names the page's own path.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.helpers import (
    RUN_TIMEOUT_MS,
    VIEWPORT,
    open_app,
    page_problems,
    streamlit_process,
)

pytestmark = pytest.mark.browser

NOT_FOUND = re.compile("Page not found|does not seem to exist")


def test_batch_deep_link_on_a_fresh_server_and_root_forwards_with_the_link(chromium_browser):
    with streamlit_process() as (url, _proc):
        ctx = chromium_browser.new_context(viewport=VIEWPORT)
        try:
            page = ctx.new_page()
            page.set_default_timeout(RUN_TIMEOUT_MS)
            console: list[str] = []
            page.on("console", lambda m: console.append(m.text))
            # The very first request this server sees is a deep link to the first page.
            open_app(page, url + "/batch?b=128&v=2")
            expect(page.get_by_role("heading", name=re.compile("Why tokens cost"))).to_be_visible()
            assert not page.get_by_text(NOT_FOUND).count(), "a 'Page not found' dialog on /batch"
            assert not [c for c in console if NOT_FOUND.search(c)]
            assert urlsplit(page.url).path == "/batch"
            assert parse_qs(urlsplit(page.url).query)["b"] == ["128"]

            # `/` forwards to /batch and keeps the link's parameters.
            open_app(page, url + "/?ctx=4096&v=2")
            expect(page).to_have_url(re.compile(r"/batch\?"))
            assert parse_qs(urlsplit(page.url).query)["ctx"] == ["4096"]
            share = page.get_by_test_id("stSidebar").get_by_test_id("stCode").inner_text()
            assert "/batch?" in share and "ctx=4096" in share
            assert page_problems(page) == []
        finally:
            ctx.close()
