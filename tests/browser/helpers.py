"""Real-browser helpers: a Streamlit server subprocess, Debian's Chromium via Playwright, waits.

Used by the browser tests (the pytest fixtures at the bottom, made theirs by tests/browser/conftest.py) and by
bench/bench_ui.py, bench/bench_load.py and bench/profile_move.py (plain context managers, no pytest needed).

Facts this relies on (docs/design.md "Streamlit facts the app relies on"):
  * `GET /_stcore/health` answers `ok` once the server is up;
  * `[data-testid='stApp']` carries `data-test-connection-state` and `data-test-script-state`
    (`initial|running|notRunning`) in a normal server run — streamlit's own `wait_for_app_run`;
  * the script-state flip can be missed on fast reruns, so "did the chart change" is measured with
    a MutationObserver on `stMain` that records mutations inside `.js-plotly-plot`;
  * both chart elements put their graph div (`.js-plotly-plot`) in the page's own DOM: the app's
    in-place element (ui/elements/live_chart.py, a v2 component mounted without a shadow root, inside
    `[data-testid='stBidiComponentRegular']`) and st.plotly_chart (`stPlotlyChart`, the fallback and
    the baseline app's), so the same waits and observer serve both.

Never downloads a browser: Playwright is pointed at /usr/bin/chromium with `executable_path`.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from tests import ROOT

CHROMIUM = os.environ.get("ROOFLINE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking"]
VIEWPORT = {"width": 1400, "height": 1000}
HEALTH_TIMEOUT_S = 60.0
RUN_TIMEOUT_MS = 30_000

MISSING_CHROMIUM = (f"Chromium not found at {CHROMIUM}. The browser tests drive Debian's Chromium "
                    "(never a downloaded one): `apt-get install chromium` (CI's .ci/run does this), "
                    "or set ROOFLINE_CHROMIUM to another Chromium binary.")

# Records performance.now() of every DOM mutation inside a Plotly chart (notes §2b: 0 misses in 20,
# where the script-state attribute missed 2), and the timestamp of every keydown (capture phase).
# Re-arming resets both lists.
PLOT_OBSERVER_JS = """() => {
  if (window.__plotObs) { window.__plotObs.disconnect(); }
  window.__plots = [];
  const root = document.querySelector("[data-testid='stMain']") || document.body;
  window.__plotObs = new MutationObserver(ms => {
    if (ms.some(m => m.target.closest && m.target.closest('.js-plotly-plot'))) {
      window.__plots.push(performance.now());
    }
  });
  window.__plotObs.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
  if (!window.__keyHook) {
    window.__keyHook = true;
    window.addEventListener('keydown', e => window.__keys.push(e.timeStamp), true);
  }
  window.__keys = [];
}"""


# ---------------------------------------------------------------- server

def free_port() -> int:
    """A port nothing listens on right now (the OS picks it; safe across xdist workers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(base_url: str) -> str | None:
    """What /_stcore/health answers ("ok" once the server is up), or None."""
    try:
        with urllib.request.urlopen(base_url + "/_stcore/health", timeout=2) as r:
            return r.read().decode("utf-8", "replace").strip()
    except (urllib.error.URLError, OSError, ValueError):
        return None


def stop_process_group(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """Kill a server's whole process group: SIGTERM, then SIGKILL after `grace_s`."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)


@contextlib.contextmanager
def streamlit_process(app: str | Path = "app.py", cwd: str | Path = ROOT, port: int | None = None,
                      timeout_s: float = HEALTH_TIMEOUT_S, extra_args: tuple[str, ...] = (),
                      env: dict[str, str] | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run `python -m streamlit run <app>` from `cwd`; yield (base URL, process) once /_stcore/health
    says ok.  The server runs in its own session (process group), which is killed on exit.  Its
    output goes to a temp log whose tail is quoted if the server dies or never becomes healthy.
    `env` adds to (or, with a None value, removes from) the server's environment."""
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *extra_args]
    log = tempfile.NamedTemporaryFile(prefix=f"streamlit-{port}-", suffix=".log", delete=False)
    server_env = dict(os.environ, PYTHONUNBUFFERED="1")
    for k, v in (env or {}).items():
        if v is None:
            server_env.pop(k, None)
        else:
            server_env[k] = v
    proc = subprocess.Popen(cmd, cwd=str(cwd), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=server_env, start_new_session=True)

    def tail() -> str:
        log.flush()
        try:
            return Path(log.name).read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"

    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {proc.returncode} before it was healthy:\n"
                                   f"{' '.join(cmd)}\n{tail()}")
            if health(base_url) == "ok":
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit not healthy at {base_url} after {timeout_s:.0f} s:\n{tail()}")
            time.sleep(0.1)
        yield base_url, proc
    finally:
        stop_process_group(proc)
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)


