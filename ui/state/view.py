"""The shared sidebar dials and the `View` every page reads: system, batch, context, notes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from model import Deployment, Precision, System, auto_chips, presets
from model.specs import DTYPE_BYTES, Hardware, ModelArch
from ui.elements.lazy import lazy_expander
from ui.format import number, tokens
from ui.state import custom, dials
from ui.state.dials import BATCH_OPTIONS, CHIP_MARKS, CHIP_OPTIONS, CONTEXT_OPTIONS

VIEW_KEY = "_view"
EFFICIENCY_OPEN_KEY = "_efficiency_open"   # the sidebar's lazy expanders' open state (not in the URL)
EXPORT_OPEN_KEY = "_export_open"
LECTURE_SPARSITY = 8.0  # "activate 32 out of 256 experts, so this would be 8" (lecture §2.2)


@dataclass(frozen=True)
class View:
    """Everything a page needs from the sidebar."""

    system: System
    batch: float
    context: float
    chips_auto: bool
    chip_key: str
    model_key: str
    warnings: tuple[str, ...] = ()
    uncertain: tuple[str, ...] = field(default=())   # "H100 price_usd_per_hour: note"
    estimate: str = dials.ESTIMATES[0]               # the numbers' estimate: "ideal" or "predicted" (ui/estimate.py)

    @property
    def predicted(self) -> bool:
        return self.estimate == "predicted"

    @property
    def chips(self) -> float:
        return self.system.deployment.chips


def _custom(kind: str):
    """The custom chip/model of the URL (xhw / xm), or None with the reason."""
    text = st.session_state.get("xhw" if kind == "hardware" else "xm") or ""
    if not text:
        return None, f"no custom {'chip' if kind == 'hardware' else 'model'} is defined yet (see the Custom page)"
    try:
        return custom.decode(kind, text)[1], ""
    except ValueError as e:
        return None, str(e)


def _chip_label(key: str) -> str:
    if key == dials.CUSTOM:   # a fixed label: a changing one would change the widget's identity
        return "Custom chip (see the Custom page)"
    hw = presets.hardware_presets()[key]
    return hw.name + ("" if hw.status == "shipping" else f" ({hw.status})")


def _model_label(key: str) -> str:
    if key == dials.CUSTOM:
        return "Custom model (see the Custom page)"
    m = presets.model_presets()[key]
    return f"{m.name} — {number(m.total_params)}/{number(m.active_params)}"


def _pick(kind: str, key: str, table: dict, default: str, warnings: list[str]):
    """The spec behind a chip/model choice: a preset, or the custom one from the URL."""
    if key != dials.CUSTOM:
        return table[key], False
    spec, why = _custom(kind)
    if spec is None:
        warnings.append(f"Custom {'chip' if kind == 'hardware' else 'model'} not used ({why}); "
                        f"showing {table[default].name}.")
        return table[default], False
    return spec, True


def _chip_option_label(v) -> str:
    if v == "auto":
        return "auto"
    return f"{v} · {CHIP_MARKS[v]}" if v in CHIP_MARKS else str(v)


def uncertain_notes(spec, label: str) -> list[str]:
    out = []
    for f, m in (getattr(spec, "meta", {}) or {}).items():
        if m.uncertain:
            out.append(f"{label} {f.replace('_', ' ')}" + (f" — {m.note}" if m.note else ""))
    return out


def sparsity_options(current) -> list:
    """'preset' (None) and the log steps 1 … 64; a value from an older link that is off those steps is
    kept as an option of its own, so the link still shows what it showed."""
    opts = list(dials.SPARSITY_OPTIONS)
    if current is not None and current not in opts:
        opts = sorted([*opts, current])
    return [None, *opts]


def lecture_round_numbers() -> None:
    """Button callback (runs before the widgets): the lecture's chip and model at bf16."""
    for k, v in dials.LECTURE_SETTING.items():
        st.session_state[k] = v


