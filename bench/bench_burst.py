"""Burst bench: N viewers arrive over S seconds, as a lecture hall opens the link, each as a browser's first visit.

    python bench/bench_burst.py                 # 200 sessions over 30 s, one server each: the app, then the stock app
    python bench/bench_burst.py --replicas 2    # the same through haproxy, 2 replicas each (deploy/serve.py)
    python bench/bench_burst.py --burst 15 --over 10 --linger 20     # smoke run, about 2 min
    python bench/bench_burst.py --first-load    # one first visit and one return visit: bytes and server CPU

Each session does what a browser does on a first visit: GET the page (Accept-Encoding: gzip, as every
browser sends), then every script, stylesheet, preload and icon the HTML names, six at a time (a browser's
connections per host); then it opens the websocket (/_stcore/stream, bench_load.py's Client, with the
cookies the page set: behind haproxy the session sticks to its replica) and runs the page.  When the
first chart arrives it fetches what that chart needs before it can draw: the lazily loaded assets —
for the app the chart component's index.js and the plotly.js it names, for the stock app
st.plotly_chart's chunks of Streamlit's bundle.  Time to first chart = arrival → those fetched.  Then it
stays `--linger` seconds (default 60), moving the Batch dial every ~`--move-every` s (×0.5…1.5), and leaves.

Which assets are lazy is learnt once per app (`--assets browser`, the default where Chromium is): Debian's
Chromium loads the page once and every same-origin request not named in the HTML is lazy.  Without it
(`--assets html`), the lazy assets are the components' files the run names (each `js_source_path` and the
`"../<component>/<file>"` URLs in it): the stock app then fetches none.

Printed per app: time to first chart p50/p95, dial moves p50/p95, errors (an HTTP status other than
200/304, a run that failed or drew no chart, an exception or error box), dropped sessions (a websocket
that could not be opened or was lost, a run that timed out), bytes per session, and the servers' CPU
and memory: CPU seconds per session (utime + stime of every server process over the burst), RSS at
the start, at the peak and each second after the last session left, up to `--settle` s (default 60).
Targets, printed PASS/MISS, never asserted: 0 errors, no session dropped, the app's time-to-first-chart
p95 ≤ 2 × the stock app's under the same burst, memory back to its start (≤ start + 5 %) within
`--settle` s of the sessions leaving.  The load generator shares the machine's cores with the servers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import math
import os
import platform
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere in the checkout

from bench.bench_load import LOST, MINIMAL_APP, ROOT, Client, rss_mb, streamlit_server
from bench.stats import pct, verdict
from ui.elements.live_chart import chart_protos

TARGETS = {"ttfc_ratio": 2.0, "rss_return": 0.05}
LIMITS = {"burst": 400, "over": 600.0, "linger": 600.0, "replicas": 16}
CONNECTIONS = 6                       # a browser's parallel connections per host (HTTP/1.1)
DIAL = "Batch"                        # a sidebar select_slider on both apps
HTTP_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 60.0
COMPONENT_REF = re.compile(r'"\.\./([A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+)"')   # "../<component>/<file>" in a component's JS
SKIP = ("/_stcore/stream", "/_stcore/health", "/_stcore/host-config", "/_stcore/metrics")


# ---------------------------------------------------------------- HTTP, as a browser fetches

@dataclass
class Fetched:
    status: int
    headers: dict[str, str]
    body: bytes                     # as sent (gzip when the server compressed it)
    wire: int                       # bytes received: status line, headers and body

    def text(self) -> str:
        data = gzip.decompress(self.body) if self.headers.get("content-encoding") == "gzip" else self.body
        return data.decode("utf-8", "replace")


async def fetch(url: str, headers: dict[str, str] | None = None, timeout_s: float = HTTP_TIMEOUT_S) -> Fetched:
    """One HTTP/1.1 GET over a new connection (Connection: close), as plain bytes; gzip accepted."""
    u = urlsplit(url)
    path = (u.path or "/") + (f"?{u.query}" if u.query else "")
    lines = [f"GET {path} HTTP/1.1", f"Host: {u.netloc}", "Accept-Encoding: gzip", "Connection: close",
             *(f"{k}: {v}" for k, v in (headers or {}).items())]

    async def go() -> Fetched:
        reader, writer = await asyncio.open_connection(u.hostname, u.port or 80)
        try:
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        head, _, body = raw.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        got: dict[str, str] = {}
        cookies = []
        for line in header_lines:
            k, _, v = line.partition(":")
            if k.strip().lower() == "set-cookie":
                cookies.append(v.strip())
            got[k.strip().lower()] = v.strip()
        if cookies:
            got["set-cookie"] = "\n".join(cookies)
        if got.get("transfer-encoding", "").lower() == "chunked":
            body = _dechunk(body)
        return Fetched(int(status_line.split()[1]), got, body, len(raw))

    return await asyncio.wait_for(go(), timeout_s)


def _dechunk(data: bytes) -> bytes:
    out, i = bytearray(), 0
    while True:
        j = data.index(b"\r\n", i)
        n = int(data[i:j].split(b";")[0], 16)
        if n == 0:
            return bytes(out)
        out += data[j + 2:j + 2 + n]
        i = j + 2 + n + 2


class _Refs(HTMLParser):
    """The URLs a browser fetches for an HTML page before running its scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"])
        elif tag == "link" and a.get("href") and set((a.get("rel") or "").split()) & {
                "stylesheet", "modulepreload", "preload", "icon", "shortcut"}:
            self.urls.append(a["href"])


