"""Benchmark: how fast does `model.decode_step` evaluate whole curves and maps?

    python bench/bench_model.py              # a few seconds on a 2-core machine
    python bench/bench_model.py --profile    # … then where the 1M-point grid's time goes

Prints, in one run:
  * a 4,096-point batch sweep through `decode_step` (every term: matmul, attention, weights, KV,
    step, bound, speeds, $/Mtok, HBM per chip, fit);
  * a 1,000,000-point batch × context grid (1000 × 1000, broadcast) through the same call;
  * points per second;
  * the speed-up over a plain-Python per-point loop of the same formulas (timed on a subset and
    scaled per point);
  * the ratio to one numpy multiply-add pass `a*b + c` over an array of the same size — the floor
    any vectorised evaluation of these formulas sits above.

Figures are ratios against baselines timed in the same run, so they travel between machines
better than the absolute times.  Targets are printed as PASS/MISS; nothing here asserts on time.
The System is built from explicit H100-like / Llama-3.1-70B-like values so no preset file is
needed.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere in the checkout

from model import Deployment, Hardware, ModelArch, Precision, System, decode_step
from model.roofline import BOUNDS

# H100 SXM5: 989 TFLOP/s dense bf16, 80 GB HBM3 at 3.35 TB/s, 8 GPUs per NVLink domain.
H100_LIKE = Hardware(name="H100-like", flops_bf16_per_s=989e12, flops_fp8_per_s=1979e12, hbm_bytes=80e9,
                     hbm_bandwidth_bytes_per_s=3.35e12, price_usd_per_hour=2.5, scaleup_domain_chips=8,
                     power_w=700.0)
# Llama 3.1 70B: 80 layers, 64 query heads, 8 KV heads of 128 (GQA) → 327,680 B/token of bf16 KV.
LLAMA70_LIKE = ModelArch(name="Llama-70B-like", total_params=70.6e9, active_params=70.6e9, n_layers=80,
                         d_model=8192, n_heads=64, n_kv_heads=8, head_dim=128, attention="gqa")
SYSTEM = System(H100_LIKE, LLAMA70_LIKE, Precision(), Deployment(chips=8.0))

TARGETS = {"sweep_s": 0.5e-3, "grid_s": 100e-3, "loop_speedup": 20.0}


def timeit(fn: Callable[[], object], *, repeat: int, number: int = 1, warmup_s: float = 0.2) -> dict[str, float]:
    """Median and min seconds per call of `fn` over `repeat` runs of `number` calls each, after
    calling it for `warmup_s` seconds (at least twice) so caches, allocator and clock settle."""
    t_end = time.perf_counter() + warmup_s
    calls = 0
    while calls < 2 or time.perf_counter() < t_end:
        fn()
        calls += 1
    per_call = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        per_call.append((time.perf_counter() - t0) / number)
    return {"median": statistics.median(per_call), "min": min(per_call)}


def python_loop(system: System, batches: list[float], contexts: list[float]) -> list[tuple]:
    """The decode-step formulas (lecture mode, dense attention, one pipeline stage, no comm),
    one point at a time in plain Python — the baseline a page would have without numpy."""
    d, hw = system.deployment, system.hardware
    F, bw, W, Na = system.flops, system.hbm_bandwidth, system.weight_bytes, system.model.active_params
    kv = system.kv
    kv_tok, attn_tok = kv.full_bytes_per_token, kv.attn_flops_full
    C, price, M, tps_step = d.chips, hw.price_usd_per_hour, hw.hbm_bytes, d.tokens_per_step
    out = []
    for b in batches:
        for t in contexts:
            t_matmul = 2.0 * Na * b / (C * F)
            t_weights = W / (C * bw)
            t_kv = b * kv_tok * t / (C * bw)
            t_attn = b * attn_tok * t / (C * F)
            mem = t_weights + t_kv
            t_step = max(t_matmul, mem, 0.0)
            if t_matmul >= mem:
                bound = "compute"
            else:
                bound = "weights" if t_weights >= t_kv else "kv"
            tps_user = tps_step / t_step
            tps = b * tps_user
            usd = C * price / 3600.0 / tps * 1e6
            hbm = (W + b * kv_tok * t) / C
            out.append((t_matmul, t_attn, t_weights, t_kv, t_step, bound, tps_user, tps, tps / C, usd, hbm,
                        hbm <= M))
    return out


def check_loop_matches(system: System) -> None:
    """The loop is only a fair baseline if it computes the same numbers."""
    b = [1.0, 37.0, 512.0, 4096.0]
    t = [0.0, 1000.0, 8192.0, 131072.0]
    ref = decode_step(system, np.array(b)[:, None], np.array(t)[None, :])
    loop = python_loop(system, b, t)
    np.testing.assert_allclose([r[4] for r in loop], ref.t_step_s.ravel(), rtol=1e-12)
    np.testing.assert_allclose([r[9] for r in loop], ref.usd_per_mtok.ravel(), rtol=1e-12)
    assert [r[5] for r in loop] == list(ref.bound.ravel()), "bound labels differ"
    assert set(BOUNDS) >= {r[5] for r in loop}


def fmt_s(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:,.0f} µs"
    if s < 1:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.2f} s"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main(argv: list[str]) -> int:
    check_loop_matches(SYSTEM)
    rng_batch = np.linspace(1.0, 4096.0, 4096)
    grid_b = np.geomspace(1.0, 4096.0, 1000)[:, None]
    grid_t = np.linspace(0.0, 131072.0, 1000)[None, :]
    n_sweep, n_grid = rng_batch.size, grid_b.size * grid_t.size

    sweep = timeit(lambda: decode_step(SYSTEM, rng_batch, 8192.0), repeat=25, number=20)
    grid = timeit(lambda: decode_step(SYSTEM, grid_b, grid_t), repeat=7)

    # The loop, on a 20,000-point subset (100 batches × 200 contexts) of the same grid.
    sub_b = [float(x) for x in grid_b[::10, 0]]
    sub_t = [float(x) for x in grid_t[0, ::5]]
    n_loop = len(sub_b) * len(sub_t)
    loop = timeit(lambda: python_loop(SYSTEM, sub_b, sub_t), repeat=5, warmup_s=0.0)
    loop_per_point = loop["min"] / n_loop

    # The floor: one fused multiply-add pass over arrays as big as the grid (outputs freshly
    # allocated, as decode_step's are).
    a, b, c = (np.random.default_rng(i).random(n_grid) for i in range(3))
    floor = timeit(lambda: a * b + c, repeat=15)

    grid_per_point = grid["min"] / n_grid
    speedup = loop_per_point / grid_per_point
    floor_ratio = grid["min"] / floor["min"]

    print(f"roofline bench — Python {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}")
    print(f"System: {H100_LIKE.name} × {LLAMA70_LIKE.name}, C = {SYSTEM.deployment.chips:g}, lecture mode; "
          "times are min (median) of repeated runs after warm-up\n")
    rows = [
        ("4,096-point batch sweep (context 8192)", f"{fmt_s(sweep['min'])} ({fmt_s(sweep['median'])})",
         f"{n_sweep / sweep['min']:,.3g}", f"≤ 0.5 ms: {verdict(sweep['min'] <= TARGETS['sweep_s'])}"),
        ("1,000 × 1,000 batch × context grid", f"{fmt_s(grid['min'])} ({fmt_s(grid['median'])})",
         f"{n_grid / grid['min']:,.3g}", f"≤ 100 ms: {verdict(grid['min'] <= TARGETS['grid_s'])}"),
        (f"plain-Python loop, same formulas ({n_loop:,} points)", f"{fmt_s(loop['min'])} ({fmt_s(loop['median'])})",
         f"{1 / loop_per_point:,.3g}", ""),
        ("grid vs loop, per point", f"{speedup:,.0f}× faster", "",
         f"≥ 20×: {verdict(speedup >= TARGETS['loop_speedup'])}"),
        ("one `a*b + c` pass over 1M float64 (floor)", f"{fmt_s(floor['min'])} ({fmt_s(floor['median'])})",
         f"{n_grid / floor['min']:,.3g}", ""),
        ("grid vs floor", f"{floor_ratio:,.1f}× the floor", "", ""),
    ]
    print("| what | time: min (median) | points/s | target |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(f"\ndecode_step costs about {floor_ratio:.0f} multiply-add passes per point "
          f"({grid_per_point * 1e9:.1f} ns/point vs {loop_per_point * 1e9:,.0f} ns/point in the loop).")
    if "--profile" in argv:
        profile(grid_b, grid_t)
    return 0 if math.isfinite(speedup) else 1


def profile(grid_b: np.ndarray, grid_t: np.ndarray) -> None:
    """Where the grid's time goes, by function (cProfile, 10 calls)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(10):
        decode_step(SYSTEM, grid_b, grid_t)
    prof.disable()
    print("\ncProfile of 10 grid calls (own time per function):")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
