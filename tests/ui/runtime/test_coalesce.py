"""ui/runtime/coalesce.py: a script run's messages reach the event loop in order, with one wake-up per burst."""

from __future__ import annotations

import asyncio
import threading

import pytest
from streamlit.runtime.app_session import AppSession

from ui.runtime import coalesce, streamlit_internals

# Streamlit's own method (an AppTest run in this process may have patched the class already)
_current = AppSession.__dict__["_call_soon_on_event_loop"]
STOCK = getattr(_current, "_roofline_stock", _current)


class FakeSession:
    """What the patched method uses of an AppSession: its event loop."""

    def __init__(self, loop):
        self._event_loop = loop


@pytest.fixture
def patched(monkeypatch):
    monkeypatch.setattr(coalesce, "_installed", False)
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", STOCK)   # restored after the test
    assert coalesce.install()
    return AppSession._call_soon_on_event_loop


def _run_until(loop, done, timeout=5.0):
    """Run `loop` until `done`, in a thread of its own: a Playwright test earlier in this worker may
    have left an event loop running in the main thread."""
    errors = []

    def target():
        try:
            loop.run_until_complete(asyncio.wait_for(done, timeout))
        except BaseException as e:      # re-raised in the test's thread
            errors.append(e)

    t = threading.Thread(target=target)
    t.start()
    t.join(timeout + 5)
    if errors:
        raise errors[0]


@pytest.mark.parametrize("delay_s", [0.0, 0.002])
def test_a_drain_keeps_order_with_or_without_a_gather(delay_s, patched, monkeypatch):
    monkeypatch.setattr(coalesce, "DELAY_S", delay_s)
    loop = asyncio.new_event_loop()
    try:
        session, ran, done = FakeSession(loop), [], loop.create_future()
        t = threading.Thread(target=lambda: [AppSession._call_soon_on_event_loop(session, lambda i=i: ran.append(i))
                                             for i in range(500)] + [AppSession._call_soon_on_event_loop(
                                                 session, lambda: done.set_result(True))])
        loop.call_soon(t.start)
        _run_until(loop, done)
        t.join()
        assert ran == list(range(500))
    finally:
        loop.close()


def test_install_patches_once(monkeypatch):
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", STOCK)
    monkeypatch.setattr(coalesce, "_installed", False)
    assert coalesce.install() and coalesce.install()
    patched = AppSession._call_soon_on_event_loop
    assert patched is not STOCK and patched._roofline_stock is STOCK and coalesce._stock is STOCK
    monkeypatch.setattr(coalesce, "_installed", False)
    assert coalesce.install()
    assert AppSession._call_soon_on_event_loop._roofline_stock is STOCK     # not a patch of the patch


def test_a_streamlit_without_the_method_runs_stock(monkeypatch):
    monkeypatch.setattr(coalesce, "_installed", False)
    monkeypatch.delattr(AppSession, "_call_soon_on_event_loop")
    assert not coalesce.install()
    assert not hasattr(AppSession, "_call_soon_on_event_loop")


def test_callbacks_from_the_script_thread_run_in_order_with_one_wake_up(patched):
    loop = asyncio.new_event_loop()
    try:
        session, ran, wakes = FakeSession(loop), [], []
        stock_wake = loop.call_soon_threadsafe
        loop.call_soon_threadsafe = lambda cb, *a: (wakes.append(1), stock_wake(cb, *a))[1]
        done = loop.create_future()

        def script_thread():     # a run's 200 messages, sent while the loop is not yet running
            for i in range(200):
                patched(session, lambda i=i: ran.append(i))
            patched(session, lambda: done.set_result(True))

        t = threading.Thread(target=script_thread)
        t.start()
        t.join()
        _run_until(loop, done)
        assert ran == list(range(200))
        assert len(wakes) == 1                       # stock: 201
        again = loop.create_future()
        patched(session, lambda: again.set_result(True))   # the queue emptied: the next message wakes it again
        _run_until(loop, again)
        assert len(wakes) == 2
    finally:
        loop.close()


def test_messages_sent_while_the_loop_drains_are_not_lost(patched):
    loop = asyncio.new_event_loop()
    try:
        session, ran = FakeSession(loop), []
        done = loop.create_future()
        n = 2000

        def script_thread():
            for i in range(n):
                patched(session, lambda i=i: ran.append(i))
            patched(session, lambda: done.set_result(True))

        t = threading.Thread(target=script_thread)
        loop.call_soon(t.start)           # the loop drains while the thread still sends
        _run_until(loop, done)
        t.join()
        assert ran == list(range(n))
    finally:
        loop.close()


def test_a_failing_callback_is_reported_and_the_rest_still_run(patched):
    loop = asyncio.new_event_loop()
    try:
        session, ran, reported = FakeSession(loop), [], []
        loop.set_exception_handler(lambda _loop, ctx: reported.append(ctx["exception"]))
        done = loop.create_future()
        patched(session, lambda: ran.append(1))
        patched(session, lambda: 1 / 0)
        patched(session, lambda: ran.append(3))
        patched(session, lambda: done.set_result(True))
        _run_until(loop, done)
        assert ran == [1, 3]
        assert len(reported) == 1 and isinstance(reported[0], ZeroDivisionError)
    finally:
        loop.close()


