"""The presenter walkthrough: steps in the lecture's order, each drawn from the model, forward/back,
the step and presentation mode in the URL, the client-side sweep."""

from __future__ import annotations

import numpy as np
import pytest

from model import System, decode_step, presets, system_balance_batch
from tests.apptest_helpers import app, assert_clean, charts
from tests.figure_checks import validate
from ui import walkthrough as wk
from ui.view import View

H100 = presets.hardware_presets()["h100"]
LLAMA = presets.model_presets()["llama-3.1-70b"]


def _view(hw="h100", model="llama-3.1-70b", chips=8, batch=64.0, context=8192.0) -> View:
    s = System(presets.get("hardware", hw), presets.get("model", model)).with_(chips=chips)
    return View(s, batch, context, False, hw, model)


def test_steps_follow_the_lecture():
    keys = [s.key for s in wk.STEPS]
    # The order: floor → balance → fast mode → KV crossover → MoE → pipelining → scale-up → ...
    assert keys[:7] == ["floor", "balance", "fast", "kv", "moe", "pipeline", "scaleup"]
    # Video moments are chapter starts from reference/lecture.md: 00:31:59 (MoE), 00:47:02 (pipelining).
    by = {s.key: s for s in wk.STEPS}
    assert by["moe"].video_s == 31 * 60 + 59 and by["pipeline"].video_s == 47 * 60 + 2
    assert by["moe"].video_url == "https://youtu.be/xmkSf5IS-zw?t=1919"
    assert len({s.key for s in wk.STEPS}) == len(wk.STEPS)


@pytest.mark.parametrize("step", wk.STEPS, ids=lambda s: s.key)
@pytest.mark.parametrize("cfg", [dict(), dict(hw="lecture-gpu", model="lecture-deepseek", chips=64, batch=2048),
                                 dict(hw="gb200", model="deepseek-v3", chips=72, batch=1, context=1_000_000)],
                         ids=["h100-llama", "lecture", "gb200-long"])
def test_every_step_draws_a_valid_chart_with_an_equation_and_a_sentence(step, cfg):
    shown = step.build(_view(**cfg))
    validate(shown.fig)
    assert shown.latex and all(t.strip() for t in shown.latex)
    assert len(shown.sentence) > 40


def test_lecture_balance_batch_is_300_times_sparsity():
    # Lecture §2.2: B* = (F/bw) · sparsity = 300 × 8 = 2,400 for the lecture's GPU and DeepSeek.
    v = _view("lecture-gpu", "lecture-deepseek", chips=64, batch=2048)
    shown = wk.step_balance(v)
    assert "= 2{,}400" in shown.latex[0] or "= 2,400" in shown.latex[0]
    assert float(system_balance_batch(v.system, 0.0)) == pytest.approx(2400)
    assert "2.4k" in shown.sentence or "2,400" in shown.sentence


def test_floor_step_equation_has_todays_numbers():
    v = _view()
    shown = wk.step_floor(v)
    floor_ms = LLAMA.total_params * 2 / (8 * H100.hbm_bandwidth_bytes_per_s) * 1e3      # 141 GB / 26.8 TB/s
    assert f"{floor_ms:.3g}" in shown.latex[0] and f"{floor_ms:.3g} ms" in shown.sentence


def test_play_frames_run_along_the_curve():
    v = _view()
    shown = wk.step_floor(v)
    fig = shown.fig
    assert fig.frames and fig.layout.updatemenus
    grid = wk.batch_grid(64.0)
    t = decode_step(v.system, grid, 8192.0).t_step_s * 1e3
    xs = np.array([f.data[0].x[0] for f in fig.frames])
    ys = np.array([f.data[0].y[0] for f in fig.frames])
    assert xs[0] == 1 and xs[-1] == grid[-1] and np.all(np.diff(xs) > 0)
    assert np.allclose(ys, np.interp(xs, grid, t))
    sweep = fig.data[fig.frames[0].traces[0]]
    assert sweep.name == "sweep (B)"


def test_moe_step_uses_a_moe_model_when_the_sidebar_is_dense():
    shown = wk.step_moe(_view())
    assert "DeepSeek" in shown.sentence
    assert r"\lceil 256/8\rceil = 32" in shown.latex[0]     # 256 routed experts over an 8-GPU domain


# ---------------------------------------------------------------- the page

def test_page_steps_forward_and_back_and_the_url_follows():
    at = app(page="walkthrough")
    assert_clean(at)
    assert at.title[0].value.startswith("1. ")
    assert len(charts(at)) == 1
    at.button(key="wk_next").click().run()
    assert at.title[0].value.startswith("2. ") and at.query_params["wk_step"] == "2"
    at.button(key="wk_next").click().run()
    at.button(key="wk_prev").click().run()
    assert at.title[0].value.startswith("2. ")
    assert at.button(key="wk_prev").disabled is False


def test_link_opens_at_its_step_in_presentation_mode():
    n = len(wk.STEPS)
    at = app({"wk_step": str(n), "wk_present": "1"}, page="walkthrough")
    assert_clean(at)
    assert at.title[0].value.startswith(f"{n}. ")
    assert at.button(key="wk_next").disabled
    assert any("display: none" in h.proto.body for h in at.get("html"))


def test_every_step_runs_on_the_page():
    for k in range(1, len(wk.STEPS) + 1):
        at = app({"wk_step": str(k)}, page="walkthrough")
        assert_clean(at)
        assert len(charts(at)) == 1 and at.latex


def test_garbled_step_gives_a_notice_and_step_one():
    at = app({"wk_step": "zero"}, page="walkthrough")
    assert not at.exception
    assert any("'wk_step'" in w.value for w in at.warning)
    assert at.title[0].value.startswith("1. ")
