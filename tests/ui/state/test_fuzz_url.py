"""Bad URLs, fuzzed: every page of tests/app/helpers.PAGES, through AppTest.

Query strings mix the page's own dials and the sidebar's with other pages' keys and unknown ones;
values are garbage, NaN, ±inf, negative, huge, empty, unicode, markup, very long, repeated — and
sometimes valid.  Whatever the mix:

  * no exception and no error box (the page draws);
  * every bad value of a dial this page reads is named in a notice, and that dial falls back to its
    default; a valid value draws no complaint; a repeated key is named;
  * every key no page owns is named as unknown (Streamlit's own `embed`/`embed_options` aside);
  * the address the app writes back holds only this page's dials, each with a value that parses;
  * a URL whose every value is bad draws exactly the default page.

Plus, without Streamlit: every registered dial's parser, and the custom chip/model decoder
(`xhw`/`xm`), never raise anything but the errors the seeding code catches, and what they accept
round-trips through the URL text the app writes.

Sizes: CI runs a few examples per page (ROOFLINE_FUZZ_EXAMPLES, default 4; the parser fuzz runs
40× that).  A long local run: `ROOFLINE_FUZZ_EXAMPLES=200 python -m pytest -q -p no:cacheprovider
tests/ui/state/test_fuzz_url.py`.  Under CI=true the examples are derandomised (the same inputs every run).
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import fields

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.app.helpers import PAGES, app, assert_clean, charts
from ui.state import dials

EXAMPLES = int(os.environ.get("ROOFLINE_FUZZ_EXAMPLES", "4"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much], print_blob=True)
FAST_FUZZ = settings(FUZZ, max_examples=EXAMPLES * 40)

STREAMLIT_KEYS = {"embed", "embed_options"}   # Streamlit reads and keeps these itself

# Values no dial accepts: not numbers, not finite, too long, markup, control characters …
BAD_VALUES = [
    "nan", "NaN", "-nan", "inf", "-inf", "+inf", "Infinity", "1e309", "-1e309", "1e999",
    "garbage", "<script>alert(1)</script>", "<b>bold</b>", "[x](https://example.com)", "![i](http://127.0.0.1:9/p.png)",
    "**", "`", "$x$", "\\", "\x00", "\n", "\t", "🦙", "٣", "x" * 65, "9" * 400, "1" * 5000, "0x10", "1,5", "1/2",
    "{}", "[]", "true", "null", "'; DROP TABLE x; --", "%00", "%ZZ", "&", "=", "#", "+", "~", "~~~",
    "h100~", "h100~bw", "h100~bw:", "h100~bw:nan", "h100~bw:-1", "h100~bw:1e999", "h100~zz:1", "h100~bw:1~bw:2",
    "nope~n:x", "llama-3.1-70b~Na:1e20", "llama-3.1-70b~N:0", "llama-3.1-70b~k:1.5", "llama-3.1-70b~at:bogus",
]
# Numbers at and beyond the edges: negative, zero, subnormal, huge, fractional.
EDGE_NUMBERS = ["-1", "-0", "0", "-1e-9", "1e-320", "1e308", "1e16", "0.5", "1.5", "3", "64", "1000", "1001",
                "1_000", "1e3", " 64 ", "64.0", "6.4e1", "٦٤", "６４"]
BAD_KEYS = ["", " ", "B", "b ", "CHIP", "chip[]", "zz", "é", "🦙", "<b>k</b>", "[k](https://example.com)", "k" * 100,
            "pr_", "pr_" + "x" * 20, "pr_é", "__proto__", "constructor", "%00", "\x00", "a=b", "a&b"]
EMBED = ["embed", "EMBED", "embed_options"]


def _text(max_size: int) -> st.SearchStrategy[str]:
    # Any character a URL can carry (no lone surrogates: they cannot be UTF-8-encoded into a URL).
    return st.text(st.characters(blacklist_categories=("Cs",)), max_size=max_size)


@functools.cache
def layout() -> dict:
    """Each page at its defaults: its own dial keys and its charts; the sidebar dial keys."""
    out = {}
    for page in PAGES:
        at = app(page=page)
        assert_clean(at)
        own = at.session_state[dials.PAGE_DIALS_KEY] if dials.PAGE_DIALS_KEY in at.session_state else ()
        out[page] = {"own": tuple(own),
                     "charts": charts(at)}
    sidebar = tuple(k for k in (d.key for d in dials.sidebar_dials()))
    all_page_keys = sorted({k for v in out.values() for k in v["own"]} | set(dials.PAGE_KEYS))
    return {"pages": out, "sidebar": sidebar, "page_keys": all_page_keys}


def valid_texts(dial: dials.Dial) -> list[str]:
    """Values the dial accepts: its default as the app writes it, and edge numbers it takes."""
    out = [dial.fmt(dial.default)]
    for v in [*EDGE_NUMBERS, "auto", "preset", "lecture", "per-phase", "bf16", "fp8", "fp4", "h100", "b200",
              "llama-3.1-70b", "deepseek-v3", "h100~bw:4e12", "llama-3.1-70b~Na:4e10"]:
        if accepts(dial, v):
            out.append(v)
    return out


def accepts(dial: dials.Dial, text: str) -> bool:
    if len(text) > dial.max_chars:
        return False
    try:
        dial.parse(text)
    except (ValueError, TypeError, OverflowError):
        return False
    return True


def url_notices(at) -> list[str]:
    return [w.value for w in at.warning if w.value.startswith("URL parameter")]


def named(key: str, notices: list[str]) -> list[str]:
    """The notices that name `key`: quoted ('b', as the app names its own dials) or, for other keys,
    the text as given (in quotes or a code span), cut to the app's MAX_PARAM_CHARS."""
    shown = key if len(key) <= dials.MAX_PARAM_CHARS else key[:dials.MAX_PARAM_CHARS] + "…"
    frags = {repr(shown), f"'{key}'"} | ({f" {shown} `", f"'{shown}'"} if shown.strip() else set())
    return [n for n in notices if any(f in n for f in frags)]


