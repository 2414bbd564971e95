"""Reality check: published serving measurements against the roofline bound of their own setup.

For one measurement (presets/measurements.yaml, `presets.Measurement`) the bound is the roofline
of exactly its setup — chip, model, weight/KV/compute formats, C chips per replica, mean decode
context, MTP, and (for whole-system figures) the prompt work — with every FLOP and byte it must
spend perfectly overlapped. A decode step of B sequences then takes at least

    t(B) = max(B·c / MFU, (m0 + B·m) / BWU)                                   [s]

    c  = k·(t_matmul + t_attn)/B  (+ a/O · 2·Na·L_new / (C·F))   compute per sequence per step
    m0 = t_weights = W / (C·bw)                                    weight stream per step
    m  = t_kv/B  (+ a/O · prompt KV read and write / (C·bw))       memory per sequence per step

with the decode terms from `roofline.decode_step` at B = 1 and context T (the published mean KV
length, or L + O/2), k tokens computed and a accepted per sequence per step (multi-token
prediction), and — when the figure covers prefill too (scope "system") — each step carrying its
share a/O of a new prompt: the prompt's matmul FLOPs (`roofline.matmul_time`) and its KV traffic
(`roofline.prefill`). Prompt attention FLOPs are left out, since their count depends on the kernel's
form (MLA prefill runs un-absorbed); leaving work out only raises the bound. Communication is not
charged either. B is capped by HBM: B ≤ B_fit = (C·M − W) / kv_stored(T) (`max_batch_that_fits`).

Speed per user u = a / t(B), throughput per chip = B·a / (C·t(B)). At a measured speed u the
largest batch that keeps up is

    B*(u) = min(τ·MFU / c,  (τ·BWU − m0) / m,  B_fit),   τ = a / u

so the bound on throughput per chip at that speed is B*·u / C (0 when even one sequence cannot
reach u). A measurement without a published speed is held against the frontier's top, B = B_fit.
efficiency = measured ÷ bound; with MFU = BWU = 1 no honest measurement can exceed 1.

The fit finds the (MFU, BWU) whose roofline best predicts the selected measurements, in log space:
a point with a published speed implies its decode batch per replica, B = measured·C/u, and the fit
compares measured with the throughput that batch would give, B·a/(C·t(B)) — the same as comparing
step times, a smooth function of the efficiencies (comparing throughput at equal speed instead is
near-singular where the weight stream alone nearly fills the step). A point without a speed is
compared with the frontier's top. Least squares of log10(measured ÷ predicted) by a vectorised
grid search over [0.01, 1]², refined once.

Prediction (the second half of this module): the bound leaves out what real serving loses, so
`Efficiency` names a few terms — HBM bandwidth efficiency, compute efficiency of the dense and of the
routed-expert matmuls, a fixed time per layer in the steps that carry a prompt (and, available but not
fitted by default, a prompt efficiency of its own and a fixed time per layer in every step) — and
`predict_step` gives the step time of any setup (`parts_for`: a System at any batch and context,
arrays) under them.  `fit_points` fits the terms to measurements (each at its own operating
point: its published batch, else its speed, else whatever fits in HBM — `load_of`), with a standard
error per term; `cross_validate` measures the error on points each fit never saw (leave one
publisher, chip, model or random fifth out).  `built_in_fit` and `built_in_cv` are those for the
built-in measurements (cached).  Reasons and sources of the terms: `TERMS` and docs/prediction.md.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from os import PathLike
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from . import presets
from .cluster import expert_bytes
from .presets import Measurement
from .roofline import (
    ChunkedPrefill,
    System,
    decode_step,
    matmul_time,
    max_batch_that_fits,
    prefill,
    prefill_attention_flops,
)
from .specs import Deployment, Precision

EFF_MIN = 0.01                      # the sidebar dials' lower end
BOUNDS = ("compute", "memory", "capacity")


@dataclass(frozen=True)
class Terms:
    """The bound's per-step terms for one setup, at MFU = BWU = 1 (see the module docstring).

    c   compute per sequence per step [s]      m0  weight stream per step [s]
    m   memory per sequence per step [s]       b_fit  sequences per replica that fit in HBM [-]
    a   tokens accepted per sequence per step  chips  C, chips per replica
    """

    c: float
    m0: float
    m: float
    b_fit: float
    a: float
    chips: float


FILE_PREFIX = "file:"            # a measurement's model/hardware naming a user's spec file (`resolve`)


@cache
def _spec_file(kind: str, path: str):
    return presets.load_spec(kind, path)


def spec_of(kind: str, value: str):
    """The hardware or model spec a measurement names: a preset key, or "file:/abs/path.yaml" as
    `resolve` writes it for a user's own spec file (the command line only)."""
    if value.startswith(FILE_PREFIX):
        return _spec_file(kind, value[len(FILE_PREFIX):])
    return presets.get(kind, value)


def system_for(m: Measurement) -> System:
    """The roofline `System` of a measurement's setup (ideal: MFU = BWU = 1, lecture mode)."""
    hw = spec_of("hardware", m.hardware)
    model = spec_of("model", m.model)
    if m.compute not in hw.compute_dtypes():
        raise ValueError(f"measurement {m.name!r}: {hw.name} has no {m.compute} FLOP/s figure")
    return System(hw, model, Precision(weights=m.weights, kv=m.kv, compute=m.compute),
                  Deployment(chips=float(m.chips_per_replica), tokens_per_step=m.tokens_per_step))


def terms(m: Measurement) -> Terms:
    """The bound's terms for one measurement's setup (decode_step at B = 1; prompt share for "system")."""
    s = system_for(m)
    T = m.decode_context
    d = decode_step(s, 1.0, T)
    k, a, C = m.tokens_computed_per_step, m.tokens_per_step, float(m.chips_per_replica)
    c = k * float(d.t_matmul_s + d.t_attn_s)
    m0 = float(d.t_weights_s)
    mem = float(d.t_kv_s)
    if m.scope == "system":
        L = m.input_tokens
        new = L * (1.0 - m.cache_hit_rate)
        share = a / m.output_tokens                          # prompts started per sequence per step
        c += share * float(matmul_time(s.model.active_params, new, C, s.flops))
        p = prefill(s, L, 1.0, L - new)
        mem += share * float(p.t_memory_s - d.t_weights_s)   # cached-prefix read + KV written, no weights
    return Terms(c, m0, mem, float(max_batch_that_fits(s, T)), a, C)


def _stack(ts: Iterable[Terms]) -> dict[str, np.ndarray]:
    ts = list(ts)
    return {f: np.array([getattr(t, f) for t in ts], float) for f in Terms.__dataclass_fields__}


def step_time(t: Terms | Mapping[str, np.ndarray], batch, mfu=1.0, bwu=1.0) -> np.ndarray:
    """t(B) = max(B·c/MFU, (m0 + B·m)/BWU) [s]; arrays broadcast."""
    g = t if isinstance(t, Mapping) else t.__dict__
    b = np.asarray(batch, float)
    return np.maximum(b * g["c"] / np.asarray(mfu, float), (g["m0"] + b * g["m"]) / np.asarray(bwu, float))


def frontier(t: Terms, batch, mfu=1.0, bwu=1.0) -> dict[str, np.ndarray]:
    """The throughput-vs-interactivity curve of one setup over `batch` (sequences per replica).

    Returns tokens_per_s_per_user, tokens_per_s_per_chip, t_step_s, fits (B ≤ B_fit) and bound
    ("compute" or "memory": which side of the step is longer).
    """
    b = np.asarray(batch, float)
    mfu, bwu = np.asarray(mfu, float), np.asarray(bwu, float)
    comp = b * t.c / mfu
    mem = (t.m0 + b * t.m) / bwu
    ts = np.maximum(comp, mem)
    u = t.a / ts
    return {"batch": b, "tokens_per_s_per_user": u, "tokens_per_s_per_chip": b * u / t.chips, "t_step_s": ts,
            "fits": b <= t.b_fit, "bound": np.where(comp >= mem, "compute", "memory")}


