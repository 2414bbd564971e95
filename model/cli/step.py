"""`step`: the decode step's terms, speed, cost and fit for each (batch, context) pair."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..cluster import LAYOUTS, layout_comm_time
from ..roofline import chunked_prefill, decode_step
from .common import CLIError, Path, Uses, build_system, null_missing, number, number_list, system_summary, traffic_list
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
    p.add_argument("--layout", choices=LAYOUTS, default="none",
                   help="the communication the step pays over its C chips: tp, two ring all-reduces of the "
                        "step's activations per layer (needs --d-model, --layers, --scaleup-bw); ep, the MoE "
                        "all-to-all per MoE layer, over scale-out past --domain; none (default), no such term")
    p.add_argument("--link-latency", type=number("--link-latency", 0), default=0.0,
                   help="seconds per ring hop of a tp all-reduce (default 0: bandwidth only)")
    p.add_argument("--chunked-prefill", type=traffic_list("--chunked-prefill"), metavar="I:O[:SHARE],…",
                   help="aggregated serving: each sequence's I-token prompt is prefilled in chunks inside the "
                        "decode steps of its O output tokens (per sequence per step: I/O prompt tokens' "
                        "matmuls, attention and KV writes); a mix of classes with shares of requests")
    p.add_argument("--predicted", action="store_true",
                   help="the fitted efficiency model's step (docs/prediction.md): each kind of FLOP at its fitted "
                        "efficiency, HBM at the fitted bandwidth efficiency, plus the fitted time per layer of "
                        "steps with prompt work; --mfu, --bw-util and --mode are then not read")


_LAYOUT_FIGURES = (("scale-up bandwidth", "--scaleup-bw"), ("scale-out bandwidth", "--scaleout-bw"),
                   ("d_model and n_layers", "--d-model and --layers"),
                   ("MoE layer count", "--d-model and --moe-layers"),
                   ("no routed experts", "--experts and --experts-per-token"),
                   ("leaves the scale-up domain", "--domain of at least --chips"))


def layout_error(layout: str, e: ValueError) -> CLIError:
    """A layout's missing figure, worded with the flag that gives it."""
    msg = str(e)
    hint = next((f" (give {flags})" for key, flags in _LAYOUT_FIGURES if key in msg), "")
    return CLIError(f"--layout {layout}: {msg}{hint}")


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
        pf = None if a.chunked_prefill is None else chunked_prefill(s, *zip(*a.chunked_prefill))
    except ValueError as e:
        raise CLIError(f"--chunked-prefill: {e}") from None
    try:
        t_comm = layout_comm_time(s, b if pf is None else pf.tokens(b), a.layout, link_latency_s=a.link_latency)
    except ValueError as e:
        raise layout_error(a.layout, e) from None
    if a.predicted:
        return _predicted(a, s, b, t, t_comm, pf, path)
    try:
        r = decode_step(s, b, t, t_comm=t_comm, prefill=pf)
    except ValueError as e:
        raise CLIError(str(e)) from None
    summary = system_summary(s, a)
    if a.layout != "none":
        summary.update(layout=a.layout, link_latency_s=a.link_latency)
    if pf is not None:
        summary["chunked_prefill"] = [{"input_tokens": i, "output_tokens": o, "share": w}
                                      for i, o, w in a.chunked_prefill]
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
    extra = "".join(
        [f"\ncommunication: {a.layout} over C = {s.deployment.chips:g} chips" if a.layout != "none" else "",
         "\nchunked prefill: " + ", ".join(f"{i:g}:{o:g} ({w:.0%})" for i, o, w in a.chunked_prefill)
         if pf is not None else ""])
    return data, header(summary) + extra + "\n\n" + text + "".join(f"\nnote: {r}" for r in reasons)


PREDICTED_KEYS = ("batch", "context", "t_dense_s", "t_expert_s", "t_attn_s", "t_weights_s", "t_kv_s", "t_comm_s",
                  "t_fixed_s", "t_step_s", "bound", "tokens_per_s_per_user", "tokens_per_s_per_chip", "usd_per_mtok",
                  "hbm_bytes_per_chip", "fits")


def _predicted(a: argparse.Namespace, s, b, t, t_comm, pf, path: Path) -> tuple[dict[str, Any], str]:
    """`step --predicted`: calibrate.predict_decode_step at every (batch, context), with the fitted terms."""
    from .. import calibrate

    fit = calibrate.built_in_fit()
    lam = 0.0
    if pf is not None:
        shares = np.array([w for _, _, w in a.chunked_prefill], float)
        outs = np.array([o for _, o, _ in a.chunked_prefill], float)
        lam = s.deployment.tokens_per_step * float(shares.sum() / np.dot(shares, outs))
    try:
        r = calibrate.predict_decode_step(s, b, t, fit.efficiency, t_comm=t_comm, prefill=pf, prompt_rate=lam)
    except ValueError as e:
        raise CLIError(str(e)) from None
    cols = {k: np.ravel(np.broadcast_to(r[k], np.broadcast(b, t).shape)) for k in PREDICTED_KEYS}
    rows = [{k: cols[k][i].item() for k in PREDICTED_KEYS} for i in range(cols["batch"].size)]
    summary = system_summary(s, a)
    summary["efficiency"] = {"source": "predicted", "measurements": fit.n, **fit.efficiency.as_dict()}
    if a.layout != "none":
        summary.update(layout=a.layout, link_latency_s=a.link_latency)
    if pf is not None:
        summary["chunked_prefill"] = [{"input_tokens": i, "output_tokens": o, "share": w}
                                      for i, o, w in a.chunked_prefill]
    data = {"inputs": summary, "rows": rows}
    reasons = null_missing(data, a, path.uses)
    if reasons:
        data["reason"] = "; ".join(reasons)
    e = fit.efficiency
    text = table(
        ["batch", "context", "t_step ms", "compute ms", "memory ms", "comm ms", "fixed ms", "bound", "tok/s/user",
         "tok/s/chip", "$/Mtok", "HBM/chip GB", "fits"],
        [[x["batch"], x["context"], x["t_step_s"] * 1e3, (x["t_dense_s"] + x["t_expert_s"] + x["t_attn_s"]) * 1e3,
          (x["t_weights_s"] + x["t_kv_s"]) * 1e3, x["t_comm_s"] * 1e3, x["t_fixed_s"] * 1e3, x["bound"],
          x["tokens_per_s_per_user"], x["tokens_per_s_per_chip"], x["usd_per_mtok"], x["hbm_bytes_per_chip"] / 1e9,
          x["fits"]] for x in data["rows"]])
    terms = [f"HBM bandwidth {e.bandwidth:.3g}", f"dense compute {e.compute:.3g}", calibrate.expert_phrase(e, s.model),
             calibrate.attention_phrase(e, s.hardware, s.precision.compute),
             f"{e.prompt_layer_s * 1e3:.3g} ms per layer of a step with prompt work"]
    head = (f"\npredicted: the efficiency model fitted to {fit.n} published measurements — "
            + ", ".join(t for t in terms if t))
    return data, header(summary) + head + "\n\n" + text + "".join(f"\nnote: {r}" for r in reasons)
