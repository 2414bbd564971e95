"""The decode-step roofline: one new token for each of B sequences, and the prefill pass.

Notation (docs/design.md "The physics", the lecture §1, Pope et al. 2022):
  F   dense FLOP/s per chip at the compute dtype (1 FLOP = 1 multiply or 1 add), × MFU
  bw  HBM bytes/s per chip, × bandwidth utilisation          M   HBM bytes per chip
  C   chips working on one step (one pipeline stage)         P   pipeline stages
  W   weight bytes = total_params × bytes/param              Na  active params per token
  B   sequences in the batch (each gets one new token)       T   context length [tokens]
  kv(T) KV bytes one sequence reads per decode step, all layers, at the KV dtype

  t_weights = W / (C·bw)            t_kv   = B·kv(T) / (C·bw)
  t_matmul  = 2·Na·B / (C·F)        t_attn = B·attn_flops(T) / (C·F)
  lecture   : t_step = max(t_matmul, t_weights + t_kv, t_comm)
  per-phase : t_step = max(t_matmul, t_weights, t_comm) + max(t_attn, t_kv)

Every function broadcasts numpy arrays: pass batch, context, chips … as arrays of compatible
shapes and get arrays back — a whole curve or map per call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .specs import MODES, Deployment, Hardware, ModelArch, Precision

BOUNDS = ("compute", "weights", "kv", "comm", "attention")  # tie order: first wins

ArrayLike = Any


# ---------------------------------------------------------------- single relations (pvlib style)

def weight_fetch_time(weight_bytes: ArrayLike, chips: ArrayLike, hbm_bandwidth: ArrayLike) -> np.ndarray:
    """Time to stream every weight from HBM once, split over `chips`.

    t_weights = W / (C · bw) — the latency floor (lecture §1.2, §1.7).

    weight_bytes [B]; chips [-]; hbm_bandwidth [B/s] per chip.  Returns [s].
    """
    return np.asarray(weight_bytes, float) / (np.asarray(chips, float) * hbm_bandwidth)


def kv_fetch_time(batch: ArrayLike, kv_read_bytes: ArrayLike, chips: ArrayLike,
                  hbm_bandwidth: ArrayLike) -> np.ndarray:
    """Time to read every sequence's KV cache once: t_kv = B · kv(T) / (C · bw).

    batch [-]; kv_read_bytes [B] per sequence per step; chips [-]; hbm_bandwidth [B/s].  Returns [s].
    """
    return np.asarray(batch, float) * kv_read_bytes / (np.asarray(chips, float) * hbm_bandwidth)


def matmul_time(active_params: ArrayLike, batch: ArrayLike, chips: ArrayLike, flops: ArrayLike) -> np.ndarray:
    """Weight-matmul time: t_matmul = 2 · Na · B / (C · F).

    2 FLOPs (one multiply, one add) per active parameter per token (Kaplan et al. 2020).
    active_params [-]; batch [-]; chips [-]; flops [FLOP/s] per chip.  Returns [s].
    """
    return 2.0 * np.asarray(active_params, float) * batch / (np.asarray(chips, float) * flops)


def attention_time(attn_flops_per_seq: ArrayLike, batch: ArrayLike, chips: ArrayLike,
                   flops: ArrayLike) -> np.ndarray:
    """Attention (QKᵀ and AV) time: t_attn = B · attn_flops(T) / (C · F).  Returns [s]."""
    return np.asarray(batch, float) * attn_flops_per_seq / (np.asarray(chips, float) * flops)


def combine(t_matmul, t_attn, t_weights, t_kv, t_comm, mode: str = "lecture") -> np.ndarray:
    """Step time from its terms.

    lecture  : max(t_matmul, t_weights + t_kv, t_comm)  — the lecture's single roofline; attention
               compute is left out, as the lecture does.
    per-phase: max(t_matmul, t_weights, t_comm) + max(t_attn, t_kv) — the weight matmuls, then
               attention, each its own roofline.
    """
    if mode == "lecture":
        return np.maximum(np.maximum(t_matmul, t_weights + t_kv), t_comm)
    if mode == "per-phase":
        return np.maximum(np.maximum(t_matmul, t_weights), t_comm) + np.maximum(t_attn, t_kv)
    raise ValueError(f"mode {mode!r} is not allowed: choose one of {', '.join(MODES)}")


def bound_of(t_matmul, t_attn, t_weights, t_kv, t_comm, mode: str = "lecture") -> np.ndarray:
    """Which term sets the step: compute, weights, kv, comm (or attention in per-phase mode).

    lecture: the largest of (matmul, weights + kv, comm); when memory wins it is called by its
    larger part (weights or kv).  per-phase: the largest single term.  Ties go to the first in
    BOUNDS order.
    """
    t_matmul, t_attn, t_weights, t_kv, t_comm = np.broadcast_arrays(
        *(np.asarray(t, float) for t in (t_matmul, t_attn, t_weights, t_kv, t_comm)))
    labels = np.array(BOUNDS)
    if mode == "lecture":
        mem = t_weights + t_kv
        idx = np.where(t_matmul >= np.maximum(mem, t_comm), 0,
                       np.where(mem >= t_comm, np.where(t_weights >= t_kv, 1, 2), 3))
    elif mode == "per-phase":
        idx = np.argmax(np.stack([t_matmul, t_weights, t_kv, t_comm, t_attn]), axis=0)
    else:
        raise ValueError(f"mode {mode!r} is not allowed: choose one of {', '.join(MODES)}")
    return labels[idx]


def hbm_drain_time(hbm_bytes: ArrayLike, hbm_bandwidth: ArrayLike) -> np.ndarray:
    """Time to read all of HBM once: M / bw — the lecture's ~20 ms "train" (§1.4).  Returns [s]."""
    return np.asarray(hbm_bytes, float) / hbm_bandwidth


