"""On a started server (`streamlit run app.py`, as deployed): plotly.js and the components' files are
served gzipped from one compression, plotly under a content-hashed name for a year, the components'
index.js with a strong ETag, and a conditional request gets 304 (ui/runtime/assets.py); Streamlit's own
bundle, named by the root document, is served gzipped with Streamlit's one-year lifetime
(ui/runtime/bundle.py).  The page is
run once over the websocket first, as a browser's first visit does: that run publishes the files."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
import re
import urllib.error
import urllib.request

import pytest

from bench.bench_load import Client
from tests.browser.helpers import streamlit_server

ROUTE = "/_stcore/bidi-components/"
YEAR = "public, max-age=31536000, immutable"


def get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers={k.replace("_", "-"): v for k, v in headers.items()})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


@pytest.fixture(scope="module")
def server() -> str:
    with streamlit_server() as url:
        async def first_visit() -> None:
            async with Client(url) as c:
                run = await c.rerun("")
                assert run.charts > 0 and not run.problems()

        # In a thread of its own: a worker that ran a browser test holds Playwright's running loop.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, first_visit()).result()
        yield url


def entry(url: str, component: str) -> tuple[dict[str, str], str]:
    status, h, body = get(f"{url}{ROUTE}roofline.{component}/index.js", accept_encoding="gzip")
    assert status == 200 and h.get("content-encoding") == "gzip"
    return h, gzip.decompress(body).decode()


def test_plotly_js_is_gzipped_hashed_and_kept_a_year(server):
    h, text = entry(server, "live_chart")
    assert h["cache-control"] == "no-cache" and re.fullmatch(r'"[0-9a-f]{16}-gz"', h["etag"])
    path = re.search(r'"\.\./(roofline\.plotlyjs/plotly\.min\.[0-9a-f]{16}\.js)"', text).group(1)
    status, h, body = get(server + ROUTE + path, accept_encoding="gzip, deflate, br, zstd")
    assert status == 200
    assert h["content-encoding"] == "gzip" and h["vary"] == "Accept-Encoding"
    assert h["cache-control"] == YEAR and re.fullmatch(r'"[0-9a-f]{16}-gz"', h["etag"])
    js = gzip.decompress(body)
    assert len(js) > 3_000_000 and len(body) < len(js) / 2 and b"plotly" in js[:2000].lower()
    # A returning browser's conditional request: 304, no body.
    status, h304, body = get(server + ROUTE + path, accept_encoding="gzip", if_none_match=h["etag"])
    assert (status, body) == (304, b"") and h304["etag"] == h["etag"]


@pytest.mark.parametrize(("component", "library"), [("live_chart", "roofline.plotlyjs/plotly.min.js"),
                                                    ("live_tex", "roofline.katexjs/katex.min.js")])
def test_every_components_file_carries_a_validator_and_revalidates_to_304(server, component, library):
    h, text = entry(server, component)
    stem = library.rsplit(".", 1)[0]
    assert f'"../{library}"' not in text and re.search(rf'"\.\./{re.escape(stem)}\.[0-9a-f]{{16}}\.js"', text)
    for path in (f"roofline.{component}/index.js", library):
        status, h, _ = get(server + ROUTE + path, accept_encoding="gzip")
        assert status == 200 and h["content-encoding"] == "gzip" and h["cache-control"] == "no-cache"
        status, _, body = get(server + ROUTE + path, accept_encoding="gzip", if_none_match=h["etag"])
        assert (status, body) == (304, b"")


def test_a_client_without_gzip_gets_the_file_itself(server):
    status, h, body = get(server + ROUTE + "roofline.plotlyjs/plotly.min.js")
    assert status == 200 and "content-encoding" not in h and len(body) == int(h["content-length"]) > 3_000_000


def test_the_rest_of_the_route_is_streamlits(server):
    assert get(server + ROUTE + "roofline.plotlyjs/plotly.min.0000000000000000.js")[0] == 404
    assert get(server + ROUTE + "roofline.live_chart/../../app.py")[0] in (400, 404)
    assert get(server + "/_stcore/health")[2] == b"ok"


def bundle_files(url: str) -> list[str]:
    """The bundle files the root document names (its scripts, preloads and stylesheet)."""
    status, _, html = get(url + "/")
    assert status == 200
    return sorted(set(re.findall(r'(?:src|href)="\.?/?(static/(?:js|css)/[^"]+)"', html.decode())))


def test_streamlits_bundle_is_served_gzipped_and_kept_a_year(server):
    from ui.runtime import streamlit_internals

    root, _ = streamlit_internals.static_bundle()
    files = bundle_files(server)
    assert any(f.startswith("static/js/index.") for f in files) and any(f.endswith(".css") for f in files)
    raw_total = wire_total = 0
    for f in files:
        raw = (root / f).read_bytes()
        status, h, body = get(f"{server}/{f}", accept_encoding="gzip, deflate, br, zstd")
        assert status == 200 and h["cache-control"] == "public, immutable, max-age=31536000", f
        if len(raw) < 500:                       # too small to gain: Streamlit's route, uncompressed
            assert "content-encoding" not in h and body == raw, f
            continue
        assert h["content-encoding"] == "gzip" and h["vary"] == "Accept-Encoding", f
        assert gzip.decompress(body) == raw, f
        raw_total, wire_total = raw_total + len(raw), wire_total + len(body)
        status, _, again = get(f"{server}/{f}", accept_encoding="gzip", if_none_match=h["etag"])
        assert (status, again) == (304, b""), f
    assert raw_total > 1_000_000 and wire_total < raw_total / 2        # JavaScript compresses about 3×


def test_the_bundle_without_gzip_or_with_a_range_is_streamlits_as_before(server):
    from ui.runtime import streamlit_internals

    root, _ = streamlit_internals.static_bundle()
    f = next(f for f in bundle_files(server) if f.startswith("static/js/index."))
    raw = (root / f).read_bytes()
    status, h, body = get(f"{server}/{f}")
    assert status == 200 and "content-encoding" not in h and body == raw
    status, h, body = get(f"{server}/{f}", accept_encoding="gzip", range="bytes=0-99")
    assert status == 206 and body == raw[:100]
    assert get(f"{server}/static/../app.py", accept_encoding="gzip")[0] in (400, 404)
