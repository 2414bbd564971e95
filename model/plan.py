"""The planner: the cheapest deployment that meets a latency target, searched whole in one pass.

The question is the inverse of the decode step's: "I serve model M to requests of about I input and
O output tokens; time to first token must stay under `ttft_s` and time per output token under
`tpot_s`. Which chip, how many per replica, which batch and precision — and what does it cost?"
`plan` evaluates every configuration of

    chip × layout (C chips per stage × P stages) × weight dtype × KV dtype × serving mode × batch

as flat numpy arrays (no Python loop over configurations), prices each, and returns the cheapest
feasible one, the Pareto frontiers, the ten best and, for a required throughput, the replicas and
chips.  docs/design.md "Serving a request: the planner" is the prose version of this docstring.

Notation as in roofline.py (F, bw, M, W, Na, C, P, B, a = tokens per step); per request class i:
Iᵢ input and Oᵢ output tokens, a share sᵢ of requests (Σ sᵢ = 1); E[·] the share-weighted mean.

Layouts, per chip (D its scale-up domain; at most `max_chips` chips per replica):
  C = 1, 2, 4, … < D and D itself, P = 1;   C = D with P = 2, 4, 8, … stages (C·P chips);
  an MoE model also C = 2D, 4D, … with P = 1 (experts spread across domains, over scale-out).
  Communication: `cluster.layout_comm_time` — tp (two ring all-reduces per layer) for a dense
  model, ep (the MoE all-to-all) for an MoE model, none on one chip; `link_latency_s` per ring hop.

Precision: weights ∈ {bf16, fp8, fp4} (fp4 only where the chip has fp4 FLOP/s), KV ∈ {bf16, fp8}.
Compute dtype = the weight dtype where the chip has FLOP/s at it, else bf16.  Quality is not modelled.

Contexts.  Class i's sequences make up wᵢ = sᵢ·Oᵢ / Σ sⱼ·Oⱼ of a batch (they stay Oᵢ/a steps) and
hold Iᵢ + Oᵢ/2 tokens on average, so each sequence reads Σ wᵢ·kv(Iᵢ + Oᵢ/2) per step; `context`
is the T with kv(T) equal to that (Σ wᵢ·(Iᵢ + Oᵢ/2) for full attention; I + O/2 for one class).
HBM holds P·B sequences at the longest class, T_max = max(Iᵢ + Oᵢ):
    hbm_bytes_per_chip = (W + P·B·kv_stored(T_max)) / (C·P) ≤ M           (fits)

Decode (TPOT).  roofline.decode_step's terms at `context`, with t_comm = layout_comm_time of the
step's tokens; aggregated, the prompts prefilled in chunks inside the step (roofline.ChunkedPrefill,
x = a·E[I]/E[O] prompt tokens per sequence per step, B·(1 + x) tokens through the collectives):
    t_step = combine(t_matmul, t_attn, t_weights, t_kv, t_comm) + P·hop      tpot = t_step / a

Prefill (TTFT), roofline.prefill of each class's prompt (`prefill_combine`, with its comm):
  aggregated    ttft = maxᵢ t_pass(Iᵢ, batch 1, the replica's C, P),  t_pass = prefill + P·hop
                (the prompt at the replica's whole compute: a lower bound, with queueing kept
                small by the utilisation target)
  disaggregated ttft = maxᵢ [t_pass(Iᵢ, b_p, C_p, P_p) + kv_stored(Iᵢ) / (min(C_p·P_p, C·P)·bw_out)]
                (the KV handed to the decode replica over as many NICs in parallel as the smaller
                replica has).  The prefill replica (C_p, P_p, b_p ∈ 1, 2, 4 … 256) is chosen per
                chip, precision and decode layout: the cheapest per prompt token that fits and meets
                the TTFT target (ties: fewer chips, smaller batch); the fastest when none does.

Cost, with κ = price/3600 [$/chip-s]:
  aggregated    $/Mtok output = C·P·κ · t_step(without prompts) / (P·B·a) · 1e6
                $/Mtok input  = C·P·κ · [t_step − t_step(without prompts)] / (P·B·x) · 1e6
                (prompts pay for the step time they add — nothing while they fit in the spare
                compute under the decode step's weight read)
  disaggregated $/Mtok output = C·P·κ · t_step / (P·B·a) · 1e6  (the decode replica's step)
                $/Mtok input  = C_p·P_p·κ · Σ sᵢ·t_pass(Iᵢ) / (P_p·b_p) / E[I] · 1e6
  $/request = (E[I]·$/Mtok input + E[O]·$/Mtok output) / 1e6;  usd_per_mtok = $/request / E[O] · 1e6
  tokens/s/chip = E[O] / (chip-seconds per request, prefill chips included)

Feasible = fits ∧ ttft ≤ ttft_s ∧ tpot ≤ tpot_s.

Efficiency.  On the roofline (ideal, or the Efficiency dials) F and bw above are the peak rates × MFU and
× bandwidth utilisation.  On the fitted efficiency model (`efficiency=`, model.calibrate, docs/prediction.md)
F is the peak, bw = η_bw × the peak, and each FLOP carries its own efficiency, e being the routed experts'
share of the matmul FLOPs (calibrate.expert_share) and k = a the tokens computed per sequence per step:
    t_compute = B·[k·2·Na·((1 − e)/η_c + e/η_e) + x·2·Na·((1 − e)/η_p + e/η_e)] / (C·F)
                + B·[k·attn(T)/η_c + A_x/η_p] / (C·F₁₆)
    t_step    = max(t_compute, (W + B·kv)/(C·bw), t_comm) + L·t_ℓ + L·t_ℓp·(1 − e^(−λ·B)) + P·hop
with λ = a/E[O] new prompts per sequence per step when aggregated (0 disaggregated, whose decode steps
carry no prompt), A_x the chunked prompts' attention FLOPs, F₁₆ the chip's bf16 peak (attention runs at
16 bits whatever the weights' format: calibrate.attention_slowdown); a prefill pass is a step with prompt work
(max(compute at η_p and η_e, memory at η_bw, comm) + L·(t_ℓ + t_ℓp)).  On one chip this is
calibrate.predict_system's step; the communication and the prefill passes are the roofline's terms at these
efficiencies, which no published measurement has tested (no measurement reports a TTFT).  η_e is the model's
own: η_c · s/(s + s½) for experts of s = d_model × moe_intermediate_size elements when the fit has the
expert-size term (`Efficiency.for_model`).

Batches.  Per row (chip, layout, precision, mode): B_fit = (C·P·M − W) / (P·kv_stored(T_max)) and
floor(B_fit · 2^(−k/8)), k = 0, 1, … (8 points per octave, down to 1; B_fit capped at 2^18), plus
⌊B_tpot⌋ and ⌊B_tpot⌋ − 1, B_tpot the largest batch meeting TPOT — closed form, as every step term is
affine in B.  $/request falls as B grows (t_step/B does), so a row's cheapest feasible batch is in its
grid exactly.

Throughput R (requests/s, or output tokens/s = R·E[O]); each replica at utilisation ≤ u:
  aggregated    capacity = P·B·a / (t_step·E[O]) requests/s;  replicas n = ⌈R / (u·capacity)⌉
  disaggregated decode as above; prefill capacity = P_p·b_p / Σ sᵢ·t_pass(Iᵢ); n_p likewise
  chips = n·C·P (+ n_p·C_p·P_p);  usd_per_hour = chips · price.

Ranking: $/request (with a throughput, $/hour of the whole deployment), then fewer chips per replica
(prefill replica included), faster TPOT, wider weight then KV dtype, aggregated first, chip order.
Costs within 1e-9 of each other are ties.  Frontiers run over the points that fit and meet TTFT.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import presets
from .calibrate import ATTENTION_DTYPE, Efficiency, attention_slowdown, expert_share, predict_decode_step
from .cluster import layout_comm_time, moe_layer_count
from .roofline import (
    BOUNDS,
    KVLayout,
    System,
    chunked_prefill,
    combine,
    decode_step,
    prefill,
    prefill_attention_flops,
    prefill_combine,
)
from .specs import COMPUTE_DTYPES, DTYPE_BYTES, Deployment, Hardware, ModelArch, Precision

MODES = ("aggregated", "disaggregated")
WEIGHT_DTYPES = ("bf16", "fp8", "fp4")
KV_DTYPES = ("bf16", "fp8")
LAYOUT_NAMES = ("none", "tp", "ep")
PREFILL_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
PER_OCTAVE = 8                # batch grid points per doubling
MAX_BATCH = 2.0 ** 18         # the grid's largest batch (a model with no KV would fit any)
THROUGHPUT_UNITS = ("requests", "tokens")
RANK_TOL = 1e-9               # relative: costs closer than this are ties

STEP_TERMS = ("t_dense_s", "t_expert_s", "t_attn_s", "t_weights_s", "t_kv_s", "t_comm_s", "t_fixed_s", "t_hops_s")
"""A decode step's terms as `evaluate` reports them (the fitted model's split: calibrate.predict_decode_step)."""

POINT_KEYS = ("hardware", "chips", "pipeline_stages", "batch", "weight_dtype", "kv_dtype", "mode",
              "prefill_chips", "decode_chips", "ttft_s", "tpot_s", "tokens_per_s_per_user",
              "tokens_per_s_per_chip", "usd_per_mtok_output", "usd_per_mtok_input", "usd_per_request", "bound")
"""The keys every reported point carries: the CLI's and the page's contract (`Plan.point` returns these and more)."""


# ---------------------------------------------------------------- inputs

@dataclass(frozen=True)
class Traffic:
    """Request classes: input and output tokens and the share of requests of each (Σ = 1)."""

    input_tokens: tuple[float, ...]
    output_tokens: tuple[float, ...]
    shares: tuple[float, ...]

    def __post_init__(self) -> None:
        n = len(self.input_tokens)
        if n == 0 or not (n == len(self.output_tokens) == len(self.shares)):
            raise ValueError("traffic needs at least one class, with input tokens, output tokens and a share each")
        for name, vals in (("input tokens", self.input_tokens), ("output tokens", self.output_tokens)):
            if any(not math.isfinite(v) or v < 1 for v in vals):
                raise ValueError(f"traffic: {name} must be finite numbers ≥ 1")
        if any(not math.isfinite(s) or s <= 0 for s in self.shares):
            raise ValueError("traffic: shares must be finite numbers > 0")
        total = sum(self.shares)
        object.__setattr__(self, "shares", tuple(s / total for s in self.shares))

    @classmethod
    def single(cls, input_tokens: float, output_tokens: float) -> Traffic:
        return cls((float(input_tokens),), (float(output_tokens),), (1.0,))

    @classmethod
    def mix(cls, classes: Sequence[tuple[float, float, float]]) -> Traffic:
        """From (input tokens, output tokens, share) triples; shares are normalised."""
        return cls(tuple(float(c[0]) for c in classes), tuple(float(c[1]) for c in classes),
                   tuple(float(c[2]) for c in classes))

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (np.array(self.input_tokens), np.array(self.output_tokens), np.array(self.shares))

    @property
    def mean_input(self) -> float:
        return float(np.dot(self.shares, self.input_tokens))

    @property
    def mean_output(self) -> float:
        return float(np.dot(self.shares, self.output_tokens))

    @property
    def longest(self) -> float:
        """T_max: the longest context a sequence reaches, max(Iᵢ + Oᵢ) [tokens]."""
        return max(i + o for i, o in zip(self.input_tokens, self.output_tokens))

    def decode_context(self, kv: KVLayout, sparse: str = "dense", param: float = 2048.0) -> float:
        """The T whose per-step KV read equals the batch's: Σ wᵢ·kv(Iᵢ + Oᵢ/2), wᵢ ∝ sᵢ·Oᵢ [tokens]."""
        I, O, s = self.arrays
        T = I + O / 2.0
        if len(T) == 1:
            return float(T[0])
        w = s * O / np.sum(s * O)
        if sparse == "dense" and kv.window_bytes_per_token == 0.0:
            return float(np.sum(w * T))                       # read ∝ T: the time-weighted context
        return float(kv.context_for_read(np.sum(w * kv.read_bytes(T, sparse, param)), sparse, param))