def balance_batch(flops: ArrayLike, hbm_bandwidth: ArrayLike, weight_bytes: ArrayLike,
                  active_params: ArrayLike, kv_read_bytes: ArrayLike = 0.0) -> np.ndarray:
    """Batch where matmul time equals memory time (lecture mode, t_comm = 0).

    No KV:      B* = F · W / (2 · Na · bw)   — with weights and FLOP/s at one precision this is
                (F/bw) × (total/active), the lecture's "≈ 300 × sparsity" (§2.2).
    With KV:    B*(T) = (W/bw) / (2·Na/F − kv(T)/bw).
    Independent of chip count (C cancels) and of model scale at fixed sparsity.
    Returns [-]; +inf where 2·Na/F ≤ kv(T)/bw (memory-bound at every batch).
    """
    flops = np.asarray(flops, float)
    denom = 2.0 * np.asarray(active_params, float) / flops - np.asarray(kv_read_bytes, float) / hbm_bandwidth
    num = np.asarray(weight_bytes, float) / hbm_bandwidth
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, num / np.where(denom > 0, denom, 1.0), np.inf)


# ---------------------------------------------------------------- KV cache and attention shapes

def read_tokens(context: ArrayLike, kind: str = "dense", param: float = 2048.0) -> np.ndarray:
    """Tokens of context a full-attention layer reads per decode step.

    dense   : T
    sqrt    : T up to the knee K = param, then √(K·T) — the lecture's rough "square root in this
              term" for sparse attention (§1.1; no formula was given there).
    topk    : min(T, k), k = param (a fixed-budget selector, e.g. DeepSeek sparse attention's 2048)
    fraction: f·T, f = param
    Storage is not changed by any of these; only what is read.
    """
    t = np.asarray(context, float)
    if kind == "dense":
        return t
    if kind == "sqrt":
        return np.where(t <= param, t, np.sqrt(param * np.maximum(t, 0.0)))
    if kind == "topk":
        return np.minimum(t, param)
    if kind == "fraction":
        return t * param
    raise ValueError(f"sparse attention {kind!r} is not allowed: choose dense, sqrt, topk or fraction")


