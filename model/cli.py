"""`python -m model SUBCOMMAND [flags] [--json]` — the same functions the pages call.

Readable tables by default; `--json` prints one JSON object (non-finite values are null, with a
`reason` where it helps).  Bad input exits 2 with one line on stderr naming the flag and the
allowed range — never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields
from typing import Any

import numpy as np

from . import cluster, economics, presets, training
from .roofline import (
    System,
    auto_chips,
    context_never_compute_bound,
    decode_step,
    hbm_drain_time,
    system_balance_batch,
)
from .specs import (
    COMPUTE_DTYPES,
    DTYPE_BYTES,
    MODES,
    SPARSE_ATTENTION_KINDS,
    Deployment,
    Hardware,
    ModelArch,
    Precision,
)

STEP_MAX_ROWS = 100_000   # `step` prints one row per (batch, context) pair


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        raise CLIError(message)


# ---------------------------------------------------------------- number parsing

def _range_text(lo: float, *, lo_open: bool = False, hi: float = math.inf, integer: bool = False) -> str:
    rng = f"{'>' if lo_open else '≥'} {lo:g}" + ("" if hi == math.inf else f" and ≤ {hi:g}")
    return f"{'an integer' if integer else 'a number'} {rng}"


def _number(flag: str, lo: float, *, lo_open: bool = False, hi: float = math.inf,
            integer: bool = False) -> Callable[[str], float]:
    allowed = _range_text(lo, lo_open=lo_open, hi=hi, integer=integer)

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise CLIError(f"{flag}: {text!r} is not a number; allowed: {allowed}") from None
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi
        if ok and integer and v != int(v):
            ok = False
        if not ok:
            raise CLIError(f"{flag}: {text} is out of range; allowed: {allowed}")
        return int(v) if integer else v
    return parse


def _number_list(flag: str, lo: float, **kw: Any) -> Callable[[str], list[float]]:
    one = _number(flag, lo, **kw)
    allowed = _range_text(lo, **kw)

    def parse(text: str) -> list[float]:
        parts = [p.strip() for p in text.split(",")]
        if any(p == "" for p in parts):
            raise CLIError(f"{flag}: {text!r} has an empty element; allowed: comma-separated values, "
                           f"each {allowed}")
        if len(parts) > 10_000:
            raise CLIError(f"{flag}: at most 10,000 values")
        return [one(p) for p in parts]
    return parse


# ---------------------------------------------------------------- shared flags → System

def _add_system_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("hardware (a preset or file, overridden by any flag)")
    g.add_argument("--hardware", metavar="NAME|FILE", help="chip preset key or YAML/JSON file")
    g.add_argument("--flops", type=_number("--flops", 0, lo_open=True), help="FLOP/s per chip, used as is")
    g.add_argument("--compute-dtype", choices=COMPUTE_DTYPES, default="bf16",
                   help="picks the preset's FLOP/s when --flops is absent (default bf16)")
    g.add_argument("--hbm-bw", type=_number("--hbm-bw", 0, lo_open=True), help="HBM bytes/s per chip")
    g.add_argument("--hbm-bytes", type=_number("--hbm-bytes", 0, lo_open=True), help="HBM bytes per chip")
    g.add_argument("--price-per-hour", type=_number("--price-per-hour", 0, lo_open=True),
                   help="USD per chip-hour")
    g.add_argument("--power", type=_number("--power", 0, lo_open=True), help="W per chip")
    g.add_argument("--scaleup-bw", type=_number("--scaleup-bw", 0, lo_open=True),
                   help="scale-up (NVLink/ICI) bytes/s per chip, one direction")
    g.add_argument("--scaleout-bw", type=_number("--scaleout-bw", 0, lo_open=True),
                   help="scale-out (NIC) bytes/s per chip, one direction")
    g.add_argument("--domain", type=_number("--domain", 1, integer=True),
                   help="scale-up domain size in chips (default: the chip preset's, else 1)")
    g.add_argument("--chips", type=_number("--chips", 1), help="chips working on one step, C (default: the smallest "
                   "power of two whose HBM holds the weights and the KV of the largest --batch at the longest "
                   "--context, up to the scale-up domain — the app's 'auto')")
    m = p.add_argument_group("model (a preset or file, overridden by any flag)")
    m.add_argument("--model", metavar="NAME|FILE", help="model preset key or YAML/JSON file")
    m.add_argument("--total-params", type=_number("--total-params", 0, lo_open=True))
    m.add_argument("--active-params", type=_number("--active-params", 0, lo_open=True))
    m.add_argument("--sparsity", type=_number("--sparsity", 1), help="total/active; sets active params")
    m.add_argument("--weight-dtype", choices=tuple(DTYPE_BYTES), default="bf16")
    m.add_argument("--bytes-per-param", type=_number("--bytes-per-param", 0, lo_open=True),
                   help="default from --weight-dtype (bf16 = 2)")
    m.add_argument("--kv-dtype", choices=tuple(DTYPE_BYTES), default="bf16")
    m.add_argument("--layers", type=_number("--layers", 1, integer=True), help="transformer layers L")
    m.add_argument("--d-model", type=_number("--d-model", 1, integer=True), help="hidden size d")
    m.add_argument("--experts", type=_number("--experts", 1, integer=True), help="routed experts E")
    m.add_argument("--experts-per-token", type=_number("--experts-per-token", 1, integer=True),
                   help="routed experts each token uses, k (top-k)")
    m.add_argument("--moe-layers", type=_number("--moe-layers", 1, integer=True),
                   help="layers with routed experts, L_moe (default: every layer of an MoE model)")
    m.add_argument("--kv-bytes-per-token", type=_number("--kv-bytes-per-token", 0),
                   help="bytes, used as is; otherwise derived from the architecture at --kv-dtype")
    d = p.add_argument_group("deployment")
    d.add_argument("--mode", choices=MODES, default="lecture")
    d.add_argument("--mfu", type=_number("--mfu", 0, lo_open=True, hi=1), default=1.0,
                   help="compute efficiency (default 1: the ideal roofline)")
    d.add_argument("--bw-util", type=_number("--bw-util", 0, lo_open=True, hi=1), default=1.0)
    d.add_argument("--tokens-per-step", type=_number("--tokens-per-step", 1), default=1.0,
                   help="accepted tokens per sequence per step (MTP / speculative decoding)")
    d.add_argument("--pipeline-stages", type=_number("--pipeline-stages", 1, integer=True), default=1)
    d.add_argument("--hop-latency", type=_number("--hop-latency", 0), default=0.0,
                   help="seconds per pipeline hop")
    d.add_argument("--sparse-attention", choices=SPARSE_ATTENTION_KINDS, default="dense")
    d.add_argument("--sparse-param", type=_number("--sparse-param", 0, lo_open=True), default=2048.0,
                   help="sqrt: knee context; topk: tokens read; fraction: share read")


_HW_FLAGS = {"flops": "--flops", "hbm_bandwidth_bytes_per_s": "--hbm-bw", "hbm_bytes": "--hbm-bytes",
             "price_usd_per_hour": "--price-per-hour"}
_HW_ATTRS = {"flops": "flops", "hbm_bandwidth_bytes_per_s": "hbm_bw", "hbm_bytes": "hbm_bytes",
             "price_usd_per_hour": "price_per_hour"}
# Flags that replace a spec field, and the field: error messages name the flag the user typed.
_FIELD_FLAGS = {"hbm_bandwidth_bytes_per_s": "--hbm-bw", "hbm_bytes": "--hbm-bytes",
                "price_usd_per_hour": "--price-per-hour", "power_w": "--power",
                "scaleup_bandwidth_bytes_per_s": "--scaleup-bw", "scaleout_bandwidth_bytes_per_s": "--scaleout-bw",
                "scaleup_domain_chips": "--domain", "total_params": "--total-params",
                "active_params": "--active-params", "n_layers": "--layers", "d_model": "--d-model",
                "n_experts": "--experts", "experts_per_token": "--experts-per-token", "n_moe_layers": "--moe-layers",
                "kv_bytes_per_token": "--kv-bytes-per-token"}
_HW_SET = (("hbm_bandwidth_bytes_per_s", "hbm_bw"), ("hbm_bytes", "hbm_bytes"),
           ("price_usd_per_hour", "price_per_hour"), ("power_w", "power"),
           ("scaleup_bandwidth_bytes_per_s", "scaleup_bw"), ("scaleout_bandwidth_bytes_per_s", "scaleout_bw"),
           ("scaleup_domain_chips", "domain"))
_MODEL_SET = (("n_layers", "layers"), ("d_model", "d_model"), ("n_experts", "experts"),
              ("experts_per_token", "experts_per_token"), ("n_moe_layers", "moe_layers"))


def _load(kind: str, value: str) -> Any:
    flag = "--hardware" if kind == "hardware" else "--model"
    try:
        return presets.load_spec(kind, value)
    except presets.PresetError as e:
        raise CLIError(f"{flag} {value}: {e.problems[0]}"
                       + (f" (and {len(e.problems) - 1} more)" if len(e.problems) > 1 else "")) from None
    except ValueError as e:
        raise CLIError(f"{flag}: {e}") from None
    except OSError as e:  # the built-in preset file itself is missing or unreadable
        raise CLIError(f"{flag} {value}: cannot read the built-in {kind} presets "
                       f"({e.strerror}: {e.filename}); give a YAML/JSON file or the flags instead") from None


def _spec_error(e: ValueError, fallback: str) -> CLIError:
    """A spec's range error, worded with the flag that set the field when there is one."""
    msg = str(e)
    for fld, flag in _FIELD_FLAGS.items():
        if re.search(rf"\.{fld}\b", msg):
            return CLIError(f"{flag}: {msg}")
    return CLIError(f"{fallback}: {msg}")


