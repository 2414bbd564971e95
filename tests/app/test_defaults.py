"""The first screen: the lecture's story at the defaults, the lecture's round numbers in one
click, sparsity as a slider, and links made under the old defaults still showing what they showed.

Expected values are worked from the preset figures by hand, not read back from the page's code:
B* = F·W / (2·Na·bw) = (F/bw) × (N_total/N_a) × (bytes/param)/2  (docs/design.md "Closed forms").
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from model import presets
from tests.app.helpers import app, arr, assert_clean, fig, latex, metrics


def _b_star_by_hand(chip: str, model: str, dtype: str, bytes_per_param: float) -> float:
    hw, m = presets.hardware_presets()[chip], presets.model_presets()[model]
    F = hw.flops(dtype)
    return F / hw.hbm_bandwidth_bytes_per_s * (m.total_params / m.active_params) * bytes_per_param / 2


def _latex_result(at, start: str) -> str:
    eq = next(e.value for e in latex(at) if e.value.strip("$\n ").startswith(start))
    return eq.rsplit("=", 1)[1].strip("$\n ")


def _shape_xs(f: dict) -> list[float]:
    return [s["x0"] for s in f["layout"].get("shapes", []) if s.get("type") == "line" and s["x0"] == s["x1"]]


def test_fresh_screen_is_a_blackwell_rack_serving_deepseek_at_fp8_with_b_star_marked():
    at = app()
    assert_clean(at)
    assert dict(at.query_params) == {}                 # defaults stay out of the URL
    caption = at.caption[0].value
    assert caption.startswith("NVIDIA GB200 NVL72") and "DeepSeek-V3" in caption
    assert "weights fp8, KV fp8, compute fp8" in caption and "C = 72" in caption
    # GB200: 5.0e15 fp8 FLOP/s, 8.0e12 B/s (F/bw = 625); DeepSeek-V3 671B/37B (18.14); fp8 = 1 byte/param:
    # 625 × 18.135 × 1/2 = 5,667.
    b_star = _b_star_by_hand("gb200", "deepseek-v3", "fp8", 1.0)
    assert b_star == pytest.approx(5667.2, rel=1e-3)
    assert _latex_result(at, "B^* =") == f"{b_star:,.0f}".replace(",", "{,}")
    # Both batch charts mark it (the lecture's B*, KV ignored) beside B*(T) at the default context.
    for title in ("Latency per token", "Cost per million tokens"):
        f = fig(at, title)
        assert any(np.isclose(x, b_star) for x in _shape_xs(f)), title
        labels = [a["text"] for a in f["layout"]["annotations"]]
        assert f"B* = {b_star:,.0f} (KV ignored)" in labels
        assert any(t.startswith("B*(T) = ") for t in labels)
    # B*(T) exists at the default batch and context (the metric is a number, not "none").
    assert re.fullmatch(r"[\d,]+", metrics(at)["Balance batch B*(T)"])


def test_the_lecture_round_numbers_button_gives_exactly_300_times_8():
    at = app()
    next(b for b in at.button if "lecture's round numbers" in b.label).click().run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="chip").value == "lecture-gpu"
    assert at.sidebar.selectbox(key="model").value == "lecture-deepseek"
    # Lecture GPU: F/bw = 300 at bf16; lecture DeepSeek: sparsity 8; bf16 = 2 bytes/param: 300 × 8 × 2/2.
    assert _b_star_by_hand("lecture-gpu", "lecture-deepseek", "bf16", 2.0) == pytest.approx(2400)
    assert _latex_result(at, "B^* =") == "2{,}400"
    assert "300 \\times 8 \\times" in next(e.value for e in latex(at) if "B^* =" in e.value)


def test_sparsity_is_a_log_slider_with_preset_and_in_the_url():
    at = app()
    sp = at.sidebar.select_slider(key="sp")
    assert sp.value is None                                     # "preset" is the first position
    assert sp.options[0].startswith("preset")
    assert list(sp.options[1:]) == ["1", "1.5", "2", "3", "4", "6", "8", "12", "16", "24", "32", "48", "64"]
    sp.set_value(8).run()
    assert_clean(at)
    # Sparsity 8 on the default system: 625 × 8 × 1/2 = 2,500.
    assert _latex_result(at, "B^* =") == "2{,}500"
    # From a link, and an off-step value from an older link is kept as it was.
    at = app({"sp": "8", "v": "2"})
    assert at.sidebar.select_slider(key="sp").value == 8
    at = app({"sp": "2.5", "v": "2"})
    assert at.sidebar.select_slider(key="sp").value == 2.5
    assert _latex_result(at, "B^* =") == f"{625 * 2.5 / 2:,.0f}".replace(",", "{,}")


def test_a_link_from_before_the_new_defaults_shows_what_it_showed():
    # A link made under version 1 named only its non-default dials: here B = 128. Then the defaults were
    # H100 × Llama 3.1 70B at bf16, T = 8k, C = auto (8).
    old = app({"b": "128"})
    assert_clean(old)
    assert old.caption[0].value.startswith("NVIDIA H100 SXM5 80GB × Llama 3.1 70B · C = 8 (auto) · "
                                           "weights bf16, KV bf16, compute bf16 · B = 128, T = 8k")
    # H100 bf16: 989e12 / 3.35e12 ≈ 295; Llama 70B dense: sparsity 1; 2 bytes/param: ≈ 295.
    assert _latex_result(old, "B^* =") == f"{_b_star_by_hand('h100', 'llama-3.1-70b', 'bf16', 2.0):,.0f}"
    # The same parameter in a version-2 link means today's defaults for everything else.
    new = app({"b": "128", "v": "2"})
    assert new.caption[0].value.startswith("NVIDIA GB200 NVL72")
    # Compare: an old link had no pinned configs; a fresh one pins two more chip generations.
    def configs(at) -> set[str]:
        return {t["legendgroup"][:2] for t in fig(at, "Cost per million tokens")["data"] if config_group(t)}
    assert configs(app({"b": "64"}, page="compare")) == {"1:"}
    assert configs(app(page="compare")) == {"1:", "2:", "3:"}


def test_a_garbled_link_version_is_named_and_today_s_defaults_apply():
    at = app({"v": "banana", "b": "128"})
    assert_clean(at)
    assert any("'v'" in w.value and "banana" in w.value for w in at.warning)
    assert at.caption[0].value.startswith("NVIDIA GB200 NVL72")


def config_group(trace: dict) -> bool:
    """Whether a Compare trace is in a configuration's legend group (not one ui.figures.plot.side_by_side gives a
    legend entry shared by the two panels, such as "dotted: does not fit in HBM")."""
    return bool(trace.get("legendgroup")) and not trace["legendgroup"].startswith("panel:")


def test_compare_opens_on_three_chip_generations_of_the_same_model():
    def groups(at) -> set[str]:
        return {t["legendgroup"] for t in fig(at, "Cost per million tokens")["data"] if config_group(t)}
    at = app(page="compare")
    assert_clean(at)
    g = groups(at)
    assert {x.split(" × ")[0] for x in g} == {"1: gb200", "2: h200", "3: vera-rubin"}
    assert all(" × deepseek-v3, fp8/fp8/fp8" in x for x in g)
    # Switching a default pin off is carried in the link as "none" and reads back as off.
    at = app({"cmp_3": "none", "v": "2"}, page="compare")
    assert_clean(at)
    assert {x.split(" × ")[0] for x in groups(at)} == {"1: gb200", "2: h200"}


def test_every_page_makes_its_point_at_the_defaults():
    moe = app(page="moe")
    assert_clean(moe)
    assert not any("dense model" in i.value for i in [*moe.info, *moe.warning])
    scale = app(page="scale-up")
    assert_clean(scale)
    assert "C = 72" in scale.caption[0].value
    # The KV-cache chart's current context is the default 2k, on a rack of 72.
    kv = app(page="kv-cache")
    assert_clean(kv)
    assert "T = 2k" in kv.caption[0].value
    f = fig(app(), "Latency per token")
    assert arr(f["data"][-1]["x"]).size > 0
