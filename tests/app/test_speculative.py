"""AppTest: the Speculative decoding page — clean at the defaults; its numbers, its equation and its
sentence agree with model/speculative.py at the sidebar's system; its dials live in the URL."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from numpy.testing import assert_allclose

from model import decode_step
from tests.app.helpers import (
    V1,
    arr,
    assert_clean,
    assert_notice,
    charts,
    clean_app,
    dot,
    fig,
    latex,
    metrics,
    page_text,
    trace,
    written,
)
from tests.ui.figures.checks import validate
from ui.figures.speculative import gain_vs_acceptance
from ui.format import seconds, usd
from ui.state import dials

# The H100 × Llama 3.1 70B link of version 1 (C = 8, B = 64, T = 8k) is bound by reading weights and KV;
# the same chip with Llama 3.1 8B at B = 4096 and T = 1k is compute-bound.
MEMORY_BOUND = {**V1}
COMPUTE_BOUND = {"chip": "h100", "model": "llama-3.1-8b", "c": "1", "b": "4096", "ctx": "1024", "v": "2"}
sd_app = partial(clean_app, page="speculative")


def test_defaults_one_chart_one_equation_nothing_written():
    at = sd_app(V1)
    assert at.title[0].value.startswith("Speculative decoding")
    assert len(charts(at)) == 1 and len(latex(at)) == 1
    assert (at.session_state["sd_k"], at.session_state["sd_a"]) == (3, 0.7)
    assert written(at) == {}
    a = np.linspace(0, 0.99, 5)
    validate(gain_vs_acceptance(a, 1 + a, 1 + a / 2, draft_tokens=3, where="here", now=(0.5, 1.25)).plotly)


def test_tokens_per_step_is_the_geometric_sum():
    at = sd_app({**V1, "sd_k": "3", "sd_a": "0.8"})
    # E = 1 + 0.8 + 0.64 + 0.512 = 2.952
    assert metrics(at)["Tokens per step E"] == "2.95"
    assert r"\frac{1 - 0.8^{4}}{1 - 0.8} = 2.95" in latex(at)[0].value
    f = fig(at, "Tokens per step")
    e = trace(f, "tokens per step")
    a = arr(e["x"])
    assert_allclose(arr(e["y"]), (1 - a**4) / (1 - a), rtol=1e-12)


def test_memory_bound_step_gains_the_full_e():
    at = sd_app({**MEMORY_BOUND, "sd_k": "3", "sd_a": "0.7"})
    view = at.session_state["_view"]
    plain = decode_step(view.system.with_(tokens_per_step=1.0), view.batch, view.context)
    # Four positions: t_matmul × 4 stays below t_weights + t_kv, so the step is unchanged.
    assert 4 * float(plain.t_matmul_s) < float(plain.t_weights_s + plain.t_kv_s)
    e = 1 + 0.7 + 0.49 + 0.343
    m = metrics(at)
    assert m["Step, k + 1 positions"] == seconds(float(plain.t_step_s))
    assert m["Speed-up per user"] == f"{e:.3g}×"
    assert m["Cost per million tokens"] == usd(float(plain.usd_per_mtok) / e)
    text = page_text(at, "markdown")
    assert "takes no longer than checking one" in text and f"full E = {e:.3g}" in text
    assert dot(fig(at, "Tokens per step"), "α = 0.70") == pytest.approx((0.7, e))


def test_compute_bound_step_breaks_even_where_e_equals_the_step_ratio():
    at = sd_app({**COMPUTE_BOUND, "sd_k": "3", "sd_a": "0.7"})
    view = at.session_state["_view"]
    plain = decode_step(view.system.with_(tokens_per_step=1.0), view.batch, view.context)
    t_spec = max(4 * float(plain.t_matmul_s), float(plain.t_weights_s + plain.t_kv_s))   # lecture mode
    ratio = t_spec / float(plain.t_step_s)
    assert 1.5 < ratio <= 4                               # compute-bound: the step grows
    e = 1 + 0.7 + 0.49 + 0.343
    m = metrics(at)
    assert m["Speed-up per user"] == f"{e / ratio:.3g}×"
    # Break-even: 1 + α + α² + α³ = ratio, solved here on a fine grid.
    grid = np.linspace(0, 1, 2_000_001)
    even = grid[np.argmin(np.abs(1 + grid + grid**2 + grid**3 - ratio))]
    text = page_text(at, "markdown")
    assert f"takes {ratio:.3g}× as long" in text and f"acceptance rate of {even:.2f}" in text


@pytest.mark.parametrize(("query", "name"), [({"sd_a": "2"}, "sd_a"), ({"sd_k": "zero"}, "sd_k"),
                                             ({"sd_k": "-1"}, "sd_k")])
def test_bad_dial_in_the_url_is_named_and_the_default_used(query, name):
    at = sd_app({**V1, **query})
    assert_notice(at, name)
    assert (at.session_state["sd_k"], at.session_state["sd_a"]) == (3, 0.7)
    assert name in dials.REGISTRY.dials


def test_moving_the_dials_writes_the_url():
    at = sd_app(V1)
    at.select_slider(key="sd_k").set_value(5).run()
    at.select_slider(key="sd_a").set_value(0.9).run()
    assert_clean(at)
    assert written(at) == {"sd_k": "5", "sd_a": "0.9"}
    assert metrics(at)["Tokens per step E"] == f"{(1 - 0.9**6) / (1 - 0.9):.3g}"     # 1 + 0.9 + … + 0.9^5
