"""Figures are assembled without per-property validation (ui/figures/plot.py); validate them all here.

`go.Figure(fig.to_dict())` runs plotly's full validation: a misspelled property or a bad value in
any builder fails this test even though the app skips the check at run time.
"""

import numpy as np

from model import decode_step, system_balance_batch
from tests.ui.figures.checks import validate
from ui.figures import batch as figures
from ui.figures.plot import Spec


def test_spec_builds_a_valid_figure_with_template():
    s = Spec()
    s.scatter(x=[1, 2], y=[3, 4], name="a", mode="lines", line={"width": 3})
    s.vline(2.0, color="#123456")
    s.hline(3.0)
    s.vrect(1.0, 2.0, color="#abcdef")
    s.label(1.5, 0.5, "text")
    s.layout = {"xaxis": {"type": "log"}}
    fig = s.figure()
    validate(fig)
    assert fig.layout.template.layout.paper_bgcolor == "white"      # plotly_white applied
    assert fig.layout.annotations[0].x == np.log10(1.5)            # annotations on a log axis take log10


def test_shared_buildersvalidate(sys70):
    grid = np.geomspace(1, 65536, 65)
    r = decode_step(sys70, grid, 8192)
    b_star = float(system_balance_batch(sys70, 0))
    validate(figures.curve_vs_batch(grid, r.t_step_s, r.fits, r.bound, name="l", unit="ms", title="t",
                                     y_title="y [ms]", b_star=b_star, b_now=64.0, y_now=1.0,
                                     extra=[("m", r.t_matmul_s, "#000")]))
    validate(figures.step_breakdown({"matmul": 1e-3, "kv": 2e-3, "attention": 1e-4}, "per-phase"))
    validate(figures.pareto(r.tokens_per_s_per_user, r.tokens_per_s_per_chip, grid, r.fits, (1.0, 2.0, 64.0)))
