"""Benchmark: how fast do the charts follow a dial, in a real headless Chromium, on every page?

    python bench/bench_ui.py                          # every page; ~10 min on 2 quiet cores
    python bench/bench_ui.py --moves 40 --rounds 4    # more moves per page
    python bench/bench_ui.py --pages / /kv-cache      # some pages only
    python bench/bench_ui.py --moves 2 --rounds 1     # a sanity run

Prints, in one run, for every page (views/__init__.py's list; the default page also as
"/") and for the stock baseline app (bench/minimal_app.py: one sidebar select_slider, one
st.plotly_chart, served from a temp dir with no .streamlit/config.toml, i.e. stock settings):
  * keypress → FIRST chart change: the first DOM mutation inside any `.js-plotly-plot` in stMain
    (a MutationObserver; the app's in-place chart element and st.plotly_chart both draw into the
    page's DOM, no shadow root or iframe);
  * keypress → LAST chart finished: the last such mutation once the script run has ended and no chart
    has changed for 300 ms (every chart on the page settled).  A chart off screen holds its new figure
    until it is scrolled to (ui/elements/live_chart/index.js), so "last" is the last chart in view, and the
    table counts the charts held ("held off screen");
  * p50 and p95 of both, and each page's p50 / the baseline's p50;
  * server CPU per rerun: the server process's user + system CPU time (/proc/<pid>/stat) over the
    page's measured moves, divided by the reruns (one per move);
  * cold start: server start → first chart visible (browser already running), for both apps;
  * charts redrawn per move (the most graph divs whose plotly draw count grew in one move), and, for
    comparison only, the last-chart p50 of the stock app drawing that many charts (minimal_app.py
    `?charts=N`, every one changing with the slider): what Streamlit as shipped takes for as many
    charts.  The issue's target stays the one-chart stock app.

The dial moved is the page's own first slider in the main area whose move changes a chart (a page
dial), else the sidebar's Batch or Context slider; ArrowRight/ArrowLeft alternate so it stays put.  The
view: the first chart the dial drives is scrolled fully into view (as little as it takes; the page stays
at its top if that chart is in view there), as one looks at a chart while moving its dial.
Moves are measured in rounds that interleave the pages and the baseline, so background load on a
shared machine lands on all alike; after each move the bench waits for the run to end and for the
charts to settle, then 300 ms more.  Targets (docs/performance.md) are printed as PASS/MISS; nothing asserts
on time.  Uses Debian's /usr/bin/chromium; never downloads a browser.
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
from tests.browser.helpers import (
    ROOT,
    VIEWPORT,
    arm_plot_observer,
    chromium,
    open_app,
    press_and_time_all,
    streamlit_process,
    wait_for_app_run,
)

SIDEBAR_LABELS = ("Batch", "Context")   # the fallback dials, in order
MIN_LABEL = "Batch"
PAUSE_MS = 300
QUIET_MS = 300
MOVE_TIMEOUT_MS = 5_000
MAX_MAIN_DIALS = 4                      # page dials tried before the sidebar's
TARGETS = {"last_ratio": 1.5, "last_p95_ms": 300.0, "cpu_ms": 30.0, "cold_s": 5.0}
CPU_TARGET_PAGES = ("/", "/fast-mode", "/kv-cache")   # target: ≤ 30 ms per rerun on these

# The baseline app (bench/minimal_app.py), written to a temp dir and served next to the app.
MINIMAL_APP = (Path(__file__).resolve().parent / "minimal_app.py").read_text(encoding="utf-8")


def app_pages() -> list[str]:
    """The URL path of every page (views/__init__.py), in navigation order, after "/" (the default page
    as a first visit opens it)."""
    import views

    return ["/"] + ["/" + p.name for p in views.PAGES]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far, in seconds (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Target:
    name: str
    url: str
    pid: int
    page: object = None
    thumb: object = None
    label: str = ""
    where: str = ""
    first_key: str = "ArrowRight"
    first: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    reruns: int = 0
    misses: int = 0
    miss_notes: list[str] = field(default_factory=list)
    n_pressed: int = 0
    skipped: str = ""
    redrawn: int = 0                      # the most charts one move redrew (graph divs whose draw count grew)
    held: int = 0                         # the most charts holding a figure off screen after a move
    changed: list[int] = field(default_factory=list)   # the charts the last move redrew (indices)
    stock_k: int = 0                      # charts in the stock comparison app (the warm-up's `redrawn`)


MAIN_PLOTS = '[data-testid="stMain"] .js-plotly-plot'   # the main area's charts (graph divs)
# How many times each chart of the main area has drawn: the in-place element counts its draws on its
# graph div (__liveDraws); st.plotly_chart (ROOFLINE_CHART=plotly) keeps no count (-1: not counted).
DRAW_COUNTS_JS = f"""() => [...document.querySelectorAll('{MAIN_PLOTS}')]
    .map(gd => gd.__liveDraws === undefined ? -1 : gd.__liveDraws)"""
# Charts off screen hold a move's figure until scrolled to (ui/elements/live_chart/index.js): not timed, counted.
HELD_JS = f"() => [...document.querySelectorAll('{MAIN_PLOTS}')].filter(gd => gd.__liveDeferred).length"
# While a dial is chosen the page is this tall, so every chart is in view and every chart a dial drives
# redraws (a chart off screen would hold its figure, and the dial would seem to drive nothing).
CHOOSING_VIEWPORT = {**VIEWPORT, "height": 16_000}


def move(t: Target) -> tuple[float, float] | None:
    """One keypress on the target's dial: (ms to the first chart change, ms to the last chart settled),
    or None if no chart changed.  Then PAUSE_MS more, so moves never overlap."""
    other = "ArrowLeft" if t.first_key == "ArrowRight" else "ArrowRight"
    key = t.first_key if t.n_pressed % 2 == 0 else other
    t.n_pressed += 1
    before = t.thumb.get_attribute("aria-valuetext")
    draws = t.page.evaluate(DRAW_COUNTS_JS)
    try:
        ms = press_and_time_all(t.page, t.thumb, key, timeout=MOVE_TIMEOUT_MS, quiet_ms=QUIET_MS)
    except (PlaywrightTimeoutError, AssertionError):     # no chart change, or a run that never ended
        ms = None
        with contextlib.suppress(PlaywrightTimeoutError, AssertionError):
            wait_for_app_run(t.page)
    after = t.page.evaluate(DRAW_COUNTS_JS)
    if len(after) == len(draws):
        t.changed = [i for i, (a, b) in enumerate(zip(after, draws)) if a > b]
        t.redrawn = max(t.redrawn, len(t.changed))
    t.held = max(t.held, t.page.evaluate(HELD_JS))
    if ms is None:
        t.miss_notes.append(f"{key} {before}→{t.thumb.get_attribute('aria-valuetext')}")
    t.page.wait_for_timeout(PAUSE_MS)
    return ms


def dials(page) -> list[tuple[str, str, object]]:
    """Candidate dials: (where, label, thumb) — the main area's sliders first, then the sidebar's."""
    out = []
    main = page.get_by_test_id("stMain").get_by_test_id("stSlider")
    for i in range(min(main.count(), MAX_MAIN_DIALS)):
        box = main.nth(i)
        label = box.get_by_test_id("stWidgetLabel").first
        text = label.inner_text().strip() if label.count() else f"slider {i + 1}"
        out.append(("page", text.splitlines()[0] if text else f"slider {i + 1}", box.get_by_role("slider").first))
    for label in SIDEBAR_LABELS:
        box = page.get_by_test_id("stSidebar").get_by_test_id("stSlider").filter(has_text=label)
        if box.count():
            out.append(("sidebar", label, box.first.get_by_role("slider").first))
    return out


def why_not_loaded(page, url: str, exc: Exception) -> str:
    """Why a page could not be timed: it loads but draws no chart (e.g. /custom, the preset editor),
    or it did not load at all."""
    try:
        open_app(page, url, charts=False)
        if page.locator(".js-plotly-plot").count() == 0:
            return "loads, but draws no chart: nothing to time"
    except (PlaywrightTimeoutError, AssertionError):
        pass
    return f"did not load: {str(exc).splitlines()[0][:100]}"


def prepare(browser, t: Target, labels: tuple[str, ...] | None = None) -> None:
    """Open the page in its own context; pick the first dial whose move changes a chart (either way
    first, so a dial at its end works too) and leave it where it was; that is the warm-up."""
    context = browser.new_context(viewport=VIEWPORT)
    t.page = context.new_page()
    for attempt in (1, 2):
        try:
            open_app(t.page, t.url)
            break
        except (PlaywrightTimeoutError, AssertionError) as exc:   # no chart, or a run that never ended
            if attempt == 2:
                t.skipped = why_not_loaded(t.page, t.url, exc)
                return
    arm_plot_observer(t.page)
    t.page.set_viewport_size(CHOOSING_VIEWPORT)
    candidates = dials(t.page)
    if labels is not None:
        candidates = [c for c in candidates if c[1] in labels]
    for where, label, thumb in candidates:
        with contextlib.suppress(PlaywrightTimeoutError):
            thumb.focus(timeout=2_000)
        t.thumb, t.label, t.where = thumb, label, where
        for first_key in ("ArrowRight", "ArrowLeft"):
            t.first_key, t.n_pressed = first_key, 0
            if move(t) is None:
                continue
            driven = list(t.changed)
            if move(t) is not None:
                # The view: the first chart the dial drives, fully in view (scrolled as little as it takes).
                t.page.set_viewport_size(VIEWPORT)
                if driven:
                    t.page.locator(MAIN_PLOTS).nth(driven[0]).evaluate(
                        "e => e.scrollIntoView({block: 'nearest'})")
                t.redrawn = t.held = 0
                move(t)                       # there and back again, as measured: counts the charts redrawn
                move(t)
                t.n_pressed, t.miss_notes = 0, []
                return
            move(t)                           # put it back
        t.miss_notes = []
    t.skipped = f"no dial among {[c[1] for c in candidates]} changes a chart"


def cold_start(stack: contextlib.ExitStack, browser, app: Path, cwd: Path) -> tuple[str, int, float, float]:
    """Start `streamlit run app` (kept running in `stack`); return its URL, its pid, the seconds to
    /_stcore/health ok, and the seconds to the first chart visible in a fresh browser context."""
    t0 = time.perf_counter()
    url, proc = stack.enter_context(streamlit_process(app, cwd=cwd))
    t_health = time.perf_counter() - t0
    context = browser.new_context(viewport=VIEWPORT)
    try:
        open_app(context.new_page(), url + "/")
    finally:
        context.close()
    return url, proc.pid, t_health, time.perf_counter() - t0


def fmt(x: float, w: int = 6) -> str:
    return f"{x:{w}.0f}" if math.isfinite(x) else f"{'—':>{w}}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moves", type=int, default=24, help="measured moves per page (default 24)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds the moves are split into")
    ap.add_argument("--pages", nargs="*", help="URL paths to measure (default: every page)")
    ap.add_argument("--dial", action="append", default=[], metavar="PATH=LABEL",
                    help="also time page PATH with the dial labelled LABEL (page sliders first, then the "
                         "sidebar's), in the same rounds: e.g. /prices=d_head, a dial further down a page")
    args = ap.parse_args()
    if any("=" not in d for d in args.dial):
        ap.error("--dial takes PATH=LABEL, e.g. /prices=d_head")
    extra_dials = [tuple(d.split("=", 1)) for d in args.dial]
    per_round = math.ceil(args.moves / args.rounds)
    paths = args.pages or app_pages()

    import plotly
    import streamlit

    print(f"# UI latency bench — {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"streamlit {streamlit.__version__}, plotly {plotly.__version__}; "
          f"ROOFLINE_CHART={os.environ.get('ROOFLINE_CHART', '(unset: in-place element)')}")
    print(f"pages: {' '.join(paths)}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    with contextlib.ExitStack() as stack:
        browser = stack.enter_context(chromium())
        print(f"Chromium {browser.version} (headless)")
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-ui-min-")))
        (tmp / "minimal_app.py").write_text(MINIMAL_APP)
        assert not (tmp / ".streamlit").exists()   # stock config for the baseline
        app_url, app_pid, app_health, app_cold = cold_start(stack, browser, ROOT / "app.py", ROOT)
        min_url, min_pid, min_health, min_cold = cold_start(stack, browser, tmp / "minimal_app.py", tmp)

        targets = []
        for path in paths:
            targets.append(Target(path, app_url + path, app_pid))
        chosen: dict[str, str] = {}
        for path, label in extra_dials:
            name = f"{path} [{label}]"
            chosen[name] = label
            targets.append(Target(name, app_url + path, app_pid))
        minimal = Target("minimal app", min_url + "/", min_pid, stock_k=1)
        prepare(browser, minimal, (MIN_LABEL,))
        if minimal.skipped:
            raise RuntimeError(f"the baseline app: {minimal.skipped}")
        for t in targets:
            prepare(browser, t, (chosen[t.name],) if t.name in chosen else None)
            print(f"  {t.name:<14} {t.skipped or f'{t.where} dial {t.label!r}'}", flush=True)
        live = [t for t in targets if not t.skipped]
        # For comparison only: the stock app drawing as many charts as a page redrew in its warm-up.
        stock_n = {1: minimal}
        for t in live:
            t.stock_k = t.redrawn
            if t.stock_k > 1 and t.stock_k not in stock_n:
                stock_n[t.stock_k] = Target(f"stock ×{t.stock_k}", f"{min_url}/?charts={t.stock_k}", min_pid,
                                            stock_k=t.stock_k)
                prepare(browser, stock_n[t.stock_k], (MIN_LABEL,))
                if stock_n[t.stock_k].skipped:
                    raise RuntimeError(f"the stock app with {t.stock_k} charts: {stock_n[t.stock_k].skipped}")
        extra_stock = [v for k, v in sorted(stock_n.items()) if k > 1]
        t_start = time.perf_counter()
        for _ in range(args.rounds):
            for t in [*live, minimal, *extra_stock]:
                t.page.bring_to_front()
                c0 = cpu_seconds(t.pid)
                for _ in range(per_round):
                    ms = move(t)
                    if ms is None:
                        t.misses += 1
                    else:
                        t.first.append(ms[0])
                        t.last.append(ms[1])
                t.cpu_s += cpu_seconds(t.pid) - c0
                t.reruns += per_round
        bench_s = time.perf_counter() - t_start

    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
          f"(moves took {bench_s:.0f} s)\n")

    base_first, base_last = pct(minimal.first, 50), pct(minimal.last, 50)
    rows = []
    for t in [*live, minimal, *extra_stock]:
        r = {"t": t, "f50": pct(t.first, 50), "f95": pct(t.first, 95), "l50": pct(t.last, 50), "l95": pct(t.last, 95),
             "cpu": 1000 * t.cpu_s / t.reruns if t.reruns else math.nan}
        r["f_ratio"] = r["f50"] / base_first if base_first > 0 else math.nan
        r["l_ratio"] = r["l50"] / base_last if base_last > 0 else math.nan
        same = stock_n.get(t.stock_k)
        same_last = pct(same.last, 50) if same is not None and t not in stock_n.values() else math.nan
        r["n_ratio"] = r["l50"] / same_last if same_last > 0 else math.nan
        rows.append(r)

    print("keypress → first chart change / → last chart settled (ms); server CPU per rerun (ms)")
    for r in rows:
        t = r["t"]
        extra = (f"  {t.misses} moves with no chart change within {MOVE_TIMEOUT_MS / 1000:g} s "
                 f"({'; '.join(t.miss_notes[-t.misses:])})" if t.misses else "")
        print(f"  {t.name:<14} {t.where or 'sidebar':<7} {t.label[:28]!r:<30} n={len(t.first):>3}  "
              f"first p50 {fmt(r['f50'])} p95 {fmt(r['f95'])} ×{r['f_ratio']:5.2f}  "
              f"last p50 {fmt(r['l50'])} p95 {fmt(r['l95'])} ×{r['l_ratio']:5.2f}  cpu {fmt(r['cpu'], 5)}{extra}")
    for t in targets:
        if t.skipped:
            print(f"  {t.name:<14} skipped: {t.skipped}")
    print(f"cold start (streamlit run → first chart visible): app {app_cold:.2f} s "
          f"(health ok at {app_health:.2f} s); minimal app {min_cold:.2f} s (health ok at {min_health:.2f} s)\n")

    print("targets:")
    for r in rows[:len(live)]:
        t = r["t"]
        print(f"  {verdict(r['l_ratio'] <= TARGETS['last_ratio'])}  {t.name:<14} last p50 {r['l50']:.0f} ms ≤ "
              f"{TARGETS['last_ratio']:g} × stock ({base_last:.0f} ms): ×{r['l_ratio']:.2f}")
        print(f"  {verdict(r['l95'] <= TARGETS['last_p95_ms'])}  {t.name:<14} last p95 {r['l95']:.0f} ms ≤ "
              f"{TARGETS['last_p95_ms']:.0f} ms")
        if t.name in CPU_TARGET_PAGES:
            print(f"  {verdict(r['cpu'] <= TARGETS['cpu_ms'])}  {t.name:<14} server CPU {r['cpu']:.1f} ms/rerun ≤ "
                  f"{TARGETS['cpu_ms']:g} ms")
    print(f"  {verdict(app_cold <= TARGETS['cold_s'])}  cold start {app_cold:.2f} s ≤ {TARGETS['cold_s']:g} s\n")

    print("| page | dial | n | first p50 | first p95 | last p50 | last p95 | last p50 / stock | server CPU / rerun "
          "| charts redrawn | held off screen | last p50 / stock with as many charts |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
    for r in rows:
        t = r["t"]
        is_stock = t in stock_n.values()
        ratio = "(baseline)" if t is minimal else (
            f"{r['l_ratio']:.2f}" + ("" if is_stock else f" {verdict(r['l_ratio'] <= TARGETS['last_ratio'])}"))
        name = ("stock one-slider app" if t is minimal else
                f"stock app, {t.stock_k} charts" if is_stock else f"`{t.name}`")
        same = "—" if is_stock or not math.isfinite(r["n_ratio"]) else f"{r['n_ratio']:.2f} (×{t.stock_k})"
        print(f"| {name} | {t.where or 'sidebar'}: {t.label} | {len(t.first)} | {r['f50']:.0f} ms | "
              f"{r['f95']:.0f} ms | {r['l50']:.0f} ms | {r['l95']:.0f} ms | {ratio} | {r['cpu']:.1f} ms | "
              f"{(t.stock_k if is_stock else t.redrawn) or '—'} | {'—' if is_stock else t.held} | {same} |")
    print(f"\ncold start: app {app_cold:.2f} s, stock app {min_cold:.2f} s.  {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} at the end; Chromium headless, {PAUSE_MS} ms between moves.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
