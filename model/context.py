"""Context limits: where the KV read overtakes compute, across chips, models and sparse attention.

Lecture §1.1–1.3, §2.5 and §2.8 (01:32:52 onwards).  One decode step reads, per sequence, the
weights' share W/B and its own KV cache kv(T); it multiplies 2·Na FLOPs.  Two crossovers:

    KV read = matmul time   kv(T_c)/bw = 2·Na/F     → dense: T_c = 2·Na·bw / (F · kv_tok)
    KV read = weight read   B·kv(T_w) = W           → dense: T_w = W / (B · kv_tok)

Past T_c no batch size makes decode compute-bound; T_c depends on the chip only through bw/F.
The lecture says F/bw "stayed near 300" (bf16) from A100 to Blackwell, so the context where a
frontier model's KV read catches up with its matmuls stayed near 100–200k tokens (§2.8); the
presets' datasheet figures put F/bw per chip between ≈150 and ≈560 (the Context page shows both).

Sparse attention changes what is read, not what is stored (`model.roofline.read_tokens`):
reading a fraction f of the context moves T_c to T_c/f; the lecture's "square root in this term"
(§1.1; no formula given) read as √(K·T) past a knee K moves it to T_c²/K.

Every function broadcasts numpy arrays.  No Streamlit here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import yaml

from .presets import FILES, PRESET_DIR
from .roofline import KVLayout, StepResult
from .specs import Hardware

ArrayLike = Any

# The lecture's frontier reference model (§2.5, 01:33–01:45): "100 billion active" (conjectured) and
# a KV of one unique (cross-layer shared) KV layer × 2 (K and V) × d_head 128 × 8 KV heads = 2,048
# elements per token — "gives you exactly this number" (≈ the 1,667 B read off Gemini's 200k tier).
LECTURE_ACTIVE_PARAMS = 100e9
LECTURE_KV_ELEMENTS_PER_TOKEN = 2 * 128 * 8
# "GPT-4 era 100–200K … flat for the last year or two" (§2.8)
STALLED_CONTEXT_TOKENS = (100e3, 200e3)
# Dwarkesh: in-context learning equal to a month on the job needs ~100M tokens of context (§2.8)
MONTH_ON_THE_JOB_TOKENS = 100e6


def compute_crossover_context(kv: KVLayout, active_params: ArrayLike, flops: ArrayLike, hbm_bandwidth: ArrayLike,
                              sparse: str = "dense", param: ArrayLike = 2048.0) -> np.ndarray:
    """Context where one sequence's KV read per decode step takes as long as its matmuls.

    kv(T_c) / bw = 2 · Na / F  →  dense full attention: T_c = 2 · Na · bw / (F · kv_tok)   (lecture §2.5)

    kv            : KVLayout (bytes per token, windowed layers)
    active_params : numeric [-]       flops : numeric [FLOP/s]      hbm_bandwidth : numeric [B/s]
    sparse, param : what a full-attention layer reads (`model.roofline.read_tokens`); param may be an array
    Returns       : numeric [tokens]; +inf where the read never gets there (windowed-only, top-k)
    """
    target = 2.0 * np.asarray(active_params, float) * np.asarray(hbm_bandwidth, float) / np.asarray(flops, float)
    p = np.asarray(param, float)
    if p.ndim == 0:
        return kv.context_for_read(target, sparse, float(p))
    target, p = np.broadcast_arrays(target, p)        # a different sparse parameter per point
    return _context_for_read_params(kv, np.array(target), sparse, np.array(p))


def _context_for_read_params(kv: KVLayout, target: np.ndarray, sparse: str, param: np.ndarray,
                             t_max: float = 1e13) -> np.ndarray:
    """`KVLayout.context_for_read` with an array of sparse parameters (same bisection, param broadcast)."""
    reach = kv.read_bytes(t_max, sparse, param)
    lo = np.full(target.shape, -3.0)
    hi = np.full(target.shape, np.log10(t_max))
    for _ in range(64):  # 64 halvings of 16 decades
        mid = 0.5 * (lo + hi)
        above = kv.read_bytes(10.0 ** mid, sparse, param) >= target
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    out = np.where(target <= 0, 0.0, 10.0 ** hi)
    return np.where(target > reach, np.inf, out)


def fraction_crossover(dense_crossover: ArrayLike, fraction: ArrayLike) -> np.ndarray:
    """Reading a fraction f of the context (full attention only): T_c(f) = T_c / f  [tokens]."""
    return np.asarray(dense_crossover, float) / np.asarray(fraction, float)


def sqrt_crossover(dense_crossover: ArrayLike, knee: ArrayLike) -> np.ndarray:
    """Reading √(K·T) tokens past a knee K (full attention only): √(K·T) = T_c ⇒ T = T_c² / K  [tokens].

    Below the knee every token is read, so the dense answer stands when T_c ≤ K.
    """
    tc = np.asarray(dense_crossover, float)
    k = np.asarray(knee, float)
    return np.where(tc <= k, tc, tc * tc / k)


def cost_terms(step: StepResult) -> dict[str, np.ndarray]:
    """Each roofline term of a decode step, as USD per million output tokens [USD/Mtok].

    The step's cost is proportional to its time (chips × price × t_step / tokens), so a term's share
    is usd_per_mtok · t_term / t_step (no pipeline hops: the pages using this keep P = 1).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        per_s = np.asarray(step.usd_per_mtok, float) / np.asarray(step.t_step_s, float)
    return {"matmul": per_s * step.t_matmul_s, "weights": per_s * step.t_weights_s, "kv": per_s * step.t_kv_s,
            "weights + kv": per_s * (step.t_weights_s + step.t_kv_s)}