def _given(a: argparse.Namespace, attr: str) -> bool:
    """True when a hardware field comes from a preset/file or its own flag (not a placeholder)."""
    return bool(a.hardware) or getattr(a, attr) is not None


def missing(a: argparse.Namespace, key: str) -> bool:
    """True when a hardware figure (flops, hbm_bytes, hbm_bandwidth_bytes_per_s, price_usd_per_hour)
    was neither in a preset/file nor given by its flag: outputs that use it are null, with a reason."""
    return key in getattr(a, "missing_hw", ())


def missing_reason(a: argparse.Namespace, key: str, what: str) -> str:
    """'<what> needs <figure> (<flag> or a hardware preset)': the reason beside a null output."""
    return f"{what} needs {_WHAT[key]} ({_HW_FLAGS[key]} or a hardware preset)"


_WHAT = {"flops": "the FLOP/s", "hbm_bandwidth_bytes_per_s": "the HBM bandwidth", "hbm_bytes": "the HBM capacity",
         "price_usd_per_hour": "a price per chip-hour"}


def build_system(a: argparse.Namespace, needs: Sequence[str], batch: float = 0.0, context: float = 0.0) -> System:
    """Hardware/model from presets or files, then every flag given overrides its field.

    `needs` lists what this subcommand cannot answer without (hardware figures, `total_params`);
    any other hardware figure left out gets a placeholder that no reported number uses, and
    is listed in `a.missing_hw` so the outputs that would use it are null with a reason.
    """
    # Hardware ---------------------------------------------------------------------
    a.missing_hw = ()
    if a.hardware:
        hw: Hardware = _load("hardware", a.hardware)
        hw_fields = hw.to_dict()
    else:
        hw_fields = {"name": "custom", "scaleup_domain_chips": 1}
        absent = [key for key, attr in _HW_ATTRS.items() if getattr(a, attr) is None]
        missing_flags = [_HW_FLAGS[key] for key in absent if key in needs]
        if missing_flags:
            raise CLIError(f"--hardware is missing: give a chip preset (see `python -m model presets`) "
                           f"or {' '.join(missing_flags)}")
        a.missing_hw = tuple(absent)
        # Placeholders: fields this subcommand does not need; no output that uses them is reported.
        hw_fields.update(flops_bf16_per_s=1.0, hbm_bandwidth_bytes_per_s=1.0, hbm_bytes=1.0, price_usd_per_hour=1.0)
    for key, attr in _HW_SET:
        if getattr(a, attr) is not None:
            hw_fields[key] = getattr(a, attr)
    if a.flops is not None:  # used as is, at whatever dtype the user meant
        hw_fields[{"bf16": "flops_bf16_per_s", "fp8": "flops_fp8_per_s",
                   "fp4": "flops_fp4_per_s"}[a.compute_dtype]] = a.flops
    hw_meta = {}
    if a.hardware:  # keep the preset's sources and [uncertain] marks for the fields no flag replaced
        hw_meta = {k: v for k, v in hw.meta.items() if hw_fields.get(k) == getattr(hw, k)}
    try:
        hw = Hardware(**hw_fields, meta=hw_meta)
    except ValueError as e:
        raise _spec_error(e, "--hardware") from None
    try:
        hw.flops(a.compute_dtype)
    except ValueError as e:
        raise CLIError(f"--compute-dtype {a.compute_dtype}: {e}") from None

    # Model ------------------------------------------------------------------------
    if a.active_params is not None and a.sparsity is not None:
        raise CLIError("--sparsity: give --active-params or --sparsity, not both (sparsity = total/active)")
    m_meta = {}
    if a.model:
        mdl: ModelArch = _load("model", a.model)
        m_fields = mdl.to_dict()
        m_meta = dict(mdl.meta)
    elif a.total_params is None and "total_params" not in needs and a.active_params is not None:
        m_fields = {"name": "custom", "total_params": a.active_params}  # only Na is used
    else:
        if a.total_params is None:
            raise CLIError("--model is missing: give a model preset (see `python -m model presets`) "
                           "or --total-params (with --active-params or --sparsity for a sparse model)")
        m_fields = {"name": "custom"}
    if a.total_params is not None:
        m_fields["total_params"] = a.total_params
    if a.active_params is not None:
        m_fields["active_params"] = a.active_params
    if a.sparsity is not None:
        m_fields["active_params"] = m_fields["total_params"] / a.sparsity
    if "active_params" not in m_fields:
        m_fields["active_params"] = m_fields["total_params"]
    if a.kv_bytes_per_token is not None:
        m_fields["kv_bytes_per_token"] = a.kv_bytes_per_token
    for key, attr in _MODEL_SET:
        if getattr(a, attr) is not None:
            m_fields[key] = getattr(a, attr)
    if a.model:  # keep sources and [uncertain] marks for the fields no flag replaced
        m_meta = {k: v for k, v in m_meta.items() if m_fields.get(k) == getattr(mdl, k)}
    try:
        mdl = ModelArch(**m_fields, meta=m_meta)
    except ValueError as e:
        raise _spec_error(e, "--model") from None

    a.model_spec = mdl  # the model as described, before any width folding below
    weight_dtype = a.weight_dtype
    bpp = a.bytes_per_param
    if bpp is not None and DTYPE_BYTES[weight_dtype] != bpp:
        # A width some dtype has (1 → fp8, 0.5 → fp4, …) is that dtype; any other width is folded
        # into the parameter count on top of the widest dtype not above it, so W = N · bytes while
        # the count only grows (active ≤ total still holds).
        same = [d for d, w in DTYPE_BYTES.items() if w == bpp]
        below = [d for d, w in DTYPE_BYTES.items() if w < bpp]
        if same:
            weight_dtype = same[0]
        elif below:
            weight_dtype = max(below, key=DTYPE_BYTES.__getitem__)
        else:
            weight_dtype = min(DTYPE_BYTES, key=DTYPE_BYTES.__getitem__)
    prec = Precision(weights=weight_dtype, kv=a.kv_dtype, compute=a.compute_dtype)
    if bpp is not None and prec.weight_bytes_per_param != bpp:
        scale = bpp / prec.weight_bytes_per_param
        if mdl.total_params * scale < mdl.active_params:
            raise CLIError(f"--bytes-per-param: {bpp:g} is out of range for this model; allowed: a number "
                           f"≥ {min(DTYPE_BYTES.values()) * mdl.active_params / mdl.total_params:g}")
        mdl = mdl.with_(total_params=mdl.total_params * scale)
    if a.chips is not None:
        chips = a.chips
    elif missing(a, "hbm_bytes"):  # the auto rule sizes for HBM capacity: without it, one chip
        chips = 1.0
    else:  # the same rule as the app's "auto": weights + KV of the (largest) batch at the (longest) context
        try:
            chips = float(auto_chips(hw, mdl, prec, batch, context))
        except ValueError:  # no KV figure: size for the weights alone
            chips = float(auto_chips(hw, mdl, prec))
    dep = Deployment(chips=chips, pipeline_stages=a.pipeline_stages, pipeline_hop_s=a.hop_latency,
                     mfu=a.mfu, bw_util=a.bw_util, tokens_per_step=a.tokens_per_step, mode=a.mode,
                     sparse_attention=a.sparse_attention,
                     sparse_param=min(a.sparse_param, 1.0) if a.sparse_attention == "fraction" else a.sparse_param)
    if a.sparse_attention == "fraction" and a.sparse_param > 1:
        raise CLIError(f"--sparse-param: {a.sparse_param:g} is out of range; with --sparse-attention "
                       "fraction it must be > 0 and ≤ 1")
    return System(hw, mdl, prec, dep)


