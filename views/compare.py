"""Compare configurations — up to three chip × model × precision × C × price side by side
(lecture §1.2–1.3 latency and cost against batch, §2.2 the balance batch ≈ 300 × sparsity,
§1.1/§2.5 the KV term; video 00:00:00, https://youtu.be/xmkSf5IS-zw).

Config 1 follows the sidebar unless pinned; configs 2 and 3 are chosen here.  Each pinned one is a
single URL parameter, `cmp_1` … `cmp_3` (the code is documented in ui/figures/compare.py).  All of them
use the sidebar's batch, context, roofline mode and efficiencies, so the charts compare like with like.
"""

import math

import numpy as np
import pandas as pd
import streamlit as st

from model import context_never_compute_bound, decode_step, max_batch_that_fits, presets, system_balance_batch
from model.roofline import weight_fetch_time
from model.specs import COMPUTE_DTYPES, DTYPE_BYTES
from ui import estimate
from ui.elements import export
from ui.elements.lazy import lazy_expander
from ui.elements.live_tex import latex
from ui.equations import batch as eq
from ui.figures import compare as fig_compare
from ui.figures.compare import CONFIG_COLORS, CONFIG_SYMBOLS, SLOTS, Config, Curve
from ui.format import number, seconds, tokens, usd
from ui.state import dials
from ui.state.dials import BATCH_OPTIONS, CHIP_MARKS, CHIP_OPTIONS, CONTEXT_OPTIONS
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("compare",)
T_MIN, T_MAX = 512.0, 10_000_000.0            # the context chart: the sidebar's context options and a margin
ss = st.session_state
hws, mds = presets.hardware_presets(), presets.model_presets()

view = current_view()
B, T = view.batch, view.context
dep = view.system.deployment

page_header(heading("compare"), view)


# ---------------------------------------------------------------- page dials: one URL parameter per pinned config
# Three chip generations on the sidebar's model at the defaults: Hopper (H200, one 8-GPU box), the
# sidebar's Blackwell rack (config 1), Vera Rubin NVL72.  Links made before these defaults had no
# pinned configs (ui/state/dials.py LEGACY_DEFAULTS).
DEFAULT_PINS = {2: "h200_deepseek-v3_fp8_fp8_fp8_8", 3: "vera-rubin_deepseek-v3_fp8_fp8_fp8_72"}
NONE_CODE = "none"      # a slot switched off where the default pins one


def _pin_default(i: int):
    try:
        return fig_compare.decode(DEFAULT_PINS[i]) if i in DEFAULT_PINS else None
    except ValueError:   # a preset renamed or removed: no default pin rather than a broken page
        return None


def _parse_code(text: str):
    return None if text.strip().lower() == NONE_CODE else fig_compare.decode(text)


def _code_dial(i: int) -> dials.Dial:
    return dials.Dial(f"cmp_{i}", _pin_default(i), _parse_code,
                      lambda v: NONE_CODE if v is None else fig_compare.encode(v),
                      fig_compare.CODE_HELP + f" (or {NONE_CODE})", PAGE, explain=True)


for i in SLOTS:
    dials.page_dial(_code_dial(i))
try:
    _stray = [k for k in st.query_params.keys() if k.startswith("cmp_") and k not in {f"cmp_{i}" for i in SLOTS}]
except Exception:  # a broken query string must never break the page
    _stray = []
for k in _stray:
    dials._note(f"URL parameter {k[:20]!r} is not one this page knows (cmp_1, cmp_2 or cmp_3); ignored")

p0 = view.system.precision
sidebar_cfg = (Config(view.chip_key, view.model_key, p0.weights, p0.kv, ss.get("cd", p0.compute),
                      "auto" if view.chips_auto else int(view.chips), ss.get("price"))
               if view.chip_key in hws and view.model_key in mds else None)
seed_default = sidebar_cfg or Config(dials.REGISTRY.dials["chip"].default, dials.REGISTRY.dials["model"].default)


