"""Benchmark: how fast does a chart follow a slider, in a real headless Chromium?

    python bench/bench_ui.py                 # about 2-4 min on a 2-core machine
    python bench/bench_ui.py --moves 40      # more moves per page

Prints, in one run:
  * keypress → first change of the chart, per page (/, /fast-mode, /kv-cache): ≥ 30 moves each,
    alternating ArrowRight/ArrowLeft on a sidebar slider the page's charts depend on, timed with a
    MutationObserver on the plot (reference/streamlit_notes.md §2b); p50 and p95;
  * the same on a minimal one-slider-one-chart Streamlit app (written to a temp dir, served on another
    port in the same run): the baseline, and the ratio p50 / p50_min per page;
  * cold start: server start → first chart visible (browser already running), for both apps.

Moves are measured in rounds that interleave the pages and the minimal app, so background load on a
shared machine lands on all of them alike.  After each move the bench waits for the script run to
end, then ~300 ms (sliders debounce; back-to-back presses merge).  Targets are printed as PASS/MISS;
nothing here asserts on time.  Uses Debian's /usr/bin/chromium; never downloads a browser.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere in the checkout

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from bench.stats import pct, verdict
from tests.browser import (
    ROOT,
    VIEWPORT,
    arm_plot_observer,
    chromium,
    open_app,
    press_and_time,
    streamlit_server,
    wait_for_app_run,
)

# (url path, slider labels to try in order: the first whose move changes a chart is used)
PAGES = [
    ("/", ("Batch", "Context")),
    ("/fast-mode", ("Context", "Batch")),   # the fast-mode chart has its own batches; context moves it
    ("/kv-cache", ("Context", "Batch")),
]
MIN_LABEL = "Batch"
PAUSE_MS = 300
MOVE_TIMEOUT_MS = 5_000
TARGETS = {"p50_ratio": 1.5, "p95_ms": 400.0, "cold_s": 5.0}

# The baseline app (bench/minimal_app.py), written to a temp dir and served next to the app.
MINIMAL_APP = (Path(__file__).resolve().parent / "minimal_app.py").read_text(encoding="utf-8")


@dataclass
class Target:
    name: str
    url: str
    labels: tuple[str, ...]
    page: object = None
    thumb: object = None
    label: str = ""
    times: list[float] = field(default_factory=list)
    misses: int = 0
    miss_notes: list[str] = field(default_factory=list)
    n_pressed: int = 0


def thumb_for(page, label: str):
    box = page.get_by_test_id("stSidebar").get_by_test_id("stSlider").filter(has_text=label)
    return box.get_by_role("slider").first


def move(t: Target) -> float | None:
    """One keypress on the target's slider; ms to the first chart mutation, or None if none came.

    Then waits for the script run to end and PAUSE_MS more, so moves never overlap.
    """
    key = "ArrowRight" if t.n_pressed % 2 == 0 else "ArrowLeft"
    t.n_pressed += 1
    before = t.thumb.get_attribute("aria-valuetext")
    try:
        ms = press_and_time(t.page, t.thumb, key, timeout=MOVE_TIMEOUT_MS)
    except PlaywrightTimeoutError:
        ms = None
    with contextlib.suppress(PlaywrightTimeoutError):
        wait_for_app_run(t.page)
    if ms is None:
        t.miss_notes.append(f"{key} {before}→{t.thumb.get_attribute('aria-valuetext')}")
    t.page.wait_for_timeout(PAUSE_MS)
    return ms


def prepare(browser, t: Target) -> None:
    """Open the page in its own context, pick a slider that moves a chart, warm it up (2 moves)."""
    context = browser.new_context(viewport=VIEWPORT)
    t.page = context.new_page()
    open_app(t.page, t.url)
    arm_plot_observer(t.page)
    for label in t.labels:
        thumb = thumb_for(t.page, label)
        if thumb.count() == 0:
            continue
        t.thumb, t.label, t.n_pressed = thumb, label, 0
        if move(t) is not None and move(t) is not None:   # right then left: back where it started
            t.n_pressed = 0
            return
        if t.n_pressed % 2:   # leave the dial where it was
            move(t)
    raise RuntimeError(f"{t.url}: no slider among {t.labels} changes a chart")


def cold_start(stack: contextlib.ExitStack, browser, app: Path, cwd: Path) -> tuple[str, float, float]:
    """Start `streamlit run app` (kept running in `stack`); return its URL, the seconds to
    /_stcore/health ok, and the seconds to the first chart visible in a fresh browser context."""
    t0 = time.perf_counter()
    url = stack.enter_context(streamlit_server(app, cwd=cwd))
    t_health = time.perf_counter() - t0
    context = browser.new_context(viewport=VIEWPORT)
    try:
        open_app(context.new_page(), url + "/")
    finally:
        context.close()
    return url, t_health, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moves", type=int, default=32, help="measured moves per page (default 32)")
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds the moves are split into")
    args = ap.parse_args()
    per_round = math.ceil(args.moves / args.rounds)

    import plotly
    import streamlit

    print(f"# UI latency bench — {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"streamlit {streamlit.__version__}, plotly {plotly.__version__}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    with contextlib.ExitStack() as stack:
        browser = stack.enter_context(chromium())
        print(f"Chromium {browser.version} (headless)")
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-ui-min-")))
        (tmp / "minimal_app.py").write_text(MINIMAL_APP)
        app_url, app_health, app_cold = cold_start(stack, browser, ROOT / "app.py", ROOT)
        min_url, min_health, min_cold = cold_start(stack, browser, tmp / "minimal_app.py", tmp)

        targets = [Target(path, app_url + path, labels) for path, labels in PAGES]
        minimal = Target("minimal app", min_url + "/", (MIN_LABEL,))
        for t in [*targets, minimal]:
            prepare(browser, t)
        t_start = time.perf_counter()
        for _ in range(args.rounds):
            for t in [*targets, minimal]:
                t.page.bring_to_front()
                for _ in range(per_round):
                    ms = move(t)
                    if ms is None:
                        t.misses += 1
                    else:
                        t.times.append(ms)
        bench_s = time.perf_counter() - t_start

    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
          f"(moves took {bench_s:.0f} s)\n")

    p50_min = pct(minimal.times, 50)
    rows = []
    for t in [*targets, minimal]:
        p50, p95 = pct(t.times, 50), pct(t.times, 95)
        ratio = p50 / p50_min if p50_min > 0 else math.nan
        rows.append((t, p50, p95, ratio))

    print("keypress → first chart change (ms), MutationObserver on .js-plotly-plot")
    for t, p50, p95, ratio in rows:
        extra = (f", {t.misses} moves with no chart change within {MOVE_TIMEOUT_MS / 1000:g} s "
                 f"({'; '.join(t.miss_notes[-t.misses:])})" if t.misses else "")
        print(f"  {t.name:<12} slider {t.label!r:<10} n={len(t.times):>3}  p50 {p50:7.1f}  p95 {p95:7.1f}  "
              f"min {min(t.times, default=math.nan):6.1f}  max {max(t.times, default=math.nan):7.1f}  "
              f"p50/p50_min {ratio:5.2f}{extra}")
    print(f"cold start (streamlit run → first chart visible): app {app_cold:.2f} s "
          f"(health ok at {app_health:.2f} s); minimal app {min_cold:.2f} s (health ok at {min_health:.2f} s)\n")

    print("targets:")
    for t, p50, p95, ratio in rows[:-1]:
        print(f"  {verdict(ratio <= TARGETS['p50_ratio'])}  {t.name:<10} p50 {p50:.0f} ms ≤ "
              f"{TARGETS['p50_ratio']:g} × minimal ({p50_min:.0f} ms): ratio {ratio:.2f}")
        print(f"  {verdict(p95 <= TARGETS['p95_ms'])}  {t.name:<10} p95 {p95:.0f} ms ≤ {TARGETS['p95_ms']:.0f} ms")
    print(f"  {verdict(app_cold <= TARGETS['cold_s'])}  cold start {app_cold:.2f} s ≤ {TARGETS['cold_s']:g} s\n")

    print("| view | slider | n | p50 (ms) | p95 (ms) | p50 / minimal ≤ 1.5 | p95 ≤ 400 ms |")
    print("|---|---|---:|---:|---:|---|---|")
    for t, p50, p95, ratio in rows:
        if t is minimal:
            print(f"| minimal app | {t.label} | {len(t.times)} | {p50:.0f} | {p95:.0f} | (baseline) | — |")
        else:
            print(f"| `{t.name}` | {t.label} | {len(t.times)} | {p50:.0f} | {p95:.0f} | "
                  f"{ratio:.2f} {verdict(ratio <= TARGETS['p50_ratio'])} | {verdict(p95 <= TARGETS['p95_ms'])} |")
    print(f"| cold start ≤ 5 s | — | 1 | {app_cold:.2f} s | — | minimal app {min_cold:.2f} s | "
          f"{verdict(app_cold <= TARGETS['cold_s'])} |")
    print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; Chromium headless, "
          f"{PAUSE_MS} ms between moves.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
