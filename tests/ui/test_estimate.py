"""ui/estimate.py's caption: the fitted figures it states come from the fit summary, and it says where attention
runs when the compute format is faster than bf16."""

from __future__ import annotations

from model import calibrate as cal
from model import presets
from model.roofline import System
from model.specs import Deployment, Precision
from ui import estimate


def _system(hw: str, model: str, compute: str, kv: str = "fp8") -> System:
    return System(presets.get("hardware", hw), presets.get("model", model),
                  Precision(weights=compute, kv=kv, compute=compute), Deployment(chips=8))


def test_the_caption_states_the_fitted_terms_and_attention_at_the_bf16_peak():
    e = cal.built_in_summary().efficiency
    text = estimate.caption(_system("b200", "deepseek-v3", "fp4"))
    assert f"dense compute at {100 * e.compute:.3g} %" in text
    # B200: fp4 9 / bf16 2.25 PFLOP/s per GPU (NVIDIA DGX B200 datasheet) — attention at a quarter of the fp4 peak.
    assert f"attention at {100 * e.compute:.3g} % of the bf16 peak (1/4 of the fp4 peak)" in text
    bf16 = estimate.caption(_system("h100", "llama-3.1-70b", "bf16", kv="bf16"))
    assert "attention at" not in bf16 and "no routed experts in this model" in bf16
