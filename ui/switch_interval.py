"""The interpreter's thread switch interval for a serving process: 20 ms instead of Python's 5 ms.

Streamlit runs each session's script in its own thread, and the server's event loop (websocket I/O)
in another; one GIL serialises them.  Under load (bench/bench_load.py: 20 sessions moving sliders) the
server is GIL-bound, at ≈0.85 of a core, and Python hands the GIL to another waiting thread every
5 ms: twenty reruns then share the interpreter in 5 ms slices, and each one finishes only when nearly
all of them have.  A longer interval lets a run go further before it yields, so runs finish more
one after another, with the same total work; the event loop, which only waits for the GIL when it has
messages to send, still gets it at each interval.

Measured with bench/bench_load.py, 20 sessions, 40 s waves (session 10, README): the interval set for
every process (the load generator and the stock app too) at 1 / 5 (Python's) / 20 / 50 ms: the app's
slider p50 165 / 105–133 / 82 / 87 ms, p95 444 / 393–434 / 314 / 370 ms.  `ROOFLINE_SWITCH_MS` sets
another interval (ms); `ROOFLINE_SWITCH_MS=0` leaves Python's own, so a bench can measure what this
buys in one run.
"""

from __future__ import annotations

import os
import sys

ENV_SWITCH = "ROOFLINE_SWITCH_MS"
DEFAULT_MS = 20.0


def interval_ms() -> float | None:
    """The interval this process should use in ms, or None to leave Python's own (bad values too)."""
    raw = os.environ.get(ENV_SWITCH, "").strip()
    if not raw:
        return DEFAULT_MS
    try:
        ms = float(raw)
    except ValueError:
        print(f"roofline: {ENV_SWITCH}={raw!r} is not a number of milliseconds; Python's own interval is kept",
              file=sys.stderr)
        return None
    return ms if 0 < ms <= 1000 else None


def install() -> float:
    """Set the interval (once is enough: it is process-wide); return the interval now in effect, in ms."""
    ms = interval_ms()
    if ms is not None:
        sys.setswitchinterval(ms / 1e3)
    return sys.getswitchinterval() * 1e3
