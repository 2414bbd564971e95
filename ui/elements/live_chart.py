"""An in-place Plotly chart element: a Streamlit v2 custom component that keeps its chart across reruns.

Why: Streamlit 1.67's `st.plotly_chart` hashes the figure's JSON into the element id even when a
`key` is given, and its frontend keys the chart on that id, so every dial move unmounts every chart
and draws it anew (`Plotly.newPlot`), then a theme effect draws it a second time (≈600 ms of browser
main-thread work per move for a page of four charts).  This element's id depends on its key only
(`key_as_main_identity`), so its DOM node survives a rerun and the frontend (`live_chart/index.js`)
calls `Plotly.react` with the new figure: only what changed is redrawn.

plotly.js comes from the app itself, never a CDN: the plotly Python package ships
`plotly/package_data/plotly.min.js`, served by Streamlit's component asset route
(`/_stcore/bidi-components/roofline.plotlyjs/plotly.min.js`).  The v2 API serves files only for
components declared in an installed package's pyproject.toml; the app is not a package, so
`_register` declares the two asset folders on the running server's component manager the way that
manifest scan would (ui/runtime/streamlit_internals.py: Streamlit internals).

That route has Streamlit's gzip layer compress plotly.min.js (4.8 MB → 1.5 MB) at level 9 on every
request and sends no cache validator; `_register` publishes the files to ui/runtime/assets.py instead,
which compresses them once per process and serves plotly under a content-hashed name for a year and
index.js with an ETag, so a returning browser downloads neither (docs/performance.md, "First page load").

`draw()` returns False, and `ui.elements.export.chart` falls back to `st.plotly_chart`, when the element
cannot be used: `ROOFLINE_CHART=plotly` in the environment, an asset missing, or registration
raising (e.g. a Streamlit whose internals moved).  The reason is logged once on stderr.

The figure travels as bytes of one JSON document {"config": …, "figure": …}; the figure is Plotly's
own JSON (numpy arrays as base64 typed arrays, which plotly.js ≥ 2.28 decodes), the same text
`st.plotly_chart` would send — `figure_of(element_proto)` reads it back (AppTest helpers use it).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.utils import is_skipped_key, plotlyjsShortTypes  # plotly's own rules for typed arrays

from ui.figures.plot import NARROW_META, SpecFigure, figure_dicts
from ui.runtime import assets, streamlit_internals

try:
    import orjson
except ImportError:        # optional: the payload then goes through plotly.io.to_json
    orjson = None

PROJECT = "roofline"
NAME = f"{PROJECT}.live_chart"              # the component (its JS lives in ui/elements/live_chart/)
PLOTLYJS = f"{PROJECT}.plotlyjs"            # an asset-only component: plotly's package_data folder
ASSET_DIR = Path(__file__).resolve().parent / "live_chart"
JS_FILE = "index.js"
ENV_SWITCH = "ROOFLINE_CHART"               # "plotly" forces st.plotly_chart (docs/environment.md)
DEFAULT_HEIGHT = 450                        # st.plotly_chart's height when the figure sets none


def plotly_js_dir() -> Path:
    import plotly
    return Path(plotly.__file__).resolve().parent / "package_data"


_mount = None            # the component's mount callable, created once per process
_broken: str | None = None   # why the element cannot be used (logged once), or None
_registered_on: Any = None   # the component manager the asset folders were declared on (its runtime)


def _fail(reason: str) -> bool:
    global _broken
    if _broken is None:
        print(f"roofline: in-place chart element unavailable ({reason}); using st.plotly_chart",
              file=sys.stderr)
    _broken = reason
    return False


def declare_assets(manager: Any, component: str, folder: Path) -> None:
    """Declare `folder` as the asset folder of component `roofline.<component>` on `manager`, as the
    manifest scan of an installed package would, unless it already has one."""
    streamlit_internals.declare_assets(manager, PROJECT, component, folder)


def publish_assets(entry: tuple[str, Path, str], libraries: list[tuple[str, Path, str]]) -> None:
    """Have ui/runtime/assets.py serve the component's files compressed once and cacheable.  A failure
    there never stops the element: Streamlit's own route still serves the files (said once on stderr)."""
    try:
        assets.publish(entry, libraries)
    except Exception as exc:
        print(f"roofline: component assets served by Streamlit's route, uncached ({type(exc).__name__}: {exc})",
              file=sys.stderr)


def _register() -> Any:
    """Declare the asset folders on the running server's component manager (once per runtime:
    each AppTest has its own), then create the component's mount callable (once per process).
    Checked once per manager: the file checks and path resolution cost ≈3 ms per chart, every run."""
    global _mount, _registered_on
    manager = streamlit_internals.component_manager()
    if manager is _registered_on and _mount is not None:
        return _mount
    import streamlit as st

    if not (ASSET_DIR / JS_FILE).is_file():
        raise FileNotFoundError(ASSET_DIR / JS_FILE)
    if not (plotly_js_dir() / "plotly.min.js").is_file():
        raise FileNotFoundError(plotly_js_dir() / "plotly.min.js")
    declare_assets(manager, "live_chart", ASSET_DIR)
    declare_assets(manager, "plotlyjs", plotly_js_dir())
    publish_assets((NAME, ASSET_DIR, JS_FILE), [(PLOTLYJS, plotly_js_dir(), "plotly.min.js")])
    if _mount is None:
        _mount = st.components.v2.component(NAME, js=JS_FILE, isolate_styles=False)
    _registered_on = manager
    return _mount


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "").strip().lower() != "plotly" and _broken is None


