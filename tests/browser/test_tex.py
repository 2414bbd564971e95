"""Real-browser stories for the equation element (ui/elements/live_tex.py) and its st.latex fallback.

The equations are drawn by Debian's KaTeX 0.16 (as st.latex's), fetched from the app's server; a dial move
redraws the equations whose TeX changed in their own nodes and leaves the others alone (every node tagged
before the move is still on the page after it: an element's key is the page line that draws it), and with
ROOFLINE_TEX=st the page shows st.latex's equations instead.

    python -m pytest -q -m browser tests/browser/test_tex.py
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.browser.helpers import (
    VIEWPORT,
    Watch,
    open_app,
    page_problems,
    slider_thumb,
    streamlit_server,
    wait_for_app_run,
)

pytestmark = pytest.mark.browser

OWN = "[...document.querySelectorAll('[data-testid=stLiveTex]')]"
RENDERED_JS = f"() => {OWN}.length > 0 && {OWN}.every(e => e.querySelector('.katex-display .katex-html'))"


def test_equations_render_with_the_apps_own_katex_and_follow_a_dial(app_page, app_url):
    page = app_page
    watch = Watch(page)
    open_app(page, app_url + "/")
    page.wait_for_function(RENDERED_JS)
    assert page.locator("[data-testid=stMarkdown] .katex-display").count() == 0, "an equation is st.latex"
    before = page.evaluate(f"() => {OWN}.map((e, i) => {{ e.__tag = 'tex-' + i; return e.textContent; }})")
    # KaTeX's output: the visible HTML and the MathML for screen readers
    assert page.locator("[data-testid=stLiveTex] .katex-mathml math").count() == len(before)

    thumb = slider_thumb(page, "Batch")
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_app_run(page)
    page.wait_for_function(f"before => {OWN}.some((e, i) => e.textContent !== before[i])", arg=before)
    page.wait_for_function(RENDERED_JS)
    after = page.evaluate(f"() => {OWN}.map(e => [e.__tag || null, e.textContent])")
    assert len(after) == len(before)
    changed = [i for i, (_, text) in enumerate(after) if text != before[i]]
    kept = [i for i in range(len(after)) if i not in changed]
    assert changed and kept, "the batch should change some equations on this page and not others"
    assert [tag for tag, _ in after] == [f"tex-{i}" for i in range(len(after))], \
        f"an equation's node was replaced, not redrawn in place: {after}"

    katex = [u for u in watch.urls if re.search(r"/katex\.min(\.[0-9a-f]+)?\.js$", u)]
    assert katex and all(u.startswith(app_url + "/_stcore/bidi-components/") for u in katex), katex
    watch.assert_clean(page, "equations after a dial move")


@pytest.fixture(scope="module")
def st_latex_url() -> Iterator[str]:
    with streamlit_server(env={"ROOFLINE_TEX": "st"}) as url:
        yield url


BOXES_JS = """() => [...document.querySelectorAll('.katex-display')].map(k => {
  const r = k.getBoundingClientRect();
  const c = k.closest('[data-testid=stElementContainer]').getBoundingClientRect();
  return [Math.round(r.width), Math.round(r.height), Math.round(r.left), Math.round(c.height)];
})"""


@pytest.mark.parametrize("width", [VIEWPORT["width"], 390])
def test_roofline_tex_st_falls_back_to_st_latex_and_both_lay_out_alike(chromium_browser, app_url, st_latex_url,
                                                                       width):
    """With ROOFLINE_TEX=st the page shows st.latex's equations; the element's equations take the same
    boxes (width, height, left edge, and the element's height with its spacing) on a laptop and a phone."""
    boxes = {}
    for name, url in (("element", app_url), ("st.latex", st_latex_url)):
        context = chromium_browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = context.new_page()
            open_app(page, url + "/kv-cache")
            if name == "element":
                page.wait_for_function(RENDERED_JS)
            else:
                page.wait_for_function("() => document.querySelectorAll('[data-testid=stMarkdown] .katex-display')"
                                       ".length > 0")
                assert page.locator("[data-testid=stLiveTex]").count() == 0
            assert not page_problems(page)
            boxes[name] = page.evaluate(BOXES_JS)
        finally:
            context.close()
    assert len(boxes["element"]) == len(boxes["st.latex"]) >= 1
    for mine, theirs in zip(boxes["element"], boxes["st.latex"]):
        assert all(abs(a - b) <= 1 for a, b in zip(mine, theirs)), boxes