# ---------------------------------------------------------------- chip generations

@cache
def preset_dates(kind: str = "hardware") -> dict[str, str]:
    """The `date` of each entry of a built-in preset file (for hardware: the announcement month)."""
    doc = yaml.safe_load((PRESET_DIR / FILES[kind]).read_text(encoding="utf-8"))
    return {str(k): str(v.get("date", "")) for k, v in (doc.get("items") or {}).items() if isinstance(v, dict)}


def decimal_year(date: str) -> float:
    """'2022-03' → 2022.167 (the start of the month); '2020' → 2020.0; unparsable → nan."""
    parts = str(date).strip().split("-")
    try:
        year = float(parts[0])
        month = float(parts[1]) if len(parts) > 1 else 1.0
    except (ValueError, IndexError):
        return float("nan")
    return year + (month - 1.0) / 12.0


@dataclass(frozen=True)
class Generations:
    """Chip presets as arrays (one entry per chip that has the compute dtype)."""

    keys: tuple[str, ...]
    names: tuple[str, ...]
    status: tuple[str, ...]
    year: np.ndarray              # announcement, decimal year
    date: tuple[str, ...]
    flops: np.ndarray             # [FLOP/s] at the compute dtype
    hbm_bandwidth: np.ndarray     # [B/s]
    hbm_bytes: np.ndarray         # [B]
    skipped: tuple[str, ...]      # names of chips without the compute dtype

    @property
    def flops_per_byte(self) -> np.ndarray:
        """F / bw [FLOP/B] — the lecture's "≈ 300" hardware constant at bf16 (§2.1)."""
        return self.flops / self.hbm_bandwidth


def generations(hardware: dict[str, Hardware], compute_dtype: str = "bf16", *,
                include_illustrative: bool = False) -> Generations:
    """Gather the chip presets into arrays, ordered by announcement date (data assembly, not physics).

    Chips without a FLOP/s figure at `compute_dtype` are left out and named in `skipped`;
    `illustrative` chips (the lecture's round-number GPU) are left out unless asked for.
    """
    dates = preset_dates("hardware")
    rows, skipped = [], []
    for key, hw in hardware.items():
        if hw.status == "illustrative" and not include_illustrative:
            continue
        if compute_dtype not in hw.compute_dtypes():
            skipped.append(hw.name)
            continue
        d = dates.get(key, "")
        rows.append((decimal_year(d), key, hw, d))
    rows.sort(key=lambda r: (np.nan_to_num(r[0], nan=1e9), r[1]))
    return Generations(
        keys=tuple(r[1] for r in rows), names=tuple(r[2].name for r in rows),
        status=tuple(r[2].status for r in rows), year=np.array([r[0] for r in rows], float),
        date=tuple(r[3] for r in rows),
        flops=np.array([r[2].flops(compute_dtype) for r in rows], float),
        hbm_bandwidth=np.array([r[2].hbm_bandwidth_bytes_per_s for r in rows], float),
        hbm_bytes=np.array([r[2].hbm_bytes for r in rows], float), skipped=tuple(skipped))
