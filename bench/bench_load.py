"""Load bench: N concurrent sessions move sliders across every page for a fixed time.

    python bench/bench_load.py                                   # 20 sessions × 60 s, 2 waves: about 6 min
    python bench/bench_load.py --sessions 3 --seconds 10 --waves 1   # smoke run, about 1 min
    python bench/bench_load.py --replicas 2 --kill-one           # 40 sessions through haproxy: 1 vs 2 replicas,
                                                                 # then 2 with one killed half-way (about 4 min)

Each session is a Streamlit websocket client speaking the browser's own protocol (BackMsg / ForwardMsg
protobufs from `streamlit.proto` over `/_stcore/stream`, with the `websockets` package Streamlit itself
depends on).  No browser: twenty sessions cost the load generator little of a 2-core machine, and what is
timed is the server's work — a rerun request sent → that run's `script_finished` received (all of the
page's elements and charts arrive before it).  The browser's drawing time is not included; bench_ui.py
measures that for one session.

A session opens a page, moves a sidebar slider (Batch or Context) a few times with a think time between
moves, then goes to the next page, round the whole navigation (every page app.py registers), until the
wave's time is up.  The same load, in the same run, drives the minimal one-slider-one-chart app of
bench_ui.py (its one slider, one page).  Waves alternate app / minimal app, so background load on a
shared machine lands on both alike; the load generator shares the cores, so only the ratio is
meaningful.

Printed per app: slider-move latency p50/p95 (and page-open latency for the app), interactions, errors
(a run that raised, an error box, a lost connection, a timeout, a page that drew no chart where it had
one before), and the server's RSS: at the start (after one warm-up session has visited every page),
its peak during each wave and after each wave's sessions closed and were dropped (the servers run with
`--server.disconnectedSessionTTL` = --ttl, default 2 s, so closed sessions are freed promptly instead of
after the default 120 s).  Growth per session = (RSS after the last wave − after the first) / the
sessions run in between: a leak shows there.  Targets: 0 errors, app p95 ≤ 1.5 × minimal
p95, memory flat.  Nothing asserts on time; targets print as PASS/MISS.  Bounded: ≤ 100 sessions,
≤ 600 s per wave, ≤ 4 waves, ≤ 16 replicas, localhost only.

--replicas N: the app only, through haproxy as deploy/serve.py runs it, first with one
replica, then with N (40 sessions by default); target: N = 2 replicas' slider p95 ≤ half of one
replica's.  --kill-one adds a wave through the N replicas in which one is killed half-way: printed are
how long haproxy took to mark it DOWN against the bound its health checks imply, the connections it
still sent there, the survivor's sessions' errors (target 0), and for the killed replica's sessions
how many reconnected through haproxy onto a survivor with their view intact — the same page, query
string and slider values, rebuilt from the URL alone — and every failed interaction.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere in the checkout

import websockets
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.protocol import State

from bench.stats import pct, verdict
from tests.browser.helpers import free_port, health, stop_process_group, streamlit_process
from ui.elements.live_chart import chart_protos

__all__ = ["Client", "free_port", "health", "stop_process_group", "streamlit_server"]   # tests/deploy/test_deploy.py

ROOT = Path(__file__).resolve().parents[1]
SLIDERS = ("Batch", "Context")       # sidebar select_sliders on every page of the app
MOVES_PER_PAGE = 3
RUN_TIMEOUT_S = 30.0
TARGETS = {"p95_ratio": 1.5, "growth_mb_per_session": 0.5, "replica_p95_ratio": 0.5}
LIMITS = {"sessions": 100, "seconds": 600.0, "waves": 4, "replicas": 16}

# The baseline app (bench/minimal_app.py), written to a temp dir and served next to the app.
MINIMAL_APP = (Path(__file__).resolve().parent / "minimal_app.py").read_text(encoding="utf-8")

FINISHED_OK = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY")
FINISHED_EARLY = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")


# ---------------------------------------------------------------- server

def rss_mb(pid: int) -> float:
    """Resident set size of one process [MB], from /proc (Linux)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return math.nan


@dataclass
class Server:
    url: str
    proc: subprocess.Popen

    @property
    def pid(self) -> int:
        return self.proc.pid


@contextlib.contextmanager
def streamlit_server(app: Path, cwd: Path, ttl_s: float = 120.0, port: int | None = None) -> Iterator[Server]:
    """tests/browser/helpers.py's server, with closed sessions dropped after `ttl_s` (so memory can be compared)."""
    with streamlit_process(app, cwd, port, extra_args=("--server.disconnectedSessionTTL", f"{ttl_s:g}")) as (url, p):
        yield Server(url, p)