def _system_summary(s: System, a: argparse.Namespace) -> dict[str, Any]:
    hw, m, p, d = s.hardware, a.model_spec, s.precision, s.deployment
    gone = set(getattr(a, "missing_hw", ()))
    out = {"hardware": hw.name, "model": m.name, "chips": d.chips,
           "chips_auto": a.chips is None and "hbm_bytes" not in gone,
           "pipeline_stages": d.pipeline_stages, "mode": d.mode,
           "weight_dtype": p.weights, "kv_dtype": p.kv, "compute_dtype": p.compute,
           "flops_per_s": None if "flops" in gone else s.flops,
           "hbm_bandwidth_bytes_per_s": None if "hbm_bandwidth_bytes_per_s" in gone else s.hbm_bandwidth,
           "hbm_bytes": None if "hbm_bytes" in gone else hw.hbm_bytes,
           "price_usd_per_hour": None if "price_usd_per_hour" in gone else hw.price_usd_per_hour,
           "weight_bytes": s.weight_bytes, "bytes_per_param": s.weight_bytes / m.total_params,
           "total_params": m.total_params, "active_params": m.active_params}
    if gone:
        out["not_given"] = [_HW_FLAGS[k] for k in _HW_FLAGS if k in gone]
    if a.chips is None and "hbm_bytes" in gone:
        out["chips_rule"] = "1 chip: sizing C for the weights needs the HBM capacity (--hbm-bytes or a hardware preset)"
    try:
        out["kv_bytes_per_token"] = s.kv.bytes_per_token
    except ValueError:
        out["kv_bytes_per_token"] = None
    unc = [f"hardware.{f}" for f in presets.uncertain_fields(hw)] + \
          [f"model.{f}" for f in presets.uncertain_fields(m)]
    if unc:
        out["uncertain_inputs"] = unc
    out["unsourced"] = _unsourced(s, a)
    return out


