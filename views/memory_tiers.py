"""Memory tiers — where a prompt cache lives (lecture §2.7; chapter "deducing long-context memory costs
from API pricing", 01:32:52, https://youtu.be/xmkSf5IS-zw?t=5572).

A returning prompt's KV can wait in HBM, be parked in DDR, flash or disk and copied back, or be thrown
away and recomputed by a prefill pass.  Holding costs the device's share per second, reading back costs
the device's time at its bandwidth, recomputing costs 2·Na FLOPs per token: the cheapest place moves to
slower, cheaper-per-byte tiers as the hold time grows.  The lecture's rule of thumb is the tier whose drain
time (capacity ÷ bandwidth) is the hold time; the page shows where neighbouring tiers' cost lines actually
cross, t× = (aⱼ − aᵢ)/(bᵢ − bⱼ) (model.economics.neighbour_handover_s), beside the drain times.
Then: what a prefix-cache hit rate does to the cost of a request.
"""

from dataclasses import replace
from itertools import pairwise

import numpy as np
import pandas as pd
import streamlit as st

from model import System, presets
from model.economics import (
    LECTURE_DRAIN_S,
    TTL_1H_S,
    TTL_5M_S,
    Tier,
    cache_tier_costs,
    cheapest_envelope,
    hbm_tier,
    list_cache_usd_per_mtok,
    list_price_request,
    neighbour_handover_s,
    recompute_cost,
    request_with_cache,
)
from ui.elements import export, metrics
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.elements.section import section
from ui.equations import memory_tiers as eq
from ui.figures import memory_tiers as fig_tiers
from ui.format import bytes_, duration, tokens, usd
from ui.state.dials import choice_dial, number_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("memory-tiers",)
VIDEO = "https://youtu.be/xmkSf5IS-zw?t=5572"      # 01:32:52, deducing memory costs from API pricing
DEFAULT_OFFER = "claude-opus-4.6"                  # the lecture's $5 input, $6.25 5-minute write (§2.7)
HOLD_OPTIONS = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600,
                43200, 86400, 259200, 604800, 2592000]
OUT_OPTIONS = [100, 300, 1000, 3000, 10000, 30000]
HOLD_GRID = np.geomspace(1e-3, 1e7, 481)           # 1 ms … 116 days
HIT_GRID = np.linspace(0.0, 1.0, 101)
# The curves' hold times, fixed: a Hold-time move leaves the cost chart's curves as they were and moves
# only its dot (a layout shape, ui/figures/plot.py Spec.now_point), which the chart element redraws alone.
CURVE_GRID = np.unique(np.append(HOLD_GRID, [TTL_5M_S, TTL_1H_S]))
EDITED_NAMES = {"capacity_bytes": "capacity", "bandwidth_bytes_per_s": "bandwidth", "usd_per_hour": "price"}
MEDIUM_LABELS = {"hbm": "HBM", "dram": "DDR", "flash": "flash", "disk": "disk"}
TIER_CODES = {"hbm": "hbm", "dram": "ddr", "flash": "fl", "disk": "hd"}
# (URL suffix, Tier field, unit shown, SI scale, widget range)
EDIT_FIELDS = (("gb", "capacity_bytes", "capacity [GB]", 1e9, (1e-3, 1e7)),
               ("gbs", "bandwidth_bytes_per_s", "bandwidth [GB/s]", 1e9, (1e-4, 1e6)),
               ("usd", "usd_per_hour", "cost [USD/h]", 1.0, (1e-5, 1e4)))


view = current_view()
s, B, T = view.system, view.batch, view.context
hw, model = s.hardware, s.model
ss = st.session_state

page_header(heading("memory-tiers"), view)

# ---------------------------------------------------------------- the tiers: HBM from the chip, the rest from presets
preset_tiers = presets.load("tier")
base_hbm = hbm_tier(hw)
if ss.get("price") is not None:   # the sidebar's own price, not the preset's (uncertain) one
    base_hbm = replace(base_hbm, meta={k: v for k, v in base_hbm.meta.items() if k != "usd_per_hour"})
keyed: list[tuple[str, Tier]] = [("hbm", base_hbm), *preset_tiers.items()]
codes = [TIER_CODES.get(t.medium, f"t{i}") for i, (_, t) in enumerate(keyed)]