def _chip_label(k: str) -> str:
    hw = hws[k]
    return hw.name + ("" if hw.status == "shipping" else f" ({hw.status})")


def pinned(i: int, seed: Config) -> Config:
    """The Config of one pinned card: its editors' values (seeded from `seed` when new).  The editors keep
    their values in the session while their expander is closed (persist_state="session")."""
    k = f"cmp{i}_"      # widget keys live in the session only; the URL carries the whole config as cmp_i
    for f, v in (("chip", seed.chip), ("model", seed.model), ("w", seed.weights), ("kv", seed.kv),
                 ("cd", seed.compute), ("c", seed.chips), ("price", seed.price)):
        ss.setdefault(k + f, v)
    price = ss[k + "price"]
    return Config(ss[k + "chip"], ss[k + "model"], ss[k + "w"], ss[k + "kv"], ss[k + "cd"], ss[k + "c"],
                  None if price is None else float(price))


def editors(i: int) -> None:
    """The widgets of one pinned config (its values seeded by `pinned`)."""
    k = f"cmp{i}_"
    st.selectbox("Chip", list(hws), key=k + "chip", format_func=_chip_label, persist_state="session")
    st.selectbox("Model", list(mds), key=k + "model", format_func=lambda m: mds[m].name, persist_state="session")
    d = st.columns(3)
    d[0].selectbox("Weights", list(DTYPE_BYTES), key=k + "w", persist_state="session")
    d[1].selectbox("KV cache", list(DTYPE_BYTES), key=k + "kv", persist_state="session")
    d[2].selectbox("Compute", list(COMPUTE_DTYPES), key=k + "cd", persist_state="session",
                   help="Matmul FLOP/s at this precision (dense); bf16 when the chip has no figure for it.")
    e = st.columns([1, 1.4])
    e[0].selectbox("Chips C", CHIP_OPTIONS, key=k + "c", persist_state="session",
                   help="Chips working on one step. 'auto': the sidebar's rule — the smallest power of two whose HBM "
                        "holds the weights and the KV cache of the sidebar's batch at its context, up to the "
                        "scale-up domain. Marks: " + ", ".join(f"{n} = {m}" for n, m in CHIP_MARKS.items()) + ".")
    e[1].number_input("Price [$/chip-h]", min_value=fig_compare.PRICE_RANGE[0],
                      max_value=fig_compare.PRICE_RANGE[1], step=0.25, key=k + "price", persist_state="session",
                      placeholder=f"preset {hws[ss[k + 'chip']].price_usd_per_hour:.2f}",
                      help="Rental price of one chip for one hour; empty = the chip preset's price.")


def summary(v) -> str:
    s = v.system
    p = s.precision
    return (f"**{s.hardware.name}** × **{s.model.name}** · weights {p.weights}, KV {p.kv}, compute {p.compute} · "
            f"C = {v.chips:g}" + (" (auto)" if v.chips_auto else "")
            + f" · ${s.hardware.price_usd_per_hour:.2f}/chip-h")


# ---------------------------------------------------------------- the three cards
st.markdown(f"Pin up to three configurations and read them against each other at the sidebar's **B = {B:g}** and "
            f"**T = {tokens(T)}** ({dep.mode} roofline, MFU {dep.mfu:g}, bandwidth utilisation {dep.bw_util:g}). "
            "Each pinned configuration is carried in the link.")
