"""AppTest helpers: build the app, switch pages, read charts.

The chapter scripts live in `views/`, not `pages/`: with a `pages/` folder present Streamlit
starts in folder-discovery mode, so the first deep link after a server start (/kv-cache) pops a
"Page not found" dialog, and AppTest reruns run only the page script (no sidebar, no URL sync).
"""

from __future__ import annotations

import base64

import numpy as np
from streamlit.testing.v1 import AppTest

import views
from model import Deployment, Precision, System, auto_chips, presets
from tests import ROOT
from ui.elements import live_chart, live_tex
from ui.elements.metrics import Metric
from ui.elements.metrics import parse as parse_metrics
from ui.figures.plot import panels

APP = str(ROOT / "app.py")

PAGES = {p.name: p.script for p in views.PAGES}   # name (URL path) → script: the one list, views/__init__.py


V1 = {"v": "1"}
"""A link of version 1: the defaults most page tests were derived against (H100 × Llama 3.1 70B, bf16,
B = 64, T = 8k, C = auto).  Today's defaults (GB200 × DeepSeek-V3 at fp8) have tests/app/test_defaults.py."""


def written(at: AppTest) -> dict[str, str]:
    """The URL the run wrote, less what a version-1 link gets spelled out when it is written back (the
    old defaults of the dials it left out, and `v`): the parameters the test's own dials put there."""
    from ui.state import dials
    legacy = {k: dials.REGISTRY.dials[k].fmt(v) for k, v in dials.LEGACY_DEFAULTS[1].items()
              if k in dials.REGISTRY.dials}
    return {k: v for k, v in dict(at.query_params).items()
            if k != dials.VERSION_KEY and legacy.get(k) != v}


def app(query: dict[str, str] | None = None, page: str | None = None, timeout: float = 60) -> AppTest:
    """Run the app once (optionally with URL parameters), then switch to `page` if given."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if page is not None and page != views.DEFAULT:
        # The first run (on the default page) rewrote the URL without the other page's parameters
        # (and with the link version `v`): give exactly the link again, as a browser opening /page?… would.
        for k in list(at.query_params.keys()):
            del at.query_params[k]
        for k, v in (query or {}).items():
            at.query_params[k] = v
        at.switch_page(PAGES[page]).run()
    return at


def clean_app(query: dict[str, str] | None = None, page: str | None = None) -> AppTest:
    """`app(query, page)` that ran with no exception and no error box (a page's tests bind `page` once:
    `functools.partial(clean_app, page="context")`)."""
    at = app(query, page)
    assert_clean(at)
    return at


def sidebar_system(chip: str = "h100", model: str = "llama-3.1-70b", *, batch: float = 64.0, context: float = 8192.0,
                   chips: int | None = None, precision: Precision = Precision(), price: float | None = None,
                   **deployment) -> System:
    """The System the sidebar builds from the presets, built here by hand: C 'auto' (model.auto_chips: enough
    chips to hold the weights and the KV of `batch` sequences of `context` tokens) unless `chips` is given;
    `price` replaces the chip's price per hour; `deployment` adds mode, mfu, bw_util …"""
    hw, m = presets.get("hardware", chip), presets.get("model", model)
    if price is not None:
        hw = hw.with_(price_usd_per_hour=price)
    c = auto_chips(hw, m, precision, batch, context) if chips is None else chips
    return System(hw, m, precision, Deployment(chips=c, **deployment))