def _typed(obj: Any) -> Any:
    """A copy of the figure's dicts and lists with every numpy array as plotly's base64 typed-array
    spec and without keys set to None (as a go.Figure drops them), so the JSON is what
    `plotly.io.to_json` writes (tests/ui/elements/test_live_chart.py)."""
    if isinstance(obj, dict):
        return {k: (v if is_skipped_key(k) else _typed(v)) for k, v in obj.items() if v is not None}
    if isinstance(obj, (list, tuple)):
        return [_typed(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _typed_array(obj)
    return obj


def _typed_array(v: np.ndarray) -> Any:
    """plotly's `to_typed_array_spec` for a numpy array, without its defensive copy (≈0.1 ms per
    array): 64-bit integers narrowed to the smallest type that holds them, else left to JSON."""
    if v.size == 0:
        return v
    if v.dtype.kind in "iu" and v.dtype.itemsize == 8:
        lo, hi = int(v.min()), int(v.max())
        for t in (("int8", "int16", "int32") if v.dtype.kind == "i" else ("uint8", "uint16", "uint32")):
            info = np.iinfo(t)
            if info.min <= lo and hi <= info.max:
                v = v.astype(t)
                break
        else:
            return v
    code = plotlyjsShortTypes.get(str(v.dtype))
    if code is None or not v.dtype.isnative:
        return v
    out = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(v).data).decode("ascii")}
    if v.ndim > 1:
        out["shape"] = str(v.shape)[1:-1]
    return out


def _leftover(obj: Any) -> Any:
    """orjson's fallback: arrays it cannot write natively (text, or integers too wide for base64)."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def payload(fig: go.Figure | SpecFigure, config: dict[str, Any]) -> bytes:
    """{"config": …, "figure": …} as UTF-8 JSON; the figure as plotly serialises it (base64 arrays).

    With orjson (requirements.txt), straight from the figure's own validated dicts: `pio.to_json`
    deep-copies the figure and walks it twice first (≈2 ms for a five-trace chart against ≈0.1 ms
    here; bench: a Batch rerun draws four).  Without orjson, `pio.to_json`."""
    data, layout = figure_dicts(fig)
    if orjson is None:
        spec = pio.to_json({"data": _typed(data), "layout": _typed(layout)}, validate=False)
        return ('{"config":' + json.dumps(config, separators=(",", ":")) + ',"figure":' + spec + "}").encode()
    msg = {"config": config, "figure": {"data": _typed(data), "layout": _typed(layout)}}
    return orjson.dumps(msg, option=orjson.OPT_SERIALIZE_NUMPY, default=_leftover)


def height_of(fig: go.Figure | SpecFigure) -> int | str:
    """The element's height: the figure's, or "content" for a figure with a narrow layout (its height then
    depends on the chart's width, which only the browser knows: index.js sizes the chart)."""
    layout = figure_dicts(fig)[1]
    meta = layout.get("meta")
    if isinstance(meta, dict) and NARROW_META in meta:
        return "content"
    h = layout.get("height")
    return int(h) if h is not None and h >= 10 else DEFAULT_HEIGHT


def draw(fig: go.Figure | SpecFigure, *, key: str, config: dict[str, Any]) -> bool:
    """Draw `fig` with the in-place element; False (nothing drawn) if the element cannot be used."""
    if not enabled():
        return False
    try:
        mount = _register()
    except Exception as exc:       # any failure to register means: fall back, say why once
        return _fail(f"{type(exc).__name__}: {exc}")
    mount(key=key, data=payload(fig, config), width="stretch", height=height_of(fig))
    return True


# ---------------------------------------------------------------- reading it back (tests, clients)

def is_chart(proto: Any) -> bool:
    """Whether an element proto (the `bidi_component` field) is this chart element."""
    return getattr(proto, "component_name", None) == NAME


def message_of(proto: Any) -> dict[str, Any]:
    """{"config": …, "figure": …} that a chart element (or an st.plotly_chart) sent."""
    if hasattr(proto, "spec"):                     # PlotlyChart proto: the fallback
        return {"config": json.loads(proto.config or "{}"), "figure": json.loads(proto.spec)}
    return json.loads(bytes(proto.bytes).decode())


def figure_of(proto: Any) -> dict[str, Any]:
    """The figure (data, layout) that a chart element or an st.plotly_chart sent."""
    return message_of(proto)["figure"]


def chart_protos(elements: Any) -> list[Any]:
    """The chart protos among Element protos (a script run's deltas, in order): this element's
    `bidi_component` and st.plotly_chart's `plotly_chart` — for clients that read the websocket."""
    out = []
    for e in elements:
        kind = e.WhichOneof("type")
        if kind == "plotly_chart" or (kind == "bidi_component" and is_chart(e.bidi_component)):
            out.append(getattr(e, kind))
    return out
