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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from . import presets
from .presets import Measurement
from .roofline import System, decode_step, matmul_time, max_batch_that_fits, prefill
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


def system_for(m: Measurement) -> System:
    """The roofline `System` of a measurement's setup (ideal: MFU = BWU = 1, lecture mode)."""
    hw = presets.get("hardware", m.hardware)
    model = presets.get("model", m.model)
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


def resolve(items: Mapping[str, Measurement]) -> dict[str, Measurement]:
    """A user's measurements with their `model` and `hardware` resolved to preset keys (aliases and
    case allowed), each checked against what the bound needs.  PresetError lists one message per
    problem, naming the item and the field (an unknown preset, a compute format the chip lacks)."""
    problems: list[str] = []
    out: dict[str, Measurement] = {}
    for key, m in items.items():
        changes = {}
        bad = False
        for kind in ("model", "hardware"):
            value = getattr(m, kind)
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


def load_user_measurements(data: str | bytes, filename: str = "") -> dict[str, Measurement]:
    """Parse a user's measurements (CSV or YAML/JSON in the measurements.yaml schema; sources
    optional) and resolve them against the presets: PresetError with per-field messages."""
    return resolve(presets.parse_user_file(data, "measurement", filename))


def same_setup(a: Measurement, b: Measurement) -> bool:
    """True when two measurements share one frontier (everything but the measured figures equal)."""
    fields_ = ("model", "hardware", "weights", "kv", "compute", "scope", "chips_per_replica", "input_tokens",
               "output_tokens", "context_tokens", "cache_hit_rate", "tokens_per_step", "tokens_computed_per_step")
    return all(getattr(a, f) == getattr(b, f) for f in fields_)
