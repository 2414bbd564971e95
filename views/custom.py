"""Custom chips and models — edit, download, upload, and carry them in the link.

Start from any preset, change any figure (unit-labelled, range-checked by the spec itself),
then use it in the sidebar: the chip/model becomes "Custom" everywhere and the link carries it
compactly (ui/state/custom.py: `xhw=h100~bw:4e12`, a preset plus the fields that differ). Download it
as a preset file (schema roofline-presets/1, YAML or JSON); upload such a file — parsed safely
(yaml.safe_load, size-capped, never executed) with one message per problem.
"""

from __future__ import annotations

from dataclasses import fields

import streamlit as st

from model import presets
from model.presets import MAX_FILE_BYTES, PresetError
from ui.format import number
from ui.state import custom, dials
from ui.state.view import current_view, page_header
from views import heading

# Display scale of each numeric field: (factor from SI, unit shown).  Others are shown as stored.
SCALE = {
    "flops_bf16_per_s": (1e12, "TFLOP/s"), "flops_fp8_per_s": (1e12, "TFLOP/s"),
    "flops_fp4_per_s": (1e12, "TFLOP/s"), "hbm_bytes": (1e9, "GB"),
    "hbm_bandwidth_bytes_per_s": (1e12, "TB/s"), "scaleup_bandwidth_bytes_per_s": (1e9, "GB/s"),
    "scaleout_bandwidth_bytes_per_s": (1e9, "GB/s"), "total_params": (1e9, "billion params"),
    "active_params": (1e9, "billion params"),
}
LABELS = {
    "flops_bf16_per_s": "Dense bf16 compute", "flops_fp8_per_s": "Dense fp8 compute",
    "flops_fp4_per_s": "Dense fp4 compute", "hbm_bytes": "HBM capacity", "hbm_bandwidth_bytes_per_s": "HBM bandwidth",
    "price_usd_per_hour": "Price per chip-hour", "scaleup_domain_chips": "Scale-up domain",
    "scaleup_bandwidth_bytes_per_s": "Scale-up bandwidth per direction",
    "scaleout_bandwidth_bytes_per_s": "Scale-out (NIC) bandwidth per direction", "power_w": "Board power",
    "status": "Status", "total_params": "Total parameters", "active_params": "Active parameters",
    "n_layers": "Layers", "d_model": "Hidden size d_model", "n_heads": "Query heads", "n_kv_heads": "KV heads",
    "head_dim": "Head dimension", "attention": "Attention", "kv_lora_rank": "MLA latent width",
    "qk_rope_dim": "MLA RoPE dimensions", "n_window_layers": "Windowed layers", "window_tokens": "Window",
    "window_kind": "Window kind", "n_experts": "Routed experts", "experts_per_token": "Experts per token",
    "n_shared_experts": "Shared experts", "n_moe_layers": "MoE layers", "moe_intermediate_size": "Expert FFN width",
    "kv_bytes_per_token": "KV bytes per token (overrides the shapes)", "native_weight_dtype": "Native weight dtype",
}
KIND_WORD = {"hardware": "chip", "model": "model"}
SIDEBAR_KEY = {"hardware": "chip", "model": "model"}
URL_KEY = {"hardware": "xhw", "model": "xm"}
ss = st.session_state

view = current_view()
page_header(heading("custom"), view)
st.markdown("Start from a preset, change any figure, and **use it**: the sidebar's chip or model becomes "
            "*Custom* on every page, and the address bar carries it, so a shared link shows the same charts. "
            "Or download it as a preset file, and upload one (YAML or JSON, "
            f"at most {MAX_FILE_BYTES // 1024:,} KB; parsed as data, never executed).")


def _table(kind: str) -> dict:
    return presets.hardware_presets() if kind == "hardware" else presets.model_presets()


def _wkey(kind: str, fname: str) -> str:
    return f"_cu_{kind}_{fname}"


