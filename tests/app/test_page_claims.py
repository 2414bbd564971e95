"""Every page's sentences that state a number or a trend, held to the model.

Each test runs a page (AppTest) at two or three sidebar systems given explicitly in the URL — never the
app's default, which will change — reads the rendered text (markdown, captions, notices) and checks each
claim against values computed here, independently, from `model/` (and the presets) for the View the page
used (`session_state["_view"]`).  A sentence hard-coded at one system fails at the others.

Pages owned by other helpers this round (views/pipeline.py, views/reality.py) get light checks only.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from model import decode_step, presets
from model.context import generations
from model.economics import TTL_1H_S, TTL_5M_S, hbm_tier
from model.presets import hardware_presets
from tests.app.helpers import app, arr, assert_clean, fig, metric_list, page_text, trace
from ui.format import bytes_, duration, number, seconds, tokens, usd
from ui.state.dials import BATCH_OPTIONS

H100_LLAMA = {"chip": "h100", "model": "llama-3.1-70b", "w": "bf16", "kv": "bf16", "cd": "bf16", "b": "64",
              "ctx": "8192"}
GB200_DSV3 = {"chip": "gb200", "model": "deepseek-v3", "w": "fp8", "kv": "fp8", "cd": "fp8", "b": "64",
              "ctx": "8192"}
MI300_8B = {"chip": "mi300x", "model": "llama-3.1-8b", "w": "bf16", "kv": "bf16", "cd": "bf16", "b": "256",
            "ctx": "32768"}
SYSTEMS = [H100_LLAMA, GB200_DSV3]


def run(page: str, query: dict[str, str], open_: tuple[str, ...] = ()):
    """The page at `query`: (AppTest, the View it used, all its rendered text joined).  `open_`: keys of
    lazy expanders (`on_change="rerun"`) to open first, as a click on them would."""
    at = app(query, page=page)
    for key in open_:
        at.session_state[key] = True
    if open_:
        at.run()
    assert_clean(at)
    view = at.session_state["_view"]
    assert view.chip_key == query["chip"] and view.model_key == query["model"]
    assert (view.batch, view.context) == (float(query["b"]), float(query["ctx"]))
    return at, view, page_text(at)


# ================================================================ Memory tiers

def tier_lines(tiers, kv: float, rec: float):
    """Each option's cost per token a + b·t (lecture §2.7), by hand: a = kv/bw·p (0 in HBM), b = kv/cap·p,
    p in $/s; recompute a = its cost, b = 0."""
    a = [0.0 if t.medium == "hbm" else kv / t.bandwidth_bytes_per_s * t.usd_per_hour / 3600 for t in tiers] + [rec]
    b = [kv / t.capacity_bytes * t.usd_per_hour / 3600 for t in tiers] + [0.0]
    return np.array(a), np.array(b)


@pytest.mark.parametrize("query", [
    {**H100_LLAMA},
    {**GB200_DSV3, "mt_hold": "3600"},
    {**MI300_8B, "mt_ddr_usd": "2"},          # a dearer DDR: its hand-overs move (and it may drop off the envelope)
])
def test_memory_tiers_hand_overs_and_drain_times(query):
    at, view, text = run("memory-tiers", query)
    s = view.system
    tiers = [hbm_tier(s.hardware), *presets.load("tier").values()]
    if "mt_ddr_usd" in query:
        tiers[1] = replace(tiers[1], usd_per_hour=float(query["mt_ddr_usd"]))
    kv = float(s.kv.bytes_per_token)
    rec = 2 * s.model.active_params / s.flops * s.hardware.price_usd_per_hour / 3600
    a, b = tier_lines(tiers, kv, rec)
    names = ["HBM", "DDR", "flash", "disk", "recompute"]
    tx = (a[1:] - a[:-1]) / (b[:-1] - b[1:])          # t× = (aⱼ − aᵢ)/(bᵢ − bⱼ), every slope falls here
    assert np.all(b[:-1] > b[1:])
    now = tx <= 0                                     # the slower option is cheaper from t = 0: "at once"
    for i in np.flatnonzero(now):
        assert f"{names[i]} → {names[i + 1]}: at once" in text
    tx = np.where(now, 0.0, tx)
    drain = [t.capacity_bytes / t.bandwidth_bytes_per_s for t in tiers]
    between = 0
    for i, t in enumerate(tx):
        if t == 0:
            continue
        assert f"{names[i]} → {names[i + 1]} at **{duration(t)}**" in text
        if i + 1 < len(tiers):
            lo, hi = sorted((drain[i], drain[i + 1]))
            word = "between the drain times" if lo <= t <= hi else ("below both" if t < lo else "above both")
            between += lo <= t <= hi
            assert f"{names[i]} → {names[i + 1]} at **{duration(t)}**, {word}" in text
        else:
            word = "above" if t > drain[i] else "below"
            assert f"at **{duration(t)}**, {word} {names[i]}'s drain time ({duration(drain[i])})" in text
    assert f"here {between} of {len(tiers) - 1} neighbouring-tier crossings fall between" in text
    # Options never cheapest at any hold time (the envelope of the lines a + b·t steps over them).
    tt = np.geomspace(1e-6, 1e12, 20001)
    on_path = set(np.argmin(a[:, None] + b[:, None] * tt[None, :], axis=0).tolist())
    skipped = [names[i] for i in range(len(names)) if i not in on_path]
    if skipped:
        assert f"{' and '.join(skipped)} never {'is' if len(skipped) == 1 else 'are'} the cheapest here" in text
    else:
        assert "never is the cheapest" not in text and "never are the cheapest" not in text
    # The × marks on the chart sit at the same hold times, on the lines.
    f = fig(at, "Holding one token's KV")
    h = trace(f, "hand-over")
    assert np.allclose(sorted(arr(h["x"])), sorted(tx[(tx >= 1e-3) & (tx <= 1e7)]), rtol=1e-9)
    if now.any():
        assert "DDR → flash: at once" in text          # the dearer DDR is never the cheaper of the two
    # The cheapest place at the two cache lifetimes.
    for t, word in ((TTL_5M_S, "at 5 min is"), (TTL_1H_S, "at 1 h")):
        k = int(np.argmin(a + b * t))
        assert f"{word} **{names[k]}**" in text
    # The drain-time caption names the tiers outside the lecture's figures by more than 1.5× (flash and disk
    # presets: 18.3 min and 23.4 h against ~1 min and ~1 h).
    assert f"flash {duration(drain[2])} (lecture ~1 min)" in text
    assert f"disk {duration(drain[3])} (lecture ~1 h)" in text


def test_memory_tiers_rule_of_thumb_sentence_is_gone():
    _, _, text = run("memory-tiers", H100_LLAMA)
    assert "falls between neighbouring drain times" not in text


# ================================================================ Context limits

def bf16_ratios() -> dict[str, float]:
    """Datasheet bf16 FLOP/s ÷ HBM B/s of every real chip preset."""
    return {k: hw.flops("bf16") / hw.hbm_bandwidth_bytes_per_s for k, hw in hardware_presets().items()
            if hw.status != "illustrative" and "bf16" in hw.compute_dtypes()}


def test_bf16_ratios_of_the_presets_by_hand():
    # Datasheets: A100 312e12 / 2.039e12 = 153; H100 989e12 / 3.35e12 = 295 (as the lecture's table, §2.1).
    r = bf16_ratios()
    assert r["a100"] == pytest.approx(153.0, abs=0.5) and r["h100"] == pytest.approx(295.2, abs=0.5)
    assert round(r["rubin-ultra"]) == 544 and round(r["tpu-v6e"]) == 560       # the figures


@pytest.mark.parametrize("query", [{**H100_LLAMA}, {**GB200_DSV3, "cx_f": "0.01"}, {**MI300_8B, "cx_f": "0.5"}])
def test_context_ratio_claims_follow_the_presets(query):
    at, view, text = run("context", query)
    s, hw = view.system, view.system.hardware
    r = bf16_ratios()
    # The lecture's claim stated as the lecture's, beside the data.
    assert "'somewhere around 300'" in text and "'reasonably stable' from A100 to H100 to B100" in text
    assert f"A100 **{r['a100']:.0f}** → H100 **{r['h100']:.0f}** → B200 **{r['b200']:.0f}**" in text
    assert f"×{r['h100'] / r['a100']:.2g} from A100 to H100" in text
    lo, hi = min(r, key=r.get), max(r, key=r.get)
    assert f"from **{r[lo]:.0f}**" in text and f"to **{r[hi]:.0f}**" in text
    assert f"a {r[hi] / r[lo]:.2g}× spread" in text
    near = sum(200 <= v <= 400 for v in r.values())
    assert f"{near} of {len(r)} lie within 200–400" in text
    assert "barely moved" not in text and "stayed near" not in text and "their ratio did not" not in text
    # The chart carries every chip's ratio and the lecture's 300 as a line.
    f = fig(at, "FLOP/s ÷ HBM bytes/s of each chip preset")
    assert sorted(arr(trace(f, "chip preset")["y"])) == pytest.approx(sorted(r.values()), rel=1e-12)
    assert any(sh.get("y0") == 300.0 == sh.get("y1") for sh in f["layout"]["shapes"])
    table = next(d.value for d in at.dataframe if "F/bw [FLOP/B]" in d.value.columns)
    assert sorted(table["F/bw [FLOP/B]"]) == sorted(round(v) for v in r.values())
    # This chip's ratio at the sidebar's compute dtype, in the equation's sentence.
    assert f"F/bw = {s.flops / s.hbm_bandwidth:,.0f} FLOP/B" in text
    if s.precision.compute != "bf16":
        assert (f"gives {hw.flops(s.precision.compute) / hw.hbm_bandwidth_bytes_per_s:,.0f} "
                f"{s.precision.compute} FLOP per byte against {r[view.chip_key]:.0f} at bf16") in text
    # T_c and T_c/f (dense, full attention: T_c = 2·Na·bw/(F·kv_tok), lecture §2.5).
    kv = s.kv
    assert kv.window_bytes_per_token == 0
    tc = 2 * s.model.active_params * s.hbm_bandwidth / (s.flops * kv.full_bytes_per_token)
    f_now = float(query.get("cx_f", 0.1))
    assert f"moves {s.model.name}'s crossover from {tokens(tc)} to {tokens(tc / f_now)} tokens" in text
    assert f"({1 / f_now:.3g}×; T_c/f for full attention)" in text
    # FLOP/s and bandwidth growth from the earliest chip to the one with most FLOP/s, at the compute dtype.
    g = generations(hardware_presets(), s.precision.compute)
    j = int(np.argmax(g.flops))
    assert f"FLOP/s grew {g.flops[j] / g.flops[0]:.3g}× and bandwidth " \
           f"{g.hbm_bandwidth[j] / g.hbm_bandwidth[0]:.3g}×" in text


# ================================================================ Batch

@pytest.mark.parametrize("query", [H100_LLAMA, GB200_DSV3, MI300_8B])
def test_batch_floor_weight_share_and_unbatched_ratio(query):
    _, view, text = run("batch", query)
    s, B, T, C = view.system, view.batch, view.context, view.chips
    floor = s.weight_bytes / (C * s.hbm_bandwidth)            # W/(C·bw), every weight read once
    assert f"latency floor W/(C·bw) = {seconds(floor)}" in text
    one = decode_step(s, 1.0, T)
    share = floor / float(one.t_step_s)
    assert f"At B = 1 the weight read is {100 * share:.3g} % of the step" in text
    assert ("starts flat, near the floor" if share >= 0.5 else "is already off the floor") in text
    # The page's sweep (6 points per octave, the dial's options and B): the claim names a batch of it.
    grid = np.unique(np.concatenate([np.geomspace(1, 65536, 97), BATCH_OPTIONS, [B]]))
    sw = decode_step(s, grid, T)
    cost = np.asarray(sw.usd_per_mtok)
    fits = np.asarray(sw.fits, bool)
    best = int(np.argmin(np.where(fits, cost, np.inf)))
    assert f"costs **{number(cost[0] / cost[best])}×** more than the cheapest batch that fits " \
           f"(B = {grid[best]:,.0f})" in text
    assert "The curve is the best any engine could do" not in text


# ================================================================ Fast mode

@pytest.mark.parametrize("query", SYSTEMS)
def test_fast_mode_floor_and_drain(query):
    _, view, text = run("fast-mode", query)
    s, C = view.system, view.chips
    assert f"latency floor W/(C·bw) = {seconds(s.weight_bytes / (C * s.hbm_bandwidth))}" in text
    assert f"one HBM drain M/bw = {seconds(s.hardware.hbm_bytes / s.hbm_bandwidth)}" in text
    kv_t = float(s.kv_read(view.context))
    # As B → ∞ nothing is shared: per token max(2·Na/F, kv(T)/bw) of one chip's time (C cancels), at its price.
    floor = max(2 * s.model.active_params / s.flops, kv_t / s.hbm_bandwidth) * s.hardware.price_usd_per_hour / 3600
    assert f"cannot go below the floor of {usd(floor * 1e6)}/Mtok" in text
    assert "gains little" not in text
    if kv_t / s.hbm_bandwidth >= 2 * s.model.active_params / s.flops:
        assert "decode is memory-bound at every batch" in text
    else:
        assert "decode is memory-bound at every batch" not in text


# ================================================================ KV cache

@pytest.mark.parametrize("query", SYSTEMS)
def test_kv_cache_assumptions_use_this_chip(query):
    _, view, text = run("kv-cache", query)
    s = view.system
    assert (f"F/bw = {s.flops / s.hbm_bandwidth:.0f} from {s.hardware.name} at {s.precision.compute}") in text


# ================================================================ Scale-up

@pytest.mark.parametrize("query", [H100_LLAMA, {**GB200_DSV3, "sx": "2"}])
def test_scale_up_lecture_and_presets_and_pipeline_memory(query):
    at, view, text = run("scale-up", query)
    s, B, T, C = view.system, view.batch, view.context, view.chips
    hw = hardware_presets()
    h, g = hw["h100"].scaleup_domain_chips, hw["gb200"].scaleup_domain_chips
    assert (h, g) == (8, 72)                       # HGX H100 8 GPUs; GB200 NVL72 72 GPUs (datasheets)
    assert "'8x' from Hopper (the lecture" in text and f"{g / h:.3g}×)" in text and "9×)" in text
    assert "grew 8× from Hopper" not in text
    P = int(at.session_state["sx"])
    assert f"each chip holds W/(C·P) = {bytes_(s.weight_bytes / (C * P))} of weights" in text
    assert f"so the bound ({decode_step(s, B, T).bound}) does not change with C" in text


# ================================================================ MoE layout (tensor parallelism)

@pytest.mark.parametrize("query", [H100_LLAMA, GB200_DSV3, {**H100_LLAMA, "hop_us": "0"}])
def test_moe_tensor_parallel_fastest_group_and_hop_share(query):
    at, view, text = run("moe", query, open_=("moe_tp_open",))     # with an MoE model it is in an expander
    s, B, T = view.system, view.batch, view.context
    hw, m = s.hardware, s.model
    D = int(hw.scaleup_domain_chips)
    hop = float(at.session_state["hop_us"]) * 1e-6
    a = float(at.session_state["ab"])
    g = np.arange(1.0, D + 1)
    # t_TP = L · 2 · [2(G−1)/G · B·d·a / bw_up + 2(G−1) · t_hop]  (two ring all-reduces per layer)
    t_tp = m.n_layers * 2 * (2 * (g - 1) / g * B * m.d_model * a / hw.scaleup_bandwidth_bytes_per_s
                             + 2 * (g - 1) * hop)
    sw = decode_step(s.with_(chips=1), B, T, chips=g, t_comm=t_tp)
    step = np.where(np.asarray(sw.fits, bool), np.asarray(sw.t_step_s), np.inf)
    best = int(np.argmin(step))
    assert f"the fastest G of 1 … {D} is **{g[best]:,.0f}**" in text
    last_fit = g[np.isfinite(step)].max()
    assert ("keeps paying up to the whole domain" if g[best] >= last_fit else "past it the all-reduces cost more") \
        in text
    G = min(int(view.chips), D)
    share = m.n_layers * 2 * 2 * (G - 1) * hop / t_tp[G - 1]
    assert f"At G = {G}, {100 * share:.3g} % of the all-reduce time is hop latency" in text
    assert "past some G the split stops paying" not in text


# ================================================================ Remat

@pytest.mark.parametrize("query", SYSTEMS)
def test_remat_extra_compute_and_kv_mirror(query):
    at, view, text = run("remat", query)
    s, T = view.system, view.context
    # A training step is forward + backward (2× forward) = 3 forwards; rematerialising adds one: +1/3.
    assert "(+33 %)" in text
    assert metric_list(at)[3].value == "+33 %"
    # The KV column: recompute the prefix, 2·Na·T/F, against reading the stored KV at full bandwidth.
    assert f"2·Na·T/F = {seconds(2 * s.model.active_params * T / s.flops)} per step" in text
    assert f"against {seconds(float(s.kv.stored_bytes(T)) / s.hbm_bandwidth)} to read the cache" in text


# ================================================================ Prices

@pytest.mark.parametrize("query", SYSTEMS)
def test_prices_ratios_come_from_the_offers(query):
    at, view, text = run("prices", query)
    offers = presets.price_presets()
    o = next(x for x in offers.values() if f"From **{x.model or x.name}** (\\${x.input_usd_per_mtok:g} in" in text)
    assert f"decode runs at ≈1/{o.output_usd_per_mtok / o.input_usd_per_mtok:.3g} of prefill" in text
    fo = next(x for x in offers.values()
              if x.fast_output_usd_per_mtok and f"From **{x.model or x.name}**: fast output" in text)
    S, Pm = fo.fast_speedup, fo.fast_output_usd_per_mtok / fo.output_usd_per_mtok
    assert f"the standard mode runs {S:.3g}·B\\* and the fast one B\\*/{Pm:.3g}: a {S * Pm:.3g}× smaller batch" in text


@pytest.mark.parametrize("query", [{**H100_LLAMA}, {**GB200_DSV3, "pr_na": "1", "pr_fpb": "10000", "pr_kvl": "256",
                                                    "pr_kvdt": "bf16"}])
def test_prices_cache_discount_against_the_roofline(query):
    at, _, text = run("prices", query)
    ss = at.session_state
    o = presets.price_presets()[ss["pr_offer"]]
    disc = o.input_usd_per_mtok / o.cache_read_usd_per_mtok
    # One token's KV: layers × 2 (K, V) × d_head × KV heads × bytes; recompute ÷ reload = 2·Na/((F/bw)·kv).
    kv = float(ss["pr_kvl"]) * 2 * int(ss["pr_dh"]) * int(ss["pr_kvh"]) * {"bf16": 2, "fp8": 1}[ss["pr_kvdt"]]
    reload = 2 * float(ss["pr_na"]) * 1e9 / (float(ss["pr_fpb"]) * kv)
    assert f"Reading a token's KV from HBM is {number(reload)}× cheaper than recomputing it" in text
    assert (f"so a {disc:.3g}× discount is not about bandwidth" if reload > disc else
            f"no more than the {disc:.3g}× discount") in text


# ================================================================ Training

@pytest.mark.parametrize("query", [H100_LLAMA, {**GB200_DSV3, "tt_models": "5", "tt_days": "30"}])
def test_training_pretraining_bill(query):
    at, view, text = run("training", query)
    s, ss = view.system, at.session_state
    na, rate = float(ss["tt_na"]) * 1e9, float(ss["tt_rate"]) * 1e6
    days, models, i_inf = float(ss["tt_days"]), float(ss["tt_models"]), float(ss["tt_iinf"])
    # 6·D_pre = 2·ineff_inf·D_inf, D_inf = R/n · days · 86,400 (lecture §2.11)
    d_pre = 2 * i_inf * rate / models * days * 86_400 / 6
    c_pre = 6 * na * d_pre
    chip_days = c_pre / s.flops / 86_400
    assert f"6·N_active·D_pre = {number(c_pre)} FLOP, is {number(chip_days)} chip-days of {s.hardware.name}" in text
    assert f"about ${number(chip_days * 24 * s.hardware.price_usd_per_hour)}" in text
    assert f"Per model the rate is {number(rate / models)} tok/s" in text


# ================================================================ Compare, custom, pipeline

@pytest.mark.parametrize("query", SYSTEMS)
def test_compare_states_the_sidebar_batch_and_context(query):
    _, view, text = run("compare", query)
    assert f"**B = {view.batch:g}** and **T = {tokens(view.context)}**" in text
    assert "Flat at the latency floor W/(C·bw) at small batch" not in text


@pytest.mark.parametrize("query", SYSTEMS)
def test_custom_page_chip_and_model_figures(query):
    _, view, text = run("custom", query)
    hw, m = view.system.hardware, view.system.model
    assert (f"FLOP/byte at bf16: {hw.flops('bf16') / hw.hbm_bandwidth_bytes_per_s:,.0f} · HBM drain time "
            f"{hw.hbm_bytes / hw.hbm_bandwidth_bytes_per_s * 1e3:.3g} ms · scale-up domain "
            f"{hw.scaleup_domain_chips:,} chips") in text
    assert f"Sparsity total/active: {m.total_params / m.active_params:.3g}" in text


@pytest.mark.parametrize("query", SYSTEMS)
def test_pipeline_sequences_in_flight(query):
    at, view, text = run("pipeline", query)
    P = int(at.session_state["p"])
    assert f"P = {P} stages of C = {view.chips:g} chips" in text
    assert f"P·b = {P * view.batch:g} sequences are in flight" in text


# ================================================================ Walkthrough

@pytest.mark.parametrize("query", SYSTEMS)
def test_walkthrough_floor_step(query):
    _, view, text = run("walkthrough", {**query, "wk_step": "1"})
    s, B, T, C = view.system, view.batch, view.context, view.chips
    now = decode_step(s, B, T)
    assert f"Every step reads all {bytes_(s.weight_bytes)} of weights once" in text
    assert f"no batch is faster than {seconds(s.weight_bytes / (C * s.hbm_bandwidth))} per token" in text
    assert f"(B = {B:g} now: {seconds(float(now.t_step_s))}, {now.bound}-bound)" in text
    assert "while the weight read sets the step" in text


@pytest.mark.parametrize("query", SYSTEMS)
def test_walkthrough_context_step(query):
    _, view, text = run("walkthrough", {**query, "wk_step": "11"})
    s = view.system
    assert f"only the chip's F/bw enters ({s.flops / s.hbm_bandwidth:,.0f} here" in text
    assert "barely moved" not in text


# ================================================================ Reality check (owned by another helper: light checks)

@pytest.mark.parametrize("query", SYSTEMS)
def test_reality_none_above_the_bound_is_true_of_the_data(query):
    from model import calibrate
    _, _, text = run("reality", query)
    c = calibrate.check(presets.measurement_presets())
    # "None exceeds 100 %" may only be said while every measurement is at or below its ideal bound.
    if "None exceeds 100 %" in text:
        assert np.nanmax(c.efficiency) <= 1.0