def _unsourced(s: System, a: argparse.Namespace) -> list[str]:
    """Numbers from the user's own --hardware/--model file given without a source or date."""
    return [f"hardware.{f}" for f in presets.unsourced_fields(s.hardware)] + \
           [f"model.{f}" for f in presets.unsourced_fields(getattr(a, "model_spec", s.model))]


# ---------------------------------------------------------------- output

def _clean(x: Any) -> Any:
    """JSON-safe: numpy → Python, non-finite → None."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, (int, float)):
        if not math.isfinite(v):
            return "∞" if v > 0 else "—"
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
            return f"{v:.{digits - 1}e}"
        if float(v).is_integer():
            return f"{int(v):,}"
        return f"{v:,.{max(0, digits - 1 - math.floor(math.log10(abs(v))) if v else 0)}f}"
    return str(v)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) for h, w in zip(headers, widths))
    body = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])


def _kv_lines(pairs: list[tuple[str, Any]]) -> str:
    w = max(len(k) for k, _ in pairs)
    return "\n".join(f"{k.ljust(w)}  {_fmt(v)}" for k, v in pairs)


def _header(summary: dict[str, Any]) -> str:
    s = summary
    auto = " (auto: smallest power of two holding weights + KV, up to the scale-up domain)"
    chips = f"{_fmt(s['chips'])}{auto if s['chips_auto'] else ''}"
    flops = "— TFLOP/s" if s["flops_per_s"] is None else f"{s['flops_per_s'] / 1e12:,.0f} TFLOP/s"
    bw = "— TB/s" if s["hbm_bandwidth_bytes_per_s"] is None else f"{s['hbm_bandwidth_bytes_per_s'] / 1e12:,.2f} TB/s"
    lines = [f"{s['hardware']} × {s['model']}: C = {chips} chips, P = {s['pipeline_stages']}, "
             f"{s['mode']} mode",
             f"weights {s['weight_dtype']} ({s['weight_bytes'] / 1e9:,.1f} GB), KV {s['kv_dtype']}"
             + (f" ({_fmt(s['kv_bytes_per_token'])} B/token)" if s.get("kv_bytes_per_token") else "")
             + f", compute {s['compute_dtype']} ({flops}, {bw} per chip)"]
    if s.get("not_given"):
        lines.append("not given (outputs that need them are null): " + ", ".join(s["not_given"]))
    if s.get("chips_rule"):
        lines.append("C = " + s["chips_rule"])
    if s.get("uncertain_inputs"):
        lines.append("uncertain preset figures used: " + ", ".join(s["uncertain_inputs"]))
    if s.get("unsourced"):
        lines.append("note: unsourced numbers (your own file gives no source or date for them): "
                     + ", ".join(s["unsourced"]))
    return "\n".join(lines)


# ---------------------------------------------------------------- subcommands

def cmd_step(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    if len(a.batch) * len(a.context) > STEP_MAX_ROWS:  # one row per (batch, context): 10⁴ × 10⁴ would take hours
        raise CLIError(f"--batch × --context: {len(a.batch):,} × {len(a.context):,} rows; at most "
                       f"{STEP_MAX_ROWS:,} (batch, context) pairs")
    s = build_system(a, ["flops", "hbm_bandwidth_bytes_per_s", "total_params"],
                     batch=max(a.batch), context=max(a.context))
    b = np.asarray(a.batch, float)[:, None]
    t = np.asarray(a.context, float)[None, :]
    try:
        r = decode_step(s, b, t)
    except ValueError as e:
        raise CLIError(str(e)) from None
    rows = r.rows()
    reasons = []
    for key, col, what in (("price_usd_per_hour", "usd_per_mtok", "usd_per_mtok"),
                           ("hbm_bytes", "fits", "fits (weights + KV within HBM)")):
        if missing(a, key):
            for row in rows:
                row[col] = None
            reasons.append(missing_reason(a, key, what))
    summary = _system_summary(s, a)
    data = {"inputs": summary, "rows": rows}
    if reasons:
        data["reason"] = "; ".join(reasons)
    table = _table(
        ["batch", "context", "t_step ms", "matmul ms", "weights ms", "kv ms", "bound", "tok/s/user",
         "tok/s/chip", "$/Mtok", "HBM/chip GB", "fits"],
        [[x["batch"], x["context"], x["t_step_s"] * 1e3, x["t_matmul_s"] * 1e3, x["t_weights_s"] * 1e3,
          x["t_kv_s"] * 1e3, x["bound"], x["tokens_per_s_per_user"], x["tokens_per_s_per_chip"],
          x["usd_per_mtok"], x["hbm_bytes_per_chip"] / 1e9, x["fits"]] for x in rows])
    return data, _header(summary) + "\n\n" + table + "".join(f"\nnote: {r}" for r in reasons)


def cmd_balance(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    s = build_system(a, ["flops", "hbm_bandwidth_bytes_per_s", "total_params"])
    try:
        b_star = float(system_balance_batch(s, a.context))
    except ValueError as e:
        raise CLIError(f"--context {a.context:g}: {e}") from None
    try:
        t_never = context_never_compute_bound(s)
    except ValueError:  # no KV figure: only the no-KV answers exist
        t_never = math.nan
    data: dict[str, Any] = {
        "inputs": _system_summary(s, a), "context": a.context,
        "flops_per_byte": s.flops / s.hbm_bandwidth, "sparsity": a.model_spec.sparsity,
        "batch_balance": b_star if math.isfinite(b_star) else None,
        "context_never_compute_bound": t_never if math.isfinite(t_never) else None,
        "hbm_drain_s": (float(hbm_drain_time(s.hardware.hbm_bytes, s.hardware.hbm_bandwidth_bytes_per_s))
                        if not missing(a, "hbm_bytes") else None),
    }
    reasons = []
    if not math.isfinite(b_star):
        reasons.append(f"at context {a.context:g} the KV fetch alone outweighs the matmuls: decode is "
                       "memory-bound at every batch")
    if math.isnan(t_never):
        reasons.append("context_never_compute_bound needs KV bytes per token (--kv-bytes-per-token or a "
                       "model preset)")
    if data["hbm_drain_s"] is None:
        reasons.append("hbm_drain_s needs the HBM capacity (--hbm-bytes or a hardware preset)")
    if reasons:
        data["reason"] = "; ".join(reasons)
    text = _kv_lines([
        ("FLOP/s ÷ HBM B/s", data["flops_per_byte"]), ("sparsity (total/active)", data["sparsity"]),
        ("balance batch B*", data["batch_balance"] if data["batch_balance"] else "none (memory-bound)"),
        ("context never compute-bound [tokens]", data["context_never_compute_bound"]),
        ("HBM drain time [ms]", None if data["hbm_drain_s"] is None else data["hbm_drain_s"] * 1e3)])
    return data, _header(data["inputs"]) + f"\ncontext {a.context:g} tokens\n\n" + text


def cmd_fast_mode(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    batches = a.batch_standard is not None or a.batch_fast is not None
    quotes = a.speedup is not None or a.price_multiple is not None
    if batches == quotes:
        raise CLIError("fast-mode: give either --batch-standard and --batch-fast, "
                       "or --speedup and --price-multiple")
    # From a quote, the standard batch must fit in HBM; two given batches need no HBM figure.
    s = build_system(a, ["flops", "hbm_bandwidth_bytes_per_s", "total_params"] + ([] if batches else ["hbm_bytes"]),
                     batch=max(a.batch_standard or 0, a.batch_fast or 0), context=a.context)
    try:
        if batches:
            if a.batch_standard is None or a.batch_fast is None:
                raise CLIError("fast-mode: --batch-standard and --batch-fast go together")
            fm = economics.fast_mode_forward(s, a.batch_standard, a.batch_fast, a.context)
        else:
            if a.speedup is None or a.price_multiple is None:
                raise CLIError("fast-mode: --speedup and --price-multiple go together")
            fm = economics.fast_mode_batches(s, a.speedup, a.price_multiple, a.context)
    except ValueError as e:
        raise CLIError(str(e)) from None
    data = {"inputs": _system_summary(s, a), "context": a.context, **asdict(fm)}
    if missing(a, "price_usd_per_hour"):  # the price multiple is a ratio (the price cancels); $/Mtok is not
        data["usd_per_mtok_standard"] = data["usd_per_mtok_fast"] = None
        why = missing_reason(a, "price_usd_per_hour", "usd_per_mtok_standard and usd_per_mtok_fast")
        data["reason"] = "; ".join(x for x in (data["reason"], why) if x)
    if not data["reason"]:
        data.pop("reason")
    text = _kv_lines([("speedup", fm.speedup), ("price multiple", fm.price_multiple),
                      ("standard batch", fm.batch_standard), ("fast batch", fm.batch_fast),
                      ("balance batch B*", fm.batch_balance),
                      ("standard / B*", fm.batch_standard_over_balance), ("fast / B*", fm.batch_fast_over_balance),
                      ("standard step [ms]", None if fm.t_step_standard_s is None else fm.t_step_standard_s * 1e3),
                      ("fast step [ms]", None if fm.t_step_fast_s is None else fm.t_step_fast_s * 1e3)])
    if fm.reason:
        text += f"\nno solution: {fm.reason}"
    return data, _header(data["inputs"]) + "\n\n" + text


def cmd_kv_from_price(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    s = build_system(a, ["flops", "hbm_bandwidth_bytes_per_s"])
    kv = float(economics.kv_bytes_from_crossover(s.model.active_params, s.flops, s.hbm_bandwidth,
                                                 a.crossover_context))
    data = {"active_params": s.model.active_params, "flops_per_s": s.flops, "compute_dtype": s.precision.compute,
            "hbm_bandwidth_bytes_per_s": s.hbm_bandwidth, "flops_per_byte": s.flops / s.hbm_bandwidth,
            "crossover_context": a.crossover_context, "kv_bytes_per_token": kv,
            "note": f"bytes of KV per token at the precision whose FLOP/s were used ({s.precision.compute})",
            "unsourced": _unsourced(s, a)}
    text = _kv_lines([("active params", data["active_params"]), ("FLOP/s ÷ HBM B/s", data["flops_per_byte"]),
                      ("crossover context [tokens]", a.crossover_context),
                      ("implied KV bytes per token", kv)]) + f"\n({data['note']})"
    if data["unsourced"]:
        text += "\nnote: unsourced numbers (your own file gives no source or date for them): " + \
            ", ".join(data["unsourced"])
    return data, text


def cmd_overtrain(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    o = training.overtrain(a.active_params, a.inference_tokens_per_s, a.days, c_pre=a.c_pre, c_rl=a.c_rl,
                           c_inf=a.c_inf, ineff_rl=a.ineff_rl, ineff_inf=a.ineff_inf,
                           chinchilla_tokens_per_param=a.chinchilla_tokens_per_param)
    data = {"active_params": a.active_params, "inference_tokens_per_s": a.inference_tokens_per_s,
            "days": a.days, **{f.name: float(getattr(o, f.name)) for f in fields(o)}}
    text = _kv_lines([("inference tokens", data["inference_tokens"]), ("pretrain tokens", data["pretrain_tokens"]),
                      ("RL tokens", data["rl_tokens"]), ("Chinchilla tokens (20/param)", data["chinchilla_tokens"]),
                      ("over-training factor", data["overtrain_factor"])])
    return data, text


def cmd_presets(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    kinds = [a.kind] if a.kind else ["hardware", "model", "price", "tier", "measurement"]
    data: dict[str, Any] = {}
    out = []
    for kind in kinds:
        try:
            items = presets.load(kind)
        except OSError as e:
            raise CLIError(f"presets {kind}: cannot read the built-in presets ({e.strerror}: {e.filename})") from None
        data[kind] = {k: {**v.to_dict(), "uncertain": presets.uncertain_fields(v)} for k, v in items.items()}
        out.append(f"{kind}:")
        for k, v in items.items():
            unc = presets.uncertain_fields(v)
            flag = "  [uncertain: " + ", ".join(unc) + "]" if unc else ""
            out.append(f"  {k:<18} {getattr(v, 'name', '')}{flag}")
    return data, "\n".join(out)


def cmd_layout(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    s = build_system(a, ["flops", "hbm_bandwidth_bytes_per_s", "total_params"], batch=a.batch, context=a.context)
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
        "inputs": _system_summary(s, a), "batch": a.batch, "context": a.context, "gpus": gpus,
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
    if missing(a, "price_usd_per_hour"):
        data["usd_per_mtok"] = None
        data["reason"] = missing_reason(a, "price_usd_per_hour", "usd_per_mtok")
    text = _kv_lines([
        ("experts per GPU", data["experts_per_gpu"]),
        ("distinct experts touched per layer", data["expected_distinct_experts"]),
        ("all-to-all bytes per step", data["alltoall_bytes_per_step"]), ("… per GPU", data["alltoall_bytes_per_gpu"]),
        ("share over scale-out", data["share_scaleout"]), ("t scale-up [ms]", data["t_scaleup_s"] * 1e3),
        ("t scale-out [ms]", data["t_scaleout_s"] * 1e3), ("t_comm [ms]", data["t_comm_s"] * 1e3),
        ("step with t_comm [ms]", data["t_step_s"] * 1e3), ("bound", data["bound"]),
        ("$/Mtok", data["usd_per_mtok"])]) + (f"\nnote: {data['reason']}" if data.get("reason") else "")
    return data, _header(data["inputs"]) + f"\nB = {a.batch:g}, T = {a.context:g}, G = {gpus:g} GPUs, " \
        f"domain {domain:g}\n\n" + text


def cmd_pipeline(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    s = build_system(a, ["flops", "hbm_bandwidth_bytes_per_s", "total_params"], batch=a.micro_batch, context=a.context)
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
               "fits": None if missing(a, "hbm_bytes") else bool(pm.total_bytes_per_chip[i] <= hw.hbm_bytes),
               "latency_s": float(pm.latency_s[i]),
               "tokens_per_s": float(pm.tokens_per_s[i]),
               "training_bubble": float(cluster.training_bubble_fraction(p, a.micro_batches or p))}
        row["moe_layers_per_stage"] = float(cut.moe_layers_per_stage[i])
        row["cut_ratio"] = float(cut.ratio[i])                  # NaN → null, with the reason
        if cut.reason[i]:
            row["cut_reason"] = cut.reason[i]
        rows.append(row)
    data = {"inputs": _system_summary(s, a), "micro_batch": a.micro_batch, "context": a.context,
            "rows": rows}
    if missing(a, "hbm_bytes"):
        data["reason"] = missing_reason(a, "hbm_bytes", "fits")
    table = _table(["P", "weights/chip GB", "KV/chip GB", "HBM/chip GB", "fits", "latency ms", "tok/s",
                    "cut ratio", "train bubble"],
                   [[r["stages"], r["weight_bytes_per_chip"] / 1e9, r["kv_bytes_per_chip"] / 1e9,
                     r["hbm_bytes_per_chip"] / 1e9, r["fits"], r["latency_s"] * 1e3, r["tokens_per_s"],
                     r.get("cut_ratio"), r["training_bubble"]] for r in rows])
    notes = sorted({r["cut_reason"] for r in rows if r.get("cut_reason")})
    if data.get("reason"):
        notes.append(data["reason"])
    return data, (_header(data["inputs"]) + f"\nmicro-batch b = {a.micro_batch:g}, T = {a.context:g}\n\n" + table
                  + "".join(f"\nnote: {n}" for n in notes))


def _load_tiers(path: str | None) -> list[tuple[str, economics.Tier]]:
    """The built-in DDR/flash/disk tiers, or every tier of a YAML/JSON tier file (`--tiers`)."""
    try:
        if path is None:
            items = presets.load("tier")
        else:
            try:  # at most one byte past the cap: parse_text refuses it, and /dev/zero cannot fill memory
                with open(path, "rb") as f:
                    data = f.read(presets.MAX_FILE_BYTES + 1)
            except OSError as e:
                raise CLIError(f"--tiers: cannot read {path!r}: {e.strerror}") from None
            items = presets.parse_text(data, "tier", require_sources=False)    # a user's file: sources optional
    except presets.PresetError as e:
        raise CLIError(f"--tiers {path}: {e.problems[0]}"
                       + (f" (and {len(e.problems) - 1} more)" if len(e.problems) > 1 else "")) from None
    except OSError as e:
        raise CLIError(f"--tiers: cannot read the built-in tier presets ({e.strerror}: {e.filename})") from None
    return list(items.items())


def cmd_cache_tier(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    s = build_system(a, ["flops", "hbm_bytes", "price_usd_per_hour"])
    try:
        kv = s.kv.bytes_per_token
    except ValueError as e:
        raise CLIError(f"--kv-bytes-per-token: {e}") from None
    if not kv > 0:
        raise CLIError("--kv-bytes-per-token: the KV bytes per token must be > 0 to hold anything")
    keyed = [("hbm", economics.hbm_tier(s.hardware)), *_load_tiers(a.tiers)]
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
    if missing(a, "hbm_bandwidth_bytes_per_s"):  # HBM's own retrieve cost is 0 whatever its bandwidth
        rows[0]["bandwidth_bytes_per_s"] = rows[0]["drain_s"] = None
    data = {"inputs": _system_summary(s, a), "hold_seconds": a.hold_seconds, "kv_bytes_per_token": kv,
            "tiers": rows, "recompute_usd_per_token": rec, "recompute_usd_per_mtok": rec * 1e6,
            "cheapest": keys[k_best], "cheapest_name": c.names[k_best],
            "cheapest_usd_per_token": float(c.cheapest_usd), "cheapest_usd_per_mtok": float(c.cheapest_usd) * 1e6,
            "cheapest_tier": keys[k_tier],
            "switches": [{"hold_s": t, "from": keys[i], "to": keys[j]}
                         for t, i, j in zip(env.switch_s, env.order, env.order[1:])]}
    if missing(a, "hbm_bandwidth_bytes_per_s"):
        data["reason"] = missing_reason(a, "hbm_bandwidth_bytes_per_s", "the HBM row's bandwidth and drain time")
    table = _table(["tier", "drain s", "hold $/Mtok", "retrieve $/Mtok", "total $/Mtok", ""],
                   [[r["key"], r["drain_s"], r["hold_usd_per_token"] * 1e6, r["retrieve_usd_per_token"] * 1e6,
                     r["usd_per_mtok"], "← cheapest" if r["key"] == keys[k_best] else ""] for r in rows]
                   + [["recompute", None, None, None, rec * 1e6, "← cheapest" if k_best == len(tiers) else ""]])
    hand = "; ".join(f"{d['from']} → {d['to']} at {_fmt(d['hold_s'])} s" for d in data["switches"])
    bare = [f"{r['key']}.{f}" for r in rows for f in r["unsourced"]]
    if bare:
        hand += "\nnote: unsourced numbers (your own --tiers file gives no source or date for them): " + ", ".join(bare)
    return data, (_header(data["inputs"]) + f"\nKV {_fmt(kv)} B/token held for {_fmt(a.hold_seconds)} s, then read "
                  f"back (per million tokens)\n\n{table}\n\ncheapest option changes: {hand or 'never'}")


def _load_measurements(path: str) -> dict[str, Any]:
    """A user's measurement file (`--measurements`): CSV, or YAML/JSON in the measurements.yaml schema."""
    from . import calibrate

    try:  # at most one byte past the cap: the parser refuses it, and /dev/zero cannot fill memory
        with open(path, "rb") as f:
            data = f.read(presets.MAX_FILE_BYTES + 1)
    except OSError as e:
        raise CLIError(f"--measurements: cannot read {path!r}: {e.strerror}") from None
    try:
        return calibrate.load_user_measurements(data, path)
    except presets.PresetError as e:
        raise CLIError(f"--measurements {path}: {e.problems[0]}"
                       + (f" (and {len(e.problems) - 1} more)" if len(e.problems) > 1 else "")) from None