def render_sidebar(box: Any = None) -> View:
    """Draw the shared dials (seeded from the URL on first run) into `box` (default: the sidebar) and
    build the View."""
    ds = dials.sidebar_dials()
    dials.seed_from_url(ds)
    hws, mds = presets.hardware_presets(), presets.model_presets()
    ss = st.session_state
    with box if box is not None else st.sidebar:
        st.selectbox("Chip", [*list(hws), dials.CUSTOM], key="chip", format_func=_chip_label,
                     help="One accelerator package; its scale-up domain is how many can work on one step. "
                          "'Custom' is the chip defined on the Custom page (carried in the link).")
        st.selectbox("Model", [*list(mds), dials.CUSTOM], key="model", format_func=_model_label,
                     help="Total/active parameters. All weights are read every step; only active ones multiply. "
                          "'Custom' is the model defined on the Custom page (carried in the link).")
        c1, c2 = st.columns(2)
        c1.selectbox("Weights", list(DTYPE_BYTES), key="w", help="Weight storage format")
        c2.selectbox("KV cache", list(DTYPE_BYTES), key="kv", help="KV-cache format")
        st.segmented_control("Compute precision", ["bf16", "fp8", "fp4"], key="cd",
                             help="Matmul FLOP/s at this precision (dense)")
        st.select_slider("Batch B (sequences per step)", options=BATCH_OPTIONS, key="b",
                         help="Sequences each getting one new token in this step (not tokens summed).")
        st.select_slider("Context T (tokens)", options=CONTEXT_OPTIONS, key="ctx", format_func=tokens,
                         help="Tokens of KV cache each sequence reads per step.")
        st.select_slider("Scale-up size C (chips per step)", options=CHIP_OPTIONS, key="c",
                         format_func=_chip_option_label,
                         help="Chips (GPU packages) working on one step, at most one scale-up domain. "
                              "Marks: Hopper 8, Blackwell 72, Rubin Ultra 144 packages (= 576 dies). "
                              "'auto' = the smallest power of two whose HBM holds the weights and the "
                              "KV cache of batch B at context T (up to the scale-up domain).")
        model = _pick("model", ss["model"], mds, dials.REGISTRY.dials["model"].default, [])[0]
        sp_options = sparsity_options(ss.get("sp"))
        st.select_slider("Sparsity total/active", options=sp_options, key="sp",
                         format_func=lambda v: f"preset {model.sparsity:.3g}" if v is None else f"{v:g}",
                         help=f"Overrides the model's active parameters (total ÷ sparsity). Leftmost: the "
                              f"preset's own {model.sparsity:.3g}; the lecture's DeepSeek round number: "
                              f"{LECTURE_SPARSITY:g} (32 of 256 experts).")
        hw = _pick("hardware", ss["chip"], hws, dials.REGISTRY.dials["chip"].default, [])[0]
        st.number_input("Price per chip-hour, USD (empty = preset)", min_value=0.01, max_value=1000.0,
                        step=0.25, key="price", placeholder=f"preset ${hw.price_usd_per_hour:.2f}",
                        help="Rental price of one chip for one hour.")
        st.button("The lecture's round numbers", on_click=lecture_round_numbers, width="stretch",
                  help="The lecture GPU (F/bw = 300 at bf16) and the lecture's DeepSeek (sparsity 8) at bf16: "
                       "B* = 300 × 8 = 2,400 (lecture §2.1–2.2).")
        st.radio("Roofline", ["lecture", "per-phase"], key="mode", horizontal=True,
                 help="lecture: max(compute, weights + KV). per-phase: matmuls, then attention, each on its "
                      "own roofline (attention FLOPs included).")
        st.radio("Estimate", list(dials.ESTIMATES), key=dials.ESTIMATE_KEY, horizontal=True,
                 format_func={"ideal": "ideal roofline", "predicted": "predicted"}.get,
                 help="What the numbers read on the pages with curves against batch (Batch, Fast mode, Compare); "
                      "both curves are drawn. Ideal roofline: the bound, at the Efficiency dials below. Predicted: "
                      "the efficiency model fitted to the published measurements (the Reality check page), with "
                      "its held-out error band; it does not use the Efficiency dials.")
        # Drawn only while open (ui/elements/lazy.py): a sidebar move redraws three widgets fewer.
        with lazy_expander("Efficiency (1 = ideal roofline)", key=EFFICIENCY_OPEN_KEY) as is_open:
            if is_open:
                st.slider("Compute MFU", 0.01, 1.0, step=0.01, key="mfu", persist_state="session")
                st.slider("HBM bandwidth utilisation", 0.01, 1.0, step=0.01, key="bwu", persist_state="session")
                st.caption("The roofline's efficiencies. The predicted estimate uses its own, fitted ones"
                           + (" — in force now." if ss[dials.ESTIMATE_KEY] == "predicted" else "."))
        with lazy_expander("Export", key=EXPORT_OPEN_KEY) as is_open:
            if is_open:
                st.radio("Chart image format", ["png", "svg"], key="img", horizontal=True, persist_state="session",
                         format_func=lambda f: {"png": "PNG (4800 × 2700)", "svg": "SVG (vector)"}[f],
                         help="What the camera in each chart's toolbar saves, at presentation size (1600 × 900). "
                              "Every chart also has a CSV button with its plotted points.")
    view = build_view()
    st.session_state[VIEW_KEY] = view
    return view