# ---------------------------------------------------------------- the result

@dataclass(frozen=True)
class Plan:
    """Every evaluated configuration and the answers drawn from them.

    points: flat arrays, one entry per evaluated configuration (all of length `configs_evaluated`):
      hardware (index into `hardware_keys`), chips (C per stage), pipeline_stages (P), layout,
      weight_dtype, kv_dtype, compute_dtype, mode (indices into LAYOUT_NAMES, WEIGHT_DTYPES,
      KV_DTYPES, COMPUTE_DTYPES, MODES), batch (B, the micro-batch), decode_chips (C·P),
      prefill_chips (C_p·P_p; = decode_chips when aggregated), prefill_stages, prefill_batch,
      context [tokens], t_step_s, t_comm_s, ttft_s, tpot_s, tokens_per_s_per_user,
      tokens_per_s_per_chip (all chips, prefill included), decode_tokens_per_s_per_chip,
      usd_per_mtok_output, usd_per_mtok_input, usd_per_mtok (all-in per output token),
      usd_per_request, bound (index into roofline.BOUNDS), hbm_bytes_per_chip, fits, meets_ttft,
      meets_tpot, feasible, max_batch_fit, max_batch_tpot, prefill_decode_chip_ratio (nan when
      aggregated), and with a throughput replicas, prefill_replicas, chips_total, usd_per_hour.
    best, closest: an index into points, or None.  top, frontier, frontier_per_chip: index arrays
    (frontiers by tokens/s/user ascending).  `point(i)` gives one point as a plain dict.
    Chips, stages and batches are int32; `context` is one value broadcast (read-only).

    frontier: the points that fit and meet TTFT and that no other beats on both $/request (lower) and
    tokens/s/user (higher) — the same set as against usd_per_mtok, $/request ÷ E[O]; the best point is
    on it up to ties.  frontier_per_chip: likewise on tokens/s/chip and tokens/s/user (both higher).
    top: the `top_n` cheapest feasible configurations, one per (chip, layout, precision, mode), each at
    its cheapest batch, in ranking order — leaving out a configuration that one ranked above it matches on
    chip, precision and mode, cost, TTFT and TPOT with no more chips per replica (more pipeline stages
    that change nothing but the chip count).
    """

    points: dict[str, np.ndarray]
    hardware_keys: tuple[str, ...]
    traffic: Traffic
    ttft_s: float
    tpot_s: float
    best: int | None
    top: np.ndarray
    frontier: np.ndarray
    frontier_per_chip: np.ndarray
    closest: int | None
    binding: str | None               # when nothing is feasible: "hbm", "ttft", "tpot" or "ttft+tpot"
    reason: str | None
    ranked_by: str                    # "usd_per_request", or "usd_per_hour" with a throughput
    throughput_requests_per_s: float | None
    utilisation: float
    efficiency: dict[str, Any]
    search_s: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def configs_evaluated(self) -> int:
        return int(self.points["batch"].size)

    def point(self, i: int) -> dict[str, Any]:
        """One point as plain Python values, names in place of indices."""
        out: dict[str, Any] = {k: arr[i].item() for k, arr in self.points.items()}
        out["hardware"] = self.hardware_keys[out["hardware"]]
        for k, names in (("layout", LAYOUT_NAMES), ("weight_dtype", WEIGHT_DTYPES), ("kv_dtype", KV_DTYPES),
                         ("compute_dtype", COMPUTE_DTYPES), ("mode", MODES), ("bound", BOUNDS)):
            out[k] = names[out[k]]
        for k in ("replicas", "prefill_replicas", "chips_total"):
            if k in out and math.isfinite(out[k]):
                out[k] = int(out[k])
        return out

    def replicas(self) -> dict[str, Any] | None:
        """For the best point and a throughput: replicas, prefill replicas, chips and $/hour."""
        if self.best is None or self.throughput_requests_per_s is None:
            return None
        b = self.point(self.best)
        return {"replicas": b["replicas"], "prefill_replicas": b["prefill_replicas"], "chips": b["chips_total"],
                "usd_per_hour": b["usd_per_hour"], "requests_per_s": self.throughput_requests_per_s,
                "utilisation": self.utilisation}


# ---------------------------------------------------------------- the search

