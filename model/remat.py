"""Rematerialisation: training's activation memory against the compute spent to avoid storing it.

Lecture §2.13 (02:04:02).  Backpropagation needs every layer's activations; storing them all costs
memory linear in depth L ("can be the largest memory footprint during training").  Recomputing
them in the backward pass spends compute to save memory — the mirror image of the KV cache, which
spends memory to save compute.

Per-layer activation bytes — the assumption everything here rests on (Korthikanti et al. 2022,
"Reducing Activation Recomputation in Large Transformer Models", arXiv 2205.05198, §4): one GPT-style
layer (multi-head attention, a 4h MLP, two LayerNorms, dropout) with hidden size h, a heads,
sequence s and micro-batch b, 16-bit activations and 1-byte dropout masks, stores

    A = s·b·h · (34 + 5·a·s/h)  bytes   = attention 11·sbh + 5·a·s²·b, MLP 19·sbh, LayerNorms 4·sbh.

The 5·a·s²·b part is the s×s score, softmax and dropout tensors; flash attention (or their
"selective recomputation") does not keep them, leaving 34·sbh.  With tensor + sequence parallelism
over t chips every term is divided by t (their Table 2).  A layer's input — what a checkpoint
keeps — is x = 2·sbh bytes (16-bit).  MoE layers, SwiGLU MLPs and GQA change the constants; the
form (linear in s·b·h, one term per layer) stays.

Strategies (peak activation bytes over one training step, for L layers):
    store all              L·A                         compute 3·F_fwd (forward + 2× for backward)
    checkpoint every layer L·x + A                     compute 4·F_fwd (one extra forward)
    √L checkpoints         k·x + ⌈L/k⌉·A, k = ⌈√L⌉      compute 4·F_fwd (Chen et al. 2016, arXiv 1604.06174)
    reversible (RevNet)    4·x + A                     compute 4·F_fwd (Gomez et al. 2017, arXiv 1707.04585;
                                                        Reformer, Kitaev et al. 2020, arXiv 2001.04451)
RevNet: a layer maps (x, y) → (y + f(x), x) — a Feistel step — so its input is read back from its
output, y = z − f(x), and only the last pair (two streams of width h: 2·x) is kept; the backward
pass rebuilds one layer's input pair (another 2·x) and recomputes its internals (A) as it goes.
Forward FLOPs F_fwd = 2·Na per token plus causal attention; backward is twice the forward (6·N·D).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

ArrayLike = Any

SBH_BYTES = 34.0          # bytes per (token · hidden unit) per layer outside the s×s tensors (Korthikanti §4.1)
SCORE_BYTES = 5.0         # bytes per (head · token²) per layer: softmax 2 + its dropout mask 1 + dropout output 2
INPUT_BYTES = 2.0         # bytes per (token · hidden unit) of a layer input kept at a checkpoint (16-bit)
ATTENTION_KINDS = ("flash", "stored")
STRATEGIES = ("store all", "checkpoint every layer", "√L checkpoints", "reversible (RevNet)")
STRATEGY_KEYS = ("store", "every", "sqrt", "revnet")


def activation_bytes_per_layer(seq: ArrayLike, micro_batch: ArrayLike, hidden: ArrayLike, heads: ArrayLike,
                               attention: str = "flash", tensor_parallel: ArrayLike = 1) -> np.ndarray:
    """Activation bytes one layer keeps for its backward pass, per chip.

    stored: A = s·b·h·(34 + 5·a·s/h) / t      flash: A = 34·s·b·h / t      (Korthikanti et al. 2022, §4)

    seq [tokens]; micro_batch [sequences]; hidden h [-]; heads a [-]; tensor_parallel t [chips] (with
    sequence parallelism).  Returns [B].
    """
    s, b, h = (np.asarray(v, float) for v in (seq, micro_batch, hidden))
    t = np.asarray(tensor_parallel, float)
    if attention == "flash":
        per = SBH_BYTES * s * b * h
    elif attention == "stored":
        per = s * b * h * (SBH_BYTES + SCORE_BYTES * np.asarray(heads, float) * s / h)
    else:
        raise ValueError(f"attention {attention!r} is not allowed: choose one of {', '.join(ATTENTION_KINDS)}")
    return per / t


def layer_input_bytes(seq: ArrayLike, micro_batch: ArrayLike, hidden: ArrayLike,
                      tensor_parallel: ArrayLike = 1) -> np.ndarray:
    """Bytes of one layer's input (what a checkpoint keeps): x = 2·s·b·h / t  [B]."""
    return INPUT_BYTES * np.asarray(seq, float) * np.asarray(micro_batch, float) * np.asarray(hidden, float) \
        / np.asarray(tensor_parallel, float)


def sqrt_checkpoints(layers: ArrayLike) -> np.ndarray:
    """The √L rule's checkpoint count k = ⌈√L⌉ (Chen et al. 2016) [-]."""
    return np.ceil(np.sqrt(np.asarray(layers, float)))


def sqrt_break_even_layers(per_layer_bytes: ArrayLike, input_bytes: ArrayLike) -> np.ndarray:
    """Depth past which √L checkpoints keep less than checkpointing every layer (ceilings ignored).

    L·x + A = √L·(x + A)  ⇔  (√L − 1)(x·√L − A) = 0  ⇒  L = (A/x)²   [layers]
    Below it a layer's internals A outweigh the √L inputs saved, so per-layer checkpoints win.
    """
    return (np.asarray(per_layer_bytes, float) / np.asarray(input_bytes, float)) ** 2


