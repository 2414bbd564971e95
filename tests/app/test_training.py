"""AppTest: the Training tokens page — the lecture's numbers at defaults, agreement with `python -m model
overtrain`, dial extremes, URL seeding, bad parameters, and the loss-fit section against model calls."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from model.training import (
    BESIROGLU_FIT,
    CHINCHILLA_FIT,
    chinchilla_loss,
    cost_optimal_size,
    overtrain,
    size_for_quality,
)
from tests.app.helpers import (
    V1,
    arr,
    assert_clean,
    assert_notice,
    charts,
    clean_app,
    fig,
    latex,
    metrics,
    trace,
    written,
)
from tests.cli.helpers import run_json
from ui.format import number

tt_app = partial(clean_app, page="training")


def test_defaults_are_the_lectures_numbers_and_the_clis(capsys):
    at = tt_app(V1)
    assert at.title[0].value.startswith("Training tokens")
    assert len(charts(at)) == 4 and len(latex(at)) == 2
    assert written(at) == {}
    m = metrics(at)
    # 500M tok/s ÷ 10 models × 60 d × 86,400 s = 2.592e14; 20 × 100B = 2e12; 2.592e14 / 2e12 = 129.6
    assert m["Inference D_inf [tokens]"] == "259T" == m["Pretraining D_pre [tokens]"]
    assert m["RL D_RL [tokens]"] == "173T"                   # 2.592e14 / 1.5
    assert m["Chinchilla 20·N_active [tokens]"] == "2T"
    assert m["Over-training factor"] == "130×"
    assert m["Tokens per parameter"] == "2,592"
    assert m["Compute per phase [FLOP]"] == "1.56e+26"              # 6 · 1e11 · 2.592e14
    # `python -m model overtrain` with the same per-model inputs prints the same numbers
    d = run_json(capsys, "overtrain", "--active-params", "100e9", "--inference-tokens-per-s", "50e6", "--days", "60")
    assert m["Inference D_inf [tokens]"] == number(d['inference_tokens'])
    assert m["Pretraining D_pre [tokens]"] == number(d['pretrain_tokens'])
    assert m["RL D_RL [tokens]"] == number(d['rl_tokens'])
    assert m["Chinchilla 20·N_active [tokens]"] == number(d['chinchilla_tokens'])
    assert m["Over-training factor"] == f"{d['overtrain_factor']:.3g}×"
    tex = latex(at)[0].value
    assert r"\frac{500\,\text{M}}{10}\times 60" in tex and "259" in tex and "130" in tex
    # bars: the four token counts as the model gives them
    bars = fig(at, "Tokens per phase")["data"][0]
    assert np.allclose(arr(bars["y"]), [2e12, 2.592e14, 1.728e14, 2.592e14])


def test_fit_section_at_defaults_equals_model_calls():
    at = tt_app(V1)
    m = metrics(at)
    L = float(chinchilla_loss(100e9, 2.592e14))                   # the heuristic's own model's loss
    opt = cost_optimal_size(L, 2.592e14)
    assert m["Target loss [nats/token]"] == f"{L:.4g}" == "1.802"
    assert m["Cost-optimal size N* [params]"] == number(float(opt.params)) == "108B"
    assert m["…trained on D* [tokens]"] == number(float(opt.pretrain_tokens)) == "216T"
    assert m["Pretraining share at N*"] == "45.5 %"
    assert m["Heuristic's model [params]"] == "100B"
    assert m["Heuristic's extra cost"] == "+0.719 %"
    f = fig(at, "Cost of loss 1.802")
    tot = trace(f, "total")
    x = arr(tot["x"])
    assert np.allclose(arr(tot["y"]), size_for_quality(L, 2.592e14, x).total_flops)
    assert trace(f, "cost-optimal")["x"][0] == pytest.approx(float(opt.params))
    assert trace(f, "heuristic")["x"][0] == pytest.approx(100e9)
    assert r"N^* = 108\text{B}" in latex(at)[1].value and "406.4" in latex(at)[1].value
    assert not at.info                                            # over-trained side: no under-training note


def test_url_seeds_every_dial_and_agrees_with_the_cli(capsys):
    q = {"tt_na": "400", "tt_rate": "2000", "tt_days": "30", "tt_models": "4", "tt_crl": "6", "tt_irl": "1",
         "tt_iinf": "2"}
    at = tt_app(q)
    ss = at.session_state
    assert (ss["tt_na"], ss["tt_rate"], ss["tt_days"], ss["tt_models"]) == (400.0, 2000.0, 30.0, 4.0)
    assert (ss["tt_crl"], ss["tt_irl"], ss["tt_iinf"]) == (6.0, 1.0, 2.0)
    assert written(at) == q
    # per model 2e9/4 = 5e8 tok/s × 30 d × 86,400 = 1.296e15; 6·D_pre = 2·2·D_inf → D_pre = 8.64e14;
    # 6·1·D_RL = 4·D_inf → D_RL = 8.64e14; Chinchilla 8e12; factor 108
    m = metrics(at)
    assert m["Inference D_inf [tokens]"] == "1.30e+15"
    assert m["Pretraining D_pre [tokens]"] == m["RL D_RL [tokens]"] == "864T"
    assert m["Chinchilla 20·N_active [tokens]"] == "8T"
    assert m["Over-training factor"] == "108×"
    d = run_json(capsys, "overtrain", "--active-params", "400e9", "--inference-tokens-per-s", "5e8", "--days", "30",
                 "--c-rl", "6", "--ineff-rl", "1", "--ineff-inf", "2")
    assert d["pretrain_tokens"] == pytest.approx(8.64e14) and d["overtrain_factor"] == pytest.approx(108)
    assert m["Over-training factor"] == f"{d['overtrain_factor']:.3g}×"
    assert m["RL D_RL [tokens]"] == number(d['rl_tokens'])


@pytest.mark.parametrize("query", [
    {"tt_na": "0.1", "tt_rate": "0.001", "tt_days": "1", "tt_models": "1000", "tt_crl": "2", "tt_irl": "1",
     "tt_iinf": "1"},
    {"tt_na": "10000", "tt_rate": "1000000", "tt_days": "3650", "tt_models": "1", "tt_crl": "6", "tt_irl": "20",
     "tt_iinf": "20"},
    {"tt_tgt": "custom", "tt_loss": "5", "tt_fit": "besiroglu"},
    {"tt_tgt": "chinchilla", "tt_na": "10000"},
])
def test_extremes_draw_cleanly_and_equal_the_model(query):
    at = tt_app(query)
    assert len(charts(at)) == 4
    ss = at.session_state
    o = overtrain(ss["tt_na"] * 1e9, ss["tt_rate"] * 1e6, ss["tt_days"], models=ss["tt_models"],
                  c_rl=ss["tt_crl"], ineff_rl=ss["tt_irl"], ineff_inf=ss["tt_iinf"])
    m = metrics(at)
    assert m["Over-training factor"] == f"{float(o.overtrain_factor):.3g}×"
    assert m["Inference D_inf [tokens]"] == number(float(o.inference_tokens))
    assert "—" not in m["Cost-optimal size N* [params]"]
    for f in charts(at):                                         # units on every axis
        assert "[" in f["layout"]["yaxis"]["title"]["text"]


def test_chinchilla_target_and_the_refit():
    at = tt_app({"tt_tgt": "chinchilla", "tt_fit": "besiroglu"})
    f = BESIROGLU_FIT
    L = f["E"] + f["A"] / 100e9 ** f["alpha"] + f["B"] / 2e12 ** f["beta"]     # 100B on 20 × 100B tokens
    m = metrics(at)
    assert m["Target loss [nats/token]"] == f"{L:.4g}"
    assert m["Cost-optimal size N* [params]"] == number(float(cost_optimal_size(L, 2.592e14, fit=f).params))
    assert "2085.43" in latex(at)[1].value and "Besiroglu" in " ".join(c.value for c in at.caption)


def test_small_volume_shows_the_under_training_note():
    # 5M tok/s ÷ 10 × 60 d = 2.592e12 tokens; target: 100B on 2T (loss 1.912). Chinchilla-optimal for that
    # loss under Hoffmann's constants trains ~41B on ~4.0e12 tokens > 2.592e12: equal costs under-train.
    at = tt_app({"tt_rate": "5", "tt_tgt": "chinchilla"})
    assert any("under-trained" in i.value for i in at.info)
    assert metrics(at)["Heuristic's extra cost"] != "—"          # reachable, just a poor guide


def test_unreachable_target_is_a_message_not_a_traceback():
    at = tt_app({"tt_tgt": "custom", "tt_loss": "1.75", "tt_fit": "besiroglu"})   # E = 1.8172 > 1.75
    assert any("not reachable" in w.value and "1.8172" in w.value for w in at.warning)
    assert len(charts(at)) == 2                                  # the lecture's part still draws
    assert metrics(at)["Over-training factor"] == "130×"
    at = tt_app({"tt_tgt": "custom", "tt_loss": "1.75"})         # Hoffmann: E = 1.69 < 1.75, reachable
    assert len(charts(at)) == 4 and not at.warning


@pytest.mark.parametrize("query, name", [({"tt_na": "abc"}, "tt_na"), ({"tt_crl": "9"}, "tt_crl"),
                                         ({"tt_models": "0"}, "tt_models"), ({"tt_tgt": "best"}, "tt_tgt"),
                                         ({"tt_fit": "kaplan"}, "tt_fit"), ({"tt_days": "nan"}, "tt_days")])
def test_garbled_parameters_give_a_notice_and_the_default(query, name):
    at = tt_app(query)
    assert_notice(at, name)
    assert len(charts(at)) == 4
    assert metrics(at)["Over-training factor"] == "130×"          # the defaults drew


def test_moving_dials_redraws_as_the_model_says_and_writes_the_url():
    at = tt_app(V1)
    at.slider(key="tt_iinf").set_value(6.0).run()
    at.radio(key="tt_fit").set_value("besiroglu").run()
    assert_clean(at)
    # 6·D_pre = 2·6·D_inf → D_pre = 2·2.592e14 = 5.184e14; factor 259.2
    m = metrics(at)
    assert m["Pretraining D_pre [tokens]"] == "518T" and m["Over-training factor"] == "259×"
    o = overtrain(100e9, 500e6, 60, models=10, ineff_inf=6.0)
    assert np.allclose(arr(fig(at, "Tokens per phase")["data"][0]["y"]),
                       [2e12, float(o.pretrain_tokens), float(o.rl_tokens), float(o.inference_tokens)])
    L = float(chinchilla_loss(100e9, float(o.pretrain_tokens), BESIROGLU_FIT))
    opt = cost_optimal_size(L, float(o.inference_tokens), ineff_inf=6.0, fit=BESIROGLU_FIT)
    assert m["Cost-optimal size N* [params]"] == number(float(opt.params))
    assert written(at) == {"tt_iinf": "6", "tt_fit": "besiroglu"}
    assert float(chinchilla_loss(100e9, 5.184e14, CHINCHILLA_FIT)) != pytest.approx(L)   # the fit mattered
