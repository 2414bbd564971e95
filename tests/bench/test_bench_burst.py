"""bench/bench_burst.py: its browser-like fetching on hand-made inputs, and smoke runs (a tiny burst and a
first visit, against the app and the stock app on real servers; nothing asserted on time)."""

from __future__ import annotations

import gzip
import time

from bench import bench_burst
from bench.bench_burst import Cache, Fetched, _dechunk, html_assets, main


def test_the_html_names_scripts_stylesheets_preloads_and_the_icon():
    html = """<html><head><link rel="shortcut icon" href="./favicon.png" />
    <link rel="preload" href="./static/media/font.woff2" as="font" crossorigin />
    <link rel="service-desc" href="./_stcore/agent/openapi.json" />
    <script>inline()</script><script type="module" crossorigin src="./static/js/index.abc.js"></script>
    <link rel="modulepreload" crossorigin href="./static/js/runtime.def.js">
    <link rel="stylesheet" crossorigin href="./static/css/index.ghi.css"></head></html>"""
    assert html_assets("http://h:1/", html) == [
        "http://h:1/favicon.png", "http://h:1/static/media/font.woff2", "http://h:1/static/js/index.abc.js",
        "http://h:1/static/js/runtime.def.js", "http://h:1/static/css/index.ghi.css"]


def test_chunked_bodies_are_joined():
    assert _dechunk(b"4\r\nWiki\r\n6;x=1\r\npedia \r\n0\r\n\r\n") == b"Wikipedia "


def test_the_cache_skips_fresh_entries_and_revalidates_the_others():
    cache = Cache()
    cache.store("a", Fetched(200, {"cache-control": "public, max-age=31536000, immutable", "etag": '"1"'}, b"", 0))
    cache.store("b", Fetched(200, {"cache-control": "no-cache", "etag": '"2"'}, b"", 0))
    cache.store("c", Fetched(200, {"cache-control": "public"}, b"", 0))
    assert cache.lookup("a") == (True, {})
    assert cache.lookup("b") == (False, {"If-None-Match": '"2"'})
    assert cache.lookup("c") == (False, {})


def test_gzip_bodies_read_as_text():
    assert Fetched(200, {"content-encoding": "gzip"}, gzip.compress(b"hi"), 0).text() == "hi"


def test_a_tiny_burst_runs_against_both_apps(capsys):
    t0 = time.monotonic()
    assert main(["--burst", "3", "--over", "2", "--linger", "5", "--move-every", "2", "--settle", "3",
                 "--assets", "html"]) == 0
    out = capsys.readouterr().out
    assert time.monotonic() - t0 < 240
    assert "| app | 3 |" in out and "| stock app | 3 |" in out
    assert "PASS  errors: app 0, stock app 0" in out, out
    assert "PASS  dropped sessions: app 0, stock app 0" in out, out
    assert "time-to-first-chart p95" in out and "RSS" in out


def test_a_first_visit_and_a_return_visit(capsys, monkeypatch):
    monkeypatch.setattr(bench_burst, "HTTP_TIMEOUT_S", 60.0)
    assert main(["--first-load", "--repeat", "1", "--assets", "html"]) == 0
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.strip().startswith("app first visit"))
    again = next(line for line in out.splitlines() if line.strip().startswith("app return visit"))
    assert "components' files" in first and "server CPU" in first
    # The return visit takes plotly.js from the cache (or a 304): far fewer bytes than the first.
    kb = [float(x.split(":")[1].split("KB")[0].replace(",", "")) for x in (first, again)]
    assert kb[1] < kb[0] / 4, out