def _load_into_editor(kind: str, spec) -> None:
    """Put a spec's values into the editor's widgets (in display units)."""
    for f in fields(spec):
        if f.name == "meta":
            continue
        v = getattr(spec, f.name)
        if f.metadata.get("kind") == "number" and v is not None:
            v = float(v) / SCALE.get(f.name, (1.0, ""))[0]
        ss[_wkey(kind, f.name)] = v


def _on_base(kind: str) -> None:
    _load_into_editor(kind, _table(kind)[ss[f"_cu_{kind}_base"]])


def _active(kind: str):
    """(base preset key, spec) the editor starts from: the sidebar's custom one, else its preset."""
    text = ss.get(URL_KEY[kind]) or ""
    if text:
        try:
            return custom.decode(kind, text)
        except ValueError:
            pass
    key = view.chip_key if kind == "hardware" else view.model_key
    table = _table(kind)
    key = key if key in table else next(iter(table))
    return key, table[key]


def _editor_values(kind: str, cls) -> dict:
    out = {}
    for f in fields(cls):
        if f.name == "meta":
            continue
        v = ss.get(_wkey(kind, f.name))
        if f.metadata.get("kind") == "number" and v is not None:
            v = float(v) * SCALE.get(f.name, (1.0, ""))[0]
            if f.metadata.get("integer") and float(v).is_integer():
                v = int(v)
        if v is None or v == "":
            continue
        out[f.name] = v
    return out


def _use(kind: str, text: str) -> None:
    ss[URL_KEY[kind]] = text
    ss[SIDEBAR_KEY[kind]] = dials.CUSTOM


def _editor(kind: str) -> None:
    cls = custom.CLASSES[kind]
    table = _table(kind)
    if f"_cu_{kind}_base" not in ss:
        base, spec = _active(kind)
        ss[f"_cu_{kind}_base"] = base
        _load_into_editor(kind, spec)
    st.selectbox(f"Start from the {KIND_WORD[kind]} preset", list(table), key=f"_cu_{kind}_base",
                 format_func=lambda k: table[k].name, on_change=_on_base, args=(kind,),
                 help="Loads that preset's figures into the editor (your changes are replaced).")
    st.text_input("Name", key=_wkey(kind, "name"), max_chars=custom.MAX_NAME_CHARS)
    flds = [f for f in fields(cls) if f.name not in ("meta", "name")]
    cols = st.columns(3)
    for i, f in enumerate(flds):
        m = f.metadata
        col = cols[i % 3]
        if m.get("kind") == "number":
            scale, unit = SCALE.get(f.name, (1.0, m.get("unit", "")))
            name = LABELS.get(f.name, f.name.replace("_", " "))
            # The unit in brackets unless it is absent or already in the name ("Layers", not "Layers [layers]").
            label = f"{name} [{unit}]" if unit and unit != "-" and unit.lower() not in name.lower() else name
            lo = m["lo"] / scale
            col.number_input(label, min_value=float(lo), value=None, key=_wkey(kind, f.name), format="%g",
                             placeholder="none" if m.get("optional") else "required",
                             help=(m.get("doc") or "") + (" Optional: leave empty for none." if m.get("optional")
                                                          else ""))
        elif m.get("kind") == "choice":
            opts = list(m["options"]) + ([None] if m.get("optional") else [])
            if ss.get(_wkey(kind, f.name)) not in opts:
                ss[_wkey(kind, f.name)] = opts[0]
            col.selectbox(LABELS.get(f.name, f.name.replace("_", " ")), opts, key=_wkey(kind, f.name),
                          format_func=lambda v: "none" if v is None else str(v), help=m.get("doc") or None)
    values = _editor_values(kind, cls)
    try:
        spec = cls.from_dict(values)
    except (TypeError, ValueError) as e:
        st.error(f"This {KIND_WORD[kind]} is not valid yet: {e}", icon="🚫")
        return
    base = ss[f"_cu_{kind}_base"]
    text = custom.encode(kind, spec, base)
    c1, c2, c3 = st.columns([1.2, 1, 1])
    c1.button(f"Use this {KIND_WORD[kind]} in the sidebar", key=f"_cu_{kind}_use", type="primary",
              on_click=_use, args=(kind, text))
    key = "custom-" + base
    c2.download_button("Download YAML", presets.dump_item(spec, kind, key), file_name=f"{key}.yaml",
                       mime="application/x-yaml", key=f"_cu_{kind}_yaml", on_click="ignore")
    c3.download_button("Download JSON", presets.dump_item(spec, kind, key, fmt="json"), file_name=f"{key}.json",
                       mime="application/json", key=f"_cu_{kind}_json", on_click="ignore")
    st.caption(f"In the link: `{URL_KEY[kind]}={text}` ({len(text)} characters). The link carries the numbers, "
               "choices and the name; it cannot carry a source, date or note per number — on the other end those "
               "figures show as your own input.")
    if kind == "hardware":
        st.caption(f"FLOP/byte at bf16: {spec.flops_bf16_per_s / spec.hbm_bandwidth_bytes_per_s:,.0f} · HBM drain "
                   f"time {spec.hbm_bytes / spec.hbm_bandwidth_bytes_per_s * 1e3:.3g} ms · scale-up domain "
                   f"{spec.scaleup_domain_chips:,} chips.")
    else:
        st.caption(f"Sparsity total/active: {spec.sparsity:.3g} · {number(spec.total_params)} parameters, "
                   f"{number(spec.active_params)} active.")


