"""The presenter walkthrough's steps (ui/present/walkthrough.py): in the lecture's order, each drawn from the
model with today's numbers, the client-side sweep.  The page itself: tests/app/test_walkthrough.py."""

from __future__ import annotations

import re

import numpy as np
import pytest

import views
from model import decode_step, presets, system_balance_batch
from tests.ui.figures.checks import validate
from tests.ui.present.helpers import view
from ui.present import walkthrough as wk

H100 = presets.hardware_presets()["h100"]
LLAMA = presets.model_presets()["llama-3.1-70b"]


def test_steps_follow_the_lecture():
    keys = [s.key for s in wk.STEPS]
    # The order: floor → balance → fast mode → KV crossover → MoE → pipelining → scale-up →
    # over-training → prices decoded → memory tiers → context limits.
    assert keys == ["floor", "balance", "fast", "kv", "moe", "pipeline", "scaleup",
                    "training", "prices", "tiers", "context"]
    # Video moments are chapter starts (docs/design.md "The lecture's chapters"): 00:31:59 (MoE), 00:47:02 (pipelining),
    # 01:18:49 (over-training), 01:32:52 (long-context memory costs from API pricing).
    by = {s.key: s for s in wk.STEPS}
    assert by["moe"].video_s == 31 * 60 + 59 and by["pipeline"].video_s == 47 * 60 + 2
    assert by["moe"].video_url == "https://youtu.be/xmkSf5IS-zw?t=1919"
    assert by["training"].video_s == 3600 + 18 * 60 + 49
    assert {by[k].video_s for k in ("prices", "tiers", "context")} == {3600 + 32 * 60 + 52}
    assert [by[k].page for k in ("training", "prices", "tiers", "context")] == [
        "training", "prices", "memory-tiers", "context"]
    assert {s.page for s in wk.STEPS} <= set(views.BY_NAME)       # every chapter link names a page
    assert len({s.key for s in wk.STEPS}) == len(wk.STEPS)


@pytest.mark.parametrize("step", wk.STEPS, ids=lambda s: s.key)
@pytest.mark.parametrize("cfg", [dict(), dict(hw="lecture-gpu", model="lecture-deepseek", chips=64, batch=2048),
                                 dict(hw="gb200", model="deepseek-v3", chips=72, batch=1, context=1_000_000)],
                         ids=["h100-llama", "lecture", "gb200-long"])
def test_every_step_draws_a_valid_chart_with_an_equation_and_a_sentence(step, cfg):
    shown = step.build(view(**cfg))
    validate(shown.fig)
    assert shown.latex and all(t.strip() for t in shown.latex)
    assert len(shown.sentence) > 40
    # the sentence and the note are markdown: a bare '$' would open inline LaTeX and swallow the text
    assert not re.search(r"(?<!\\)\$", shown.sentence + shown.note)
    if step.play:                                   # a step that offers a sweep has the ▶ button and frames
        assert shown.fig.frames and shown.fig.layout.updatemenus


def test_lecture_balance_batch_is_300_times_sparsity():
    # Lecture §2.2: B* = (F/bw) · sparsity = 300 × 8 = 2,400 for the lecture's GPU and DeepSeek.
    v = view("lecture-gpu", "lecture-deepseek", chips=64, batch=2048)
    shown = wk.step_balance(v)
    assert "= 2{,}400" in shown.latex[0] or "= 2,400" in shown.latex[0]
    assert float(system_balance_batch(v.system, 0.0)) == pytest.approx(2400)
    assert "2.4k" in shown.sentence or "2,400" in shown.sentence


def test_floor_step_equation_has_todays_numbers():
    v = view()
    shown = wk.step_floor(v)
    floor_ms = LLAMA.total_params * 2 / (8 * H100.hbm_bandwidth_bytes_per_s) * 1e3      # 141 GB / 26.8 TB/s
    assert shown.latex[0].startswith(r"t_{step} = ")                                     # the step at B = 64
    assert shown.latex[1].endswith(f"= {floor_ms:.3g}\\,\\text{{ms}}") and f"{floor_ms:.3g} ms" in shown.sentence


def test_play_frames_run_along_the_curve():
    v = view()
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


def test_balance_step_says_so_when_nothing_fits():
    # Llama 3.1 70B at bf16 on one H100: 141 GB of weights in 80 GB of HBM — no batch fits.
    shown = wk.step_balance(view(chips=1))
    assert "not even B = 1 fits" in shown.sentence and "nan" not in shown.sentence


def test_moe_step_uses_a_moe_model_when_the_sidebar_is_dense():
    shown = wk.step_moe(view())
    assert "DeepSeek" in shown.sentence
    assert r"\Big\lceil \frac{256}{8} \Big\rceil = 32" in shown.latex[0]     # 256 routed experts over an 8-GPU domain


