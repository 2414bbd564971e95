"""Real browser: the Plan page draws the search as WebGL dots with the frontier and the winner, shows the winner's
card, and its "Open on the Batch page" link opens the Batch page (a new tab, a new session read from the link)
on the winner's chip and configuration.

    python -m pytest -q -m browser tests/browser/test_plan.py
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from playwright.sync_api import expect

from model import calibrate, presets
from model.plan import Traffic, plan
from tests.browser.helpers import open_app, page_problems, wait_for_app_run
from ui.figures import plan as fig_plan
from ui.state import dials

pytestmark = pytest.mark.browser

CHIPS = ("h100", "mi355x")
QUERY = f"?pl_hw={','.join(CHIPS)}&v=2"     # today's sidebar (DeepSeek-V3), two chips: a search of ~25k points
TRACES_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .map(g => (g.data || []).map(t => ({type: t.type, name: t.name || '', n: (t.x || []).length})))"""


def _expected():
    """The plan the page makes, and the WebGL traces it draws: one per chip, serving mode and TTFT verdict among
    the thinned dots (ui/figures/plan.py)."""
    hw = presets.hardware_presets()
    res = plan(presets.get("model", "deepseek-v3"), {k: hw[k] for k in CHIPS}, Traffic.single(2000, 500),
               ttft_s=1.0, tpot_s=0.05, efficiency=calibrate.built_in_summary().efficiency)   # the page's default
    p = res.points
    fits = np.flatnonzero(p["fits"])
    y = p["usd_per_mtok"][fits]
    rank = np.where(p["meets_ttft"][fits], y, y * 1e100)
    keep = fits[fig_plan.thin(p["tokens_per_s_per_user"][fits], y, p["hardware"][fits],
                              fig_plan.cells_per_decade(len(CHIPS)), rank=rank)]
    groups = {(int(p["hardware"][i]), int(p["mode"][i]), bool(p["meets_ttft"][i])) for i in keep}
    return res, len(groups), keep.size


def test_the_plan_page_draws_dots_frontier_and_winner_and_opens_the_batch_page_on_it(app_page, app_url):
    res, n_gl, n_dots = _expected()
    best = res.point(res.best)
    open_app(app_page, app_url + "/plan" + QUERY)
    assert not page_problems(app_page)

    # The card: the winner's numbers.
    main = app_page.get_by_test_id("stMain")
    expect(main.get_by_text("Cheapest configuration that meets both targets")).to_be_visible()
    label = app_page.get_by_test_id("rfMetricLabel").get_by_text(re.compile(r"^Batch\??$"))   # "?": its help mark
    batch = main.get_by_test_id("rfMetric").filter(has=label)
    expect(batch.get_by_test_id("rfMetricValue")).to_have_text(f"{best['batch']:,}")

    # The chart: the dots as WebGL traces (every thinned dot drawn), the frontier, the winner's legend entry.
    app_page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                               ".some(g => (g.data || []).some(t => t.type === 'scattergl'))")
    plots = [p for p in app_page.evaluate(TRACES_JS) if any(t["type"] == "scattergl" for t in p)]
    assert len(plots) == 1
    traces = plots[0]
    gl = [t for t in traces if t["type"] == "scattergl"]
    assert len(gl) == n_gl and sum(t["n"] for t in gl) == n_dots
    assert {t["name"] for t in gl} == {"H100 SXM5 80GB", "MI355X"}
    frontier = [t for t in traces if t["name"].startswith("frontier")]
    assert len(frontier) == 1 and frontier[0]["n"] == len(res.frontier) > 1
    assert any(t["name"] == "cheapest that meets both targets" for t in traces)
    band = [t for t in traces if t["name"].startswith(fig_plan.BAND_NAME)]      # the predicted frontier's band
    assert len(band) == 1 and band[0]["n"] == 2 * len(res.frontier) + 1
    # WebGL drew: the plot holds its GL canvas.
    assert app_page.locator(".js-plotly-plot canvas").count() >= 1

    # The link: a new tab on /batch with the winner's chip, precision and C in the sidebar.
    link = main.get_by_role("link", name="Open on the Batch page")
    with app_page.context.expect_page() as opened:
        link.click()
    batch_page = opened.value
    wait_for_app_run(batch_page)
    batch_page.locator(".js-plotly-plot").first.wait_for(state="visible")
    assert not page_problems(batch_page)
    url = urlsplit(batch_page.url)
    assert url.path == "/batch"
    chip = batch_page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Chip")
    assert chip.get_by_role("combobox").input_value() == presets.get("hardware", best["hardware"]).name
    q = parse_qs(url.query)
    assert q["chip"] == [best["hardware"]]       # the written-back link leaves out what equals today's defaults
    assert q.get("w", [dials.DEFAULTS["w"]]) == [best["weight_dtype"]]
    assert q.get("c", [str(dials.DEFAULTS["c"])]) == [str(best["chips"] * best["pipeline_stages"])]
    expect(batch_page.get_by_test_id("stMain").locator("h1").first).to_have_text("Why tokens cost what they cost")
    assert not batch_page.get_by_test_id("stAlert").filter(has_text="URL parameter").count()
    batch_page.close()