@dataclass(frozen=True)
class KVLayout:
    """KV bytes per token, split into full-attention layers and windowed/chunked layers.

    full_bytes_per_token   : bytes per token over all full-attention layers [B]
    window_bytes_per_token : bytes per token over all windowed layers [B] (they stop growing at
                             `window_tokens`)
    attn_flops_full / attn_flops_window : attention FLOPs per decode token per attended context
                             token, summed over those layers [FLOP]
    prefill_flops_full / prefill_flops_window : the same in prefill, where it differs (MLA: prefill
                             attends in the decompressed form; None = as in decode)
    """

    full_bytes_per_token: float
    window_bytes_per_token: float = 0.0
    window_tokens: float = np.inf
    attn_flops_full: float = 0.0
    attn_flops_window: float = 0.0
    prefill_flops_full: float | None = None
    prefill_flops_window: float | None = None

    @classmethod
    def from_model(cls, model: ModelArch, kv_bytes_per_element: float) -> KVLayout:
        """Derive from the architecture, or take the model's `kv_bytes_per_token` override.

        GQA/MHA/MQA: per layer 2 · kv_heads · head_dim · bytes (K and V).
        MLA:         per layer (kv_lora_rank + qk_rope_dim) · bytes (the latent and the shared
                     RoPE key are what is cached; DeepSeek-V2 §2.1).
        Attention FLOPs per attended token per layer: GQA 4 · heads · head_dim (QKᵀ and AV, a
        multiply and an add each); MLA in decode, with weight absorption (attending over the cached
        latent), 2·heads·(r + rope) + 2·heads·r; MLA in prefill, decompressed to per-head K and V as
        serving engines run it (compute-bound there, so the smaller form wins; DeepSeek-V2 §2.1),
        2·heads·(head_dim + rope) + 2·heads·head_dim, with head_dim = qk_nope = v_head_dim (128 for
        DeepSeek-V2/V3 and Kimi K2) — 3.4× fewer FLOPs than the absorbed form for DeepSeek-V3.
        """
        flops_full = flops_win = 0.0
        pre_full = pre_win = None
        n_win = model.n_window_layers
        if model.has_architecture:
            n_full = model.n_layers - n_win
            if model.attention == "mla":
                rope = model.qk_rope_dim or 0
                per_layer = (model.kv_lora_rank + rope) * kv_bytes_per_element
                f_layer = 2.0 * model.n_heads * (model.kv_lora_rank + rope) + 2.0 * model.n_heads * model.kv_lora_rank
                p_layer = 2.0 * model.n_heads * (model.head_dim + rope) + 2.0 * model.n_heads * model.head_dim
                pre_full, pre_win = n_full * p_layer, n_win * p_layer
            else:
                per_layer = 2.0 * model.n_kv_heads * model.head_dim * kv_bytes_per_element
                f_layer = 4.0 * model.n_heads * model.head_dim
            flops_full, flops_win = n_full * f_layer, n_win * f_layer
        if model.kv_bytes_per_token is not None:
            # Override: the bytes are used as is, all read as full attention (the figure is the
            # user's); the attention FLOPs still come from the shapes, so windowed or chunked
            # layers stop growing at their window whatever the byte figure says.
            window = float(model.window_tokens) if n_win and model.has_architecture else np.inf
            return cls(float(model.kv_bytes_per_token), 0.0, window, flops_full, flops_win, pre_full, pre_win)
        if not model.has_architecture:
            raise ValueError(f"model {model.name!r} has neither its attention shapes nor a "
                             "kv_bytes_per_token figure; give one (CLI: --kv-bytes-per-token)")
        return cls(n_full * per_layer, n_win * per_layer,
                   float(model.window_tokens) if n_win else np.inf, flops_full, flops_win, pre_full, pre_win)

    @property
    def bytes_per_token(self) -> float:
        """KV bytes per token over all layers while the context is within every window."""
        return self.full_bytes_per_token + self.window_bytes_per_token

    def stored_bytes(self, context: ArrayLike) -> np.ndarray:
        """KV bytes held in HBM for one sequence at context T [B]."""
        t = np.asarray(context, float)
        return self.full_bytes_per_token * t + self.window_bytes_per_token * np.minimum(t, self.window_tokens)

    def read_bytes(self, context: ArrayLike, sparse: str = "dense", param: float = 2048.0) -> np.ndarray:
        """KV bytes one sequence reads per decode step at context T [B]."""
        t = np.asarray(context, float)
        return (self.full_bytes_per_token * read_tokens(t, sparse, param)
                + self.window_bytes_per_token * np.minimum(t, self.window_tokens))

    def attn_flops(self, context: ArrayLike, sparse: str = "dense", param: float = 2048.0) -> np.ndarray:
        """Attention FLOPs for one new token at context T [FLOP] (the sparse selector's own cost left out)."""
        t = np.asarray(context, float)
        return (self.attn_flops_full * read_tokens(t, sparse, param)
                + self.attn_flops_window * np.minimum(t, self.window_tokens))

    def context_for_read(self, target_bytes: ArrayLike, sparse: str = "dense", param: float = 2048.0,
                         t_max: float = 1e13) -> np.ndarray:
        """Smallest context T with read_bytes(T) ≥ target (vectorised bisection in log space).

        +inf where the read never reaches the target (windowed-only models, top-k selection).
        """
        target = np.asarray(target_bytes, float)
        if sparse == "dense" and self.window_bytes_per_token == 0.0:  # closed form
            with np.errstate(divide="ignore"):
                return np.where(self.full_bytes_per_token > 0, target / self.full_bytes_per_token, np.inf)
        reach = self.read_bytes(t_max, sparse, param)
        lo = np.full(target.shape, -3.0)
        hi = np.full(target.shape, np.log10(t_max))
        for _ in range(64):  # fixed count: 64 halvings of 16 decades ≈ 1e-18 relative
            mid = 0.5 * (lo + hi)
            above = self.read_bytes(10.0 ** mid, sparse, param) >= target
            hi = np.where(above, mid, hi)
            lo = np.where(above, lo, mid)
        out = 10.0 ** hi
        out = np.where(target <= 0, 0.0, out)
        return np.where(target > reach, np.inf, out)