def plan(model: ModelArch, hardware: Mapping[str, Hardware], traffic: Traffic, *, ttft_s: float, tpot_s: float,
         throughput: float | None = None, throughput_unit: str = "requests", utilisation: float = 0.7,
         deployment: Deployment = Deployment(), ideal: bool = False,
         weight_dtypes: Sequence[str] = WEIGHT_DTYPES, kv_dtypes: Sequence[str] = KV_DTYPES,
         modes: Sequence[str] = MODES, max_chips: int = 1024, link_latency_s: float = 0.0,
         activation_bytes: float = 2.0, top_n: int = 10, efficiency: Efficiency | None = None) -> Plan:
    """Search chip × layout × precision × mode × batch for `model` serving `traffic` (module docstring).

    model        the model (its KV figure is needed; d_model and n_layers for layouts over C > 1)
    hardware     chip key → Hardware, in the order ties fall (a key is what `hardware` reports)
    traffic      Traffic.single(I, O) or Traffic.mix([(I, O, share), …])
    ttft_s, tpot_s   the targets [s], > 0
    throughput   required requests/s (`throughput_unit` "requests") or output tokens/s ("tokens")
    utilisation  the busiest a replica may run, in (0, 1] (default 0.7)
    deployment   mode (lecture / per-phase), mfu, bw_util, tokens_per_step, pipeline_hop_s, sparse
                 attention; chips and pipeline_stages are searched, not read
    ideal        plan on the ideal roofline (mfu = bw_util = 1) whatever `deployment` says
    efficiency   plan on the fitted efficiency model (model.calibrate.Efficiency, e.g. `built_in_fit().efficiency`)
                 instead of the roofline: `deployment`'s mfu, bw_util and mode are then not read
                 (module docstring, "Efficiency"); not with `ideal`
    weight_dtypes, kv_dtypes, modes   the subsets to search
    max_chips    the most chips one replica may have (C·P)
    link_latency_s  seconds per ring hop of a tp all-reduce
    Raises ValueError naming the input for bad input.
    """
    t0 = time.perf_counter()
    targets = _check_inputs(hardware, traffic, ttft_s, tpot_s, throughput, throughput_unit, utilisation,
                            weight_dtypes, kv_dtypes, modes, max_chips, link_latency_s, top_n)
    if ideal and efficiency is not None:
        raise ValueError("ideal and efficiency: plan on the ideal roofline or on the fitted efficiency model, not both")
    dep = deployment.with_(mfu=1.0, bw_util=1.0) if ideal else deployment
    rates = _Rates.of(model, dep, efficiency)
    dep = rates.deployment
    if efficiency is not None:
        eff_out: dict[str, Any] = {"source": "predicted", **efficiency.as_dict()}
    else:
        eff_out = {"source": "ideal" if dep.mfu == 1.0 and dep.bw_util == 1.0 else "dials",
                   "mfu": dep.mfu, "bw_util": dep.bw_util}
    wds = tuple(d for d in WEIGHT_DTYPES if d in weight_dtypes)
    kvs = tuple(d for d in KV_DTYPES if d in kv_dtypes)
    mds = tuple(m for m in MODES if m in modes)
    keys = tuple(hardware)
    notes: list[str] = []
    with np.errstate(all="ignore"):     # extreme inputs give inf/nan points: they are simply not feasible
        tr = _traffic_terms(model, traffic, kvs, dep, hardware[keys[0]])
        chips = _chip_table(model, [hardware[k] for k in keys], dep, wds, max_chips, link_latency_s,
                            activation_bytes, notes, rates.fitted)
        rows = _rows(model, chips, tr, dep, rates, wds, kvs, mds, targets)
        pts = _cells(rows, tr, dep, rates, traffic, targets)
        return _answer(pts, keys, traffic, targets, eff_out, notes, top_n, t0)


@dataclass(frozen=True)
class _Rates:
    """How the efficiency in force turns peak-rate times into step times (module docstring, "Efficiency").

    The roofline (ideal or the Efficiency dials) folds MFU and bandwidth utilisation into F and bw and
    has every multiplier 1 and no fixed time.  The fitted model runs F and bw at peak × (1, η_bw) and
    divides each kind of FLOP by its own efficiency; its step is max(compute, memory, comm) + fixed.
    """

    deployment: Deployment     # the deployment the tables are built from (fitted: mfu 1, bw_util η_bw, lecture)
    dense: float = 1.0         # × decode dense-weight matmul time (1/η_c)
    expert: float = 1.0        # × routed-expert matmul time, decode and prompt (1/η_e)
    attn: float = 1.0          # × decode attention time (1/η_c)
    prompt: float = 1.0        # × prompt dense matmul and attention time (1/η_p)
    share: float = 0.0         # e: the routed experts' share of the matmul FLOPs (calibrate.expert_share)
    computed: float = 1.0      # k: tokens computed per sequence per decode step (fitted: a)
    attn_in_compute: bool = False   # fitted: decode attention joins the matmuls on the compute side
    fixed_s: float = 0.0       # L·t_ℓ: every step
    prompt_fixed_s: float = 0.0     # L·t_ℓp: a step that carries prompt work, with probability 1 − e^(−λ)
    fitted: bool = False

    @classmethod
    def of(cls, model: ModelArch, dep: Deployment, eff: Efficiency | None) -> _Rates:
        if eff is None:
            return cls(dep)
        eff = eff.for_model(model)          # η_e of this model's experts (calibrate.Efficiency.expert_at)
        layers = float(model.n_layers or 0)
        return cls(dep.with_(mfu=1.0, bw_util=eff.bandwidth, mode="lecture"), 1.0 / eff.compute, 1.0 / eff.expert,
                   1.0 / eff.compute, 1.0 / eff.prompt, expert_share(model), float(dep.tokens_per_step), True,
                   layers * eff.layer_s, layers * eff.prompt_layer_s, True)

    @property
    def matmul(self) -> float:
        """× a decode matmul FLOP's peak time: (1 − e)/η_c + e/η_e."""
        return (1.0 - self.share) * self.dense + self.share * self.expert

    @property
    def prompt_matmul(self) -> float:
        """× a prompt matmul FLOP's peak time: (1 − e)/η_p + e/η_e."""
        return (1.0 - self.share) * self.prompt + self.share * self.expert

    def fixed(self, batch, prompt_rate) -> np.ndarray:
        """The step's fixed time: L·t_ℓ + L·t_ℓp·(1 − e^(−B·λ)), λ the new prompts per sequence per step."""
        return self.fixed_s + self.prompt_fixed_s * -np.expm1(-np.asarray(batch, float) * prompt_rate)


@dataclass(frozen=True)
class _Targets:
    ttft: float
    tpot: float
    requests_per_s: float | None
    utilisation: float


def _check_inputs(hardware, traffic, ttft_s, tpot_s, throughput, unit, utilisation, weight_dtypes, kv_dtypes,
                  modes, max_chips, link_latency_s, top_n) -> _Targets:
    if not isinstance(traffic, Traffic):
        raise ValueError("traffic must be a Traffic (Traffic.single(I, O) or Traffic.mix([...]))")
    if not hardware:
        raise ValueError("hardware: the chip list is empty: give at least one chip")
    for name, v in (("ttft_s", ttft_s), ("tpot_s", tpot_s)):
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} = {v!r} is out of range: it must be a number > 0 [s]")
    if unit not in THROUGHPUT_UNITS:
        raise ValueError(f"throughput_unit {unit!r} is not allowed: choose one of {', '.join(THROUGHPUT_UNITS)}")
    if throughput is not None and (not math.isfinite(throughput) or throughput <= 0):
        raise ValueError(f"throughput = {throughput!r} is out of range: it must be a number > 0")
    if not (0 < utilisation <= 1):
        raise ValueError(f"utilisation = {utilisation!r} is out of range: it must be > 0 and ≤ 1")
    for name, given, allowed in (("weight_dtypes", weight_dtypes, WEIGHT_DTYPES), ("kv_dtypes", kv_dtypes, KV_DTYPES),
                                 ("modes", modes, MODES)):
        bad = [d for d in given if d not in allowed]
        if bad or not given:
            raise ValueError(f"{name} = {list(given)!r} is not allowed: choose one or more of {', '.join(allowed)}")
    if max_chips < 1 or int(max_chips) != max_chips:
        raise ValueError(f"max_chips = {max_chips!r} is out of range: it must be an integer ≥ 1")
    if not math.isfinite(link_latency_s) or link_latency_s < 0:
        raise ValueError(f"link_latency_s = {link_latency_s!r} is out of range: it must be a number ≥ 0 [s]")
    if top_n < 1:
        raise ValueError("top_n must be ≥ 1")
    rps = None
    if throughput is not None:
        rps = throughput if unit == "requests" else throughput / traffic.mean_output
    return _Targets(float(ttft_s), float(tpot_s), rps, float(utilisation))


