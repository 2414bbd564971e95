"""One event-loop wake-up per burst of a script run's messages, not one per element.

Streamlit 1.67 hands every element a script run writes to the server's event loop with its own
`loop.call_soon_threadsafe` (`AppSession._call_soon_on_event_loop`): one self-pipe write per
element.  Each write wakes the event-loop thread, which then takes the GIL from the script thread to
handle one message, so a run of ~60 elements (a sidebar move on the Batch page) pays ~60 thread
hand-offs in its wall time (py-spy: ≈13 ms of a Fast-mode rerun in `_write_to_self`).

`install()` replaces that method on `AppSession` with one that queues the callback and wakes the
loop only when the queue was empty; the woken loop lets the burst gather for 30 ms
(`ROOFLINE_COALESCE_MS`), then runs every queued callback, in order.  Same callbacks, same order,
same thread; at most one wake-up per 30 ms instead of one per element.  The event that ends a run
(script or fragment finished, stopped for a rerun, shut down: `END_EVENTS`) does not wait for the
gather: it wakes the loop at once and the whole burst goes out (`ROOFLINE_COALESCE_FLUSH=0` turns
that off).  So a rerun of a few tens of ms reaches the browser in one or two batches, which React
renders and the browser paints once or twice, instead of a half-updated page painted in between.
A callback that raises is reported to the loop's exception handler (as asyncio does) and the rest
still run.  A rerun's first element reaches the browser at most 30 ms later; its last, no later.

Order against the browser's requests: in stock Streamlit a run's events, scheduled as they happen,
are handled before a request from the browser that arrives later.  Here they may still be queued, so
the session's entry points for the browser's messages (`handle_backmsg`, `handle_backmsg_exception`,
`request_rerun`) first run what is queued.  Without that, a rerun request landing in the gather
after a run had finished found its runner stopped, started a new one, and the session then ignored
the finished run's queued events (its last elements and script_finished) as coming from a runner no
longer current.  (Found by reading Streamlit's code while looking into a bench_load replica run in
which one session's restored view disagreed with the bench's expectation; that run was not shown to
be this case, and it did not recur.)

Measured with bench/profile_move.py (README; this VM's speed drifts by 20-30 % between runs, so only
variants measured in one run compare): waking once per burst with a 2 ms gather against stock,
4 rounds of 16 moves: Batch (sidebar Batch) 30.9 → 25.6 ms server CPU per move and last chart
198 → 191 ms, Fast mode (sidebar Context) 49.1 → 41.1 ms and 323 → 294 ms; waking per burst
without a gather bought little (30.3 and 47.8 ms).  Then 2 / 5 / 10 ms gathers on Batch, 3 rounds:
36.3 / 33.5 / 31.0 ms and 264 / 232 / 230 ms; on Fast mode 10 ms against 2 ms: 52.7 against 53.5 ms,
last chart within noise.  Session 11, with the charts drawn once the run has ended (so nothing is gained
by sending a run's elements early), 2 rounds of 16 moves, last chart p50 against 10 ms with the flush:
the flush alone within noise (Fast mode 177 against 180 ms); 30 / 60 ms gathers with it: Fast mode
165 / 164 ms (0.92 / 0.91) and 26.9 ms server CPU against 30.3, Scale-up 130 / 134 against 141 ms,
Prices (a page dial, the page fragment) 140 / 143 against 145 ms; a 30 ms gather without the flush,
Prices: 164 ms (1.14).  Longer, against 30 ms, KV cache (sidebar Batch): 60 ms 1.05, 120 ms 1.00 — the run
still reached the page in two batches at 30 ms (a traced move: ≈35 and ≈80 ms after the keypress, the
browser painting in between), but holding it in one bought nothing measurable.

If Streamlit's internals moved (no such method), nothing is patched and the app runs as stock.
`ROOFLINE_COALESCE=0` leaves it stock too, so bench/profile_move.py can measure what it buys.
"""

from __future__ import annotations

import collections
import functools
import os
import threading
from collections.abc import Callable
from typing import Any

ENV_SWITCH = "ROOFLINE_COALESCE"    # "0": Streamlit's own one-wake-up-per-message
ENV_DELAY = "ROOFLINE_COALESCE_MS"  # how long a woken loop lets a burst gather before it drains
ENV_FLUSH = "ROOFLINE_COALESCE_FLUSH"   # "0": a run's end waits for the gather like any other event
DEFAULT_DELAY_MS = 30.0
_installed = False
_delay_s = DEFAULT_DELAY_MS / 1e3
_flush_at_end = True
# The ScriptRunner events that end a run (streamlit.runtime.scriptrunner.ScriptRunnerEvent values).
END_EVENTS = frozenset({"SCRIPT_STOPPED_WITH_SUCCESS", "SCRIPT_STOPPED_WITH_COMPILE_ERROR",
                        "SCRIPT_STOPPED_FOR_RERUN", "FRAGMENT_STOPPED_WITH_SUCCESS", "SHUTDOWN"})