@dataclass(frozen=True)
class RematMemory:
    """Peak activation bytes per chip of each strategy (arrays of one broadcast shape) [B]."""

    store_all: np.ndarray
    every_layer: np.ndarray
    sqrt_l: np.ndarray
    revnet: np.ndarray
    checkpoints: np.ndarray       # k = ⌈√L⌉
    per_layer: np.ndarray         # A
    layer_input: np.ndarray       # x

    def by_key(self) -> dict[str, np.ndarray]:
        return dict(zip(STRATEGY_KEYS, (self.store_all, self.every_layer, self.sqrt_l, self.revnet)))


def activation_memory(layers: ArrayLike, per_layer_bytes: ArrayLike, input_bytes: ArrayLike) -> RematMemory:
    """Peak activation memory of each strategy for L layers of A bytes with inputs of x bytes.

    store all  L·A        every layer  L·x + A        √L  k·x + ⌈L/k⌉·A, k = ⌈√L⌉        RevNet  4·x + A
    layers [-]; per_layer_bytes A [B]; input_bytes x [B].  Returns RematMemory [B].
    """
    L = np.asarray(layers, float)
    A = np.asarray(per_layer_bytes, float)
    x = np.asarray(input_bytes, float)
    k = sqrt_checkpoints(L)
    store = L * A
    every = L * x + A
    sqrt_l = k * x + np.ceil(L / k) * A
    rev = 4.0 * x + A + 0.0 * L
    out = np.broadcast_arrays(store, every, sqrt_l, rev, k + 0.0 * A, A + 0.0 * L, x + 0.0 * L)
    return RematMemory(*out)


def causal_pairs(seq: ArrayLike, window: ArrayLike = np.inf) -> np.ndarray:
    """(query, key) pairs of causal attention over s tokens, each query seeing at most `window` keys.

    Σ_{p=1}^{s} min(p, w) = s(s+1)/2 when s ≤ w, else w(w+1)/2 + (s − w)·w.  Returns [-].
    """
    s = np.asarray(seq, float)
    w = np.asarray(window, float)
    wf = np.where(np.isfinite(w), w, 0.0)                     # avoid inf·0 in the unused branch
    return np.where(s <= w, s * (s + 1.0) / 2.0, wf * (wf + 1.0) / 2.0 + (s - wf) * wf)


def forward_flops(active_params: ArrayLike, seq: ArrayLike, micro_batch: ArrayLike,
                  attn_flops_per_pair: ArrayLike = 0.0, attn_flops_window: ArrayLike = 0.0,
                  window: ArrayLike = np.inf) -> np.ndarray:
    """FLOPs of one forward pass over b sequences of s tokens (1 FLOP = 1 multiply or 1 add).

    F_fwd = b · [2·Na·s + attn_full · s(s+1)/2 + attn_window · pairs(s, w)]
    — the weight matmuls (2 FLOPs per active parameter per token) and causal attention, with the
    attention FLOPs per (query, key) pair summed over the full-attention layers and over the windowed
    layers (`KVLayout.attn_flops_full`, `attn_flops_window`: 4·heads·head_dim per GQA layer).  Returns [FLOP].
    """
    s = np.asarray(seq, float)
    return np.asarray(micro_batch, float) * (2.0 * np.asarray(active_params, float) * s
                                             + np.asarray(attn_flops_per_pair, float) * causal_pairs(s)
                                             + np.asarray(attn_flops_window, float) * causal_pairs(s, window))


def step_time(flops: ArrayLike, chips: ArrayLike, flops_per_s: ArrayLike) -> np.ndarray:
    """Time for `flops` spread over `chips` at `flops_per_s` each (ideal, no overlap losses): FLOPs / (t·F) [s]."""
    return np.asarray(flops, float) / (np.asarray(chips, float) * np.asarray(flops_per_s, float))


def step_flops(forward: ArrayLike, recompute: bool | ArrayLike) -> np.ndarray:
    """FLOPs of one training step: forward + backward (2× forward) + one recomputed forward if remat.

    store all: 3·F_fwd (the 6·N·D rule: 2 forward + 4 backward per parameter per token);
    any rematerialisation here: 4·F_fwd (+33 %).  Returns [FLOP].
    """
    return np.asarray(forward, float) * (3.0 + np.asarray(recompute, float))


def strategy_flops(forward: ArrayLike) -> dict[str, np.ndarray]:
    """Training-step FLOPs of each strategy, keyed like `RematMemory.by_key` [FLOP]."""
    return {k: step_flops(forward, k != "store") for k in STRATEGY_KEYS}


def kv_cache_trade(held_bytes: ArrayLike, context: ArrayLike, active_params: ArrayLike,
                   flops: ArrayLike, hbm_bandwidth: ArrayLike) -> dict[str, np.ndarray]:
    """The KV cache as the mirror trade: memory held to save recomputing the context every step.

    held bytes  = kv_stored(T)                       (one sequence, every layer; T · kv_tok for full attention)
    read time   = held / bw                          (what a decode step pays with the cache)
    recompute   = 2 · Na · T / F                     (a prefill of the T-token prefix per step without it;
                                                      attention left out, so this is a lower bound)
    held_bytes [B]; context T [tokens]; active_params [-]; flops [FLOP/s]; hbm_bandwidth [B/s].
    Returns a dict of arrays: held_bytes [B], read_s [s], recompute_s [s], speedup [-] = recompute / read.
    """
    T = np.asarray(context, float)
    held = np.asarray(held_bytes, float) + 0.0 * T
    read = held / np.asarray(hbm_bandwidth, float)
    recompute = 2.0 * np.asarray(active_params, float) * T / np.asarray(flops, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        speedup = np.where(read > 0, recompute / np.where(read > 0, read, 1.0), np.inf)
    return {"held_bytes": held, "read_s": read, "recompute_s": recompute, "speedup": speedup}
