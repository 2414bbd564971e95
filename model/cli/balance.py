"""`balance`: the balance batch B*, the context past which decode stays memory-bound, the HBM drain time."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..roofline import context_never_compute_bound, hbm_drain_time, system_balance_batch
from .common import KV, CLIError, Path, Uses, build_system, missing_reason, null_missing, number, system_summary
from .output import header, kv_lines

HELP = "balance batch B*, context where decode stays memory-bound, HBM drain time"
SYSTEM = True

_DRAIN = Uses("--hbm-bytes", ("hbm_drain_s",))
PATHS = (Path("balance", ("--flops", "--hbm-bw", "--total-params"),
              (Uses(KV, ("context_never_compute_bound",)), _DRAIN)),)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--context", type=number("--context", 0), default=0.0)


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0].at_context(a.context)


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    path = path_of(a)
    s = build_system(a, path.system_needs())
    try:
        b_star = float(system_balance_batch(s, a.context))
    except ValueError as e:
        raise CLIError(f"--context {a.context:g}: {e}") from None
    try:
        t_never = context_never_compute_bound(s)
    except ValueError:  # no KV figure: only the no-KV answers exist
        t_never = math.nan
    data: dict[str, Any] = {
        "inputs": system_summary(s, a), "context": a.context,
        "flops_per_byte": s.flops / s.hbm_bandwidth, "sparsity": a.model_spec.sparsity,
        "batch_balance": b_star if math.isfinite(b_star) else None,
        "context_never_compute_bound": t_never if math.isfinite(t_never) else None,
        "hbm_drain_s": float(hbm_drain_time(s.hardware.hbm_bytes, s.hardware.hbm_bandwidth_bytes_per_s)),
    }
    reasons = []
    if not math.isfinite(b_star):
        reasons.append(f"at context {a.context:g} the KV fetch alone outweighs the matmuls: decode is "
                       "memory-bound at every batch")
    if math.isnan(t_never):
        reasons.append(missing_reason("kv_bytes_per_token", "context_never_compute_bound"))
    reasons += null_missing(data, a, [_DRAIN])
    if reasons:
        data["reason"] = "; ".join(reasons)
    text = kv_lines([
        ("FLOP/s ÷ HBM B/s", data["flops_per_byte"]), ("sparsity (total/active)", data["sparsity"]),
        ("balance batch B*", data["batch_balance"] if data["batch_balance"] else "none (memory-bound)"),
        ("context never compute-bound [tokens]", data["context_never_compute_bound"]),
        ("HBM drain time [ms]", None if data["hbm_drain_s"] is None else data["hbm_drain_s"] * 1e3)])
    return data, header(data["inputs"]) + f"\ncontext {a.context:g} tokens\n\n" + text