@dataclass(frozen=True)
class _TrafficTerms:
    """What the traffic implies, per KV dtype v (arrays over kv_dtypes) and per class k."""

    context: float                  # decode context T [tokens]
    longest: float                  # T_max
    read: np.ndarray                # (V,) KV bytes read per sequence per decode step at T
    attn: float                     # decode attention FLOPs per sequence per step at T
    stored_max: np.ndarray          # (V,) KV bytes stored per sequence at T_max
    x: float                        # prompt tokens per sequence per step (chunked prefill)
    prompt_rate: float              # new prompts per sequence per step, a / E[O]
    pf_matmul: float                # 2·Na·x [FLOP]
    pf_attn: float                  # chunked prompts' attention FLOPs per sequence per step
    pf_write: np.ndarray            # (V,) chunked prompts' KV writes per sequence per step [B]
    prompt: np.ndarray              # (K,) Iᵢ
    share: np.ndarray               # (K,) sᵢ
    prompt_attn: np.ndarray         # (K,) prefill attention FLOPs of one prompt
    prompt_stored: np.ndarray       # (V, K) KV bytes of one prompt


def _traffic_terms(model: ModelArch, traffic: Traffic, kvs: tuple[str, ...], dep: Deployment,
                   any_hw: Hardware) -> _TrafficTerms:
    """The model's KV and chunked-prefill figures for this traffic (no chip figure enters them; `any_hw`
    only completes the System that `chunked_prefill` takes)."""
    layouts = []
    for v in kvs:
        try:
            layouts.append(KVLayout.from_model(model, DTYPE_BYTES[v]))
        except ValueError as e:
            raise ValueError(f"model: {e}") from None
    kv0 = layouts[0]
    sp, prm = dep.sparse_attention, dep.sparse_param
    T = traffic.decode_context(kv0, sp, prm)
    I, O, s = traffic.arrays
    pf = [chunked_prefill(System(any_hw, model, Precision(kv=v), dep), I, O, s) for v in kvs]
    return _TrafficTerms(
        context=T, longest=traffic.longest,
        read=np.array([float(kv.read_bytes(T, sp, prm)) for kv in layouts]),
        attn=float(kv0.attn_flops(T, sp, prm)),
        stored_max=np.array([float(kv.stored_bytes(traffic.longest)) for kv in layouts]),
        x=pf[0].prompt_tokens, prompt_rate=dep.tokens_per_step / traffic.mean_output,
        pf_matmul=pf[0].matmul_flops, pf_attn=pf[0].attn_flops,
        pf_write=np.array([p.kv_write_bytes for p in pf]),
        prompt=I, share=s, prompt_attn=np.asarray(prefill_attention_flops(kv0, I), float),
        prompt_stored=np.array([kv.stored_bytes(I) for kv in layouts], float))


@dataclass(frozen=True)
class _Chips:
    """Per chip (axis H) and per layout (axis L, padded; `valid` marks the real ones)."""

    flops: np.ndarray        # (H, W) effective FLOP/s at each weight dtype's compute dtype
    attn_flops: np.ndarray   # (H, W) the FLOP/s attention runs at: `flops`, or the bf16 peak on the fitted model
    compute: np.ndarray      # (H, W) index into COMPUTE_DTYPES
    w_ok: np.ndarray         # (H, W)
    bw: np.ndarray           # (H,) effective HBM B/s
    hbm: np.ndarray          # (H,)
    price: np.ndarray        # (H,) $/chip-hour
    bw_out: np.ndarray       # (H,) scale-out B/s per chip (0: none)
    C: np.ndarray            # (H, L)
    P: np.ndarray            # (H, L)
    kind: np.ndarray         # (H, L) index into LAYOUT_NAMES
    valid: np.ndarray        # (H, L)
    c0: np.ndarray           # (H, L) comm latency part [s]
    c1: np.ndarray           # (H, L) comm per token [s]


def _layouts(hw: Hardware, model: ModelArch, max_chips: int, can_split: bool) -> list[tuple[int, int]]:
    """(C, P) pairs of one chip: C = 1, 2, 4 … within the domain, then pipeline stages, then (MoE)
    experts across domains; at most `max_chips` chips a replica."""
    D = min(hw.scaleup_domain_chips, max_chips) if can_split and hw.scaleup_bandwidth_bytes_per_s else 1
    out = []
    c = 1
    while c < D:
        out.append((c, 1))
        c *= 2
    out.append((D, 1))
    p = 2
    while D * p <= max_chips:
        out.append((D, p))
        p *= 2
    if can_split and model.is_moe and hw.scaleout_bandwidth_bytes_per_s and D == hw.scaleup_domain_chips:
        c = 2 * D
        while c <= max_chips:
            out.append((c, 1))
            c *= 2
    return out


def _chip_table(model: ModelArch, hws: list[Hardware], dep: Deployment, wds: tuple[str, ...], max_chips: int,
                link_latency_s: float, activation_bytes: float, notes: list[str], fitted: bool = False) -> _Chips:
    layout = "ep" if model.is_moe else "tp"
    can_split = model.d_model is not None and (moe_layer_count(model) is not None and model.experts_per_token > 0
                                               if model.is_moe else model.n_layers is not None)
    if not can_split:
        notes.append(f"{model.name} gives no d_model / layer count, so the communication of a layout over several "
                     "chips is unknown: one chip per stage only (pipeline stages beyond it)")
    per_chip = [_layouts(hw, model, max_chips, can_split) for hw in hws]
    H, L, W = len(hws), max(len(x) for x in per_chip), len(wds)
    C, P = np.ones((H, L)), np.ones((H, L))
    kind = np.zeros((H, L), np.int8)
    valid = np.zeros((H, L), bool)
    c0, c1 = np.zeros((H, L)), np.zeros((H, L))
    flops, compute, w_ok = np.ones((H, W)), np.zeros((H, W), np.int8), np.zeros((H, W), bool)
    attn_flops = np.ones((H, W))
    for h, (hw, lays) in enumerate(zip(hws, per_chip)):       # one chip's scalar figures into the arrays
        n = len(lays)
        C[h, :n] = [c for c, _ in lays]
        P[h, :n] = [p for _, p in lays]
        valid[h, :n] = True
        kind[h, :n] = np.where(C[h, :n] > 1, LAYOUT_NAMES.index(layout), 0)
        if np.any(C[h, :n] > 1):
            s = System(hw, model, Precision(), dep)
            t = layout_comm_time(s, np.array([0.0, 1.0]), layout, C[h, :n, None], link_latency_s=link_latency_s,
                                 activation_bytes=activation_bytes)
            c0[h, :n], c1[h, :n] = t[:, 0], t[:, 1] - t[:, 0]
        have = hw.compute_dtypes()
        for j, w in enumerate(wds):
            cd = w if w in have else "bf16"
            w_ok[h, j] = w != "fp4" or "fp4" in have
            compute[h, j] = COMPUTE_DTYPES.index(cd)
            flops[h, j] = hw.flops(cd) * dep.mfu
            attn_flops[h, j] = hw.flops(ATTENTION_DTYPE) * dep.mfu if fitted else flops[h, j]
    if any("fp4" in wds and "fp4" not in hw.compute_dtypes() for hw in hws):
        notes.append("fp4 weights only on chips with fp4 FLOP/s")
    return _Chips(flops, attn_flops, compute, w_ok,
                  np.array([hw.hbm_bandwidth_bytes_per_s * dep.bw_util for hw in hws]),
                  np.array([hw.hbm_bytes for hw in hws]), np.array([hw.price_usd_per_hour for hw in hws]),
                  np.array([hw.scaleout_bandwidth_bytes_per_s or 0.0 for hw in hws]),
                  C, P, kind, valid, c0, c1)


