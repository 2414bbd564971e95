"""ui/elements/section.py: a part of a page as a nested fragment (the browser side is in
tests/browser/test_fragment.py: a section's dial reruns it alone, the URL and share box follow)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page_with_a_broken_section() -> None:
    import streamlit as st

    from ui.elements.section import section

    @section
    def broken(x: int) -> None:
        st.write(f"section got {x}")
        raise ValueError(f"bad {x}")

    st.write("before")
    broken(3)
    st.write("after")


def _page_with_a_working_section() -> None:
    import streamlit as st

    from ui.elements.section import section

    @section
    def part(x: int, *, y: int) -> None:
        st.write(f"x + y = {x + y}")
        st.slider("s", 0, 10, 4, key="s")

    part(2, y=5)
    st.write(f"s is {st.session_state['s']}")


def test_a_failing_section_shows_an_error_in_its_place_and_the_page_goes_on():
    at = AppTest.from_function(_page_with_a_broken_section).run()
    assert not at.exception
    assert len(at.error) == 1 and "ValueError: bad 3" in at.error[0].value
    assert [m.value for m in at.markdown] == ["before", "section got 3", "after"]


def test_a_section_passes_its_arguments_and_its_dials_work():
    at = AppTest.from_function(_page_with_a_working_section).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["x + y = 7", "s is 4"]
    at.slider(key="s").set_value(9).run()
    assert not at.exception
    assert at.markdown[0].value == "x + y = 7" and at.slider(key="s").value == 9