def label(t: Tier) -> str:
    return MEDIUM_LABELS.get(t.medium, t.name)


# ---------------------------------------------------------------- page dials (URL-backed)
offers = {k: o for k, o in presets.price_presets().items() if o.cache_read_usd_per_mtok is not None}
default_offer = DEFAULT_OFFER if DEFAULT_OFFER in offers else next(iter(offers), "none")
page_dial(choice_dial("mt_hold", HOLD_OPTIONS, 300, PAGE))
page_dial(choice_dial("mt_offer", [*offers, "none"], default_offer, PAGE))
page_dial(choice_dial("mt_out", OUT_OPTIONS, 1000, PAGE))
page_dial(number_dial("mt_hit", 0, 1, 0.9, PAGE))
for code in codes:
    for suffix, _f, _u, _sc, (lo, hi) in EDIT_FIELDS:
        page_dial(number_dial(f"mt_{code}_{suffix}", lo, hi, None, PAGE, allow_none=True))

with st.expander("✎ Edit the tiers (empty = preset; HBM defaults to the sidebar's chip)"):
    cols = st.columns(len(keyed))
    for col, (_key, tier), code in zip(cols, keyed, codes):
        col.markdown(f"**{label(tier)}**")
        for suffix, f, unit, scale, (lo, hi) in EDIT_FIELDS:
            col.number_input(unit, min_value=lo, max_value=hi, key=f"mt_{code}_{suffix}", format="%.4g",
                             placeholder=f"preset {getattr(tier, f) / scale:.4g}", persist_state="session",
                             help=f"{tier.name}: {unit}. Preset source: "
                                  + (tier.meta[f].source + f" ({tier.meta[f].date})" if f in tier.meta else "—"))

tiers: list[Tier] = []
edited: list[list[str]] = []
for (_key, tier), code in zip(keyed, codes):
    changes = {f: float(ss[f"mt_{code}_{sfx}"]) * scale for sfx, f, _u, scale, _r in EDIT_FIELDS
               if ss.get(f"mt_{code}_{sfx}") is not None}
    if changes:
        tier = replace(tier, **changes, meta={k: v for k, v in tier.meta.items() if k not in changes})
    tiers.append(tier)
    edited.append(list(changes))

try:
    kv = float(s.kv.bytes_per_token)
except ValueError as e:
    st.warning(f"{model.name} has no KV-cache figure, so there is nothing to hold: {e}")
    st.stop()
rec = float(recompute_cost(s))

drain = np.array([t.drain_s for t in tiers])
names = [label(t) for t in tiers] + ["recompute"]
at_ttl = cache_tier_costs(tiers, kv, rec, np.array([TTL_5M_S, TTL_1H_S]))   # the intro's two lifetimes

st.markdown(
    f"**Where should a returning prompt's KV wait?** Holding a token's KV ({bytes_(kv)} for {model.name} at "
    f"{s.precision.kv}) costs the share of a device it fills, for as long as it waits; reading it back costs the "
    f"device's time at its bandwidth; throwing it away costs a prefill pass to recompute it. The lecture "
    f"([§2.7, 01:32:52]({VIDEO})): pick the tier whose **drain time ≈ the hold time** — HBM ≈ 20 ms, DDR "
    f"1–10 s, flash ~1 min, disk ~1 h — so 5-minute and 1-hour cache lifetimes probably live in flash and disk "
    f"(or DDR and flash). On this system, with these tiers, the cheapest place at 5 min is "
    f"**{names[int(at_ttl.cheapest[0])]}** and at 1 h **{names[int(at_ttl.cheapest[1])]}**.")

