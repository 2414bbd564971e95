"""The offline deck in a real browser: opened from disk with the network cut, every step reached with
the arrow keys (and a click), a slider scrubbed inside a chart, and not one request made.

    python -m pytest -q -m browser tests/browser/test_deck.py
"""

from __future__ import annotations

import contextlib
import json
import re
import threading

import numpy as np
import pytest

from tests.browser.helpers import VIEWPORT, chromium
from ui.present import deck
from ui.present import walkthrough as wk

pytestmark = pytest.mark.browser

CURRENT = """() => { const s = document.querySelector('.slide.on');
  return s ? {id: s.id, where: document.getElementById('where').textContent,
              ready: !!s.querySelector('.chart[data-ready="1"]'),
              katex: s.querySelectorAll('.equations .katex').length,
              katexErrors: s.querySelectorAll('.katex-error').length,
              sentence: s.querySelector('.sentence').textContent} : null; }"""
# The drawn points of the current chart's traces: plotly's own decoded copy (_fullData), not the input.
CURVES = """() => { const gd = document.querySelector('.slide.on .chart');
  return gd._fullData.map(t => t.y ? Array.from(t.y, v => (v === null || !isFinite(v)) ? null : v) : []); }"""


@pytest.fixture(scope="module")
def deck_file(tmp_path_factory):
    # `python -m ui.present.deck --out talk.html`: the app's default view
    out = tmp_path_factory.mktemp("deck") / "talk.html"
    assert deck.main(["--out", str(out)]) == 0
    return out


def in_own_thread(story):
    """Run `story(page, requests, errors)` in a thread of its own, on a page whose every request that is
    not the file itself is recorded and aborted (the context is offline too).

    Its own thread: Playwright's sync API will not start where another instance is running, and
    tests/browser/test_pages.py keeps one open for the whole session on the same xdist worker."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            with chromium() as browser:
                context = browser.new_context(viewport=VIEWPORT)
                context.set_offline(True)
                requests: list[str] = []

                def route(r):
                    if r.request.url.startswith("file://"):
                        r.continue_()
                    else:
                        requests.append(r.request.url)
                        r.abort()

                context.route("**/*", route)
                page = context.new_page()
                page.on("request", lambda req: None if req.url.startswith(("file://", "data:"))
                        else requests.append(req.url))
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.set_default_timeout(60_000)
                try:
                    story(page, requests, errors)
                finally:
                    with contextlib.suppress(Exception):
                        context.close()
        except BaseException as exc:       # handed to the test's own thread
            failure.append(exc)

    t = threading.Thread(target=run, name="deck-browser")
    t.start()
    t.join()
    if failure:
        raise failure[0]


def _wait_slide(page, k: int) -> dict:
    page.wait_for_function(f"() => document.getElementById('where').textContent === '{k} / {len(wk.STEPS)}'")
    page.wait_for_selector(".slide.on .chart[data-ready='1']")
    return page.evaluate(CURRENT)


def test_deck_from_disk_with_no_network(deck_file):
    in_own_thread(lambda page, requests, errors: _deck_story(page, requests, errors, deck_file))


def _deck_story(page, requests, errors, deck_file):
    page.goto(deck_file.as_uri())
    n = len(wk.STEPS)
    assert page.locator("section.slide").count() == n
    assert page.locator("nav button").count() == n
    keys = page.eval_on_selector_all("section.slide", "els => els.map(e => e.dataset.key)")
    assert keys == [s.key for s in wk.STEPS]

    # → through every step, then ← back one
    for k in range(1, n + 1):
        cur = _wait_slide(page, k)
        assert cur["id"] == f"step-{k}" and cur["ready"]
        assert cur["katex"] >= 1 and len(cur["sentence"]) > 40       # equations typeset offline; the sentence
        assert cur["katexErrors"] == 0                                # KaTeX read every equation's TeX
        if k < n:
            page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")                                  # past the last step: stays
    assert _wait_slide(page, n)["id"] == f"step-{n}"
    page.keyboard.press("ArrowLeft")
    assert _wait_slide(page, n - 1)["id"] == f"step-{n - 1}"

    # a click on a step's button moves there: the KV step, whose slider is the batch
    k_kv = next(i for i, s in enumerate(wk.STEPS, 1) if s.key == "kv")
    page.locator("nav button", has_text=re.compile(rf"^{k_kv}$")).click()
    _wait_slide(page, k_kv)
    data = json.loads(page.locator("#deck-data").text_content())
    slide = data["slides"][k_kv - 1]
    before = page.evaluate(CURVES)
    frame0 = page.evaluate("() => document.querySelector('.slide.on .chart').dataset.frame || ''")
    assert frame0 == ""                                                 # not scrubbed yet

    # scrub: a click on the slider's rail near its right end picks a larger batch
    rail = page.locator(".slide.on .slider-rail-touch-rect").first
    box = rail.bounding_box()
    page.mouse.click(box["x"] + 0.85 * box["width"], box["y"] + box["height"] / 2)
    page.wait_for_function("() => (document.querySelector('.slide.on .chart').dataset.frame || '') !== ''")
    k = int(page.evaluate("() => document.querySelector('.slide.on .chart').dataset.frame"))
    assert k > slide["active"]
    after = page.evaluate(CURVES)
    assert after != before                                              # the curve changed
    # … to exactly the frame's values (the model's, computed when the deck was made)
    frame = slide["figure"]["frames"][k]
    for drawn, trace in zip(after, frame["data"]):
        want = deck.unpack(trace["y"]) if trace.get("y") is not None else np.array([])
        got = np.array([np.nan if v is None else v for v in drawn], float)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    label = frame["name"]
    assert label == str(k)
    title = page.evaluate("() => document.querySelector('.slide.on .chart').layout.title.text")
    assert f"B = {float(slide['figure']['layout']['sliders'][0]['steps'][k]['label'].replace(',', '')):g}" in title

    # and back near the start: the marks are that frame's own (none left over from the larger batch)
    page.mouse.click(box["x"] + 0.02 * box["width"], box["y"] + box["height"] / 2)
    page.wait_for_function(f"() => document.querySelector('.slide.on .chart').dataset.frame !== '{k}'")
    k0 = int(page.evaluate("() => document.querySelector('.slide.on .chart').dataset.frame"))
    assert k0 < slide["active"]
    frame = slide["figure"]["frames"][k0]
    drawn = page.evaluate("() => { const l = document.querySelector('.slide.on .chart').layout; "
                          "return [(l.annotations || []).map(a => a.text), (l.shapes || []).length]; }")
    assert drawn == [[a.get("text") for a in frame["layout"]["annotations"]], len(frame["layout"]["shapes"])]
    for curve, trace in zip(page.evaluate(CURVES), frame["data"]):
        want = deck.unpack(trace["y"]) if trace.get("y") is not None else np.array([])
        np.testing.assert_allclose(np.array([np.nan if v is None else v for v in curve], float), want, rtol=1e-6)

    assert requests == []
    assert errors == []


def test_the_request_recorder_sees_a_request(tmp_path):
    # the same page setup records a file that does ask the network (so a clean run above means something)
    probe = tmp_path / "probe.html"
    probe.write_text('<!doctype html><img src="http://deck-probe.invalid/x.png"><p>probe</p>', encoding="utf-8")

    def story(page, requests, _errors):
        page.goto(probe.as_uri())
        page.wait_for_function("() => document.querySelector('img').complete")
        assert any("deck-probe.invalid" in u for u in requests)

    in_own_thread(story)