# ---------------------------------------------------------------- websocket client

@dataclass
class Page:
    url_path: str
    script_hash: str
    title: str


@dataclass
class Run:
    """One script run as the browser would receive it."""

    seconds: float
    status: int | None = None
    elements: list = field(default_factory=list)       # Element protos, in order
    query_string: str | None = None                    # the URL the app wrote (page_info_changed)
    page_hash: str = ""
    page_not_found: bool = False
    config: object = None                              # NewSession.config (toolbar mode, run-on-save, …)

    def of(self, kind: str) -> list:
        return [getattr(e, kind) for e in self.elements if e.WhichOneof("type") == kind]

    @property
    def charts(self) -> int:
        return len(chart_protos(self.elements))      # the in-place chart element or st.plotly_chart

    @property
    def exceptions(self) -> list[str]:
        return [f"{e.type}: {e.message}" for e in self.of("exception")]

    @property
    def errors(self) -> list[str]:
        return [a.body for a in self.of("alert") if a.format == Alert.ERROR]

    @property
    def warnings(self) -> list[str]:
        return [a.body for a in self.of("alert") if a.format == Alert.WARNING]

    def problems(self) -> list[str]:
        """What a user must never see: a failed run, an exception box, an error box."""
        out = []
        if self.status != FINISHED_OK:
            out.append(f"script finished with status {self.status}")
        out += [f"exception {x}" for x in self.exceptions]
        out += [f"error box {x[:200]}" for x in self.errors]
        return out

    def slider(self, label: str):
        return next((s for s in self.of("slider") if s.label.startswith(label)), None)


def slider_value(s, held: tuple | None = None) -> tuple:
    """The value a browser shows for a Slider proto (st.slider or st.select_slider): the one the app
    sets (`set_value`), else the one the browser already holds for that widget, else the default."""
    if s.set_value:
        return tuple(s.raw_value) if s.options and s.raw_value else tuple(s.value)
    if held is not None:
        return held
    return tuple(s.options[int(i)] for i in s.default) if s.options else tuple(s.default)


