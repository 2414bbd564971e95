"""`cache-tier`: the cost per token of holding KV for a time in HBM, DDR, flash or disk, or of
recomputing it, and the cheapest (lecture §2.7)."""

from __future__ import annotations

import argparse
from typing import Any

from .. import economics, presets
from .common import (
    KV,
    CLIError,
    Path,
    Uses,
    build_system,
    null_missing,
    number,
    problems,
    read_capped,
    system_summary,
)
from .output import fmt, header, table

HELP = "cost per token of holding KV for a time in HBM, DDR, flash or disk, or of recomputing it; the cheapest"
SYSTEM = True

# HBM's hold cost is its share of the chip's capacity at the chip's price; recomputing costs 2·Na
# FLOPs per token at the chip's FLOP/s and price.  HBM's own retrieve cost is 0 whatever its bandwidth.
PATHS = (Path("hold", ("--flops", "--hbm-bytes", "--price-per-hour", "--active-params", KV, "--hold-seconds"),
              (Uses("--hbm-bw", ("tiers.0.bandwidth_bytes_per_s", "tiers.0.drain_s"),
                    "the HBM row's bandwidth and drain time"),)),)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hold-seconds", type=number("--hold-seconds", 0, lo_open=True), required=True,
                   help="how long the prompt's KV waits for its next use [s]")
    p.add_argument("--tiers", metavar="FILE", help="YAML/JSON tier file (default: the built-in DDR, flash and "
                   "disk tiers); HBM always comes from the chip")


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0]


def load_tiers(path: str | None) -> list[tuple[str, economics.Tier]]:
    """The built-in DDR/flash/disk tiers, or every tier of a YAML/JSON tier file (`--tiers`)."""
    try:
        if path is None:
            items = presets.load("tier")
        else:
            items = presets.parse_text(read_capped("--tiers", path), "tier",
                                       require_sources=False)    # a user's file: sources optional
    except presets.PresetError as e:
        raise CLIError(f"--tiers {path}: {problems(e)}") from None
    except OSError as e:
        raise CLIError(f"--tiers: cannot read the built-in tier presets ({e.strerror}: {e.filename})") from None
    return list(items.items())


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    path = path_of(a)
    s = build_system(a, path.system_needs())
    try:
        kv = s.kv.bytes_per_token
    except ValueError as e:
        raise CLIError(f"--kv-bytes-per-token: {e}") from None
    if not kv > 0:
        raise CLIError("--kv-bytes-per-token: the KV bytes per token must be > 0 to hold anything")
    keyed = [("hbm", economics.hbm_tier(s.hardware)), *load_tiers(a.tiers)]
    tiers = [t for _, t in keyed]
    rec = float(economics.recompute_cost(s))
    try:
        c = economics.cache_tier_costs(tiers, kv, rec, a.hold_seconds)
    except ValueError as e:
        raise CLIError(f"cache-tier: {e}") from None
    env = economics.cheapest_envelope(c)
    keys = [k for k, _ in keyed] + ["recompute"]
    k_best = int(c.cheapest)
    k_tier = int(c.cheapest_tier)
    rows = [{"key": k, "name": t.name, "medium": t.medium, "capacity_bytes": t.capacity_bytes,
             "bandwidth_bytes_per_s": t.bandwidth_bytes_per_s, "usd_per_hour": t.usd_per_hour, "drain_s": t.drain_s,
             "hold_usd_per_token": float(c.hold_usd_per_s[i]) * a.hold_seconds,
             "retrieve_usd_per_token": float(c.retrieve_usd[i]), "usd_per_token": float(c.tier_usd[i]),
             "usd_per_mtok": float(c.tier_usd[i]) * 1e6,
             "uncertain": presets.uncertain_fields(t), "unsourced": presets.unsourced_fields(t)}
            for i, (k, t) in enumerate(keyed)]
    data = {"inputs": system_summary(s, a), "hold_seconds": a.hold_seconds, "kv_bytes_per_token": kv,
            "tiers": rows, "recompute_usd_per_token": rec, "recompute_usd_per_mtok": rec * 1e6,
            "cheapest": keys[k_best], "cheapest_name": c.names[k_best],
            "cheapest_usd_per_token": float(c.cheapest_usd), "cheapest_usd_per_mtok": float(c.cheapest_usd) * 1e6,
            "cheapest_tier": keys[k_tier],
            "switches": [{"hold_s": t, "from": keys[i], "to": keys[j]}
                         for t, i, j in zip(env.switch_s, env.order, env.order[1:])]}
    reasons = null_missing(data, a, path.uses)
    if reasons:
        data["reason"] = "; ".join(reasons)
    text = table(["tier", "drain s", "hold $/Mtok", "retrieve $/Mtok", "total $/Mtok", ""],
                 [[r["key"], r["drain_s"], r["hold_usd_per_token"] * 1e6, r["retrieve_usd_per_token"] * 1e6,
                   r["usd_per_mtok"], "← cheapest" if r["key"] == keys[k_best] else ""] for r in rows]
                 + [["recompute", None, None, None, rec * 1e6, "← cheapest" if k_best == len(tiers) else ""]])
    hand = "; ".join(f"{d['from']} → {d['to']} at {fmt(d['hold_s'])} s" for d in data["switches"])
    bare = [f"{r['key']}.{f}" for r in rows for f in r["unsourced"]]
    if bare:
        hand += "\nnote: unsourced numbers (your own --tiers file gives no source or date for them): " + ", ".join(bare)
    return data, (header(data["inputs"]) + f"\nKV {fmt(kv)} B/token held for {fmt(a.hold_seconds)} s, then read "
                  f"back (per million tokens)\n\n{text}\n\ncheapest option changes: {hand or 'never'}")
