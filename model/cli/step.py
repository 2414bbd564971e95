"""`step`: the decode step's terms, speed, cost and fit for each (batch, context) pair."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..roofline import decode_step
from .common import CLIError, Path, Uses, build_system, null_missing, number_list, system_summary
from .output import header, table

HELP = "decode-step terms, speed, cost and fit for each (batch, context)"
SYSTEM = True
MAX_ROWS = 100_000   # one row per (batch, context) pair

PATHS = (Path("step", ("--flops", "--hbm-bw", "--total-params"),
              (Uses("--price-per-hour", ("rows.*.usd_per_mtok",), "usd_per_mtok"),
               Uses("--hbm-bytes", ("rows.*.fits",), "fits (weights + KV within HBM)"))),)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=number_list("--batch", 1), default=[1.0], help="e.g. 1,8,64 (≥ 1)")
    p.add_argument("--context", type=number_list("--context", 0), default=[0.0], help="tokens, e.g. 0,8192")


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0].at_context(max(a.context))


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    if len(a.batch) * len(a.context) > MAX_ROWS:  # one row per (batch, context): 10⁴ × 10⁴ would take hours
        raise CLIError(f"--batch × --context: {len(a.batch):,} × {len(a.context):,} rows; at most "
                       f"{MAX_ROWS:,} (batch, context) pairs")
    path = path_of(a)
    s = build_system(a, path.system_needs(), batch=max(a.batch), context=max(a.context))
    b = np.asarray(a.batch, float)[:, None]
    t = np.asarray(a.context, float)[None, :]
    try:
        r = decode_step(s, b, t)
    except ValueError as e:
        raise CLIError(str(e)) from None
    summary = system_summary(s, a)
    data = {"inputs": summary, "rows": r.rows()}
    reasons = null_missing(data, a, path.uses)
    if reasons:
        data["reason"] = "; ".join(reasons)
    rows = data["rows"]
    text = table(
        ["batch", "context", "t_step ms", "matmul ms", "weights ms", "kv ms", "bound", "tok/s/user",
         "tok/s/chip", "$/Mtok", "HBM/chip GB", "fits"],
        [[x["batch"], x["context"], x["t_step_s"] * 1e3, x["t_matmul_s"] * 1e3, x["t_weights_s"] * 1e3,
          x["t_kv_s"] * 1e3, x["bound"], x["tokens_per_s_per_user"], x["tokens_per_s_per_chip"],
          x["usd_per_mtok"], x["hbm_bytes_per_chip"] / 1e9, x["fits"]] for x in rows])
    return data, header(summary) + "\n\n" + text + "".join(f"\nnote: {r}" for r in reasons)
