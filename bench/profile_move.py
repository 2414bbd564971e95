"""Where does a dial move's time go?  One page, one dial, in headless Chromium, optionally A/B.

    python bench/profile_move.py                                    # /batch, sidebar Batch, 20 moves
    python bench/profile_move.py --page /moe --dial main:"GPUs the expert layer spans"
    python bench/profile_move.py --variant gc-on:STREAMLIT_RUNNER_POST_SCRIPT_GC=true \
                                 --variant plotly-chart:ROOFLINE_CHART=plotly --rounds 3
    python bench/profile_move.py --js-profile --threads             # browser JS by script; server CPU by thread
    python bench/profile_move.py --py-spy                           # server stacks (needs `pip install py-spy`)
    python bench/profile_move.py --stock --page / --trace stock.json # the stock baseline app's timeline
    python bench/profile_move.py --page /moe --dial main:"GPUs the expert layer spans, G" --chart-in-view 0

Prints, per variant (the app as it is = "base", plus each --variant NAME:ENV=V,... run with those
environment variables on its server), keypress → first chart change and → last chart settled (p50,
p95) and the server's CPU per move (/proc, user + system), measured like bench/bench_ui.py.  Variants
are measured in interleaved rounds (each round starts every variant's server afresh), so drift on a
shared machine lands on all alike; compare variants within one run, never across runs.

Where time goes:
  --threads     server CPU per move by thread (the script runs in short-lived threads: what the
                surviving threads do not account for is the script);
  --js-profile  Chromium's sampling profiler (CDP Profiler) over the moves: self time by script
                (plotly.min.js, Streamlit's React bundles, "(program)" = style, layout, paint) and the
                top functions;
  --trace FILE  a Chromium performance trace (CDP Tracing, devtools.timeline) of the moves, saved for
                chrome://tracing or Perfetto, and the renderer main thread's time by event;
  --py-spy      py-spy samples the server (wall time of busy threads, so idle waits show too) and the
                top inclusive frames of this app's code and Streamlit's send path are printed.
Nothing asserts on time.  Uses Debian's /usr/bin/chromium; never downloads a browser.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere in the checkout

from bench.bench_ui import cpu_seconds
from bench.stats import pct
from tests.browser.helpers import (
    ROOT,
    VIEWPORT,
    arm_plot_observer,
    chromium,
    open_app,
    press_and_time_all,
    streamlit_process,
)

TRACE_CATEGORIES = "devtools.timeline,disabled-by-default-devtools.timeline,v8.execute,blink.user_timing"


def thread_cpu(pid: int) -> dict[str, tuple[str, float]]:
    """CPU seconds of each live thread of `pid`: {tid: (name, seconds)}."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    for d in glob.glob(f"/proc/{pid}/task/*"):
        try:
            stat = Path(d, "stat").read_text()
            name = Path(d, "comm").read_text().strip()
        except OSError:
            continue
        f = stat.rsplit(")", 1)[1].split()
        out[d.rsplit("/", 1)[1]] = (name, (int(f[11]) + int(f[12])) / tick)
    return out


def js_summary(profile: dict, moves: int, top: int = 15) -> list[str]:
    """Self time per move by script URL and by function, from a CDP Profiler profile."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    self_us: collections.Counter = collections.Counter()
    deltas = profile["timeDeltas"]
    for i, s in enumerate(profile["samples"]):
        self_us[s] += deltas[i + 1] if i + 1 < len(deltas) else 0
    by_url: collections.Counter = collections.Counter()
    by_fn: collections.Counter = collections.Counter()
    for nid, us in self_us.items():
        cf = nodes[nid]["callFrame"]
        url = cf["url"].split("?")[0].rsplit("/", 1)[-1]
        by_url[url or cf["functionName"] or "(native)"] += us
        by_fn[f"{cf['functionName'] or '(anonymous)'} @ {url}:{cf['lineNumber']}"] += us
    busy = sum(v for k, v in by_url.items() if k != "(idle)")
    lines = [f"  browser main thread busy: {busy / 1e3 / moves:.1f} ms per move (sampled)"]
    lines += [f"  {v / 1e3 / moves:7.1f} ms  {k}" for k, v in by_url.most_common(top) if k != "(idle)"]
    lines.append("  top functions (self):")
    lines += [f"  {v / 1e3 / moves:7.1f} ms  {k}" for k, v in by_fn.most_common(top + 1) if not k.startswith("(idle)")]
    return lines


def trace_summary(events: list[dict], moves: int, top: int = 15) -> list[str]:
    """Self time per move by trace event name on the renderer's main thread."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    main = {k for k, v in names.items() if v == "CrRendererMain"}
    xs = sorted((e for e in events if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X" and "dur" in e),
                key=lambda e: (e["pid"], e["ts"], -e["dur"]))
    own: collections.Counter = collections.Counter()
    stack: list[dict] = []
    for e in xs:
        while stack and (stack[-1]["pid"] != e["pid"] or stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]):
            stack.pop()
        if stack:
            own[stack[-1]["name"]] -= e["dur"]
        own[e["name"]] += e["dur"]
        stack.append(e)
    total = sum(e["dur"] for e in xs if e["name"] == "RunTask")
    lines = [f"  renderer main thread tasks: {total / 1e3 / moves:.1f} ms per move"]
    lines += [f"  {v / 1e3 / moves:7.1f} ms  {k}" for k, v in own.most_common(top)]
    return lines


def spy_summary(raw: str, moves: int, rate: int, top: int = 25) -> list[str]:
    """Inclusive wall time per move of this app's frames and Streamlit's send path, from py-spy's raw output."""
    incl: collections.Counter = collections.Counter()
    for line in raw.splitlines():
        if not line.strip():
            continue
        stack, n = line.rsplit(" ", 1)
        seen = set()
        for fr in stack.split(";"):
            m = re.match(r"(.*) \((.*?):\d+\)", fr)
            where = re.sub(r".*site-packages/", "", m.group(2)).replace(str(ROOT) + "/", "") if m else ""
            key = f"{m.group(1)} ({where})" if m else fr
            if key not in seen:
                seen.add(key)
                incl[key] += int(n)
    keep = re.compile(r"\((app\.py|views/|ui/|model/)|_enqueue_forward_msg|send_bytes|to_json")
    return [f"  {n / rate * 1e3 / moves:7.1f} ms  {k}" for k, n in incl.most_common() if keep.search(k)][:top]


def measure(browser, name: str, env: dict[str, str], args, moves: int, report: list[str]) -> dict:
    where, _, label = args.dial.partition(":")
    out = {"first": [], "last": [], "cpu": 0.0}
    if args.stock:       # bench/minimal_app.py from a temp dir: stock settings, no .streamlit/config.toml
        tmp = Path(tempfile.mkdtemp(prefix="stock-app-"))
        shutil.copy(Path(__file__).resolve().parent / "minimal_app.py", tmp / "minimal_app.py")
        app, cwd = tmp / "minimal_app.py", tmp
    else:
        app, cwd = "app.py", ROOT
    with streamlit_process(app, cwd=cwd, env=env) as (url, proc):
        ctx = browser.new_context(viewport=VIEWPORT)
        page = ctx.new_page()
        open_app(page, url + args.page)
        arm_plot_observer(page)
        root = page.get_by_test_id("stSidebar" if where == "sidebar" else "stMain")
        thumb = root.get_by_test_id("stSlider").filter(has_text=label).first.get_by_role("slider").first
        thumb.focus()
        if args.chart_in_view is not None:                   # after the focus, which scrolls to the dial
            page.locator(f"[data-testid='stMain'] .js-plotly-plot >> nth={args.chart_in_view}").evaluate(
                "e => e.scrollIntoView({block: 'nearest'})")
        for i in range(4):                                   # warm-up
            press_and_time_all(page, thumb, "ArrowRight" if i % 2 == 0 else "ArrowLeft")
        spy, spy_out = None, None
        if args.py_spy:
            spy_out = tempfile.NamedTemporaryFile(suffix=".txt", delete=False).name
            spy = subprocess.Popen([shutil.which("py-spy") or "py-spy", "record", "--pid", str(proc.pid), "--rate",
                                    "250", "--format", "raw", "-o", spy_out, "--nonblocking"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)
        prof = ctx.new_cdp_session(page) if args.js_profile else None
        if prof:
            prof.send("Profiler.enable")
            prof.send("Profiler.setSamplingInterval", {"interval": 200})
            prof.send("Profiler.start")
        tracer = ctx.new_cdp_session(page) if args.trace else None
        if tracer:
            tracer.send("Tracing.start", {"categories": TRACE_CATEGORIES, "transferMode": "ReturnAsStream"})
        t0, c0 = thread_cpu(proc.pid), cpu_seconds(proc.pid)
        for i in range(moves):
            first, last = press_and_time_all(page, thumb, "ArrowRight" if i % 2 == 0 else "ArrowLeft")
            out["first"].append(first)
            out["last"].append(last)
            page.wait_for_timeout(300)
        t1, out["cpu"] = thread_cpu(proc.pid), cpu_seconds(proc.pid) - c0
        if args.threads:
            rows = sorted(((c - t0.get(tid, (n, 0.0))[1], tid, n) for tid, (n, c) in t1.items()), reverse=True)
            kept = sum(d for d, _, _ in rows)
            rest = (out["cpu"] - kept) / moves * 1e3
            report.append(f"[{name}] server CPU per move by thread (the rest, {rest:.1f} ms, "
                          "was in threads that ended: the script runs)")
            report += [f"  {d / moves * 1e3:7.1f} ms  thread {tid} {n}" for d, tid, n in rows[:6] if d > 0]
        if prof:
            report.append(f"[{name}] browser JS profile")
            profile = prof.send("Profiler.stop")["profile"]
            report += js_summary(profile, moves)
            if args.js_profile_out:
                path = args.js_profile_out if name == "base" else f"{args.js_profile_out}.{name}"
                Path(path).write_text(json.dumps(profile))
                report.append(f"  profile → {path} (.cpuprofile: Chromium DevTools' Performance panel loads it)")
        if tracer:
            done: dict = {}
            tracer.on("Tracing.tracingComplete", lambda e: done.update(e))
            tracer.send("Tracing.end")
            while not done:
                page.wait_for_timeout(100)
            chunks = []
            while True:
                r = tracer.send("IO.read", {"handle": done["stream"]})
                chunks.append(r["data"])
                if r.get("eof"):
                    break
            path = args.trace if name == "base" else f"{args.trace}.{name}"
            Path(path).write_text("".join(chunks))
            events = json.loads(Path(path).read_text())
            events = events["traceEvents"] if isinstance(events, dict) else events
            report.append(f"[{name}] Chromium trace → {path}")
            report += trace_summary(events, moves)
        if spy:
            spy.send_signal(2)
            spy.wait(timeout=30)
            report.append(f"[{name}] py-spy, server wall time of busy threads per move (inclusive)")
            report += spy_summary(Path(spy_out).read_text(), moves, 250)
            os.unlink(spy_out)
        ctx.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--page", default="/batch", help="page path (default /batch)")
    ap.add_argument("--dial", default="sidebar:Batch", help='where:label of the slider, e.g. main:"d_head"')
    ap.add_argument("--moves", type=int, default=20, help="measured moves per variant per round")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds (each restarts the servers)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:ENV=V,...",
                    help="also measure the app with these environment variables on its server")
    ap.add_argument("--stock", action="store_true",
                    help="time the stock baseline app (bench/minimal_app.py, stock settings) instead: its timeline "
                         "next to the app's (with --trace); use --page / --dial sidebar:Batch")
    ap.add_argument("--chart-in-view", type=int, metavar="N",
                    help="scroll the main area's Nth chart (0 = first) into view before the moves: charts off "
                         "screen hold their figure (ui/live_chart), so a dial far above its chart times nothing")
    ap.add_argument("--threads", action="store_true", help="server CPU per move by thread")
    ap.add_argument("--js-profile", action="store_true", help="Chromium sampling profile of the moves")
    ap.add_argument("--js-profile-out", metavar="FILE", help="with --js-profile: save the profile (.cpuprofile)")
    ap.add_argument("--trace", metavar="FILE", help="save a Chromium performance trace of the moves")
    ap.add_argument("--py-spy", action="store_true", help="sample the server with py-spy (pip install py-spy)")
    args = ap.parse_args()
    if args.py_spy and not shutil.which("py-spy"):
        print("--py-spy needs py-spy on PATH: pip install py-spy", file=sys.stderr)
        return 2
    variants = [("base", {})]
    for v in args.variant:
        name, _, spec = v.partition(":")
        env = dict(kv.split("=", 1) for kv in spec.split(",") if "=" in kv)
        if not name or not env:
            print(f"bad --variant {v!r}: expected NAME:ENV=VALUE[,ENV=VALUE]", file=sys.stderr)
            return 2
        variants.append((name, env))
    results = {name: {"first": [], "last": [], "cpu": 0.0} for name, _ in variants}
    report: list[str] = []
    print(f"# {args.page}, dial {args.dial}, {args.moves} moves × {args.rounds} round(s) per variant; "
          f"load average {os.getloadavg()[0]:.2f}")
    with chromium() as browser:
        for _ in range(args.rounds):
            for name, env in variants:
                r = measure(browser, name, env, args, args.moves, report)
                for k in ("first", "last"):
                    results[name][k] += r[k]
                results[name]["cpu"] += r["cpu"]
    base_last = statistics.median(results["base"]["last"])
    print("| variant | first p50 | first p95 | last p50 | last p95 | last p50 / base | server CPU / move |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, env in variants:
        r = results[name]
        n = len(r["last"])
        label = name + (" (" + ", ".join(f"{k}={v}" for k, v in env.items()) + ")" if env else "")
        print(f"| {label} | {pct(r['first'], 50):.0f} ms | {pct(r['first'], 95):.0f} ms | {pct(r['last'], 50):.0f} ms "
              f"| {pct(r['last'], 95):.0f} ms | {statistics.median(r['last']) / base_last:.2f} | "
              f"{r['cpu'] / n * 1e3:.1f} ms |")
    for line in report:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
