"""The pages have one source: views/__init__.py.  app.py's navigation, the tests and every link between
pages read it, and a page's name is the same through every layer."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import views
from tests import ROOT

REGISTRY = ROOT / "views" / "__init__.py"
NAMES = {p.name for p in views.PAGES}
SCRIPT = re.compile(r"^views/\w+\.py$")


def _python_files() -> list[Path]:
    skip = {"bench/out", ".git"}
    return [p for p in ROOT.rglob("*.py") if not any(part in skip for part in p.relative_to(ROOT).parts[:2])
            and p != REGISTRY]


def _constants(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_names_are_unique_and_spelled_alike():
    assert len(NAMES) == len(views.PAGES)
    for p in views.PAGES:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", p.name), p.name      # a URL path: lower case, hyphens
        assert p.section in views.SECTIONS, p
    assert views.DEFAULT in NAMES


@pytest.mark.parametrize("p", views.PAGES, ids=lambda p: p.name)
def test_one_name_through_every_layer(p):
    """views/<name>.py, ui/figures/<name>.py (a page with charts) and tests/app/test_<name>.py."""
    assert (ROOT / p.script).is_file()
    assert (ROOT / "tests" / "app" / f"test_{p.module}.py").is_file()
    if p.charts and p.name != "walkthrough":     # the walkthrough draws with the chapters' builders
        assert (ROOT / "ui" / "figures" / f"{p.module}.py").is_file()


def test_no_other_file_names_a_page_script():
    """No hand-kept copy of the list: outside views/__init__.py no code holds a page's script path."""
    found = [(str(f.relative_to(ROOT)), s) for f in _python_files()
             for s in _constants(ast.parse(f.read_text(encoding="utf-8"))) if SCRIPT.match(s)]
    assert found == []


def test_no_other_file_lists_the_pages():
    """No literal list, tuple, set or dict of half the page names or more (or their paths) outside the
    registry: a test or a module that needs every page reads views.PAGES."""
    found = []
    for f in _python_files():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
            if not isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)) or items is None:
                continue
            named = {k.value.strip("/") for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if len(named & NAMES) >= len(NAMES) // 2:
                found.append(f"{f.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_app_builds_its_navigation_from_the_registry():
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "Page"]
    paths = [kw.value for c in calls for kw in c.keywords if kw.arg == "url_path"]
    literal = [p.value for p in paths if isinstance(p, ast.Constant)]
    assert literal == ["home"]          # the hidden `/` redirect; every real page comes from views.PAGES


def test_unknown_page_names_the_known_ones():
    with pytest.raises(KeyError, match="kv-cache"):
        views.page("kv_cache")