def _on_upload(kind: str) -> None:
    """Callback (runs before the script, so the editor's widgets may still be set): parse, then load."""
    up = ss.get(f"_cu_{kind}_upload")
    if up is None:
        ss.pop(f"_cu_{kind}_upmsg", None)
        return
    try:
        items = presets.parse_text(up.getvalue(), kind, require_sources=False)   # a user's file: sources optional
    except PresetError as e:
        ss[f"_cu_{kind}_upmsg"] = ("error", f"{dials.md_code(up.name)} was not loaded — {len(e.problems)} "
                                            "problem(s):", e.problems)
        return
    pick = next(iter(items))
    _load_into_editor(kind, items[pick])
    more = (f" (the file has {len(items)}: {dials.md_code(', '.join(list(items)[:8]))}; the first is used)"
            if len(items) > 1 else "")
    bare = presets.unsourced_fields(items[pick])
    unsourced = (f" {len(bare)} of its numbers have no source or date ({dials.md_code(', '.join(bare[:12]))}"
                 f"{', …' if len(bare) > 12 else ''}): once used they are marked as your own, unsourced figures."
                 if bare else "")
    ss[f"_cu_{kind}_upmsg"] = ("ok", f"{dials.md_code(up.name)}: loaded {dials.md_code(pick)} into the editor "
                                     f"above{more}. Press 'Use this …' to put it in the sidebar.{unsourced}", [])


def _upload(kind: str) -> None:
    st.file_uploader(f"Upload a {KIND_WORD[kind]} preset file (.yaml, .yml, .json)", type=["yaml", "yml", "json"],
                     key=f"_cu_{kind}_upload", on_change=_on_upload, args=(kind,),
                     help="The presets schema (presets/README.md): schema: roofline-presets/1, kind, items. "
                          "Sources and dates are optional in your own file; numbers without them are marked "
                          "as your own, unsourced figures.")
    msg = ss.get(f"_cu_{kind}_upmsg")
    if not msg:
        return
    level, text, problems = msg
    if level == "ok":
        st.success(text, icon="✅")
        return
    st.error(text, icon="🚫")
    for p in problems[:20]:
        st.text(f"• {p}")          # plain text: a file's strings are never rendered as markdown or HTML
    if len(problems) > 20:
        st.text(f"• … and {len(problems) - 20} more")


tabs = st.tabs(["Chip", "Model"])
for tab, kind in zip(tabs, ("hardware", "model")):
    with tab:
        _editor(kind)
        st.divider()
        _upload(kind)
