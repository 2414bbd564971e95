"""Cold-start timeline: where the time from `streamlit run` to the first chart goes.

    python bench/cold_start.py                  # the app, 5 cold starts
    python bench/cold_start.py --repeat 3 --env ROOFLINE_ASSETS=off

Each repetition starts a fresh server (tests/browser/helpers.py's `streamlit_process`, file watcher off), opens
`/` in a fresh context of one headless Chromium and records, in seconds from the server's start: the health
check answering, the page's DOM loaded, the websocket opened (the server's first run starts), the chart
element asking for plotly.js (the runs are over and the page is laid out), and the first chart's SVG drawn.
It prints each repetition and the median of each event, and the stock app's (bench/minimal_app.py) the same
way for scale.  bench/bench_ui.py's cold start is the same span, from its own harness.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.helpers import CHROMIUM, CHROMIUM_ARGS, streamlit_process  # noqa: E402

EVENTS = ("health", "page", "websocket", "plotly.js asked", "first chart")
CHART = "[data-testid='stMain'] .js-plotly-plot .main-svg"


def one(browser, app: Path, env: dict[str, str]) -> dict[str, float]:
    t0 = time.perf_counter()
    seen: dict[str, float] = {}
    with streamlit_process(app, cwd=app.parent if app.name == "minimal_app.py" else ROOT, env=env) as (url, _):
        seen["health"] = time.perf_counter() - t0
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.on("websocket", lambda ws: seen.setdefault("websocket", time.perf_counter() - t0))
        page.on("request", lambda r: "plotly" in r.url and r.url.endswith(".js")
                and seen.setdefault("plotly.js asked", time.perf_counter() - t0))
        page.goto(url + "/", wait_until="domcontentloaded", timeout=120_000)
        seen["page"] = time.perf_counter() - t0
        page.locator(CHART).first.wait_for(state="visible", timeout=120_000)
        seen["first chart"] = time.perf_counter() - t0
        context.close()
    return seen


def report(name: str, runs: list[dict[str, float]]) -> None:
    print(f"{name}:")
    for i, r in enumerate(runs, 1):
        print(f"  {i}: " + "  ".join(f"{e} {r[e]:.2f}" if e in r else f"{e} —" for e in EVENTS))
    med = {e: statistics.median(r[e] for r in runs if e in r) for e in EVENTS if any(e in r for r in runs)}
    print("  median: " + "  ".join(f"{e} {v:.2f} s" for e, v in med.items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="cold starts of each app (default 5)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="an environment variable for the app's server, e.g. ROOFLINE_ASSETS=off")
    args = ap.parse_args()
    if any("=" not in e for e in args.env):
        ap.error("--env takes NAME=VALUE")
    env = dict(e.split("=", 1) for e in args.env)
    from playwright.sync_api import sync_playwright

    print(f"# cold-start timeline — {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.repeat} cold starts"
          + (f"; app env {env}" if env else ""))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            report("app", [one(browser, ROOT / "app.py", env) for _ in range(args.repeat)])
            report("stock app", [one(browser, ROOT / "bench" / "minimal_app.py", {}) for _ in range(args.repeat)])
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
