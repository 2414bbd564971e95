"""ui.figures.plot.side_by_side: two one-panel figures as one figure of two panels (one plotly draw per move
instead of two), its narrow layout, `panels` (the split back), and the CSV export of such a figure."""

import numpy as np
import pytest

from tests.ui.figures.checks import validate
from ui.elements.export import axis_note, figure_csv, figure_frame
from ui.figures import plot
from ui.figures.plot import NARROW_META, PANEL_TITLE, PANELS_META, Spec, axis, base_layout, panels, side_by_side


def one(title: str, y: list[float], *, curve: str = "curve", extra: str | None = None, t_margin: int = 60):
    """A one-panel figure: a curve, a dot, a vertical line with a label, on log axes."""
    s = Spec()
    s.scatter(x=[1, 10, 100], y=y, name=curve, mode="lines")
    if extra:
        s.scatter(x=[1, 100], y=[1, 1], name=extra, mode="lines")
    s.now_point(10.0, y[1], name="now", marker={"size": 12, "color": "#000"}, room_x=[1, 10, 100], room_y=y)
    s.vline(30.0, color="#f00")
    s.label(30.0, 0.9, f"{title} mark")
    s.layout = base_layout(title, margin={"l": 80, "r": 30, "t": t_margin, "b": 110},
                           xaxis=axis("x [units]"), yaxis=axis(f"{title} [ms]"))
    return s.figure()


@pytest.fixture
def pair():
    return side_by_side(one("A", [1.0, 2.0, 3.0], t_margin=60), one("B", [5.0, 6.0, 7.0], extra="only B", t_margin=110))


def test_the_second_figure_moves_onto_the_second_axes(pair):
    validate(pair)
    d, lay = pair.spec_data, pair.spec_layout
    assert [(t.get("xaxis", "x"), t.get("yaxis", "y")) for t in d] == [("x", "y")] * 3 + [("x2", "y2")] * 4
    assert [list(y) for t in d[3:] for y in [t["y"]] if t["name"] == "curve"] == [[5.0, 6.0, 7.0]]
    # shapes: A's line and dot on panel 1, B's on panel 2 ("x domain" → "x2 domain" likewise)
    assert [(s["xref"], s["yref"]) for s in lay["shapes"] if s["type"] == "line"] == \
        [("x", "y domain"), ("x2", "y2 domain")]
    marks = {a["text"]: (a["xref"], a["yref"]) for a in lay["annotations"]}
    assert marks["A mark"] == ("x", "y domain") and marks["B mark"] == ("x2", "y2 domain")
    # side by side, each y axis anchored to its own x axis, its title kept
    assert [lay["xaxis"]["domain"], lay["xaxis2"]["domain"]] == [list(d) for d in plot.PANEL_DOMAINS]
    assert (lay["yaxis"]["anchor"], lay["yaxis2"]["anchor"], lay["xaxis2"]["anchor"]) == ("x", "x2", "y2")
    assert lay["yaxis2"]["title"]["text"] == "B [ms]"


def test_titles_become_panel_titles_above_both_top_margins(pair):
    lay = pair.spec_layout
    assert "title" not in lay and lay["meta"][PANELS_META] == ["A", "B"]
    t1, t2 = [a for a in lay["annotations"] if a.get("name") == PANEL_TITLE]
    assert (t1["xref"], t2["xref"]) == ("x domain", "x2 domain")
    # 1.3 em of a 15.4 px font: 20 px on a desktop, 1.3 × 11 ≈ 14 px on a phone (ui/elements/style.py's notes size)
    assert t1["text"] == '<span style="font-size:1.3em">A</span>' and t2["text"].endswith(">B</span>")
    assert t1["font"]["size"] * 1.3 == pytest.approx(20, abs=0.1)
    # the larger top margin (110 px) for both; both titles 110 − 60 = 50 px higher (base_layout's top margin,
    # 60 px, is what a title needs), above what B drew in its larger margin
    assert lay["margin"]["t"] == 110 and (t1["yshift"], t2["yshift"]) == (50, 50)
    n = lay["meta"][NARROW_META]["layout"]
    assert n["margin"]["t"] == 110                                        # stacked, the room is kept on top
    # and between the panels: A's ticks and axis title (≈ 60 px) and B's title, 50 px up and ≈ 26 px tall
    gap_px = (n["yaxis"]["domain"][0] - n["yaxis2"]["domain"][1]) * (n["height"] - 110 - n["margin"]["b"])
    assert gap_px >= 50 + 26 + 60


