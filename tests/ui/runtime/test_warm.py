"""ui/runtime/warm.py and the built-in fit's once-per-process cache: several threads asking at once get one fit."""

from __future__ import annotations

import threading
import time

from model import calibrate
from ui.runtime import warm


def test_threads_asking_at_once_share_one_fit(monkeypatch):
    calls = []
    real = calibrate.fit_efficiency

    def slow_fit(*a, **k):
        calls.append(threading.get_ident())
        time.sleep(0.2)                      # long enough that the other threads arrive while it runs
        return real(*a, **k)

    calibrate._built_in_fit.cache_clear()
    monkeypatch.setattr(calibrate, "fit_efficiency", slow_fit)
    try:
        out = []
        threads = [threading.Thread(target=lambda: out.append(calibrate.built_in_fit())) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(calls) == 1 and len(out) == 4 and all(f is out[0] for f in out)
    finally:
        calibrate._built_in_fit.cache_clear()


def test_start_warms_once_per_process(monkeypatch):
    monkeypatch.setattr(warm, "_started", threading.Event())
    t = warm.start(delay_s=0.0)
    assert t is not None and t.daemon and t.name == "roofline-warm"
    assert warm.start() is None                      # once per process
    t.join(timeout=120)
    assert not t.is_alive()
    assert calibrate._built_in_fit.cache_info().currsize == 1 and calibrate._built_in_cv.cache_info().currsize >= 1