def cmd_calibrate(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Published measurements against their ideal bound; the (MFU, BWU) that best predicts them."""
    from . import calibrate  # only this subcommand needs it

    if a.measurements is not None:
        items = _load_measurements(a.measurements)
    else:
        try:
            items = presets.measurement_presets()
        except OSError as e:
            raise CLIError(f"calibrate: cannot read the built-in measurements ({e.strerror}: {e.filename})") from None
    resolved = {}
    for flag, kind, value in (("--model", "model", a.model), ("--hardware", "hardware", a.hardware)):
        if value is not None:
            try:
                presets.get(kind, value)
            except ValueError as e:
                raise CLIError(f"{flag}: {e}") from None
            k = value.strip().lower()
            resolved[kind] = presets.aliases(kind).get(k, k)
    keys = None
    if a.measurement is not None:
        keys = [k.strip() for k in a.measurement.split(",")]
        bad = [k for k in keys if k not in items]
        if bad:
            where = a.measurements or "presets/measurements.yaml"
            raise CLIError(f"--measurement: unknown measurement {bad[0]!r}; the keys are those of "
                           f"{where}, e.g. {', '.join(list(items)[:3])}")
    model_key, hw_key = resolved.get("model"), resolved.get("hardware")
    sel = calibrate.select(items, model=model_key, hardware=hw_key, publisher=a.publisher, keys=keys)
    given = " ".join(f"{f} {v}" for f, v in (("--model", a.model), ("--hardware", a.hardware),
                                              ("--publisher", a.publisher), ("--measurement", a.measurement)) if v)
    if not sel:
        pubs = sorted({m.publisher for m in items.values()})
        raise CLIError(f"calibrate: no measurement matches {given}; publishers: {', '.join(pubs)}")
    c = calibrate.check(sel)
    f = calibrate.fit_check(c)
    rows = []
    for i, k in enumerate(c.keys):
        m = sel[k]
        rows.append({"key": k, "name": m.name, "publisher": m.publisher, "model": m.model, "hardware": m.hardware,
                     "measured_tokens_per_s_per_gpu": float(c.measured[i]),
                     "tokens_per_s_per_user": float(c.speed[i]), "ideal_tokens_per_s_per_gpu": float(c.ideal[i]),
                     "efficiency": float(c.efficiency[i]), "ideal_bound": str(c.bound[i]),
                     "fitted_tokens_per_s_per_gpu": float(f.predicted[i]), "residual_log10": float(f.residual_log10[i]),
                     "fitted_bound": str(f.bound[i]), "uncertain": presets.uncertain_fields(m),
                     "unsourced": presets.unsourced_fields(m)})
    data = {"selection": {"model": a.model, "hardware": a.hardware, "publisher": a.publisher,
                          "measurement": keys, "measurements_file": a.measurements},
            "count": len(rows), "mfu": f.mfu, "bw_util": f.bwu, "mfu_determined": f.mfu_determined,
            "bw_util_determined": f.bwu_determined, "rms_log10": f.rms_log10,
            "rms_factor": 10.0 ** f.rms_log10, "max_efficiency": float(np.max(c.efficiency)), "points": rows}
    notes = []
    if not f.mfu_determined:
        notes.append("no point is compute-bound at the fit: MFU is not pinned down (shown at the highest value "
                     "that fits as well)")
    if not f.bwu_determined:
        notes.append("no point is memory-bound at the fit: bandwidth utilisation is not pinned down (shown at "
                     "the highest value that fits as well)")
    if notes:
        data["reason"] = "; ".join(notes)
    table = _table(["measurement", "measured tok/s/GPU", "tok/s/user", "ideal tok/s/GPU", "efficiency",
                    "fitted tok/s/GPU", "residual ×"],
                   [[r["key"], r["measured_tokens_per_s_per_gpu"], r["tokens_per_s_per_user"],
                     r["ideal_tokens_per_s_per_gpu"], r["efficiency"], r["fitted_tokens_per_s_per_gpu"],
                     10.0 ** r["residual_log10"]] for r in rows])
    head = _kv_lines([("measurements", len(rows)), ("fitted compute MFU", f.mfu),
                      ("fitted HBM bandwidth utilisation", f.bwu),
                      ("RMS residual (factor)", data["rms_factor"]),
                      ("highest measured ÷ ideal", data["max_efficiency"])])
    return data, head + ("\n" + "\n".join(f"note: {n}" for n in notes) if notes else "") + "\n\n" + table


def make_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m model", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", metavar="SUBCOMMAND", parser_class=_Parser)

    def add(name: str, func: Callable, help_: str, system: bool = True) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_)
        if system:
            _add_system_flags(sp)
        sp.add_argument("--json", action="store_true", help="print one JSON object")
        sp.set_defaults(func=func)
        return sp

    sp = add("step", cmd_step, "decode-step terms, speed, cost and fit for each (batch, context)")
    sp.add_argument("--batch", type=_number_list("--batch", 1), default=[1.0], help="e.g. 1,8,64 (≥ 1)")
    sp.add_argument("--context", type=_number_list("--context", 0), default=[0.0], help="tokens, e.g. 0,8192")
    sp = add("balance", cmd_balance, "balance batch B*, context where decode stays memory-bound, HBM drain time")
    sp.add_argument("--context", type=_number("--context", 0), default=0.0)
    sp = add("fast-mode", cmd_fast_mode, "speedup and price multiple of a smaller batch, or the batches for a quote")
    sp.add_argument("--batch-standard", type=_number("--batch-standard", 1))
    sp.add_argument("--batch-fast", type=_number("--batch-fast", 1))
    sp.add_argument("--speedup", type=_number("--speedup", 0, lo_open=True))
    sp.add_argument("--price-multiple", type=_number("--price-multiple", 0, lo_open=True))
    sp.add_argument("--context", type=_number("--context", 0), default=0.0)
    sp = add("kv-from-price", cmd_kv_from_price, "KV bytes per token implied by a long-context price tier")
    sp.add_argument("--crossover-context", type=_number("--crossover-context", 0, lo_open=True), required=True)
    sp = add("overtrain", cmd_overtrain, "pretraining and RL tokens that equalise cost with inference", system=False)
    sp.add_argument("--active-params", type=_number("--active-params", 0, lo_open=True), required=True)
    sp.add_argument("--inference-tokens-per-s", type=_number("--inference-tokens-per-s", 0, lo_open=True),
                    required=True, help="tokens/s served by this one model")
    sp.add_argument("--days", type=_number("--days", 0, lo_open=True), required=True)
    sp.add_argument("--c-pre", type=_number("--c-pre", 0, lo_open=True), default=6.0)
    sp.add_argument("--c-rl", type=_number("--c-rl", 2, hi=6), default=3.0, help="RL FLOPs per param per token (2…6)")
    sp.add_argument("--c-inf", type=_number("--c-inf", 0, lo_open=True), default=2.0)
    sp.add_argument("--ineff-rl", type=_number("--ineff-rl", 1), default=3.0, help="RL inefficiency multiple (≥ 1)")
    sp.add_argument("--ineff-inf", type=_number("--ineff-inf", 1), default=3.0,
                    help="inference inefficiency multiple (≥ 1; 3 = decode at 1/3 MFU)")
    sp.add_argument("--chinchilla-tokens-per-param", type=_number("--chinchilla-tokens-per-param", 0, lo_open=True),
                    default=20.0)
    sp = add("layout", cmd_layout, "MoE experts over G GPUs: experts per GPU, all-to-all bytes and time per step")
    sp.add_argument("--batch", type=_number("--batch", 1), default=1.0)
    sp.add_argument("--context", type=_number("--context", 0), default=0.0)
    sp.add_argument("--gpus", type=_number("--gpus", 1, integer=True), help="GPUs the expert layer spans (default: C)")
    sp.add_argument("--activation-bytes", type=_number("--activation-bytes", 0, lo_open=True), default=2.0,
                    help="bytes per dispatched activation element (default 2, bf16)")
    sp = add("pipeline", cmd_pipeline, "weights and KV per chip, latency and cut check against pipeline stages")
    sp.add_argument("--stages", type=_number_list("--stages", 1, integer=True), default=[1.0, 2.0, 4.0, 8.0],
                    help="e.g. 1,2,4,8")
    sp.add_argument("--micro-batch", type=_number("--micro-batch", 1), default=1.0,
                    help="sequences per micro-batch b (P micro-batches in flight)")
    sp.add_argument("--micro-batches", type=_number("--micro-batches", 1, integer=True),
                    help="training micro-batches for the bubble (default: P)")
    sp.add_argument("--context", type=_number("--context", 0), default=0.0)
    sp = add("cache-tier", cmd_cache_tier, "cost per token of holding KV for a time in HBM, DDR, flash or disk, "
             "or of recomputing it; the cheapest")
    sp.add_argument("--hold-seconds", type=_number("--hold-seconds", 0, lo_open=True), required=True,
                    help="how long the prompt's KV waits for its next use [s]")
    sp.add_argument("--tiers", metavar="FILE", help="YAML/JSON tier file (default: the built-in DDR, flash and "
                    "disk tiers); HBM always comes from the chip")
    sp = add("calibrate", cmd_calibrate, "published measurements against their ideal roofline bound; fitted "
             "compute and bandwidth efficiencies", system=False)
    sp.add_argument("--model", metavar="NAME", help="only measurements of this model preset")
    sp.add_argument("--hardware", metavar="NAME", help="only measurements on this chip preset")
    sp.add_argument("--publisher", metavar="NAME", help="only measurements from this publisher (e.g. NVIDIA)")
    sp.add_argument("--measurement", metavar="KEYS", help="comma-separated measurement keys")
    sp.add_argument("--measurements", metavar="FILE",
                    help="your own measured points instead of the built-in ones: a CSV (a header row of the "
                         "measurements.yaml field names, one point per row) or a YAML/JSON file in that schema; "
                         "sources optional")
    sp = add("presets", cmd_presets, "list the built-in presets", system=False)
    sp.add_argument("kind", nargs="?", choices=["hardware", "model", "price", "tier", "measurement"])
    return p


# A value that starts with "-" but is not a plain integer or decimal ("-1e12", "-inf", "-1,2") would
# be taken by argparse for an option; glue it to its flag so the range check can name it.
_DASH_NUMBER = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def _glue_dash_values(argv: Sequence[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("--") and "=" not in tok and i + 1 < len(argv) and _DASH_NUMBER.match(argv[i + 1]):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
        else:
            out.append(tok)
            i += 1
    return out


USER_ERRORS = (CLIError, presets.PresetError, ValueError)
"""What bad input raises: our own flag checks, a preset or file that does not parse, a spec's range check
(worded with field and range)."""


def user_error(e: Exception) -> int:
    """One line on stderr for bad input; the exit code 2."""
    print(f"error: {e.problems[0] if isinstance(e, presets.PresetError) else e}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    try:
        a = parser.parse_args(_glue_dash_values(list(sys.argv[1:] if argv is None else argv)))
        if not getattr(a, "cmd", None):
            names = next(act.choices for act in parser._actions if isinstance(act, argparse._SubParsersAction))
            raise CLIError(f"a subcommand is required: choose from {', '.join(names)} "
                           "(see `python -m model --help`)")
        data, text = a.func(a)
    except USER_ERRORS as e:
        return user_error(e)
    except Exception as e:  # a bug of ours: still one line, never a traceback
        print(f"error: internal error ({type(e).__name__}: {e}); please report the command line", file=sys.stderr)
        return 1
    try:
        print(json.dumps(_clean(data), allow_nan=False) if getattr(a, "json", False) else text)
        sys.stdout.flush()
    except BrokenPipeError:  # `python -m model … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