def html_assets(page_url: str, html: str) -> list[str]:
    parser = _Refs()
    parser.feed(html)
    return list(dict.fromkeys(urljoin(page_url, u) for u in parser.urls))


class Cache:
    """A browser's HTTP cache, as far as a return visit goes: fresh immutable/max-age entries are not
    asked for again; entries with an ETag are revalidated with If-None-Match."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[float, str | None]] = {}      # url → (fresh until, etag)

    def store(self, url: str, r: Fetched) -> None:
        cc = r.headers.get("cache-control", "")
        m = re.search(r"max-age=(\d+)", cc)
        fresh = time.time() + int(m.group(1)) if m and "no-cache" not in cc else 0.0
        if r.status == 200 and (fresh or r.headers.get("etag")):
            self.entries[url] = (fresh, r.headers.get("etag"))

    def lookup(self, url: str) -> tuple[bool, dict[str, str]]:
        """(fresh: no request needed, conditional headers)."""
        fresh, etag = self.entries.get(url, (0.0, None))
        if fresh > time.time():
            return True, {}
        return False, ({"If-None-Match": etag} if etag else {})


@dataclass
class Visit:
    """What one page visit cost on the wire."""

    requests: int = 0
    wire: int = 0
    from_cache: int = 0
    not_modified: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def kind_of(url: str) -> str:
    p = urlsplit(url).path
    if "/_stcore/bidi-components/" in p:
        return "components' files"
    if "/static/" in p:
        return "Streamlit's bundle"
    return "page"


async def get_all(urls: list[str], visit: Visit, cookies: dict[str, str], cache: Cache | None = None,
                  limit: asyncio.Semaphore | None = None) -> dict[str, Fetched]:
    """Fetch `urls` CONNECTIONS at a time, as a browser would (from `cache` where it may)."""
    limit = limit or asyncio.Semaphore(CONNECTIONS)
    out: dict[str, Fetched] = {}

    async def one(url: str) -> None:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else {}
        if cache is not None:
            fresh, cond = cache.lookup(url)
            if fresh:
                visit.from_cache += 1
                return
            headers.update(cond)
        async with limit:
            try:
                r = await fetch(url, headers)
            except (TimeoutError, OSError, ValueError, IndexError) as e:
                visit.errors.append(f"GET {urlsplit(url).path}: {type(e).__name__}: {e}")
                return
        visit.requests += 1
        visit.wire += r.wire
        visit.by_kind[kind_of(url)] = visit.by_kind.get(kind_of(url), 0) + r.wire
        if r.status == 304:
            visit.not_modified += 1
        elif r.status != 200:
            visit.errors.append(f"GET {urlsplit(url).path}: HTTP {r.status}")
        if cache is not None:
            cache.store(url, r)
        out[url] = r

    await asyncio.gather(*(one(u) for u in urls))
    return out


def set_cookies(r: Fetched, jar: dict[str, str]) -> None:
    for c in r.headers.get("set-cookie", "").split("\n"):
        name, _, rest = c.partition("=")
        if name.strip() and rest:
            jar[name.strip()] = rest.split(";")[0].strip()


async def component_files(base_url: str, elements, visit: Visit, jar: dict[str, str], cache: Cache | None,
                          seen: set[str]) -> None:
    """Fetch the component files the elements make a browser load: each bidi component's index.js,
    then the "../<component>/<file>" URLs in it (--assets html)."""
    root = base_url + "/_stcore/bidi-components/"
    entries = []
    for e in elements:
        if e.WhichOneof("type") == "bidi_component" and e.bidi_component.js_source_path:
            url = f"{root}{e.bidi_component.component_name}/{e.bidi_component.js_source_path}"
            if url not in seen:
                seen.add(url)
                entries.append(url)
    got = await get_all(entries, visit, jar, cache)
    libs = []
    for url, r in got.items():
        if r.status == 200:
            for ref in COMPONENT_REF.findall(r.text()):
                lib = urljoin(url, "../" + ref)
                if lib not in seen:
                    seen.add(lib)
                    libs.append(lib)
    await get_all(libs, visit, jar, cache)


# ---------------------------------------------------------------- what a browser fetches lazily

def record_lazy(base_url: str) -> list[str] | None:
    """Paths of the same-origin requests Chromium makes for one load of the page beyond those the HTML
    names (Streamlit's lazily imported chunks, the components' files), in order; None without Chromium."""
    try:
        from tests.browser.helpers import chromium, open_app
        with chromium() as browser:
            page = browser.new_page()
            urls: list[str] = []
            page.on("request", lambda r: urls.append(r.url))
            open_app(page, base_url + "/")
            page.wait_for_timeout(1500)
    except Exception as e:        # no Chromium, no Playwright: --assets html
        print(f"  (no browser recording: {type(e).__name__}: {str(e)[:120]}; using --assets html)")
        return None
    page_html = asyncio.run(fetch(base_url + "/")).text()
    named = {urlsplit(u).path for u in html_assets(base_url + "/", page_html)}
    out = []
    for u in urls:
        s = urlsplit(u)
        if s.netloc != urlsplit(base_url).netloc or s.path in named or s.path == "/" or s.path.startswith(SKIP):
            continue
        if s.path not in out:
            out.append(s.path)
    return out


# ---------------------------------------------------------------- one viewer

@dataclass
class Burst:
    name: str
    ttfc_s: list[float] = field(default_factory=list)
    move_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    wire: list[int] = field(default_factory=list)
    sessions: int = 0
    cpu_s: float = math.nan
    rss: dict[str, float] = field(default_factory=dict)
    settle: list[tuple[float, float]] = field(default_factory=list)     # (s after the last left, RSS MB)


async def viewer(base_url: str, lazy: list[str] | None, arrive_s: float, linger_s: float, move_every_s: float,
                 rng: random.Random, out: Burst) -> None:
    """One browser's first visit; see the module docstring."""
    await asyncio.sleep(arrive_s)
    t0 = time.perf_counter()
    visit, jar, seen = Visit(), {}, set()
    tag = f"{out.name} session {arrive_s:5.1f} s"
    try:
        page = await get_all([base_url + "/"], visit, jar)
        r = page.get(base_url + "/")
        if r is None or r.status != 200:
            out.dropped.append(f"{tag}: the page did not load ({visit.errors[:1]})")
            return
        set_cookies(r, jar)
        await get_all(html_assets(base_url + "/", r.text()), visit, jar)
        c = Client(base_url, timeout_s=RUN_TIMEOUT_S, cookies=jar)
        first: list = []                  # when the first chart arrived
        arrived: list = []                # the run's elements so far

        def on_element(e) -> None:
            arrived.append(e)
            if not first and chart_protos([e]):
                first.append(time.perf_counter())

        c.on_element = on_element
        try:
            await c.connect()
        except Exception as e:
            out.dropped.append(f"{tag}: websocket not opened ({type(e).__name__}: {e})")
            return
        try:
            # The lazy assets are asked for as the first chart arrives; the run goes on meanwhile.
            run_task = asyncio.create_task(c.rerun(""))
            while not first and not run_task.done():
                await asyncio.sleep(0.005)
            if first:
                if lazy is not None:
                    await get_all([base_url + p for p in lazy], visit, jar)
                else:
                    await component_files(base_url, list(arrived), visit, jar, None, seen)
            run = await run_task
            if lazy is None:
                await component_files(base_url, run.elements, visit, jar, None, seen)
            if not first or run.charts == 0:
                out.errors.append(f"{tag}: the page drew no chart")
            else:
                out.ttfc_s.append(time.perf_counter() - t0)
            out.errors += [f"{tag}: {p}" for p in run.problems()]
            out.errors += [f"{tag}: {e}" for e in visit.errors]
            out.wire.append(visit.wire)
            end = t0 + linger_s
            while True:
                pause = move_every_s * rng.uniform(0.5, 1.5)
                if time.perf_counter() + pause >= end:
                    await asyncio.sleep(max(0.0, end - time.perf_counter()))
                    break
                await asyncio.sleep(pause)
                run = await c.move(DIAL, rng.choice((-1, 1)))
                out.move_s.append(run.seconds)
                out.errors += [f"{tag} move: {p}" for p in run.problems()]
        finally:
            with contextlib.suppress(Exception):
                await c.ws.close()
    except TimeoutError:
        out.dropped.append(f"{tag}: a run took longer than {RUN_TIMEOUT_S:g} s")
    except LOST as e:
        out.dropped.append(f"{tag}: connection lost ({type(e).__name__}: {e})")
    except LookupError as e:
        out.errors.append(f"{tag}: {e}")


