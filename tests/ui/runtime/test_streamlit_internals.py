"""ui/runtime/streamlit_internals.py: each use of a private Streamlit name works on the installed
Streamlit, and no other module of the app touches one."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests import ROOT
from ui.runtime import streamlit_internals

INTERNALS = ROOT / "ui" / "runtime" / "streamlit_internals.py"


# ---------------------------------------------------------------- each function, on this Streamlit

def _page_run_twice():
    import streamlit as st

    from ui.runtime.streamlit_internals import rearm_page

    def body():
        st.text("ran")

    page = st.navigation([st.Page(body, title="One", url_path="one")])
    page.run()
    rearm_page(page)
    page.run()


def test_rearm_page_lets_a_page_run_twice_in_one_run():
    at = AppTest.from_function(_page_run_twice).run()
    assert not at.exception
    assert [t.value for t in at.text] == ["ran", "ran"]


def test_declare_assets_gives_a_component_its_asset_folder(tmp_path):
    folder = tmp_path / "widget"
    folder.mkdir()
    (folder / "index.js").write_text("export default function () {}\n")
    manager = streamlit_internals.component_manager()     # outside a server: a manager of its own
    assert manager.get_component_asset_root("roofline_test.widget") is None
    streamlit_internals.declare_assets(manager, "roofline_test", "widget", folder)
    streamlit_internals.declare_assets(manager, "roofline_test", "widget", folder)    # a second time: kept
    assert Path(manager.get_component_asset_root("roofline_test.widget")).resolve() == folder.resolve()


def test_the_session_internals_are_where_the_patch_expects_them():
    """What patch_session_scheduling, session_loop, per_session and ends_script_run reach on AppSession
    (tests/ui/runtime/test_coalesce.py drives them)."""
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.scriptrunner import ScriptRunnerEvent

    assert callable(AppSession.__dict__["_call_soon_on_event_loop"])
    assert all(callable(getattr(AppSession, n)) for n in streamlit_internals.BROWSER_ENTRY_POINTS)
    assert "self._event_loop = " in inspect.getsource(AppSession.__init__)
    assert not any("__slots__" in vars(c) for c in AppSession.__mro__[:-1])     # instances keep a __dict__
    assert "lambda" in inspect.getsource(AppSession._on_scriptrunner_event)
    assert streamlit_internals.RUN_END_EVENTS <= {e.value for e in ScriptRunnerEvent}


# ---------------------------------------------------------------- nothing else touches them

# Private: these packages and what is in them; the public v2 package's submodules (st.components.v2 itself is API).
PRIVATE_PACKAGES = ("streamlit.runtime", "streamlit.web", "streamlit.proto", "streamlit.elements.lib")
PRIVATE_BELOW = ("streamlit.components.v2",)
ATTR_FUNCS = {"getattr", "setattr", "hasattr", "delattr"}


def _private_module(name: str) -> bool:
    return name in PRIVATE_PACKAGES or name.startswith(tuple(f"{p}." for p in PRIVATE_PACKAGES + PRIVATE_BELOW))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__") and name != "__dict__")


def _root(node: ast.AST) -> str | None:
    """The name an expression starts from: `st` in `st.sidebar.container()[0].x`."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def private_uses(source: str) -> list[str]:
    """Where `source` imports a private Streamlit module or reads or sets a private attribute of an
    object it got from Streamlit (a name imported from streamlit, or assigned from an expression that
    starts with one, or a parameter annotated with a Streamlit type).  Module-level string constants
    count as the attribute name of getattr/setattr."""
    tree = ast.parse(source)
    found: list[str] = []
    from_st: set[str] = set()
    strings = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
               and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
               for t in n.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "streamlit" or a.name.startswith("streamlit."):
                    from_st.add(a.asname or a.name.split(".")[0])
                if _private_module(a.name):
                    found.append(f"line {node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "streamlit" or node.module.startswith("streamlit."):
                from_st.update(a.asname or a.name for a in node.names)
                if _private_module(node.module):
                    found.append(f"line {node.lineno}: from {node.module} import …")
    grown = True
    while grown:                    # names bound to what Streamlit handed out, to a fixed point
        n = len(from_st)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value and _root(node.value) in from_st:
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    from_st.update(e.id for e in ast.walk(t) if isinstance(e, ast.Name))
            elif isinstance(node, ast.arg) and node.annotation is not None and _root(node.annotation) in from_st:
                from_st.add(node.arg)
        grown = len(from_st) > n
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and _root(node.value) in from_st:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTR_FUNCS
              and len(node.args) >= 2 and _root(node.args[0]) in from_st):
            name = node.args[1]
            text = name.value if isinstance(name, ast.Constant) else strings.get(getattr(name, "id", ""))
            if isinstance(text, str) and _private(text):
                found.append(f"line {node.lineno}: {node.func.id}(…, {text!r})")
    return sorted(found, key=lambda f: int(f.split(":")[0].split()[1]))


def test_the_scan_finds_each_kind_of_use():
    src = '''
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager
from streamlit.components.v2 import component
import streamlit.web.server
KEY = "_mine"
page = st.navigation([])
page._can_be_called = True
ctx = get_script_run_ctx()
setattr(ctx, KEY, 1)
def f(where: st.delta_generator.DeltaGenerator, other):
    where._parent
    other._fine
    st.session_state._new_session_state
    getattr(where, "__dict__")
'''
    found = private_uses(src)
    assert [f.split(":")[0] for f in found] == [f"line {n}" for n in (3, 4, 6, 9, 11, 13, 15, 16)], found


def _app_modules() -> list[Path]:
    return sorted([ROOT / "app.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "views").rglob("*.py")])


@pytest.mark.parametrize("path", [p for p in _app_modules() if p != INTERNALS], ids=lambda p: str(p.relative_to(ROOT)))
def test_only_streamlit_internals_touches_streamlits_private_names(path):
    assert not private_uses(path.read_text(encoding="utf-8")), (
        f"{path.relative_to(ROOT)} uses a private Streamlit name: move it into ui/runtime/streamlit_internals.py")


def test_the_internals_module_is_scanned_the_same_way_and_does_use_them():
    assert private_uses(INTERNALS.read_text(encoding="utf-8"))