def test_a_request_from_the_browser_runs_the_queued_events_first(patched, monkeypatch):
    """handle_backmsg (and request_rerun) see the session as stock Streamlit would: the run's events
    that were queued before the request have been handled."""
    assert all(hasattr(getattr(AppSession, n), "_roofline_stock") for n in streamlit_internals.BROWSER_ENTRY_POINTS)
    loop = asyncio.new_event_loop()
    try:
        session, order = FakeSession(loop), []
        monkeypatch.setattr(AppSession, "handle_backmsg", lambda self, msg: order.append(("backmsg", msg)))
        monkeypatch.setattr(coalesce, "_installed", False)
        assert coalesce.install()                     # wraps the recording entry point
        for i in range(3):
            patched(session, lambda i=i: order.append(("event", i)))
        AppSession.handle_backmsg(session, "rerun")   # on the loop thread, before the gather is over
        assert order == [("event", 0), ("event", 1), ("event", 2), ("backmsg", "rerun")]
        done = loop.create_future()
        patched(session, lambda: done.set_result(True))  # the due drain still runs (and finds little)
        _run_until(loop, done)
        assert order[-1] == ("backmsg", "rerun")
    finally:
        loop.close()


def test_a_callback_that_reenters_does_not_run_twice(patched):
    loop = asyncio.new_event_loop()
    try:
        session, ran, done = FakeSession(loop), [], loop.create_future()
        patched(session, lambda: (ran.append(0), coalesce.drain_queued(session), ran.append("request")))
        patched(session, lambda: ran.append(1))
        patched(session, lambda: done.set_result(True))
        _run_until(loop, done)
        assert ran == [0, "request", 1]
    finally:
        loop.close()


def test_the_entry_points_are_wrapped_once(patched, monkeypatch):
    monkeypatch.setattr(coalesce, "_installed", False)
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", STOCK)
    assert coalesce.install()                       # a second install finds them wrapped already
    for name in streamlit_internals.BROWSER_ENTRY_POINTS:
        entry = getattr(AppSession, name)
        assert hasattr(entry, "_roofline_stock") and not hasattr(entry._roofline_stock, "_roofline_stock")


class RunSession(FakeSession):
    """A session whose ScriptRunner events go through Streamlit's own `_on_scriptrunner_event` (the
    lambda that ui/runtime/coalesce.py recognises) and land here on the loop."""

    def __init__(self, loop):
        super().__init__(loop)
        self.handled: list[str] = []
        self.done = loop.create_future()

    def _call_soon_on_event_loop(self, callback):
        AppSession._call_soon_on_event_loop(self, callback)

    def _handle_scriptrunner_event_on_event_loop(self, sender, event, *args):
        self.handled.append(event.value)
        if event.value in streamlit_internals.RUN_END_EVENTS and not self.done.done():
            self.done.set_result(True)


def test_the_end_of_a_run_is_recognised_in_streamlits_own_callback():
    """Streamlit 1.67 wraps each ScriptRunner event in a lambda closing over it; if a later version
    does not, this fails (and the app only loses the early send, not messages)."""
    from streamlit.runtime.scriptrunner import ScriptRunnerEvent

    got = []

    class Capture:
        def _call_soon_on_event_loop(self, callback):
            got.append(callback)

    for event in ScriptRunnerEvent:
        got.clear()
        AppSession._on_scriptrunner_event(Capture(), None, event)
        assert len(got) == 1
        assert streamlit_internals.ends_script_run(got[0]) == (event.value in streamlit_internals.RUN_END_EVENTS), event
    assert streamlit_internals.RUN_END_EVENTS <= {e.value for e in ScriptRunnerEvent}
    assert not streamlit_internals.ends_script_run(lambda: None) and not streamlit_internals.ends_script_run(print)


def test_a_runs_end_is_sent_without_waiting_for_the_gather(patched, monkeypatch):
    """With a 60 s gather, a run's elements and its end reach the loop at once when the run ends, in
    order (waiting for the gather, the 5 s wait would time out).  No timing is asserted: only whether
    they came before the gather ran out."""
    from streamlit.runtime.scriptrunner import ScriptRunnerEvent

    monkeypatch.setattr(coalesce, "DELAY_S", 60.0)
    loop = asyncio.new_event_loop()
    try:
        session = RunSession(loop)
        events = [ScriptRunnerEvent.SCRIPT_STARTED, *[ScriptRunnerEvent.ENQUEUE_FORWARD_MSG] * 5,
                  ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS]
        t = threading.Thread(target=lambda: [AppSession._on_scriptrunner_event(session, None, e) for e in events])
        loop.call_soon(t.start)
        _run_until(loop, session.done)
        assert session.handled == [e.value for e in events]
        t.join()
    finally:
        loop.close()