def predicted_dense(s: System, batch, context) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A dense model's decode step under the efficiency model fitted to the built-in measurements, from the
    roofline's own terms at peak (docs/prediction.md, no prompt work, so no layer time is paid):
    t = max((t_matmul + t_attn)/η_c, (t_weights + t_kv)/η_bw); cost = the roofline's × t / t_ideal (the same
    tokens per chip-hour).  Returns (t_step [s], $/Mtok, fits in HBM)."""
    from model import calibrate, decode_step
    e = calibrate.built_in_summary().efficiency   # what the pages read
    r = decode_step(s.with_(mfu=1.0, bw_util=1.0, mode="lecture"), batch, context)
    t = np.maximum((r.t_matmul_s + r.t_attn_s) / e.compute, (r.t_weights_s + r.t_kv_s) / e.bandwidth)
    return t, r.usd_per_mtok * t / r.t_step_s, r.fits


def chart_elements(at: AppTest) -> list:
    """The page's chart elements, in page order: the in-place chart element (ui/elements/live_chart.py, a v2
    component: AppTest shows it as an unknown `bidi_component` element) or st.plotly_chart (the fallback)."""
    return [el for el in at.get("bidi_component") if live_chart.is_chart(el.proto)] + list(at.get("plotly_chart"))


class Tex(str):
    """An equation's TeX, read like AppTest's st.latex element (`.value`)."""

    @property
    def value(self) -> str:
        return str(self)


def latex(at: AppTest) -> list[Tex]:
    """The page's display equations, in page order: the equation element (ui/elements/live_tex.py, a v2
    component) or st.latex (its fallback; AppTest shows its TeX inside "$$\n…\n$$", dropped here)."""
    own = [Tex(live_tex.tex_of(el.proto)) for el in at.get("bidi_component") if live_tex.is_tex(el.proto)]
    return own + [Tex(el.value.removeprefix("$$\n").removesuffix("\n$$")) for el in at.latex]


def latex_text(at: AppTest) -> str:
    """Every display equation of the page, joined by spaces."""
    return " ".join(latex(at))


def chart_configs(at: AppTest) -> list[dict]:
    """The Plotly config (toolbar, image export) of every chart on the page."""
    return [live_chart.message_of(el.proto)["config"] for el in chart_elements(at)]


def charts(at: AppTest) -> list[dict]:
    """The Plotly figures on the page, as dicts (data, layout)."""
    return [live_chart.figure_of(el.proto) for el in chart_elements(at)]


def arr(v) -> np.ndarray:
    """A trace's x/y/z as numpy: Plotly sends numpy arrays as base64 typed arrays, lists as lists
    (None → NaN when the rest are numbers; text stays text)."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    a = np.asarray(v)
    if a.dtype == object:
        try:
            return np.asarray([np.nan if x is None else x for x in v], float)
        except (TypeError, ValueError):
            return a
    return a


def panel_figures(at: AppTest) -> list[dict]:
    """The page's charts, a figure of panels (ui.figures.plot.side_by_side) split into one figure per panel."""
    return [{"data": d, "layout": lay} for f in charts(at) for d, lay in panels(f["data"], f["layout"])]


def fig(at: AppTest, start: str) -> dict:
    """The chart, or the panel of a figure of panels, whose title starts with `start`."""
    return next(f for f in panel_figures(at) if (f["layout"].get("title") or {}).get("text", "").startswith(start))


def trace(f: dict, start: str) -> dict:
    """The trace of chart `f` whose name starts with `start`."""
    return next(t for t in f["data"] if (t.get("name") or "").startswith(start))


def dot(f: dict, start: str) -> tuple[float, float]:
    """The data point (x, y) of chart `f`'s current-value dot (ui.figures.plot.Spec.now_point, a shape) whose
    legend entry's name starts with `start`: dots and their legend traces pair up in order."""
    from ui.elements.export import dot_value
    from ui.figures.plot import NOW_META
    legends = [t for t in f["data"] if t.get("meta") == NOW_META]
    shapes = [s for s in f["layout"].get("shapes", []) if s.get("name") == NOW_META]
    s = shapes[next(i for i, t in enumerate(legends) if (t.get("name") or "").startswith(start))]
    return dot_value(f["layout"], s["xref"], s["xanchor"]), dot_value(f["layout"], s["yref"], s["yanchor"])


def trace_names(at: AppTest) -> list[list[str]]:
    return [[t.get("name") for t in fig["data"]] for fig in charts(at)]


def metric_list(at: AppTest) -> list[Metric]:
    """Every metric on the page, in order: ui/elements/metrics.py's grids (read back from their HTML) and any
    st.metric."""
    out: list[Metric] = []
    for el in _walk(at):
        if el.type == "html":
            out.extend(parse_metrics(el.proto.body))
        elif el.type == "metric":
            out.append(Metric(el.label, el.value, el.delta or None, help=el.help or None))
    return out


def _walk(at: AppTest):
    """The page's elements in document order (main area and sidebar)."""
    stack = [at._tree]
    while stack:
        node = stack.pop()
        kids = getattr(node, "children", None)
        if kids is None:
            yield node
        else:
            stack.extend(kids[k] for k in sorted(kids, reverse=True))


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in metric_list(at)}


def page_text(at: AppTest, *kinds: str) -> str:
    """The page's rendered text of the given element kinds (default: markdown, captions and every notice), one
    element per line."""
    kinds = kinds or ("markdown", "caption", "info", "warning", "success")
    return "\n".join(e.value for kind in kinds for e in getattr(at, kind))


def assert_notice(at: AppTest, name: str) -> None:
    """A notice (st.warning) names the URL parameter `name`, in quotes as the app names it."""
    notes = [w.value for w in at.warning]
    assert any(f"'{name}'" in n for n in notes), notes


def assert_clean(at: AppTest) -> None:
    """No exception, no error box (the app's own catch-all shows st.error)."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
