"""Prices decoded — what API prices reveal (lecture §2.4–2.7; chapter 01:32:52 "deducing long-context
memory costs from API pricing", https://youtu.be/xmkSf5IS-zw?t=5572).

If a price tracks cost (else a competitor undercuts it), its shape reads out the roofline:
output ÷ input price → decode MFU relative to prefill (§2.6); a long-context tier → KV bytes per
token (§2.5, with its architecture cross-check 2 × 128 × 8 = 2,048); the cache-hit discount → reading
KV back is ~10× cheaper than recomputing it (§2.7); fast-mode multiples → batch sizes (§2.4).
Every figure names the price preset it came from, the preset's date and source, and the dials.
"""

import re

import numpy as np
import pandas as pd
import streamlit as st

from model import decode_step, presets, pricing
from model.specs import DTYPE_BYTES
from ui.elements import export, metrics, tables
from ui.elements.lazy import lazy_expander
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.elements.section import section
from ui.equations import prices as eq
from ui.figures import prices as fig_prices
from ui.format import bytes_, number, tokens, usd
from ui.state.dials import choice_dial, number_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading, script

PAGE = ("prices",)
VIDEO = "https://youtu.be/xmkSf5IS-zw?t=5572"     # 01:32:52, deducing memory costs from API pricing
DEFAULT_OFFER = "claude-opus-4.6"    # $5 in / $25 out / $0.50 hit: the lecture's 5× and its $5 base (§2.6, §2.7)
DEFAULT_TIER = "gemini-3-pro"        # nearest preset to the lecture's "Gemini 3.1: 50% more above 200k" (§2.5)
NA_DEFAULT_B = 100.0                 # N_active = 100e9, the lecture's conjecture (§2.5)
FPB_DEFAULT = 600.0                  # the lecture's "~300" counted in multiplies at fp4 = fp8 FLOP per byte (§2.1)
DH_OPTIONS = [32, 64, 96, 128, 192, 256]
KVH_OPTIONS = [1, 2, 4, 8, 16, 32, 64, 128]
KV_DTYPES = list(DTYPE_BYTES)
CONTEXT_GRID = np.geomspace(1e3, 1e7, 401)
TABLE_OPEN_KEY = "pr_table_open"     # section 5's table expander: its open state, session only, never in the URL
LECTURE_KV = float(pricing.implied_kv_bytes(NA_DEFAULT_B * 1e9, FPB_DEFAULT, 200e3))   # §2.5: 1,667 B/token
LECTURE_ARCH_KV = float(pricing.kv_bytes_architecture(128, 8, 1, 1.0))                # §2.5: 2,048 B/token

view = current_view()
s = view.system
ss = st.session_state

page_header(heading("prices"), view)

offers = presets.price_presets()
tiered = {k: p for k, p in offers.items() if p.long_context_threshold_tokens is not None}
fast_offers = {k: p for k, p in offers.items() if p.fast_price_multiple is not None}
default_offer = DEFAULT_OFFER if DEFAULT_OFFER in offers else next(iter(offers))
default_tier = DEFAULT_TIER if DEFAULT_TIER in tiered else next(iter(tiered), None)

# ---------------------------------------------------------------- page dials (URL-backed)
page_dial(choice_dial("pr_offer", list(offers), default_offer, PAGE))
if default_tier is not None:
    page_dial(choice_dial("pr_tier", list(tiered), default_tier, PAGE))
page_dial(number_dial("pr_na", 1, 5000, NA_DEFAULT_B, PAGE))
page_dial(number_dial("pr_fpb", 10, 10000, FPB_DEFAULT, PAGE))
page_dial(choice_dial("pr_kvdt", KV_DTYPES, "fp8", PAGE))
page_dial(choice_dial("pr_dh", DH_OPTIONS, 128, PAGE))
page_dial(choice_dial("pr_kvh", KVH_OPTIONS, 8, PAGE))
page_dial(number_dial("pr_kvl", 1, 256, 1.0, PAGE))
page_dial(number_dial("pr_read", 0.01, 1, 1.0, PAGE))


