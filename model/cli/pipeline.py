"""`pipeline`: weights and KV per chip, latency and the cut check against pipeline stages (lecture §1.6, §1.8)."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .. import cluster
from .common import CLIError, Path, Uses, build_system, null_missing, number, number_list, system_summary
from .output import header, table

HELP = "weights and KV per chip, latency and cut check against pipeline stages"
SYSTEM = True

# The cut check compares the two links (and holds the MoE shape: a dense model has no all-to-all,
# so no cut check; its per-row reason says so).
PATHS = (Path("stages", ("--flops", "--hbm-bw", "--total-params"),
              (Uses("--hbm-bytes", ("rows.*.fits",)), Uses("--scaleup-bw", ("rows.*.cut_ratio",)),
               Uses("--scaleout-bw", ("rows.*.cut_ratio",)))),)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stages", type=number_list("--stages", 1, integer=True), default=[1.0, 2.0, 4.0, 8.0],
                   help="e.g. 1,2,4,8")
    p.add_argument("--micro-batch", type=number("--micro-batch", 1), default=1.0,
                   help="sequences per micro-batch b (P micro-batches in flight)")
    p.add_argument("--micro-batches", type=number("--micro-batches", 1, integer=True),
                   help="training micro-batches for the bubble (default: P)")
    p.add_argument("--context", type=number("--context", 0), default=0.0)


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0].at_context(a.context)


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    path = path_of(a)
    s = build_system(a, path.system_needs(), batch=a.micro_batch, context=a.context)
    P = np.asarray(a.stages, float)
    try:
        pm = cluster.pipeline(s, a.micro_batch, a.context, P)
    except ValueError as e:
        raise CLIError(f"pipeline: {e}") from None
    hw, m = s.hardware, s.model
    cut = cluster.pipeline_cut_check(m, hw.scaleup_bandwidth_bytes_per_s, hw.scaleout_bandwidth_bytes_per_s, P)
    rows = []
    for i, p in enumerate(a.stages):
        row = {"stages": int(p), "weight_bytes_per_chip": float(pm.weight_bytes_per_chip[i]),
               "kv_bytes_per_chip": float(pm.kv_bytes_per_chip[i]),
               "hbm_bytes_per_chip": float(pm.total_bytes_per_chip[i]),
               "fits": bool(pm.total_bytes_per_chip[i] <= hw.hbm_bytes),
               "latency_s": float(pm.latency_s[i]),
               "tokens_per_s": float(pm.tokens_per_s[i]),
               "training_bubble": float(cluster.training_bubble_fraction(p, a.micro_batches or p))}
        row["moe_layers_per_stage"] = float(cut.moe_layers_per_stage[i])
        row["cut_ratio"] = float(cut.ratio[i])                  # NaN → null, with the reason
        if cut.reason[i]:
            row["cut_reason"] = cut.reason[i]
        rows.append(row)
    data = {"inputs": system_summary(s, a), "micro_batch": a.micro_batch, "context": a.context,
            "rows": rows}
    # The links' outputs carry their own reason (cut_reason); the hardware figures' reasons go on top.
    reasons = null_missing(data, a, path.uses)
    if reasons:
        data["reason"] = "; ".join(reasons)
    text = table(["P", "weights/chip GB", "KV/chip GB", "HBM/chip GB", "fits", "latency ms", "tok/s",
                  "cut ratio", "train bubble"],
                 [[r["stages"], r["weight_bytes_per_chip"] / 1e9, r["kv_bytes_per_chip"] / 1e9,
                   r["hbm_bytes_per_chip"] / 1e9, r["fits"], r["latency_s"] * 1e3, r["tokens_per_s"],
                   r.get("cut_ratio"), r["training_bubble"]] for r in rows])
    notes = sorted({r["cut_reason"] for r in rows if r.get("cut_reason")})
    if data.get("reason"):
        notes.append(data["reason"])
    return data, (header(data["inputs"]) + f"\nmicro-batch b = {a.micro_batch:g}, T = {a.context:g}\n\n" + text
                  + "".join(f"\nnote: {n}" for n in notes))
