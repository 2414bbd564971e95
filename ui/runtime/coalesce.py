"""One event-loop wake-up per burst of a script run's messages, not one per element.

Streamlit 1.67 hands every element a script run writes to the server's event loop with its own
`loop.call_soon_threadsafe`: one self-pipe write per element.  Each write wakes the event-loop
thread, which then takes the GIL from the script thread to handle one message, so a run of ~60
elements (a sidebar move on the Batch page) pays ~60 thread hand-offs in its wall time (py-spy:
≈13 ms of a Fast-mode rerun in `_write_to_self`).

`install()` has each session queue the callback instead and wake the loop only when the queue was
empty; the woken loop lets the burst gather for `DELAY_S`, then runs every queued callback, in order.
Same callbacks, same order, same thread; at most one wake-up per gather instead of one per element.
The event that ends a run (script or fragment finished, stopped for a rerun, shut down) does not
wait for the gather: it wakes the loop at once and the whole burst goes out.  So a rerun reaches the
browser in one or two batches, which React renders and the browser paints once or twice, instead of
a half-updated page painted in between.  A callback that raises is reported to the loop's exception
handler (as asyncio does) and the rest still run.

Order against the browser's requests: in stock Streamlit a run's events, scheduled as they happen,
are handled before a request from the browser that arrives later.  Here they may still be queued, so
the session's entry points for the browser's messages first run what is queued.  Without that, a
rerun request landing in the gather after a run had finished found its runner stopped, started a new
one, and the session then ignored the finished run's queued events (its last elements and
script_finished) as coming from a runner no longer current.

The Streamlit internals this needs are in ui/runtime/streamlit_internals.py; if they moved, nothing
is patched and the app runs as stock.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

from ui.runtime import streamlit_internals

# How long a woken loop lets a burst gather before it drains: long enough that a short rerun goes out
# in one or two batches (longer gathers measured no better: the browser renders early elements while
# the server still runs).
DELAY_S = 0.030
_installed = False
_stock: Callable[[Any, Callable[[], None]], None] | None = None    # Streamlit's own method: wakes the loop


class _Pending:
    """One session's callbacks waiting for the event loop."""

    __slots__ = ("draining", "lock", "queue", "scheduled")

    def __init__(self) -> None:
        self.queue: collections.deque[Callable[[], None]] = collections.deque()
        self.lock = threading.Lock()
        self.scheduled = False          # a drain is due on the loop (woken, or gathering)
        self.draining = False           # the loop thread is inside drain() right now


def _pending(session: Any) -> _Pending:
    return streamlit_internals.per_session(session, "coalesce", _Pending)


def _call_soon_coalesced(session: Any, callback: Callable[[], None]) -> None:
    p = _pending(session)
    with p.lock:
        p.queue.append(callback)
        wake = not p.scheduled          # else the drain that is due runs this one too
        p.scheduled = True
    if wake:
        loop = streamlit_internals.session_loop(session)
        _stock(session, lambda: loop.call_later(DELAY_S, _drain, session, p, True))
    if streamlit_internals.ends_script_run(callback):
        # The run is over: nothing more will join this burst, so send it now (the due drain then finds
        # the queue empty and clears `scheduled`).
        _stock(session, lambda: _drain(session, p, False))


def _drain(session: Any, p: _Pending, due: bool) -> None:
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
                streamlit_internals.session_loop(session).call_exception_handler(
                    {"message": "Exception in a coalesced callback", "exception": exc})
    finally:
        p.draining = False


def drain_queued(session: Any) -> None:
    """Run the session's queued script-run events now (on the loop thread, before a request from the
    browser): Streamlit handles those before a later request, e.g. a finished run's last messages and
    its script_finished before a rerun request, which otherwise would find the old runner stopped,
    start a new one, and make the session ignore the old run's queued events as coming from a runner
    that is no longer current."""
    p = _pending(session)
    if p.queue:
        _drain(session, p, False)


def install() -> bool:
    """Have every session coalesce its messages (once per process); True if it does."""
    global _installed, _stock
    if not _installed:
        _stock = streamlit_internals.patch_session_scheduling(_call_soon_coalesced, drain_queued)
        _installed = _stock is not None
    return _installed