class Client:
    """One browser-like session over the websocket.  `async with Client(url) as c: run = await c.rerun()`.

    Keeps what a browser keeps between runs: the widget states it has set, the page it is on and the
    query string the app last wrote (sent back with every rerun, as the frontend does), and cookies:
    behind deploy/'s haproxy, the websocket upgrade's SERVERID cookie (sent back on a reconnect, so the
    session sticks to its replica) and `replica`, the X-Roofline-Replica header naming the replica
    haproxy chose.
    """

    def __init__(self, base_url: str, timeout_s: float = RUN_TIMEOUT_S, cookies: dict[str, str] | None = None):
        self.ws_url = base_url.replace("http://", "ws://", 1) + "/_stcore/stream"
        self.timeout_s = timeout_s
        self.cookies: dict[str, str] = dict(cookies or {})
        self.replica: str | None = None
        self.ws = None
        self.widgets: dict[str, WidgetState] = {}
        self.held: dict[str, tuple] = {}          # slider id → the value the browser shows
        self.page_hash = ""
        self.query_string = ""
        self.pages: list[Page] = []
        self.last: Run | None = None
        self.on_element = None                    # called with each Element proto as it arrives (bench_burst.py)

    async def connect(self) -> None:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else None
        self.ws = await websockets.connect(self.ws_url, subprotocols=["streamlit"], max_size=None,
                                           open_timeout=self.timeout_s, additional_headers=headers)
        got = self.ws.response.headers
        self.replica = got.get("X-Roofline-Replica")
        for c in got.get_all("Set-Cookie"):
            name, _, rest = c.partition("=")
            self.cookies[name.strip()] = rest.split(";")[0].strip()

    async def reconnect(self) -> None:
        """A new websocket (a new server session), as a browser opens one after losing the old.

        The widget states are dropped, so the next run rebuilds the view from the query string alone
        (stricter than the frontend, which also resends its widget states): what any replica restores."""
        with contextlib.suppress(Exception):
            await self.ws.close()
        self.widgets.clear()
        self.held.clear()
        await self.connect()

    def view(self) -> dict[str, tuple]:
        """label → the value each slider of the last run shows (as a browser would)."""
        if self.last is None:
            return {}
        return {s.label: self.held.get(s.id, slider_value(s)) for s in self.last.of("slider")}

    @property
    def closed(self) -> bool:
        """The websocket is gone (the server closed it or died), as the frontend would have noticed."""
        return self.ws is None or self.ws.state is State.CLOSED

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close()

    async def rerun(self, page: Page | str | None = None, query_string: str | None = None) -> Run:
        """Ask for a run (of `page`, a Page or a url path, else the current one); wait for it to finish."""
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query_string if query_string is None else query_string
        if isinstance(page, Page):
            cs.page_script_hash = page.script_hash
        elif isinstance(page, str):
            cs.page_name = page
        else:
            cs.page_script_hash = self.page_hash
        cs.widget_states.widgets.extend(self.widgets.values())
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        run = await asyncio.wait_for(self._receive(t0), self.timeout_s)
        self.last = run
        for sl in run.of("slider"):
            self.held[sl.id] = slider_value(sl, self.held.get(sl.id))
            # A value the app sets replaces the one the browser held, in what it sends back too (as the
            # frontend's widget manager does).  Without this, a session that reopened `/` (whose run seeds
            # the dials) kept sending its old slider values while showing the set ones.
            if sl.set_value and sl.id in self.widgets and sl.options:
                w = WidgetState(id=sl.id)
                w.string_array_value.data.extend(self.held[sl.id])
                self.widgets[sl.id] = w
        return run

    async def _receive(self, t0: float) -> Run:
        run = Run(seconds=math.nan)
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(await self.ws.recv())
            kind = fm.WhichOneof("type")
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                run.elements.append(fm.delta.new_element)
                if self.on_element is not None:
                    self.on_element(fm.delta.new_element)
            elif kind == "new_session":
                run.page_hash = fm.new_session.page_script_hash
                run.config = fm.new_session.config
            elif kind == "navigation":
                self.pages = [Page(p.url_pathname, p.page_script_hash, p.page_name)
                              for p in fm.navigation.app_pages]
                run.page_hash = fm.navigation.page_script_hash or run.page_hash
            elif kind == "page_info_changed":
                run.query_string = fm.page_info_changed.query_string
                self.query_string = run.query_string
            elif kind == "page_not_found":
                run.page_not_found = True
            elif kind == "script_finished":
                if fm.script_finished == FINISHED_EARLY:   # the app called st.rerun(): wait for the next run
                    run.elements.clear()
                    continue
                run.status = fm.script_finished
                run.seconds = time.perf_counter() - t0
                if run.page_hash:
                    self.page_hash = run.page_hash
                return run

    async def move(self, label: str, step: int | None = None) -> Run:
        """Move the select_slider whose label starts with `label` one option right (or `step`), then rerun.

        Bounces at the ends.  Raises LookupError when the current page has no such slider.
        """
        s = self.last.slider(label) if self.last else None
        if s is None:
            raise LookupError(f"no slider {label!r} on this page")
        options = list(s.options)
        shown = self.held.get(s.id, slider_value(s))       # where the browser shows the thumb
        i = options.index(shown[0]) if shown and shown[0] in options else int(s.default[0]) if s.default else 0
        step = step if step is not None else 1
        j = i + step
        if not 0 <= j < len(options):
            j = i - step
        j = max(0, min(len(options) - 1, j))
        w = WidgetState(id=s.id)
        w.string_array_value.data.append(options[j])
        self.widgets[s.id] = w
        self.held[s.id] = (options[j],)
        return await self.rerun()


# ---------------------------------------------------------------- load

LOST = (OSError, websockets.exceptions.WebSocketException)   # a websocket that broke or could not open
RECONNECT_TRIES = 8
RECONNECT_BACKOFF_S = 0.1        # doubled per failed try, at most 2 s (the frontend backs off likewise)


@dataclass
class SessionLog:
    """One session's story, for the replica modes: where haproxy put it and what happened to it."""

    replica: str | None = None      # the replica its first websocket reached (X-Roofline-Replica)
    now: str | None = None          # the replica it is on at the end
    interactions: int = 0           # completed runs
    errors: int = 0                 # failed interactions (see Stats.errors)
    interrupted: int = 0            # interactions in flight when its replica died
    reconnects: int = 0             # new websockets after losing one
    restored: int = 0               # …whose first run showed the view from before the loss


@dataclass
class Stats:
    name: str
    slider_s: list[float] = field(default_factory=list)
    page_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    by_page: dict[str, list[float]] = field(default_factory=dict)     # page → slider-move seconds
    sessions: int = 0
    rss: dict[str, float] = field(default_factory=dict)
    logs: list[SessionLog] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)              # interactions lost with a replica

    @property
    def interactions(self) -> int:
        return len(self.slider_s) + len(self.page_s)