# ---------------------------------------------------------------- a whole serving system

@dataclass(frozen=True)
class System:
    """Hardware × model × precision × deployment, resolved to the roofline's scalars."""

    hardware: Hardware
    model: ModelArch
    precision: Precision = Precision()
    deployment: Deployment = Deployment()

    @property
    def flops(self) -> float:
        """Effective FLOP/s per chip at the compute dtype: peak × MFU."""
        return self.hardware.flops(self.precision.compute) * self.deployment.mfu

    @property
    def hbm_bandwidth(self) -> float:
        """Effective HBM bytes/s per chip: peak × bandwidth utilisation."""
        return self.hardware.hbm_bandwidth_bytes_per_s * self.deployment.bw_util

    @property
    def weight_bytes(self) -> float:
        return self.model.total_params * self.precision.weight_bytes_per_param

    @property
    def kv(self) -> KVLayout:
        return KVLayout.from_model(self.model, self.precision.kv_bytes_per_element)

    def kv_read(self, context: ArrayLike) -> np.ndarray:
        d = self.deployment
        return self.kv.read_bytes(context, d.sparse_attention, d.sparse_param)

    def with_(self, **changes: Any) -> System:
        """Change any field of any spec: hardware/model/precision/deployment fields by name."""
        parts = {"hardware": {}, "model": {}, "precision": {}, "deployment": {}}
        for k, v in changes.items():
            for part in ("deployment", "precision", "model", "hardware"):
                if k in type(getattr(self, part)).field_names():
                    parts[part][k] = v
                    break
            else:
                raise ValueError(f"unknown setting {k!r}")
        return System(*(replace(getattr(self, p), **c) if c else getattr(self, p) for p, c in parts.items()))


