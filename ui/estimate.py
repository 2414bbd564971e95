"""The sidebar's estimate switch (`est=ideal|predicted`) and the predicted curves the batch charts draw beside
the ideal roofline, with the held-out error band.

*ideal*: the roofline (at the sidebar's Efficiency dials, 1 unless set), a bound on time.  *predicted*: the
efficiency model fitted to every built-in published measurement (`model.calibrate.built_in_fit`,
docs/prediction.md): fitted HBM bandwidth, dense and expert compute efficiencies, applied to a decode step of
the sidebar's system at its batch and context, attention's FLOPs at the chip's bf16 peak.  The prediction
ignores the Efficiency dials and the roofline mode (its step is max(compute, memory) with attention in
compute), and carries no prompt work (the pages have no request lengths), so the fitted time per layer of
steps with a prompt does not apply.

The band is the held-out error of that model: predicted ÷ measured tokens/s per GPU for every built-in point,
each predicted by a fit that never saw its fifth of the points (`built_in_cv("k5")`), 10th to 90th
percentile, lo to hi.  A ratio r = predicted ÷ measured means measured = predicted ÷ r, so a throughput
(tokens/s) measures between predicted ÷ hi and predicted ÷ lo.  At a fixed batch, time per token and cost
per token go as 1 / throughput, so they measure between predicted × lo and predicted × hi.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model import System
from model import calibrate as cal
from ui.figures import batch as figures
from ui.figures.batch import Prediction
from ui.state.dials import ESTIMATE_KEY, ESTIMATES

KEY = ESTIMATE_KEY
IDEAL, PREDICTED = ESTIMATES
CV_KIND = "k5"                  # the band's cross-validation: a random fifth held out, seed 0
IDEAL_NAME, PREDICTED_NAME, BAND_NAME = figures.IDEAL_NAME, figures.PREDICTED_NAME, figures.BAND_NAME


def fit() -> cal.FitSummary:
    """The efficiency model fitted to every built-in measurement, with its five-fold held-out band and median
    error (`model.calibrate.built_in_summary`: stored beside the model when current, else fitted; cached)."""
    return cal.built_in_summary()


def band() -> tuple[float, float]:
    """(lo, hi): the 10th and 90th percentiles of held-out predicted ÷ measured (five-fold)."""
    return fit().band


def is_predicted(value: str) -> bool:
    return value == PREDICTED


def word(estimate: str, system: System) -> str:
    """The word a metric's label starts with: Predicted, Ideal (efficiency dials at 1) or Roofline (the roofline at
    the sidebar's efficiency dials)."""
    if estimate == PREDICTED:
        return "Predicted"
    d = system.deployment
    return "Ideal" if d.mfu == 1.0 and d.bw_util == 1.0 else "Roofline"


def ideal_name(system: System) -> str:
    """The legend name of the roofline curve: the ideal roofline, or the roofline at the efficiency dials."""
    d = system.deployment
    if d.mfu == 1.0 and d.bw_util == 1.0:
        return IDEAL_NAME
    return f"roofline at MFU {d.mfu:g}, bandwidth {d.bw_util:g}"


def labelled(estimate: str, system: System, label: str) -> str:
    """`label` ("latency per token") as the metric's label: "Ideal latency per token"."""
    return f"{word(estimate, system)} {label[:1].lower()}{label[1:]}"


@dataclass(frozen=True)
class Predicted:
    """The fitted model's decode step (arrays over the batch and context given)."""

    t_step_s: np.ndarray
    tokens_per_s_per_user: np.ndarray
    tokens_per_s_per_chip: np.ndarray
    usd_per_mtok: np.ndarray
    bound: np.ndarray                # "compute" or "memory"


def predict(system: System, batch, context) -> Predicted:
    """One vectorised call of the fitted model (`predict_system`) for `system` at `batch` × `context`
    (arrays broadcast): time per step, tokens/s per user and per chip, and $/Mtok at the chip's price
    (C · price / 3600 · t_step / (B · a) · 1e6, as the roofline's)."""
    p = cal.predict_system(system, batch, context, fit().efficiency)
    per_chip = np.asarray(p["tokens_per_s_per_gpu"], float)
    usd = system.hardware.price_usd_per_hour / 3600.0 * 1e6 / per_chip
    return Predicted(np.asarray(p["t_step_s"], float), np.asarray(p["tokens_per_s_per_user"], float), per_chip,
                     usd, np.asarray(p["bound"]))


def time_band(y, lo_hi: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The band of a time or a cost per token (∝ 1 / throughput at a fixed batch): predicted × lo … × hi."""
    lo, hi = band() if lo_hi is None else lo_hi
    y = np.asarray(y, float)
    return y * lo, y * hi


def rate_band(y, lo_hi: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The band of a throughput (tokens/s): predicted ÷ hi … ÷ lo."""
    lo, hi = band() if lo_hi is None else lo_hi
    y = np.asarray(y, float)
    return y / hi, y / lo


def time_prediction(y, fits=True) -> Prediction:
    """A predicted time or cost per token as a chart's `Prediction`: the curve and its band, only where weights
    + KV fit in HBM (`fits`)."""
    y = np.where(np.asarray(fits, bool), np.asarray(y, float), np.nan)
    lo, hi = time_band(y)
    return Prediction(y, lo, hi)


def caption(system: System, lead: str = "Purple: predicted") -> str:
    """What the predicted curve is, its error and what it ignores (numbers from the model); `lead` starts it."""
    f = fit()
    lo, hi = f.band
    e = f.efficiency
    ignores = []
    d = system.deployment
    if d.mfu != 1.0 or d.bw_util != 1.0:
        ignores.append(f"the Efficiency dials (MFU {d.mfu:g}, bandwidth {d.bw_util:g})")
    if d.mode != "lecture":
        ignores.append(f"the {d.mode} roofline mode")
    terms = [f"HBM bandwidth at {100 * e.bandwidth:.3g} %", f"dense compute at {100 * e.compute:.3g} %",
             cal.attention_phrase(e, system.hardware, system.precision.compute), cal.expert_phrase(e, system.model)]
    return (f"{lead} by the efficiency model fitted to {f.n} published measurements — "
            f"{', '.join(t for t in terms if t)} (docs/prediction.md); decode steps alone, no prompt work. "
            f"Shaded: where 8 in 10 measurements fall — held out five-fold, predicted ÷ measured ran "
            f"{lo:.2f}–{hi:.2f} (median error {100 * f.median_error:.3g} %), so a measured time or cost per "
            f"token lies between {lo:.2f}× and {hi:.2f}× the predicted one."
            + (f" The prediction ignores {' and '.join(ignores)}." if ignores else ""))