views = {}
cards = st.columns(3)
for i in SLOTS:
    color = CONFIG_COLORS[i - 1]
    with cards[i - 1]:
        with st.container(border=True):
            st.markdown(f"<span style='color:{color};font-size:1.5em'>■</span> <b style='font-size:1.25em'>"
                        f"Config {i}</b>", unsafe_allow_html=True)
            code = ss[f"cmp_{i}"]
            if i == 1:
                ss.setdefault("cmp1_follow", code is None)
                st.toggle("Follow the sidebar", key="cmp1_follow", persist_state="session",
                          help="On: config 1 is the sidebar's view (including its sparsity override). "
                               "Off: pin it here; the link then carries it as cmp_1.")
                active, follow = True, bool(ss["cmp1_follow"])
            else:
                ss.setdefault(f"cmp{i}_on", code is not None)
                st.toggle(f"Show config {i}", key=f"cmp{i}_on", persist_state="session",
                          help=f"Overlay a configuration chosen here (carried in the link as cmp_{i}); "
                               "it starts as a copy of config 1.")
                active, follow = bool(ss[f"cmp{i}_on"]), False
            if not active:
                ss[f"cmp_{i}"] = None
                continue
            if follow:
                ss["cmp_1"] = None
                views[i] = view
                st.markdown(summary(view))
                st.caption("Change it in the sidebar" + (f"; sparsity override {ss['sp']:g}" if ss.get("sp") else "")
                           + ".")
                continue
            if i == 1 and sidebar_cfg is None and code is None:
                st.info("The sidebar shows a custom chip or model, which can only be compared while config 1 "
                        "follows the sidebar; pinning starts from the default preset.", icon="ℹ️")
            cfg = pinned(i, code or (ss["cmp_1"] if i > 1 else None) or seed_default)
            ss[f"cmp_{i}"] = cfg
            views[i] = fig_compare.view_for(cfg, B, T, mfu=dep.mfu, bw_util=dep.bw_util, mode=dep.mode)
            st.markdown(summary(views[i]))
            # The editors are drawn only while open (ui/elements/lazy.py): eleven widgets fewer per sidebar move.  A
            # config just switched on (a copy of config 1, not yet in the link) starts open; that start is
            # set in the session, as `expanded=` would change the widget's identity, and its state, with the link.
            ss.setdefault(f"cmp{i}_edit", code is None)
            with lazy_expander(f"Change config {i}", key=f"cmp{i}_edit") as is_open:
                if is_open:
                    editors(i)
            st.caption(f"Link code `{fig_compare.encode(cfg)}`")     # C and price: in the summary above

for i, v in views.items():
    for w in v.warnings:
        st.warning(f"Config {i}: {w}", icon="⚠️")
if ss.get("sp") and not ss.get("cmp1_follow", True):
    st.caption(f"The sidebar's sparsity override ({ss['sp']:g}) applies to config 1 only while it follows the "
               "sidebar; pinned configs use each model's preset sparsity.")
unc = [(i, u) for i, v in views.items() for u in v.uncertain]
if unc:
    with st.expander(f"⚠ {len(unc)} uncertain preset figure(s) feed these numbers"):
        for i, u in unc:
            st.markdown(f"- Config {i}: {u}")
if len(views) == 1:
    st.info("Turn on config 2 or 3 above to overlay another chip, model, precision, scale-up size or price.",
            icon="ℹ️")

# ---------------------------------------------------------------- model calls: one sweep per config per chart
b_grid = np.unique(np.concatenate([np.geomspace(1, 65536, 97), BATCH_OPTIONS, [B]]))
t_grid = np.unique(np.concatenate([np.geomspace(T_MIN, T_MAX, 97), CONTEXT_OPTIONS, [T]]))
ib, it = int(np.searchsorted(b_grid, B)), int(np.searchsorted(t_grid, T))
res = {}
for i, v in views.items():
    s = v.system
    by_b = decode_step(s, b_grid, T)                 # latency and cost against batch (charts 1 and 2)
    by_t = decode_step(s, B, t_grid)                 # cost against context (chart 3)
    b0 = float(system_balance_batch(s, 0.0))         # KV ignored: the lecture's 300 × sparsity
    b_t = float(system_balance_batch(s, T))          # with the KV read at the sidebar's context
    star = decode_step(s, b_t, T) if np.isfinite(b_t) and b_t >= 1 else None
    pred = estimate.predict(s, b_grid, T)            # the fitted model against batch (charts 1 and 2)
    res[i] = {"by_b": by_b, "by_t": by_t, "b0": b0, "bT": b_t, "star": star, "pred": pred,
              "floor": float(weight_fetch_time(s.weight_bytes, s.deployment.chips, s.hbm_bandwidth)),
              "t_kv": context_never_compute_bound(s), "fit": float(max_batch_that_fits(s, T))}