@dataclass(frozen=True)
class ChunkedPrefill:
    """The prompt work each sequence's decode step carries in aggregated serving (chunked prefill).

    In steady state a sequence finishes every O/a steps (a = tokens per step) and a new prompt of I
    tokens takes its slot, so each step prefills, per sequence in the batch, over request classes i
    (Iᵢ input and Oᵢ output tokens, a share sᵢ of requests):

        prompt_tokens   x = a · Σ sᵢ·Iᵢ / Σ sᵢ·Oᵢ                 [tokens]
        matmul_flops      = 2 · Na · x                             [FLOP]
        attn_flops        = a · Σ sᵢ·A(Iᵢ) / Σ sᵢ·Oᵢ               [FLOP]  A = prefill_attention_flops
        kv_write_bytes    = a · Σ sᵢ·kv_stored(Iᵢ) / Σ sᵢ·Oᵢ       [B]

    The prompts' matmuls share the step's weight read (one pass carries both, as chunked-prefill
    engines run it), so they add compute and KV writes to the step, not weight traffic:

        t_matmul += B·matmul_flops / (C·F)
        lecture  : t_matmul += B·attn_flops / (C·F)   (a prompt's attention is compute, as in `prefill`)
        per-phase: t_attn   += B·attn_flops / (C·F)
        t_kv     += B·kv_write_bytes / (C·bw)

    and B·(1 + x) tokens per step pass through the layout's collectives (`tokens`).
    """

    prompt_tokens: float
    matmul_flops: float
    attn_flops: float
    kv_write_bytes: float

    def tokens(self, batch: ArrayLike) -> np.ndarray:
        """Tokens one step moves through the layers: B decode tokens and B·x prompt tokens."""
        return np.asarray(batch, float) * (1.0 + self.prompt_tokens)

    def step_terms(self, batch: ArrayLike, chips: ArrayLike, flops: ArrayLike, hbm_bandwidth: ArrayLike,
                   mode: str = "lecture") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(matmul, attention, KV) time [s] the prompts add to a step of B sequences on C chips."""
        b, c = np.asarray(batch, float), np.asarray(chips, float)
        mm, attn = b * self.matmul_flops / (c * flops), b * self.attn_flops / (c * flops)
        kv = b * self.kv_write_bytes / (c * hbm_bandwidth)
        return (mm + attn, np.zeros_like(attn), kv) if mode == "lecture" else (mm, attn, kv)


def chunked_prefill(system: System, input_tokens: ArrayLike, output_tokens: ArrayLike,
                    shares: ArrayLike | None = None) -> ChunkedPrefill:
    """The `ChunkedPrefill` of a traffic of request classes (Iᵢ, Oᵢ, share sᵢ; equal shares if None)."""
    I = np.atleast_1d(np.asarray(input_tokens, float))
    O = np.atleast_1d(np.asarray(output_tokens, float))
    s = np.ones(I.shape) if shares is None else np.atleast_1d(np.asarray(shares, float))
    if not (I.shape == O.shape == s.shape) or I.ndim != 1:
        raise ValueError("input tokens, output tokens and shares must be lists of one length")
    if np.any(~np.isfinite(I)) or np.any(I < 1) or np.any(~np.isfinite(O)) or np.any(O < 1):
        raise ValueError("input and output tokens must be finite numbers ≥ 1")
    if np.any(~np.isfinite(s)) or np.any(s <= 0):
        raise ValueError("shares must be finite numbers > 0")
    kv = system.kv
    per_step = system.deployment.tokens_per_step / float(np.sum(s * O))    # a / Σ sᵢ·Oᵢ
    x = per_step * float(np.sum(s * I))
    return ChunkedPrefill(x, 2.0 * system.model.active_params * x,
                          per_step * float(np.sum(s * prefill_attention_flops(kv, I))),
                          per_step * float(np.sum(s * kv.stored_bytes(I))))


@dataclass(frozen=True)
class StepResult:
    """Arrays (all of one broadcast shape) describing a decode step; SI units."""

    batch: np.ndarray
    context: np.ndarray
    chips: np.ndarray
    t_matmul_s: np.ndarray
    t_attn_s: np.ndarray
    t_weights_s: np.ndarray
    t_kv_s: np.ndarray
    t_comm_s: np.ndarray
    t_hops_s: np.ndarray
    t_step_s: np.ndarray            # per-token latency: the step (all stages) plus pipeline hops
    bound: np.ndarray
    tokens_per_s_per_user: np.ndarray
    tokens_per_s: np.ndarray        # one replica (C·P chips)
    tokens_per_s_per_chip: np.ndarray
    usd_per_mtok: np.ndarray
    hbm_bytes_per_chip: np.ndarray
    fits: np.ndarray
    joules_per_token: np.ndarray    # nan when the chip's power is unknown

    ROW_KEYS = ("batch", "context", "t_matmul_s", "t_attn_s", "t_weights_s", "t_kv_s", "t_comm_s",
                "t_step_s", "bound", "tokens_per_s_per_user", "tokens_per_s", "tokens_per_s_per_chip",
                "usd_per_mtok", "hbm_bytes_per_chip", "fits")

    def rows(self, keys: tuple[str, ...] = ROW_KEYS) -> list[dict[str, Any]]:
        """One dict per point (flattened), plain Python values."""
        cols = {k: np.ravel(getattr(self, k)) for k in keys}
        n = len(next(iter(cols.values())))
        return [{k: cols[k][i].item() for k in keys} for i in range(n)]


def decode_step(system: System, batch: ArrayLike, context: ArrayLike = 0.0, *,
                chips: ArrayLike | None = None, t_comm: ArrayLike = 0.0,
                prefill: ChunkedPrefill | None = None) -> StepResult:
    """Decode step for B sequences at context T on `system` (arrays broadcast).

    With P pipeline stages, `batch` is the micro-batch: P micro-batches of B are in flight, each
    stage holds W/P of the weights, and one token's latency is the P stage times (which add up
    to the whole-model step below) plus P hops.  KV per chip is unchanged by P (lecture §1.6).

    tokens/s/user = tokens_per_step / t_step        tokens/s = P·B·tokens_per_step / t_step
    $/Mtok        = C·P·price/3600 · t_step / (P·B·tokens_per_step) · 1e6
    HBM per chip  = (W + P·B·kv_stored(T)) / (C·P)

    `t_comm` is the step's communication term [s] (cluster.layout_comm_time); `prefill` adds the
    prompts prefilled in chunks inside the step (aggregated serving; see `ChunkedPrefill`), so the
    step's time and $/Mtok then carry the prompts' work and the tokens counted stay output tokens.
    """
    c = np.asarray(system.deployment.chips if chips is None else chips, float)
    if np.any(~np.isfinite(c)) or np.any(c < 1):
        raise ValueError("chips must be ≥ 1")
    b = np.asarray(batch, float)
    if np.any(~np.isfinite(b)) or np.any(b < 1):
        raise ValueError("batch must be a finite number ≥ 1")
    t = np.asarray(context, float)
    if np.any(~np.isfinite(t)) or np.any(t < 0):
        raise ValueError("context must be a finite number ≥ 0")
    return _decode_step(system, b, t, c, t_comm, prefill)


def _decode_step(system: System, b: np.ndarray, t: np.ndarray, c: np.ndarray, t_comm: ArrayLike,
                 prefill: ChunkedPrefill | None = None) -> StepResult:
    """decode_step without input checks (solvers probe fractional batches below 1).

    Each term is computed on its inputs' own shapes, scalar constants folded first, and only
    then broadcast (views), so a B × T grid costs a few full-size passes.
    """
    d, hw = system.deployment, system.hardware
    P = d.pipeline_stages
    F, bw = system.flops, system.hbm_bandwidth
    kv = system.kv if np.any(t > 0) else KVLayout(0.0)
    cF, cbw = c * F, c * bw                                   # shape of c
    kv_read_per_chip = kv.read_bytes(t, d.sparse_attention, d.sparse_param) / cbw   # shape of t × c
    attn_per_chip = kv.attn_flops(t, d.sparse_attention, d.sparse_param) / cF

    t_matmul = (2.0 * system.model.active_params / cF) * b    # matmul_time, folded
    t_weights = system.weight_bytes / cbw                      # weight_fetch_time
    t_kv = b * kv_read_per_chip                                # kv_fetch_time
    t_attn = b * attn_per_chip                                 # attention_time
    if prefill is not None:                                    # the chunked prompts ride on the step
        pf_matmul, pf_attn, pf_kv = prefill.step_terms(b, c, F, bw, d.mode)
        t_matmul, t_attn, t_kv = t_matmul + pf_matmul, t_attn + pf_attn, t_kv + pf_kv
    t_comm_arr = np.asarray(t_comm, float)
    no_comm = t_comm_arr.ndim == 0 and float(t_comm_arr) == 0.0
    if d.mode == "lecture" and no_comm:
        mem = t_weights + t_kv
        t_step = np.maximum(t_matmul, mem)
        # bound codes: 0 compute, 1 weights, 2 kv (ties: compute, then weights)
        codes = np.where(t_matmul >= mem, 0, np.where(t_weights >= t_kv, 1, 2)).astype(np.int8)
        bound = np.asarray(BOUNDS)[codes]
    else:
        t_step = combine(t_matmul, t_attn, t_weights, t_kv, t_comm_arr, d.mode)
        bound = bound_of(t_matmul, t_attn, t_weights, t_kv, t_comm_arr, d.mode)
    hop = P * d.pipeline_hop_s if P > 1 else 0.0
    if hop:
        t_step = t_step + hop

    tps_user = d.tokens_per_step / t_step
    tps = (P * b) * tps_user
    usd = (c * P * hw.price_usd_per_hour / 3600.0 * 1e6) / tps
    hbm = (system.weight_bytes + (P * b) * kv.stored_bytes(t)) / (c * P)
    fits = hbm <= hw.hbm_bytes
    joules = (c * P * (np.nan if hw.power_w is None else hw.power_w)) / tps
    out = np.broadcast_arrays(b, t, c, t_matmul, t_attn, t_weights, t_kv, t_comm_arr, t_step, bound,
                              tps_user, tps, tps / (c * P), usd, hbm, fits, joules)
    shape = out[0].shape
    b_, t_, c_, mm, at, w, kvt, cm, st_, bd, tu, tp, tc, us, hb, ft, jl = out
    return StepResult(b_, t_, c_, mm, at, w, kvt, cm, np.full(shape, hop), st_, bd, tu, tp, tc, us, hb, ft, jl)


def max_batch_that_fits(system: System, context: ArrayLike, chips: ArrayLike | None = None) -> np.ndarray:
    """Largest micro-batch B whose weights + KV fit in HBM: (C·P·M − W) / (P·kv_stored(T)).

    Returns [-] (not rounded); 0 where the weights alone do not fit; +inf at context 0.
    """
    d = system.deployment
    c = np.asarray(d.chips if chips is None else chips, float)
    P = d.pipeline_stages
    room = c * P * system.hardware.hbm_bytes - system.weight_bytes
    kv = system.kv if np.any(np.asarray(context, float) > 0) else KVLayout(0.0)   # context 0: no KV figure needed
    per_seq = P * kv.stored_bytes(context)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(per_seq > 0, room / np.where(per_seq > 0, per_seq, 1.0), np.inf)
    return np.where(room > 0, out, 0.0)


def system_balance_batch(system: System, context: ArrayLike = 0.0) -> np.ndarray:
    """B*(T) for `system` (lecture mode closed form; see `balance_batch`)."""
    kv_read = system.kv_read(context) if np.any(np.asarray(context) > 0) else 0.0
    return balance_batch(system.flops, system.hbm_bandwidth, system.weight_bytes,
                         system.model.active_params, kv_read)


def context_never_compute_bound(system: System) -> float:
    """Context past which decode is memory-bound at every batch: kv(T) = 2·Na·bw / F.

    Full attention: T = 2·Na·bw / (F · kv_per_token).  +inf if the KV read never gets there.
    """
    target = 2.0 * system.model.active_params * system.hbm_bandwidth / system.flops
    d = system.deployment
    return float(system.kv.context_for_read(target, d.sparse_attention, d.sparse_param))


def kv_crossover_context(system: System, batch: ArrayLike) -> np.ndarray:
    """Context where the batch's KV fetch equals the weight fetch: B · kv(T) = W.

    Full attention: T× = W / (B · kv_per_token).  Returns [tokens], +inf if never.
    """
    d = system.deployment
    target = system.weight_bytes / np.asarray(batch, float)
    return system.kv.context_for_read(target, d.sparse_attention, d.sparse_param)


# ---------------------------------------------------------------- prefill and whole requests

def _causal_attended(n_end: ArrayLike, n_start: ArrayLike, window: float) -> np.ndarray:
    """Σ_{p = n_start}^{n_end − 1} min(p, window): context tokens attended while prefilling."""
    def s(n):
        n = np.asarray(n, float)
        w = window
        inside = n * (n - 1.0) / 2.0
        if np.isinf(w):
            return inside
        return np.where(n <= w, inside, w * (w - 1.0) / 2.0 + (n - w) * w)
    return s(n_end) - s(n_start)


@dataclass(frozen=True)
class PrefillResult:
    t_compute_s: np.ndarray
    t_memory_s: np.ndarray
    t_prefill_s: np.ndarray          # time to first token for the batch's prompts
    bound: np.ndarray                # "compute" or "memory" ("comm" where a given t_comm exceeds both)
    usd_per_mtok_input: np.ndarray   # per prompt token actually computed


def prefill_attention_flops(kv: KVLayout, prompt_tokens: ArrayLike, cached_tokens: ArrayLike = 0.0) -> np.ndarray:
    """Attention FLOPs of prefilling tokens L0 … L − 1 of one prompt over the causal triangle [FLOP].

    Σ_{p = L0}^{L − 1} [f_full · p + f_window · min(p, window)], f the prefill FLOPs per attended
    token (KVLayout; MLA attends in the decompressed form here).
    """
    L = np.asarray(prompt_tokens, float)
    L0 = np.minimum(np.asarray(cached_tokens, float), L)
    f_full = kv.attn_flops_full if kv.prefill_flops_full is None else kv.prefill_flops_full
    f_win = kv.attn_flops_window if kv.prefill_flops_window is None else kv.prefill_flops_window
    return f_full * _causal_attended(L, L0, np.inf) + f_win * _causal_attended(L, L0, kv.window_tokens)


def prefill_combine(t_mm, t_at, t_w, t_kv, t_comm=0.0, mode: str = "lecture") -> np.ndarray:
    """A prefill pass's time from its terms [s].

    lecture  : max(t_matmul + t_attn, t_weights + t_kv, t_comm) — compute against memory; the
               pass's own attention counts as compute (it is most of a long prompt's FLOPs).
    per-phase: max(t_matmul, t_weights, t_comm) + max(t_attn, t_kv).
    With t_comm = 0 these are the pass's compute and memory rooflines alone.
    """
    if mode == "lecture":
        return np.maximum(np.maximum(t_mm + t_at, t_w + t_kv), t_comm)
    if mode == "per-phase":
        return np.maximum(np.maximum(t_mm, t_w), t_comm) + np.maximum(t_at, t_kv)
    raise ValueError(f"mode {mode!r} is not allowed: choose one of {', '.join(MODES)}")


def prefill(system: System, prompt_tokens: ArrayLike, batch: ArrayLike = 1.0,
            cached_tokens: ArrayLike = 0.0, *, chips: ArrayLike | None = None,
            t_comm: ArrayLike = 0.0) -> PrefillResult:
    """One prefill pass over B prompts of L tokens, the first `cached_tokens` already in cache.

    FLOPs  = B · [2·Na·(L − L0) + attention over the causal triangle from L0 to L]
    bytes  = W (once per pass) + B · [kv read of the cached prefix + kv written for the new tokens]
    KV produced inside the pass stays on chip (flash attention; lecture §2.6), so the pass's own
    attention adds FLOPs, not HBM reads.  Time = max(compute, memory) in lecture mode, or the
    matmul and attention phases each on their own roofline in per-phase mode (`prefill_combine`);
    `t_comm` [s], the pass's communication (cluster.layout_comm_time of its B·(L − L0) tokens),
    is a third roofline term, 0 unless given.
    """
    d, hw = system.deployment, system.hardware
    c = np.asarray(d.chips if chips is None else chips, float)
    L = np.asarray(prompt_tokens, float)
    L0 = np.minimum(np.asarray(cached_tokens, float), L)
    b = np.asarray(batch, float)
    if np.any(L < 1) or np.any(b < 1) or np.any(L0 < 0):
        raise ValueError("prompt tokens and batch must be ≥ 1, cached tokens ≥ 0")
    kv = system.kv
    F, bw = system.flops, system.hbm_bandwidth
    new = L - L0
    attn = prefill_attention_flops(kv, L, L0)
    t_mm = b * 2.0 * system.model.active_params * new / (c * F)
    t_at = b * attn / (c * F)
    t_w = system.weight_bytes / (c * bw)
    t_kv = b * (kv.read_bytes(L0) + kv.stored_bytes(L) - kv.stored_bytes(L0)) / (c * bw)
    t = prefill_combine(t_mm, t_at, t_w, t_kv, t_comm, d.mode)
    t_comp, t_mem = t_mm + t_at, t_w + t_kv
    bound = np.where(t_comp >= t_mem, "compute", "memory")
    if np.any(np.asarray(t_comm, float) > 0):
        bound = np.where(t_comm > np.maximum(t_comp, t_mem), "comm", bound)
    with np.errstate(divide="ignore", invalid="ignore"):
        usd = c * d.pipeline_stages * hw.price_usd_per_hour / 3600.0 * t / (b * new) * 1e6
    return PrefillResult(t_comp, t_mem, t, bound, np.where(new > 0, usd, 0.0))


@dataclass(frozen=True)
class RequestResult:
    usd_prefill: np.ndarray
    usd_decode: np.ndarray
    usd_total: np.ndarray
    ttft_s: np.ndarray
    decode_s: np.ndarray
    latency_s: np.ndarray


def request(system: System, prompt_tokens: ArrayLike, output_tokens: ArrayLike, *,
            batch: ArrayLike = 1.0, prefill_batch: ArrayLike = 1.0,
            cache_hit_rate: ArrayLike = 0.0) -> RequestResult:
    """Cost and latency of one request: prefill of the uncached prompt, then decode.

    Decode is priced at the mean context L + O/2 over the output; a prefix-cache hit rate h
    skips h·L prompt tokens of prefill (holding the cache is not charged here).
    """
    L = np.asarray(prompt_tokens, float)
    O = np.asarray(output_tokens, float)
    h = np.asarray(cache_hit_rate, float)
    if np.any((h < 0) | (h > 1)):
        raise ValueError("cache hit rate must be in [0, 1]")
    pre = prefill(system, L, prefill_batch, h * L)
    usd_pre = pre.usd_per_mtok_input * (L - h * L) / 1e6
    dec = decode_step(system, batch, L + O / 2.0)
    usd_dec = dec.usd_per_mtok * O / 1e6
    ttft = pre.t_prefill_s
    decode_s = O / dec.tokens_per_s_per_user
    return RequestResult(usd_pre, usd_dec, usd_pre + usd_dec, ttft, decode_s, ttft + decode_s)


def auto_chips(hardware: Hardware, model: ModelArch, precision: Precision = Precision(),
               batch: float = 0.0, context: float = 0.0, headroom: float = 0.9) -> int:
    """Smallest power-of-two chip count whose HBM holds the weights plus the KV cache of `batch`
    sequences at `context` within `headroom`·M each, capped at the scale-up domain (what a serving
    engineer would try first).  Returns the domain size when even that is not enough.
    """
    w = model.total_params * precision.weight_bytes_per_param
    if batch > 0 and context > 0:
        w += batch * float(KVLayout.from_model(model, precision.kv_bytes_per_element).stored_bytes(context))
    domain = hardware.scaleup_domain_chips
    c = 1
    while c < domain and w / c > headroom * hardware.hbm_bytes:
        c *= 2
    return min(c, domain)
