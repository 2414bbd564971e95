"""The "Which terms" table of docs/prediction.md: the efficiency model and its variants, each fitted and
cross-validated on the built-in measurements.

    python scripts/which_terms.py              # every row (a few minutes on a 2-core machine)
    python scripts/which_terms.py --rows 3     # the first three rows only

Each row prints the median / 90th-percentile |predicted ÷ measured − 1| in %: in-sample, held out five-fold
(seed 0), by model, by chip, by publisher, and five-fold averaged over seeds 0–9.  A variant either fits other
terms (`terms=`) or changes how a setup's work is counted (a rule of `model.calibrate` replaced while its row
runs); the first row is the model as shipped (`MODEL_TERMS`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model import calibrate as cal
from model import presets
from model.specs import DTYPE_BYTES

SEEDS = range(10)


@contextmanager
def replaced(name: str, value) -> Iterator[None]:
    """`model.calibrate.<name>` replaced by `value` for the duration (the module looks its helpers up by name)."""
    old = getattr(cal, name)
    setattr(cal, name, value)
    try:
        yield
    finally:
        setattr(cal, name, old)


def _attention_at_compute_peak(hardware, compute_dtype: str) -> float:
    return 1.0


def _trtllm_capacity_parts(m):
    """TensorRT-LLM's offline runs with the KV of the whole L + O reserved and trtllm-bench's batch cap of 4,096."""
    if m.scope == "system" and "TensorRT-LLM" in m.engine and cal.load_of(m)[0] == "capacity":
        return cal.parts_for(cal.system_for(m), m.decode_context, tokens_computed=m.tokens_computed_per_step,
                             input_tokens=m.input_tokens, output_tokens=m.output_tokens,
                             cache_hit_rate=m.cache_hit_rate, attention_dp=cal.attention_data_parallel(m),
                             reserve_tokens=m.input_tokens + m.output_tokens, max_batch=4096.0)
    return _PARTS(m)


_PARTS = cal.parts


def _wider_format_parts(m):
    """Attention at the peak of the wider of the compute and KV formats (FP8 attention on an FP8 KV cache)."""
    wider = max(DTYPE_BYTES[m.kv], DTYPE_BYTES[m.compute])
    dtype = {0.5: "fp4", 1.0: "fp8"}.get(wider, "bf16")

    def slowdown(hardware, compute_dtype):
        return float(hardware.flops(compute_dtype)) / float(hardware.flops(dtype))

    with replaced("attention_slowdown", slowdown):
        return _PARTS(m)


def _without(term: str) -> tuple[str, ...]:
    return tuple(t for t in cal.MODEL_TERMS if t != term)


@dataclass(frozen=True)
class Row:
    label: str
    terms: tuple[str, ...] = cal.MODEL_TERMS
    rules: dict[str, Callable] = field(default_factory=dict)


ROWS = (
    Row("**the model** (attention at the bf16 peak)"),
    Row("attention at the compute format's peak", rules={"attention_slowdown": _attention_at_compute_peak}),
    Row("attention at the wider of the compute and KV formats", rules={"parts": _wider_format_parts}),
    Row("one η_e for every expert size instead of s½",
        terms=(*_without("expert_size_half"), "expert")),
    Row("+ a time per layer in every step t_ℓ", terms=(*cal.MODEL_TERMS, "layer_s")),
    Row("+ its own prompt efficiency η_p", terms=(*cal.MODEL_TERMS, "prefill")),
    Row("− η_bw (held at 1)", terms=_without("bandwidth")),
    Row("− η_c (held at 1)", terms=_without("compute")),
    Row("− s½ (routed experts at peak)", terms=_without("expert_size_half")),
    Row("− t_ℓp", terms=_without("prompt_layer_s")),
    Row("without the attention-DP rule", rules={"attention_data_parallel": lambda m: False}),
    Row("+ TensorRT-LLM's capacity rules", rules={"parts": _trtllm_capacity_parts}),
    Row("only η_bw and η_c (routed experts at peak)", terms=("bandwidth", "compute")),
)


def _errors(ratio: np.ndarray) -> tuple[float, float]:
    e = np.abs(np.asarray(ratio) - 1.0)
    return 100.0 * float(np.median(e)), 100.0 * float(np.percentile(e, 90))


def evaluate(row: Row, items) -> list[tuple[float, float]]:
    """[(median, p90) %] in-sample, k5 seed 0, model, chip, publisher, and k5 averaged over `SEEDS`."""
    with _rules(row.rules):
        out = [_errors(cal.fit_efficiency(items, row.terms).fitted.ratio)]
        out += [_errors(cal.cross_validate(items, by, terms=row.terms).ratio) for by in ("k5", "model", "chip",
                                                                                         "publisher")]
        seeds = np.array([_errors(cal.cross_validate(items, "k5", seed=s, terms=row.terms).ratio) for s in SEEDS])
        out.append(tuple(seeds.mean(axis=0)))
    return out


@contextmanager
def _rules(rules: dict[str, Callable]) -> Iterator[None]:
    if not rules:
        yield
        return
    (name, value), *rest = rules.items()
    with replaced(name, value), _rules(dict(rest)):
        yield


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=len(ROWS), help="print the first N rows only")
    args = ap.parse_args(argv)
    items = presets.measurement_presets()
    print(f"{len(items)} built-in measurements; median / 90th percentile of |predicted ÷ measured − 1|, %\n")
    print("| model | in-sample | k5 (seed 0) | model | chip | publisher | k5, mean of seeds 0–9 |")
    print("|---|---|---|---|---|---|---|")
    for row in ROWS[:args.rows]:
        cells = " | ".join(f"{m:.1f} / {p:.1f}" for m, p in evaluate(row, items))
        print(f"| {row.label} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
