"""Real browser: the predicted curve and its held-out error band are drawn beside the ideal roofline on every page
that draws cost or speed against batch (Batch, Fast mode, Compare with the sidebar's Estimate at predicted) and
around the Plan page's frontier, at a laptop's 1440 px and a phone's 390 px; a screenshot of each is kept
(ROOFLINE_LAYOUT_SHOTS, else pytest's temporary folder).

    python -m pytest -q -m browser tests/browser/test_predicted.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser.helpers import open_app, page_problems
from ui.figures import plan as fig_plan
from ui.figures.batch import BAND_NAME, IDEAL_NAME, PREDICTED_NAME

pytestmark = pytest.mark.browser

# page → (query, the names its charts must carry), v=2: today's defaults
PAGES = {
    "batch": ("?est=predicted&v=2", (PREDICTED_NAME, BAND_NAME, IDEAL_NAME)),
    "fast-mode": ("?est=predicted&v=2", (PREDICTED_NAME, BAND_NAME)),
    "compare": ("?est=predicted&v=2", (", predicted", BAND_NAME)),     # each configuration's own dashed curve
    "plan": ("?pl_hw=h100,mi355x&v=2", (fig_plan.BAND_NAME, "frontier")),
}
WIDTHS = {"laptop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
TRACES_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot'))
  .flatMap(g => (g._fullData || []).filter(t => t.visible === true)
    .map(t => ({name: t.name || '', n: (t.x || []).filter(v => v !== null && Number.isFinite(+v)).length})))"""


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    path = Path(os.environ.get("ROOFLINE_LAYOUT_SHOTS") or tmp_path_factory.getbasetemp() / "predicted-shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize("size", list(WIDTHS))
@pytest.mark.parametrize("page_name", list(PAGES))
def test_the_predicted_curve_and_band_are_drawn(chromium_browser, app_url, shots, page_name, size):
    query, names = PAGES[page_name]
    context = chromium_browser.new_context(viewport=WIDTHS[size], device_scale_factor=1)
    page = context.new_page()
    try:
        open_app(page, f"{app_url}/{page_name}{query}")
        page.wait_for_timeout(500)
        assert not page_problems(page)
        drawn = page.evaluate(TRACES_JS)
        for name in names:
            hits = [t for t in drawn if name in t["name"]]
            assert hits and all(t["n"] > 1 for t in hits), (page_name, size, name, [t["name"] for t in drawn])
        height = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollHeight")
        page.set_viewport_size({"width": WIDTHS[size]["width"], "height": int(height)})
        page.wait_for_timeout(300)
        page.screenshot(path=str(shots / f"predicted-{page_name}-{size}.png"))
    finally:
        context.close()