# ---------------------------------------------------------------- 1. the tiers and their drain times
st.subheader("1. The tiers: capacity, bandwidth, cost → drain time")
rows = []
for tier, ch in zip(tiers, edited):
    unc = [f.replace("_bytes_per_s", "").replace("_bytes", "").replace("usd_per_hour", "price")
           for f in presets.uncertain_fields(tier)]
    lec = LECTURE_DRAIN_S.get(tier.medium)
    rows.append({"tier": label(tier), "device": tier.name, "capacity": bytes_(tier.capacity_bytes),
                 "bandwidth": bytes_(tier.bandwidth_bytes_per_s) + "/s", "USD/h": f"{tier.usd_per_hour:.4g}",
                 "drain": duration(tier.drain_s), "lecture": lec[2] if lec else "—",
                 "flags": " ".join(([f"⚠ uncertain: {', '.join(unc)}"] if unc else [])
                                   + ([f"✎ edited: {', '.join(EDITED_NAMES[x] for x in ch)}"] if ch else [])),
                 "price source (date)": (f"{tier.meta['usd_per_hour'].source} ({tier.meta['usd_per_hour'].date})"
                                         if "usd_per_hour" in tier.meta else "your value")})
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
left, right = st.columns([1, 1.2])
with left:
    latex(eq.drain_times(tiers, [label(t) for t in tiers]), key="memory-tiers.drain")
    with st.expander("Sources and dates of these figures"):
        for tier in tiers:
            st.markdown(f"**{tier.name}**")
            for f in ("capacity_bytes", "bandwidth_bytes_per_s", "usd_per_hour"):
                m = tier.meta.get(f)
                if m is None:
                    st.markdown(f"- {f}: your value (edited on this page or in the sidebar)")
                else:
                    st.markdown(f"- {f}: {m.source} ({m.date})" + (" — ⚠ **uncertain**" if m.uncertain else "")
                                + (f": {m.note}" if m.note else ""))
with right:
    fig = fig_tiers.drain_times([label(t) for t in tiers], drain,
                                [fig_tiers.MEDIUM_COLORS.get(t.medium, fig_tiers.GREY) for t in tiers],
                                [LECTURE_DRAIN_S.get(t.medium) for t in tiers])
    export.chart(fig, key="tiers_drain")
    off = [f"{label(t)} {duration(t.drain_s)} (lecture {LECTURE_DRAIN_S[t.medium][2]})" for t in tiers
           if t.medium in LECTURE_DRAIN_S and not (LECTURE_DRAIN_S[t.medium][0] / 1.5 <= t.drain_s
                                                   <= LECTURE_DRAIN_S[t.medium][1] * 1.5)]
    st.caption("Drain time = capacity ÷ read bandwidth: how long one device takes to read all it holds. Bars: "
               "these devices; diamonds: the lecture's round figures. A bigger device at the same bandwidth drains "
               "slower" + (f" — outside the lecture's figure by more than 1.5×: {'; '.join(off)}." if off
                           else "; every tier here drains within 1.5× of the lecture's figure."))
unc_price = [label(t) for t in tiers if "usd_per_hour" in presets.uncertain_fields(t)]
if unc_price:
    st.caption(f"⚠ Prices flagged uncertain ({', '.join(unc_price)}): the DDR, flash and disk presets are purchase "
               "prices spread over four years (no power, space or margin); edit them above with your own.")


