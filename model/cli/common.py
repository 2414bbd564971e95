"""What the subcommands share: number parsing, the one flag↔field table, `build_system`, the
summary of the inputs, and the declarations of which inputs each output uses.

The table (`FLAGS`) is the only place a shared flag is named: the argparse flags, the "missing
input" errors, the override of a preset's fields, the spec range errors worded with the flag the
user typed and the reasons beside null outputs are all read from it (the contract: docs/design.md
"The command line").
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import presets
from ..roofline import System, auto_chips
from ..specs import (
    COMPUTE_DTYPES,
    DTYPE_BYTES,
    MODES,
    SPARSE_ATTENTION_KINDS,
    Deployment,
    Hardware,
    ModelArch,
    Precision,
)


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        raise CLIError(message)


# ---------------------------------------------------------------- number parsing

def _bound_text(v: float) -> str:
    """A range bound: whole numbers with thousands separators (10,000,000, not 1e+07)."""
    return f"{v:,.0f}" if float(v).is_integer() and abs(v) < 1e16 else f"{v:g}"


def _range_text(lo: float, *, lo_open: bool = False, hi: float = math.inf, integer: bool = False) -> str:
    rng = f"{'>' if lo_open else '≥'} {_bound_text(lo)}" + ("" if hi == math.inf else f" and ≤ {_bound_text(hi)}")
    return f"{'an integer' if integer else 'a number'} {rng}"


def number(flag: str, lo: float, *, lo_open: bool = False, hi: float = math.inf,
           integer: bool = False) -> Callable[[str], float]:
    """An argparse `type`: a finite number in range, or a CLIError naming `flag` and the range."""
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


def number_list(flag: str, lo: float, **kw: Any) -> Callable[[str], list[float]]:
    """An argparse `type`: comma-separated numbers, each as `number` checks them (at most 10,000)."""
    one = number(flag, lo, **kw)
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


MAX_TOKENS = 10_000_000     # a request's input or output tokens, at most
MAX_CLASSES = 16            # request classes in one traffic mix


def traffic_list(flag: str) -> Callable[[str], list[tuple[float, float, float]]]:
    """An argparse `type`: request classes `I:O[:SHARE]`, comma-separated → [(I, O, share), …].

    I and O (input and output tokens) are integers from 1 to 10,000,000; SHARE is the share of
    requests (> 0, normalised to sum to 1; equal shares when every class leaves it out).
    """
    tok = number(flag, 1, hi=MAX_TOKENS, integer=True)
    share = number(flag, 0, lo_open=True)
    form = f"comma-separated I:O or I:O:SHARE (I, O integers from 1 to {MAX_TOKENS:,}, SHARE > 0)"

    def parse(text: str) -> list[tuple[float, float, float]]:
        parts = [p.strip() for p in text.split(",")]
        if not text.strip() or len(parts) > MAX_CLASSES:
            raise CLIError(f"{flag}: {text!r} is not a traffic mix; allowed: 1 to {MAX_CLASSES} classes, {form}")
        out = []
        for p in parts:
            f = p.split(":")
            if len(f) not in (2, 3):
                raise CLIError(f"{flag}: {p!r} is not I:O or I:O:SHARE; allowed: {form}")
            out.append((float(tok(f[0])), float(tok(f[1])), share(f[2]) if len(f) == 3 else math.nan))
        given = [math.isfinite(c[2]) for c in out]
        if any(given) and not all(given):
            raise CLIError(f"{flag}: give a SHARE for every class or for none; allowed: {form}")
        w = [c[2] if all(given) else 1.0 for c in out]
        return [(i, o, x / sum(w)) for (i, o, _), x in zip(out, w)]
    return parse


# ---------------------------------------------------------------- the flag↔field table

@dataclass(frozen=True)
class Flag:
    """One shared flag: where its value goes and how it is checked.

    `field` is the spec field the flag replaces (None: the flag is read by `build_system` itself);
    `figure` names a hardware figure that may be left out — its outputs are then null, with a
    reason naming it — or, for the KV figure, how that reason names it.
    """

    flag: str
    group: str                          # "hardware", "model" or "deployment": the help section and the preset kind
    field: str | None = None
    figure: str | None = None
    lo: float | None = None             # a number flag: its range, as `number` checks it
    lo_open: bool = False
    hi: float = math.inf
    integer: bool = False
    choices: Sequence[str] | None = None
    default: Any = None
    metavar: str | None = None
    help: str | None = None

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")

    def add_to(self, p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
        """The argparse flag: its range check, choices, default and help."""
        kw: dict[str, Any] = {"help": self.help}
        if self.lo is not None:
            kw["type"] = number(self.flag, self.lo, lo_open=self.lo_open, hi=self.hi, integer=self.integer)
        if self.choices is not None:
            kw["choices"] = self.choices
        if self.default is not None:
            kw["default"] = self.default
        if self.metavar is not None:
            kw["metavar"] = self.metavar
        p.add_argument(self.flag, **kw)


_CHIPS_HELP = ("chips working on one step, C (default: the smallest power of two whose HBM holds the weights and "
               "the KV of the largest --batch at the longest --context, up to the scale-up domain — the app's "
               "'auto')")

FLAGS: tuple[Flag, ...] = (
    Flag("--hardware", "hardware", metavar="NAME|FILE", help="chip preset key or YAML/JSON file"),
    Flag("--flops", "hardware", field="flops", figure="the FLOP/s", lo=0, lo_open=True,
         help="FLOP/s per chip, used as is"),
    Flag("--compute-dtype", "hardware", choices=COMPUTE_DTYPES, default="bf16",
         help="picks the preset's FLOP/s when --flops is absent (default bf16)"),
    Flag("--hbm-bw", "hardware", field="hbm_bandwidth_bytes_per_s", figure="the HBM bandwidth", lo=0, lo_open=True,
         help="HBM bytes/s per chip"),
    Flag("--hbm-bytes", "hardware", field="hbm_bytes", figure="the HBM capacity", lo=0, lo_open=True,
         help="HBM bytes per chip"),
    Flag("--price-per-hour", "hardware", field="price_usd_per_hour", figure="a price per chip-hour", lo=0,
         lo_open=True, help="USD per chip-hour"),
    Flag("--power", "hardware", field="power_w", lo=0, lo_open=True, help="W per chip"),
    Flag("--scaleup-bw", "hardware", field="scaleup_bandwidth_bytes_per_s", lo=0, lo_open=True,
         help="scale-up (NVLink/ICI) bytes/s per chip, one direction"),
    Flag("--scaleout-bw", "hardware", field="scaleout_bandwidth_bytes_per_s", lo=0, lo_open=True,
         help="scale-out (NIC) bytes/s per chip, one direction"),
    Flag("--domain", "hardware", field="scaleup_domain_chips", lo=1, integer=True,
         help="scale-up domain size in chips (default: the chip preset's, else 1)"),
    Flag("--chips", "hardware", lo=1, help=_CHIPS_HELP),
    Flag("--model", "model", metavar="NAME|FILE", help="model preset key or YAML/JSON file"),
    Flag("--total-params", "model", field="total_params", lo=0, lo_open=True),
    Flag("--active-params", "model", field="active_params", lo=0, lo_open=True),
    Flag("--sparsity", "model", lo=1, help="total/active; sets active params"),
    Flag("--weight-dtype", "model", choices=tuple(DTYPE_BYTES), default="bf16"),
    Flag("--bytes-per-param", "model", lo=0, lo_open=True, help="default from --weight-dtype (bf16 = 2)"),
    Flag("--kv-dtype", "model", choices=tuple(DTYPE_BYTES), default="bf16"),
    Flag("--layers", "model", field="n_layers", lo=1, integer=True, help="transformer layers L"),
    Flag("--d-model", "model", field="d_model", lo=1, integer=True, help="hidden size d"),
    Flag("--experts", "model", field="n_experts", lo=1, integer=True, help="routed experts E"),
    Flag("--experts-per-token", "model", field="experts_per_token", lo=1, integer=True,
         help="routed experts each token uses, k (top-k)"),
    Flag("--moe-layers", "model", field="n_moe_layers", lo=1, integer=True,
         help="layers with routed experts, L_moe (default: every layer of an MoE model)"),
    Flag("--kv-bytes-per-token", "model", field="kv_bytes_per_token", figure="KV bytes per token", lo=0,
         help="bytes, used as is; otherwise derived from the architecture at --kv-dtype"),
    Flag("--mode", "deployment", choices=MODES, default="lecture"),
    Flag("--mfu", "deployment", lo=0, lo_open=True, hi=1, default=1.0,
         help="compute efficiency (default 1: the ideal roofline)"),
    Flag("--bw-util", "deployment", lo=0, lo_open=True, hi=1, default=1.0),
    Flag("--tokens-per-step", "deployment", lo=1, default=1.0,
         help="accepted tokens per sequence per step (MTP / speculative decoding)"),
    Flag("--pipeline-stages", "deployment", lo=1, integer=True, default=1),
    Flag("--hop-latency", "deployment", lo=0, default=0.0, help="seconds per pipeline hop"),
    Flag("--sparse-attention", "deployment", choices=SPARSE_ATTENTION_KINDS, default="dense"),
    Flag("--sparse-param", "deployment", lo=0, lo_open=True, default=2048.0,
         help="sqrt: knee context; topk: tokens read; fraction: share read"),
)
BY_FLAG: dict[str, Flag] = {f.flag: f for f in FLAGS}
BY_FIELD: dict[str, Flag] = {f.field: f for f in FLAGS if f.field}
# Hardware figures a subcommand may do without: absent, they get a placeholder no reported number uses.
HW_FIGURES: tuple[Flag, ...] = tuple(f for f in FLAGS if f.group == "hardware" and f.figure)
_GROUP_TITLES = {"hardware": "hardware (a preset or file, overridden by any flag)",
                 "model": "model (a preset or file, overridden by any flag)", "deployment": "deployment"}


def add_system_flags(p: argparse.ArgumentParser) -> None:
    """Every row of `FLAGS`, in three help sections."""
    groups = {name: p.add_argument_group(title) for name, title in _GROUP_TITLES.items()}
    for f in FLAGS:
        f.add_to(groups[f.group])


# ---------------------------------------------------------------- which inputs each output uses

KV = "--kv-bytes-per-token"


@dataclass(frozen=True)
class Uses:
    """Outputs that use an input their subcommand can do without: when it is missing they are null,
    and a reason beside them says what they need.

    `outputs` are paths into the JSON object (`rows.*.fits`: every row's `fits`); `label` is how the
    reason names them.
    """

    flag: str
    outputs: tuple[str, ...]
    label: str = ""


@dataclass(frozen=True)
class Path:
    """One way through a subcommand (a mode, or a range of an input such as context > 0).

    `needs`: the flags it cannot answer without (left out: exit 2 with a line naming the flag; a
    preset or file can stand in for a hardware or model flag).  `uses`: the inputs it can do
    without, and the outputs that are null without them.  Inputs with a default (C auto, B = 1,
    T = 0, active = total params, …) are neither.
    """

    name: str
    needs: tuple[str, ...]
    uses: tuple[Uses, ...] = ()

    def at_context(self, context: float) -> Path:
        """This path at a context: past 0 every step holds the KV fetch, so the KV figure becomes a need."""
        if not context > 0:
            return self
        return Path(f"{self.name}, context > 0", (*self.needs, KV),
                    tuple(u for u in self.uses if u.flag != KV))

    def system_needs(self) -> list[str]:
        """`needs` as `build_system` takes them: hardware figures by key, and `total_params`."""
        return [BY_FLAG[f].field for f in self.needs
                if f in BY_FLAG and (BY_FLAG[f] in HW_FIGURES or f == "--total-params")]


def missing(a: argparse.Namespace, key: str) -> bool:
    """True when a hardware figure (flops, hbm_bytes, hbm_bandwidth_bytes_per_s, price_usd_per_hour)
    was neither in a preset/file nor given by its flag: outputs that use it are null, with a reason."""
    return key in getattr(a, "missing_hw", ())


def missing_reason(key: str, what: str) -> str:
    """'<what> needs <figure> (<flag> or a <hardware|model> preset)': the reason beside a null output."""
    f = BY_FIELD[key]
    return f"{what} needs {f.figure} ({f.flag} or a {f.group} preset)"


def null_missing(data: dict[str, Any], a: argparse.Namespace, uses: Iterable[Uses]) -> list[str]:
    """Sets to null every output that uses a hardware figure left out; returns the reasons, in order.

    The other optional inputs (the KV figure, the links, the active parameters) leave their outputs
    undefined where they are computed; the subcommand says why there.
    """
    reasons = []
    for u in uses:
        f = BY_FLAG.get(u.flag)
        if f not in HW_FIGURES or not missing(a, f.field):
            continue
        key = f.field
        for path in u.outputs:
            *parents, last = path.split(".")
            for holder in _holders(data, parents):
                holder[int(last) if isinstance(holder, list) else last] = None
        reasons.append(missing_reason(key, u.label or " and ".join(p.split(".")[-1] for p in u.outputs)))
    return reasons


def _holders(data: Any, parents: Sequence[str]) -> list[Any]:
    """The containers a dotted path's parents lead to (`*`: every element of a list)."""
    found = [data]
    for part in parents:
        found = [x for item in found
                 for x in (item if part == "*" else [item[int(part)] if isinstance(item, list) else item[part]])]
    return found


# ---------------------------------------------------------------- shared flags → System

def _load(kind: str, value: str) -> Any:
    flag = "--hardware" if kind == "hardware" else "--model"
    try:
        return presets.load_spec(kind, value)
    except presets.PresetError as e:
        raise CLIError(f"{flag} {value}: {problems(e)}") from None
    except ValueError as e:
        raise CLIError(f"{flag}: {e}") from None
    except OSError as e:  # the built-in preset file itself is missing or unreadable
        raise CLIError(f"{flag} {value}: cannot read the built-in {kind} presets "
                       f"({e.strerror}: {e.filename}); give a YAML/JSON file or the flags instead") from None


def problems(e: presets.PresetError) -> str:
    """A preset error's first problem, and how many more there are."""
    return e.problems[0] + (f" (and {len(e.problems) - 1} more)" if len(e.problems) > 1 else "")


def read_capped(flag: str, path: str) -> bytes:
    """A user's file, read at most one byte past the preset size cap: the parser refuses it, and
    /dev/zero cannot fill memory."""
    try:
        with open(path, "rb") as f:
            return f.read(presets.MAX_FILE_BYTES + 1)
    except OSError as e:
        raise CLIError(f"{flag}: cannot read {path!r}: {e.strerror}") from None


def _spec_error(e: ValueError, fallback: str) -> CLIError:
    """A spec's range error, worded with the flag that set the field when there is one."""
    msg = str(e)
    for f in FLAGS:
        if f.field and f.group != "deployment" and re.search(rf"\.{f.field}\b", msg):
            return CLIError(f"{f.flag}: {msg}")
    return CLIError(f"{fallback}: {msg}")


def _override(a: argparse.Namespace, group: str, fields: dict[str, Any], skip: Iterable[str] = ()) -> None:
    """Every flag of `group` that was given replaces its spec field."""
    for f in FLAGS:
        if f.group == group and f.field and f.field not in skip and getattr(a, f.dest) is not None:
            fields[f.field] = getattr(a, f.dest)


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
        absent = [f for f in HW_FIGURES if getattr(a, f.dest) is None]
        missing_flags = [f.flag for f in absent if f.field in needs]
        if missing_flags:
            raise CLIError(f"--hardware is missing: give a chip preset (see `python -m model presets`) "
                           f"or {' '.join(missing_flags)}")
        a.missing_hw = tuple(f.field for f in absent)
        # Placeholders: fields this subcommand does not need; no output that uses them is reported.
        hw_fields.update(flops_bf16_per_s=1.0, hbm_bandwidth_bytes_per_s=1.0, hbm_bytes=1.0, price_usd_per_hour=1.0)
    _override(a, "hardware", hw_fields, skip=["flops"])
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
    _override(a, "model", m_fields, skip=["active_params"])
    if a.active_params is not None:
        m_fields["active_params"] = a.active_params
    if a.sparsity is not None:
        m_fields["active_params"] = m_fields["total_params"] / a.sparsity
    if "active_params" not in m_fields:
        m_fields["active_params"] = m_fields["total_params"]
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


def system_summary(s: System, a: argparse.Namespace) -> dict[str, Any]:
    """The `inputs` object: the system as used, null for each hardware figure not given."""
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
        out["not_given"] = [f.flag for f in HW_FIGURES if f.field in gone]
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
    out["unsourced"] = unsourced(s, a)
    return out


def unsourced(s: System, a: argparse.Namespace) -> list[str]:
    """Numbers from the user's own --hardware/--model file given without a source or date."""
    return [f"hardware.{f}" for f in presets.unsourced_fields(s.hardware)] + \
           [f"model.{f}" for f in presets.unsourced_fields(getattr(a, "model_spec", s.model))]
