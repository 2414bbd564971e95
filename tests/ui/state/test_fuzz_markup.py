"""No user-provided string is rendered as HTML or as Markdown markup.

Audit (grep for `unsafe_allow_html` and `st.html`): views/compare.py renders a fixed colour swatch and
the slot number; views/walkthrough.py a fixed stylesheet — no user text reaches either.  Elsewhere
Streamlit escapes HTML (checked in Chromium: a URL key `<b id=inj>` draws no element).  But Markdown is
rendered in alerts, captions, markdown, labels and help tooltips, so a crafted link could put a
disguised clickable `[text](https://…)` or a remote `![image](https://…)` into the app's own warning
boxes and captions (checked in Chromium: drawn as <a> and <img>).  Backslash-escaping is not enough
(Streamlit still autolinks a bare URL); a code span shows the text exactly, with no link.

The check, through AppTest: open pages with URL keys, values and custom chip/model names carrying link,
image and HTML markup; then no string Streamlit renders as Markdown (alert and markdown bodies, labels,
help) may hold an unescaped `[text](url)` / `![alt](url)` to the injected URL outside a code span.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from google.protobuf.descriptor import FieldDescriptor

from tests.app.helpers import PAGES, app, assert_clean

EVIL = "https://example.com/x"
LINK, IMAGE, TAG = f"[click]({EVIL})", f"![i]({EVIL}.png)", "<b id=inj>x</b>"
MARKDOWN_FIELDS = {"body", "label", "help", "caption"}

CASES = {
    "unknown key": ({LINK: "1", IMAGE: "1", TAG: "1"}, "batch"),
    "bad sidebar values": ({"b": LINK, "ctx": IMAGE, "mfu": TAG}, "batch"),
    "bad custom chip text": ({"xhw": f"h100~{LINK}:1", "xm": f"{IMAGE}"}, "batch"),
    "custom chip name": ({"xhw": f"h100~n:{LINK}", "chip": "custom"}, "batch"),
    "custom model name": ({"xm": f"llama-3.1-70b~n:{IMAGE}", "model": "custom"}, "kv-cache"),
    "custom names on compare": ({"xhw": f"h100~n:{LINK}", "xm": f"llama-3.1-70b~n:{IMAGE}", "chip": "custom",
                                 "model": "custom"}, "compare"),
    "custom names on the custom page": ({"xhw": f"h100~n:{LINK}", "chip": "custom"}, "custom"),
}


def markdown_strings(at) -> list[str]:
    """Every string of the rendered tree that Streamlit treats as Markdown."""
    out: list[str] = []

    def from_proto(msg) -> None:
        for f, v in msg.ListFields():
            many = f.is_repeated if hasattr(f, "is_repeated") else f.label == 3   # protobuf ≥ 6 / older
            if f.type == FieldDescriptor.TYPE_MESSAGE:
                for m in (v if many else [v]):
                    from_proto(m)
            elif f.type == FieldDescriptor.TYPE_STRING and f.name in MARKDOWN_FIELDS:
                out.extend(v if many else [v])

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            from_proto(proto)
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    return out


_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LIVE_LINK = re.compile(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\(\s*" + re.escape(EVIL))


def live_markup(text: str) -> list[str]:
    """Injected markup that Markdown would render: a link or an image to EVIL."""
    return [m.group(0) for m in _LIVE_LINK.finditer(_CODE_SPAN.sub("", text))]


def test_the_checker_sees_markup_and_ignores_escaped_or_quoted_markup():
    assert live_markup(f"URL parameter '{LINK}' is unknown") == [f"[click]({EVIL}"]
    assert live_markup(f"an image {IMAGE}") == [f"[i]({EVIL}"]
    assert live_markup(f"URL parameter `{LINK}` is unknown") == []
    assert live_markup(r"URL parameter '\[click\]\(https\://example.com/x\)'") == []
    assert live_markup(f"URL parameter ``{LINK} ` `` is unknown") == []
    assert live_markup(f"a name {LINK.replace('[', '').replace(']', '')}") == []


@pytest.mark.parametrize("name", list(CASES))
def test_url_markup_is_never_rendered(name):
    query, page = CASES[name]
    assert page in PAGES
    at = app(query, page=page)
    assert_clean(at)
    found = {s[:160]: live_markup(s) for s in markdown_strings(at) if live_markup(s)}
    assert not found, (f"/{page}?{urlencode(query)} renders user markup as Markdown "
                       f"(escape it, or show it in a code span): {found}")