@section
def request_cost(s: System, L: float, B: float, tb: Tier, tier_usd_now: float, hold: float, offer) -> None:
    """Section 3: its own dials (hit rate, output tokens) rerun only it (ui/elements/section.py); the cheapest tier at
    the hold time and its cost come from section 2."""
    # ------------------------------------------------------------ 3. the hit rate and the cost of a request
    st.subheader("3. What a prefix-cache hit rate does to the cost of a request")
    hc = st.columns([2, 3])
    hc[0].slider("Prefix-cache hit rate h", 0.0, 1.0, step=0.01, key="mt_hit", persist_state="session",
                 help="Share of the prompt's tokens whose KV is found in the cache (skipped by prefill).")
    hc[0].select_slider("Output tokens O per request", options=OUT_OPTIONS, key="mt_out", persist_state="session",
                       format_func=tokens, help="Tokens decoded per request.")
    out_tokens = float(ss["mt_out"])
    h_now = float(ss["mt_hit"])
    hgrid = np.append(HIT_GRID, h_now)
    cr = request_with_cache(s, L, out_tokens, hgrid, tier_usd_now, batch=B)
    base_total = float(cr.usd_total[0])
    now_total = float(cr.usd_total[-1])
    parts = {"prefill": cr.usd_prefill[:-1] / base_total * 100, "cache": cr.usd_cache[:-1] / base_total * 100,
             "decode": cr.usd_decode[:-1] / base_total * 100}
    list_pct = None
    list_req = None
    if offer is not None:
        lp = list_price_request(offer, L, out_tokens, hgrid)
        list_pct = lp[:-1] / lp[0] * 100
        list_req = (float(lp[0]), float(lp[-1]))
    hc[1].markdown(f"A request: prompt L = **{tokens(L)}** tokens (the sidebar's context), output O = "
                   f"**{tokens(out_tokens)}**, decoded (and prefilled) at batch B = {B:g}. The cached share h·L skips "
                   f"prefill but is held for t = {duration(hold)} in **{label(tb)}** (the cheapest tier then) "
                   "and read back.")
    m3 = [Metric("Request, no hits", usd(base_total)),
          Metric(f"Request at h = {h_now:.0%}", usd(now_total),
                 delta=f"{(now_total / base_total - 1) * 100:+.3g} %", delta_color="inverse"),
          Metric("Of which cache hold + read", usd(float(cr.usd_cache[-1])))]
    if list_req is not None:
        m3.append(Metric(f"List price at h = {h_now:.0%}", usd(list_req[1]),
                         delta=f"{(list_req[1] / list_req[0] - 1) * 100:+.3g} %", delta_color="inverse",
                         help=f"{offer.name}: (1−h)·L at input, h·L at cache hit, O at output; write premiums "
                              "left out."))
    metrics.grid(m3, columns=4)
    latex(eq.request_cost(s, L, out_tokens, h_now, label(tb), tier_usd_now, B), key="memory-tiers.request")
    fig = fig_tiers.request_vs_hit(HIT_GRID, parts, list_pct, h_now=h_now,
                                   total_now_pct=now_total / base_total * 100,
                                   list_name=(offer.model or offer.name) if offer is not None else "",
                                   title=f"Cost of a request against the hit rate (L = {tokens(L)}, O = "
                                         f"{tokens(out_tokens)}, held {duration(hold)})")
    export.chart(fig, key="tiers_request")
    st.caption("Cost of one request as a % of the same request with no cache hits: prefill of the uncached prompt, "
               "holding and reading back the cached prefix, and decode (which caching does not touch) — on the "
               "roofline of this system; dashed: the provider's list price for its model, as a % of its own "
               "no-hit price.")


