"""model/economics.py, memory tiers for a prompt cache (lecture §2.7): drain times of the default tiers,
hold / read-back / recompute costs and the cheapest option, by hand; the cheapest tier moves to slower
tiers as the hold time grows (hypothesis); a prefix-cache hit rate and list prices."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model import Deployment, Precision, System, presets, request
from model.economics import (
    LECTURE_DRAIN_S,
    Tier,
    cache_tier_costs,
    cheapest_envelope,
    hbm_tier,
    hold_cost,
    list_cache_usd_per_mtok,
    list_price_request,
    neighbour_handover_s,
    recompute_cost,
    request_with_cache,
    retrieve_cost,
)

KV70 = 327_680.0   # Llama 3.1 70B, bf16: 80 layers · 2 (K, V) · 8 KV heads · 128 · 2 B


def default_tiers():
    t = presets.load("tier")
    return t["ddr5-socket"], t["nvme-gen5"], t["hdd-24tb"]


def h100_llama70() -> System:
    return System(presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b"), Precision(),
                  Deployment(chips=2))


# ---------------------------------------------------------------- drain times of the default tiers, by hand

def test_drain_times_of_the_default_tiers_by_hand():
    ddr, flash, disk = default_tiers()
    # DDR5, one socket: 12 × 128 GB = 1.536 TB at 576 GB/s → 2.667 s (the lecture: 1–10 s).
    assert ddr.drain_s == pytest.approx(1.536e12 / 576e9) == pytest.approx(2.6667, rel=1e-4)
    # 15.36 TB NVMe at 14 GB/s → 1,097 s ≈ 18 min (the lecture: ~1 min; a bigger drive drains slower).
    assert flash.drain_s == pytest.approx(1097.14, rel=1e-5)
    # 24 TB HDD at 285 MB/s → 84,211 s ≈ 23.4 h (the lecture: ~1 h).
    assert disk.drain_s == pytest.approx(84_210.5, rel=1e-5)
    # H100 HBM: 80 GB at 3.35 TB/s → 23.9 ms (the lecture: ≈ 20 ms; 15–36 ms across chips).
    hbm = hbm_tier(presets.get("hardware", "h100"))
    assert hbm.drain_s == pytest.approx(0.023881, rel=1e-4)
    lo, hi, _ = LECTURE_DRAIN_S["hbm"]
    assert lo <= hbm.drain_s <= hi
    lo, hi, _ = LECTURE_DRAIN_S["dram"]
    assert lo <= ddr.drain_s <= hi
    # Each tier drains one to three orders of magnitude slower than the one above it, as in the lecture.
    d = [hbm.drain_s, ddr.drain_s, flash.drain_s, disk.drain_s]
    assert all(10 <= b / a <= 1e3 for a, b in itertools.pairwise(d))


def test_default_tiers_are_slower_and_cheaper_per_byte_in_order():
    hbm = hbm_tier(presets.get("hardware", "h100"))
    tiers = [hbm, *default_tiers()]
    assert [t.medium for t in tiers] == ["hbm", "dram", "flash", "disk"]
    bw = [t.bandwidth_bytes_per_s for t in tiers]
    per_byte = [t.usd_per_byte_s for t in tiers]
    assert bw == sorted(bw, reverse=True) and per_byte == sorted(per_byte, reverse=True)
    # Every default price is an estimate and flagged uncertain (presets/tiers.yaml).
    assert all(presets.uncertain_fields(t) == ["usd_per_hour"] for t in default_tiers())


def test_hbm_tier_comes_from_the_chip_with_its_sources():
    hw = presets.get("hardware", "h100")
    t = hbm_tier(hw)
    assert (t.capacity_bytes, t.bandwidth_bytes_per_s, t.usd_per_hour) == (80e9, 3.35e12, hw.price_usd_per_hour)
    assert t.medium == "hbm"
    assert t.meta["usd_per_hour"] == hw.meta["price_usd_per_hour"]         # source, date, [uncertain] kept
    assert presets.uncertain_fields(t) == [f for f in ("usd_per_hour",) if hw.meta["price_usd_per_hour"].uncertain]


# ---------------------------------------------------------------- costs by hand

def test_hold_and_read_back_by_hand_for_flash_at_five_minutes():
    _, flash, _ = default_tiers()
    p = 0.044 / 3600                                     # USD per second of one SSD
    hold = KV70 / 15.36e12 * p * 300                     # 7.822e-11 USD
    read = KV70 / 14e9 * p                               # 2.861e-10 USD
    assert float(hold_cost(flash, KV70, 300)) == pytest.approx(hold)
    assert float(retrieve_cost(flash, KV70)) == pytest.approx(read)
    c = cache_tier_costs([flash], KV70, 1.0, 300.0)
    assert float(c.tier_usd[0]) == pytest.approx(hold + read) == pytest.approx(3.643e-10, rel=1e-3)


def test_hbm_has_nothing_to_read_back():
    # "Hold in HBM: … retrieve cost ≈ 0 (already in HBM)" (§2.7); any other medium pays its bandwidth.
    hw = presets.get("hardware", "h100")
    hbm = hbm_tier(hw)
    assert float(retrieve_cost(hbm, KV70)) == 0.0
    assert float(retrieve_cost(hbm.with_(medium="dram"), KV70)) == pytest.approx(
        KV70 / 3.35e12 * hw.price_usd_per_hour / 3600)


def test_within_a_tier_hold_equals_read_back_at_its_drain_time():
    # kv/cap · p · t = kv/bw · p  ⇔  t = cap/bw: the lecture's "equalise the fraction held and retrieved".
    for tier in default_tiers():
        assert float(hold_cost(tier, KV70, tier.drain_s)) == pytest.approx(float(retrieve_cost(tier, KV70)))


def test_recompute_by_hand_for_llama70_on_h100():
    s = h100_llama70()
    # 2 · 70.6e9 FLOPs at 989.4e12 FLOP/s, $2.95/h: 1.4271e-4 s × 8.194e-4 $/s = 1.1695e-7 USD per token.
    assert float(recompute_cost(s)) == pytest.approx(2 * 70.6e9 / 989.4e12 * 2.95 / 3600)
    assert float(recompute_cost(s)) * 1e6 == pytest.approx(0.11695, rel=1e-4)
    # Half the MFU, twice the cost; independent of the chip count.
    assert float(recompute_cost(s.with_(mfu=0.5))) == pytest.approx(2 * float(recompute_cost(s)))
    assert float(recompute_cost(s.with_(chips=8))) == pytest.approx(float(recompute_cost(s)))


def test_cheapest_option_at_the_ttls_and_hand_over_times_by_hand():
    s = h100_llama70()
    hbm = hbm_tier(s.hardware)
    ddr, flash, disk = default_tiers()
    rec = 2 * 70.6e9 / 989.4e12 * 2.95 / 3600
    # Lines a + b·t per token (a = read-back, b = hold per second), from the preset numbers:
    b_hbm, a_hbm = KV70 / 80e9 * 2.95 / 3600, 0.0
    b_ddr, a_ddr = KV70 / 1.536e12 * 0.22 / 3600, KV70 / 576e9 * 0.22 / 3600
    b_fl, a_fl = KV70 / 15.36e12 * 0.044 / 3600, KV70 / 14e9 * 0.044 / 3600
    b_hd, a_hd = KV70 / 24e12 * 0.033 / 3600, KV70 / 285e6 * 0.033 / 3600
    hand = [(a_ddr - a_hbm) / (b_hbm - b_ddr),        # HBM → DDR   ≈ 10.4 ms
            (a_fl - a_ddr) / (b_ddr - b_fl),          # DDR → flash ≈ 19.7 s
            (a_hd - a_fl) / (b_fl - b_hd),            # flash → disk ≈ 21 h
            (rec - a_hd) / b_hd]                      # disk → recompute ≈ 9.8 days
    c = cache_tier_costs([hbm, ddr, flash, disk], KV70, rec, np.array([1e-3, 1.0, 300.0, 3600.0, 86400.0, 3e6]))
    env = cheapest_envelope(c)
    assert env.order == (0, 1, 2, 3, 4)
    assert np.allclose(env.switch_s, hand, rtol=1e-9)
    t = env.switch_s
    assert t[0] == pytest.approx(0.0104, rel=0.01) and t[1] == pytest.approx(19.7, rel=0.01)
    assert t[2] / 3600 == pytest.approx(21.0, rel=0.01) and t[3] / 86400 == pytest.approx(9.84, rel=0.01)
    # 1 ms: HBM; 1 s: DDR; the 5-minute and 1-hour lifetimes: flash; a day: disk; a month: recompute.
    assert [c.names[k] for k in c.cheapest] == [hbm.name, ddr.name, flash.name, flash.name, disk.name, "recompute"]
    assert list(c.cheapest_tier) == [0, 1, 2, 2, 3, 3]      # where a hit would be held: the cheapest tier
    # Loading is far cheaper than recomputing at 5 min: 0.117 / 3.64e-4 ≈ 321× (list prices say 10×).
    assert rec / float(c.cheapest_usd[2]) == pytest.approx(0.11695e-6 / 3.643e-10, rel=1e-3)


def test_envelope_agrees_with_the_grid_argmin():
    s = h100_llama70()
    tiers = [hbm_tier(s.hardware), *default_tiers()]
    rec = float(recompute_cost(s))
    t = np.geomspace(1e-4, 1e8, 2001)
    c = cache_tier_costs(tiers, KV70, rec, t)
    env = cheapest_envelope(c)
    expect = np.array(env.order)[np.searchsorted(np.array(env.switch_s), t)]
    assert np.array_equal(c.cheapest, expect)


# ---------------------------------------------------------------- properties

RATIO = st.floats(1.5, 1e3)


@st.composite
def ordered_tiers(draw):
    """2–5 tiers, each slower (lower bandwidth) and cheaper per byte held than the one before it, the
    first possibly in HBM (nothing to read back); prices and capacities otherwise arbitrary."""
    n = draw(st.integers(2, 5))
    bw = draw(st.floats(1e11, 1e13))
    per_byte = draw(st.floats(1e-16, 1e-12))          # USD per byte-second
    tiers = []
    for i in range(n):
        cap = draw(st.floats(1e9, 1e14))
        medium = "hbm" if i == 0 and draw(st.booleans()) else "other"
        tiers.append(Tier(f"t{i}", cap, bw, per_byte * cap * 3600, medium))
        bw /= draw(RATIO)
        per_byte /= draw(RATIO)
    return tiers


@settings(max_examples=60, deadline=None)
@given(ordered_tiers(), st.floats(1e2, 1e7), st.floats(1e-12, 1e-3))
def test_cheapest_tier_moves_to_slower_tiers_as_hold_time_grows(tiers, kv, recompute):
    hold = np.geomspace(1e-4, 1e9, 600)
    c = cache_tier_costs(tiers, kv, recompute, hold)
    assert np.all(np.diff(c.cheapest) >= 0)                     # never back to a faster tier (recompute last)
    assert np.all(np.diff(c.cheapest_tier) >= 0)                # nor among the tiers alone
    env = cheapest_envelope(c)
    assert list(env.order) == sorted(set(env.order))            # each option once, slower ones later
    assert all(b > a for a, b in zip(env.switch_s, env.switch_s[1:]))
    assert env.order[-1] == len(tiers)                          # recompute wins in the end (it never grows)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(1e9, 1e14), st.floats(1e6, 1e13), st.floats(1e-3, 1e2)), min_size=1,
                max_size=5), st.floats(1e2, 1e7), st.floats(1e-12, 1e-3))
def test_any_tiers_the_cheapest_options_hold_rate_never_rises(specs, kv, recompute):
    # Whatever the tiers, the cheapest of straight lines a + b·t has a slope b that only falls with t.
    tiers = [Tier(f"t{i}", cap, bw, usd) for i, (cap, bw, usd) in enumerate(specs)]
    hold = np.geomspace(1e-4, 1e9, 400)
    c = cache_tier_costs(tiers, kv, recompute, hold)
    slope = np.append(c.hold_usd_per_s, 0.0)[c.cheapest]
    assert np.all(np.diff(slope) <= 1e-12 * slope[:-1])
    assert np.all(c.cheapest_usd <= recompute * (1 + 1e-12))


# ---------------------------------------------------------------- bad input

def test_bad_tiers_and_inputs_raise():
    with pytest.raises(ValueError, match="medium"):
        Tier("x", 1e12, 1e9, 1.0, "tape")
    with pytest.raises(ValueError, match="capacity_bytes"):
        Tier("x", -1.0, 1e9, 1.0)
    ddr = default_tiers()[0]
    with pytest.raises(ValueError, match="at least one"):
        cache_tier_costs([], KV70, 1e-7, 1.0)
    with pytest.raises(ValueError, match="KV bytes"):
        cache_tier_costs([ddr], 0.0, 1e-7, 1.0)
    with pytest.raises(ValueError, match="hold times"):
        cache_tier_costs([ddr], KV70, 1e-7, [-1.0])
    with pytest.raises(ValueError, match="hold times"):
        cache_tier_costs([ddr], KV70, 1e-7, [np.nan])


# ---------------------------------------------------------------- the hit rate and list prices

def test_request_with_cache_adds_the_hold_cost_to_the_roofline_request():
    s = h100_llama70()
    h = np.array([0.0, 0.5, 0.9])
    c_tok = 3.643e-10                                  # flash at 5 min, per token (above)
    r = request_with_cache(s, 8192.0, 1000.0, h, c_tok, batch=64.0)
    plain = request(s, 8192.0, 1000.0, batch=64.0, prefill_batch=64.0, cache_hit_rate=h)
    assert np.allclose(r.usd_prefill, plain.usd_prefill) and np.allclose(r.usd_decode, plain.usd_decode)
    assert np.allclose(r.usd_cache, h * 8192 * c_tok)               # h·L tokens held and read back
    assert np.allclose(r.usd_total, plain.usd_total + h * 8192 * c_tok)
    assert r.usd_cache[0] == 0.0 and np.all(np.diff(r.usd_total) < 0)   # cheap holding: hits save money
    # At an absurd holding price hits cost more than they save.
    dear = request_with_cache(s, 8192.0, 1000.0, h, 1e-3, batch=64.0)
    assert np.all(np.diff(dear.usd_total) > 0)


def test_list_price_of_a_request_by_hand():
    opus = presets.get("price", "claude-opus-4.6")     # $5 in, $25 out, $0.50 cache hit (2026-04)
    # L = 100k, O = 1k, h = 0.9: (0.1·1e5·5 + 0.9·1e5·0.5 + 1e3·25) / 1e6 = 0.12 USD; h = 0: 0.525 USD.
    assert float(list_price_request(opus, 1e5, 1e3, 0.9)) == pytest.approx(0.12)
    assert float(list_price_request(opus, 1e5, 1e3, 0.0)) == pytest.approx(0.525)


def test_what_providers_charge_to_hold_a_cached_token():
    t = np.array([60.0, 300.0, 301.0, 3600.0, 3601.0])
    opus, _ = list_cache_usd_per_mtok(presets.get("price", "claude-opus-4.6"), t)
    # Anthropic: (6.25 − 5) + 0.5 = $1.75 up to 5 min; (10 − 5) + 0.5 = $5.50 up to 1 h; no longer lifetime sold.
    assert opus[:4] == pytest.approx([1.75, 1.75, 5.5, 5.5]) and np.isnan(opus[4])
    gem, how = list_cache_usd_per_mtok(presets.get("price", "gemini-2.5-pro"), t)
    # Gemini 2.5 Pro: $0.125 read + $4.50 per Mtok-hour of storage: $4.625 for an hour.
    assert gem[3] == pytest.approx(0.125 + 4.5) and gem[0] == pytest.approx(0.125 + 4.5 / 60) and "storage" in how
    gpt, how = list_cache_usd_per_mtok(presets.get("price", "gpt-5"), t)
    assert np.allclose(gpt, 0.125) and "not priced" in how


# ---------------------------------------------------------------- hand-over time of each neighbouring pair

def test_neighbour_handover_of_round_tiers_by_hand():
    # A: 100 B at 10 B/s, B: 1,000 B at 1 B/s, both $3,600/h = $1/s; kv = 1 B; recompute $5.
    # a_A = 1/10 = 0.1, b_A = 1/100 = 0.01; a_B = 1/1 = 1, b_B = 1/1000 = 0.001 (USD, USD/s).
    # A → B: (1 − 0.1)/(0.01 − 0.001) = 100 s;  B → recompute: (5 − 1)/(0.001 − 0) = 4,000 s.
    a, b = Tier("A", 100.0, 10.0, 3600.0), Tier("B", 1000.0, 1.0, 3600.0)
    c = cache_tier_costs([a, b], 1.0, 5.0, np.array([1.0]))
    assert neighbour_handover_s(c) == pytest.approx([100.0, 4000.0], rel=1e-12)
    # kv cancels in t×: the same hold times at 1 MB per token with recompute scaled alike.
    c6 = cache_tier_costs([a, b], 1e6, 5e6, np.array([1.0]))
    assert neighbour_handover_s(c6) == pytest.approx([100.0, 4000.0], rel=1e-12)


def test_neighbour_handover_never_and_at_once():
    # B flatter-or-equal hold rate but dearer read-back than A never gets cheaper: inf.
    a, b = Tier("A", 100.0, 10.0, 3600.0), Tier("B", 100.0, 1.0, 3600.0)       # b_A = b_B, a_B > a_A
    c = cache_tier_costs([a, b], 1.0, 50.0, np.array([1.0]))
    assert np.isinf(neighbour_handover_s(c)[0])
    # A recompute cheaper than A's read-back is cheaper from t = 0: 0 s.
    c0 = cache_tier_costs([a], 1.0, 0.01, np.array([1.0]))
    assert neighbour_handover_s(c0)[0] == 0.0


def test_neighbour_handover_of_h100_and_the_default_tiers_by_hand():
    # kv and 1/3600 cancel, so with p in $/h, cap in B, bw in B/s:
    # HBM → DDR: (0.22/576e9) / (2.95/80e9 − 0.22/1.536e12) = 3.8194e-13 / 3.6732e-11 = 0.010398 s
    #   — below HBM's drain time 80e9/3.35e12 = 23.9 ms (the lecture's rule of thumb puts it at or above).
    # DDR → flash: (0.044/14e9 − 0.22/576e9) / (0.22/1.536e12 − 0.044/15.36e12)
    #   = (3.142857e-12 − 3.819444e-13) / (1.432292e-13 − 2.864583e-15) = 2.760913e-12 / 1.403646e-13 = 19.670 s
    ddr, flash, disk = default_tiers()
    hbm = hbm_tier(presets.get("hardware", "h100"))
    c = cache_tier_costs([hbm, ddr, flash, disk], KV70, 1.0, np.array([1.0]))
    t = neighbour_handover_s(c)
    assert t[0] == pytest.approx(0.010398, rel=1e-4)
    assert t[0] < hbm.drain_s == pytest.approx(0.023881, rel=1e-4)
    assert t[1] == pytest.approx(19.670, rel=1e-4)
    assert ddr.drain_s < t[1] < flash.drain_s


def test_neighbour_handover_equals_the_envelope_when_every_option_is_on_it():
    ddr, flash, disk = default_tiers()
    s = h100_llama70()
    c = cache_tier_costs([hbm_tier(s.hardware), ddr, flash, disk], KV70, float(recompute_cost(s)), np.array([1.0]))
    env = cheapest_envelope(c)
    assert env.order == (0, 1, 2, 3, 4)
    assert neighbour_handover_s(c) == pytest.approx(env.switch_s, rel=1e-12)
