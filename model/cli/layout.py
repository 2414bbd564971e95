"""`layout`: MoE experts over G GPUs — experts per GPU, all-to-all bytes and time per step (lecture §2.9)."""

from __future__ import annotations

import argparse
from typing import Any

from .. import cluster
from ..roofline import decode_step
from .common import CLIError, Path, Uses, build_system, null_missing, number, system_summary
from .output import header, kv_lines

HELP = "MoE experts over G GPUs: experts per GPU, all-to-all bytes and time per step"
SYSTEM = True

# The step (t_step, bound) and the all-to-all's bytes (k · d · L_moe per token); --layers stands in
# for --moe-layers on a model whose every layer is MoE.
_CORE = ("--flops", "--hbm-bw", "--total-params", "--experts", "--experts-per-token", "--d-model", "--moe-layers")
_USES = (Uses("--price-per-hour", ("usd_per_mtok",)),)
PATHS = (Path("one GPU", _CORE, _USES),                                            # no all-to-all traffic
         Path("within a domain", (*_CORE, "--scaleup-bw"), _USES),
         Path("across domains", (*_CORE, "--scaleup-bw", "--scaleout-bw"), _USES))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=number("--batch", 1), default=1.0)
    p.add_argument("--context", type=number("--context", 0), default=0.0)
    p.add_argument("--gpus", type=number("--gpus", 1, integer=True), help="GPUs the expert layer spans (default: C)")
    p.add_argument("--activation-bytes", type=number("--activation-bytes", 0, lo_open=True), default=2.0,
                   help="bytes per dispatched activation element (default 2, bf16)")


def path_for(gpus: float, domain: float, context: float) -> Path:
    """The path of G GPUs over scale-up domains of D chips at a context."""
    return (PATHS[0] if gpus <= 1 else PATHS[1] if gpus <= domain else PATHS[2]).at_context(context)


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    s = build_system(a, PATHS[0].system_needs(), batch=a.batch, context=a.context)
    m = s.model
    if not m.is_moe:
        raise CLIError("layout: the model has no routed experts (give --experts and --experts-per-token, "
                       "or an MoE model preset)")
    if not m.experts_per_token:
        raise CLIError("layout: the model's experts per token k is unknown (give --experts-per-token)")
    if m.d_model is None:
        raise CLIError("layout: the model's d_model is unknown (give --d-model, or an MoE model preset or file)")
    if cluster.moe_layer_count(m) is None:
        raise CLIError("layout: the model's MoE layer count is unknown (give --moe-layers or --layers)")
    gpus = a.gpus if a.gpus is not None else s.deployment.chips
    if a.gpus is not None:
        a.chips = a.gpus  # reported as given, not auto
    s = s.with_(chips=gpus)
    hw = s.hardware
    domain = hw.scaleup_domain_chips
    path = path_for(gpus, domain, a.context)
    try:
        at = cluster.moe_alltoall(s, a.batch, activation_bytes=a.activation_bytes, domain=int(domain))
        r = decode_step(s, a.batch, a.context, t_comm=at.t_comm_s)
    except ValueError as e:
        msg = str(e)
        if "scale-up bandwidth" in msg:
            msg += " (give --scaleup-bw)"
        elif "scale-out bandwidth" in msg:
            msg += " (give --scaleout-bw, or keep --gpus within --domain)"
        raise CLIError(f"layout: {msg}") from None
    data = {
        "inputs": system_summary(s, a), "batch": a.batch, "context": a.context, "gpus": gpus,
        "domain": domain, "experts": m.n_experts, "experts_per_token": m.experts_per_token,
        "experts_per_gpu": float(cluster.experts_per_gpu(m.n_experts, gpus)),
        "expected_distinct_experts": float(cluster.expected_distinct_experts(m.n_experts, m.experts_per_token,
                                                                              a.batch)),
        "alltoall_bytes_per_token": cluster.alltoall_bytes_per_token(m, a.activation_bytes),
        "alltoall_bytes_per_step": float(at.bytes_per_step), "alltoall_bytes_per_gpu": float(at.bytes_per_gpu),
        "share_scaleup": float(at.share_scaleup), "share_scaleout": float(at.share_scaleout),
        "domains_spanned": float(at.domains), "t_scaleup_s": float(at.t_scaleup_s),
        "t_scaleout_s": float(at.t_scaleout_s), "t_comm_s": float(at.t_comm_s),
        "t_step_s": float(r.t_step_s), "bound": str(r.bound), "usd_per_mtok": float(r.usd_per_mtok),
    }
    reasons = null_missing(data, a, path.uses)
    if reasons:
        data["reason"] = "; ".join(reasons)
    text = kv_lines([
        ("experts per GPU", data["experts_per_gpu"]),
        ("distinct experts touched per layer", data["expected_distinct_experts"]),
        ("all-to-all bytes per step", data["alltoall_bytes_per_step"]), ("… per GPU", data["alltoall_bytes_per_gpu"]),
        ("share over scale-out", data["share_scaleout"]), ("t scale-up [ms]", data["t_scaleup_s"] * 1e3),
        ("t scale-out [ms]", data["t_scaleout_s"] * 1e3), ("t_comm [ms]", data["t_comm_s"] * 1e3),
        ("step with t_comm [ms]", data["t_step_s"] * 1e3), ("bound", data["bound"]),
        ("$/Mtok", data["usd_per_mtok"])]) + (f"\nnote: {data['reason']}" if data.get("reason") else "")
    return data, header(data["inputs"]) + f"\nB = {a.batch:g}, T = {a.context:g}, G = {gpus:g} GPUs, " \
        f"domain {domain:g}\n\n" + text