@st.composite
def queries(draw, page: str) -> dict[str, str | list[str]]:
    lay = layout()
    own = list(lay["sidebar"]) + list(lay["pages"][page]["own"])
    others = [k for k in lay["page_keys"] if k not in own]
    n = draw(st.integers(1, 6))
    q: dict[str, str | list[str]] = {}
    for _ in range(n):
        source = draw(st.sampled_from(["own", "own", "own", "other", "bad", "random", "embed"]))
        if source == "own" or (source == "other" and not others):
            key = draw(st.sampled_from(own))
        elif source == "other":
            key = draw(st.sampled_from(others))
        elif source == "bad":
            key = draw(st.sampled_from(BAD_KEYS))
        elif source == "embed":
            key = draw(st.sampled_from(EMBED))
        else:
            key = draw(_text(24))
        def value(dial: dials.Dial | None = dials.REGISTRY.dials.get(key)) -> str:
            kind = draw(st.sampled_from(["bad", "bad", "edge", "valid", "float", "int", "text", "long"]))
            if kind == "bad":
                return draw(st.sampled_from(BAD_VALUES))
            if kind == "edge":
                return draw(st.sampled_from(EDGE_NUMBERS))
            if kind == "valid" and dial is not None:
                return draw(st.sampled_from(valid_texts(dial)))
            if kind == "float":
                return repr(draw(st.floats(allow_nan=True, allow_infinity=True)))
            if kind == "int":
                return str(draw(st.integers(-(10 ** 30), 10 ** 30)))
            if kind == "long":
                return draw(st.sampled_from(["7" * 10_000, "é" * 700, "a~" * 400]))
            return draw(_text(40))

        q[key] = [value() for _ in range(draw(st.integers(2, 3)))] if draw(st.integers(0, 5)) == 0 else value()
    return q


