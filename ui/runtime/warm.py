"""The built-in fit, computed once per server process after its first page is drawn.

The Batch, Fast mode, Compare and Plan pages read the efficiency model's summary — the fitted terms and the
five-fold held-out band (`model.calibrate.built_in_summary`) — which is stored beside the model
(model/fit_summary.json), so a server's first visitor waits for no fit.  The Reality check page (and a stored
summary that no longer matches its inputs) needs the fit itself (`built_in_fit`, ≈0.4 s of CPU) and its
five-fold cross-validation (`built_in_cv("k5")`, ≈0.8 s), cached for the process.  `start()`, called at the end
of app.py's run, computes them in a daemon thread a few seconds after the first page has been drawn (`DELAY_S`),
off that visitor's path, and the caches' locks make a page that asks meanwhile wait for that result instead of
computing it again.
"""

from __future__ import annotations

import sys
import threading

from model import calibrate

_started = threading.Event()


def _warm() -> None:
    try:
        calibrate.built_in_summary()
        calibrate.built_in_fit()
        calibrate.built_in_cv("k5")
    except Exception as e:        # a page that needs them will raise it where it can be shown
        print(f"roofline: warming the fitted efficiency model failed: {e!r}", file=sys.stderr)


# Seconds between the first page's end and the warm-up: the first visitor's browser is still fetching the charts'
# scripts from this process then, and a fit holding the GIL delays those answers (server start → first chart on
# `/`: 4.2–4.4 s with the warm-up out of the way, 5.2 s with it started as the first run ends; docs/performance.md).
DELAY_S = 8.0


def start(delay_s: float = DELAY_S) -> threading.Thread | None:
    """Start the warm-up once per process, `delay_s` from now (later calls do nothing and return None)."""
    if _started.is_set():
        return None
    _started.set()
    t = threading.Timer(delay_s, _warm)
    t.name, t.daemon = "roofline-warm", True
    t.start()
    return t