async def session(url: str, pages: list[str], expect_charts: dict[str, int], deadline: float, think_s: float,
                  rng: random.Random, stats: Stats, recover: bool = False) -> None:
    """One user: open a page, move sliders MOVES_PER_PAGE times, next page … until `deadline`.

    With `recover` (behind haproxy), a lost websocket is what a browser does about it: open a new one
    (through the balancer, still sending the old SERVERID cookie), ask for a run of the same page with
    the URL's query string, and the view must be the one from before — checked, not assumed.  An
    interaction in flight when the connection broke is counted as interrupted; a loss noticed while
    the session was idle (as the frontend notices it) is repaired before the next interaction.
    """
    log = SessionLog()
    stats.logs.append(log)
    c = Client(url)
    good: tuple[dict, str, str] | None = None    # (view, query string, page) after the last completed run

    def fail(msg: str) -> None:
        stats.errors.append(f"{stats.name}{f' [{c.replica}]' if c.replica else ''} {msg}")
        log.errors += 1

    def check(run: Run, page: str) -> None:
        nonlocal good
        problems = run.problems()
        if expect_charts.get(page, 0) > 0 and run.charts == 0:
            problems.append("no chart drawn")
        for p in problems:
            fail(f"/{page}: {p}")
        log.interactions += 1
        good = (c.view(), c.query_string, page)

    async def restore(page: str) -> Run:
        lost_on = c.replica
        # What the browser shows at the loss: its sliders (an in-flight move included) and its address
        # bar (which the interrupted run may already have rewritten).
        shown, address = c.view(), c.query_string
        for attempt in range(RECONNECT_TRIES):
            await asyncio.sleep(min(RECONNECT_BACKOFF_S * 2 ** attempt, 2.0))
            try:
                await c.reconnect()
                run = await c.rerun() if good else await c.rerun(page)
                break
            except LOST as e:
                fail(f"/{page}: reconnect {attempt + 1} after losing {lost_on} failed ({type(e).__name__}: {e})")
        else:
            raise ConnectionError(f"gave up reconnecting after {RECONNECT_TRIES} tries")
        log.reconnects += 1
        log.now = c.replica
        if not good:
            check(run, page)
            return run
        # The view to expect: the last completed run's (c.page_hash is still its page) — unless the
        # interrupted run had already written its URL, which then holds that interaction's state.
        view, query, last_page = good
        if address != query and page == last_page:    # a move whose URL arrived: the moved view
            view, query = shown, address
        elif address != query:                        # a page opened half-way: the sidebar must survive
            view = {k: v for k, v in view.items() if k in c.view()}
            query = c.query_string
        got = {k: v for k, v in c.view().items() if k in view}
        if (got, c.query_string) == (view, query):
            log.restored += 1
        else:
            diff = {k: (view.get(k), v) for k, v in got.items() if view.get(k) != v}
            fail(f"/{last_page}: view not restored on {c.replica} after losing {lost_on}: "
                 f"query {query!r} → {c.query_string!r}, sliders {diff}")
        check(run, last_page)
        if page != last_page:                         # the loss came while opening `page`: open it again
            run = await c.rerun(page)
            check(run, page)
        return run

    async def interact(page: str, ask) -> tuple[Run, bool]:
        """(run, True) for a completed interaction; (restored run, False) when the websocket broke."""
        if recover and c.closed:                  # lost while idle: the frontend reconnects by itself
            return await restore(page), False
        try:
            run = await ask()
        except LOST as e:
            if not recover:
                raise
            log.interrupted += 1
            stats.interrupted.append(f"{stats.name} [{c.replica}] /{page}: {type(e).__name__}: {e}")
            return await restore(page), False
        check(run, page)
        return run, True

    order = pages[:]
    rng.shuffle(order)
    try:
        async with c:
            log.replica = log.now = c.replica
            while time.monotonic() < deadline:
                for page in order:
                    if time.monotonic() >= deadline:
                        return
                    run, done = await interact(page, lambda page=page: c.rerun(page))
                    if done:
                        stats.page_s.append(run.seconds)
                    for _ in range(MOVES_PER_PAGE):
                        await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))
                        if time.monotonic() >= deadline:
                            return
                        labels = [lb for lb in SLIDERS if run.slider(lb) is not None]
                        if not labels:
                            break
                        label, step = rng.choice(labels), rng.choice((-1, 1))
                        run, done = await interact(page, lambda label=label, step=step: c.move(label, step))
                        if done:
                            stats.slider_s.append(run.seconds)
                            stats.by_page.setdefault(page, []).append(run.seconds)
    except TimeoutError:
        fail(f"a run took longer than {RUN_TIMEOUT_S:g} s")
    except ConnectionError as e:
        fail(str(e))
    except LOST as e:
        fail(f"connection lost ({type(e).__name__}: {e})")