def short_source(src: str) -> str:
    """Who a source string cites, for a caption: its text up to the first " (", ";" or " '", without the
    comma that follows a publisher's name there ("Anthropic, 'Pricing' (…): https://…" → "Anthropic")."""
    cut = min((i for i in (src.find(" ("), src.find(";"), src.find(" '")) if i > 0), default=len(src))
    return src[:cut].strip().rstrip(",;:").strip()


def source_address(src: str) -> str:
    """The first web address in a source string (one a reader can follow), else its short form."""
    m = re.search(r"https?://[^\s,;)]+", src)
    return m.group(0).rstrip(".") if m else short_source(src)


def md(text: str) -> str:
    """Plain text safe inside st.markdown: '$' would start LaTeX, '~' strike text through."""
    return text.replace("$", "\\$").replace("~", "≈")


def said(p, fields: tuple[str, ...], markdown: bool = True) -> str:
    """'date: sources' of the fields a figure used, then '— uncertain: …' naming flagged fields."""
    by_date: dict[str, list[str]] = {}
    unc = []
    for f, m in pricing.provenance(p, fields):
        if m is None:
            continue
        srcs = by_date.setdefault(m.date, [])
        if short_source(m.source) not in srcs:
            srcs.append(short_source(m.source))
        if m.uncertain:
            unc.append(f.replace("_usd_per_mtok", "").replace("_", " "))
    pairs = [f"{d}: {', '.join(srcs)}" for d, srcs in by_date.items()]
    if not markdown:
        return "; ".join(pairs) + (f" — uncertain: {', '.join(unc)}" if unc else "")
    return md("; ".join(pairs)) + (f" — **uncertain: {', '.join(unc)}**" if unc else "")


def label(p) -> str:
    return p.model or p.name


def bar_label(key: str) -> str:
    p = offers[key]
    return f"{label(p)} · {p.meta['input_usd_per_mtok'].date.split(' (')[0]}"


def offer_label(key: str) -> str:
    p = offers[key]
    return f"{label(p)} ({p.provider}, {p.meta['input_usd_per_mtok'].date})"


st.markdown(
    "A price that tracks cost (else a competitor undercuts it) is a measurement of the provider's "
    "hardware. Four readings from the lecture's last hour "
    f"([01:32:52]({VIDEO})): the **output ÷ input** ratio, the **long-context tier**, the **cache-hit "
    "discount** and the **fast-mode** multiple. Prices carry margin: read the *ratios*, and the assumptions "
    "under each reading are dials.")

st.selectbox("Featured price (its numbers go into the equations below)", list(offers), key="pr_offer",
             format_func=offer_label, persist_state="session",
             help="One price preset from presets/prices.yaml; each carries its date and source.")
offer = offers[ss["pr_offer"]]

# ---------------------------------------------------------------- one call for every implied quantity
# Section 1 reads only the price columns; sections 2-5 (a section with the Na, F/bw and f dials) call it
# again at their dials' values.
Na = float(ss["pr_na"]) * 1e9
fpb = float(ss["pr_fpb"])
f_read = float(ss["pr_read"])
table = pricing.price_table(offers, Na, fpb, f_read)
i_off = table.keys.index(ss["pr_offer"])

# ================================================================ 1. output / input → decode efficiency
st.header("1 · Output ÷ input price → decode efficiency relative to prefill")
ratio = float(table.output_input_ratio[i_off])
eff = float(table.decode_efficiency[i_off])
try:
    r_dec = decode_step(s, view.batch, view.context)
    roof_mfu = float(r_dec.t_matmul_s / r_dec.t_step_s)
except ValueError:      # e.g. a custom model with neither attention shapes nor a KV figure
    roof_mfu = float("nan")
