"""ui/runtime/gc_tuning.py: freeze the heap after runs that imported modules, never freezing garbage."""

from __future__ import annotations

import gc
import sys
import types
import weakref

from tests import ROOT
from ui.runtime import gc_tuning


class Node:
    pass


def test_freezes_only_after_new_imports_and_collects_first():
    try:
        gc_tuning.freeze_new_imports()                    # whatever the test process imported so far
        assert gc_tuning.freeze_new_imports() is False    # nothing new: no collect, no freeze
        frozen = gc.get_freeze_count()

        a, b = Node(), Node()                              # a reference cycle that is already garbage
        a.other, b.other = b, a
        dead = weakref.ref(a)
        del a, b
        sys.modules["roofline_test_fake_module"] = types.ModuleType("roofline_test_fake_module")
        assert gc_tuning.freeze_new_imports() is True      # a module appeared: collect, then freeze
        assert dead() is None                              # the cycle was collected, not frozen
        assert gc.get_freeze_count() >= frozen
        assert gc_tuning.freeze_new_imports() is False
    finally:
        sys.modules.pop("roofline_test_fake_module", None)
        gc.unfreeze()


def test_streamlit_config_turns_the_post_run_collection_off():
    """Streamlit's full collection after every run is off (it scans every session's objects under load);
    Python's own generational collector, made cheap by the freeze, frees cycles instead."""
    import tomllib

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["runner"]["postScriptGC"] is False