def ends_run(callback: Callable[[], None]) -> bool:
    """Whether `callback` hands the loop a ScriptRunner event that ends a run.  Streamlit 1.67 wraps each
    event in a lambda (`AppSession._on_scriptrunner_event`) closing over `event`; anything else (or a
    later Streamlit without that closure) is not an end, so the burst just waits for its gather."""
    code = getattr(callback, "__code__", None)
    if code is None or "event" not in code.co_freevars or not callback.__closure__:
        return False
    try:
        event = callback.__closure__[code.co_freevars.index("event")].cell_contents
    except (ValueError, IndexError):    # an empty cell, or a closure not shaped like Streamlit's
        return False
    return getattr(event, "value", None) in END_EVENTS


class _Pending:
    """One session's callbacks waiting for the event loop."""

    __slots__ = ("draining", "lock", "queue", "scheduled")

    def __init__(self) -> None:
        self.queue: collections.deque[Callable[[], None]] = collections.deque()
        self.lock = threading.Lock()
        self.scheduled = False          # a drain is due on the loop (woken, or gathering)
        self.draining = False           # the loop thread is inside drain() right now


def _pending(session: Any) -> _Pending:
    p = session.__dict__.get("_roofline_coalesce")
    if p is None:
        p = session.__dict__.setdefault("_roofline_coalesce", _Pending())
    return p


def _call_soon_coalesced(self: Any, callback: Callable[[], None]) -> None:
    p = _pending(self)
    with p.lock:
        p.queue.append(callback)
        wake = not p.scheduled          # else the drain that is due runs this one too
        p.scheduled = True
    if wake:
        if _delay_s > 0:
            _stock(self, lambda: self._event_loop.call_later(_delay_s, _drain, self, p, True))
        else:
            _stock(self, lambda: _drain(self, p, True))
    if _flush_at_end and _delay_s > 0 and ends_run(callback):
        # The run is over: nothing more will join this burst, so send it now (the due drain then finds
        # the queue empty and clears `scheduled`).
        _stock(self, lambda: _drain(self, p, False))


def _drain(self: Any, p: _Pending, due: bool) -> None:
    """Run the queued callbacks, in order, on the loop thread.  `due`: the scheduled drain (which
    clears `scheduled` once the queue is empty); else a drain ahead of a request from the browser."""
    if p.draining:                      # a callback led back here: the outer drain goes on in order
        return
    p.draining = True
    try:
        while True:
            with p.lock:
                if not p.queue:
                    if due:
                        p.scheduled = False
                    return
                callback = p.queue.popleft()
            try:
                callback()
            except Exception as exc:    # as asyncio's Handle._run: report, go on
                self._event_loop.call_exception_handler({"message": "Exception in a coalesced callback",
                                                         "exception": exc})
    finally:
        p.draining = False


def _drain_first(stock: Callable[..., Any]) -> Callable[..., Any]:
    """`stock` (an AppSession method the loop thread calls for the browser) after the session's
    queued script-run events: Streamlit handles those before a later request (in stock order), e.g.
    a finished run's last messages and its script_finished before a rerun request, which otherwise
    would find the old runner stopped, start a new one, and make the session ignore the old run's
    queued events as coming from a runner that is no longer current."""
    @functools.wraps(stock)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        p = self.__dict__.get("_roofline_coalesce")
        if p is not None and p.queue:
            _drain(self, p, False)
        return stock(self, *args, **kwargs)

    method._roofline_stock = stock      # type: ignore[attr-defined]
    return method


BROWSER_ENTRY_POINTS = ("handle_backmsg", "handle_backmsg_exception", "request_rerun")


_stock: Callable[[Any, Callable[[], None]], None] | None = None    # Streamlit's own method


def install() -> bool:
    """Patch `AppSession._call_soon_on_event_loop` (once per process); True if it is patched."""
    global _installed, _stock, _delay_s, _flush_at_end
    if _installed:
        return True
    if os.environ.get(ENV_SWITCH) == "0":
        return False
    try:
        _delay_s = max(0.0, float(os.environ.get(ENV_DELAY, DEFAULT_DELAY_MS))) / 1e3
    except ValueError:
        _delay_s = DEFAULT_DELAY_MS / 1e3
    _flush_at_end = os.environ.get(ENV_FLUSH) != "0"
    try:
        from streamlit.runtime.app_session import AppSession
    except ImportError:
        return False
    stock = getattr(AppSession, "_call_soon_on_event_loop", None)
    if stock is _call_soon_coalesced:
        _installed = True
        return True
    if not callable(stock):
        return False
    _stock = stock
    for name in BROWSER_ENTRY_POINTS:
        entry = getattr(AppSession, name, None)
        if callable(entry) and not hasattr(entry, "_roofline_stock"):
            setattr(AppSession, name, _drain_first(entry))
    AppSession._call_soon_on_event_loop = _call_soon_coalesced
    _installed = True
    return True