lo_band, hi_band = pricing.LECTURE_OUTPUT_INPUT_BAND
in_band = int(np.sum((table.output_input_ratio >= lo_band) & (table.output_input_ratio <= hi_band)))
metrics.grid([
    Metric("Output ÷ input price", f"{ratio:.3g}×",
           help=f"{label(offer)}: ${offer.output_usd_per_mtok:g} ÷ ${offer.input_usd_per_mtok:g} per Mtok."),
    Metric("Decode MFU ÷ prefill MFU", f"1/{ratio:.3g} = {100 * eff:.3g} %",
           help="If prices track cost and prefill is compute-bound, an output token costs r× more because "
                "decode uses 1/r of the FLOP/s (§2.6)."),
    Metric("Roofline decode MFU (sidebar)", f"{100 * roof_mfu:.3g} %" if np.isfinite(roof_mfu) else "—",
           help=f"t_matmul ÷ t_step on the sidebar's system at B = {view.batch:g}, T = {tokens(view.context)}: "
                "the share of the decode step spent on weight matmuls. Prefill at long prompts is compute-bound "
                "(≈ 100 % on the ideal roofline)."),
    Metric(f"Presets at {lo_band:g}–{hi_band:g}×", f"{in_band} of {len(table)}",
           help="The lecture: 'output tokens 3–5× more expensive than input; they run with 5×'."),
], columns=4)
latex(eq.decode_efficiency(offer), key="prices.ratio")
c1, c2 = st.columns([1, 1.6])
with c1:
    st.markdown(
        f"From **{label(offer)}** (\\${offer.input_usd_per_mtok:g} in, \\${offer.output_usd_per_mtok:g} out per "
        f"Mtok; {said(offer, pricing.USES['decode'])}). A pass of *n* tokens shares one weight fetch and one "
        "KV read: prefill (large *n*) is compute-bound, decode (*n* = 1) pays the whole memory time for one "
        f"token. Priced at cost, decode runs at ≈1/{ratio:.3g} of prefill's FLOP utilisation."
        + (f" The roofline on the sidebar's system gives {100 * roof_mfu:.3g} % at B = {view.batch:g} — the batch "
           "sets where a provider lands." if np.isfinite(roof_mfu) else ""))
with c2:
    order = np.argsort(-np.nan_to_num(table.output_input_ratio, nan=-1.0))
    fig = fig_prices.offer_bars(
        [bar_label(table.keys[j]) for j in order], table.output_input_ratio[order],
        title="Output ÷ input price of each preset", x_title="output ÷ input price [×]",
        highlight=int(np.flatnonzero(order == i_off)[0]),
        uncertain=["decode" in table.uncertain[j] for j in order],
        band=(lo_band, hi_band, f"lecture: {lo_band:g}–{hi_band:g}×"),
        hover=[f"decode MFU ≈ 1/{table.output_input_ratio[j]:.3g} = {100 * table.decode_efficiency[j]:.3g} % "
               f"of prefill · ${table.output_usd_per_mtok[j]:g} / ${table.input_usd_per_mtok[j]:g} per Mtok"
               for j in order])
    export.chart(fig, key="prices_ratio")
    st.caption("Output ÷ input list price per million tokens, each preset at its date (label); decode "
               "efficiency relative to prefill ≈ 1 ÷ this ratio. Green band: the lecture's 3–5×.")


