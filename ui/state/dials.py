"""Dials: every control's URL name, default, parser and widget — and the URL <-> state sync.

The URL contract (docs/design.md "The URL"): every dial is a query parameter with a short stable name; values
at their defaults stay out of the URL; a garbled, out-of-range or unknown parameter falls back to
its default with a visible notice naming it; never a traceback.

Mechanism (docs/design.md "Streamlit facts the app relies on"): on a session's first run each
dial's value is seeded into `st.session_state` from the URL (parsed and validated here); widgets
are created with `key=` and no `value=`; at the end of every run the non-default values are
written back with `st.query_params.from_dict`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

import views
from model import presets
from model.specs import COMPUTE_DTYPES, DTYPE_BYTES

NOTICES_KEY = "_url_notices"
SEEDED_KEY = "_url_seeded"
SEEDED_DIALS_KEY = "_url_seeded_dials"   # one set, not a key per dial: Streamlit copies the whole session
                                         # state once per widget call (`filtered_state`), so keys cost
MAX_PARAM_CHARS = 64

# Log-spaced choices (1-1.5-2-3-4-6-8 …) so sliders move in even ratios.
BATCH_OPTIONS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
                 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536]
CONTEXT_OPTIONS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 200_000, 262_144, 524_288,
                   1_048_576, 2_097_152, 4_194_304, 10_000_000]
CHIP_OPTIONS = ["auto", 1, 2, 4, 8, 16, 32, 64, 72, 128, 144, 256, 288, 576]
# Sparsity (total/active parameters) in log steps, and "preset" (None): the model's own figure.
SPARSITY_OPTIONS = [1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
CUSTOM = "custom"   # the chip/model choice that reads its spec from the xhw / xm URL parameter
# The estimate the batch pages' numbers read (ui/estimate.py): the ideal roofline (the default: every number
# keeps the meaning it had before the prediction existed, and the equations beside it are the roofline's) or
# the efficiency model fitted to the published measurements.  Both curves are drawn either way.
ESTIMATE_KEY = "est"
ESTIMATES = ("ideal", "predicted")
CHIP_MARKS = {8: "Hopper HGX", 72: "Blackwell NVL72", 144: "Rubin Ultra (144 packages)",
              576: "576 = Rubin Ultra dies, counted here as chips"}


@dataclass(frozen=True)
class Dial:
    """One URL-backed control.  `parse` turns the URL string into a value or raises ValueError."""

    key: str
    default: Any
    parse: Callable[[str], Any]
    fmt: Callable[[Any], str] = str
    allowed: str = ""                 # said in the notice when a URL value is rejected
    pages: tuple[str, ...] = ()       # () = a sidebar dial shown on every page
    max_chars: int = MAX_PARAM_CHARS  # longer URL values are rejected unread
    explain: bool = False             # say the parser's own reason in the notice
    options: tuple = ()               # a choice dial's options, in order (() for number and flag dials)


def _choice(options: list[Any]) -> Callable[[str], Any]:
    by_text = {str(o): o for o in options}

    def parse(text: str) -> Any:
        if text in by_text:
            return by_text[text]
        raise ValueError(text)
    return parse


def _number(lo: float, hi: float, *, allow_none: bool = False) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        if allow_none and text.strip().lower() in ("", "preset", "none"):
            return None
        v = float(text)
        if not (math.isfinite(v) and lo <= v <= hi):
            raise ValueError(text)
        return v
    return parse


def _fmt_number(v: Any) -> str:
    if v is None:
        return "preset"
    v = float(v)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def _options_text(options: list[Any]) -> str:
    if len(options) <= 8:
        return "one of " + ", ".join(map(str, options))
    return f"one of {options[0]}, {options[1]}, … {options[-1]}"


def md_code(text: object) -> str:
    """User text as a Markdown code span: shown exactly, never a link, an image, emphasis or an icon.
    (Backslash escapes are not enough: Streamlit still turns a bare https://… or www.… into a link.)"""
    text = str(text).replace("\n", " ")
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def choice_dial(key: str, options: list[Any], default: Any, pages: tuple[str, ...] = ()) -> Dial:
    return Dial(key, default, _choice(options), str, _options_text(options), pages, options=tuple(options))


def number_dial(key: str, lo: float, hi: float, default: Any, pages: tuple[str, ...] = (),
                allow_none: bool = False) -> Dial:
    allowed = f"a number from {lo:g} to {hi:g}" + (" (or empty for the preset value)" if allow_none else "")
    return Dial(key, default, _number(lo, hi, allow_none=allow_none), _fmt_number, allowed, pages)


def custom_dial(key: str, kind: str) -> Dial:
    """A custom chip or model carried in the URL (ui/state/custom.py: a preset plus changed fields)."""
    from ui.state import custom

    def parse(text: str) -> str:
        custom.decode(kind, text)      # raises ValueError naming the problem
        return text.strip()
    return Dial(key, "", parse, str, f"a {kind} preset name followed by ~code:value changes", (),
                custom.MAX_CHARS, explain=True)


@dataclass
class Registry:
    dials: dict[str, Dial] = field(default_factory=dict)

    def add(self, dial: Dial) -> Dial:
        self.dials[dial.key] = dial  # re-registered each run (options come from the presets)
        return dial


REGISTRY = Registry()


# ---------------------------------------------------------------- defaults, and the links made before them
# The first screen tells the lecture's story: a Blackwell NVL72 rack serving a DeepSeek-class sparse MoE
# at fp8, at a batch and context where the balance batch B* exists (B* = F/bw × sparsity × bytes/2 =
# 625 × 18.1 × 1/2 ≈ 5,700 with KV ignored; ≈ 14,000 with the KV of T = 2,048 tokens).
DEFAULTS = {"chip": "gb200", "model": "deepseek-v3", "w": "fp8", "kv": "fp8", "cd": "fp8",
            "b": 4096, "ctx": 2048, "c": 72}
# A link names only its non-default dials, so a link made under older defaults means those defaults for
# every dial it leaves out.  Links carry `v` (URL_VERSION) from version 2 on; a link with a dial and no `v`
# is version 1 (see link_version for what counts as a dial).  LEGACY_DEFAULTS[n]: the defaults of version
# n that differ from today's.
URL_VERSION = 2
VERSION_KEY = "v"
LEGACY_DEFAULTS: dict[int, dict[str, Any]] = {
    1: {"chip": "h100", "model": "llama-3.1-70b", "w": "bf16", "kv": "bf16", "cd": "bf16",
        "b": 64, "ctx": 8192, "c": "auto", "cmp_2": None, "cmp_3": None},
}
# "The lecture's round numbers" (sidebar button): the lecture GPU (F/bw = 300 at bf16) and the lecture's
# DeepSeek (sparsity 8), bf16 weights and FLOP/s: B* = 300 × 8 × 2/2 = 2,400.
LECTURE_SETTING = {"chip": "lecture-gpu", "model": "lecture-deepseek", "w": "bf16", "kv": "bf16", "cd": "bf16",
                   "sp": None, "price": None, "c": 72}


def _default(key: str, options: list[Any]) -> Any:
    d = DEFAULTS[key]
    return d if d in options else options[0]


# The pages whose own URL keys say which part of a view is shown and how, not what it computes: the
# walkthrough's (`wk_step`, `wk_present`) pick a step and presentation mode, and every step draws the
# sidebar's dials.  A link that carries only such keys names no dial, so it opens today's defaults: a
# presenter types `/walkthrough?wk_present=1` by hand, without `v`.
SHOWING_PAGES = ("walkthrough",)


def names_a_dial(key: str) -> bool:
    """Whether a URL key is a dial whose value the view computes with: a sidebar dial or a page's (listed or
    under its prefix), not a key that only picks what is shown (SHOWING_PAGES), nor one no page knows."""
    showing = tuple(p for p in (views.page(name).prefix for name in SHOWING_PAGES) if p)
    if showing and key.startswith(showing):
        return False
    return key in REGISTRY.dials or is_page_key(key)


def link_version() -> int:
    """The dial-defaults version the current URL was written under (see LEGACY_DEFAULTS): its `v`; without
    one, version 1 if the link names a dial (made before links carried `v`), else today's."""
    raw = _raw(VERSION_KEY)
    if raw is not None:
        try:
            v = int(raw)
            if 1 <= v <= URL_VERSION:
                return v
        except ValueError:
            pass
        _note(f"URL parameter 'v' = {md_code(repr(raw[:MAX_PARAM_CHARS]))} is not a link version this app "
              f"knows (1 to {URL_VERSION}); reading the link with today's defaults")
        return URL_VERSION
    try:
        has_dials = any(names_a_dial(k) for k in st.query_params.keys())
    except Exception:
        has_dials = False
    return 1 if has_dials else URL_VERSION


def sidebar_dials() -> list[Dial]:
    """The shared dials (their options come from the presets)."""
    chips = list(presets.hardware_presets())
    models = list(presets.model_presets())
    return [REGISTRY.add(d) for d in (
        custom_dial("xhw", "hardware"),
        custom_dial("xm", "model"),
        choice_dial("chip", [*chips, CUSTOM], _default("chip", chips)),
        choice_dial("model", [*models, CUSTOM], _default("model", models)),
        choice_dial("w", list(DTYPE_BYTES), DEFAULTS["w"]),
        choice_dial("kv", list(DTYPE_BYTES), DEFAULTS["kv"]),
        choice_dial("cd", list(COMPUTE_DTYPES), DEFAULTS["cd"]),
        choice_dial("b", BATCH_OPTIONS, DEFAULTS["b"]),
        choice_dial("ctx", CONTEXT_OPTIONS, DEFAULTS["ctx"]),
        choice_dial("c", CHIP_OPTIONS, DEFAULTS["c"]),
        number_dial("sp", 1, 1000, None, allow_none=True),
        number_dial("price", 0.01, 1000, None, allow_none=True),
        choice_dial("mode", ["lecture", "per-phase"], "lecture"),
        choice_dial(ESTIMATE_KEY, list(ESTIMATES), ESTIMATES[0]),
        number_dial("mfu", 0.01, 1, 1.0),
        number_dial("bwu", 0.01, 1, 1.0),
        choice_dial("img", ["png", "svg"], "png"),
    )]


PAGE_DIALS_KEY = "_page_dials"


def begin_run() -> None:
    """Start of every run: forget which page dials were drawn last time."""
    st.session_state[PAGE_DIALS_KEY] = []


def page_dial(dial: Dial) -> Dial:
    """Register a page-local dial and seed it (call before creating its widget)."""
    if not is_page_key(dial.key):
        raise ValueError(f"page dial {dial.key!r} must be listed in PAGE_KEYS or use a PAGE_KEY_PREFIXES prefix")
    REGISTRY.add(dial)
    _seed_one(dial)
    st.session_state.setdefault(PAGE_DIALS_KEY, []).append(dial.key)
    return dial


# ---------------------------------------------------------------- URL sync

def _notices() -> list[str]:
    return st.session_state.setdefault(NOTICES_KEY, [])


def _note(msg: str) -> None:
    n = _notices()
    if msg not in n:
        n.append(msg)


def _raw(key: str) -> str | None:
    try:
        vals = st.query_params.get_all(key)
    except Exception:  # a broken query string must never crash the page
        return None
    if not vals:
        return None
    if len(vals) > 1:
        _note(f"URL parameter '{key}' was given {len(vals)} times; using the first")
    return vals[0]


def _seed_one(dial: Dial) -> None:
    if dial.key in st.session_state:
        return
    seeded = st.session_state.setdefault(SEEDED_DIALS_KEY, set())
    raw = _raw(dial.key) if dial.key not in seeded else None
    seeded.add(dial.key)
    # Left out of the link, or not valid: the default of the link's version.
    default = LEGACY_DEFAULTS.get(link_version(), {}).get(dial.key, dial.default)
    value = default
    if raw is not None:
        shown = raw if len(raw) <= MAX_PARAM_CHARS else raw[:MAX_PARAM_CHARS] + "…"
        try:
            if len(raw) > dial.max_chars:
                raise ValueError(f"{len(raw):,} characters; at most {dial.max_chars:,}")
            value = dial.parse(raw)
        except (ValueError, TypeError, OverflowError) as e:
            why = f"{md_code(e)}; {dial.allowed}" if dial.explain and str(e) else dial.allowed
            _note(f"URL parameter '{dial.key}' = {md_code(repr(shown))} is not valid ({why}); "
                  f"using the default {dial.fmt(default) or '(none)'}")
    st.session_state[dial.key] = value


def seed_from_url(dials: list[Dial]) -> None:
    """First run of a session: take each dial's value from the URL; note bad and unknown params."""
    for d in dials:
        _seed_one(d)
    if not st.session_state.get(SEEDED_KEY):
        st.session_state[SEEDED_KEY] = True
        known = set(REGISTRY.dials) | set(PAGE_KEYS) | {VERSION_KEY}
        try:
            keys = list(st.query_params.keys())
        except Exception:
            keys = []
        for k in keys:
            if k not in known and not is_page_key(k):
                shown = k if len(k) <= MAX_PARAM_CHARS else k[:MAX_PARAM_CHARS] + "…"
                _note(f"URL parameter {md_code(repr(shown))} is not one this app knows; ignored")


# Page-local dial keys, declared up front so the first run (on any page) does not call them unknown.
PAGE_KEYS = ("fm", "offer", "S", "Pm", "bs", "bf", "sa", "knee", "tier", "na",
             # scale-up page
             "su", "sx",
             # MoE layout page
             "g", "e", "k", "ab", "tw", "hop_us",
             # pipelining page
             "p", "hop", "mb", "cut")
# Newer pages name their dials with a page prefix, declared with the page (views/__init__.py), so a page
# can be added without editing this module.
PAGE_KEY_PREFIXES = tuple(p.prefix for p in views.PAGES if p.prefix)


def is_page_key(key: str) -> bool:
    """A URL key some page may own (listed, or with a page prefix and a short name after it)."""
    return key in PAGE_KEYS or (key.startswith(PAGE_KEY_PREFIXES) and 3 <= len(key) <= 16
                                and key.replace("_", "").isalnum() and key.isascii())


def write_url() -> None:
    """Write every non-default dial of the sidebar and of the current page into the URL."""
    current_page_dials = st.session_state.get(PAGE_DIALS_KEY, [])
    out: dict[str, str] = {}
    for key, dial in REGISTRY.dials.items():
        if dial.pages and key not in current_page_dials:
            continue
        if key not in st.session_state:
            continue
        v = st.session_state[key]
        if v != dial.default:
            out[key] = dial.fmt(v)
    if out:
        out[VERSION_KEY] = str(URL_VERSION)
    try:
        # Written every run, not only when the server's copy differs: a rerun can carry a URL that a
        # faster, interrupted run has since changed in the browser (then both copies say "2" while the
        # address bar says "3"). The browser ignores an update equal to its address (no history entry).
        st.query_params.from_dict(out)
    except Exception:  # never let URL writing break the page
        pass


def note_unknown_page_keys() -> None:
    """After the page ran: a URL key with this page's prefix (e.g. `pr_zzz` on Prices) that the page
    did not register is unknown here — say so, like any other unknown parameter.  Keys with another
    page's prefix are left alone (they may come from a link to that page)."""
    mine = st.session_state.get(PAGE_DIALS_KEY, [])
    prefixes = {p for p in PAGE_KEY_PREFIXES for k in mine if k.startswith(p)}
    if not prefixes:
        return
    try:
        keys = list(st.query_params.keys())
    except Exception:
        return
    said = " ".join(_notices())
    for k in keys:
        if k.startswith(tuple(prefixes)) and k not in mine and repr(k) not in said:
            shown = k if len(k) <= MAX_PARAM_CHARS else k[:MAX_PARAM_CHARS] + "…"
            _note(f"URL parameter {md_code(repr(shown))} is not one this page knows; ignored")


def show_notices() -> None:
    """Show the URL notices of this session (and let the user dismiss them)."""
    notes = _notices()
    if not notes:
        return
    box = st.container()
    with box:
        for n in notes:
            st.warning(n, icon="⚠️")
        if st.button("Dismiss", key="_dismiss_url_notices"):
            st.session_state[NOTICES_KEY] = []
            st.rerun()


def share_link() -> str:
    """The current page's address with every non-default dial (for the copy box)."""
    from urllib.parse import urlencode
    try:
        base = (st.context.url or "").split("?")[0]
        if base and base.count("/") == 2:  # "http://host:port" → "http://host:port/"
            base += "/"
    except Exception:
        base = ""
    try:
        query = urlencode(st.query_params.to_dict())
    except Exception:
        query = ""
    return base + ("?" + query if query else "")
