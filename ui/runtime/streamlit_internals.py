"""Every use of Streamlit's private internals, in one place, each with the reason it is needed.

The app relies on a few things Streamlit does not promise to keep.  They are checked on the Streamlit
minor version that requirements.txt pins, and the tests named beside each use fail if a later version
moves them (tests/ui/runtime/test_streamlit_internals.py checks that every name reached here exists,
and that no other module of the app touches a private Streamlit name).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

Callback = Callable[[], None]


def rearm_page(page: Any) -> None:
    """Let `page.run()` be called again in this run.

    Why: `StreamlitPage.run()` allows one call per run of app.py, and a fragment rerun runs the page
    once more without app.py.  Streamlit 1.67 keeps that flag in `_can_be_called`
    (tests/browser/test_fragment.py fails if a later version changes this)."""
    page._can_be_called = True


# ---------------------------------------------------------------- custom components v2 (ui/elements/live_*.py)

def component_manager() -> Any:
    """The running server's custom-component manager (a local one outside a server, e.g. in AppTest).

    Why: the app is not an installed package, so Streamlit's manifest scan never declares its
    components' asset folders; `declare_assets` declares them on this manager instead.  Streamlit 1.67
    has no public accessor (tests/ui/elements/test_live_chart.py::test_every_chart_of_every_page_sends_plotlys_json
    and tests/browser/test_chart.py fail, the charts falling back to st.plotly_chart, if it moves)."""
    from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager

    return get_bidi_component_manager()


def declare_assets(manager: Any, project: str, component: str, folder: Path) -> None:
    """Declare `folder` as the asset folder of component `<project>.<component>` on `manager`, as the
    manifest scan of an installed package's pyproject.toml would, unless it has one already.

    Why: the v2 component API serves files (`/_stcore/bidi-components/<name>/…`) only for components
    declared by an installed package's manifest; these are Streamlit 1.67's manifest types and the
    manager's own registration methods (the tests named in `component_manager` fail if they move)."""
    from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest

    if manager.get_component_asset_root(f"{project}.{component}") is None:
        manager.register_from_manifest(
            ComponentManifest(name=project, version="1", components=[ComponentConfig(component, folder.name)]),
            folder.parent)


# ---------------------------------------------------------------- the HTTP server (ui/runtime/assets.py)

Asgi = Callable[[dict, Any, Any], Any]            # an ASGI app: (scope, receive, send) -> awaitable
_HTTP_FIRST = "_roofline_first"                   # on the patched __call__: the handler asked first


