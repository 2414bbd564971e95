"""AppTest: the Rematerialisation page — clean at defaults and at dial extremes; the numbers it shows equal
model/remat.py (and hand-worked Korthikanti figures); page dials seeded from the URL; bad parameters reported."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from model import presets, remat
from tests.app.helpers import (
    V1,
    arr,
    assert_clean,
    assert_notice,
    charts,
    clean_app,
    fig,
    latex,
    metric_list,
    metrics,
    written,
)
from ui.format import bytes_

rm_app = partial(clean_app, page="remat")


def test_defaults_clean_diagram_charts_equations():
    at = rm_app(V1)
    assert at.title[0].value.startswith("Rematerialisation")
    titles = [f["layout"]["title"]["text"] for f in charts(at)]
    assert titles[0].startswith("A Feistel step") and len(titles) == 3
    assert len(latex(at)) == 5
    assert r"(y + f(x),\ x)" in latex(at)[0].value and r"z - f(x)" in latex(at)[1].value
    assert written(at) == {}
    assert (at.session_state["rm_seq"], at.session_state["rm_mb"], at.session_state["rm_tp"],
            at.session_state["rm_attn"]) == (4096, 1, 1, "flash")
    assert any("Korthikanti" in c.value for c in at.caption)             # the assumption, with its source
    assert any("mirror image" in h.value for h in at.subheader)


def test_llama_70b_at_4k_by_hand():
    at = rm_app(V1)
    m = metrics(at)
    # Llama 3.1 70B: L = 80, h = 8192. A = 34 · 4096 · 8192 = 1.14 GB; x = 2 · 4096 · 8192 = 67.1 MB
    assert m["Store all activations"] == bytes_(80 * 34 * 4096 * 8192) == "91.3 GB"
    assert m["√L checkpoints (k = 9)"] == bytes_(9 * 2 * 4096 * 8192 + 9 * 34 * 4096 * 8192) == "10.9 GB"
    assert m["Reversible (RevNet)"] == bytes_(4 * 2 * 4096 * 8192 + 34 * 4096 * 8192) == "1.41 GB"
    assert m["Extra compute for either"] == "+33 %"
    store = next(x for x in metric_list(at) if x.label == "Store all activations")
    assert store.delta.startswith("exceeds")                              # 91.3 GB > H100's 80 GB
    tex = latex(at)[2].value
    assert "4{,}096" in tex and "8192" in tex and "34" in tex and "1.14" in tex and "67.1" in tex
    assert "91.3" in latex(at)[3].value and "10.9" in latex(at)[3].value and "1.41" in latex(at)[3].value
    # forward: 2 · 70.6e9 · 4096 + 2.62e6 · 4096 · 4097/2 = 578.3 + 22.0 = 600 TFLOP; step 1.8 → 2.4 PFLOP
    assert "600" in latex(at)[4].value and "1.8" in latex(at)[4].value and "2.4" in latex(at)[4].value


def test_depth_chart_equals_the_model():
    at = rm_app(V1)
    f = fig(at, "Activation memory against depth")
    A, x = 34 * 4096 * 8192, 2 * 4096 * 8192
    store = next(t for t in f["data"] if t.get("name") == "store all")
    L = arr(store["x"])
    assert L[0] == 1 and L[-1] == 128                                    # max(128, 1.5 · 80)
    m = remat.activation_memory(L, A, x)
    assert np.allclose(arr(store["y"]), m.store_all / 1e9)
    rev = next(t for t in f["data"] if t.get("name") == "reversible (RevNet)")
    assert np.allclose(arr(rev["y"]), (4 * x + A) / 1e9)               # flat in depth
    trade = fig(at, "What each strategy costs")
    fwd = next(t for t in trade["data"] if t.get("name") == "forward")
    # 600 TFLOP on one H100 at 989.4 TFLOP/s: 0.607 s
    f_fwd = float(remat.forward_flops(70.6e9, 4096, 1, 4 * 64 * 128 * 80))
    assert np.allclose(arr(fwd["x"]), f_fwd / 989.4e12)
    rec = next(t for t in trade["data"] if t.get("name") == "recompute")
    assert np.allclose(arr(rec["x"]), [0, f_fwd / 989.4e12, f_fwd / 989.4e12, f_fwd / 989.4e12])


def test_url_seeds_the_dials_stored_scores_and_tensor_parallel():
    at = rm_app({"rm_seq": "8192", "rm_mb": "2", "rm_tp": "8", "rm_attn": "stored"})
    assert written(at) == {"rm_seq": "8192", "rm_mb": "2", "rm_tp": "8", "rm_attn": "stored"}
    # A = 8192 · 2 · 8192 · (34 + 5 · 64 · 8192 / 8192) / 8 = 8192·2·8192·354/8 = 5.94 GB; L·A = 475 GB
    A = 8192 * 2 * 8192 * (34 + 5 * 64) / 8
    assert metrics(at)["Store all activations"] == bytes_(80 * A) == "475 GB"
    assert r"\frac{5 \times 64 \times 8{,}192}{8192}" in latex(at)[2].value


@pytest.mark.parametrize("query", [
    {"rm_seq": "131072", "rm_mb": "64", "rm_tp": "72", "rm_attn": "stored"},
    {"rm_seq": "512", "rm_mb": "1", "rm_tp": "72", "model": "llama-3.1-8b"},
    {"model": "deepseek-v3", "chip": "gb200", "ctx": "10000000"},
    {"model": "gpt-oss-120b", "chip": "tpu-v5e"},
])
def test_extremes_run_clean(query):
    at = rm_app(query)
    assert len(charts(at)) == 3
    assert all(v for v in metrics(at).values())


def test_moe_model_says_a_is_a_lower_bound():
    at = rm_app({"model": "deepseek-v3"})
    assert presets.model_presets()["deepseek-v3"].is_moe
    assert any("lower bound" in c.value for c in at.caption)
    # DeepSeek-V3: L = 61, h = 7168: 61 · 34 · 4096 · 7168 = 60.9 GB
    assert metrics(at)["Store all activations"] == bytes_(61 * 34 * 4096 * 7168)


@pytest.mark.parametrize("query, name", [({"rm_seq": "5000"}, "rm_seq"), ({"rm_mb": "zero"}, "rm_mb"),
                                         ({"rm_tp": "3"}, "rm_tp"), ({"rm_attn": "paged"}, "rm_attn")])
def test_bad_page_parameters_give_a_notice_and_the_default(query, name):
    at = rm_app(query)
    assert_notice(at, name)
    assert metrics(at)["Store all activations"] == "91.3 GB"


def test_moving_the_dials_redraws_and_writes_the_url():
    at = rm_app(V1)
    at.select_slider(key="rm_seq").set_value(16384).run()
    at.select_slider(key="rm_tp").set_value(8).run()
    at.radio(key="rm_attn").set_value("stored").run()
    assert_clean(at)
    # A = 16384 · 8192 · (34 + 5 · 64 · 16384/8192) / 8 = 16384 · 8192 · 674 / 8 = 11.3 GB; × 80 = 905 GB
    assert metrics(at)["Store all activations"] == bytes_(80 * 16384 * 8192 * 674 / 8) == "905 GB"
    assert written(at) == {"rm_seq": "16384", "rm_tp": "8", "rm_attn": "stored"}
