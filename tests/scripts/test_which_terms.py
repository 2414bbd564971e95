"""scripts/which_terms.py: the variants of docs/prediction.md's "Which terms" table change what they say and
leave the model as it was; the table's first row is the built-in cross-validation."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from model import calibrate as cal
from model import presets

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "which_terms.py"
_spec = importlib.util.spec_from_file_location("which_terms", _PATH)
wt = sys.modules.setdefault("which_terms", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(wt)

ITEMS = presets.measurement_presets()
# DeepSeek-R1 at FP4 with an FP8 KV cache on 72 GB300: F(fp4) 15, F(fp8) 5, F(bf16) 2.5 PFLOP/s per GPU.
KEY = "mlperf60-nvidia-gb300-dsr1-offline"


def test_the_rules_change_attention_only_while_their_row_runs():
    m = ITEMS[KEY]
    model = cal.parts(m)
    with wt._rules({"attention_slowdown": wt._attention_at_compute_peak}):
        peak = cal.parts(m)
    wider = wt._wider_format_parts(m)
    assert float(model.attn) == pytest.approx(6.0 * float(peak.attn))         # 15 / 2.5
    assert float(wider.attn) == pytest.approx(3.0 * float(peak.attn))         # 15 / 5: FP8 attention
    assert float(wider.dense) == pytest.approx(float(model.dense)) == pytest.approx(float(peak.dense))
    assert float(cal.parts(m).attn) == pytest.approx(float(model.attn))      # restored
    assert cal.attention_slowdown is not wt._attention_at_compute_peak


def test_trtllm_capacity_rules_apply_to_its_offline_runs_only():
    offline = ITEMS["trtllm-llama-3.1-8b-h100-tp1-128-2048"]        # capacity: L + O = 2,176 reserved, ≤ 4,096
    assert float(wt._trtllm_capacity_parts(offline).b_cap) == pytest.approx(0.9 * 72e9 / (65_536 * 2176))
    other = ITEMS["vllm-llama-3.1-8b-h100-c8-20k-2k-bf16kv"]
    assert float(wt._trtllm_capacity_parts(other).b_cap) == float(cal.parts(other).b_cap)


def test_the_first_row_is_the_model_as_shipped_and_errors_are_in_percent():
    row = wt.ROWS[0]
    assert row.terms == cal.MODEL_TERMS and not row.rules
    # |r − 1| of 0.5, 1, 1.5, 2 → 0.5, 0, 0.5, 1: median 0.5; 90th percentile (linear) 0.5 + 0.7 · 0.5 = 0.85
    assert wt._errors(np.array([0.5, 1.0, 1.5, 2.0])) == pytest.approx((50.0, 85.0))