@section
def cross_check_and_cache(table: pricing.PriceTable, i_off: int, hw, Na: float, fpb: float, f_read: float) -> None:
    """Section 2's architecture cross-check (d_head, KV heads, unique KV layers, KV dtype), its chart, and
    section 3, which reads the same four dials: a move of one of them reruns this alone (ui/elements/section.py).
    It is nested in the section of sections 2-5 (below), whose dials (tier, Na, F/bw, f) come in as arguments."""
    offer = offers[table.keys[i_off]]
    if default_tier is not None:
        a = st.columns([1, 1, 1, 1])
        a[0].select_slider("d_head", options=DH_OPTIONS, key="pr_dh", persist_state="session",
                           help="Head dimension; 128 is typical (§2.5).")
        a[1].select_slider("KV heads", options=KVH_OPTIONS, key="pr_kvh", persist_state="session",
                           help="KV heads typically range from 1 to 8 (§2.5).")
        a[2].number_input("Unique KV layers", min_value=1.0, max_value=256.0, step=1.0, key="pr_kvl",
                          persist_state="session", format="%g",
                          help="Layers with their own KV. Character.AI/Gemma-style global KV shared across layers: 1.")
        a[3].selectbox("KV dtype (cross-check)", KV_DTYPES, key="pr_kvdt", persist_state="session",
                       help="Bytes per KV element: turns the implied bytes into elements and prices the architecture.")
        kv_dtype = ss["pr_kvdt"]
        tier = tiered[ss["pr_tier"]]
        i_t = table.keys.index(ss["pr_tier"])
        T_x = float(tier.long_context_threshold_tokens)
        kv_imp = float(table.implied_kv_bytes_per_token[i_t])
        b_el = DTYPE_BYTES[kv_dtype]
        dh, kvh, kvl = int(ss["pr_dh"]), int(ss["pr_kvh"]), float(ss["pr_kvl"])
        kv_arch = float(pricing.kv_bytes_architecture(dh, kvh, kvl, b_el))
        heads_implied = float(kv_imp / pricing.kv_bytes_architecture(dh, 1, kvl, b_el))
        jump_in, jump_out = float(table.long_input_jump[i_t]), float(table.long_output_jump[i_t])
        metrics.grid([
            Metric("Implied KV per token", bytes_(kv_imp),
                   help=f"Stored KV bytes per token that put the KV-fetch = compute crossover at {T_x:,.0f} tokens."),
            Metric(f"…in {kv_dtype} elements", number(kv_imp / b_el),
                   help=f"{bytes_(kv_imp)} ÷ {b_el:g} B per element."),
            Metric("Architecture cross-check", bytes_(kv_arch),
                   help=f"{kvl:g} × 2 × {dh} × {kvh} × {b_el:g} B (layers × K,V × d_head × KV heads × bytes)."),
            Metric("Implied ÷ architecture", f"{kv_imp / kv_arch:.3g}×",
                   help=f"= {heads_implied:.3g} KV heads of d_head {dh} at {kv_dtype} on {kvl:g} layer(s)."),
        ], columns=4)
        latex(eq.kv_from_tier(Na, fpb, f_read, T_x, dh, kvh, kvl, b_el), key="prices.kv")
        c1, c2 = st.columns([1, 1.6])
        with c1:
            jumps = (f"input \\${tier.input_usd_per_mtok:g} → \\${tier.long_context_input_usd_per_mtok:g} "
                     f"({jump_in:.3g}×)" if np.isfinite(jump_in) else "")
            if np.isfinite(jump_out):
                jumps += (", " if jumps else "") + (f"output \\${tier.output_usd_per_mtok:g} → "
                                                    f"\\${tier.long_context_output_usd_per_mtok:g} ({jump_out:.3g}×)")
            st.markdown(
                f"From **{label(tier)}**: the price steps up above **{T_x:,.0f} tokens** ({jumps}; "
                f"{said(tier, pricing.USES['jump'] + pricing.USES['kv'])}). Below the step, cost per token is flat "
                "(compute-bound); above it, the KV read grows with context. Put the crossover there: "
                f"B·f·T×·kv/bw = 2·B·Na/F. Dials: Na = {number(Na)}, F/bw = {fpb:g} FLOP/B, f = {f_read:g}, "
                f"KV at {kv_dtype}. "
                f"The lecture's own inputs (Na = 100B, 300 multiplies/B = 600 FLOP/B, 200k) give "
                f"{LECTURE_KV:,.0f} B — 'almost two kilobytes' — against 2 × 128 × 8 = {LECTURE_ARCH_KV:,.0f} B "
                "for one shared 1-byte KV layer: 'plausible, if maybe a little bit small'.")
            if "kv" in table.uncertain[i_t] or "jump" in table.uncertain[i_t]:
                st.warning(f"{label(tier)}'s long-context figures are flagged uncertain in the presets: "
                           + "; ".join(f"{f.replace('_', ' ')} — {md(m_.note)}" for f, m_ in tier.meta.items()
                                       if m_.uncertain and f.startswith("long_context")), icon="⚠️")
            ratios = ", ".join(f"{number(hw.flops(dt) / hw.hbm_bandwidth_bytes_per_s)} at {dt}"
                               for dt in hw.compute_dtypes())
            st.caption(f"For scale, the sidebar's {hw.name}: {ratios} FLOP/B (peak FLOP/s ÷ peak HBM B/s).")
        with c2:
            T = CONTEXT_GRID
            T_arch = float(pricing.crossover_context(Na, fpb, kv_arch, f_read))
            curves = [("roofline, implied KV", pricing.context_cost_multiple(T, Na, fpb, kv_imp, f_read),
                       fig_prices.KV_COLOR, "solid"),
                      ("roofline, architecture KV",
                       pricing.context_cost_multiple(T, Na, fpb, kv_arch, f_read), fig_prices.ARCH_COLOR, "dash")]
            steps = []
            if np.isfinite(jump_in):
                steps.append((f"input price ÷ ${tier.input_usd_per_mtok:g}",
                              pricing.tier_price_multiple(T, T_x, jump_in), fig_prices.INPUT_PRICE_COLOR))
            if np.isfinite(jump_out):
                steps.append((f"output price ÷ ${tier.output_usd_per_mtok:g}",
                              pricing.tier_price_multiple(T, T_x, jump_out), fig_prices.OUTPUT_PRICE_COLOR))
            fig = fig_prices.context_cost(
                T, curves, steps, threshold=T_x,
                crossovers=[(T_x, 1.0, "implied crossover", fig_prices.KV_COLOR),
                            (T_arch, 1.0, "architecture crossover", fig_prices.ARCH_COLOR)],
                title=f"Cost per token against context ({label(tier)})")
            export.chart(fig, key="prices_context")
            st.caption(f"Roofline cost per token at large batch ÷ its short-context value: "
                       f"max(1, f·T·kv·(F/bw) ÷ 2Na), flat while compute-bound, linear once the KV read dominates; "
                       f"with the architecture's {bytes_(kv_arch)} the crossover is at {tokens(T_arch)} tokens "
                       f"(dials: Na = {number(Na)}, F/bw = {fpb:g} FLOP/B, f = {f_read:g}). Steps: {label(tier)}'s "
                       f"list prices above {T_x:,.0f} tokens ÷ below ({tier.meta['input_usd_per_mtok'].date}).")

    # ================================================================ 3. cache-hit discount
    st.header("3 · Cache hits: \"loading KV is ~10× cheaper than recomputing it\"")
    disc = float(table.cache_discount[i_off])
    kv_arch_now = float(pricing.kv_bytes_architecture(int(ss["pr_dh"]), int(ss["pr_kvh"]), float(ss["pr_kvl"]),
                                                      DTYPE_BYTES[ss["pr_kvdt"]]))
    reload = float(pricing.recompute_over_reload(Na, fpb, kv_arch_now))
    has_hit = offer.cache_read_usd_per_mtok is not None
    metrics.grid([
        Metric("Fresh input (recompute)", f"{usd(offer.input_usd_per_mtok)}/Mtok",
               help=f"{label(offer)}'s input price: a fresh token is a prefill that recomputes its KV."),
        Metric("Cache hit (reload)", f"{usd(offer.cache_read_usd_per_mtok)}/Mtok" if has_hit else "—",
               help=f"{label(offer)}'s cached-input price: the stored KV is read back."),
        Metric("Price discount", f"{disc:.3g}×" if np.isfinite(disc) else "—", help="Fresh input ÷ cache-hit price."),
        Metric("Roofline: recompute ÷ HBM read", f"{number(reload)}×",
               help=f"2·Na/((F/bw)·kv) with kv = {bytes_(kv_arch_now)} (the architecture cross-check): one token's "
                    "prefill FLOPs against reading its KV from HBM once."),
    ], columns=4)
    if has_hit:
        latex(eq.cache_discount(offer, Na, fpb, kv_arch_now), key="prices.cache")
    c1, c2 = st.columns([1, 1.6])
    with c1:
        if has_hit:
            extra = ""
            if offer.cache_write_5m_usd_per_mtok is not None:
                w5 = float(table.cache_write_5m_over_input[i_off])
                extra = (f" Writing the cache costs {'more than' if w5 > 1 else 'no more than'} fresh input: "
                         f"\\${offer.cache_write_5m_usd_per_mtok:g} "
                         f"for 5 minutes ({float(table.cache_write_5m_over_input[i_off]):.3g}×)"
                         + (f", \\${offer.cache_write_1h_usd_per_mtok:g} for 1 hour "
                            f"({float(table.cache_write_1h_over_input[i_off]):.3g}×)"
                            if offer.cache_write_1h_usd_per_mtok is not None else "") + ".")
            st.markdown(
                f"From **{label(offer)}**: \\${offer.input_usd_per_mtok:g} fresh vs "
                f"\\${offer.cache_read_usd_per_mtok:g} cached per Mtok ({said(offer, pricing.USES['cache'])})."
                f"{extra} Reading a token's KV from HBM is {number(reload)}× cheaper than recomputing it on the "
                f"roofline (dials: Na = {number(Na)}, F/bw = {fpb:g} FLOP/B, kv = {bytes_(kv_arch_now)}), "
                + (f"so a {disc:.3g}× discount is not about bandwidth: the price pays for **holding** the KV between "
                   "requests, in whatever memory tier the provider parks it." if reload > disc else
                   f"no more than the {disc:.3g}× discount: at these dials reading the KV back could account for it."))
        else:
            st.info(f"{label(offer)} has no cache-hit price in the presets: pick another featured price above.")
        st.page_link(script("memory-tiers"), label="Memory tiers: the cost of holding KV", icon=":material/storage:")
    with c2:
        have = np.flatnonzero(np.isfinite(table.cache_discount))
        order = have[np.argsort(-table.cache_discount[have], kind="stable")]
        hl = np.flatnonzero(order == i_off)
        fig = fig_prices.offer_bars(
            [bar_label(table.keys[j]) for j in order], table.cache_discount[order],
            title="Fresh input ÷ cache-hit price of each preset", x_title="input ÷ cache-hit price [×]",
            highlight=int(hl[0]) if hl.size else None, uncertain=["cache" in table.uncertain[j] for j in order],
            ref=(pricing.LECTURE_CACHE_DISCOUNT, "lecture: ~10×"),
            hover=[f"${table.input_usd_per_mtok[j]:g} fresh / ${table.cache_read_usd_per_mtok[j]:g} cached per Mtok"
                   for j in order])
        export.chart(fig, key="prices_cache")
        st.caption("Discount = fresh input price ÷ cache-hit (cached input) price per million tokens, each preset at "
                   "its date; presets with no cache-hit price are left out. Dashed: the lecture's ~10×.")


