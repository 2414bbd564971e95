"""How a model is laid out over chips and racks: MoE expert parallelism, pipelining, scale-up size.

Lecture §1.6–1.8, §2.9–2.10.  Notation as in roofline.py, plus
  E   routed experts            k   experts per token           G   GPUs an expert layer spans (= C)
  D   scale-up domain (chips)   L   MoE layers                  a   activation bytes per element
  d   d_model                   P   pipeline stages             bw_up / bw_out  per-direction link B/s

All-to-all per decode step (dispatch + combine, every MoE layer):
    bytes = B · 2 · k · d · a · L            spread over the G GPUs (each holds B/G of the tokens)
A token's k experts sit on uniformly random GPUs: (min(G, D) − 1)/G of the traffic stays on the
scale-up links, max(G − D, 0)/G crosses the scale-out network (≈ 8–18× slower per chip), which is
why "one rack bounds an expert layer".  t_comm = max(t_scaleup, t_scaleout) (the links work in
parallel); it enters the step as the roofline's communication term.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .roofline import ArrayLike, KVLayout, System, decode_step
from .specs import ModelArch

# ---------------------------------------------------------------- experts

def experts_per_gpu(n_experts: ArrayLike, gpus: ArrayLike) -> np.ndarray:
    """Routed experts each GPU holds: ⌈E / G⌉ (DeepSeek's 256 over 64 GPUs = 4)."""
    return np.ceil(np.asarray(n_experts, float) / np.asarray(gpus, float))


def expected_distinct_experts(n_experts: float, experts_per_token: float, batch: ArrayLike) -> np.ndarray:
    """Expected routed experts touched in one layer by B tokens: E · (1 − (1 − k/E)^B).

    Each token picks k of E experts; treating picks as independent with probability k/E each.
    """
    E, k = float(n_experts), float(experts_per_token)
    return E * (1.0 - (1.0 - k / E) ** np.asarray(batch, float))


def busiest_gpu_experts(n_experts: int, experts_per_token: int, batch: ArrayLike, gpus: int) -> np.ndarray:
    """Expected number of touched experts on the busiest of G GPUs (each holds n = ⌈E/G⌉ experts).

    Touched per GPU ~ Binomial(n, p) with p = 1 − (1 − k/E)^B; the busiest of G independent GPUs has
    E[max] = Σ_{m=0}^{n−1} (1 − F(m)^G), F the binomial CDF.  It, not the average, sets the step.
    """
    n = int(np.ceil(n_experts / gpus))
    b = np.asarray(batch, float)
    p = 1.0 - (1.0 - experts_per_token / n_experts) ** b
    m = np.arange(n + 1)
    from math import comb
    coeff = np.array([comb(n, int(i)) for i in m], float)
    pe = p[..., None]
    pmf = coeff * pe ** m * (1.0 - pe) ** (n - m)
    cdf = np.cumsum(pmf, axis=-1)[..., :-1]                      # F(0) … F(n−1)
    return np.sum(1.0 - np.clip(cdf, 0.0, 1.0) ** gpus, axis=-1)


def expert_bytes(model: ModelArch, bytes_per_param: float) -> tuple[float, float]:
    """(bytes of one routed expert summed over all MoE layers, bytes always read every step).

    An expert is a gated FFN: 3 · d · moe_intermediate parameters per layer.  Everything else —
    attention, shared experts, dense layers, embeddings — is read every step.
    """
    if not model.is_moe or model.moe_intermediate_size is None or model.d_model is None:
        raise ValueError(f"model {model.name!r} needs n_experts, d_model and moe_intermediate_size for this")
    layers = model.n_moe_layers if model.n_moe_layers is not None else model.n_layers
    per_expert = 3.0 * model.d_model * model.moe_intermediate_size * layers * bytes_per_param
    total = model.total_params * bytes_per_param
    return per_expert, max(total - model.n_experts * per_expert, 0.0)


def touched_weight_bytes_per_gpu(system: System, batch: ArrayLike, gpus: int | None = None) -> np.ndarray:
    """Weight bytes the busiest GPU reads per step when only touched experts are fetched.

    always/G + per_expert · E[busiest GPU's touched experts]; at large batch every expert is touched
    and the busiest GPU reads all ⌈E/G⌉ experts it holds: W/G, the lecture's "all weights every step",
    when G divides E, and more than W/G when it does not (256 experts over 72 GPUs: 4 against 3.56).
    """
    G = int(system.deployment.chips if gpus is None else gpus)
    m = system.model
    per_expert, always = expert_bytes(m, system.precision.weight_bytes_per_param)
    busiest = busiest_gpu_experts(m.n_experts, m.experts_per_token, batch, G)
    return always / G + per_expert * busiest


# ---------------------------------------------------------------- communication

def alltoall_bytes_per_token(model: ModelArch, activation_bytes: float = 2.0) -> float:
    """Dispatch + combine bytes one token moves per step over all MoE layers: 2 · k · d · a · L."""
    if not model.is_moe or model.d_model is None:
        return 0.0
    layers = model.n_moe_layers if model.n_moe_layers is not None else model.n_layers
    return 2.0 * model.experts_per_token * model.d_model * activation_bytes * layers


@dataclass(frozen=True)
class AllToAll:
    bytes_per_step: np.ndarray          # whole step, all GPUs [B]
    bytes_per_gpu: np.ndarray           # one GPU's share [B]
    share_scaleup: np.ndarray           # of a GPU's traffic, on the scale-up links [-]
    share_scaleout: np.ndarray          # of a GPU's traffic, over the scale-out network [-]
    t_scaleup_s: np.ndarray
    t_scaleout_s: np.ndarray
    t_comm_s: np.ndarray                # max of the two (links in parallel)
    domains: np.ndarray                 # scale-up domains the layer spans


def moe_alltoall(system: System, batch: ArrayLike, gpus: ArrayLike | None = None,
                 activation_bytes: float = 2.0, domain: int | None = None) -> AllToAll:
    """All-to-all time of one decode step's MoE layers spread over G GPUs (arrays broadcast).

    Zero for dense models.  Raises ValueError if the chip has no scale-up / scale-out bandwidth
    figure and the traffic needs it.
    """
    hw = system.hardware
    G = np.asarray(system.deployment.chips if gpus is None else gpus, float)
    D = float(hw.scaleup_domain_chips if domain is None else domain)
    b = np.asarray(batch, float)
    total = b * alltoall_bytes_per_token(system.model, activation_bytes)
    per_gpu = total / G
    up = (np.minimum(G, D) - 1.0) / G
    out = np.maximum(G - D, 0.0) / G
    bw_up, bw_out = hw.scaleup_bandwidth_bytes_per_s, hw.scaleout_bandwidth_bytes_per_s
    need_up = np.any((per_gpu * up) > 0)
    need_out = np.any((per_gpu * out) > 0)
    if need_up and not bw_up:
        raise ValueError(f"{hw.name} has no scale-up bandwidth figure")
    if need_out and not bw_out:
        raise ValueError(f"{hw.name} has no scale-out bandwidth figure: an expert layer cannot span domains")
    t_up = per_gpu * up / bw_up if bw_up else np.zeros_like(per_gpu * up)
    t_out = per_gpu * out / bw_out if bw_out else np.zeros_like(per_gpu * out)
    arrs = np.broadcast_arrays(total, per_gpu, up, out, t_up, t_out, np.maximum(t_up, t_out), np.ceil(G / D))
    return AllToAll(*arrs)


def tensor_parallel_allreduce_time(system: System, batch: ArrayLike, gpus: ArrayLike | None = None,
                                   activation_bytes: float = 2.0, hop_latency_s: float = 0.0) -> np.ndarray:
    """Dense tensor parallelism: 2 all-reduces of B·d·a bytes per layer (after attention and MLP).

    A ring all-reduce moves 2·(G−1)/G of the buffer through each GPU's link and takes 2·(G−1)
    latency hops:  t = L · 2 · [2(G−1)/G · B·d·a / bw_up + 2(G−1) · hop_latency].
    """
    m, hw = system.model, system.hardware
    if m.d_model is None or m.n_layers is None:
        raise ValueError(f"model {m.name!r} needs d_model and n_layers for tensor parallelism")
    G = np.asarray(system.deployment.chips if gpus is None else gpus, float)
    if not hw.scaleup_bandwidth_bytes_per_s:
        raise ValueError(f"{hw.name} has no scale-up bandwidth figure")
    size = np.asarray(batch, float) * m.d_model * activation_bytes
    per = 2.0 * (G - 1.0) / G * size / hw.scaleup_bandwidth_bytes_per_s + 2.0 * (G - 1.0) * hop_latency_s
    return m.n_layers * 2.0 * per


LAYOUTS = ("none", "tp", "ep")


def layout_comm_time(system: System, tokens: ArrayLike, layout: str, chips: ArrayLike | None = None, *,
                     link_latency_s: float = 0.0, activation_bytes: float = 2.0) -> np.ndarray:
    """The communication a layout of C chips implies for one pass of `tokens` tokens [s].

    none: 0 — the roofline without a communication term (one chip, or a page that leaves it out).
    tp  : tensor parallelism over C chips (a dense model; C within the scale-up domain): two ring
          all-reduces of the tokens' activations per layer, `tensor_parallel_allreduce_time` with
          `link_latency_s` per ring hop:
              t = n_layers · 2 · [2(C−1)/C · tokens·d·a / bw_up + 2(C−1) · link_latency]
    ep  : experts spread over C chips (an MoE model): dispatch + combine all-to-all per MoE layer,
          `moe_alltoall` — (min(C, D) − 1)/C of it on the scale-up links, max(C − D, 0)/C over the
          scale-out network past the domain D; t = max(t_scaleup, t_scaleout).
    Both are affine in `tokens` (a latency term plus bytes ∝ tokens), which the planner uses.  In a
    decode step `tokens` = B (plus the prompt tokens of chunked prefill); in a prefill pass B·L.
    With P pipeline stages, C is the chips of one stage and the layers' collectives add up over
    the stages to the whole-model time above.  Raises ValueError naming what is missing (the
    model's d_model and n_layers; the chip's link bandwidths where the traffic needs them).
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r} is not allowed: choose one of {', '.join(LAYOUTS)}")
    c = np.asarray(system.deployment.chips if chips is None else chips, float)
    n = np.asarray(tokens, float)
    if layout == "none" or not np.any(c > 1):
        return np.zeros(np.broadcast(c, n).shape)
    m = system.model
    if layout == "tp":
        if np.any(c > system.hardware.scaleup_domain_chips):
            raise ValueError(f"tensor parallelism over {c.max():g} chips leaves the scale-up domain of "
                             f"{system.hardware.scaleup_domain_chips} (use pipeline stages beyond it)")
        return tensor_parallel_allreduce_time(system, n, gpus=c, activation_bytes=activation_bytes,
                                              hop_latency_s=link_latency_s) * np.ones(np.broadcast(c, n).shape)
    if not m.is_moe or not m.experts_per_token:
        raise ValueError(f"model {m.name!r} has no routed experts: the ep layout needs an MoE model")
    if m.d_model is None or moe_layer_count(m) is None:
        raise ValueError(f"model {m.name!r} needs d_model and its MoE layer count for the all-to-all")
    return moe_alltoall(system, n, gpus=c, activation_bytes=activation_bytes).t_comm_s


# ---------------------------------------------------------------- pipelining and scale-up

def pipeline_cut_ratio(scaleup_bw: ArrayLike, scaleout_bw: ArrayLike, experts_per_token: ArrayLike,
                       layers_per_stage: ArrayLike) -> np.ndarray:
    """t_scaleup / t_scaleout at a pipeline cut = (bw_out / bw_up) · 2 · k · layers_per_stage (§1.8).

    Inside a stage each MoE layer's all-to-all moves 2·k activations per token on scale-up links; the
    cut moves one activation per token over scale-out.  Want ≥ 1 (the lecture: 1/8 · 2 · 8 · 1 = 2).
    `layers_per_stage` counts MoE layers only (see `pipeline_cut_check`).
    """
    return (np.asarray(scaleout_bw, float) / np.asarray(scaleup_bw, float) * 2.0
            * np.asarray(experts_per_token, float) * np.asarray(layers_per_stage, float))


def moe_layer_count(model: ModelArch) -> int | None:
    """MoE layers L_moe: `n_moe_layers` when given, else every layer of an MoE model; 0 for a dense model.

    Only MoE layers carry an all-to-all (DeepSeek-V3: 58 of 61, the first 3 dense; Llama 4 Maverick:
    24 of 48, MoE on alternate layers).  None when an MoE model gives neither count.
    """
    if not model.is_moe:
        return 0
    if model.n_moe_layers is not None:
        return int(model.n_moe_layers)
    return None if model.n_layers is None else int(model.n_layers)


@dataclass(frozen=True)
class CutCheck:
    """The pipeline cut check for each P (arrays of the shape of `stages`).

    moe_layers_per_stage  L_moe / P: MoE layers a stage holds on average [-]
    ratio                 t_scaleup / t_scaleout at a cut (want ≥ 1); NaN where there is no answer
    reason                why `ratio` is NaN, per P ("" where it is a number)
    """

    stages: np.ndarray
    moe_layers_per_stage: np.ndarray
    ratio: np.ndarray
    reason: tuple[str, ...]


def pipeline_cut_check(model: ModelArch, scaleup_bw: float | None, scaleout_bw: float | None,
                       stages: ArrayLike, experts_per_token: float | None = None) -> CutCheck:
    """`pipeline_cut_ratio` with the MoE layers per stage, L_moe / P, for every P in `stages`.

    A stage's scale-up all-to-all runs over its MoE layers only (dense layers move nothing on the
    expert links), so the layers that count are L_moe / P, not L / P.  There is no answer (NaN, with
    a reason) at P = 1 (one stage has no cut), for a dense model (no all-to-all), without an MoE layer
    count, or without both link bandwidths.  `experts_per_token` overrides the model's k (an
    illustration for a dense model uses the lecture's 8; then every layer is counted).
    """
    P = np.atleast_1d(np.asarray(stages, float))
    k = model.experts_per_token if experts_per_token is None else experts_per_token
    L = moe_layer_count(model) if experts_per_token is None or model.is_moe else model.n_layers
    common = ""
    if not model.is_moe and experts_per_token is None:
        common = f"{model.name} is dense: no MoE all-to-all inside a stage, so no cut check"
    elif L is None:
        common = f"{model.name} has no layer count (n_moe_layers or n_layers): the cut check needs it"
    elif not (scaleup_bw and scaleout_bw):
        common = "the chip needs both a scale-up and a scale-out bandwidth figure for the cut check"
    elif not k:
        common = "the cut check needs experts per token k ≥ 1"
    lps = P * np.nan if L is None else float(L) / P
    if common:
        ratio = np.full(P.shape, np.nan)
    else:
        ratio = pipeline_cut_ratio(scaleup_bw, scaleout_bw, k, lps)
    reason = tuple(common or ("P = 1: one stage has no cut between stages, so there is nothing to check"
                              if p == 1 else "") for p in P)
    ratio = np.where(P == 1, np.nan, ratio)
    return CutCheck(P, np.broadcast_to(lps, P.shape).astype(float), ratio, reason)


def training_bubble_fraction(stages: ArrayLike, micro_batches: ArrayLike) -> np.ndarray:
    """Idle share of a GPipe/1F1B training step: (P − 1) / (m + P − 1)."""
    P = np.asarray(stages, float)
    return (P - 1.0) / (np.asarray(micro_batches, float) + P - 1.0)


@dataclass(frozen=True)
class PipelineMemory:
    weight_bytes_per_chip: np.ndarray
    kv_bytes_per_chip: np.ndarray
    total_bytes_per_chip: np.ndarray
    latency_s: np.ndarray           # per token, with hops
    tokens_per_s: np.ndarray        # one replica


def pipeline(system: System, micro_batch: ArrayLike, context: ArrayLike, stages: ArrayLike) -> PipelineMemory:
    """Weights and KV per chip against P stages with P micro-batches of b in flight (lecture §1.6).

    weights/chip = W / (C·P) — falls with P;  KV/chip = b · kv(T) / C — the P's cancel.
    """
    P = np.asarray(stages, float)
    C = system.deployment.chips
    # Context 0 holds no KV: no KV figure is needed then.
    kv = (KVLayout.from_model(system.model, system.precision.kv_bytes_per_element)
          if np.any(np.asarray(context, float) > 0) else KVLayout(0.0))
    w = system.weight_bytes / (C * P)
    kvc = np.asarray(micro_batch, float) * kv.stored_bytes(context) / C
    # The whole-model step terms do not depend on P (each stage holds 1/P of them); P adds hops and
    # multiplies the sequences in flight (decode_step's rule, evaluated for every P at once).
    d = system.deployment
    one = decode_step(system.with_(pipeline_stages=1), micro_batch, context)
    lat = one.t_step_s + np.where(P > 1, P * d.pipeline_hop_s, 0.0)
    tps = P * np.asarray(micro_batch, float) * d.tokens_per_step / lat
    w, kvc, lat, tps = np.broadcast_arrays(w, kvc, lat, tps)
    return PipelineMemory(w, kvc, w + kvc, lat, tps)


def largest_model_params(system: System, batch: ArrayLike, context: ArrayLike,
                         chips: ArrayLike | None = None) -> np.ndarray:
    """Most parameters whose weights, plus the current model's KV for B sequences at T, fit in C·M.

    (C·M − B·kv_stored(T)) / bytes_per_param; 0 when the KV alone does not fit.
    """
    C = np.asarray(system.deployment.chips if chips is None else chips, float)
    kv = KVLayout.from_model(system.model, system.precision.kv_bytes_per_element)
    room = C * system.hardware.hbm_bytes - np.asarray(batch, float) * kv.stored_bytes(context)
    return np.maximum(room, 0.0) / system.precision.weight_bytes_per_param
