"""Specs: hardware, model architecture, precision and deployment, as frozen dataclasses.

Every numeric field carries its unit in its name or in the field metadata, and a range that
`__post_init__` checks: a bad value raises ``ValueError`` naming the spec, the field, the value
and the allowed range. Values are SI (FLOP/s, bytes, bytes/s, seconds, USD).

A FLOP is one multiply or one add (vendor convention): a multiply-accumulate is 2 FLOPs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

# Bytes per element of each dtype the app knows.  fp16 and bf16 share vendor FLOP/s figures.
DTYPE_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5}
COMPUTE_DTYPES = ("bf16", "fp8", "fp4")
ATTENTION_KINDS = ("mha", "gqa", "mqa", "mla")
WINDOW_KINDS = ("sliding", "chunked")
MODES = ("lecture", "per-phase")
SPARSE_ATTENTION_KINDS = ("dense", "sqrt", "topk", "fraction")
STATUSES = ("shipping", "announced", "illustrative")

INF = math.inf


def num(unit: str, lo: float = 0.0, hi: float = INF, *, lo_open: bool = True,
        integer: bool = False, optional: bool = False, doc: str = "", default: Any = None):
    """A numeric spec field with its unit, range and description (used by validation and UI)."""
    meta = {"unit": unit, "lo": lo, "hi": hi, "lo_open": lo_open, "integer": integer,
            "optional": optional, "doc": doc, "kind": "number"}
    if optional or default is not None:
        return field(default=default, metadata=meta)
    return field(metadata=meta)


def choice(options: tuple[str, ...], default: str | None = None, *, doc: str = "",
           optional: bool = False):
    meta = {"options": options, "doc": doc, "kind": "choice", "optional": optional}
    if default is not None or optional:
        return field(default=default, metadata=meta)
    return field(metadata=meta)


def describe_range(meta: Mapping[str, Any]) -> str:
    lo, hi = meta["lo"], meta["hi"]
    what = "an integer" if meta["integer"] else "a number"
    lo_s = f"{'>' if meta['lo_open'] else '≥'} {lo:g}"
    if hi == INF:
        return f"{what} {lo_s}"
    return f"{what} {lo_s} and ≤ {hi:g}"


def check_number(owner: str, name: str, value: Any, meta: Mapping[str, Any]) -> float | int | None:
    """Return `value` as float/int if it fits the field's range, else raise ValueError."""
    if value is None:
        if meta.get("optional"):
            return None
        raise ValueError(f"{owner}.{name} is missing: it must be {describe_range(meta)} [{meta['unit']}]")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(str(value).strip())
        except ValueError:
            raise ValueError(f"{owner}.{name} = {value!r} is not a number: it must be "
                             f"{describe_range(meta)} [{meta['unit']}]") from None
    v = float(value)
    ok = math.isfinite(v) and (v > meta["lo"] if meta["lo_open"] else v >= meta["lo"]) and v <= meta["hi"]
    if ok and meta["integer"] and v != int(v):
        ok = False
    if not ok:
        raise ValueError(f"{owner}.{name} = {value!r} is out of range: it must be "
                         f"{describe_range(meta)} [{meta['unit']}]")
    return int(v) if meta["integer"] else v


def check_choice(owner: str, name: str, value: Any, meta: Mapping[str, Any]) -> str | None:
    if value is None and meta.get("optional"):
        return None
    if value not in meta["options"]:
        raise ValueError(f"{owner}.{name} = {value!r} is not allowed: choose one of "
                         f"{', '.join(meta['options'])}")
    return value


