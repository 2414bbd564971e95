"""Garbage collection for a long-running Streamlit server: one `gc.freeze()` after the imports.

Streamlit runs a full `gc.collect()` after every script run (`runner.postScriptGC`, on by default).
With this app's imports (plotly's figure classes, pandas, numpy, Streamlit itself: ~120k tracked
objects) each pass costs 60-90 ms of CPU, most of a dial move's server time, and under load it also
scans every session's objects while holding the GIL.  .streamlit/config.toml turns it off; Python's
generational collector still frees reference cycles, but each of its full passes would again walk
every import-time object.

`freeze_new_imports()` runs at the end of every page run.  When the run imported modules (the first
run of the process, a page's first visit), it collects once and then `gc.freeze()`s everything alive:
the modules, their classes and constants move to a permanent generation the collector skips.  Every
later collection scans only what the runs made since.  Nothing is frozen that is garbage (the
collect comes first); what a session creates later is collected as usual.
"""

from __future__ import annotations

import gc
import sys
import threading

_lock = threading.Lock()
_modules_seen = 0


def freeze_new_imports() -> bool:
    """Collect and freeze if modules were imported since the last call; True if it froze."""
    global _modules_seen
    n = len(sys.modules)
    if n == _modules_seen:
        return False
    with _lock:
        if len(sys.modules) == _modules_seen:
            return False
        gc.collect()
        gc.freeze()
        _modules_seen = len(sys.modules)
    return True