def serve_http_first(handler: Callable[[dict, Any, Any], Any]) -> bool:
    """Offer every HTTP request to `handler(scope, receive, send)` (a coroutine function returning True
    when it answered the request) before Streamlit's gzip layer and routes; False, patching nothing,
    where this Streamlit has no such layer.  Calling it again replaces the handler.  A handler that
    raises before answering leaves the request to Streamlit.

    Why: Streamlit 1.67 has no hook for a response of its own, and its component asset route
    (`/_stcore/bidi-components/…`) reads the file and has it gzipped at level 9 on every request, with
    no validator and no lifetime.  Every HTTP request passes `SelectiveGZipMiddleware` after Streamlit's
    path-security and session middleware, and Python looks its `__call__` up on the class per request,
    so replacing it reaches the running server (tests/ui/runtime/test_assets.py and
    tests/deploy/test_assets.py fail if it moves; the assets are then served by Streamlit's route as
    before, uncached)."""
    try:
        from streamlit.web.server.starlette.starlette_gzip_middleware import SelectiveGZipMiddleware
    except ImportError:
        return False
    current = SelectiveGZipMiddleware.__dict__.get("__call__")
    if not callable(current):
        return False
    stock = getattr(current, _STOCK, current)

    async def call(self: Any, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and await call.__dict__[_HTTP_FIRST](scope, receive, send):
            return
        await stock(self, scope, receive, send)

    setattr(call, _STOCK, stock)
    setattr(call, _HTTP_FIRST, handler)
    SelectiveGZipMiddleware.__call__ = call
    return True


def cors_origin(origin: str | None) -> str | None:
    """The Access-Control-Allow-Origin Streamlit's own asset route would send for a request from
    `origin` ("*", the origin itself, or None for no header).

    Why: an asset answered by `serve_http_first` must carry the CORS header Streamlit's route gives it
    (server.enableCORS, server.corsAllowedOrigins, development mode); Streamlit 1.67 decides it in
    `streamlit.web.server.server_util`, with no public accessor (tests/ui/runtime/test_assets.py fails
    if it moves)."""
    from streamlit.web.server.server_util import allow_all_cross_origin_requests, is_allowed_origin

    if allow_all_cross_origin_requests():
        return "*"
    return origin if origin and is_allowed_origin(origin) else None


def static_bundle() -> tuple[Path, int]:
    """(Streamlit's static folder, resolved; the max-age in seconds its static route gives a hashed bundle file).

    Why: ui/runtime/bundle.py answers requests for those files with the headers Streamlit's route gives them;
    Streamlit 1.67 keeps both in `streamlit.file_util` and `…starlette.starlette_server_config`, with no public
    accessor (tests/ui/runtime/test_bundle.py and tests/deploy/test_assets.py fail if they move)."""
    from streamlit import file_util
    from streamlit.web.server.starlette.starlette_server_config import STATIC_ASSET_CACHE_MAX_AGE_SECONDS

    return Path(file_util.get_static_dir()).resolve(), int(STATIC_ASSET_CACHE_MAX_AGE_SECONDS)


# ---------------------------------------------------------------- a session's event loop (ui/runtime/coalesce.py)

# The ScriptRunner events that end a run (streamlit.runtime.scriptrunner.ScriptRunnerEvent values).
RUN_END_EVENTS = frozenset({"SCRIPT_STOPPED_WITH_SUCCESS", "SCRIPT_STOPPED_WITH_COMPILE_ERROR",
                            "SCRIPT_STOPPED_FOR_RERUN", "FRAGMENT_STOPPED_WITH_SUCCESS", "SHUTDOWN"})
# The AppSession methods the event loop calls for the browser's messages.
BROWSER_ENTRY_POINTS = ("handle_backmsg", "handle_backmsg_exception", "request_rerun")
_STOCK = "_roofline_stock"           # on a method put on AppSession here: the one it replaced


def patch_session_scheduling(call_soon: Callable[[Any, Callback], None],
                             before_browser_message: Callable[[Any], None]) -> Callable[[Any, Callback], None] | None:
    """Make every AppSession hand the callbacks it sends its event loop (one per message of a script
    run) to `call_soon(session, callback)`, and run `before_browser_message(session)` first in each of
    the session's entry points for the browser's messages (`BROWSER_ENTRY_POINTS`).  Returns
    Streamlit's own method, `stock(session, callback)`, which wakes the loop; None, patching nothing,
    where this Streamlit has no such method.  Calling it again replaces `call_soon` only.

    Why: Streamlit 1.67 wakes the event loop once per message (`AppSession._call_soon_on_event_loop`)
    and has no hook for how a session schedules them (tests/ui/runtime/test_coalesce.py fails if
    this moves; the app then runs as stock)."""
    try:
        from streamlit.runtime.app_session import AppSession
    except ImportError:
        return None
    current = getattr(AppSession, "_call_soon_on_event_loop", None)
    if not callable(current):
        return None
    stock = getattr(current, _STOCK, current)

    def scheduled(self: Any, callback: Callback) -> None:
        call_soon(self, callback)

    setattr(scheduled, _STOCK, stock)
    for name in BROWSER_ENTRY_POINTS:
        entry = getattr(AppSession, name, None)
        if callable(entry) and not hasattr(entry, _STOCK):
            setattr(AppSession, name, _first(before_browser_message, entry))
    AppSession._call_soon_on_event_loop = scheduled
    return stock


def _first(before: Callable[[Any], None], entry: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(entry)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        before(self)
        return entry(self, *args, **kwargs)

    setattr(method, _STOCK, entry)
    return method


def session_loop(session: Any) -> Any:
    """The asyncio event loop the session's messages go out on.

    Why: Streamlit 1.67 keeps it in `AppSession._event_loop`, with no accessor; a callback scheduled
    on it runs where Streamlit's own would (tests/ui/runtime/test_coalesce.py fails if it moves)."""
    return session._event_loop


def per_session(session: Any, name: str, factory: Callable[[], Any]) -> Any:
    """The caller's object `name` kept on `session` (made by `factory` on first use), so it goes when
    the session goes.

    Why: AppSession has no place for a caller's state; Streamlit 1.67's AppSession is a plain object
    with a `__dict__` (tests/ui/runtime/test_streamlit_internals.py fails if it gains `__slots__`)."""
    d, attr = session.__dict__, f"_roofline_{name}"
    obj = d.get(attr)
    if obj is None:
        obj = d.setdefault(attr, factory())
    return obj


def ends_script_run(callback: Callback) -> bool:
    """Whether `callback`, handed to the loop by a session, carries a ScriptRunner event that ends a
    run.  Anything else (or a Streamlit that schedules its events differently) is not an end.

    Why: Streamlit 1.67 sends each ScriptRunner event to the loop as a lambda
    (`AppSession._on_scriptrunner_event`) closing over `event`, and nothing else says which one it is
    (tests/ui/runtime/test_coalesce.py::test_the_end_of_a_run_is_recognised_in_streamlits_own_callback
    fails if that changes; the app then only loses the early send at a run's end)."""
    code = getattr(callback, "__code__", None)
    if code is None or "event" not in code.co_freevars or not callback.__closure__:
        return False
    try:
        event = callback.__closure__[code.co_freevars.index("event")].cell_contents
    except (ValueError, IndexError):    # an empty cell, or a closure not shaped like Streamlit's
        return False
    return getattr(event, "value", None) in RUN_END_EVENTS