@section
def tiers_cache_fast_and_table(i_off: int, hw) -> None:
    """Sections 2 to 5, from section 2's dials down: the tier and the reading's assumptions (Na, F/bw, the
    fraction read f) feed section 2's numbers, the cache section and the tables of sections 4 and 5, but
    nothing above them, so a move of one reruns this alone (ui/elements/section.py), not the page: section 1 and
    the featured price stay as drawn.  The featured price comes in as its index `i_off`."""
    # ================================================================ 2. long-context tier → KV bytes per token
    st.header("2 · A long-context tier → KV bytes per token")
    if default_tier is None:
        st.info("No price preset has a long-context tier, so there is nothing to invert here.")
    else:
        d = st.columns([2.2, 1, 1, 1.2])
        d[0].selectbox("Long-context tier (price presets with one)", list(tiered), key="pr_tier",
                       format_func=offer_label, persist_state="session",
                       help="Where the price steps up: the lecture reads it as the context where KV fetch overtakes "
                            "compute (§2.5).")
        d[1].number_input("Active params Na [billions]", min_value=1.0, max_value=5000.0, step=10.0, key="pr_na",
                          persist_state="session", help="Per token. The lecture's conjecture: 100B ('maybe a bit "
                                                        "larger').")
        d[2].number_input("Chip FLOP per byte F/bw [FLOP/B]", min_value=10.0, max_value=10000.0, step=50.0,
                          key="pr_fpb", persist_state="session",
                          help="FLOP/s ÷ HBM bytes/s. The lecture's '≈300' counts multiplies; in FLOPs at fp8 that is "
                               "600. bf16 FLOP/s give ≈300: then the answer is the same physics in 2-byte elements.")
        d[3].slider("Fraction of context attention reads f", 0.01, 1.0, step=0.01, key="pr_read",
                    persist_state="session",
                    help="1 = dense attention. Sparse attention reads less, so the stored KV the price implies is "
                         "1/f bigger ('multiply by 1/sparsity', §2.5).")

    Na = float(ss["pr_na"]) * 1e9
    fpb = float(ss["pr_fpb"])
    f_read = float(ss["pr_read"])
    table = pricing.price_table(offers, Na, fpb, f_read)
    offer = offers[table.keys[i_off]]
    cross_check_and_cache(table, i_off, hw, Na, fpb, f_read)

    # ================================================================ 4. fast-mode multiples
    st.header("4 · Fast mode: a price multiple buys a smaller batch")
    if fast_offers:
        fo = offer if ss["pr_offer"] in fast_offers else next(iter(fast_offers.values()))
        i_f = table.keys.index(next(k for k, p in offers.items() if p is fo))
        S, Pm = float(table.fast_speedup[i_f]), float(table.fast_price_multiple[i_f])
        b_std = float(table.fast_batch_standard_over_balance[i_f])
        b_fast = float(table.fast_batch_fast_over_balance[i_f])
        latex(eq.fast_multiples(fo), key="prices.fast")
        st.markdown(
            f"From **{label(fo)}**: fast output \\${fo.fast_output_usd_per_mtok:g} vs "
            f"\\${fo.output_usd_per_mtok:g} per Mtok for up to {S:.3g}× output speed "
            f"({said(fo, pricing.USES['fast'])}). With no KV, cost per token is flat above the balance batch "
            f"B\\* and speed is flat below it, so the standard mode runs {b_std:.3g}·B\\* and the fast one "
            f"B\\*/{Pm:.3g}: a {b_std / b_fast:.3g}× smaller batch.")
        st.page_link(script("fast-mode"), label="Fast mode: solve these batches on the sidebar's system",
                     icon=":material/bolt:")
        fast_rows = [{
            "model": label(p), "provider": p.provider,
            "fast ÷ standard output price [×]": float(table.fast_price_multiple[j]),
            "quoted speedup [×]": float(table.fast_speedup[j]),
            "B_std / B*": float(table.fast_batch_standard_over_balance[j]),
            "B_fast / B*": float(table.fast_batch_fast_over_balance[j]),
            "prices": f"${p.output_usd_per_mtok:g} → ${p.fast_output_usd_per_mtok:g} out/Mtok",
            "date, source": said(p, pricing.USES["fast"], markdown=False),
        } for j, (k, p) in enumerate(offers.items()) if k in fast_offers]
        tables.dataframe(fast_rows, key="prices_fast_table",
                         column_config={c: st.column_config.NumberColumn(format="%.3g") for c in
                                        ("fast ÷ standard output price [×]", "quoted speedup [×]", "B_std / B*",
                                         "B_fast / B*")})
        st.caption("Multiples from the presets' fast-mode prices; batches as multiples of the balance batch B* "
                   "(no KV). Quoted speedups are 'up to' figures.")
    else:
        st.info("No price preset has a fast mode.")

    # ================================================================ 5. every preset, every reading
    st.header("5 · Every price preset, every reading")

    def table_rows() -> list[dict]:
        rows = []
        for j, k in enumerate(table.keys):
            p = offers[k]
            used = [f"in ${p.input_usd_per_mtok:g}", f"out ${p.output_usd_per_mtok:g}"]
            if p.cache_read_usd_per_mtok is not None:
                used.append(f"hit ${p.cache_read_usd_per_mtok:g}")
            if p.long_context_threshold_tokens is not None:
                lc = [f"${v:g}" for v in (p.long_context_input_usd_per_mtok, p.long_context_output_usd_per_mtok)
                      if v is not None]
                used.append(f">{tokens(p.long_context_threshold_tokens)}: " + " / ".join(lc))
            if p.fast_output_usd_per_mtok is not None:
                used.append(f"fast out ${p.fast_output_usd_per_mtok:g}")
            rows.append({
                "model": label(p), "provider": p.provider, "date": p.meta["input_usd_per_mtok"].date,
                "prices used [$/Mtok]": ", ".join(used),
                "out ÷ in [×]": table.output_input_ratio[j],
                "decode ÷ prefill MFU": table.decode_efficiency[j],
                "in ÷ cache hit [×]": table.cache_discount[j],
                "tier from [tokens]": table.long_context_threshold_tokens[j],
                "tier in / out jump [×]": (f"{table.long_input_jump[j]:.3g} / {table.long_output_jump[j]:.3g}"
                                           if np.isfinite(table.long_input_jump[j]) else ""),
                "implied KV [B/token]": table.implied_kv_bytes_per_token[j],
                "fast price [×]": table.fast_price_multiple[j],
                "uncertain": ", ".join(table.uncertain[j]) or "",
                "source": source_address(p.meta["input_usd_per_mtok"].source),
            })
        return rows

    # A lazy expander (ui/elements/lazy.py): the table is drawn only while open.  Drawn, its grid (one row per preset,
    # 14 columns; the implied KV column follows the f, Na and F/bw dials) re-rendered on every move of those
    # dials: bench/profile_move.py, the f dial, 3 rounds of 12 moves, last chart p50 120 → 109 ms without it.
    with lazy_expander(f"The table: {len(table.keys)} price presets, every reading", key=TABLE_OPEN_KEY) as is_open:
        if is_open:
            rows = table_rows()
            tables.dataframe(rows, key="prices_table", height=35 * (len(rows) + 1) + 3,
                             column_config={
                                 "out ÷ in [×]": st.column_config.NumberColumn(format="%.3g"),
                                 "decode ÷ prefill MFU": st.column_config.NumberColumn(format="percent"),
                                 "in ÷ cache hit [×]": st.column_config.NumberColumn(format="%.3g"),
                                 "tier from [tokens]": st.column_config.NumberColumn(format="%d"),
                                 "implied KV [B/token]": st.column_config.NumberColumn(format="%.4g"),
                                 "fast price [×]": st.column_config.NumberColumn(format="%.3g"),
                                 "source": st.column_config.LinkColumn()})
    st.caption(f"One row per price preset (presets/prices.yaml), at its date and source. Implied KV uses the dials: "
               f"Na = {number(Na)}, F/bw = {fpb:g} FLOP/B, f = {f_read:g}. 'uncertain' names the readings that rest on "
               "a figure the presets flag as uncertain (decode, cache, kv, jump, fast). Check the vendor's page before "
               "relying on a price.")
    st.download_button("Download the table (CSV)", lambda: pd.DataFrame(table_rows()).to_csv(index=False),
                       file_name="prices_decoded.csv",
                       mime="text/csv", on_click="ignore", key="prices_csv")


tiers_cache_fast_and_table(i_off, s.hardware)
