"""AppTest: links a presenter types by hand.  The URL contract (docs/design.md "The URL"): a link with a dial
and no `v` was made under version 1 and keeps its old defaults; a link that names no dial — only which
walkthrough step to show and how (`wk_step`, `wk_present`), or keys no page knows — opens today's defaults."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests import ROOT
from tests.app.helpers import app, assert_clean
from ui.state import dials

SIDEBAR = ("chip", "model", "w", "kv", "cd", "b", "ctx", "c")     # the dials whose defaults changed in version 2


def state(at, keys=SIDEBAR) -> dict:
    return {k: at.session_state[k] for k in keys}


def today(**changed) -> dict:
    return {k: changed.get(k, dials.DEFAULTS[k]) for k in SIDEBAR}


def version_1(**changed) -> dict:
    return {k: changed.get(k, dials.LEGACY_DEFAULTS[1].get(k, dials.DEFAULTS[k])) for k in SIDEBAR}


def readme_presentation_links() -> list[str]:
    """Every walkthrough link the README shows (a path with its query, as a presenter would type it)."""
    text = (ROOT / "README.md").read_text()
    return sorted(set(re.findall(r"`(/walkthrough\?[^`\s]+)`", text)))


def open_link(link: str, page: str = "walkthrough"):
    at = app(dict(parse_qsl(urlsplit(link).query)), page=page)
    assert_clean(at)
    return at


def test_the_readme_shows_a_presentation_link():
    assert "/walkthrough?wk_present=1" in readme_presentation_links()


@pytest.mark.parametrize("link", sorted({"/walkthrough?wk_present=1", "/walkthrough?wk_step=3&wk_present=1",
                                          "/walkthrough?wk_step=2", *readme_presentation_links()}))
def test_a_typed_presentation_link_opens_today_s_defaults(link):
    at = open_link(link)
    assert state(at) == today()
    # nothing of version 1 is spelled out when the link is written back
    written = dict(at.query_params)
    assert not set(written) & set(SIDEBAR), written
    assert at.toggle(key="wk_present_toggle").value == ("wk_present=1" in link)


def test_a_key_no_page_knows_names_no_dial():
    """A tracker's tag on a typed link is ignored with a notice; it does not make the link an old one."""
    at = open_link("/walkthrough?wk_present=1&utm_source=talk")
    assert state(at) == today()
    assert any("utm_source" in w.value and "not one this app knows" in w.value for w in at.warning)


@pytest.mark.parametrize("link, page, dial, without", [
    # a sidebar dial beside the walkthrough's keys
    ("/walkthrough?wk_present=1&b=128", "walkthrough", {"b": 128}, "/walkthrough?wk_present=1"),
    ("/walkthrough?wk_step=3&chip=b200", "walkthrough", {"chip": "b200"}, "/walkthrough?wk_step=3"),
    # a page's own dial, listed (MoE's G) or under the page's prefix (Context's cx_)
    ("/moe?g=64", "moe", {}, "/moe"),
    ("/context?cx_f=0.2", "context", {}, "/context"),
    ("/batch?b=128", "batch", {"b": 128}, "/batch"),
])
def test_a_link_with_a_dial_and_no_v_keeps_its_version_1_defaults(link, page, dial, without):
    at = open_link(link, page)
    assert state(at) == version_1(**dial)
    # the same numbers as the link with `v=1` spelled out
    assert state(open_link(link + "&v=1", page)) == state(at)
    # the same link without its dial opens today's defaults
    assert state(open_link(without, page)) == today()


@pytest.mark.parametrize("link", ["/walkthrough?wk_present=1", "/walkthrough?wk_step=4&wk_present=1"])
def test_a_presentation_link_reads_the_same_with_and_without_today_s_v(link):
    current = f"{link}&v={dials.URL_VERSION}"
    assert state(open_link(current)) == today() == state(open_link(link))
    # and a dial in a link with today's `v` changes only itself
    assert state(open_link(f"{current}&b=128")) == today(b=128)