def link_version(q: dict[str, str | list[str]]) -> int:
    """The defaults version the app reads `q` under (ui/state/dials.py link_version), worked out here on its own:
    a valid `v` names it; a garbled `v` means today's; no `v` means version 1 if the link names a dial — a
    sidebar dial or a page's, not the walkthrough's step and presentation keys (wk_…), nor a key no page knows."""
    raw = q.get(dials.VERSION_KEY)
    if raw is not None:
        raw = raw[0] if isinstance(raw, list) else raw
        try:
            v = int(raw)
        except ValueError:
            return dials.URL_VERSION
        return v if 1 <= v <= dials.URL_VERSION else dials.URL_VERSION
    lay = layout()
    known = set(lay["sidebar"]) | set(lay["page_keys"])
    named_dials = [k for k in q if (k in known or dials.is_page_key(k)) and not k.startswith("wk_")]
    return 1 if named_dials else dials.URL_VERSION


def default_of(dial: dials.Dial, version: int):
    return dials.LEGACY_DEFAULTS.get(version, {}).get(dial.key, dial.default)


def check_query(page: str, q: dict[str, str | list[str]]):
    lay = layout()
    version = link_version(q)
    own_keys = set(lay["sidebar"]) | set(lay["pages"][page]["own"])
    at = app(q, page=page)
    assert_clean(at)
    notices = url_notices(at)
    unknown = [k for k in q if k not in own_keys and k.lower() not in STREAMLIT_KEYS and k != dials.VERSION_KEY
               and not dials.is_page_key(k) and k not in dials.REGISTRY.dials]
    all_bad = True
    for key, raw in q.items():
        vals = raw if isinstance(raw, list) else [raw]
        if key in own_keys:
            dial = dials.REGISTRY.dials[key]
            ok = accepts(dial, vals[0])
            all_bad &= not ok
            if len(vals) > 1:
                assert any("times" in n for n in named(key, notices)), (key, vals, notices)
            bad_notes = [n for n in named(key, notices) if "not valid" in n]
            if ok:
                assert not bad_notes, (key, vals[0], bad_notes)
            else:
                assert bad_notes, f"bad value {vals[0]!r} of {key!r} not reported; notices: {notices}"
                assert at.session_state[key] == default_of(dial, version), (key, at.session_state[key])
    for key in unknown:
        hits = [n for n in named(key, notices) if "not one this app knows" in n]
        if not hits:   # a key with characters the notice escapes: at least one unknown-key notice per key
            assert sum("not one this app knows" in n for n in notices) >= len(unknown), (key, notices)
    # The address written back: only this page's dials, each with a value the dial accepts.
    for key, val in at.query_params.items():
        if key.lower() in STREAMLIT_KEYS:
            continue
        if key == dials.VERSION_KEY:    # every written link says which defaults it leaves out
            assert val == str(dials.URL_VERSION), val
            continue
        assert key in own_keys, f"the app wrote {key!r} into the URL on /{page}"
        val = val[0] if isinstance(val, list) else val
        assert accepts(dials.REGISTRY.dials[key], val), (key, val)
    if all_bad:   # every dial value rejected: exactly the default page (drawn afresh: files may change
        assert charts(at) == charts(app({dials.VERSION_KEY: str(version)}, page=page))  # during a long local run)
    return at


@pytest.mark.parametrize("page", list(PAGES))
def test_fuzzed_query_strings(page):
    layout()   # discovery outside the hypothesis-timed body

    @FUZZ
    @given(q=queries(page))
    def run(q):
        check_query(page, q)
    run()


@pytest.mark.parametrize("page", list(PAGES))
def test_every_dial_garbled_at_once(page):
    """One URL, every own dial bad in a different way, plus unknown and repeated keys."""
    lay = layout()
    own = list(lay["sidebar"]) + list(lay["pages"][page]["own"])
    bad = ["nan", "inf", "-1e309", "garbage", "<b>x</b>", "x" * 700, "", "🦙", "9" * 400, "[x](https://example.com)"]
    q: dict[str, str | list[str]] = {k: bad[i % len(bad)] for i, k in enumerate(own)
                                     if not accepts(dials.REGISTRY.dials[k], bad[i % len(bad)])}
    q |= {"zz": "1", "<b>k</b>": "1", "🦙": "🦙"}
    q[own[0]] = ["garbage", "1"]
    at = check_query(page, q)
    assert len(url_notices(at)) >= len(q)