# ---------------------------------------------------------------- servers, CPU and memory

def cpu_s(pid: int) -> float:
    """utime + stime of one process [s], from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return math.nan


def total(f, pids: list[int]) -> float:
    return sum(f(p) for p in pids)


@contextlib.contextmanager
def served(app: Path, cwd: Path, replicas: int, ttl_s: float):
    """(base URL, server pids): one `streamlit run`, or `replicas` behind haproxy as deploy/serve.py runs them."""
    extra = ("--server.disconnectedSessionTTL", f"{ttl_s:g}")
    if not replicas:
        with streamlit_server(app, cwd, ttl_s) as srv:
            yield srv.url, [srv.pid]
        return
    from deploy.serve import balancer
    from deploy.serve import replicas as start_replicas
    with start_replicas(replicas, app, cwd, extra_args=extra) as reps, balancer(reps) as lb:
        yield lb.url, [r.proc.pid for r in reps]


async def warm(base_url: str, n: int) -> None:
    """Each replica's first run (imports, caches) before the burst: n sessions open the page once."""
    async def one() -> None:
        jar: dict[str, str] = {}
        async with Client(base_url, timeout_s=RUN_TIMEOUT_S, cookies=jar) as c:
            await c.rerun("")
    await asyncio.gather(*(one() for _ in range(n)))