# ---------------------------------------------------------------- the table of key numbers
def _fits_note(ok: bool) -> str:
    return "" if ok else " (does not fit)"


def _b_star(x: float) -> str:
    return number(x) if np.isfinite(x) else "none: memory-bound at every batch"


def _max_batch(x: float) -> str:
    if not np.isfinite(x):
        return "∞"
    return "0: the weights alone do not fit" if x < 1 else f"{math.floor(x):,}"


# The last two rows read the sidebar's Estimate: the roofline (as every row above) or the fitted model.
word = estimate.word(view.estimate, view.system)
for r_ in res.values():
    r_["now"] = r_["pred"] if view.predicted else r_["by_b"]
rows = {
    "Chip": lambda v, r: v.system.hardware.name,
    "Model": lambda v, r: v.system.model.name,
    "Weights / KV / compute": lambda v, r: "/".join((v.system.precision.weights, v.system.precision.kv,
                                                     v.system.precision.compute)),
    "Chips C": lambda v, r: f"{v.chips:g}" + (" (auto)" if v.chips_auto else ""),
    "Price [$/chip-h]": lambda v, r: f"${v.system.hardware.price_usd_per_hour:.2f}",
    "Balance batch B*, KV ignored [sequences]": lambda v, r: _b_star(r["b0"]),
    f"Balance batch B*(T) at T = {tokens(T)} [sequences]": lambda v, r: _b_star(r["bT"]),
    "Cost at B*(T) [$/Mtok]": lambda v, r: "— (no B*(T))" if r["star"] is None else
    usd(float(r["star"].usd_per_mtok)) + _fits_note(bool(r["star"].fits)),
    "Latency floor W/(C·bw)": lambda v, r: seconds(r["floor"]),
    "KV overtakes compute past T [tokens]": lambda v, r: f"{r['t_kv']:,.0f}" if np.isfinite(r["t_kv"]) else "never",
    f"Max batch that fits at T = {tokens(T)} [sequences]": lambda v, r: _max_batch(r["fit"]),
    f"{word} latency per token at B = {B:g}": lambda v, r: seconds(float(r["now"].t_step_s[ib]))
    + _fits_note(bool(r["by_b"].fits[ib])),
    f"{word} cost at B = {B:g} [$/Mtok]": lambda v, r: usd(float(r["now"].usd_per_mtok[ib])),
}
table = pd.DataFrame({f"Config {i}" + (" ⚠" if v.uncertain else ""): [f(v, res[i]) for f in rows.values()]
                      for i, v in views.items()}, index=list(rows))
st.subheader("Key numbers")
st.table(table)
st.download_button("⬇ CSV", data=lambda: table.to_csv(index_label="quantity"), file_name="compare_key_numbers.csv",
                   mime="text/csv", key="cmp_table__csv", on_click="ignore", help="This table as CSV.")
st.caption("B*: the batch where matmul time equals memory time (lecture §2.2: ≈ 300 × sparsity with bf16 weights "
           "and FLOP/s; the lecture-mode closed form, model.system_balance_batch). Cost at B*(T): the cheapest "
           "compute-bound point at this context. Latency floor: every "
           "weight read once over C chips' bandwidth (§1.2, §1.7). 'KV overtakes compute': the context where one "
           "sequence's KV read takes as long as its matmuls, kv(T)/bw = 2·Na/F "
           "(model.context_never_compute_bound) — past it no batch is compute-bound. Max batch: weights + KV "
           "within C chips' HBM. ⚠: an uncertain preset figure feeds the column. "
           + ("The last two rows are predicted by the efficiency model fitted to the published measurements (the "
              "sidebar's Estimate); every other row is the roofline's." if view.predicted else
              "Every row is the roofline's (the sidebar's Estimate)."))

