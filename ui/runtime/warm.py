"""Work every session's first predicted chart needs, done once per server process at start-up.

The Batch, Fast mode and Compare pages draw the predicted curve with its held-out band, and the Plan page plans
on the predicted step: both need the efficiency model fitted to the built-in measurements
(`model.calibrate.built_in_fit`, ≈0.4 s of CPU) and its five-fold cross-validation (`built_in_cv("k5")`, ≈0.8 s).
Both are cached for the process; computed on the first page that asks, they would land on the first visitor's
first chart.  `start()` computes them in a daemon thread as the server's first run begins, and the cache's
lock makes a page that asks meanwhile wait for that result instead of computing it a second time.
"""

from __future__ import annotations

import sys
import threading

from model import calibrate

_started = threading.Event()


def _warm() -> None:
    try:
        calibrate.built_in_fit()
        calibrate.built_in_cv("k5")
    except Exception as e:        # a page that needs them will raise it where it can be shown
        print(f"roofline: warming the fitted efficiency model failed: {e!r}", file=sys.stderr)


def start() -> threading.Thread | None:
    """Start the warm-up once per process (later calls do nothing and return None)."""
    if _started.is_set():
        return None
    _started.set()
    t = threading.Thread(target=_warm, name="roofline-warm", daemon=True)
    t.start()
    return t