class _Spec:
    """Mixin: validate every field from its metadata; build from a plain dict."""

    def __post_init__(self) -> None:
        owner = type(self).__name__
        for f in fields(self):
            kind = f.metadata.get("kind")
            if kind == "number":
                object.__setattr__(self, f.name, check_number(owner, f.name, getattr(self, f.name), f.metadata))
            elif kind == "choice":
                object.__setattr__(self, f.name, check_choice(owner, f.name, getattr(self, f.name), f.metadata))
        self._check()

    def _check(self) -> None:  # cross-field rules, overridden where needed
        pass

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls) if f.name not in ("meta",)]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, name: str | None = None):
        """Build from a plain mapping; unknown keys raise ValueError naming them."""
        allowed = set(cls.field_names())
        unknown = sorted(set(d) - allowed)
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown field(s) {', '.join(unknown)}; "
                             f"allowed: {', '.join(sorted(allowed))}")
        kwargs = dict(d)
        if name is not None and "name" in allowed and "name" not in kwargs:
            kwargs["name"] = name
        missing = [f.name for f in fields(cls) if f.name in allowed and f.name not in kwargs
                   and f.default is MISSING and f.default_factory is MISSING]
        if missing:
            raise ValueError(f"{cls.__name__}: missing field(s) {', '.join(missing)}")
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "meta"
                and getattr(self, f.name) is not None}

    def with_(self, **changes: Any):
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class Hardware(_Spec):
    """One accelerator (a chip or GPU package — never a rack), with its scale-up domain size."""

    name: str
    flops_bf16_per_s: float = num("FLOP/s", doc="dense bf16 tensor FLOP/s per chip (1 FLOP = 1 multiply or 1 add)")
    hbm_bytes: float = num("B", doc="HBM capacity per chip")
    hbm_bandwidth_bytes_per_s: float = num("B/s", doc="HBM bandwidth per chip")
    price_usd_per_hour: float = num("USD/h", doc="rental price per chip-hour")
    scaleup_domain_chips: int = num("chips", 1, lo_open=False, integer=True, default=1,
                                    doc="chips in one scale-up (NVLink/ICI) domain")
    flops_fp8_per_s: float | None = num("FLOP/s", optional=True, doc="dense fp8 FLOP/s per chip")
    flops_fp4_per_s: float | None = num("FLOP/s", optional=True, doc="dense fp4 FLOP/s per chip")
    scaleup_bandwidth_bytes_per_s: float | None = num("B/s", optional=True,
                                                      doc="scale-up bandwidth per chip, one direction")
    scaleout_bandwidth_bytes_per_s: float | None = num("B/s", optional=True,
                                                       doc="scale-out (NIC) bandwidth per chip, one direction")
    power_w: float | None = num("W", optional=True, doc="board power per chip")
    status: str = choice(STATUSES, "shipping", doc="shipping, announced (figures may change) or illustrative")
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def flops(self, dtype: str) -> float:
        """Dense FLOP/s per chip at `dtype` (fp16 uses the bf16 figure)."""
        key = {"bf16": "flops_bf16_per_s", "fp16": "flops_bf16_per_s",
               "fp8": "flops_fp8_per_s", "fp4": "flops_fp4_per_s"}.get(dtype)
        if key is None:
            raise ValueError(f"compute dtype {dtype!r} is not allowed: choose one of {', '.join(COMPUTE_DTYPES)}")
        value = getattr(self, key)
        if value is None:
            have = [d for d in COMPUTE_DTYPES if getattr(self, f"flops_{d}_per_s") is not None]
            raise ValueError(f"{self.name} has no {dtype} FLOP/s figure; choose one of {', '.join(have)}")
        return value

    def compute_dtypes(self) -> list[str]:
        return [d for d in COMPUTE_DTYPES if getattr(self, f"flops_{d}_per_s") is not None]