# ---------------------------------------------------------------- the equations with each config's numbers
c1, c2 = st.columns(2)
c1.markdown("**Balance batch** — weight fetch time = matmul time, KV ignored (lecture §2.2):")
with c1:
    latex(eq.balance_batch_table({i: v.system for i, v in views.items()}), key="compare.balance")
c2.markdown("**Latency floor** — every weight read once per step, over C chips' bandwidth (§1.2, §1.7):")
with c2:
    latex(eq.latency_floor_table({i: v.system for i, v in views.items()}), key="compare.floor")


# ---------------------------------------------------------------- charts
def label(i: int, v) -> str:
    p = v.system.precision
    return f"{i}: {v.chip_key} × {v.model_key}, {p.weights}/{p.kv}/{p.compute}, C = {v.chips:g}"


def curves(pick, at_now: int, marks, predicted=None) -> list[Curve]:
    """One Curve per configuration; `predicted(r)`: its predicted y (only where it fits), drawn dashed, with the
    band for the first configuration only, and the dot on it when the sidebar's Estimate says predicted."""
    out = []
    for n, (i, v) in enumerate(views.items()):
        r = res[i]
        y, sweep = pick(r)
        p = None if predicted is None else np.where(sweep.fits, predicted(r), np.nan)
        y_now = float(p[at_now]) if p is not None and view.predicted else float(y[at_now])
        out.append(Curve(label(i, v), CONFIG_COLORS[i - 1], y, sweep.fits, sweep.bound, y_now,
                         CONFIG_SYMBOLS[i - 1], marks(i, r), p,
                         estimate.time_band(p) if p is not None and n == 0 else None))
    return out


def b_marks(i, r):
    return ((f"B* ({i}) = {r['bT']:,.0f}", r["bT"]),) if np.isfinite(r["bT"]) else ()


# One figure, two panels (side by side; stacked on a phone): one chart to draw per move instead of two.
fig = fig_compare.latency_and_cost_vs_batch(
    b_grid, curves(lambda r: (r["by_b"].t_step_s * 1e3, r["by_b"]), ib, b_marks, lambda r: r["pred"].t_step_s * 1e3),
    curves(lambda r: (r["by_b"].usd_per_mtok, r["by_b"]), ib, b_marks, lambda r: r["pred"].usd_per_mtok),
    b_now=B, context=tokens(T), solid_name=estimate.ideal_name(view.system))
export.chart(fig, key="cmp_vs_batch")
st.caption("Left (or above): latency per token = one decode step. Near the latency floor W/(C·bw) while the weight "
           "read sets the step, rising once compute or KV reads dominate; dashed lines mark each configuration's "
           "B*(T). Right (or below): cost per token = C × price × step time ÷ batch: the weight fetch is shared by "
           "the batch, compute and KV are paid per token, so each curve falls toward its floor of compute and KV per "
           "token, reached at B* where a configuration has one. Dotted: weights + KV do not fit in that "
           "configuration's HBM. Dashed: each configuration predicted (the shaded band for the first only). "
           + estimate.caption(view.system, lead="Predicted"))

fig = fig_compare.vs_context(
    t_grid, curves(lambda r: (r["by_t"].usd_per_mtok, r["by_t"]), it,
                   lambda i, r: ((f"KV > compute ({i})", r["t_kv"]),)),
    t_now=T, unit="$/Mtok", title=f"Cost per million tokens against context (B = {B:g})",
    y_title="cost [$ per million tokens]")
export.chart(fig, key="cmp_cost_vs_context")
st.caption("Cost per token against context at the sidebar's batch: flat while the weights or the matmuls set the "
           "step, then rising with the KV read. Dashed lines: where each configuration's KV read overtakes its "
           "compute (kv(T)/bw = 2·Na/F). Dotted: weights + KV do not fit in that configuration's HBM.")