def test_training_step_is_the_lectures_130x_over_training():
    # Lecture §2.11: 500M tok/s ÷ 10 models = 50M tok/s × 60 days × 86,400 s = 2.592e14 tokens served; equal
    # costs with decode at 1/3 MFU: 6·D_pre = 2·3·D_inf ⇒ D_pre = 2.592e14; Chinchilla 20 × 100B = 2e12 ⇒ 129.6×.
    v = view()
    shown = wk.step_training(v)
    assert r"= 259\,\text{T}\ \text{tokens}" in shown.latex[0]
    assert r"= 130\times" in shown.latex[1]
    assert "259T tokens" in shown.sentence and "130×" in shown.sentence
    # the sidebar's Llama 3.1 70B (70.6B active): 2.592e14 / (20 × 70.6e9) = 183.6×
    assert "(70.6B active) would be 184× over-trained" in shown.sentence
    # pretraining 6 · 100e9 · 2.592e14 = 1.555e26 FLOP on H100 at 989.4 TFLOP/s (bf16, MFU 1) = 1.82M chip-days
    assert "1.82M chip-days" in shown.sentence
    # the sweep runs along the 100B line: factor ∝ rate, 130× at 500M tok/s
    fig = shown.fig
    xs = np.array([f.data[0].x[0] for f in fig.frames])
    ys = np.array([f.data[0].y[0] for f in fig.frames])
    assert np.allclose(ys, xs / 10 * 60 * 86_400 / (20 * 100e9))


def test_prices_step_reads_1667_bytes_from_the_gemini_tier():
    # Lecture §2.5: kv = 2·Na / ((F/bw)·T×) = 2 × 100e9 / (600 × 200,000) = 1,666.7 B/token ("almost two
    # kilobytes"); architecture 1 layer × 2 × 128 × 8 heads × 1 B = 2,048 B.
    shown = wk.step_prices(view())
    assert r"= 1{,}667\ \text{B/token}\\ " in shown.latex[0]
    assert r"= 2{,}048\ \text{B/token}\end{aligned}" in shown.latex[0]
    assert "1,667 B per token" in shown.sentence and "2,048 B" in shown.sentence
    # Gemini 3 Pro's tier (presets/prices.yaml): $2 → $4 input, $12 → $18 output above 200k
    assert "200,000 tokens" in shown.sentence and "input 2×" in shown.sentence and "output 1.5×" in shown.sentence
    assert "uncertain" in shown.note
    # crossover of the architecture's 2,048 B: 2e11 / (600 × 2048) = 162,760 tokens
    assert any("163k" in (tr.name or "") for tr in shown.fig.data)


def test_tiers_step_drain_times_and_the_cost_of_a_five_minute_hold():
    v = view()
    shown = wk.step_tiers(v)
    # drain = capacity / bandwidth: H100 80 GB / 3.35 TB/s = 23.9 ms; DDR5 1.536 TB / 576 GB/s = 2.67 s;
    # NVMe 15.36 TB / 14 GB/s = 1,097 s = 18.3 min; HDD 24 TB / 285 MB/s = 84,211 s = 23.4 h (presets/tiers.yaml)
    names = [t.name for t in shown.fig.data]                                # the legend carries them
    for name, drain in (("HBM", "23.9 ms"), ("DDR", "2.67 s"), ("flash", "18.3 min"), ("disk", "23.4 h")):
        assert f"{name} (drain {drain})" in names
    # Llama 3.1 70B KV: 80 layers × 2 × 8 KV heads × 128 × 2 B = 327,680 B per token. Held 300 s in flash and
    # read back: (327,680/15.36e12 × 300 + 327,680/14e9) × $0.044/3600 s = $3.64e-10 per token.
    flash = (327_680 / 15.36e12 * 300 + 327_680 / 14e9) * 0.044 / 3600
    assert f"{flash / 1e-10:.3g}\\times 10^{{-10}}" in shown.latex[0]
    # recompute: 2 × Na / F × $/s
    rec = 2 * LLAMA.active_params / H100.flops("bf16") * H100.price_usd_per_hour / 3600
    assert f"{rec / 1e-7:.3g}\\times 10^{{-7}}" in shown.latex[0]
    assert "cheapest in flash" in shown.sentence and f"{rec / flash:.3g}× less" in shown.sentence
    assert "\\$0.117/Mtok" in shown.sentence


def test_context_step_crossover_is_2_na_bw_over_f_kv():
    # H100 + Llama 3.1 70B (bf16, ideal roofline): T_c = 2·Na·bw / (F·kv) with kv = 327,680 B per token
    shown = wk.step_context(view())
    tc = 2 * LLAMA.active_params * 3.35e12 / (989.4e12 * 327_680)
    assert f"= {tc:,.0f}".replace(",", "{,}") in shown.latex[0] and "1{,}459" in shown.latex[0]
    assert f"= {tc / 0.1:,.0f}".replace(",", "{,}") in shown.latex[2]          # T_c(f) = T_c/f, f = 0.1
    # the lecture's frontier model on the lecture GPU: 2 × 100e9 / (300 × 2,048 × 2 B) = 162,760 tokens; its
    # DeepSeek round numbers: MLA KV 61 × (512 + 64) × 2 B = 70,272 B ⇒ 2 × 87.5e9 × 8e12 / (2.4e15 × 70,272) = 8,301
    shown = wk.step_context(view("lecture-gpu", "lecture-deepseek", chips=64, batch=2048))
    assert "= 162{,}760" in shown.latex[1] and "≈ 163k on this chip" in shown.sentence
    assert "= 8{,}301" in shown.latex[0] and "≈ 8.3k tokens" in shown.sentence