def _predict(g: Mapping[str, np.ndarray], speed: np.ndarray, mfu, bwu) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tokens/s per chip, batch, bound code 0 compute / 1 memory / 2 capacity) — see `predict`."""
    u = np.asarray(speed, float)
    mfu, bwu = np.asarray(mfu, float), np.asarray(bwu, float)
    has_u = np.isfinite(u)
    tau = g["a"] / np.where(has_u, u, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        b_comp = np.where(g["c"] > 0, tau * mfu / g["c"], np.inf)
        b_mem = np.where(g["m"] > 0, (tau * bwu - g["m0"]) / g["m"], np.where(tau * bwu >= g["m0"], np.inf, -np.inf))
    b_speed = np.minimum(b_comp, b_mem)
    b = np.minimum(b_speed, g["b_fit"])
    which = np.where(b_speed >= g["b_fit"], 2, np.where(b_comp <= b_mem, 0, 1))
    tps_speed = np.where(b >= 1.0, b * u / g["chips"], 0.0)
    # No published speed: the top of the frontier, B = B_fit (B → ∞ when nothing is stored per sequence).
    fin = np.isfinite(g["b_fit"])
    bb = np.where(fin, g["b_fit"], 1.0)
    comp_top = np.where(fin, bb * g["c"], g["c"]) / mfu                 # per sequence when B → ∞
    mem_top = np.where(fin, g["m0"] + bb * g["m"], g["m"]) / bwu
    tps_top = np.where(g["b_fit"] >= 1.0, bb * g["a"] / (g["chips"] * np.maximum(comp_top, mem_top)), 0.0)
    which_top = np.where(comp_top >= mem_top, 0, 1)
    return (np.where(has_u, tps_speed, tps_top), np.where(has_u, b, g["b_fit"]),
            np.where(has_u, which, which_top))


def predict(g: Mapping[str, np.ndarray], speed: np.ndarray, mfu=1.0, bwu=1.0) -> dict[str, np.ndarray]:
    """Throughput per chip the bound allows at each point's speed (NaN speed: the frontier's top).

    g: stacked Terms (arrays, one per point); speed [tok/s/user]; mfu, bwu broadcast against the
    points (e.g. shape (G, 1) against (N,) for a grid).  Returns tokens_per_s_per_chip, batch (per
    replica) and bound ("compute", "memory" or "capacity": which cap on the batch binds).
    """
    tps, b, which = _predict(g, speed, mfu, bwu)
    return {"tokens_per_s_per_chip": tps, "batch": b, "bound": np.asarray(BOUNDS)[which]}


def at_speed(t: Terms, speed, mfu=1.0, bwu=1.0) -> dict[str, np.ndarray]:
    """The bound on throughput per chip of one setup at each speed per user (`predict` for one setup)."""
    return predict(t.__dict__, np.asarray(speed, float), mfu, bwu)


def speed_range(t: Terms, mfu=1.0, bwu=1.0) -> tuple[float, float]:
    """(speed at B = B_fit, speed at B = 1) [tok/s/user]: where the HBM cap starts to bind, and the fastest."""
    b_top = t.b_fit if np.isfinite(t.b_fit) else 1.0
    return float(t.a / step_time(t, b_top, mfu, bwu)), float(t.a / step_time(t, 1.0, mfu, bwu))


@dataclass(frozen=True)
class Check:
    """Each measurement against its ideal bound (arrays in the order of `keys`)."""

    keys: tuple[str, ...]
    measured: np.ndarray             # output tokens/s per GPU, as published and converted
    speed: np.ndarray                # tokens/s per user (NaN when not published)
    ideal: np.ndarray                # the bound at that speed (MFU = BWU = 1)
    efficiency: np.ndarray           # measured ÷ ideal
    bound: np.ndarray                # what caps the ideal batch: compute, memory or capacity
    batch: np.ndarray                # the ideal batch per replica at that speed
    terms: dict[str, np.ndarray]


def check(items: Mapping[str, Measurement]) -> Check:
    """Measured ÷ ideal bound for every measurement given (key → Measurement)."""
    keys = tuple(items)
    g = _stack(terms(items[k]) for k in keys)
    measured = np.array([items[k].output_tokens_per_s_per_gpu for k in keys], float)
    speed = np.array([np.nan if items[k].tokens_per_s_per_user is None else items[k].tokens_per_s_per_user
                      for k in keys], float)
    p = predict(g, speed)
    with np.errstate(divide="ignore"):
        eff = np.where(p["tokens_per_s_per_chip"] > 0, measured / p["tokens_per_s_per_chip"], np.inf)
    return Check(keys, measured, speed, p["tokens_per_s_per_chip"], eff, p["bound"], p["batch"], g)


@dataclass(frozen=True)
class Fit:
    """Fitted efficiencies and what they predict for each point."""

    mfu: float
    bwu: float
    mfu_determined: bool             # some point's step is compute-bound at the fit (else MFU is not pinned down)
    bwu_determined: bool
    rms_log10: float                 # root-mean-square of log10(measured / predicted)
    predicted: np.ndarray            # tokens/s per chip at the fit, at each point's own batch (or the top)
    residual_log10: np.ndarray       # log10(measured / predicted) per point
    bound: np.ndarray                # which side sets each point's step at the fit: compute or memory


def _predict_at_batch(g: Mapping[str, np.ndarray], measured, speed, mfu, bwu) -> tuple[np.ndarray, np.ndarray]:
    """Throughput per chip at each point's own batch B = measured·C/u (the frontier's top without a speed),
    and whether the compute side sets the step there (else memory)."""
    u = np.asarray(speed, float)
    mfu, bwu = np.asarray(mfu, float), np.asarray(bwu, float)
    has_u = np.isfinite(u)
    b = np.where(has_u, np.asarray(measured, float) * g["chips"] / np.where(has_u, u, 1.0), 1.0)
    comp = b * g["c"] / mfu
    mem = (g["m0"] + b * g["m"]) / bwu
    tps_b = b * g["a"] / (g["chips"] * np.maximum(comp, mem))
    top, _, which_top = _predict(g, u, mfu, bwu)
    return np.where(has_u, tps_b, top), np.where(has_u, comp >= mem, which_top == 0)


def _cost(g, measured, speed, logm, mfu, bwu):
    pred = _predict_at_batch(g, measured, speed, mfu[..., None], bwu[..., None])[0]
    with np.errstate(divide="ignore"):
        r = logm - np.log10(np.where(pred > 0, pred, np.nan))
    return np.where(np.isfinite(r), r * r, 1e6).sum(axis=-1)


def _best(g, measured, speed, logm, x_mfu: np.ndarray, x_bwu: np.ndarray) -> tuple[float, float]:
    """The grid pair (log10 MFU, log10 BWU) of least cost; among ties the highest efficiencies."""
    lm, lb = np.meshgrid(x_mfu, x_bwu, indexing="ij")
    cost = _cost(g, measured, speed, logm, 10.0 ** lm, 10.0 ** lb)
    c_min = float(cost.min())
    near = cost <= c_min * (1.0 + 1e-9) + 1e-12
    i = np.unravel_index(np.argmax(np.where(near, lm + lb, -np.inf)), cost.shape)
    return float(lm[i]), float(lb[i])


def fit(g: Mapping[str, np.ndarray], measured, speed, *, grid: int = 61) -> Fit:
    """Least-squares (MFU, BWU) in [0.01, 1]² for points with stacked terms `g`, fitted in log space.

    A grid of `grid` × `grid` log-spaced pairs, then a finer grid around the best cell.  Ties (a
    direction no point constrains) go to the higher efficiency: no evidence of a loss is not a loss.
    """
    measured = np.asarray(measured, float)
    speed = np.asarray(speed, float)
    if measured.size == 0:
        raise ValueError("no measurements to fit")
    if np.any(~np.isfinite(measured)) or np.any(measured <= 0):
        raise ValueError("measured throughputs must be finite and > 0")
    logm = np.log10(measured)
    lo = np.log10(EFF_MIN)
    coarse = np.linspace(lo, 0.0, grid)
    best = _best(g, measured, speed, logm, coarse, coarse)
    fine = np.linspace(-1.0, 1.0, 41) * (coarse[1] - coarse[0])      # one coarse cell either side
    best = _best(g, measured, speed, logm, np.clip(best[0] + fine, lo, 0.0), np.clip(best[1] + fine, lo, 0.0))
    mfu, bwu = 10.0 ** best[0], 10.0 ** best[1]
    pred, compute = _predict_at_batch(g, measured, speed, mfu, bwu)
    with np.errstate(divide="ignore"):
        res = logm - np.log10(np.where(pred > 0, pred, np.nan))
    finite = res[np.isfinite(res)]
    rms = float(np.sqrt(np.mean(finite ** 2))) if finite.size else float("nan")
    return Fit(mfu, bwu, bool(np.any(compute)), bool(np.any(~compute)), rms, pred, res,
               np.where(compute, "compute", "memory"))


def fit_check(c: Check, mask=None) -> Fit:
    """`fit` on the points of a `check` (all, or those where `mask` is true)."""
    sel = np.ones(len(c.keys), bool) if mask is None else np.asarray(mask, bool)
    g = {k: v[sel] for k, v in c.terms.items()}
    return fit(g, c.measured[sel], c.speed[sel])


def select(items: Mapping[str, Measurement], *, model: str | None = None, hardware: str | None = None,
           publisher: str | None = None, keys: Iterable[str] | None = None) -> dict[str, Measurement]:
    """The measurements matching every filter given (model / hardware preset key, publisher, keys)."""
    want = None if keys is None else set(keys)
    out = {}
    for k, m in items.items():
        if model is not None and m.model != model:
            continue
        if hardware is not None and m.hardware != hardware:
            continue
        if publisher is not None and m.publisher.lower() != publisher.lower():
            continue
        if want is not None and k not in want:
            continue
        out[k] = m
    return out


SPEC_SUFFIXES = (".yaml", ".yml", ".json")


def resolve(items: Mapping[str, Measurement], *, base: PathLike | None = None) -> dict[str, Measurement]:
    """A user's measurements with their `model` and `hardware` resolved to preset keys (aliases and
    case allowed), each checked against what the bound needs.  PresetError lists one message per
    problem, naming the item and the field (an unknown preset, a compute format the chip lacks).

    With `base` (a folder: the command line passes the measurements file's), a `model` or `hardware`
    ending in .yaml, .yml or .json names a spec file of the user's own, relative to `base` unless
    absolute, as `step --hardware FILE` takes it; it is loaded and the value becomes
    "file:<absolute path>".  Without `base` (the app's upload) only preset keys are accepted, so an
    uploaded file can never make the server read one of its own files."""
    problems: list[str] = []
    out: dict[str, Measurement] = {}
    for key, m in items.items():
        changes = {}
        bad = False
        for kind in ("model", "hardware"):
            value = getattr(m, kind)
            if base is not None and value.strip().lower().endswith(SPEC_SUFFIXES):
                path = PurePath(value.strip())
                path = Path(path if path.is_absolute() else Path(base) / path).resolve()
                try:
                    _spec_file(kind, str(path))
                except (ValueError, OSError) as e:
                    problems.append(f"measurement {key!r}.{kind}: {e}")
                    bad = True
                    continue
                changes[kind] = FILE_PREFIX + str(path)
                continue
            try:
                presets.get(kind, value)
            except ValueError as e:
                problems.append(f"measurement {key!r}.{kind}: {e}")
                bad = True
                continue
            k = value.strip().lower()
            changes[kind] = presets.aliases(kind).get(k, k)
        if bad:
            continue
        m2 = m.with_(**changes)
        object.__setattr__(m2, "meta", m.meta)
        try:
            terms(m2)
        except ValueError as e:
            problems.append(f"measurement {key!r}.compute: {e}" if "FLOP/s" in str(e)
                            else f"measurement {key!r}: {e}")
            continue
        out[key] = m2
    if problems:
        raise presets.PresetError(problems)
    return out


def load_user_measurements(data: str | bytes, filename: str = "", *,
                           base: PathLike | None = None) -> dict[str, Measurement]:
    """Parse a user's measurements (CSV or YAML/JSON in the measurements.yaml schema; sources
    optional) and resolve them against the presets (and, with `base`, spec files: see `resolve`):
    PresetError with per-field messages."""
    return resolve(presets.parse_user_file(data, "measurement", filename), base=base)


def same_setup(a: Measurement, b: Measurement) -> bool:
    """True when two measurements share one frontier (everything but the measured figures equal)."""
    fields_ = ("model", "hardware", "weights", "kv", "compute", "scope", "chips_per_replica", "input_tokens",
               "output_tokens", "context_tokens", "cache_hit_rate", "tokens_per_step", "tokens_computed_per_step")
    return all(getattr(a, f) == getattr(b, f) for f in fields_)


# ================================================================ prediction: the fitted efficiency model
#
# The bound above answers "how fast could this setup go"; the model below answers "how fast will it
# go", with a few named terms fitted to the published measurements and its error measured on points
# each fit never saw (cross-validation).  docs/prediction.md gives every term's reason and source.

KV_SHARE = 0.9                  # share of the HBM left after the weights that engines give the KV cache


@dataclass(frozen=True)
class Efficiency:
    """The efficiency model's terms.  The defaults (all efficiencies 1, no fixed time) are the ideal.

    bandwidth       η_bw   achieved ÷ peak HBM bandwidth on the weight and KV streams            [-]
    compute         η_c    achieved ÷ peak FLOP/s on decode matmuls (dense weights) and attention [-]
    prefill         η_p    achieved ÷ peak FLOP/s on the prompt work a step carries (matmuls of
                           the dense weights and the prompt's attention); None: η_c             [-]
    expert          η_e    achieved ÷ peak FLOP/s on routed-expert matmuls (decode and prompt),
                           when expert_size_half is 0                                           [-]
    layer_s         t_ℓ    fixed time per transformer layer in every step (launches,
                           synchronisation), not divided among chips                            [s]
    prompt_layer_s  t_ℓp   further time per layer in a step that carries prompt work (run
                           without a captured CUDA graph), paid with probability 1 − e^(−λ),
                           λ = B·a/O new prompts per step                                       [s]
    expert_size_half s½    when > 0, the routed experts run at η_c · s/(s + s½) instead of η_e,
                           s = d_model × moe_intermediate_size, one expert matrix's elements:
                           small experts are small GEMMs, far from η_c; large ones near it     [elements]
    """

    bandwidth: float = 1.0
    compute: float = 1.0
    prefill: float | None = None
    expert: float = 1.0
    layer_s: float = 0.0
    prompt_layer_s: float = 0.0
    expert_size_half: float = 0.0

    @property
    def prompt(self) -> float:
        """η_p as used: the prompt efficiency, or η_c when it has none of its own."""
        return self.compute if self.prefill is None else self.prefill

    def expert_at(self, size):
        """The routed-expert efficiency for experts of `size` elements (d_model × moe_intermediate_size; an
        array): η_c · s/(s + s½) when s½ > 0 and the size is known (> 0), else η_e."""
        if self.expert_size_half <= 0:
            return self.expert
        s = np.asarray(size, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(s > 0, self.compute * s / (s + self.expert_size_half), self.expert)

    def for_model(self, model) -> Efficiency:
        """These terms with the routed-expert efficiency resolved for `model` (s½ folded into η_e): what a
        caller that prices one model's FLOPs (the planner, the predicted step, its equation) divides by."""
        if self.expert_size_half <= 0:
            return self
        return replace(self, expert=float(self.expert_at(expert_size(model))), expert_size_half=0.0)

    def as_dict(self) -> dict[str, float | None]:
        return {f: (None if getattr(self, f) is None else float(getattr(self, f))) for f in ALL_TERMS}


def expert_phrase(eff: Efficiency, model=None) -> str:
    """How the routed experts run under `eff`, in words for a caption: for `model`'s experts when it has them."""
    if model is not None and not model.is_moe:
        return "no routed experts in this model"
    if eff.expert_size_half <= 0:
        return f"routed experts at {100 * eff.expert:.3g} % of peak"
    half = f"η_c · s/(s + {eff.expert_size_half / 1e6:.3g} M) for experts of s elements"
    size = expert_size(model) if model is not None else 0.0
    if size <= 0:
        return f"routed experts at {half}"
    return (f"routed experts at {100 * float(eff.expert_at(size)):.3g} % of peak ({half}; this model's are "
            f"{model.d_model:,} × {model.moe_intermediate_size:,})")


def expert_size(model) -> float:
    """s = d_model × moe_intermediate_size: the elements of one routed-expert matrix (0 when unknown)."""
    if not model.is_moe or model.moe_intermediate_size is None or model.d_model is None:
        return 0.0
    return float(model.d_model) * float(model.moe_intermediate_size)


ALL_TERMS = ("bandwidth", "compute", "prefill", "expert", "layer_s", "prompt_layer_s", "expert_size_half")
IDEAL = Efficiency()


@dataclass(frozen=True)
class TermInfo:
    """What one term of the efficiency model is: its symbol, unit, why it is there and where it comes from."""

    field: str
    symbol: str
    unit: str
    label: str
    reason: str
    source: str


TERMS: tuple[TermInfo, ...] = (
    TermInfo("bandwidth", "η_bw", "-", "HBM bandwidth efficiency",
             "weights and KV are streamed by many kernels, none of which holds HBM at its peak for the whole "
             "step (refresh, bank conflicts, kernel tails); every byte of the bound is divided by it, and with "
             "no fixed time per layer in every step it also carries the launches that scale with a layer's bytes",
             "Jia et al., 'Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking' (arXiv 1804.06826, "
             "2018): the global-memory bandwidth microbenchmarks attain stays below the HBM's peak"),
    TermInfo("compute", "η_c", "-", "dense compute efficiency",
             "decode matmuls have B·k rows, attention runs per sequence: neither fills the tensor cores as a "
             "large square GEMM does; the prompt work a step carries runs at it too unless η_p is fitted; "
             "attention's FLOPs are counted at the chip's bf16 peak, the matmuls' at their format's",
             "Williams, Waterman, Patterson, 'Roofline: an insightful visual performance model' (CACM 52(4), "
             "2009, doi:10.1145/1498765.1498785): attained FLOP/s below the peak ceiling"),
    TermInfo("prefill", "η_p", "-", "prompt compute efficiency",
             "in aggregated serving each step also prefills a share a/O of a new prompt per sequence "
             "(chunked prefill); its matmuls and causal attention could run at their own efficiency (not "
             "fitted by default: it did not lower the held-out error, so the prompt runs at η_c)",
             "Agrawal et al., 'Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve' "
             "(arXiv 2403.02310, 2024): prompts split into chunks ride in the decode steps"),
    TermInfo("expert", "η_e", "-", "routed-expert compute efficiency",
             "an MoE layer multiplies B·k/E tokens per expert: many small grouped GEMMs, uneven loads and "
             "the token permutation around them, far from a dense GEMM's efficiency",
             "Gale et al., 'MegaBlocks: Efficient Sparse Training with Mixture-of-Experts' (arXiv 2211.15841, "
             "2022): grouped expert matmuls and their padding, dropping and imbalance"),
    TermInfo("expert_size_half", "s½", "elements", "routed-expert size at half of η_c",
             "an expert matrix of s = d_model × moe_intermediate_size elements is multiplied as one small GEMM "
             "per expert per step: the smaller it is, the further from a dense GEMM's efficiency; the routed "
             "experts run at η_c · s/(s + s½) (Mixtral's 4,096 × 14,336 near η_c, DeepSeek-V3's 7,168 × 2,048 "
             "and Qwen3-30B's 2,048 × 768 far below it)",
             "Gale et al., 'MegaBlocks: Efficient Sparse Training with Mixture-of-Experts' (arXiv 2211.15841, "
             "2022): many small expert matmuls reach a fraction of a dense GEMM's throughput"),
    TermInfo("layer_s", "t_ℓ", "s", "fixed time per layer per step",
             "each layer runs its kernels one after another and waits for the slowest chip; this time "
             "does not shrink with more chips or a smaller batch (not fitted by default: the data cannot tell "
             "it from a lower η_bw, and fitting it raised the held-out error)",
             "NVIDIA, 'Getting Started with CUDA Graphs' (2019, https://developer.nvidia.com/blog/cuda-graphs/): "
             "launch overheads of microseconds per kernel, tens of kernels per layer"),
    TermInfo("prompt_layer_s", "t_ℓp", "s", "time per layer in a step with prompt work",
             "engines replay decode-only steps from captured CUDA graphs but run a step that carries a prompt "
             "chunk eagerly, launching every kernel from the host; a step carries at least one of the "
             "λ = B·a/O new prompts per step with probability 1 − e^(−λ)",
             "vLLM, 'CUDA Graphs' design notes (https://docs.vllm.ai/en/latest/design/cuda_graphs/): uniform "
             "decode batches and mixed prefill-decode batches are captured and dispatched differently"),
)


@dataclass(frozen=True)
class Parts:
    """One setup's work per decode step at peak rates — what the efficiency model divides [s] (arrays).

    Per sequence in the step (× B):  dense, expert, attn — decode matmuls of the dense and the routed-
    expert weights and attention FLOPs, k tokens each; prefill_dense, prefill_expert, prefill_attn — the
    share a/O of a prompt each sequence carries in aggregated serving (0 for a decode-only figure);
    the attention FLOPs (attn, prefill_attn) at the 16-bit peak, the matmuls at the compute dtype's
    (`attention_slowdown`); kv — KV read, plus the prompt's KV read and write.  Per step: weights — the weight stream.
    layers — transformer layers; a — tokens accepted per sequence per step; chips — C per replica;
    prompt_rate — new prompts per sequence per step, a/O (0 for a decode-only figure); b_cap — the
    sequences per replica the engine holds in HBM (`KV_SHARE` of what the weights leave, per KV of the
    context it reserves), the batch of a figure that publishes no load.
    """

    dense: np.ndarray
    expert: np.ndarray
    attn: np.ndarray
    prefill_dense: np.ndarray
    prefill_expert: np.ndarray
    prefill_attn: np.ndarray
    weights: np.ndarray
    kv: np.ndarray
    layers: np.ndarray
    a: np.ndarray
    chips: np.ndarray
    prompt_rate: np.ndarray
    b_cap: np.ndarray
    esize: np.ndarray                # s: elements of one routed-expert matrix (0 for a dense model)

    def take(self, index) -> Parts:
        """The parts of the points selected by `index` (stacked parts only)."""
        return Parts(**{f: getattr(self, f)[index] for f in self.__dataclass_fields__})


def expert_share(model) -> float:
    """The routed experts' share of a token's matmul FLOPs: 3·d·d_e·k·L_moe / N_active (0 for a dense
    model, or an MoE model without d_model and moe_intermediate_size)."""
    if not model.is_moe or model.moe_intermediate_size is None or model.d_model is None:
        return 0.0
    layers = model.n_moe_layers if model.n_moe_layers is not None else model.n_layers
    return min(3.0 * model.d_model * model.moe_intermediate_size * model.experts_per_token * layers
               / model.active_params, 1.0)


# The format attention's QKᵀ and AV run in on the efficiency model, whatever the weights' and the KV cache's.
ATTENTION_DTYPE = "bf16"


def attention_slowdown(hardware, compute_dtype: str) -> float:
    """F(compute dtype) / F(bf16): how many times longer attention's FLOPs take on the efficiency model than at
    the matmuls' peak (1 for a bf16 model; 2 for fp8 on H100; 4 for fp4 on B200).

    Engines store the KV cache in FP8 (or FP4) for its bytes and dequantise it to BF16/FP16 as it is read, so
    QKᵀ and AV run on the 16-bit tensor cores however the weights are multiplied: SGLang, "Support multiple
    KVCache optimizations" (https://github.com/sgl-project/sglang/issues/10083, 2025): the FP8 KV cache is
    "dequantize[d] to BF16/FP16 at the reading time for attention calculation"; vLLM, "Quantized KV Cache"
    (https://docs.vllm.ai/en/latest/features/quantization/quantized_kvcache/): only the FlashAttention-3
    backend computes attention in FP8.  docs/prediction.md ("Which terms") compares the alternatives."""
    return float(hardware.flops(compute_dtype)) / float(hardware.flops(ATTENTION_DTYPE))


def attention_phrase(eff: Efficiency, hardware, compute_dtype: str) -> str:
    """Where attention runs under `eff`, in words for a caption, when the compute dtype is faster than bf16
    ("attention at 31.8 % of the bf16 peak (1/4 of the fp4 peak)"); "" when attention runs at the matmuls' peak."""
    g = attention_slowdown(hardware, compute_dtype)
    if g <= 1.0:
        return ""
    return f"attention at {100 * eff.compute:.3g} % of the bf16 peak (1/{g:.3g} of the {compute_dtype} peak)"


def parts_for(system: System, context, *, tokens_computed: float | None = None, input_tokens: float | None = None,
              output_tokens: float | None = None, cache_hit_rate: float = 0.0, reserve_tokens=None,
              kv_share: float = KV_SHARE, max_batch: float = np.inf, attention_dp: bool = False) -> Parts:
    """The `Parts` of a system at mean decode context `context` (an array broadcasts).

    tokens_computed  k, tokens computed per sequence per step (default: the system's tokens_per_step, a)
    input_tokens, output_tokens  L and O of the requests when prompts are prefilled inside the decode
                     steps (aggregated serving); left out, the step carries no prompt work
    cache_hit_rate   share of the prompt served from a prefix cache (skips its matmuls, reads its KV)
    reserve_tokens   the KV length the engine reserves per sequence (default the context; L + O for a
                     scheduler that guarantees no eviction)
    attention_dp     an MoE model served with data-parallel attention over the C chips: each chip
                     holds (and streams every step) the whole of the weights outside the routed
                     experts, W_d, and 1/C of the experts, W_e: W_e/C + W_d per chip instead of W/C
    The system's own efficiencies are ignored: parts are at peak rates.
    """
    s = system.with_(mfu=1.0, bw_util=1.0, mode="lecture")
    T = np.asarray(context, float)
    d = decode_step(s, 1.0, T)
    a = float(s.deployment.tokens_per_step)
    k = a if tokens_computed is None else float(tokens_computed)
    C = float(s.deployment.chips)
    e = expert_share(s.model)
    mm = k * np.asarray(d.t_matmul_s, float)
    zero = np.zeros(T.shape)
    pf_mm = pf_at = pf_kv = rate = zero
    if input_tokens is not None and output_tokens is not None:
        L = float(input_tokens)
        new = L * (1.0 - float(cache_hit_rate))
        share = a / float(output_tokens)
        rate = zero + share
        pf_mm = zero + share * float(matmul_time(s.model.active_params, new, C, s.flops))
        pf_at = zero + share * float(prefill_attention_flops(s.kv, L, L - new)) / (C * s.flops)
        p = prefill(s, L, 1.0, L - new)
        pf_kv = zero + share * float(p.t_memory_s - d.t_weights_s.flat[0])
    res = T if reserve_tokens is None else np.asarray(reserve_tokens, float)
    t_w = np.asarray(d.t_weights_s, float)
    held = s.weight_bytes
    if attention_dp and s.model.is_moe and C > 1 and expert_share(s.model) > 0:
        _, dense = expert_bytes(s.model, s.precision.weight_bytes_per_param)
        held = s.weight_bytes + (C - 1.0) * dense                     # W_d on every chip, W_e once
        t_w = np.asarray(d.t_weights_s, float) * (held / s.weight_bytes)
    with np.errstate(divide="ignore"):
        free = C * s.hardware.hbm_bytes - held
        cap = np.where(free > 0, kv_share * free / np.asarray(s.kv.stored_bytes(res), float), 0.0)
    cap = np.minimum(cap, max_batch)
    shape = np.broadcast(T, res).shape
    full = np.ones(shape)
    slow = attention_slowdown(s.hardware, s.precision.compute)
    return Parts(mm * (1.0 - e) * full, mm * e * full, k * slow * np.asarray(d.t_attn_s, float) * full,
                 pf_mm * (1.0 - e) * full, pf_mm * e * full, pf_at * slow * full, t_w * full,
                 (np.asarray(d.t_kv_s, float) + pf_kv) * full, float(s.model.n_layers or 0) * full, a * full,
                 C * full, rate * full, cap * full, expert_size(s.model) * full)


_ATTENTION_DP = re.compile(r"\b(DP attention|attention DP|DP\d+)\b", re.IGNORECASE)


def attention_data_parallel(m: Measurement) -> bool:
    """True when the published parallelism serves attention data-parallel ("DP attention", "attention
    DP", "… DP144"): the weights outside the routed experts are then held whole on every chip."""
    return bool(_ATTENTION_DP.search(m.parallelism))


def parts(m: Measurement) -> Parts:
    """The `Parts` of one measurement's setup (scalars held in 0-d arrays).  Its capacity holds the mean
    context for every engine: reserving a sequence's whole L + O (TensorRT-LLM's default scheduler) with
    trtllm-bench's batch cap of 4,096 predicted the offline runs worse held out (docs/prediction.md)."""
    system = m.scope == "system"
    return parts_for(system_for(m), m.decode_context, tokens_computed=m.tokens_computed_per_step,
                     input_tokens=m.input_tokens if system else None, output_tokens=m.output_tokens if system else None,
                     cache_hit_rate=m.cache_hit_rate, attention_dp=attention_data_parallel(m))


def stack_parts(ps: Iterable[Parts]) -> Parts:
    """Many setups' parts as one `Parts` of 1-d arrays."""
    ps = list(ps)
    return Parts(**{f: np.array([float(getattr(p, f)) for p in ps], float) for f in Parts.__dataclass_fields__})


def predict_step(p: Parts, batch, eff: Efficiency = IDEAL) -> dict[str, np.ndarray]:
    """A decode step of `batch` sequences per replica under the efficiency model (arrays broadcast):

        t_compute = B·[(dense + attn)/η_c + (expert + prefill_expert)/η_e + (prefill_dense + prefill_attn)/η_p]
        t_memory  = (weights + B·kv) / η_bw
        t_fixed   = layers·[t_ℓ + t_ℓp·(1 − e^(−B·prompt_rate))]
        t_step    = max(t_compute, t_memory) + t_fixed                                             [s]

    with η_e = η_c · s/(s + s½) for experts of s elements when s½ > 0 (`Efficiency.expert_at`).

    Returns t_step_s, t_compute_s, t_memory_s, t_fixed_s, bound ("compute" or "memory": the longer
    side), tokens_per_s_per_user = a / t_step and tokens_per_s_per_gpu = B·a / (C·t_step).
    """
    b = np.asarray(batch, float)
    comp = b * ((p.dense + p.attn) / eff.compute + (p.expert + p.prefill_expert) / eff.expert_at(p.esize)
                + (p.prefill_dense + p.prefill_attn) / eff.prompt)
    mem = (p.weights + b * p.kv) / eff.bandwidth
    fixed = p.layers * (eff.layer_s + eff.prompt_layer_s * -np.expm1(-b * p.prompt_rate))
    t = np.maximum(comp, mem) + fixed
    u = p.a / t
    return {"t_step_s": t, "t_compute_s": comp, "t_memory_s": mem, "t_fixed_s": fixed + 0.0 * t,
            "bound": np.where(comp >= mem, "compute", "memory"), "tokens_per_s_per_user": u,
            "tokens_per_s_per_gpu": b * u / p.chips}


def batch_at_speed(p: Parts, speed, eff: Efficiency = IDEAL, *, lo: float = 1e-3) -> np.ndarray:
    """The batch per replica whose step gives `speed` tokens/s per user, at most `b_cap` (arrays).

    t_step rises with B, so the batch solves t_step(B) = a/u by bisection in log B over [lo, b_cap];
    a speed even one sequence cannot reach gives `lo` (the throughput then all but vanishes)."""
    u = np.asarray(speed, float)
    tau = p.a / u
    top = np.maximum(np.broadcast_to(p.b_cap, np.broadcast(p.b_cap, u).shape), lo)
    x_lo = np.full(top.shape, np.log(lo))
    x_hi = np.log(top)
    ok_top = predict_step(p, top, eff)["t_step_s"] <= tau
    for _ in range(60):
        mid = 0.5 * (x_lo + x_hi)
        ok = predict_step(p, np.exp(mid), eff)["t_step_s"] <= tau
        x_lo, x_hi = np.where(ok, mid, x_lo), np.where(ok, x_hi, mid)
    return np.where(ok_top, top, np.exp(x_lo))


LOADS = ("batch", "speed", "capacity")


def load_of(m: Measurement) -> tuple[str, float]:
    """How a measurement's operating point is given: ("batch", B per replica) when the concurrency is
    published (B = concurrency·C/gpus, prompts pooled on the decode replicas as in the bound), else
    ("speed", tokens/s per user) when the speed is, else ("capacity", NaN): whatever fits in HBM."""
    if m.concurrency is not None:
        return "batch", m.concurrency * m.chips_per_replica / m.gpus
    if m.tokens_per_s_per_user is not None:
        return "speed", float(m.tokens_per_s_per_user)
    return "capacity", float("nan")


def _predict_at(p: Parts, how: np.ndarray, value: np.ndarray, eff: Efficiency) -> tuple[np.ndarray, np.ndarray]:
    """(tokens/s per GPU, batch per replica) of stacked parts at their operating points (`load_of`)."""
    batch = np.where(how == 0, value, p.b_cap)
    batch = np.where(np.isfinite(batch) & (batch > 0), batch, 1.0)
    tps = predict_step(p, batch, eff)["tokens_per_s_per_gpu"]
    sp = how == 1
    if np.any(sp):
        ps = p.take(sp)
        b_sp = batch_at_speed(ps, value[sp], eff)
        batch = batch.copy()
        tps = tps.copy()
        batch[sp] = b_sp
        tps[sp] = b_sp * value[sp] / ps.chips
    return tps, batch


@dataclass(frozen=True)
class Points:
    """Measurements stacked for the efficiency model: their parts, operating points and measured figures."""

    keys: tuple[str, ...]
    parts: Parts
    how: np.ndarray             # 0 batch, 1 speed, 2 capacity (`LOADS`)
    value: np.ndarray           # the batch per replica, or the speed [tok/s/user], or NaN
    measured: np.ndarray        # output tokens/s per GPU

    def take(self, mask) -> Points:
        idx = np.flatnonzero(np.asarray(mask))
        return Points(tuple(self.keys[i] for i in idx), self.parts.take(idx), self.how[idx], self.value[idx],
                      self.measured[idx])


def points(items: Mapping[str, Measurement]) -> Points:
    """Stack measurements (key → Measurement) for fitting and prediction."""
    keys = tuple(items)
    loads = [load_of(items[k]) for k in keys]
    return Points(keys, stack_parts(parts(items[k]) for k in keys),
                  np.array([LOADS.index(h) for h, _ in loads], int), np.array([v for _, v in loads], float),
                  np.array([items[k].output_tokens_per_s_per_gpu for k in keys], float))


@dataclass(frozen=True)
class Prediction:
    """Predicted against measured tokens/s per GPU, point by point (arrays in the order of `keys`)."""

    keys: tuple[str, ...]
    measured: np.ndarray
    predicted: np.ndarray
    batch: np.ndarray               # the batch per replica the prediction ran at
    load: np.ndarray                # how its operating point was given: batch, speed or capacity
    reachable: np.ndarray           # False where even one sequence cannot reach the published speed

    @property
    def ratio(self) -> np.ndarray:
        """predicted ÷ measured."""
        return self.predicted / self.measured


def predict_points(pts: Points, eff: Efficiency) -> Prediction:
    """Each stacked measurement predicted at its own operating point (`load_of`)."""
    tps, batch = _predict_at(pts.parts, pts.how, pts.value, eff)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = predict_step(pts.parts, 1.0, eff)["t_step_s"] <= pts.parts.a / pts.value
    return Prediction(pts.keys, pts.measured, tps, batch, np.asarray(LOADS)[pts.how], (pts.how != 1) | one)


def predict_measurements(items: Mapping[str, Measurement], eff: Efficiency) -> Prediction:
    """Measurements (key → Measurement) predicted by the efficiency model `eff`."""
    return predict_points(points(items), eff)


def predict_system(system: System, batch, context, eff: Efficiency, **kw) -> dict[str, np.ndarray]:
    """Any system at any batch per replica and mean context (arrays broadcast) under `eff`:
    `predict_step` of `parts_for(system, context, **kw)` — prompt work, MTP and the rest as there."""
    return predict_step(parts_for(system, context, **kw), batch, eff)


def predict_decode_step(system: System, batch, context, eff: Efficiency, *, t_comm=0.0,
                        prefill: ChunkedPrefill | None = None, prompt_rate: float = 0.0) -> dict[str, np.ndarray]:
    """The fitted model's decode step with the roofline's communication and chunked prefill (arrays broadcast):
    what the planner prices and `python -m model step --predicted` prints.

    The step's work is taken at peak rates (decode_step in per-phase form, so matmuls, attention, weights and
    KV come apart; the system's own efficiencies and mode are not read), then each part divided by its
    efficiency, e = `expert_share`, k = a tokens computed per sequence:
        t_dense  = (1 − e)·[k·t_matmul(decode)/η_c + t_matmul(prompts)/η_p]
        t_expert = e·[k·t_matmul(decode) + t_matmul(prompts)]/η_e
        t_attn   = g·[k·t_attn(decode)/η_c + t_attn(prompts)/η_p],  g = `attention_slowdown` (attention at
                   the 16-bit peak, whatever the compute dtype)
        t_weights, t_kv = the streams / η_bw
        t_fixed  = L·[t_ℓ + t_ℓp·(1 − e^(−B·λ))], λ = `prompt_rate` new prompts per sequence per step
        t_step   = max(t_dense + t_expert + t_attn, t_weights + t_kv, t_comm) + t_fixed + P·hop
    On one chip with one request class this is `predict_system`'s step.  Returns those terms, t_step_s,
    bound (compute, weights, kv or comm), tokens_per_s_per_user, tokens_per_s_per_chip, usd_per_mtok
    (C·P·price/3600 · t_step/(P·B·a) · 1e6), hbm_bytes_per_chip and fits.
    """
    s = system.with_(mfu=1.0, bw_util=1.0, mode="per-phase")
    eff = eff.for_model(s.model)
    d = s.deployment
    b = np.asarray(batch, float)
    k = float(d.tokens_per_step)
    e = expert_share(s.model)
    alone = decode_step(s, b, context)
    full = alone if prefill is None else decode_step(s, b, context, prefill=prefill)
    slow = attention_slowdown(s.hardware, s.precision.compute)     # attention at the 16-bit peak
    mm_d, at_d = k * alone.t_matmul_s, k * slow * alone.t_attn_s
    mm_p, at_p = full.t_matmul_s - alone.t_matmul_s, slow * (full.t_attn_s - alone.t_attn_s)
    t_dense = (1.0 - e) * (mm_d / eff.compute + mm_p / eff.prompt)
    t_expert = e * (mm_d + mm_p) / eff.expert
    t_attn = at_d / eff.compute + at_p / eff.prompt
    t_w, t_kv = full.t_weights_s / eff.bandwidth, full.t_kv_s / eff.bandwidth
    comm = np.asarray(t_comm, float) + 0.0 * b
    layers = float(s.model.n_layers or 0)
    fixed = layers * (eff.layer_s + eff.prompt_layer_s * -np.expm1(-b * prompt_rate)) + 0.0 * t_w
    compute, memory = t_dense + t_expert + t_attn, t_w + t_kv
    t_step = np.maximum(np.maximum(compute, memory), comm) + fixed + full.t_hops_s
    bound = np.where(compute >= np.maximum(memory, comm), "compute",
                     np.where(memory >= comm, np.where(t_w >= t_kv, "weights", "kv"), "comm"))
    P = d.pipeline_stages
    tps = P * b * k / t_step
    C = full.chips
    return {"batch": full.batch, "context": full.context, "t_dense_s": t_dense, "t_expert_s": t_expert,
            "t_attn_s": t_attn, "t_weights_s": t_w, "t_kv_s": t_kv, "t_comm_s": comm, "t_fixed_s": fixed,
            "t_hops_s": full.t_hops_s, "t_step_s": t_step, "bound": bound, "tokens_per_s_per_user": k / t_step,
            "tokens_per_s_per_chip": tps / (C * P),
            "usd_per_mtok": C * P * s.hardware.price_usd_per_hour / 3600.0 * 1e6 / tps,
            "hbm_bytes_per_chip": full.hbm_bytes_per_chip, "fits": full.fits}


# ---------------------------------------------------------------- fitting the terms

TIMES = ("layer_s", "prompt_layer_s", "expert_size_half")   # positive terms, fitted in log; the rest: efficiencies
# The terms `fit_points` fits by default: those that lowered the held-out error (docs/prediction.md, "Which
# terms"); η_p, η_e (one for every expert size) and t_ℓ stay available to fit but did not.
MODEL_TERMS = ("bandwidth", "compute", "prompt_layer_s", "expert_size_half")
_STARTS = ({"bandwidth": 0.5, "compute": 0.5, "prefill": 0.5, "expert": 0.1, "layer_s": 1e-4, "prompt_layer_s": 5e-4,
             "expert_size_half": 15e6},
           {"bandwidth": 0.9, "compute": 0.5, "prefill": 0.4, "expert": 0.08, "layer_s": 4e-4, "prompt_layer_s": 1e-4,
             "expert_size_half": 60e6},
           {"bandwidth": 0.3, "compute": 0.3, "prefill": 0.3, "expert": 0.05, "layer_s": 1e-5, "prompt_layer_s": 1e-3,
             "expert_size_half": 4e6})
_TIME_FLOOR = 1e-9              # s: a fitted fixed time this small is reported as 0


def _to_eff(theta: np.ndarray, free: tuple[str, ...], held: Efficiency) -> Efficiency:
    vals = held.as_dict()
    for name, th in zip(free, theta):
        vals[name] = float(np.exp(th)) if name in TIMES else float(1.0 / (1.0 + np.exp(-th)))
    return Efficiency(**vals)


def _to_theta(values: Mapping[str, float], free: tuple[str, ...]) -> np.ndarray:
    out = []
    for name in free:
        v = values[name]
        if name in TIMES:
            out.append(np.log(max(v, _TIME_FLOOR)))
        else:
            v = min(max(v, 1e-6), 1 - 1e-6)
            out.append(np.log(v / (1.0 - v)))
    return np.array(out, float)


def _dvalue_dtheta(eff: Efficiency, free: tuple[str, ...]) -> np.ndarray:
    """d value / d θ of each free term: e(1 − e) for an efficiency (logit), t for a time (log)."""
    return np.array([getattr(eff, n) if n in TIMES else getattr(eff, n) * (1.0 - getattr(eff, n)) for n in free])


def _residual(pts: Points, eff: Efficiency) -> np.ndarray:
    tps, _ = _predict_at(pts.parts, pts.how, pts.value, eff)
    return np.log(np.maximum(tps, 1e-300)) - np.log(pts.measured)


def _jacobian(pts: Points, theta: np.ndarray, free, held, r0: np.ndarray, h: float = 1e-6) -> np.ndarray:
    J = np.empty((r0.size, theta.size))
    for j in range(theta.size):
        th = theta.copy()
        th[j] += h
        J[:, j] = (_residual(pts, _to_eff(th, free, held)) - r0) / h
    return J


def _levenberg_marquardt(pts: Points, theta: np.ndarray, free, held, iters: int = 200) -> tuple[np.ndarray, float]:
    """Least squares of the log residuals from one start; (θ, cost)."""
    r = _residual(pts, _to_eff(theta, free, held))
    cost = float(r @ r)
    lam = 1e-2
    for _ in range(iters):
        J = _jacobian(pts, theta, free, held, r)
        A, g = J.T @ J, J.T @ r
        improved = done = False
        for _ in range(30):
            step = -np.linalg.solve(A + lam * np.diag(np.diag(A) + 1e-12), g)
            th = np.clip(theta + step, -30.0, 30.0)
            rn = _residual(pts, _to_eff(th, free, held))
            cn = float(rn @ rn)
            if np.isfinite(cn) and cn < cost:
                done = cost - cn < 1e-12 * max(cost, 1e-300)
                theta, r, cost = th, rn, cn
                lam = max(lam / 3.0, 1e-12)
                improved = True
                break
            lam *= 4.0
        if not improved or done:
            break
    return theta, cost


@dataclass(frozen=True)
class EfficiencyFit:
    """The efficiency model fitted to a set of measurements.

    efficiency  the fitted terms (a term not fitted, or one no point constrains, is held at its ideal
                value: an efficiency at 1, a time at 0 s; η_p not fitted means η_p = η_c)
    stderr      1σ of each fitted term (NaN for a held one), from the covariance s²·(JᵀJ)⁻¹ of the
                least-squares fit in the fit's own coordinates (logit of an efficiency, log of a
                time), carried to the term by its derivative
    determined  which terms were fitted and are constrained by the data
    sigma_log   s, the RMS of the log residuals over n − p degrees of freedom (the scatter a single
                point shows about the model)
    fitted      the in-sample `Prediction` at the fit
    """

    efficiency: Efficiency
    stderr: dict[str, float]
    determined: dict[str, bool]
    sigma_log: float
    n: int
    cov: np.ndarray                  # covariance of the free terms in the fit's coordinates
    free: tuple[str, ...]
    fitted: Prediction

    def terms(self) -> list[dict[str, Any]]:
        """Each term of the model as a row: field, symbol, label, unit, value, stderr, determined
        (fitted and constrained), reason, source."""
        out = []
        for t in TERMS:
            if t.field not in self.free and not self.determined.get(t.field, False) and t.field == "prefill":
                value = self.efficiency.prompt
            else:
                value = getattr(self.efficiency, t.field)
            out.append({"field": t.field, "symbol": t.symbol, "label": t.label, "unit": t.unit,
                        "value": float(value), "stderr": float(self.stderr[t.field]),
                        "determined": bool(self.determined[t.field]), "reason": t.reason, "source": t.source})
        return out

    def log_sigma(self, pts: Points, *, residual: bool = True) -> np.ndarray:
        """1σ of log(predicted) for each point of `pts`: the fitted terms' uncertainty carried through
        the prediction (g·Σ·gᵀ, g = d log predicted / dθ), plus the scatter s² of one point if `residual`."""
        held = self.efficiency
        n = len(pts.keys)
        if self.free:
            theta = _to_theta(held.as_dict(), self.free)
            g = _jacobian(pts, theta, self.free, held, _residual(pts, held))
            var = np.einsum("ij,jk,ik->i", g, self.cov, g)
        else:
            var = np.zeros(n)
        return np.sqrt(var + (self.sigma_log ** 2 if residual else 0.0))


def _constrained(pts: Points) -> dict[str, bool]:
    """Which terms the points can constrain at all: a prompt efficiency needs prompt work, an expert
    efficiency an MoE model, the prompt-step time a step with prompts."""
    p = pts.parts
    return {"bandwidth": True, "compute": True,
            "prefill": bool(np.any(p.prefill_dense + p.prefill_attn > 0)),
            "expert": bool(np.any(p.expert + p.prefill_expert > 0)), "layer_s": bool(np.any(p.layers > 0)),
            "prompt_layer_s": bool(np.any((p.prompt_rate > 0) & (p.layers > 0))),
            "expert_size_half": bool(np.any((p.expert + p.prefill_expert > 0) & (p.esize > 0)))}


def fit_points(pts: Points, terms: Iterable[str] = MODEL_TERMS) -> EfficiencyFit:
    """Fit the efficiency model's `terms` (the others held at the ideal) to stacked measurements: least
    squares of log(predicted ÷ measured), Levenberg–Marquardt from a few starts, the best kept.  A term
    the points cannot constrain — prompt efficiency without prompt work, expert efficiency without an
    MoE model, one whose every derivative vanishes at the fit — is held at the ideal and reported
    undetermined."""
    terms = tuple(terms)
    unknown = [t for t in terms if t not in ALL_TERMS]
    if unknown:
        raise ValueError(f"unknown term {unknown[0]!r}: choose from {', '.join(ALL_TERMS)}")
    n = len(pts.keys)
    if n == 0:
        raise ValueError("no measurements to fit")
    if np.any(~np.isfinite(pts.measured)) or np.any(pts.measured <= 0):
        raise ValueError("measured throughputs must be finite and > 0")
    can = _constrained(pts)
    det = {f: f in terms and can[f] for f in ALL_TERMS}
    free = tuple(f for f in ALL_TERMS if det[f])
    best = None
    for start in _STARTS:
        th, cost = _levenberg_marquardt(pts, _to_theta(start, free), free, IDEAL)
        if best is None or cost < best[1]:
            best = (th, cost)
    theta = best[0]
    held = IDEAL
    eff = _to_eff(theta, free, held)
    r = _residual(pts, eff)
    J = _jacobian(pts, theta, free, held, r)
    # A term whose column vanishes at the fit (compute when every point is memory-bound, a time that
    # went to 0) is not constrained: hold it at the ideal and refit the rest.
    norms = np.sqrt((J ** 2).sum(axis=0))
    weak = [f for f, nv in zip(free, norms) if nv < 1e-6 * max(float(norms.max(initial=0.0)), 1e-300)]
    if weak:
        for f in weak:
            det[f] = False
        free = tuple(f for f in free if f not in weak)
        held = Efficiency(**{**eff.as_dict(), **{f: getattr(IDEAL, f) for f in weak}})
        theta, _ = _levenberg_marquardt(pts, _to_theta(held.as_dict(), free), free, held)
        eff = _to_eff(theta, free, held)
        r = _residual(pts, eff)
        J = _jacobian(pts, theta, free, held, r)
    small = {f: 0.0 for f in TIMES if getattr(eff, f) <= 1e3 * _TIME_FLOOR}
    if small:
        eff = Efficiency(**{**eff.as_dict(), **small})
    dof = n - len(free)
    s2 = float(r @ r) / dof if dof > 0 else float("nan")
    cov = np.linalg.pinv(J.T @ J) * s2 if free else np.zeros((0, 0))
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * np.abs(_dvalue_dtheta(eff, free)) if free else np.zeros(0)
    stderr = {f: float("nan") for f in ALL_TERMS}
    stderr.update({f: float(v) for f, v in zip(free, sd)})
    return EfficiencyFit(eff, stderr, det, float(np.sqrt(s2)) if np.isfinite(s2) else float("nan"), n, cov, free,
                         predict_points(pts, eff))


def fit_efficiency(items: Mapping[str, Measurement], terms: Iterable[str] = MODEL_TERMS) -> EfficiencyFit:
    """`fit_points` of measurements (key → Measurement)."""
    return fit_points(points(items), terms)


# ---------------------------------------------------------------- cross-validation

CV_KINDS = ("publisher", "chip", "model", "k5")
CV_SEED = 0


def groups_of(items: Mapping[str, Measurement], by: str, *, seed: int = CV_SEED, folds: int = 5) -> np.ndarray:
    """Each measurement's group for cross-validation: its publisher, chip (hardware preset), model, or for
    "k5" a seeded random fold ("fold 1" … "fold 5": a permutation of the points dealt round-robin)."""
    if by not in CV_KINDS:
        raise ValueError(f"cross-validation by {by!r} is not allowed: choose one of {', '.join(CV_KINDS)}")
    keys = list(items)
    if by == "k5":
        perm = np.random.default_rng(seed).permutation(len(keys))
        fold = np.empty(len(keys), int)
        fold[perm] = np.arange(len(keys)) % folds
        return np.array([f"fold {i + 1}" for i in fold])
    attr = {"publisher": "publisher", "chip": "hardware", "model": "model"}[by]
    return np.array([getattr(items[k], attr) for k in keys])


@dataclass(frozen=True)
class CrossValidation:
    """Every point predicted by a fit that never saw its group (arrays in the order of `keys`)."""

    by: str
    keys: tuple[str, ...]
    groups: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray

    @property
    def ratio(self) -> np.ndarray:
        """predicted ÷ measured, held out."""
        return self.predicted / self.measured

    @property
    def abs_error(self) -> np.ndarray:
        """|predicted ÷ measured − 1|."""
        return np.abs(self.ratio - 1.0)

    @property
    def median_error(self) -> float:
        return float(np.median(self.abs_error))

    @property
    def p90_error(self) -> float:
        return float(np.percentile(self.abs_error, 90))

    @property
    def band(self) -> tuple[float, float]:
        """The 10th and 90th percentiles of held-out predicted ÷ measured: 8 in 10 points fall inside."""
        return float(np.percentile(self.ratio, 10)), float(np.percentile(self.ratio, 90))


def cross_validate(items: Mapping[str, Measurement], by: str = "k5", *, seed: int = CV_SEED,
                   terms: Iterable[str] = MODEL_TERMS) -> CrossValidation:
    """Leave one group out at a time (`groups_of`): fit `terms` on the rest, predict the group.
    ValueError when there is one group only, or when the rest of some group is too few points to fit
    (no more than the terms)."""
    terms = tuple(terms)
    groups = groups_of(items, by, seed=seed)
    names = list(dict.fromkeys(groups.tolist()))
    if len(names) < 2:
        raise ValueError(f"the selection has one {by} only ({names[0] if names else 'none'}): leaving it out "
                         "leaves nothing to fit")
    pts = points(items)
    pred = np.full(len(pts.keys), np.nan)
    for g in names:
        out = groups == g
        train = pts.take(~out)
        if len(train.keys) <= len(terms):
            raise ValueError(f"leaving out {g} leaves {len(train.keys)} points, too few to fit {len(terms)} terms")
        pred[out] = predict_points(pts.take(out), fit_points(train, terms).efficiency).predicted
    return CrossValidation(by, pts.keys, groups, pts.measured, pred)


# One fit and one cross-validation per process: a second caller waits for the first's result.
_FIT_LOCK, _CV_LOCK = threading.RLock(), threading.RLock()


def built_in_fit() -> EfficiencyFit:
    """The efficiency model fitted to every built-in measurement (presets/measurements.yaml); cached, once
    per process even when several threads ask at once (the app warms it at start-up: ui/runtime/warm.py)."""
    with _FIT_LOCK:
        return _built_in_fit()


@cache
def _built_in_fit() -> EfficiencyFit:
    return fit_efficiency(presets.measurement_presets())


def built_in_cv(by: str = "k5") -> CrossValidation:
    """`cross_validate` of the built-in measurements; cached, once per process (the pages' error band comes
    from "k5")."""
    with _CV_LOCK:
        return _built_in_cv(by)


@cache
def _built_in_cv(by: str) -> CrossValidation:
    return cross_validate(presets.measurement_presets(), by)


# ---------------------------------------------------------------- the built-in fit, stored

@dataclass(frozen=True)
class FitSummary:
    """What the pages read of the built-in fit on every first visit: the fitted terms, the number of points,
    and the five-fold held-out band and median error (`built_in_fit`, `built_in_cv("k5")`)."""

    efficiency: Efficiency
    n: int
    band: tuple[float, float]
    median_error: float

    def as_json(self, digest: str) -> dict[str, Any]:
        return {"inputs_sha256": digest, "efficiency": self.efficiency.as_dict(), "n": self.n,
                "band": list(self.band), "median_error": self.median_error}


# The summary of the built-in fit as `write_summary` stored it, and the files whose bytes it depends on (the
# measurements, the chips and models they name, and the code that fits and predicts).  A page reads it instead
# of fitting (≈0.4 s of CPU) and cross-validating (≈0.8 s) on the first visit after a start; when any of the
# files changed since, it is not used (`built_in_summary` computes the fit), and
# tests/model/test_calibrate_summary.py fails until `python -m model.store_fit` stores it again.
SUMMARY_PATH = Path(__file__).with_name("fit_summary.json")
SUMMARY_INPUTS = ("presets/measurements.yaml", "presets/hardware.yaml", "presets/models.yaml", "model/calibrate.py",
                  "model/roofline.py", "model/cluster.py", "model/specs.py", "model/presets.py")
_ROOT = presets.PRESET_DIR.parent


def inputs_digest() -> str:
    """SHA-256 over the bytes of SUMMARY_INPUTS (each name and length first, so no two sets collide)."""
    import hashlib

    h = hashlib.sha256()
    for name in SUMMARY_INPUTS:
        path = _ROOT / name
        data = path.read_bytes() if path.exists() else b""
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def summary_of(fit: EfficiencyFit, cv: CrossValidation) -> FitSummary:
    return FitSummary(fit.efficiency, fit.n, cv.band, cv.median_error)


def stored_summary(path: PathLike | str | None = None) -> FitSummary | None:
    """The stored summary when it was made from today's inputs (`inputs_digest`), else None."""
    import json

    try:
        doc = json.loads(Path(path or SUMMARY_PATH).read_text(encoding="utf-8"))
        if doc.get("inputs_sha256") != inputs_digest():
            return None
        eff = Efficiency(**{k: (None if v is None else float(v)) for k, v in doc["efficiency"].items()})
        lo, hi = (float(x) for x in doc["band"])
        return FitSummary(eff, int(doc["n"]), (lo, hi), float(doc["median_error"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_summary(path: PathLike | str | None = None) -> FitSummary:
    """Fit and cross-validate the built-in measurements and store the summary with today's inputs' digest."""
    import json

    s = summary_of(built_in_fit(), built_in_cv("k5"))
    Path(path or SUMMARY_PATH).write_text(json.dumps(s.as_json(inputs_digest()), indent=2) + "\n", encoding="utf-8")
    return s


_SUMMARY_LOCK = threading.RLock()


def built_in_summary() -> FitSummary:
    """The built-in fit's summary: stored (`SUMMARY_PATH`) when current, else computed; once per process (as
    `built_in_fit`)."""
    with _SUMMARY_LOCK:
        return _built_in_summary()


@cache
def _built_in_summary() -> FitSummary:
    return stored_summary() or summary_of(built_in_fit(), built_in_cv("k5"))