def burst(name: str, base_url: str, pids: list[int], lazy: list[str] | None, args) -> Burst:
    out = Burst(name)
    rng = random.Random(args.seed)
    arrivals = sorted(rng.uniform(0, args.over) for _ in range(args.burst))
    out.rss["start"] = total(rss_mb, pids)
    c0 = total(cpu_s, pids)
    peak = [out.rss["start"]]

    async def sample() -> None:
        while True:
            peak[0] = max(peak[0], total(rss_mb, pids))
            await asyncio.sleep(0.25)

    async def go() -> None:
        s = asyncio.create_task(sample())
        await asyncio.gather(*(viewer(base_url, lazy, a, args.linger, args.move_every,
                                      random.Random(rng.random()), out) for a in arrivals))
        s.cancel()

    asyncio.run(go())
    out.cpu_s = total(cpu_s, pids) - c0
    out.sessions = args.burst
    out.rss["peak"] = peak[0]
    t_left = time.monotonic()
    while True:                       # memory after the sessions left, each second up to --settle
        time.sleep(1.0)
        now = time.monotonic() - t_left
        out.settle.append((now, total(rss_mb, pids)))
        if now >= args.settle or out.settle[-1][1] <= out.rss["start"] * (1 + TARGETS["rss_return"]):
            break
    out.rss["after"] = out.settle[-1][1]
    return out


