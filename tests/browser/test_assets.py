"""A returning viewer does not download plotly.js again: the second load of the page, in the same
browser, takes it from the cache or revalidates it (304), as it does Streamlit's own bundles
(ui/runtime/assets.py: plotly under a content-hashed name for a year, the components' index.js with an ETag)."""

from __future__ import annotations

from tests.browser.helpers import open_app

# Each script and stylesheet the page fetched: its URL and the bytes that crossed the network for it
# (Resource Timing: 0 from the browser's cache, a few hundred bytes of headers for a 304).
RESOURCES = """() => performance.getEntriesByType('resource').map(e => [e.name, e.transferSize, e.decodedBodySize])"""


def loaded(page, url: str) -> dict[str, tuple[int, int]]:
    open_app(page, url)
    page.wait_for_function("() => (window.__liveChart || {}).drawn > 0")
    return {name: (sent, size) for name, sent, size in page.evaluate(RESOURCES)}


def plotly_of(resources: dict[str, tuple[int, int]]) -> tuple[str, int, int]:
    found = [(u, *v) for u, v in resources.items() if "/roofline.plotlyjs/plotly.min." in u]
    assert len(found) == 1, f"plotly.js requested {len(found)} times: {found}"
    return found[0]


def test_a_second_load_takes_plotly_js_from_the_cache(app_url, chromium_browser):
    context = chromium_browser.new_context()
    try:
        first = loaded(context.new_page(), app_url + "/")
        url, sent, size = plotly_of(first)
        assert size > 3_000_000 and 500_000 < sent < size / 2, f"first load: {url} {sent} B for {size} B"
        second = loaded(context.new_page(), app_url + "/")        # a second tab, the same browser
        url2, sent2, size2 = plotly_of(second)
        assert url2 == url and size2 == size
        assert sent2 < 2_000, f"second load downloaded plotly.js again: {sent2} B over the network"
        # KaTeX and the components' own modules likewise: none is downloaded a second time.
        again = {u: s for u, (s, _) in second.items() if "/_stcore/bidi-components/" in u and s >= 2_000}
        assert not again, f"downloaded again: {again}"
    finally:
        context.close()