@dataclass(frozen=True)
class ModelArch(_Spec):
    """A transformer's size and the shapes that set its KV cache and attention FLOPs."""

    name: str
    total_params: float = num("params", doc="all parameters (every expert); all are fetched each step")
    active_params: float = num("params", doc="parameters used per token")
    n_layers: int | None = num("layers", 1, lo_open=False, integer=True, optional=True)
    d_model: int | None = num("-", 1, lo_open=False, integer=True, optional=True, doc="hidden size")
    n_heads: int | None = num("heads", 1, lo_open=False, integer=True, optional=True, doc="query heads")
    n_kv_heads: int | None = num("heads", 1, lo_open=False, integer=True, optional=True,
                                 doc="key/value heads (GQA groups)")
    head_dim: int | None = num("-", 1, lo_open=False, integer=True, optional=True)
    attention: str = choice(ATTENTION_KINDS, "gqa", doc="mha, gqa, mqa or mla (latent KV)")
    kv_lora_rank: int | None = num("-", integer=True, optional=True, doc="MLA latent width")
    qk_rope_dim: int | None = num("-", 0, lo_open=False, integer=True, optional=True,
                                  doc="MLA decoupled RoPE key width")
    n_window_layers: int = num("layers", 0, lo_open=False, integer=True, default=0,
                               doc="layers whose attention is limited to a window or chunk")
    window_tokens: int | None = num("tokens", integer=True, optional=True,
                                    doc="window (sliding) or chunk (chunked) length")
    window_kind: str = choice(WINDOW_KINDS, "sliding")
    n_experts: int = num("experts", 0, lo_open=False, integer=True, default=0, doc="routed experts (0 = dense)")
    experts_per_token: int = num("experts", 0, lo_open=False, integer=True, default=0)
    n_shared_experts: int = num("experts", 0, lo_open=False, integer=True, default=0)
    n_moe_layers: int | None = num("layers", 0, lo_open=False, integer=True, optional=True)
    moe_intermediate_size: int | None = num("-", integer=True, optional=True, doc="expert FFN width")
    kv_bytes_per_token: float | None = num("B", 0, lo_open=False, optional=True,
                                           doc="override: KV bytes per token, all layers, used as is")
    native_weight_dtype: str | None = choice(tuple(DTYPE_BYTES), optional=True)
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def _check(self) -> None:
        n = type(self).__name__
        if self.active_params > self.total_params:
            raise ValueError(f"{n}.active_params = {self.active_params:g} is out of range: it must be "
                             f"≤ total_params = {self.total_params:g}")
        if self.n_kv_heads and self.n_heads and self.n_kv_heads > self.n_heads:
            raise ValueError(f"{n}.n_kv_heads = {self.n_kv_heads} is out of range: it must be "
                             f"≤ n_heads = {self.n_heads}")
        if self.attention == "mla" and self.kv_bytes_per_token is None and self.kv_lora_rank is None:
            raise ValueError(f"{n}.kv_lora_rank is missing: MLA attention needs the latent width")
        if self.n_window_layers and self.n_window_layers > (self.n_layers or 0):
            raise ValueError(f"{n}.n_window_layers = {self.n_window_layers} is out of range: it must be "
                             f"≤ n_layers = {self.n_layers}")
        if self.n_window_layers and self.window_tokens is None:
            raise ValueError(f"{n}.window_tokens is missing: {self.n_window_layers} windowed layers need it")
        if self.experts_per_token > self.n_experts:
            raise ValueError(f"{n}.experts_per_token = {self.experts_per_token} is out of range: it must be "
                             f"≤ n_experts = {self.n_experts}")

    @property
    def has_architecture(self) -> bool:
        """True when the shapes that set KV bytes and attention FLOPs are all given."""
        base = all(x is not None for x in (self.n_layers, self.n_heads, self.n_kv_heads, self.head_dim))
        if self.attention == "mla":
            return base and self.kv_lora_rank is not None
        return base

    @property
    def sparsity(self) -> float:
        """total / active parameters — the lecture's "sparsity" (≥ 1)."""
        return self.total_params / self.active_params

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    def with_sparsity(self, sparsity: float) -> ModelArch:
        """Same total parameters, active = total / sparsity."""
        s = check_number("ModelArch", "sparsity", sparsity, {"unit": "-", "lo": 1.0, "hi": INF,
                                                                 "lo_open": False, "integer": False})
        return replace(self, active_params=self.total_params / s)


@dataclass(frozen=True)
class Precision(_Spec):
    """Number formats: weights (stored and streamed), KV cache, and the matmul compute dtype."""

    weights: str = choice(tuple(DTYPE_BYTES), "bf16")
    kv: str = choice(tuple(DTYPE_BYTES), "bf16")
    compute: str = choice(COMPUTE_DTYPES, "bf16")

    @property
    def weight_bytes_per_param(self) -> float:
        return DTYPE_BYTES[self.weights]

    @property
    def kv_bytes_per_element(self) -> float:
        return DTYPE_BYTES[self.kv]


@dataclass(frozen=True)
class Deployment(_Spec):
    """How the model is run: chips per step, pipeline stages, efficiencies and options."""

    chips: float = num("chips", 1, lo_open=False, default=1.0,
                       doc="chips that work on one step in parallel (one pipeline stage), C")
    pipeline_stages: int = num("stages", 1, lo_open=False, integer=True, default=1, doc="P")
    pipeline_hop_s: float = num("s", 0, lo_open=False, default=0.0, doc="latency of one stage-to-stage hop")
    mfu: float = num("-", 0, 1, default=1.0, doc="compute efficiency (achieved / peak FLOP/s)")
    bw_util: float = num("-", 0, 1, default=1.0, doc="HBM bandwidth efficiency (achieved / peak)")
    tokens_per_step: float = num("tokens", 1, lo_open=False, default=1.0,
                                 doc="tokens accepted per sequence per step (MTP / speculative decoding)")
    mode: str = choice(MODES, "lecture", doc="lecture: max(compute, memory); per-phase: matmul then attention")
    sparse_attention: str = choice(SPARSE_ATTENTION_KINDS, "dense")
    sparse_param: float = num("-", 0, default=2048.0,
                              doc="sqrt: knee context; topk: tokens read; fraction: share of context read")

    def _check(self) -> None:
        if self.sparse_attention == "fraction" and self.sparse_param > 1:
            raise ValueError(f"Deployment.sparse_param = {self.sparse_param:g} is out of range: with "
                             "sparse_attention='fraction' it must be a number > 0 and ≤ 1")
