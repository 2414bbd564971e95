"""`kv-from-price`: the KV bytes per token that a long-context price tier implies (lecture §2.5)."""

from __future__ import annotations

import argparse
from typing import Any

from .. import economics
from .common import Path, build_system, number, unsourced
from .output import kv_lines, unsourced_note

HELP = "KV bytes per token implied by a long-context price tier"
SYSTEM = True

# kv = 2·Na·bw / (F·T): the active parameters only (a dense model's --total-params stands in for them).
PATHS = (Path("crossover", ("--flops", "--hbm-bw", "--active-params", "--crossover-context")),)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--crossover-context", type=number("--crossover-context", 0, lo_open=True), required=True)


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0]


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    s = build_system(a, path_of(a).system_needs())
    kv = float(economics.kv_bytes_from_crossover(s.model.active_params, s.flops, s.hbm_bandwidth,
                                                 a.crossover_context))
    data = {"active_params": s.model.active_params, "flops_per_s": s.flops, "compute_dtype": s.precision.compute,
            "hbm_bandwidth_bytes_per_s": s.hbm_bandwidth, "flops_per_byte": s.flops / s.hbm_bandwidth,
            "crossover_context": a.crossover_context, "kv_bytes_per_token": kv,
            "note": f"bytes of KV per token at the precision whose FLOP/s were used ({s.precision.compute})",
            "unsourced": unsourced(s, a)}
    text = kv_lines([("active params", data["active_params"]), ("FLOP/s ÷ HBM B/s", data["flops_per_byte"]),
                     ("crossover context [tokens]", a.crossover_context),
                     ("implied KV bytes per token", kv)]) + f"\n({data['note']})"
    if data["unsourced"]:
        text += "\n" + unsourced_note(data["unsourced"])
    return data, text