def assemble(hw0: Hardware, model0: ModelArch, weights: str, kv: str, compute: str, chips: int | str,
             batch: float, context: float, *, price: float | None = None, sparsity: float | None = None,
             mfu: float = 1.0, bw_util: float = 1.0, mode: str = "lecture",
             ) -> tuple[System, bool, list[str], list[str]]:
    """A System from a chip and a model spec and dial values, as the sidebar builds it: price and
    sparsity overrides, bf16 when the chip has no figure at `compute` (with a warning), C = auto_chips
    at (batch, context) when `chips` is "auto", a warning past the scale-up domain.
    Returns (system, chips_auto, warnings, uncertain preset notes)."""
    warnings: list[str] = []
    hw, model = hw0, model0
    if sparsity is not None:
        model = model.with_sparsity(float(sparsity))
    if price is not None:
        hw = hw.with_(price_usd_per_hour=float(price))
    if compute not in hw.compute_dtypes():
        warnings.append(f"{hw.name} has no {compute} FLOP/s figure; computing at bf16.")
        compute = "bf16"
    prec = Precision(weights=weights, kv=kv, compute=compute)
    chips_auto = chips == "auto"
    c = auto_chips(hw, model, prec, float(batch), float(context)) if chips_auto else int(chips)
    if not chips_auto and c > hw.scaleup_domain_chips:
        warnings.append(f"C = {c} is more than {hw.name}'s scale-up domain of "
                        f"{hw.scaleup_domain_chips}: those chips would talk over the slower scale-out network, "
                        "which this page does not charge for.")
    system = System(hw, model, prec, Deployment(chips=c, mfu=float(mfu), bw_util=float(bw_util), mode=mode))
    unc = [n for n in uncertain_notes(hw0, hw0.name) if price is None or "price" not in n]
    unc += uncertain_notes(model0, model0.name)
    return system, chips_auto, warnings, unc


def build_view() -> View:
    """The current System from the dial values in session state (falls back, with a warning)."""
    ss = st.session_state
    hws, mds = presets.hardware_presets(), presets.model_presets()
    warnings: list[str] = []
    hw0, hw_custom = _pick("hardware", ss["chip"], hws, dials.REGISTRY.dials["chip"].default, warnings)
    model0, model_custom = _pick("model", ss["model"], mds, dials.REGISTRY.dials["model"].default, warnings)
    system, chips_auto, more, unc = assemble(
        hw0, model0, ss["w"], ss["kv"], ss["cd"], ss["c"], float(ss["b"]), float(ss["ctx"]),
        price=ss.get("price"), sparsity=ss.get("sp"), mfu=float(ss["mfu"]), bw_util=float(ss["bwu"]),
        mode=ss["mode"])
    warnings += more
    for spec, is_custom in ((hw0, hw_custom), (model0, model_custom)):
        if is_custom:
            # Your own figures: typed in the editor or link, or from an uploaded file without source/date.
            mine = sorted(k.replace("_", " ") for k, m in (spec.meta or {}).items()
                          if m is custom.USER_SOURCE or not (m.source and m.date))
            if mine:
                unc.append(f"{spec.name}: your own figures, not a sourced preset — {', '.join(mine)}")
    chip_key = ss["chip"] if hw_custom or ss["chip"] != dials.CUSTOM else dials.REGISTRY.dials["chip"].default
    model_key = ss["model"] if model_custom or ss["model"] != dials.CUSTOM else dials.REGISTRY.dials["model"].default
    return View(system, float(ss["b"]), float(ss["ctx"]), chips_auto, chip_key, model_key,
                tuple(warnings), tuple(unc), ss.get(dials.ESTIMATE_KEY, dials.ESTIMATES[0]))


def current_view() -> View:
    v = st.session_state.get(VIEW_KEY)
    return v if v is not None else build_view()


def show_view_notes(view: View) -> None:
    """Warnings about the dial combination, and which uncertain preset figures feed this page."""
    for w in view.warnings:
        st.warning(w, icon="⚠️")
    if view.uncertain:
        with st.expander(f"⚠ {len(view.uncertain)} uncertain preset figure(s) feed these numbers"):
            for u in view.uncertain:
                st.markdown(f"- {u}")


def page_header(title: str, view: View | None = None, *, hide_warnings: str | None = None) -> View:
    """The skeleton every page opens with: its title, the system it shows, and the notes about the dials
    (warnings, uncertain preset figures).  `hide_warnings`: drop warnings containing this text (a page
    that answers that warning itself).  The URL notices are drawn by app.py around the page."""
    view = view if view is not None else current_view()
    st.title(title)
    st.caption(system_caption(view))
    if hide_warnings:
        view = dataclasses.replace(view, warnings=tuple(w for w in view.warnings if hide_warnings not in w))
    show_view_notes(view)
    return view


def system_caption(view: View) -> str:
    s = view.system
    p = s.precision
    c = f"C = {view.chips:g}" + (" (auto)" if view.chips_auto else "")
    return (f"{s.hardware.name} × {s.model.name} · {c} · weights {p.weights}, KV {p.kv}, compute {p.compute} · "
            f"B = {view.batch:g}, T = {tokens(view.context)} · ${s.hardware.price_usd_per_hour:.2f}/chip-h · "
            f"{s.deployment.mode} roofline")
