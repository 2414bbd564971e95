"""Display equations as a light element: KaTeX straight into the element's own div.

Why: `st.latex` goes through Streamlit's markdown pipeline (react-markdown, remark-math,
rehype-katex, then React reconciling KaTeX's few hundred spans), ≈5-12 ms of browser main-thread
work per changed equation; the pages' equations carry today's numbers, so most change with every
dial move (MoE has seven).  This element hands the TeX to `katex.render` in its own div
(bench/profile_move.py, MoE page, dial G, one run: keypress → last chart p50 456 → 372 ms; with no
equation at all, 321 ms).

The renderer is Debian's `libjs-katex` (KaTeX 0.16, in packages.txt for Streamlit Community Cloud,
in the Dockerfile and in CI; `ui.present.deck.katex_dir()`, ROOFLINE_KATEX_DIR first), served by the app
itself through Streamlit's component asset route — never a CDN — compressed once and cacheable
(ui/runtime/assets.py).  Its markup matches the KaTeX 0.16
stylesheet and fonts that Streamlit's frontend already has on the page for `st.latex` (Streamlit
1.67 renders st.latex with KaTeX 0.16.47; the KaTeX 0.18 module in its bundle does not match that
stylesheet), so an equation reads as `st.latex`'s (a two-row `aligned` block stands 6 px taller,
most likely 0.16.4 against 0.16.47).  `latex()` falls back to `st.latex` (logged once
on stderr) when there is no KaTeX folder, `ROOFLINE_TEX=st` is set, or registration fails; the
browser side shows the TeX source if the script fails to load.

Each element's data is {"tex": …}; `tex_of(proto)` reads it back (tests/app/helpers.latex).
Every call names its equation with an explicit key (`latex(tex, key="batch.balance")`: the page,
then the equation; unique in a page's run), so an equation keeps its element — and its DOM node —
across reruns however the code around it moves: a changed TeX is re-rendered by KaTeX in the same
div, an unchanged one is not touched, and an equation drawn in an `if`/`else` keeps its element
when the branch changes if both branches give it the same key.  Keyed by its TeX instead (as
`st.latex` is), a changed equation was a new element: the frontend removed the old one, laid the
page out without it, then mounted the new one and laid the page out again (Scale-up, a Batch move:
three equations, ≈1,100 DOM nodes removed and re-added, and two full-page layouts with everything
below them moved).
A changed equation is redrawn once the script run that sent it has ended, after the charts' draws
(the chart element waits for the same moment): drawn as its data arrived, KaTeX's work held up the
run's remaining elements and then the charts (the last chart came 20-35 ms later on MoE, Scale-up
and Context).  An equation's first drawing is not deferred.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import streamlit as st

from ui.elements.live_chart import PROJECT, declare_assets, publish_assets
from ui.present.deck import katex_dir
from ui.runtime import streamlit_internals

NAME = f"{PROJECT}.live_tex"
KATEXJS = f"{PROJECT}.katexjs"       # an asset-only component: the KaTeX folder (katex.min.js)
ASSET_DIR = Path(__file__).resolve().parent / "live_tex"
JS_FILE = "index.js"
ENV_SWITCH = "ROOFLINE_TEX"          # "st" forces st.latex (docs/environment.md)

_mount = None
_registered_on: Any = None
_broken: str | None = None


def _fail(reason: str) -> bool:
    global _broken
    if _broken is None:
        print(f"roofline: equation element unavailable ({reason}); using st.latex", file=sys.stderr)
    _broken = reason
    return False


def _register() -> Any:
    global _mount, _registered_on
    manager = streamlit_internals.component_manager()
    if manager is _registered_on and _mount is not None:
        return _mount
    if not (ASSET_DIR / JS_FILE).is_file():
        raise FileNotFoundError(ASSET_DIR / JS_FILE)
    folder = katex_dir()
    if folder is None:
        raise FileNotFoundError("no katex.min.js (Debian's libjs-katex, or ROOFLINE_KATEX_DIR)")
    declare_assets(manager, "live_tex", ASSET_DIR)
    declare_assets(manager, "katexjs", folder)
    publish_assets((NAME, ASSET_DIR, JS_FILE), [(KATEXJS, folder, "katex.min.js")])
    if _mount is None:
        _mount = st.components.v2.component(NAME, js=JS_FILE, isolate_styles=False)
    _registered_on = manager
    return _mount


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "").strip().lower() != "st" and _broken is None


KEY_PREFIX = "tex-"                  # element keys share one namespace with the page's widgets and charts


def latex(body: Any, *, key: str) -> None:
    """Draw a display equation (TeX, KaTeX's dialect, as `st.latex` takes it) as the element `key`
    ("page.equation", e.g. "batch.balance"): the same key in every run, unique within one."""
    tex = str(body)
    if enabled():
        try:
            mount = _register()
        except Exception as exc:        # no KaTeX, or registration failed: st.latex from now on, say why once
            _fail(f"{type(exc).__name__}: {exc}")
        else:
            mount(key=KEY_PREFIX + key, data={"tex": tex}, width="stretch")
            return
    st.latex(tex)


# ---------------------------------------------------------------- reading it back (tests)

def is_tex(proto: Any) -> bool:
    """Whether an element proto (the `bidi_component` field) is this equation element."""
    return getattr(proto, "component_name", None) == NAME


def tex_of(proto: Any) -> str:
    """The TeX an equation element drew."""
    return json.loads(proto.json)["tex"]