def report(bursts: list[Burst], args) -> None:
    app, stock = bursts
    print(f"\n{args.burst} sessions arriving over {args.over:g} s, each staying {args.linger:g} s "
          f"(a dial move every ~{args.move_every:g} s); time to first chart = arrival → page, assets, "
          "websocket, first chart and what it loads")
    print("| server | sessions | first chart p50 (s) | p95 (s) | dial move p50 / p95 (ms) | errors | dropped | "
          "KB per session | server CPU per session (ms) | RSS start → peak → after (MB) | back in |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---|---|")
    for b in bursts:
        back = next((t for t, r in b.settle if r <= b.rss["start"] * (1 + TARGETS["rss_return"])), None)
        print(f"| {b.name} | {b.sessions} | {pct(b.ttfc_s, 50):.2f} | {pct(b.ttfc_s, 95):.2f} | "
              f"{pct(b.move_s, 50) * 1e3:.0f} / {pct(b.move_s, 95) * 1e3:.0f} | {len(b.errors)} | {len(b.dropped)} | "
              f"{(sum(b.wire) / len(b.wire) / 1e3) if b.wire else math.nan:,.0f} | "
              f"{b.cpu_s / max(b.sessions, 1) * 1e3:.0f} | {b.rss['start']:.0f} → {b.rss['peak']:.0f} → "
              f"{b.rss['after']:.0f} | {'—' if back is None else f'{back:.0f} s'} |")
        for e in (b.errors + b.dropped)[:10]:
            print(f"      {e[:300]}")
        if len(b.errors) + len(b.dropped) > 10:
            print(f"      … and {len(b.errors) + len(b.dropped) - 10} more")
    ratio = pct(app.ttfc_s, 95) / pct(stock.ttfc_s, 95)
    print("\ntargets:")
    print(f"  {verdict(not app.errors and not stock.errors)}  errors: app {len(app.errors)}, "
          f"stock app {len(stock.errors)} (target 0)")
    print(f"  {verdict(not app.dropped and not stock.dropped)}  dropped sessions: app {len(app.dropped)}, "
          f"stock app {len(stock.dropped)} (target 0)")
    print(f"  {verdict(ratio <= TARGETS['ttfc_ratio'])}  app time-to-first-chart p95 {pct(app.ttfc_s, 95):.2f} s ≤ "
          f"{TARGETS['ttfc_ratio']:g} × the stock app's ({pct(stock.ttfc_s, 95):.2f} s): ratio {ratio:.2f}")
    for b in bursts:
        ok = b.rss["after"] <= b.rss["start"] * (1 + TARGETS["rss_return"])
        print(f"  {verdict(ok)}  {b.name}: RSS {b.rss['after']:.0f} MB {b.settle[-1][0]:.0f} s after the sessions "
              f"left, start {b.rss['start']:.0f} MB (target ≤ start + {TARGETS['rss_return']:.0%} within "
              f"{args.settle:g} s); {(b.rss['peak'] - b.rss['start']) / max(b.sessions, 1):.2f} MB per session "
              "at the peak")


# ---------------------------------------------------------------- a first visit, and a return visit