def _affine_max_le(pieces: list[tuple[np.ndarray, np.ndarray]], limit: np.ndarray) -> np.ndarray:
    """Largest B ≥ 0 with max(αⱼ + βⱼ·B) ≤ limit, per element (+inf if unbounded, −inf if none)."""
    out = np.full(np.broadcast(limit, *(a for p in pieces for a in p)).shape, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for alpha, beta in pieces:
            room = limit - alpha
            b = np.where(beta > 0, room / np.where(beta > 0, beta, 1.0), np.where(room >= 0, np.inf, -np.inf))
            out = np.minimum(out, b)
    return out


def _max_batch(pieces: list[tuple[np.ndarray, np.ndarray]], limit: np.ndarray, rt: _Rates, lam: np.ndarray,
               iterations: int = 60) -> np.ndarray:
    """Largest B with max(αⱼ + βⱼ·B) + fixed(B) ≤ limit, fixed(B) = L·t_ℓ + L·t_ℓp·(1 − e^(−λ·B)) (`_Rates.fixed`).

    With no time per prompt step the fixed part is a constant and the answer is `_affine_max_le`'s.  Else the
    left side rises with B and the fixed part lies between L·t_ℓ and L·(t_ℓ + t_ℓp), so the answer lies between
    the affine answers at those two constants; bisection narrows it (`iterations` halvings)."""
    hi = _affine_max_le(pieces, limit - rt.fixed_s)
    if rt.prompt_fixed_s == 0.0:
        return hi
    lo = _affine_max_le(pieces, limit - rt.fixed_s - rt.prompt_fixed_s)
    shape = np.broadcast(hi, lo, lam).shape
    hi, lo, lam = (np.broadcast_to(x, shape).astype(float) for x in (hi, lo, lam))
    unbounded = ~np.isfinite(hi) | ~(hi >= 0)          # no batch at all (-inf), or none binds (+inf)
    x_lo = np.where(np.isfinite(lo) & (lo > 0), lo, 0.0)
    x_hi = np.where(unbounded, x_lo, hi)
    limit = np.broadcast_to(limit, shape)

    def ok(b):
        worst = np.max([al + be * b for al, be in pieces], axis=0)
        return worst + rt.fixed(b, lam) <= limit

    for _ in range(iterations):
        mid = 0.5 * (x_lo + x_hi)
        good = ok(mid)
        x_lo, x_hi = np.where(good, mid, x_lo), np.where(good, x_hi, mid)
    return np.where(unbounded, hi, np.where(ok(x_hi), x_hi, x_lo))


def _ax(arr: Any, axes: tuple[int, ...], ndim: int = 5) -> np.ndarray:
    """Place an array's axes among the grid's (chip H, layout L, weight W, KV V, mode M, …)."""
    shape = [1] * ndim
    for i, n in zip(axes, np.shape(arr)):
        shape[i] = n
    return np.reshape(arr, shape)


def _rows(model: ModelArch, ch: _Chips, tr: _TrafficTerms, dep: Deployment, rt: _Rates, wds: tuple[str, ...],
          kvs: tuple[str, ...], mds: tuple[str, ...], tg: _Targets) -> dict[str, np.ndarray]:
    """Every row — chip × layout × weight dtype × KV dtype × mode — as flat arrays (batch not yet):
    the decode step's terms as α + β·B, the largest batches that fit and meet TPOT, and the prefill side."""
    H, L = ch.C.shape
    a, lecture = dep.tokens_per_step, dep.mode == "lecture"
    C, P = _ax(ch.C, (0, 1)), _ax(ch.P, (0, 1))
    F, Fa = _ax(ch.flops, (0, 2)), _ax(ch.attn_flops, (0, 2))
    bw, hbm, price, bw_out = (_ax(x, (0,)) for x in (ch.bw, ch.hbm, ch.price, ch.bw_out))
    Wb = _ax(np.array([DTYPE_BYTES[w] for w in wds]) * model.total_params, (2,))
    agg = _ax(np.array([m == "aggregated" for m in mds], float), (4,))
    read, stored_max, write = (_ax(x, (3,)) for x in (tr.read, tr.stored_max, tr.pf_write))
    cF, cFa, cbw = C * F, C * Fa, C * bw
    hop = np.where(P > 1, P * dep.pipeline_hop_s, 0.0)

    # Decode step terms, each α + β·B (β per sequence); "0": without the chunked prompts.  Fitted, every
    # FLOP's time carries its efficiency and decode attention counts as compute (_Rates).
    k = rt.computed
    w_t = Wb / cbw                                              # t_weights = W/(C·bw)
    mm0 = k * 2.0 * model.active_params * rt.matmul / cF        # t_matmul = 2·Na·B/(C·F)
    at0 = k * tr.attn * rt.attn / cFa                           # t_attn = B·attn(T)/(C·F)
    if rt.attn_in_compute:
        mm0, at0 = mm0 + at0, 0.0 * at0
    kv0 = read / cbw                                            # t_kv = B·kv(T)/(C·bw)
    pf_mm, pf_at = tr.pf_matmul * rt.prompt_matmul / cF, tr.pf_attn * rt.prompt / cFa
    mm1 = mm0 + agg * (pf_mm + (pf_at if lecture else 0.0))
    at1 = at0 + (0.0 if lecture else agg * pf_at)
    kv1 = kv0 + agg * write / cbw
    c0, c1 = _ax(ch.c0, (0, 1)), _ax(ch.c1, (0, 1))            # t_comm = c0 + c1·tokens
    c1x = c1 * (1.0 + agg * tr.x)                               # tokens = B·(1 + x)
    lam = agg * tr.prompt_rate                                  # new prompts per sequence per step (fitted)

    # The largest batch meeting TPOT: each piece of the step ≤ a·tpot − hops − fixed time.
    if lecture:
        pieces = [(0.0, mm1), (w_t, kv1), (c0, c1x)]
    else:
        g = np.maximum(at1, kv1)
        pieces = [(0.0, mm1 + g), (w_t, g), (c0, c1x + g)]
    b_tpot = _max_batch(pieces, a * tg.tpot - hop, rt, lam)
    room = C * P * hbm - Wb                                     # HBM left for KV in one replica
    with np.errstate(divide="ignore", invalid="ignore"):
        b_fit = np.where(stored_max > 0, room / (P * np.where(stored_max > 0, stored_max, 1.0)),
                         np.where(room >= 0, np.inf, -np.inf))

    pre = _prefill(model, ch, tr, dep, rt, tg, cF, cFa, cbw, C, P, Wb, hbm, price, bw_out, hop, c0, c1)
    valid = _ax(ch.valid, (0, 1)) & _ax(ch.w_ok, (0, 2)) & ((agg > 0) | pre["dis_possible"])
    full = np.broadcast_shapes((H, L, len(wds), len(kvs), len(mds)), valid.shape)
    keep = np.flatnonzero(np.broadcast_to(valid, full))

    def flat(x):
        return np.broadcast_to(x, full).ravel()[keep]

    codes = [np.array([names.index(v) for v in vals], np.int8)
             for names, vals in ((WEIGHT_DTYPES, wds), (KV_DTYPES, kvs), (MODES, mds))]
    is_agg = flat(agg) > 0
    out = {
        "hardware": flat(_ax(np.arange(H, dtype=np.int16), (0,))), "chips": flat(C), "pipeline_stages": flat(P),
        "layout": flat(_ax(ch.kind, (0, 1))), "weight_dtype": flat(_ax(codes[0], (2,))),
        "kv_dtype": flat(_ax(codes[1], (3,))), "compute_dtype": flat(_ax(ch.compute, (0, 2))),
        "mode": flat(_ax(codes[2], (4,))), "is_agg": is_agg,
        "w": flat(w_t), "mm0": flat(mm0), "mm1": flat(mm1), "at0": flat(at0), "at1": flat(at1),
        "kv0": flat(kv0), "kv1": flat(kv1), "c0": flat(c0), "c1": flat(c1), "c1x": flat(c1x), "hop": flat(hop),
        "lam": flat(lam),
        "price": flat(price), "hbm": flat(hbm), "weight_bytes": flat(Wb), "stored_max": flat(stored_max),
        "b_fit": flat(b_fit), "b_tpot": flat(b_tpot),
        "wbytes": flat(_ax(np.array([DTYPE_BYTES[w] for w in wds]), (2,))),
        "kvbytes": flat(_ax(np.array([DTYPE_BYTES[v] for v in kvs]), (3,))),
    }
    for k in ("ttft", "usd_in", "chip_s", "cap", "C", "P", "b"):
        out["pf_" + k] = np.where(is_agg, flat(pre["agg_" + k]), flat(pre["dis_" + k]))
    return out


def _prefill(model: ModelArch, ch: _Chips, tr: _TrafficTerms, dep: Deployment, rt: _Rates, tg: _Targets, cF, cFa, cbw,
             C, P, Wb, hbm, price, bw_out, hop, c0, c1) -> dict[str, np.ndarray]:
    """Prefill passes over axes (H, L, W, V, 1, prefill batch, class): the aggregated TTFT on each row's
    own layout (batch 1), and per chip and precision the disaggregated prefill replica."""
    def up(x):  # a row array (5 axes) with the two prefill axes appended
        return np.asarray(x, float)[..., None, None]

    b = _ax(np.array(PREFILL_BATCHES, float), (5,), 7)
    I, s, A = (_ax(x, (6,), 7) for x in (tr.prompt, tr.share, tr.prompt_attn))
    S = _ax(tr.prompt_stored, (3, 6), 7)                          # KV of one prompt, per KV dtype
    t_mm = b * 2.0 * model.active_params * rt.prompt_matmul * I / up(cF)
    t_at = b * A * rt.prompt / up(cFa)
    t_kv = b * S / up(cbw)
    t_comm = up(c0) + up(c1) * b * I
    fixed = rt.fixed_s + rt.prompt_fixed_s                        # a pass is a step with prompt work
    t = prefill_combine(t_mm, t_at, up(Wb / cbw), t_kv, t_comm, dep.mode) + up(hop) + fixed   # t_pass

    lay_ok = _ax(ch.valid, (0, 1)) & _ax(ch.w_ok, (0, 2))
    agg_ttft = t[..., 0, :].max(axis=-1)                          # (H, L, W, V, 1): batch 1, own layout
    # Disaggregated: a last axis, the decode replica's layout Ld.  The KV goes from each prefill chip to the
    # decode chips over min(C_p·P_p, C·P) NICs in parallel (the fewer chips' NICs carry it all).
    H = C.shape[0]
    CPd = np.reshape(ch.C * ch.P, (H, 1, 1, 1, 1, 1, 1, -1))      # (H, …, Ld)
    with np.errstate(divide="ignore"):
        transfer = S[..., None] / (np.minimum(up(C * P)[..., None], CPd) * up(bw_out)[..., None])
    ttft = (t[..., None] + transfer).max(axis=6)                  # (H, Lp, W, V, 1, NB, Ld)
    sum_t = (s * t).sum(axis=-1)                                  # Σ sᵢ·t_pass(Iᵢ): (H, Lp, W, V, 1, NB)
    b5 = b[..., 0]
    CP = up(C * P)[..., 0]
    usd_in = CP * up(price)[..., 0] / 3600.0 * sum_t / (up(P)[..., 0] * b5) / float(np.dot(tr.share, tr.prompt)) * 1e6
    s_max = up(_ax(tr.prompt_stored.max(axis=1), (3,)))[..., 0]     # the longest prompt's KV
    fit = ((up(Wb)[..., 0] + up(P)[..., 0] * b5 * s_max) / CP <= up(hbm)[..., 0])[..., None]
    valid = np.broadcast_to((lay_ok & (bw_out > 0))[..., None, None], ttft.shape)
    ok = valid & fit & (ttft <= tg.ttft)

    # Choose over (prefill layout, prefill batch) for each chip, precision and decode layout: the cheapest that
    # is ok (ties: fewer chips, then smaller batch); where none is, the fastest that fits (or at all).
    def last(x):  # (H, Lp, W, V, 1, NB[, Ld]) → (H, Ld, W, V, Lp·NB)
        x = np.asarray(x)
        x = np.broadcast_to(x if x.ndim == ttft.ndim else x[..., None], ttft.shape)[..., 0, :, :]
        x = np.transpose(x, (0, 5, 2, 3, 1, 4))
        return x.reshape((*x.shape[:4], -1))

    big = np.iinfo(np.int64).max
    q = np.where(last(valid), _quantise(np.where(last(valid), last(usd_in), 1.0)), big)
    chips_k, b_k = last(CP), last(np.broadcast_to(b5, sum_t.shape))
    pick_ok = np.lexsort((b_k, chips_k, q, ~last(ok)), axis=-1)[..., 0]
    pick_fast = np.lexsort((b_k, chips_k, q, np.where(last(valid), last(ttft), np.inf), ~last(fit), ~last(valid)),
                           axis=-1)[..., 0]
    any_ok = last(ok).any(axis=-1)
    pick = np.where(any_ok, pick_ok, pick_fast)[..., None]       # (H, Ld, W, V, 1)

    def chosen(x):  # the chosen entry, as a row array (H, Ld, W, V, 1)
        return np.take_along_axis(last(x), pick, axis=-1)

    one = np.ones_like(agg_ttft)
    full = np.ones(sum_t.shape)
    return {
        "dis_possible": last(valid).any(axis=-1)[..., None],
        "agg_ttft": agg_ttft, "agg_usd_in": np.nan * one, "agg_chip_s": 0.0 * one, "agg_cap": np.inf * one,
        "agg_C": C * one, "agg_P": P * one, "agg_b": one,
        "dis_ttft": chosen(ttft), "dis_usd_in": chosen(usd_in), "dis_chip_s": chosen(CP * sum_t / (up(P)[..., 0] * b5)),
        "dis_cap": chosen(up(P)[..., 0] * b5 / sum_t), "dis_C": chosen(up(C)[..., 0] * full),
        "dis_P": chosen(up(P)[..., 0] * full), "dis_b": chosen(b5 * full),
    }


def _quantise(cost: np.ndarray) -> np.ndarray:
    """Costs as integers that tie within RANK_TOL (relative) — for sorting with tie-breakers."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.rint(np.log(cost) / RANK_TOL)
    return np.where(np.isfinite(q), q, 2.0 ** 62).astype(np.int64)


def _cells(rows: dict[str, np.ndarray], tr: _TrafficTerms, dep: Deployment, rt: _Rates, traffic: Traffic,
           tg: _Targets) -> dict[str, np.ndarray]:
    """The batch axis: every row's grid, then every configuration's numbers as flat arrays."""
    a, lecture = dep.tokens_per_step, dep.mode == "lecture"
    b_hi = np.floor(np.clip(rows["b_fit"], 1.0, MAX_BATCH))
    k = np.arange(PER_OCTAVE * int(np.ceil(np.log2(max(float(b_hi.max()), 2.0)))) + 1)
    geo = np.floor(b_hi[:, None] * 2.0 ** (-k / PER_OCTAVE))
    ok_geo = geo >= 1.0
    ok_geo[:, 1:] &= geo[:, 1:] < geo[:, :-1]
    bt = np.floor(np.where(np.isfinite(rows["b_tpot"]), rows["b_tpot"], 0.0))
    cand = np.stack([bt, bt - 1.0], axis=1)
    ok_c = (cand >= 1.0) & (cand < b_hi[:, None])
    ok_c &= ~(geo[:, :, None] == cand[:, None, :]).any(axis=1)
    grid = np.concatenate([geo, cand], axis=1)
    r, j = np.nonzero(np.concatenate([ok_geo, ok_c], axis=1))     # row-major: each row's cells together
    B = grid[r, j]

    def g(key):
        return rows[key][r]

    w, hop = g("w"), g("hop")
    mm, at, kv, cm = g("mm1") * B, g("at1") * B, g("kv1") * B, g("c0") + g("c1x") * B
    fixed = rt.fixed(B, g("lam"))                                  # 0 on the roofline
    t_step = combine(mm, at, w, kv, cm, dep.mode) + hop + fixed
    t_base = combine(g("mm0") * B, g("at0") * B, w, g("kv0") * B, g("c0") + g("c1") * B, dep.mode) + hop + rt.fixed_s
    if lecture:
        mem = w + kv
        bound = np.where(mm >= np.maximum(mem, cm), 0, np.where(mem >= cm, np.where(w >= kv, 1, 2), 3))
    else:
        bound = np.argmax(np.stack([mm, w, kv, cm, at]), axis=0)   # BOUNDS order

    C, P, price, is_agg = g("chips"), g("pipeline_stages"), g("price"), g("is_agg")
    EI, EO = traffic.mean_input, traffic.mean_output
    kappa = C * price / 3600.0                                    # C·P·κ/(P·…): the stages cancel
    usd_out = kappa * t_base / (B * a) * 1e6                       # C·P·κ·t/(P·B·a)·1e6
    with np.errstate(divide="ignore", invalid="ignore"):
        usd_in = np.where(is_agg, kappa * (t_step - t_base) / (B * tr.x) * 1e6, g("pf_usd_in"))
    usd_req = (EI * usd_in + EO * usd_out) / 1e6
    chip_s = C * t_step / (B * a) * EO + g("pf_chip_s")             # chip-seconds per request
    cap = P * B * a / (t_step * EO)                                 # requests/s one (decode) replica serves
    hbm = (g("weight_bytes") + P * B * g("stored_max")) / (C * P)
    fits = hbm <= g("hbm")
    tpot = t_step / a
    ttft = g("pf_ttft")
    meets_ttft, meets_tpot = ttft <= tg.ttft, tpot <= tg.tpot
    pf_chips = g("pf_C") * g("pf_P")
    pts = {
        "hardware": g("hardware"), "chips": C, "pipeline_stages": P, "layout": g("layout"),
        "weight_dtype": g("weight_dtype"), "kv_dtype": g("kv_dtype"), "compute_dtype": g("compute_dtype"),
        "mode": g("mode"), "batch": B, "decode_chips": C * P, "prefill_chips": pf_chips,
        "prefill_stages": g("pf_P"), "prefill_batch": g("pf_b"), "context": tr.context,
        "t_step_s": t_step, "t_comm_s": cm, "t_fixed_s": fixed + 0.0 * B,
        "ttft_s": ttft, "tpot_s": tpot, "tokens_per_s_per_user": a / t_step,
        "tokens_per_s_per_chip": EO / chip_s, "decode_tokens_per_s_per_chip": P * B * a / t_step / (C * P),
        "usd_per_mtok_output": usd_out, "usd_per_mtok_input": usd_in, "usd_per_mtok": usd_req / EO * 1e6,
        "usd_per_request": usd_req, "bound": bound.astype(np.int8), "hbm_bytes_per_chip": hbm, "fits": fits,
        "meets_ttft": meets_ttft, "meets_tpot": meets_tpot, "feasible": fits & meets_ttft & meets_tpot,
        "max_batch_fit": g("b_fit"), "max_batch_tpot": g("b_tpot"),
        "prefill_decode_chip_ratio": np.where(is_agg, np.nan, g("pf_chip_s") / (C * t_step / (B * a) * EO)),
    }
    if tg.requests_per_s is not None:
        R, u = tg.requests_per_s, tg.utilisation
        n = np.ceil(R / (u * cap))
        n_p = np.where(is_agg, 0.0, np.ceil(R / (u * g("pf_cap"))))
        total = n * C * P + n_p * pf_chips
        pts.update(replicas=n, prefill_replicas=n_p, chips_total=total, usd_per_hour=total * price)
    for k in ("chips", "pipeline_stages", "batch", "decode_chips", "prefill_chips", "prefill_stages", "prefill_batch"):
        pts[k] = pts[k].astype(np.int32)                          # whole numbers (batch ≤ MAX_BATCH)
    pts["context"] = np.broadcast_to(tr.context, B.shape)        # one value for every point (read-only)
    pts["_row"] = r
    pts["_wbytes"], pts["_kvbytes"] = g("wbytes"), g("kvbytes")
    return pts


def _first_per_group(mask: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Indices of the first True of `mask` in each run of equal, sorted `group` values."""
    i = np.flatnonzero(mask)
    if i.size == 0:
        return i
    gi = group[i]
    return i[np.concatenate([[True], gi[1:] != gi[:-1]])]


def _rank(pts: dict[str, np.ndarray], idx: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """`idx` ordered by cost (ties within RANK_TOL), then fewer chips per replica, faster TPOT, wider
    weight and KV dtypes, aggregated first, chip order."""
    per_replica = _chips_per_replica(pts)
    keys = (pts["hardware"][idx], pts["mode"][idx], -pts["_kvbytes"][idx], -pts["_wbytes"][idx],
            pts["tpot_s"][idx], per_replica[idx], _quantise(cost[idx]))
    return idx[np.lexsort(keys)]


def _chips_per_replica(pts: dict[str, np.ndarray]) -> np.ndarray:
    """Chips of one replica: C·P, plus the prefill replica's when disaggregated."""
    dis = pts["mode"] == MODES.index("disaggregated")
    return pts["decode_chips"] + np.where(dis, pts["prefill_chips"], 0.0)


def _pareto(idx: np.ndarray, x: np.ndarray, y: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Points of `idx` that no other beats on both x and y (larger is better on both): sorted by x
    falling (ties: y falling, then `tie` rising), kept where y beats every point before it —
    so returned with x falling and y rising."""
    idx = idx[np.isfinite(x[idx]) & np.isfinite(y[idx]) & (y[idx] > 0)]
    if idx.size == 0:
        return idx
    # A cheap first cut: bin y (> 0) on a log scale; a point whose x is no better than the best x of
    # any higher bin is beaten there (higher y, x at least as good), so only the rest are sorted.
    ly = np.log(y[idx])
    lo, hi = float(ly.min()), float(ly.max())
    nb = 2048
    bins = np.minimum(((ly - lo) / max(hi - lo, 1e-300) * nb).astype(np.int64), nb - 1)
    best_x = np.full(nb + 1, -np.inf)
    np.maximum.at(best_x, bins, x[idx])
    above = np.maximum.accumulate(best_x[::-1])[::-1][1:]        # best x in the bins above each bin
    idx = idx[x[idx] > above[bins]]
    o = idx[np.lexsort((tie[idx], -y[idx], -x[idx]))]
    yo = y[o]
    best_before = np.concatenate([[-np.inf], np.maximum.accumulate(yo)[:-1]])
    return o[yo > best_before]


def _answer(pts: dict[str, np.ndarray], keys: tuple[str, ...], traffic: Traffic, tg: _Targets,
            efficiency: dict[str, Any], notes: list[str], top_n: int, t0: float) -> Plan:
    """Best, top, frontiers and — when nothing is feasible — the binding target and the closest point."""
    with_throughput = tg.requests_per_s is not None
    cost = pts["usd_per_hour"] if with_throughput else pts["usd_per_request"]
    pts["feasible"] &= np.isfinite(cost) & (cost > 0)
    feas = pts["feasible"]
    row = pts["_row"]

    # Each row's cheapest feasible batch (ties: the faster), then the rows ranked.
    big = np.iinfo(np.int64).max
    cq = np.where(feas, _quantise(np.where(feas, cost, 1.0)), big)
    new = np.concatenate([[True], row[1:] != row[:-1]])
    starts = np.flatnonzero(new)
    gid = np.cumsum(new) - 1
    is_min = feas & (cq == np.minimum.reduceat(cq, starts)[gid])
    tq = np.where(is_min, pts["tpot_s"], np.inf)
    per_row = _first_per_group(is_min & (tq == np.minimum.reduceat(tq, starts)[gid]), row)
    ranked = _rank(pts, per_row, cost)
    best = int(ranked[0]) if ranked.size else None
    top = _distinct(pts, ranked, cost, top_n)

    reach = pts["fits"] & pts["meets_ttft"]
    tie = _chips_per_replica(pts)
    cand = np.flatnonzero(reach)
    frontier = _pareto(cand, -pts["usd_per_request"], pts["tokens_per_s_per_user"], tie)
    frontier_chip = _pareto(cand, pts["tokens_per_s_per_chip"], pts["tokens_per_s_per_user"], tie)

    closest = binding = reason = None
    if best is None:
        closest, binding, reason = _closest(pts, tg)
    out = {k: v for k, v in pts.items() if not k.startswith("_")}
    return Plan(out, keys, traffic, tg.ttft, tg.tpot, best, top, frontier, frontier_chip, closest, binding, reason,
                "usd_per_hour" if with_throughput else "usd_per_request", tg.requests_per_s, tg.utilisation,
                efficiency, time.perf_counter() - t0, tuple(notes))


def _distinct(pts: dict[str, np.ndarray], ranked: np.ndarray, cost: np.ndarray, n: int) -> np.ndarray:
    """The first `n` of `ranked`, skipping a point that one kept before it matches (Plan.top)."""
    per_replica = _chips_per_replica(pts)
    same = ("hardware", "weight_dtype", "kv_dtype", "mode")
    kept: list[int] = []
    for i in ranked:
        i = int(i)
        if not any(all(pts[k][j] == pts[k][i] for k in same) and _quantise(cost[[j, i]])[0] == _quantise(cost[[i]])[0]
                   and pts["tpot_s"][j] <= pts["tpot_s"][i] * (1 + RANK_TOL)
                   and pts["ttft_s"][j] <= pts["ttft_s"][i] * (1 + RANK_TOL) and per_replica[j] <= per_replica[i]
                   for j in kept):
            kept.append(i)
            if len(kept) == n:
                break
    return np.array(kept, dtype=np.int64)


def _argmin(idx: np.ndarray, *keys: np.ndarray) -> int:
    """The index of `idx` with the smallest keys (the first key first)."""
    return int(idx[np.lexsort(tuple(k[idx] for k in reversed(keys)))[0]])


def _closest(pts: dict[str, np.ndarray], tg: _Targets) -> tuple[int, str, str]:
    """Nothing is feasible: which target binds, and the point that comes closest to it."""
    fits, ok_t, ok_p = pts["fits"], pts["meets_ttft"], pts["meets_tpot"]
    cost, tpot, ttft = pts["usd_per_request"], pts["tpot_s"], pts["ttft_s"]
    if not fits.any():
        i = _argmin(np.arange(fits.size), pts["hbm_bytes_per_chip"] * pts["decode_chips"], cost)
        return i, "hbm", ("nothing fits: the weights and the KV of one sequence at the longest context exceed HBM "
                          "on every chip and layout searched (raise max_chips for more pipeline stages)")
    a_set, b_set = np.flatnonzero(fits & ok_t), np.flatnonzero(fits & ok_p)
    f = np.flatnonzero(fits)
    fastest_tpot = float(tpot[f].min())
    fastest_ttft = float(ttft[f].min())
    if a_set.size and not b_set.size:
        i = _argmin(a_set, tpot, cost)
        return i, "tpot", (f"the TPOT target {tg.tpot:.4g} s is out of reach: the fastest any configuration that "
                           f"fits reaches is {fastest_tpot:.4g} s (closest: the fastest that meets TTFT)")
    if b_set.size and not a_set.size:
        i = _argmin(b_set, ttft, cost)
        return i, "ttft", (f"the TTFT target {tg.ttft:.4g} s is out of reach: the fastest any configuration that "
                           f"fits reaches is {fastest_ttft:.4g} s (closest: the fastest that meets TPOT)")
    worst = np.maximum(ttft / tg.ttft, tpot / tg.tpot)
    i = _argmin(f, worst, cost)
    if not a_set.size:
        return i, "ttft+tpot", (f"neither target is in reach: the fastest TPOT is {fastest_tpot:.4g} s "
                                f"(target {tg.tpot:.4g} s), the fastest TTFT {fastest_ttft:.4g} s (target "
                                f"{tg.ttft:.4g} s); closest: the least over the worse of the two")
    return i, "ttft+tpot", ("each target is in reach alone but no configuration meets both; closest: the least "
                            "over the worse of the two")


# ---------------------------------------------------------------- one configuration, the slow way

@dataclass(frozen=True)
class Config:
    """One configuration of the search (what a point of `Plan.points` names)."""

    chips: int
    pipeline_stages: int
    batch: float
    weight_dtype: str
    kv_dtype: str
    mode: str
    prefill_chips: int = 1           # disaggregated: chips per prefill stage, C_p
    prefill_stages: int = 1          # P_p
    prefill_batch: int = 1           # b_p


def evaluate(model: ModelArch, hw: Hardware, cfg: Config, traffic: Traffic, *, deployment: Deployment = Deployment(),
             link_latency_s: float = 0.0, activation_bytes: float = 2.0,
             efficiency: Efficiency | None = None) -> dict[str, Any]:
    """One configuration through `decode_step` and `prefill`, one call per step and per request class —
    the planner's formulas (module docstring) point by point: its reference in the tests, the per-configuration
    baseline of bench/bench_plan.py and the Plan page's step breakdown.

    With `efficiency` (the fitted model), the steps are taken at peak rates in per-phase form, so that the
    matmul, attention, weight and KV terms come apart; each FLOP term is then divided by its efficiency, the
    streams by η_bw, and the step is max(compute, memory, comm) + fixed time (as `calibrate.predict_step`,
    plus the layout's communication).  The result carries the step's terms: t_dense_s, t_expert_s, t_attn_s
    (the decode step's FLOPs, prompts included), t_weights_s, t_kv_s, t_comm_s, t_fixed_s, t_hops_s.
    """
    cd = cfg.weight_dtype if cfg.weight_dtype in hw.compute_dtypes() else "bf16"
    prec = Precision(weights=cfg.weight_dtype, kv=cfg.kv_dtype, compute=cd)
    C, P, B = float(cfg.chips), cfg.pipeline_stages, float(cfg.batch)
    fitted = efficiency is not None
    if fitted:
        efficiency = efficiency.for_model(model)
    dep = deployment.with_(mfu=1.0, bw_util=1.0, mode="per-phase") if fitted else deployment
    s = System(hw, model, prec, dep.with_(chips=C, pipeline_stages=P))
    kind = "none" if C == 1 else "ep" if model.is_moe else "tp"
    I, O, sh = traffic.arrays
    a, EI, EO = deployment.tokens_per_step, traffic.mean_input, traffic.mean_output
    T = traffic.decode_context(s.kv, deployment.sparse_attention, deployment.sparse_param)
    agg = cfg.mode == "aggregated"
    e = expert_share(model) if fitted else 0.0
    layers = float(model.n_layers or 0)

    def comm(system, tokens, lay):
        return layout_comm_time(system, tokens, lay, link_latency_s=link_latency_s, activation_bytes=activation_bytes)

    def hops(system):
        stages = system.deployment.pipeline_stages
        return stages * deployment.pipeline_hop_s if stages > 1 else 0.0

    def passes(system, lay, b):   # each class's prefill pass + hops [s]
        out = []
        for i in I:
            t_c = comm(system, b * i, lay)
            if not fitted:
                out.append(float(prefill(system, i, b, t_comm=t_c).t_prefill_s) + hops(system))
                continue
            r = prefill(system, i, b)            # per-phase at peak: compute = matmul + attention FLOP time
            t_at = b * float(prefill_attention_flops(system.kv, i)) / (system.deployment.chips * system.flops)
            t_mm = float(r.t_compute_s) - t_at
            comp = (t_mm * ((1 - e) / efficiency.prompt + e / efficiency.expert)
                    + t_at * attention_slowdown(hw, cd) / efficiency.prompt)      # attention at the bf16 peak
            out.append(max(comp, float(r.t_memory_s) / efficiency.bandwidth, float(t_c)) + hops(system)
                       + layers * (efficiency.layer_s + efficiency.prompt_layer_s))
        return np.array(out)

    pf = chunked_prefill(s, I, O, sh) if agg else None
    t_comm = float(comm(s, B if pf is None else pf.tokens(B), kind))
    step = decode_step(s, B, T, t_comm=t_comm, prefill=pf)
    base = decode_step(s, B, T, t_comm=comm(s, B, kind)) if agg else step
    hbm = float(decode_step(s, B, traffic.longest).hbm_bytes_per_chip)
    if fitted:
        lam = a / EO if agg else 0.0
        r = predict_decode_step(s, B, T, efficiency, t_comm=t_comm, prefill=pf, prompt_rate=lam)
        r0 = predict_decode_step(s, B, T, efficiency, t_comm=comm(s, B, kind)) if agg else r
        t_step, t_base, bound = float(r["t_step_s"]), float(r0["t_step_s"]), str(r["bound"])
        terms = {k: float(r[k]) for k in STEP_TERMS}
        usd_out = float(r0["usd_per_mtok"])
    else:
        t_step, t_base = float(step.t_step_s), float(base.t_step_s)
        bound = str(step.bound)
        terms = {"t_dense_s": float(step.t_matmul_s), "t_expert_s": 0.0, "t_attn_s": float(step.t_attn_s),
                 "t_weights_s": float(step.t_weights_s), "t_kv_s": float(step.t_kv_s), "t_comm_s": t_comm,
                 "t_fixed_s": 0.0, "t_hops_s": float(step.t_hops_s)}
        usd_out = float(base.usd_per_mtok)
    if agg:
        ttft = float(passes(s, kind, 1.0).max())
        usd_in = C * hw.price_usd_per_hour / 3600.0 * (t_step - t_base) / (B * pf.prompt_tokens) * 1e6
        chip_s_pf, cap_p = 0.0, math.inf
    else:
        Cp, Pp, bp = float(cfg.prefill_chips), cfg.prefill_stages, float(cfg.prefill_batch)
        sp = System(hw, model, prec, dep.with_(chips=Cp, pipeline_stages=Pp))
        t_pass = passes(sp, "none" if Cp == 1 else kind, bp)
        transfer = s.kv.stored_bytes(I) / (min(Cp * Pp, C * P) * (hw.scaleout_bandwidth_bytes_per_s or 0.0))
        ttft = float((t_pass + transfer).max())
        sum_t = float(np.dot(sh, t_pass))
        usd_in = Cp * Pp * hw.price_usd_per_hour / 3600.0 * sum_t / (Pp * bp) / EI * 1e6
        chip_s_pf, cap_p = Cp * sum_t / bp, Pp * bp / sum_t
    usd_req = (EI * usd_in + EO * usd_out) / 1e6
    chip_s = C * t_step / (B * a) * EO + chip_s_pf
    fits = hbm <= hw.hbm_bytes
    return {"t_step_s": t_step, "tpot_s": t_step / a, "ttft_s": ttft, "tokens_per_s_per_user": a / t_step,
            "tokens_per_s_per_chip": EO / chip_s, "usd_per_mtok_output": usd_out, "usd_per_mtok_input": usd_in,
            "usd_per_request": usd_req, "hbm_bytes_per_chip": hbm, "fits": fits,
            "bound": bound, "context": T, "requests_per_s": P * B * a / (t_step * EO),
            "prefill_requests_per_s": cap_p, **terms}


def searchable_hardware() -> dict[str, Hardware]:
    """The chip presets a plan searches by default: every one but the illustrative (made-up) chips."""
    return {k: h for k, h in presets.hardware_presets().items() if h.status != "illustrative"}