def test_notices_can_be_dismissed_and_the_page_keeps_working():
    at = app({"b": "nan", "zz": "1"})
    assert len(url_notices(at)) == 2
    at.button(key="_dismiss_url_notices").click().run()
    assert_clean(at)
    assert url_notices(at) == [] and charts(at)


# ---------------------------------------------------------------- parsers, without Streamlit

def _all_dials() -> list[dials.Dial]:
    layout()
    return sorted(dials.REGISTRY.dials.values(), key=lambda d: d.key)


@FAST_FUZZ
@given(data=st.data())
def test_dial_parsers_raise_only_what_seeding_catches_and_round_trip(data):
    dial = data.draw(st.sampled_from(_all_dials()))
    text = data.draw(st.one_of(st.sampled_from(BAD_VALUES + EDGE_NUMBERS + valid_texts(dial)), _text(80),
                               st.floats().map(repr), st.integers(-(10 ** 400), 10 ** 400).map(str)))
    if len(text) > dial.max_chars:
        return
    try:
        v = dial.parse(text)
    except (ValueError, TypeError, OverflowError):
        return
    if isinstance(v, float):
        assert math.isfinite(v), (dial.key, text, v)
    back = dial.fmt(v)           # what write_url puts in the address bar
    assert accepts(dial, back), (dial.key, text, back)
    again = dial.parse(back)
    if isinstance(v, float) and isinstance(again, float):
        assert again == pytest.approx(v, rel=1e-5), (dial.key, text, back)
    else:
        assert again == v, (dial.key, text, back)


def _custom():
    from ui.state import custom
    return custom


@st.composite
def custom_texts(draw, kind: str) -> str:
    custom = _custom()
    base = draw(st.sampled_from([*_presets(kind), "nope", "", "H100", " h100 ", "h100 ", "LLAMA-3.1-70B"]))
    codes = [*custom.CODES[kind].values(), "zz", "", "N ", "Na:"]
    parts = [base]
    for _ in range(draw(st.integers(0, 5))):
        code = draw(st.sampled_from(codes))
        val = draw(st.one_of(st.sampled_from(BAD_VALUES + EDGE_NUMBERS + ["none", "None", "mla", "gqa", "mha",
                                                                          "bf16", "fp8", "1e12", "4e10"]),
                             st.floats().map(repr), _text(12)))
        sep = draw(st.sampled_from([":", ":", ":", "", "::"]))
        parts.append(f"{code}{sep}{val}")
    return draw(st.sampled_from(["~", "~", "~~", "%7E"])).join(parts)


def _presets(kind: str) -> list[str]:
    from model import presets
    return list(presets.hardware_presets() if kind == "hardware" else presets.model_presets())


@pytest.mark.parametrize("kind", ["hardware", "model"])
def test_custom_spec_decoder_fuzzed(kind):
    custom = _custom()

    @FAST_FUZZ
    @given(text=st.one_of(custom_texts(kind), _text(200)))
    @example(text="llama-3.1-70b~wt:1048576")     # a 2**20-token window: an integer past 6 digits
    @example(text="h100~d:1000001")
    def run(text):
        try:
            base, spec = custom.decode(kind, text)
        except ValueError as e:
            msg = str(e)
            assert msg and "\n" not in msg, repr(msg)        # one line, for the notice
            return
        for f in fields(spec):
            v = getattr(spec, f.name)
            if f.metadata.get("kind") == "number" and v is not None:
                assert math.isfinite(v), (text, f.name, v)
        # What the app writes back decodes to the same spec.
        again = custom.decode(kind, custom.encode(kind, spec, base))[1]
        for f in fields(spec):
            if f.name != "meta":
                a, b = getattr(spec, f.name), getattr(again, f.name)
                assert a == b or (isinstance(a, float) and b == pytest.approx(a, rel=1e-5)), (text, f.name, a, b)
    run()
