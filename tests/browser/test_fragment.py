"""The page body is a fragment, nested in the shell fragment that draws the sidebar dials:
a page's own dial reruns only the page, a sidebar dial reruns the shell (dials and page) but not
app.py — and either way the URL and the share box follow.

The server runs with ROOFLINE_TRACE_RUNS=1, which makes app.py print its run counters on screen
("full runs: N" in the sidebar, written by full runs of app.py only; "shell runs: N" under the dials,
written by every run of the shell; "page runs: N" above the page, written by every run of the page
fragment).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.helpers import (
    open_app,
    page_problems,
    slider_thumb,
    streamlit_server,
    wait_for_app_run,
)
from ui.format import number

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def traced_url() -> Iterator[str]:
    with streamlit_server(env={"ROOFLINE_TRACE_RUNS": "1"}) as url:     # the server counts its runs on the page
        yield url


def _count(page, what: str) -> int:
    text = page.get_by_text(re.compile(rf"^{what} runs: \d+$")).first.inner_text()
    return int(text.rsplit(" ", 1)[1])


def _share(page) -> str:
    return page.get_by_test_id("stSidebar").get_by_test_id("stCode").inner_text()


def test_page_dial_reruns_only_the_page_and_updates_url_and_share_box(traced_url, app_page):
    page = app_page
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

    # A sidebar dial reruns the shell (the dials, then the page), not app.py.
    shell0 = _count(page, "shell")
    batch = slider_thumb(page, "Batch")
    batch_before = batch.get_attribute("aria-valuetext")
    batch.press("ArrowRight")
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    expect(page.get_by_text(f"shell runs: {shell0 + 1}")).to_be_visible()
    assert _count(page, "page") == page0 + 3
    assert _count(page, "full") == full0, "a sidebar dial reran app.py"
    assert batch.get_attribute("aria-valuetext") != batch_before
    b_url = parse_qs(urlsplit(page.url).query)["b"][0]
    assert b_url == batch.get_attribute("aria-valuetext").replace(",", "")
    assert f"b={b_url}" in _share(page) and f"p={p_url}" in _share(page)
    # The page read the new View: its caption names the batch.
    shown = re.escape(batch.get_attribute("aria-valuetext"))
    expect(page.get_by_test_id("stMain").get_by_text(re.compile(rf"B = {shown}\b")).first).to_be_visible()
    # One set of dials and one share box: the shell's rerun replaced its sidebar elements in place.
    sidebar = page.get_by_test_id("stSidebar")
    assert sidebar.get_by_test_id("stSlider").filter(has_text="Batch B").count() == 1
    assert sidebar.get_by_test_id("stCode").count() == 1
    assert page_problems(page) == []


def test_a_section_dial_reruns_only_its_section_and_updates_url_and_share_box(traced_url, app_page):
    """ui/elements/section.py: on Prices, d_head feeds only the architecture cross-check and the cache-hit
    section, a nested fragment.  Moving it reruns neither the app nor the page, yet its numbers, the
    URL and the share box follow.  Na reruns the section of sections 2-5 that holds it (and the nested
    one, which reads it); a page dial above both (the featured price) still reruns the page."""
    page = app_page
    open_app(page, traced_url + "/prices")
    full0, page0 = _count(page, "full"), _count(page, "page")
    main = page.get_by_test_id("stMain")
    d_head = main.get_by_test_id("stSlider").filter(has_text="d_head").get_by_role("slider")
    assert d_head.get_attribute("aria-valuetext") == "128"
    # 1 layer × 2 × d_head 128 × 8 KV heads × 1 B (fp8) = 2,048 B; at d_head 192: 3,072 B.
    cross_check = main.get_by_test_id("rfMetric").filter(has_text="Architecture cross-check")
    expect(cross_check).to_contain_text("2.05 kB")
    d_head.press("ArrowRight")
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    assert d_head.get_attribute("aria-valuetext") == "192"
    expect(cross_check).to_contain_text("3.07 kB")
    # The cache-hit section reads the same KV: recompute ÷ reload = 2·Na/((F/bw)·kv) = 2e11/(600·3072).
    expect(main.get_by_test_id("rfMetric").filter(has_text="Roofline: recompute ÷ HBM read")).to_contain_text(
        f"{number(2e11 / (600 * 3072))}×")
    assert (_count(page, "full"), _count(page, "page")) == (full0, page0), "a section dial reran the page"
    expect(page).to_have_url(re.compile(r"[?&]pr_dh=192"))
    assert "pr_dh=192" in _share(page)

    # Na sits in the outer section (sections 2-5, its dials feed nothing above them): it reruns that
    # section, not the page, and the nested cross-check section reads the new value.
    na = main.get_by_role("spinbutton", name="Active params Na [billions]")
    na.fill("200")
    na.press("Enter")
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    expect(main.get_by_test_id("rfMetric").filter(has_text="Roofline: recompute ÷ HBM read")).to_contain_text(
        f"{number(4e11 / (600 * 3072))}×")
    assert (_count(page, "full"), _count(page, "page")) == (full0, page0), "Na reran the page"
    expect(page).to_have_url(re.compile(r"pr_na=200"))
    assert "pr_dh=192" in page.url and "pr_dh=192" in _share(page) and "pr_na=200" in _share(page)

    # A page dial above both sections (the featured price) reruns the page; the sections keep their dials.
    main.get_by_test_id("stSelectbox").filter(has_text="Featured price").locator("input").click()
    page.keyboard.press("ArrowDown")            # the next price preset in the list
    page.keyboard.press("Enter")
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    expect(page.get_by_text(f"page runs: {page0 + 1}")).to_be_visible()
    expect(page).to_have_url(re.compile(r"pr_offer="))
    expect(cross_check).to_contain_text("3.07 kB")
    assert "pr_na=200" in page.url and "pr_dh=192" in page.url

    # The section alone again after that page run, then a sidebar dial (a shell run): the box follows.
    d_head.press("ArrowLeft")
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    expect(cross_check).to_contain_text("2.05 kB")
    assert _count(page, "page") == page0 + 1
    expect(page).not_to_have_url(re.compile(r"pr_dh="))
    assert "pr_dh" not in _share(page) and "pr_na=200" in _share(page)
    shell0 = _count(page, "shell")
    slider_thumb(page, "Batch").press("ArrowRight")
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    expect(page.get_by_text(f"shell runs: {shell0 + 1}")).to_be_visible()
    assert _count(page, "page") == page0 + 2
    assert "b=" in _share(page) and "pr_na=200" in _share(page)
    d_head.press("ArrowRight")
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    expect(cross_check).to_contain_text("3.07 kB")
    assert (_count(page, "full"), _count(page, "shell"), _count(page, "page")) == (full0, shell0 + 1, page0 + 2)
    assert "pr_dh=192" in _share(page) and "b=" in _share(page) and "pr_na=200" in _share(page)
    assert page.get_by_test_id("stSidebar").get_by_test_id("stCode").count() == 1
    assert page_problems(page) == []


def test_scale_up_grow_by_and_moe_hop_latency_rerun_only_their_sections(traced_url, app_page):
    """The other sections (ui/elements/section.py): Scale-up's row 2 ("Grow by") and MoE's tensor-parallel part
    (its hop latency).  Each dial's move changes what it drives and the URL, and reruns no page."""
    page = app_page
    open_app(page, traced_url + "/scale-up")
    full0, page0 = _count(page, "full"), _count(page, "page")
    main = page.get_by_test_id("stMain")
    main.get_by_test_id("stRadio").filter(has_text="Grow by").get_by_text("×8").click()
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    expect(main.get_by_text("×8 chips: more pipeline stages or a bigger domain?")).to_be_visible()
    assert (_count(page, "full"), _count(page, "page")) == (full0, page0), "Grow by reran the page"
    expect(page).to_have_url(re.compile(r"[?&]sx=8"))
    assert "sx=8" in _share(page)

    open_app(page, traced_url + "/moe")
    # With an MoE model the part sits in a lazy expander: opening it reruns the page, which draws it.
    main.get_by_test_id("stExpander").filter(has_text="Tensor parallelism instead").locator("summary").click()
    hop = main.get_by_role("spinbutton", name="All-reduce hop latency [µs]")
    expect(hop).to_be_visible()
    wait_for_app_run(page)
    full0, page0 = _count(page, "full"), _count(page, "page")
    hop.fill("50")
    hop.press("Enter")
    page.wait_for_timeout(400)
    wait_for_app_run(page)
    # The text beside the dial names the hop latency it read.
    expect(main.get_by_text(re.compile(r"hop latency 50 µs"))).to_be_visible()
    assert (_count(page, "full"), _count(page, "page")) == (full0, page0), "the hop latency reran the page"
    expect(page).to_have_url(re.compile(r"[?&]hop_us=50"))
    assert "hop_us=50" in _share(page)
    assert page_problems(page) == []