@contextlib.contextmanager
def streamlit_server(app: str | Path = "app.py", cwd: str | Path = ROOT, port: int | None = None,
                     timeout_s: float = HEALTH_TIMEOUT_S, env: dict[str, str] | None = None) -> Iterator[str]:
    """`streamlit_process`, yielding only the base URL."""
    with streamlit_process(app, cwd, port, timeout_s, env=env) as (base_url, _proc):
        yield base_url


# ---------------------------------------------------------------- browser

def require_chromium() -> str:
    """The Chromium path, or a RuntimeError saying how to get it (the tests must fail, not skip)."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        raise RuntimeError(MISSING_CHROMIUM)
    return CHROMIUM


def launch_chromium(playwright):
    """Launch /usr/bin/chromium headless through Playwright (no downloaded browser)."""
    return playwright.chromium.launch(executable_path=require_chromium(), headless=True, args=CHROMIUM_ARGS)


@contextlib.contextmanager
def chromium() -> Iterator:
    """`with chromium() as browser:` — Playwright started and stopped around one browser."""
    from playwright.sync_api import sync_playwright

    path = require_chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def wait_for_app_run(page, timeout: int = RUN_TIMEOUT_MS) -> None:
    """Wait until the app is connected, its script has finished and no skeletons remain.

    streamlit's e2e `wait_for_app_run` (notes §2b): a ~200 ms pause for debounced widgets first.
    """
    from playwright.sync_api import expect

    page.wait_for_timeout(210)
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=timeout)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=timeout)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)


def open_app(page, url: str, timeout: int = RUN_TIMEOUT_MS, charts: bool = True) -> None:
    """Go to `url`, wait for the run to end and (by default) for a Plotly chart to be drawn."""
    page.goto(url, wait_until="domcontentloaded", timeout=timeout)
    wait_for_app_run(page, timeout)
    if charts:
        page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=timeout)


def slider_thumb(page, label: str):
    """The keyboard-focusable thumb of the sidebar slider whose label contains `label`."""
    box = page.get_by_test_id("stSidebar").get_by_test_id("stSlider").filter(has_text=label)
    return box.get_by_role("slider")


def arm_plot_observer(page) -> None:
    page.evaluate(PLOT_OBSERVER_JS)


def plot_mutations(page) -> int:
    return page.evaluate("() => (window.__plots || []).length")


def press_and_time(page, locator, key: str, timeout: int = 5_000) -> float:
    """Press `key` on `locator`; return ms from the keydown to the first chart mutation.

    Call `arm_plot_observer(page)` once beforehand.  Raises a Playwright TimeoutError if no chart
    changed within `timeout` ms.
    """
    n0, k0, t0 = page.evaluate("() => [(window.__plots || []).length, (window.__keys || []).length, "
                               "performance.now()]")
    locator.press(key)
    page.wait_for_function(f"() => (window.__plots || []).length > {n0}", timeout=timeout)
    # From the keydown event in the page (capture phase) when it was seen, else from just before the press.
    t_plot, t_key = page.evaluate(f"() => [window.__plots[{n0}], (window.__keys || [])[{k0}]]")
    return t_plot - (t_key if t_key is not None else t0)


def press_and_time_all(page, locator, key: str, timeout: int = 5_000, quiet_ms: int = 300) -> tuple[float, float]:
    """Press `key` on `locator`; return (ms to the first chart mutation, ms to the last one).

    "Last" is the last mutation inside any `.js-plotly-plot` once the script run has ended and no
    chart has changed for `quiet_ms` (every chart on the page settled); it works alike for the
    in-place element and st.plotly_chart.  Call `arm_plot_observer(page)` once beforehand.  Raises a
    Playwright TimeoutError if no chart changed within `timeout` ms.
    """
    n0, k0, t0 = page.evaluate("() => [(window.__plots || []).length, (window.__keys || []).length, "
                               "performance.now()]")
    locator.press(key)
    page.wait_for_function(f"() => (window.__plots || []).length > {n0}", timeout=timeout)
    wait_for_app_run(page, timeout)
    page.evaluate("""quiet => new Promise(resolve => {
        let n = window.__plots.length;
        const tick = () => {
            const m = window.__plots.length;
            if (m === n) { resolve(); } else { n = m; setTimeout(tick, quiet); }
        };
        setTimeout(tick, quiet);
    })""", quiet_ms)
    t_first, t_last, t_key = page.evaluate(
        f"() => [window.__plots[{n0}], window.__plots[window.__plots.length - 1], (window.__keys || [])[{k0}]]")
    start = t_key if t_key is not None else t0
    return t_first - start, t_last - start


def page_problems(page) -> list[str]:
    """What must never be on screen: Streamlit exception boxes and Python tracebacks."""
    out = []
    n_exc = page.locator("[data-testid='stException']").count()
    if n_exc:
        out.append(f"{n_exc} stException element(s): "
                   + page.locator("[data-testid='stException']").first.inner_text()[:500])
    body = page.locator("body").inner_text()
    if "Traceback" in body:
        i = body.index("Traceback")
        out.append("'Traceback' on the page: " + body[i:i + 500])
    return out


def assert_page_clean(page, what: str) -> None:
    """No exception box and no traceback on screen (`what` names the step in the failure)."""
    problems = page_problems(page)
    assert not problems, f"{what}: " + "; ".join(problems)


LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Opening a deep link (/kv-cache) Streamlit's frontend first probes the path as a base URL
# (/kv-cache/_stcore/health and /host-config → 404, logged as console errors), then uses "/": its own
# behaviour, not an error of the app.
BASE_PROBE = re.compile(r"^https?://[^/]+/[^_][^/]*/_stcore/(health|host-config)$")


class Watch:
    """Console errors, uncaught page errors and every requested URL of one page."""

    def __init__(self, page):
        self.errors: list[str] = []
        self.urls: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.on("request", lambda r: self.urls.append(r.url))

    def _console(self, m) -> None:
        where = (m.location or {}).get("url", "")
        if m.type == "error" and not BASE_PROBE.match(where):
            self.errors.append(f"console.{m.type}: {m.text} ({where})")

    def foreign(self) -> list[str]:
        return [u for u in self.urls if urlsplit(u).scheme in ("http", "https", "ws", "wss")
                and urlsplit(u).hostname not in LOCAL_HOSTS]

    def assert_clean(self, page, what: str) -> None:
        assert not self.errors, f"{what}: " + "; ".join(self.errors[:5])
        assert not self.foreign(), f"{what}: requests off this machine: {self.foreign()[:5]}"
        assert_page_clean(page, what)


def page_headings() -> dict[str, str]:
    """Each page's path and the start of its heading, from the one list of pages (views/__init__.py): the
    navigation is a top bar of section menus, so the page shown is checked by its heading.  The default page
    opens at `/`; the walkthrough's heading is its first step's title.  (Imported here, not at the top: the
    benchmarks import this module without needing the pages.)"""
    import views
    from ui.present.walkthrough import STEPS

    out = {("/" if p.name == views.DEFAULT else "/" + p.name): p.heading for p in views.PAGES}
    out["/walkthrough"] = f"1. {STEPS[0].title}"
    return out


def chartless_paths() -> set[str]:
    """The paths of the pages that draw no chart (an editor: inputs, downloads)."""
    import views

    return {"/" + p.name for p in views.PAGES if not p.charts}


# ---------------------------------------------------------------- pytest fixtures
# Imported by tests/browser/conftest.py.  Session-scoped, so each xdist worker starts one
# server (on its own free port) and one browser.

try:
    import pytest
except ImportError:  # the bench imports this module without pytest
    pytest = None

if pytest is not None:

    @pytest.fixture(scope="session")
    def chromium_path() -> str:
        try:
            return require_chromium()
        except RuntimeError as exc:
            message = str(exc)
        pytest.fail(message, pytrace=False)

    @pytest.fixture(scope="session")
    def app_url() -> Iterator[str]:
        with streamlit_server() as url:
            yield url

    @pytest.fixture(scope="session")
    def chromium_browser(chromium_path: str) -> Iterator:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
            yield browser
            browser.close()

    @pytest.fixture
    def app_page(chromium_browser) -> Iterator:
        """A fresh browser context and page (no cookies or storage shared between tests)."""
        context = chromium_browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.set_default_timeout(RUN_TIMEOUT_MS)
        try:
            yield page
        finally:
            context.close()
