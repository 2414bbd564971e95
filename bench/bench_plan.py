"""Benchmark: how many configurations per second does `model.plan.plan` search, against evaluating the
same configurations one at a time?

    python bench/bench_plan.py                          # a few seconds on a 2-core machine
    python bench/bench_plan.py --model deepseek-v3      # an MoE model (the all-to-all layouts)
    python bench/bench_plan.py --predicted              # both sides on the fitted efficiency model (the default
                                                        # of the CLI and the Plan page)

Prints, in one run:
  * the whole search — every chip preset but the illustrative lecture GPU × layouts (C chips per stage,
    P stages) × weight dtype × KV dtype × serving mode × batch — for one model and one traffic
    (default Llama 3.1 70B, 2,000 input / 500 output tokens, TTFT ≤ 1 s, TPOT ≤ 50 ms, ideal roofline):
    configurations evaluated, time (min and median of repeated runs after a warm-up), configurations/s;
  * the per-configuration baseline: a random sample of the same configurations through
    `model.plan.evaluate` in a Python loop (for each: a System, the layout's communication, the chunked
    prefill, `decode_step` with and without the prompts and at the longest context, `prefill` per request
    class), timed per configuration — first checked to give the search's numbers on its sample;
  * configurations/s of both and their ratio (target ≥ 100×), and the search time against its target
    (≥ 100,000 configurations in ≤ 200 ms).
Targets are printed as PASS/MISS; nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere in the checkout

from bench.bench_model import fmt_s, timeit, verdict
from model import calibrate, presets
from model.plan import Config, Traffic, evaluate, plan, searchable_hardware

TARGETS = {"configs": 100_000, "search_s": 0.2, "speedup": 100.0}
CHECKED = ("t_step_s", "tpot_s", "ttft_s", "usd_per_mtok_output", "usd_per_request", "hbm_bytes_per_chip")


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="llama-3.1-70b")
    p.add_argument("--hardware", help="comma-separated chip presets (default: all but the illustrative)")
    p.add_argument("--input-tokens", type=float, default=2000.0)
    p.add_argument("--output-tokens", type=float, default=500.0)
    p.add_argument("--ttft", type=float, default=1.0)
    p.add_argument("--tpot", type=float, default=0.05)
    p.add_argument("--loop", type=int, default=300, help="configurations in the per-configuration sample")
    p.add_argument("--repeat", type=int, default=7, help="timed runs of the whole search")
    p.add_argument("--predicted", action="store_true",
                   help="search and loop on the efficiency model fitted to the built-in measurements "
                        "(model/calibrate.py) instead of the ideal roofline")
    return p.parse_args(argv)


def config_of(pt: dict) -> Config:
    """The `Config` a point of the search names."""
    return Config(pt["chips"], pt["pipeline_stages"], pt["batch"], pt["weight_dtype"], pt["kv_dtype"], pt["mode"],
                  pt["prefill_chips"] // pt["prefill_stages"], pt["prefill_stages"], pt["prefill_batch"])


def loop(model, hardware: dict, sample: list[dict], traffic: Traffic, efficiency=None) -> list[dict]:
    """The baseline: each configuration on its own, in plain Python around the model's scalar calls."""
    return [evaluate(model, hardware[pt["hardware"]], config_of(pt), traffic, efficiency=efficiency) for pt in sample]


def check_loop_matches(sample: list[dict], out: list[dict]) -> float:
    """The loop is a fair baseline only if it computes the search's numbers; returns the worst relative gap."""
    worst = 0.0
    for pt, ref in zip(sample, out):
        for k in CHECKED:
            gap = abs(pt[k] - ref[k]) / max(abs(ref[k]), 1e-300)
            if not gap <= 1e-9:
                raise AssertionError(f"the loop and the search differ on {k}: {ref[k]!r} against {pt[k]!r} ({pt})")
            worst = max(worst, gap)
        if (pt["bound"], pt["fits"]) != (ref["bound"], ref["fits"]):
            raise AssertionError(f"the loop and the search differ on the bound or the fit at {pt}")
    return worst


def main(argv: list[str]) -> int:
    a = parse(argv)
    model = presets.get("model", a.model)
    hardware = (searchable_hardware() if a.hardware is None
                else {k: presets.get("hardware", k) for k in a.hardware.split(",")})
    traffic = Traffic.single(a.input_tokens, a.output_tokens)
    eff = calibrate.built_in_fit().efficiency if a.predicted else None     # fitted once, outside the timing
    on = "the fitted efficiency model" if a.predicted else "ideal roofline"

    def search():
        return plan(model, hardware, traffic, ttft_s=a.ttft, tpot_s=a.tpot, efficiency=eff)

    res = search()
    n = res.configs_evaluated
    rng = np.random.default_rng(0)
    picks = rng.choice(n, min(a.loop, n), replace=False)
    sample = [res.point(int(i)) for i in picks]
    worst = check_loop_matches(sample, loop(model, hardware, sample, traffic, eff))

    whole = timeit(search, repeat=a.repeat)
    base = timeit(lambda: loop(model, hardware, sample, traffic, eff), repeat=3, warmup_s=0.0)
    per_search = whole["min"] / n
    per_loop = base["min"] / len(sample)
    speedup = per_loop / per_search

    print(f"roofline plan bench — Python {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}")
    best = res.point(res.best) if res.best is not None else None
    print(f"search: {model.name} on {', '.join(hardware)}; {a.input_tokens:g} in / "
          f"{a.output_tokens:g} out tokens, TTFT ≤ {a.ttft:g} s, TPOT ≤ {a.tpot:g} s, {on}, weights "
          f"bf16/fp8/fp4 × KV bf16/fp8 × aggregated/disaggregated, up to 1,024 chips a replica, batches at 8 a "
          f"doubling; one `plan` call; times are min (median) of {a.repeat} runs after warm-up")
    print(f"loop: {len(sample)} of the same configurations drawn at random, each through model.plan.evaluate "
          f"(decode_step, prefill and the layout's comm, one configuration a call), min (median) of 3 passes; "
          f"it matches the search to {worst:.1e} (relative) on every one\n")
    rows = [
        (f"plan: {n:,} configurations", f"{fmt_s(whole['min'])} ({fmt_s(whole['median'])})",
         f"{n / whole['min']:,.3g}",
         f"≥ 100,000 in ≤ 200 ms: {verdict(n >= TARGETS['configs'] and whole['min'] <= TARGETS['search_s'])}"),
        (f"per-configuration loop: {len(sample):,} configurations", f"{fmt_s(base['min'])} ({fmt_s(base['median'])})",
         f"{1 / per_loop:,.3g}", ""),
        ("plan vs loop, per configuration", f"{speedup:,.0f}× faster", "",
         f"≥ 100×: {verdict(speedup >= TARGETS['speedup'])}"),
    ]
    print("| what | time: min (median) | configurations/s | target |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    if best is not None:
        print(f"\nbest: {best['hardware']} × {best['chips']} (P = {best['pipeline_stages']}), batch {best['batch']:,}, "
              f"{best['weight_dtype']} weights, {best['kv_dtype']} KV, {best['mode']}: "
              f"${best['usd_per_request']:.3g}/request, TPOT {best['tpot_s'] * 1e3:.3g} ms")
    return 0 if math.isfinite(speedup) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