@section
def hold_or_recompute(s: System, B: float, T: float, tiers: list[Tier], kv: float, rec: float,
                      names: list[str]) -> None:
    """Sections 2 and 3: the hold time and the provider's prices feed only these, so moving one reruns
    them alone (ui/elements/section.py).  What they need of the page above comes in as arguments."""
    hw, model = s.hardware, s.model
    # ------------------------------------------------------------ 2. hold vs recompute
    st.subheader("2. Hold it, or recompute it?")
    c = st.columns([1.2, 1])
    c[0].select_slider("Hold time t: how long until the prompt comes back", options=HOLD_OPTIONS, key="mt_hold",
                       format_func=duration, persist_state="session",
                       help="The time a prompt's KV must be kept before its next use: a chat turn is seconds to "
                            "minutes; providers sell 5-minute and 1-hour cache lifetimes.")
    c[1].selectbox("Provider prices marked", [*offers, "none"], key="mt_offer", persist_state="session",
                   format_func=lambda k: "none" if k == "none" else offers[k].name,
                   help="Cache-hit, cache-write and storage list prices (presets/prices.yaml, dated) drawn over the "
                        "physical costs. They are for that provider's model, not the sidebar's.")
    hold = float(ss["mt_hold"])
    offer = offers.get(ss["mt_offer"])

    # ------------------------------------------------------------ one call: every tier over every hold time
    grid = np.append(CURVE_GRID, hold)                  # the curves' hold times, then the dial's: one call
    i_now = grid.size - 1
    curve = slice(0, CURVE_GRID.size)
    costs = cache_tier_costs(tiers, kv, rec, grid)
    env = cheapest_envelope(costs)
    t_x = neighbour_handover_s(costs)                   # where option i's line crosses option i+1's  [s]
    k_now = int(costs.cheapest[i_now])
    best_usd = float(costs.cheapest_usd[i_now])
    k_tier = int(costs.cheapest_tier[i_now])
    tier_usd_now = float(costs.tier_usd[k_tier, i_now])

    metrics.grid([
        Metric("KV per token", bytes_(kv), help=f"{model.name}, all layers, {s.precision.kv} KV."),
        Metric(f"Cheapest at t = {duration(hold)}", names[k_now],
               help="The option with the lowest hold + read-back cost per token at this hold time."),
        Metric("Its cost [USD/Mtok]", f"${best_usd * 1e6:.3g}",
               help="Per million tokens held for t and read back once."),
        Metric("Recompute [USD/Mtok]", f"${rec * 1e6:.3g}",
               help=f"2·Na/F per token at {s.precision.compute} on {hw.name} at ${hw.price_usd_per_hour:.2f}/h "
                    f"(MFU {s.deployment.mfu:g})."),
    ], columns=4)

    tb = tiers[k_tier]
    latex(eq.hold_or_recompute(s, tb, label(tb), kv, hold), key="memory-tiers.hold")

    provider = None
    refs = []
    list_now = float("nan")
    how = ""
    if offer is not None:
        y_list, how = list_cache_usd_per_mtok(offer, grid)
        list_now = float(y_list[i_now])
        provider = fig_tiers.ProviderCurve(f"{offer.model or offer.name}: list price", y_list[curve])
        refs = [(f"{offer.model or offer.name} input ${offer.input_usd_per_mtok:g}/Mtok",
                 offer.input_usd_per_mtok, fig_tiers.PROVIDER_COLOR),
                (f"cache hit ${offer.cache_read_usd_per_mtok:g}/Mtok", offer.cache_read_usd_per_mtok,
                 fig_tiers.PROVIDER_COLOR)]
    lines = [fig_tiers.TierLine(f"{label(t)} (drain {duration(t.drain_s)})", costs.tier_usd[i][curve] * 1e6,
                                fig_tiers.MEDIUM_COLORS.get(t.medium, fig_tiers.GREY)) for i, t in enumerate(tiers)]
    a_opt = np.append(costs.retrieve_usd, rec)          # option i costs a_i + b_i·t per token
    b_opt = np.append(costs.hold_usd_per_s, 0.0)
    pairs = [f"{a} → {b}" for a, b in pairwise(names)]          # one per hand-over time in t_x
    marks = [(float(t), float(a_opt[i] + b_opt[i] * t) * 1e6, f"{pairs[i]} {duration(t)}")
             for i, t in enumerate(t_x) if np.isfinite(t) and t > 0]
    fig = fig_tiers.cost_vs_hold(
        grid[curve], lines, rec * 1e6, costs.cheapest[curve], names,
        [fig_tiers.MEDIUM_COLORS.get(t.medium, fig_tiers.GREY) for t in tiers] + [fig_tiers.RECOMPUTE_COLOR],
        now=(hold, best_usd * 1e6, f"{names[k_now]} at {duration(hold)}"),
        ttls=[(TTL_5M_S, "5-min TTL"), (TTL_1H_S, "1-h TTL")], provider=provider, refs=refs, handovers=marks,
        title=f"Holding one token's KV for t, then reading it back ({model.name})")
    export.chart(fig, key="tiers_cost")
    st.caption("Cost per million tokens of keeping a token's KV for the hold time t and reading it back once "
               "(hold = KV bytes ÷ capacity × device $/s × t; read = KV bytes ÷ bandwidth × device $/s; 0 from HBM), "
               "against recomputing it with a prefill (dashed). Shading and the thick line: the cheapest option; ×: "
               "where neighbouring options' lines cross (hand-over t×). "
               "Purple: the provider's list prices for its own model (lifetimes 5 min and 1 h)"
               + (f": {how}." if how else "."))

    handover = " → ".join(f"**{names[i]}**" + (f" up to {duration(t)}" if j < len(env.switch_s) else "")
                          for j, (i, t) in enumerate(zip(env.order, (*env.switch_s, np.inf))))


    def versus_drain(i: int, t: float) -> str:
        """Where hand-over t (option i → i+1) falls against the two tiers' drain times, in words."""
        d_i = tiers[i].drain_s
        if i + 1 >= len(tiers):
            return f"{'above' if t > d_i else 'below'} {names[i]}'s drain time ({duration(d_i)})"
        d_j = tiers[i + 1].drain_s
        lo, hi = min(d_i, d_j), max(d_i, d_j)
        if lo <= t <= hi:
            return f"between the drain times ({duration(d_i)} and {duration(d_j)})"
        side = "below" if t < lo else "above"
        return f"{side} both drain times ({duration(d_i)} and {duration(d_j)})"


    def handover_words(i: int, t: float) -> str:
        if not np.isfinite(t):
            return f"{pairs[i]}: never ({names[i + 1]} is never the cheaper of the two)"
        if t <= 0:
            return f"{pairs[i]}: at once ({names[i + 1]} is cheaper at every hold time)"
        return f"{pairs[i]} at **{duration(t)}**, {versus_drain(i, t)}"


    skipped = [i for i, _ in enumerate(names) if i not in env.order]
    n_between = sum(1 for i, t in enumerate(t_x[:-1]) if np.isfinite(t) and t > 0
                    and min(tiers[i].drain_s, tiers[i + 1].drain_s) <= t <= max(tiers[i].drain_s, tiers[i + 1].drain_s))
    st.markdown(
        f"Cheapest place, as the hold time grows: {handover}. Within a tier, holding costs as much as the read-back at "
        "t = its drain time (HBM has nothing to read back). Where two neighbouring options' lines cross (× on the "
        r"chart, $t_\times = (a_j - a_i)/(b_i - b_j)$ for costs $a + b\,t$ per token): "
        + "; ".join(handover_words(i, t) for i, t in enumerate(t_x)) + ". "
        f"Below t× the faster option is cheaper — its dearer hold has not yet cost the slower tier's read-back; above "
        f"it, the slower one. The lecture's rule of thumb puts each hand-over near a drain time; here {n_between} of "
        f"{len(t_x) - 1} neighbouring-tier crossings fall between the two tiers' drain times."
        + (f" A crossing is a hand-over only where both options are on the cheapest path: "
           f"{' and '.join(names[i] for i in skipped)} never {'is' if len(skipped) == 1 else 'are'} the cheapest here, "
           "so the path above steps over " + ("it." if len(skipped) == 1 else "them.") if skipped else ""))

    ratio_phys = rec / tier_usd_now if tier_usd_now > 0 else float("inf")
    m2 = [Metric(f"Recompute ÷ {label(tb)} at {duration(hold)}", f"{ratio_phys:,.3g}×",
                 help="How many times cheaper the cheapest tier is than recomputing, on this system at list "
                      "hardware prices (no margin).")]
    if offer is not None:
        offer_date = offer.meta["input_usd_per_mtok"].date if "input_usd_per_mtok" in offer.meta else "undated"
        m2 += [
            Metric(f"{offer.model or offer.name}: input ÷ cache hit",
                   f"{offer.input_usd_per_mtok / offer.cache_read_usd_per_mtok:.3g}×",
                   help="The lecture: 'cache hits ~10× cheaper' — loading KV is much cheaper than recomputing it."),
            Metric(f"List price to hold {duration(hold)}", "not sold" if not np.isfinite(list_now)
                   else f"${list_now:.3g}/Mtok", help=f"{how} ({offer.name}, {offer_date})."),
            Metric("List input price", f"${offer.input_usd_per_mtok:g}/Mtok",
                   help="The lecture: base input ($5/M for Opus) is the provider's price of rematerialising."),
        ]
    metrics.grid(m2, columns=4)
    if offer is not None:
        unc = [f for f in presets.uncertain_fields(offer) if f.startswith(("cache_", "input_"))]
        if unc:
            st.caption(f"⚠ Uncertain price figures for {offer.name}: {', '.join(unc)}.")
    if k_now == len(tiers):
        st.info(f"At t = {duration(hold)} no tier beats recomputing: the cheapest 'cache' is none at all.", icon="ℹ️")

    request_cost(s, T, B, tiers[k_tier], tier_usd_now, hold, offer)


hold_or_recompute(s, B, T, tiers, kv, rec, names)
