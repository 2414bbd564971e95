"""ui/runtime/coalesce.py: a script run's messages reach the event loop in order, with one wake-up per burst."""

from __future__ import annotations

import asyncio
import threading

import pytest
from streamlit.runtime.app_session import AppSession

from ui.runtime import coalesce

# Streamlit's own method (an AppTest run in this process may have patched the class already)
STOCK = coalesce._stock or AppSession.__dict__["_call_soon_on_event_loop"]
assert STOCK is not coalesce._call_soon_coalesced


class FakeSession:
    """What the patched method uses of an AppSession: its event loop."""

    def __init__(self, loop):
        self._event_loop = loop


@pytest.fixture
def patched(monkeypatch):
    monkeypatch.setattr(coalesce, "_installed", False)
    monkeypatch.delenv(coalesce.ENV_SWITCH, raising=False)
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


@pytest.mark.parametrize("delay_ms", ["0", "2"])
def test_both_drains_keep_order(delay_ms, monkeypatch):
    """With the 2 ms gather and without it (ROOFLINE_COALESCE_MS=0)."""
    monkeypatch.setattr(coalesce, "_installed", False)
    monkeypatch.setattr(coalesce, "_delay_s", coalesce._delay_s)     # restored after the test
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", STOCK)
    monkeypatch.setenv(coalesce.ENV_DELAY, delay_ms)
    assert coalesce.install() and coalesce._delay_s == float(delay_ms) / 1e3
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


def test_install_patches_once_and_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", STOCK)
    monkeypatch.setattr(coalesce, "_installed", False)
    monkeypatch.setenv(coalesce.ENV_SWITCH, "0")
    assert not coalesce.install() and AppSession._call_soon_on_event_loop is STOCK
    monkeypatch.delenv(coalesce.ENV_SWITCH)
    assert coalesce.install() and coalesce.install()
    assert AppSession._call_soon_on_event_loop is coalesce._call_soon_coalesced


def test_a_streamlit_without_the_method_runs_stock(monkeypatch):
    monkeypatch.setattr(coalesce, "_installed", False)
    monkeypatch.delenv(coalesce.ENV_SWITCH, raising=False)
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


def test_a_request_from_the_browser_runs_the_queued_events_first(patched):
    """handle_backmsg (and request_rerun) see the session as stock Streamlit would: the run's events
    that were queued before the request have been handled."""
    loop = asyncio.new_event_loop()
    try:
        session, order = FakeSession(loop), []
        assert all(hasattr(getattr(AppSession, n), "_roofline_stock") for n in coalesce.BROWSER_ENTRY_POINTS)
        recorded = coalesce._drain_first(lambda self, msg: order.append(("backmsg", msg)))
        for i in range(3):
            patched(session, lambda i=i: order.append(("event", i)))
        recorded(session, "rerun")                    # on the loop thread, before the gather is over
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
        reenter = coalesce._drain_first(lambda self: ran.append("request"))
        patched(session, lambda: (ran.append(0), reenter(session)))
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
    for name in coalesce.BROWSER_ENTRY_POINTS:
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
        if event.value in coalesce.END_EVENTS and not self.done.done():
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
        assert coalesce.ends_run(got[0]) == (event.value in coalesce.END_EVENTS), event
    assert {"SCRIPT_STOPPED_WITH_SUCCESS", "FRAGMENT_STOPPED_WITH_SUCCESS"} <= {e.value for e in ScriptRunnerEvent}
    assert not coalesce.ends_run(lambda: None) and not coalesce.ends_run(print)


@pytest.mark.parametrize("flush", [True, False])
def test_a_runs_end_is_sent_without_waiting_for_the_gather(flush, monkeypatch):
    """With a 60 s gather, a run's elements and its end reach the loop at once when the run ends, in
    order; with the flush off (ROOFLINE_COALESCE_FLUSH=0) they would wait the whole gather, so the 5 s
    wait times out.  No timing is asserted: only whether they came before the gather ran out."""
    from streamlit.runtime.scriptrunner import ScriptRunnerEvent

    monkeypatch.setattr(coalesce, "_installed", False)
    monkeypatch.setattr(coalesce, "_delay_s", coalesce._delay_s)
    monkeypatch.setattr(coalesce, "_flush_at_end", coalesce._flush_at_end)
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", STOCK)
    monkeypatch.setenv(coalesce.ENV_DELAY, "60000")
    monkeypatch.setenv(coalesce.ENV_FLUSH, "1" if flush else "0")
    assert coalesce.install() and coalesce._flush_at_end is flush
    loop = asyncio.new_event_loop()
    try:
        session = RunSession(loop)
        events = [ScriptRunnerEvent.SCRIPT_STARTED, *[ScriptRunnerEvent.ENQUEUE_FORWARD_MSG] * 5,
                  ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS]
        t = threading.Thread(target=lambda: [AppSession._on_scriptrunner_event(session, None, e) for e in events])
        loop.call_soon(t.start)
        if flush:
            _run_until(loop, session.done)
            assert session.handled == [e.value for e in events]
        else:
            with pytest.raises(TimeoutError):
                _run_until(loop, session.done, timeout=1.0)
            assert session.handled == []
        t.join()
    finally:
        loop.close()
