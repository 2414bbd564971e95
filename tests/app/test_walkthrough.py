"""AppTest: the presenter walkthrough page — forward/back, the step and presentation mode in the URL, the
audience QR code and the deck button (the steps themselves: tests/ui/present/test_walkthrough.py)."""

from __future__ import annotations

import base64
import re

from tests.app.helpers import app, assert_clean, charts, latex
from ui.present import walkthrough as wk


def test_page_steps_forward_and_back_and_the_url_follows():
    at = app(page="walkthrough")
    assert_clean(at)
    assert at.title[0].value.startswith("1. ")
    assert len(charts(at)) == 1
    at.button(key="wk_next").click().run()
    assert at.title[0].value.startswith("2. ") and at.query_params["wk_step"] == "2"
    at.button(key="wk_next").click().run()
    at.button(key="wk_prev").click().run()
    assert at.title[0].value.startswith("2. ")
    assert at.button(key="wk_prev").disabled is False


def test_link_opens_at_its_step_in_presentation_mode():
    n = len(wk.STEPS)
    at = app({"wk_step": str(n), "wk_present": "1"}, page="walkthrough")
    assert_clean(at)
    assert at.title[0].value.startswith(f"{n}. ")
    assert at.button(key="wk_next").disabled
    assert any("display: none" in h.proto.body for h in at.get("html"))


def test_every_step_runs_on_the_page():
    for k in range(1, len(wk.STEPS) + 1):
        at = app({"wk_step": str(k)}, page="walkthrough")
        assert_clean(at)
        assert len(charts(at)) == 1 and latex(at)


def test_garbled_step_gives_a_notice_and_step_one():
    at = app({"wk_step": "zero"}, page="walkthrough")
    assert not at.exception
    assert any("'wk_step'" in w.value for w in at.warning)
    assert at.title[0].value.startswith("1. ")


def test_walkthrough_uses_the_chapter_pages_dial_defaults():
    """Steps 8-11 start from the chapter pages' defaults; if a page's default changes, so must the step."""
    from ui.state.dials import REGISTRY
    for page in {s.page for s in wk.STEPS if s.key in ("training", "prices", "tiers", "context")}:
        assert_clean(app(page=page))                  # registers the page's dials (defaults included)
    d = {k: REGISTRY.dials[k].default for k in ("tt_na", "tt_rate", "tt_days", "tt_models", "tt_crl", "tt_irl",
                                                 "tt_iinf", "pr_tier", "pr_na", "pr_fpb", "pr_read", "pr_dh",
                                                 "pr_kvh", "pr_kvl", "pr_kvdt", "mt_hold", "mt_offer", "cx_f",
                                                 "cx_knee")}
    assert (d["tt_na"] * 1e9, d["tt_rate"] * 1e6, d["tt_days"], d["tt_models"]) == \
        (wk.TRAIN_NA, wk.TRAIN_RATE, wk.TRAIN_DAYS, wk.TRAIN_MODELS)
    assert (d["tt_crl"], d["tt_irl"], d["tt_iinf"]) == tuple(wk.TRAIN_COEF.values())
    assert (d["pr_tier"], d["pr_na"] * 1e9, d["pr_fpb"], d["pr_read"]) == \
        (wk.PRICE_TIER, wk.PRICE_NA, wk.PRICE_FPB, wk.PRICE_READ)
    assert (d["pr_dh"], d["pr_kvh"], d["pr_kvl"], d["pr_kvdt"]) == wk.PRICE_ARCH
    assert (float(d["mt_hold"]), d["mt_offer"]) == (wk.TIER_HOLD_S, wk.TIER_OFFER)
    assert (d["cx_f"], float(d["cx_knee"])) == (wk.CX_FRACTION, wk.CX_KNEE)


# ---------------------------------------------------------------- stage kit: the audience QR code, the deck button

def _qr(at) -> tuple[str, str] | None:
    """(the link the QR code says it carries, the SVG) — or None when no QR code is on the page."""
    for h in at.get("html"):
        m = re.search(r'<div class="wk-qr" data-link="([^"]*)"><img src="data:image/svg\+xml;base64,([^"]+)"',
                      h.proto.body)
        if m:
            return m.group(1).replace("&amp;", "&"), base64.b64decode(m.group(2)).decode()
    return None


def test_presentation_qr_code_carries_the_share_link_of_a_non_default_view():
    from urllib.parse import parse_qs, urlsplit

    from ui.present import qr

    query = {"chip": "h100", "model": "llama-3.1-70b", "b": "256", "ctx": "32768", "wk_step": "3", "wk_present": "1",
             "v": "2"}
    at = app(query, page="walkthrough")
    assert_clean(at)
    assert _qr(at) is None                                         # hidden until asked for
    at.button(key="wk_qr_button").click().run()
    assert_clean(at)
    link, svg = _qr(at)
    # the link is the share link: every non-default dial of this view, and nothing else
    assert {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()} == query
    # the code drawn is that link's QR code, module for module (quiet zone included)
    drawn = qr.svg_matrix(svg)
    assert drawn == qr.matrix(link)
    assert drawn != qr.matrix(link.replace("wk_step=3", "wk_step=4"))
    # a step taken with the QR code up: the code follows in the same run (not the previous step's link)
    at.button(key="wk_next").click().run()
    link, svg = _qr(at)
    assert parse_qs(urlsplit(link).query)["wk_step"] == ["4"] and qr.svg_matrix(svg) == qr.matrix(link)
    at.button(key="wk_qr_button").click().run()                     # the same button (or q) hides it
    assert _qr(at) is None


def test_qr_button_only_in_presentation_mode_and_the_deck_button_everywhere():
    at = app({"wk_step": "2"}, page="walkthrough")
    assert_clean(at)
    assert "wk_qr_button" not in [b.key for b in at.button]
    labels = [d.label for d in at.get("download_button")]
    assert "⬇ Download deck" in labels
    at = app({"wk_present": "1"}, page="walkthrough")
    assert "wk_qr_button" in [b.key for b in at.button]