def test_the_legend_lists_a_shared_curve_once_and_links_it_on_both_panels(pair):
    d = pair.spec_data
    curves = [t for t in d if t["name"] == "curve"]
    assert [t.get("showlegend", True) for t in curves] == [True, False]
    assert curves[0]["legendgroup"] == curves[1]["legendgroup"]          # a click hides both
    (only_b,) = [t for t in d if t["name"] == "only B"]
    assert only_b.get("showlegend", True) is True and "legendgroup" not in only_b


def test_the_narrow_layout_stacks_the_panels(pair):
    narrow = pair.spec_layout["meta"][NARROW_META]
    n = narrow["layout"]
    assert narrow["below_px"] == 640
    assert n["xaxis"]["domain"] == n["xaxis2"]["domain"] == [0.0, 1.0]
    (a_lo, a_hi), (b_lo, b_hi) = n["yaxis"]["domain"], n["yaxis2"]["domain"]
    assert a_hi == 1.0 and b_lo == 0.0 and b_hi < a_lo
    assert (a_lo - b_hi) * (n["height"] - n["margin"]["t"] - n["margin"]["b"]) >= 90   # ticks, axis and panel title


def test_panels_splits_the_figure_back_into_its_two():
    a, b = one("A", [1.0, 2.0, 3.0]), one("B", [5.0, 6.0, 7.0], extra="only B")
    (d1, l1), (d2, l2) = panels(*plot.figure_dicts(side_by_side(a, b)))
    assert l1["title"]["text"] == "A" and l2["title"]["text"] == "B"
    for (d, lay), orig in (((d1, l1), a), ((d2, l2), b)):
        assert [t["name"] for t in d] == [t["name"] for t in orig.spec_data]
        assert all("xaxis" not in t for t in d)
        assert lay["shapes"] == orig.spec_layout["shapes"]
        assert lay["annotations"] == orig.spec_layout["annotations"]
        assert lay["yaxis"]["title"] == orig.spec_layout["yaxis"]["title"]
    assert panels([], {"title": {"text": "t"}}) == [([], {"title": {"text": "t"}})]     # one panel: itself


def test_a_reference_outside_the_panels_axes_is_refused():
    s = Spec()
    s.scatter(x=[1, 2], y=[1, 2], name="c")
    s.annotations.append({"text": "paper", "xref": "paper", "yref": "paper", "x": 0, "y": 0})
    with pytest.raises(ValueError, match="paper"):
        side_by_side(one("A", [1.0, 2.0, 3.0]), s.figure())


def test_the_csv_names_each_rows_panel_and_each_panels_axes(pair):
    built = pair.plotly
    df = figure_frame(built)
    assert set(df["chart"]) == {"A", "B"}
    b = df[(df["chart"] == "B") & (df["trace"] == "curve")]
    assert list(b["y"]) == [5.0, 6.0, 7.0]
    # each panel's dot, at its own data point (room markers left out)
    assert df[df["trace"] == "now"][["chart", "x", "y"]].values.tolist() == [["A", 10.0, 2.0], ["B", 10.0, 6.0]]
    assert axis_note(built) == "# A: x: x [units]; y: A [ms]\n# B: x: x [units]; y: B [ms]\n"
    assert figure_csv(built).startswith("# A: x: x [units]; y: A [ms]\n# B:")
    assert np.all(df.columns[:4] == ["chart", "trace", "x", "y"])