async def discover(url: str) -> tuple[list[str], dict[str, int]]:
    """Visit every page once (the warm-up): url paths, and how many charts each draws."""
    async with Client(url) as c:
        run = await c.rerun("")
        charts = {"": run.charts}
        paths = [p.url_path for p in c.pages] or [""]
        for p in paths:
            charts[p] = (await c.rerun(p)).charts
    return paths, charts


async def wave(url: str, pages: list[str], charts: dict[str, int], n: int, seconds: float, think_s: float,
               seed: int, stats: Stats, recover: bool = False, midway=None) -> None:
    """n sessions for `seconds`; `midway`, a coroutine function, is awaited half-way through."""
    t0 = time.monotonic()
    deadline = t0 + seconds
    rng = random.Random(seed)
    tasks = []
    for _ in range(n):
        tasks.append(asyncio.create_task(session(url, pages, charts, deadline, think_s,
                                                 random.Random(rng.random()), stats, recover)))
        await asyncio.sleep(min(0.05, seconds / max(n, 1) / 10))   # staggered arrivals
    if midway is not None:
        await asyncio.sleep(max(0.0, t0 + seconds / 2 - time.monotonic()))
        await midway()
    await asyncio.gather(*tasks)
    stats.sessions += n


class RssSampler:
    """Peak RSS of a process while active (a thread sampling /proc every 0.2 s)."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid))
            self._stop.wait(0.2)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=None,
                    help="concurrent sessions per wave (default 20; 40 with --replicas)")
    ap.add_argument("--seconds", type=float, default=60.0, help="length of each wave (default 60)")
    ap.add_argument("--waves", type=int, default=None,
                    help="waves per app (default 2, ≥ 2 measures growth); with --replicas, waves per setup "
                         "(default 1; 0 with --kill-one runs the failover wave only)")
    ap.add_argument("--think", type=float, default=0.5,
                    help="mean pause between a session's interactions, s (default 0.5; ×0.5…1.5 jitter)")
    ap.add_argument("--ttl", type=float, default=2.0, help="server.disconnectedSessionTTL for every server, s")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--replicas", type=int, default=0,
                    help="N ≥ 2: the app through haproxy (deploy/serve.py) with 1 replica, then with N; "
                         "p95 compared (target: N replicas at most half of 1)")
    ap.add_argument("--kill-one", action="store_true",
                    help="with --replicas: one more wave through N replicas, one of them killed half-way")
    args = ap.parse_args(argv)
    if args.sessions is None:
        args.sessions = 40 if args.replicas else 20
    if args.waves is None:
        args.waves = 1 if args.replicas else 2
    for k in ("sessions", "seconds", "waves"):
        v = getattr(args, k)
        if not (0 < v or (k == "waves" and v == 0 and args.kill_one)) or v > LIMITS[k]:
            ap.error(f"--{k} must be > 0 and ≤ {LIMITS[k]:g}")
    if args.replicas and not 2 <= args.replicas <= LIMITS["replicas"]:
        ap.error(f"--replicas must be between 2 and {LIMITS['replicas']}")
    if args.kill_one and not args.replicas:
        ap.error("--kill-one needs --replicas N (N ≥ 2)")
    if args.replicas:
        return replicas_main(args)

    import plotly
    import streamlit

    print(f"# Load bench — {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"streamlit {streamlit.__version__}, plotly {plotly.__version__}")
    print(f"{args.sessions} sessions × {args.seconds:g} s per wave, {args.waves} wave(s) per app, think time "
          f"{args.think:g} s (×0.5…1.5), {MOVES_PER_PAGE} slider moves per page visit; websocket clients")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    t_start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-load-min-")))
        (tmp / "minimal_app.py").write_text(MINIMAL_APP)
        servers = {"app": stack.enter_context(streamlit_server(ROOT / "app.py", ROOT, args.ttl)),
                   "minimal app": stack.enter_context(streamlit_server(tmp / "minimal_app.py", tmp, args.ttl))}
        stats = {name: Stats(name) for name in servers}
        layout = {}
        for name, srv in servers.items():
            layout[name] = asyncio.run(discover(srv.url))
        time.sleep(args.ttl + 2.0)
        for name, srv in servers.items():
            stats[name].rss["start"] = rss_mb(srv.pid)
        pages, charts = layout["app"]
        print(f"app pages: {', '.join('/' + p for p in pages)}")
        for w in range(args.waves):
            for name, srv in servers.items():
                st_ = stats[name]
                pages, charts = layout[name]
                with RssSampler(srv.pid) as sampler:
                    asyncio.run(wave(srv.url, pages, charts, args.sessions, args.seconds, args.think,
                                     args.seed * 1000 + w, st_))
                st_.rss[f"peak {w + 1}"] = sampler.peak
                time.sleep(args.ttl + 3.0)          # closed sessions dropped after the TTL
                st_.rss[f"after {w + 1}"] = rss_mb(srv.pid)
                print(f"  wave {w + 1} {name:<12} {len(st_.slider_s):>6} slider moves so far, "
                      f"{len(st_.errors)} errors, RSS {st_.rss[f'after {w + 1}']:.0f} MB after")
    took = time.perf_counter() - t_start
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}  (run took {took:.0f} s)\n")

    app, mini = stats["app"], stats["minimal app"]
    p95_min = pct(mini.slider_s, 95) * 1e3
    rows = []
    for s in (app, mini):
        first, last = s.rss.get("after 1", math.nan), s.rss.get(f"after {args.waves}", math.nan)
        # Sessions that ran (and closed) between the first wave's reading and the last one's.
        growth = (last - first) / (args.sessions * (args.waves - 1)) if args.waves > 1 else math.nan
        peak = max(v for k, v in s.rss.items() if k.startswith("peak"))
        rows.append((s, pct(s.slider_s, 50) * 1e3, pct(s.slider_s, 95) * 1e3, pct(s.page_s, 50) * 1e3,
                     pct(s.page_s, 95) * 1e3, peak, growth))

    print("rerun sent → script_finished received (ms); RSS of the server process (MB)")
    for s, p50, p95, pg50, pg95, _, growth in rows:
        print(f"  {s.name:<12} {s.sessions} sessions, {s.interactions} interactions "
              f"({s.interactions / (args.seconds * args.waves):.1f}/s): slider p50 {p50:6.1f} p95 {p95:6.1f}; "
              f"page open p50 {pg50:6.1f} p95 {pg95:6.1f}; errors {len(s.errors)}; RSS "
              + ", ".join(f"{k} {v:.0f}" for k, v in s.rss.items())
              + (f"; growth {growth:+.2f} MB/session" if math.isfinite(growth) else ""))
        for e in s.errors[:10]:
            print(f"      {e}")
        if len(s.errors) > 10:
            print(f"      … and {len(s.errors) - 10} more")

    print("\napp slider moves by page (ms): " + "; ".join(
        f"/{p} p50 {pct(v, 50) * 1e3:.0f} p95 {pct(v, 95) * 1e3:.0f} (n={len(v)})"
        for p, v in sorted(app.by_page.items(), key=lambda kv: -pct(kv[1], 50))))

    _, a50, a95, _, _, _, a_growth = rows[0]
    ratio = a95 / p95_min if p95_min > 0 else math.nan
    print("\ntargets:")
    print(f"  {verdict(not app.errors and not mini.errors)}  errors: app {len(app.errors)}, "
          f"minimal app {len(mini.errors)} (target 0)")
    print(f"  {verdict(ratio <= TARGETS['p95_ratio'])}  app slider p95 {a95:.0f} ms ≤ {TARGETS['p95_ratio']:g} × "
          f"minimal app p95 ({p95_min:.0f} ms): ratio {ratio:.2f}")
    if math.isfinite(a_growth):
        print(f"  {verdict(a_growth <= TARGETS['growth_mb_per_session'])}  app RSS growth between waves "
              f"{a_growth:+.2f} MB per session ≤ {TARGETS['growth_mb_per_session']:g}")
    else:
        print("  ----  memory growth needs --waves ≥ 2")

    print("\n| server | sessions × s × waves | interactions | slider p50 (ms) | slider p95 (ms) | "
          "page open p95 (ms) | errors | RSS start → peak → after last wave (MB) | growth/session (MB) |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|")
    for s, p50, p95, _, pg95, peak, growth in rows:
        print(f"| {s.name} | {args.sessions} × {args.seconds:g} × {args.waves} | {s.interactions} | {p50:.0f} | "
              f"{p95:.0f} | {'—' if math.isnan(pg95) or s is mini else f'{pg95:.0f}'} | {len(s.errors)} | "
              f"{s.rss['start']:.0f} → {peak:.0f} → {s.rss[f'after {args.waves}']:.0f} | "
              f"{'—' if math.isnan(growth) else f'{growth:+.2f}'} |")
    print(f"\n{os.cpu_count()} CPUs shared by the servers and the load generator; "
          f"p95 ratio app/minimal {ratio:.2f} (target ≤ {TARGETS['p95_ratio']:g}).")
    return 0


# ---------------------------------------------------------------- replicas behind haproxy

def replicas_main(args) -> int:
    """--replicas N [--kill-one]: 1 replica vs N behind haproxy, then (optionally) N with one killed."""
    from deploy.serve import balancer, haproxy_path, replicas

    if haproxy_path() is None:
        print("bench_load.py: haproxy not found; install Debian's package: apt-get install haproxy", file=sys.stderr)
        return 2
    import plotly
    import streamlit

    n = args.replicas
    print(f"# Load bench, replicas — {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"streamlit {streamlit.__version__}, plotly {plotly.__version__}")
    print(f"app.py through haproxy (deploy/serve.py): 1 replica, then {n}; {args.sessions} sessions × "
          f"{args.seconds:g} s per wave, {args.waves} wave(s) per setup"
          + (f", then a wave through {n} replicas with one killed half-way" if args.kill_one else "")
          + f"; think time {args.think:g} s (×0.5…1.5), {MOVES_PER_PAGE} slider moves per page visit")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    t_start = time.perf_counter()
    ttl = ("--server.disconnectedSessionTTL", f"{args.ttl:g}")
    with replicas(n, ROOT / "app.py", ROOT, extra_args=ttl) as reps, balancer(reps[:1]) as one, \
            balancer(reps) as many:
        for r in reps:                                   # warm every replica: each page once
            pages, charts = asyncio.run(discover(r.url))
        print(f"app pages: {', '.join('/' + p for p in pages)}")
        setups = {"1 replica": one, f"{n} replicas": many}
        stats = {name: Stats(name) for name in setups}
        for w in range(args.waves):
            for name, lb in setups.items():
                asyncio.run(wave(lb.url, pages, charts, args.sessions, args.seconds, args.think,
                                 args.seed * 1000 + w, stats[name]))
                time.sleep(args.ttl + 1.0)
                print(f"  wave {w + 1} {name:<11} {len(stats[name].slider_s):>6} slider moves so far, "
                      f"{len(stats[name].errors)} errors")
        failover = None
        if args.kill_one:
            failover = Stats(f"{n} replicas, one killed")
            victim = reps[-1]
            ev: dict = {"bound": many.detection_bound_s(), "settings": many.check_settings()}

            async def kill() -> None:
                ev["t"] = time.monotonic() - t_wave
                ev["stot_kill"] = int(many.servers()[victim.name]["stot"])
                t = time.monotonic()
                await asyncio.to_thread(victim.kill)
                row = await asyncio.to_thread(many.wait_status, victim.name, "DOWN", 30.0)
                ev["detect_s"] = time.monotonic() - t
                ev["row"] = row

            t_wave = time.monotonic()
            asyncio.run(wave(many.url, pages, charts, args.sessions, args.seconds, args.think,
                             args.seed * 1000 + 99, failover, recover=True, midway=kill))
            ev["end"] = many.servers()
            ev["backend"] = next((r for r in many.stats() if r.get("pxname") == "replicas"
                                  and r.get("svname") == "BACKEND"), {})
            print(f"  failover wave: {len(failover.slider_s)} slider moves, {len(failover.errors)} errors, "
                  f"{len(failover.interrupted)} interrupted")
    took = time.perf_counter() - t_start
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}  (run took {took:.0f} s)\n")
    report_replicas(args, stats, failover, ev if failover else None, victim.name if failover else None,
                    reps[0].name)
    return 0


def report_replicas(args, stats: dict[str, Stats], failover: Stats | None, ev: dict | None,
                    victim: str | None, survivor: str) -> None:
    def split(s: Stats) -> str:
        counts: dict[str, int] = {}
        for log in s.logs:
            counts[str(log.replica)] = counts.get(str(log.replica), 0) + 1
        return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))

    rows = []
    print("rerun sent → script_finished received, through haproxy (ms)")
    for s in [*(s for s in stats.values() if s.sessions), *([failover] if failover else [])]:
        p50, p95 = pct(s.slider_s, 50) * 1e3, pct(s.slider_s, 95) * 1e3
        rows.append((s, p50, p95, pct(s.page_s, 95) * 1e3))
        print(f"  {s.name:<24} {s.sessions} sessions ({split(s)}), {s.interactions} interactions: slider p50 "
              f"{p50:6.1f} p95 {p95:6.1f}; page open p95 {pct(s.page_s, 95) * 1e3:6.1f}; errors {len(s.errors)}"
              + (f", interrupted {len(s.interrupted)}" if s.interrupted else ""))
    print("\ntargets:")
    names = list(stats)
    if args.waves:
        one, many = stats[names[0]], stats[names[1]]
        p1, pn = pct(one.slider_s, 95), pct(many.slider_s, 95)
        ratio = pn / p1 if p1 > 0 else math.nan
        print(f"  {verdict(not one.errors and not many.errors)}  errors: {names[0]} {len(one.errors)}, "
              f"{names[1]} {len(many.errors)} (target 0)")
        print(f"  {verdict(ratio <= TARGETS['replica_p95_ratio'])}  {names[1]} slider p95 {pn * 1e3:.0f} ms ≤ "
              f"{TARGETS['replica_p95_ratio']:g} × {names[0]}'s ({p1 * 1e3:.0f} ms): ratio {ratio:.2f}")
    if failover is not None:
        row, end = ev["row"], ev["end"]
        c = ev["settings"]
        on_victim = [lg for lg in failover.logs if lg.replica == victim]
        others = [lg for lg in failover.logs if lg.replica != victim]
        after_down = int(end[victim]["stot"]) - int(row["stot"])
        print(f"  kill: {victim} (SIGKILL of its process group) at {ev['t']:.1f} s of {args.seconds:g} s, "
              f"with {len(on_victim)} of {len(failover.logs)} sessions on it")
        print(f"  {verdict(ev['detect_s'] <= ev['bound'] + 0.25)}  haproxy marked {victim} DOWN "
              f"{ev['detect_s']:.2f} s after the kill, after {row['chkfail']} failed checks (bound: inter "
              f"{c['inter']:g} s + (fall {c['fall']:g} − 1) × fastinter {c['fastinter']:g} s = {ev['bound']:.2f} s, "
              f"+0.25 s for the polling of the stats page)")
        print(f"  {verdict(after_down == 0)}  connections haproxy sent to {victim} after marking it DOWN: "
              f"{after_down} (before: {int(row['stot']) - ev['stot_kill']} between the kill and DOWN, each "
              f"retried and redispatched: backend retries {ev['backend'].get('wretr', '?')}, "
              f"redispatches {ev['backend'].get('wredis', '?')})")
        err_o = sum(lg.errors for lg in others)
        print(f"  {verdict(err_o == 0)}  sessions on the survivor ({len(others)}): "
              f"{sum(lg.interactions for lg in others)} interactions, {err_o} errors, "
              f"{sum(lg.interrupted + lg.reconnects for lg in others)} interrupted or reconnected (target 0)")
        moved = sum(lg.now != victim and lg.reconnects > 0 for lg in on_victim)
        restored = sum(lg.restored > 0 and lg.restored == lg.reconnects for lg in on_victim)
        err_v = sum(lg.errors for lg in on_victim)
        print(f"  {verdict(moved == restored == len(on_victim) and err_v == 0)}  sessions on {victim} "
              f"({len(on_victim)}): {moved} reconnected through haproxy onto the survivor, {restored} with their "
              f"view intact (same page, same query string, same slider values from the URL alone), "
              f"{sum(lg.interrupted for lg in on_victim)} interactions in flight at the kill (interrupted), "
              f"{err_v} errors")
        failed = failover.interrupted + failover.errors
        print(f"  every failed interaction ({len(failed)}: {len(failover.interrupted)} interrupted by the kill, "
              f"{len(failover.errors)} errors):")
        for e in failed[:30]:
            print(f"      {e[:300]}")
        if len(failed) > 30:
            print(f"      … and {len(failed) - 30} more")

    print("\n| setup | sessions × s | interactions | slider p50 (ms) | slider p95 (ms) | page open p95 (ms) | "
          "errors | interrupted | sessions per replica |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for s, p50, p95, pg95 in rows:
        print(f"| {s.name} | {args.sessions} × {args.seconds:g}"
              f"{'' if s is failover else f' × {args.waves}'} | {s.interactions} | {p50:.0f} | {p95:.0f} | "
              f"{pg95:.0f} | {len(s.errors)} | {len(s.interrupted)} | {split(s)} |")
    print(f"\n{os.cpu_count()} CPUs shared by the replicas, haproxy and the load generator.")


if __name__ == "__main__":
    sys.exit(main())