def first_load(args) -> int:
    """One first visit and one return visit of the app and the stock app, one after the other on a
    warm server: bytes on the wire by kind and the server's CPU for each (median of --repeat)."""
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-burst-min-")))
        (tmp / "minimal_app.py").write_text(MINIMAL_APP)
        for name, app, cwd in (("app", ROOT / "app.py", ROOT), ("stock app", tmp / "minimal_app.py", tmp)):
            url, pids = stack.enter_context(served(app, cwd, 0, args.ttl))
            asyncio.run(warm(url, 1))
            lazy = record_lazy(url) if args.assets == "browser" else None
            rows = {"first visit": [], "return visit": []}
            for _ in range(args.repeat):
                cache = Cache()
                for label in rows:
                    time.sleep(0.5)
                    c0 = total(cpu_s, pids)
                    visit = asyncio.run(page_visit(url, lazy, cache))
                    time.sleep(0.3)
                    rows[label].append((total(cpu_s, pids) - c0, visit))
            for label, got in rows.items():
                got.sort(key=lambda x: x[0])
                cpu, visit = got[len(got) // 2]
                kinds = ", ".join(f"{k} {v / 1e3:,.0f} KB" for k, v in sorted(visit.by_kind.items()))
                print(f"{name:>9} {label:<12}: {visit.wire / 1e3:8,.0f} KB on the wire in {visit.requests} requests "
                      f"({visit.not_modified} answered 304, {visit.from_cache} from the cache; {kinds}); server CPU "
                      f"{cpu * 1e3:.0f} ms (median of {args.repeat}: "
                      f"{', '.join(f'{c * 1e3:.0f}' for c, _ in got)}){'; ' + visit.errors[0] if visit.errors else ''}")
    return 0


async def page_visit(base_url: str, lazy: list[str] | None, cache: Cache) -> Visit:
    """A page load through `cache`: HTML, its assets, one run, the lazily loaded assets."""
    visit, jar, seen = Visit(), {}, set()
    got = await get_all([base_url + "/"], visit, jar, cache)
    r = got.get(base_url + "/")
    if r is not None and r.status == 200:
        set_cookies(r, jar)
        await get_all(html_assets(base_url + "/", r.text()), visit, jar, cache)
    async with Client(base_url, timeout_s=RUN_TIMEOUT_S, cookies=jar) as c:
        run = await c.rerun("")
    if lazy is not None:
        await get_all([base_url + p for p in lazy], visit, jar, cache)
    else:
        await component_files(base_url, run.elements, visit, jar, cache, seen)
    return visit


# ---------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--burst", type=int, default=200, help="sessions arriving (default 200)")
    ap.add_argument("--over", type=float, default=30.0, help="seconds over which they arrive, uniformly (default 30)")
    ap.add_argument("--linger", type=float, default=60.0, help="seconds each session stays (default 60)")
    ap.add_argument("--move-every", type=float, default=10.0, help="mean seconds between dial moves (default 10)")
    ap.add_argument("--settle", type=float, default=60.0,
                    help="seconds to watch memory after the last session left (default 60)")
    ap.add_argument("--replicas", type=int, default=0, help="N ≥ 2: each app through haproxy with N replicas")
    ap.add_argument("--assets", choices=("browser", "html"), default="browser",
                    help="how the lazily loaded assets are found: one Chromium load (default), or the HTML "
                         "and the components' files alone")
    ap.add_argument("--ttl", type=float, default=2.0, help="server.disconnectedSessionTTL, s (default 2)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first-load", action="store_true",
                    help="instead: one first visit and one return visit of each app, bytes and server CPU")
    ap.add_argument("--repeat", type=int, default=5, help="with --first-load: visits of each kind (default 5)")
    args = ap.parse_args(argv)
    for k in ("burst", "over", "linger"):
        v = getattr(args, k)
        if not 0 < v <= LIMITS[k]:
            ap.error(f"--{k} must be > 0 and ≤ {LIMITS[k]:g}")
    if args.replicas and not 2 <= args.replicas <= LIMITS["replicas"]:
        ap.error(f"--replicas must be between 2 and {LIMITS['replicas']}")
    if args.replicas:
        from deploy.serve import haproxy_path
        if haproxy_path() is None:
            print("bench_burst.py: haproxy not found; install Debian's package: apt-get install haproxy",
                  file=sys.stderr)
            return 2

    import plotly
    import streamlit
    print(f"# Burst bench — {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"streamlit {streamlit.__version__}, plotly {plotly.__version__}; "
          + (f"{args.replicas} replicas behind haproxy (deploy/serve.py)" if args.replicas else "one server"))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.first_load:
        return first_load(args)

    t_start = time.perf_counter()
    bursts = []
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-burst-min-")))
        (tmp / "minimal_app.py").write_text(MINIMAL_APP)
        for name, app, cwd in (("app", ROOT / "app.py", ROOT), ("stock app", tmp / "minimal_app.py", tmp)):
            with served(app, cwd, args.replicas, args.ttl) as (url, pids):
                asyncio.run(warm(url, max(1, args.replicas) * 2))
                lazy = record_lazy(url) if args.assets == "browser" else None
                found = f"{len(lazy)} lazily loaded assets" if lazy is not None else "the HTML's and components' assets"
                print(f"  {name}: {found}; warm, RSS {total(rss_mb, pids):.0f} MB")
                time.sleep(args.ttl + 2.0)
                b = burst(name, url, pids, lazy, args)
                print(f"  {name}: {len(b.ttfc_s)} first charts, {len(b.move_s)} dial moves, {len(b.errors)} errors, "
                      f"{len(b.dropped)} dropped; RSS back to {b.rss['after']:.0f} MB")
                bursts.append(b)
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
          f"(run took {time.perf_counter() - t_start:.0f} s)")
    report(bursts, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
