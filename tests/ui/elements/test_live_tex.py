"""The equation element (ui/elements/live_tex.py): what it sends, its fallback to st.latex, repeated TeX,
and its explicit keys (unique in every page's run)."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.helpers import app, assert_clean, latex
from ui.elements import live_tex
from views import PAGES


def test_the_renderer_is_katex_0_16_like_st_latexs():
    """Debian's libjs-katex (installed by .ci/run, packages.txt and the Dockerfile): KaTeX 0.16, the
    markup that Streamlit's KaTeX 0.16 stylesheet (the one st.latex uses) lays out."""
    folder = live_tex.katex_dir()
    assert folder is not None and (folder / "katex.min.js").is_file()
    head = (folder / "katex.min.js").read_text(encoding="utf-8")
    assert 'version:"0.16.' in head


@pytest.mark.parametrize("page", ["kv-cache", "moe"])
def test_equations_are_the_element_and_carry_the_same_tex_as_st_latex(monkeypatch, page):
    own = app(page=page)
    assert_clean(own)
    elements = [el for el in own.get("bidi_component") if live_tex.is_tex(el.proto)]
    assert elements and not own.latex
    assert all(set(json.loads(el.proto.json)) == {"tex"} for el in elements)
    monkeypatch.setenv(live_tex.ENV_SWITCH, "st")
    stock = app(page=page)
    assert_clean(stock)
    assert not [el for el in stock.get("bidi_component") if live_tex.is_tex(el.proto)]
    assert [f"$$\n{tex}\n$$" for tex in latex(own)] == [e.value for e in stock.latex]


def test_no_katex_falls_back_to_st_latex_and_says_why_once(monkeypatch, capsys):
    monkeypatch.setattr(live_tex, "katex_dir", lambda: None)
    monkeypatch.setattr(live_tex, "_broken", None)
    monkeypatch.setattr(live_tex, "_mount", None)
    at = app(page="kv-cache")
    assert_clean(at)
    assert at.latex and not [el for el in at.get("bidi_component") if live_tex.is_tex(el.proto)]
    at.sidebar.select_slider(key="b").set_value(96).run()
    assert_clean(at)
    err = capsys.readouterr().err
    assert err.count("equation element unavailable") == 1 and "libjs-katex" in err


def _two_of_the_same():
    import streamlit as st

    from ui.elements.live_tex import latex as tex
    tex(r"x = 1", key="t.first")
    tex(r"x = 1", key="t.again")     # the same TeX twice in one run: st.latex would clash
    tex(r"y = 2", key="t.y")
    st.button("rerun")


def test_the_same_tex_twice_in_one_run_is_two_elements_in_every_run():
    at = AppTest.from_function(_two_of_the_same).run()
    assert_clean(at)
    assert latex(at) == ["x = 1", "x = 1", "y = 2"]
    at.button[0].click().run()               # a second run: the same elements
    assert_clean(at)
    assert latex(at) == ["x = 1", "x = 1", "y = 2"]


def _changing_tex():
    import streamlit as st

    from ui.elements.live_tex import latex as tex
    n = st.number_input("n", value=1)
    tex(rf"x = {n}", key="t.x")                  # changes with the input
    for i in range(2):
        tex(rf"y_{i} = {n}", key=f"t.y.{i}")     # one line, two equations
    if n > 1:
        tex(r"z", key="t.z")                     # only sometimes
    tex(r"w = 0", key="t.w")                     # never changes


def _tex_ids(at) -> list[str]:
    return [el.proto.id for el in at.get("bidi_component") if live_tex.is_tex(el.proto)]


def test_an_equation_keeps_its_element_id_when_its_tex_changes():
    """The key names the equation, not its TeX: the frontend then keeps the element and KaTeX redraws it
    in place, instead of removing it and mounting a new one."""
    at = AppTest.from_function(_changing_tex).run()
    assert_clean(at)
    before = _tex_ids(at)
    assert latex(at) == ["x = 1", "y_0 = 1", "y_1 = 1", "w = 0"] and len(set(before)) == 4
    at.number_input[0].set_value(2).run()
    assert_clean(at)
    assert latex(at) == ["x = 2", "y_0 = 2", "y_1 = 2", "z", "w = 0"]
    after = _tex_ids(at)
    assert after[:3] == before[:3] and after[4] == before[3] and after[3] not in before
    assert [i.rsplit("-tex-", 1)[-1] for i in after] == ["t.x", "t.y.0", "t.y.1", "t.z", "t.w"]


def test_an_equation_needs_its_key():
    with pytest.raises(TypeError):
        live_tex.latex(r"x = 1")          # type: ignore[call-arg]


def _same_key_twice():
    from ui.elements.live_tex import latex as tex
    tex(r"x = 1", key="t.x")
    tex(r"x = 2", key="t.x")


def test_a_key_drawn_twice_in_one_run_is_an_error():
    at = AppTest.from_function(_same_key_twice).run()
    assert at.exception and "t.x" in at.exception[0].value


@pytest.mark.parametrize("page", [p.name for p in PAGES])
def test_every_page_keys_its_equations_by_name_once_each(page):
    """Each equation element's key is "page.equation" (the walkthrough's "walkthrough.step.n"): the same
    in every run wherever the code that draws it moves, and no key twice in a run (Streamlit refuses a
    repeated key, which assert_clean would show)."""
    at = app(page=page)
    assert_clean(at)
    keys = [i.rsplit("-" + live_tex.KEY_PREFIX, 1)[-1] for i in _tex_ids(at)]
    assert len(keys) == len(set(keys)), keys
    assert all(re.fullmatch(rf"{re.escape(page)}\.[a-z0-9_.-]+", k) for k in keys), keys
    assert len(keys) == len(latex(at))
