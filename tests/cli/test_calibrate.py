"""`python -m model calibrate`: fitted compute and bandwidth efficiencies and residuals for a selection of
measurements, the same numbers as model/calibrate.py; bad input exits 2 with one line on stderr."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model import calibrate as cal
from model import presets
from tests.cli.helpers import module, module_error, run_error, run_json, run_text

ITEMS = presets.measurement_presets()


def test_json_for_one_publisher_equals_the_module(capsys):
    d = run_json(capsys, "calibrate", "--publisher", "LMSYS")
    sel = cal.select(ITEMS, publisher="LMSYS")
    c = cal.check(sel)
    f = cal.fit_check(c)
    assert d["count"] == len(sel) == 4
    assert d["mfu"] == pytest.approx(f.mfu) and d["bw_util"] == pytest.approx(f.bwu)
    assert d["rms_log10"] == pytest.approx(f.rms_log10) and d["rms_factor"] == pytest.approx(10 ** f.rms_log10)
    assert d["max_efficiency"] <= 1
    rows = {r["key"]: r for r in d["points"]}
    assert set(rows) == set(sel)
    h100 = rows["sglang-deepseek-h100-decode"]
    i = c.keys.index("sglang-deepseek-h100-decode")
    assert h100["measured_tokens_per_s_per_gpu"] == pytest.approx(22_282 / 8)     # per node of 8, as published
    assert h100["ideal_tokens_per_s_per_gpu"] == pytest.approx(c.ideal[i])
    assert h100["efficiency"] == pytest.approx(c.efficiency[i]) and h100["ideal_bound"] == "capacity"
    assert h100["residual_log10"] == pytest.approx(f.residual_log10[i])
    assert "tokens_per_s_per_user" in h100["uncertain"]                              # derived, flagged
    # No speed published → null in JSON (never NaN).
    assert rows["sglang-deepseek-gb200-nvfp4"]["tokens_per_s_per_user"] is None


def test_model_alias_and_hardware_filters(capsys):
    d = run_json(capsys, "calibrate", "--model", "DeepSeek-R1", "--hardware", "gb200")
    assert d["count"] == len(cal.select(ITEMS, model="deepseek-v3", hardware="gb200")) == 8
    assert {r["hardware"] for r in d["points"]} == {"gb200"} and {r["model"] for r in d["points"]} == {"deepseek-v3"}


def test_one_measurement_leaves_an_efficiency_undetermined_and_says_so(capsys):
    d = run_json(capsys, "calibrate", "--measurement", "deepseek-h800-production")
    assert d["count"] == 1
    # DeepSeek's point is memory-bound at the fit: BWU is pinned, MFU is not (reported at 1).
    assert d["bw_util_determined"] and not d["mfu_determined"] and d["mfu"] == pytest.approx(1.0)
    assert "MFU is not pinned down" in d["reason"]
    assert d["rms_log10"] == pytest.approx(0.0, abs=0.002)           # one point, two parameters: fitted exactly


def test_readable_table(capsys):
    out = run_text(capsys, "calibrate", "--publisher", "DeepSeek")
    assert "fitted compute MFU" in out and "fitted HBM bandwidth utilisation" in out
    assert "deepseek-h800-production" in out and "1,850" in out and "4,513" in out


def test_all_measurements_fit_and_none_is_above_its_bound(capsys):
    d = run_json(capsys, "calibrate")
    assert d["count"] == len(ITEMS)
    assert all(0 < r["efficiency"] <= 1 for r in d["points"])
    assert 0.01 <= d["mfu"] <= 1 and 0.01 <= d["bw_util"] <= 1
    assert np.isfinite(d["rms_log10"])


@pytest.mark.parametrize("args, needle", [
    (["--model", "gpt-7"], "--model: unknown model preset 'gpt-7'"),
    (["--hardware", "h9000"], "--hardware: unknown hardware preset 'h9000'"),
    (["--measurement", "nope"], "--measurement: unknown measurement 'nope'"),
    (["--measurement", "deepseek-h800-production,,x"], "--measurement: unknown measurement ''"),
    (["--publisher", "Nobody"], "no measurement matches --publisher Nobody"),
    (["--model", "gpt-oss-120b", "--hardware", "h100"], "no measurement matches"),
    (["--bogus"], "unrecognized arguments"),
])
def test_bad_input_exits_2_with_one_line(args, needle, capsys):
    line = run_error(capsys, "calibrate", *args)
    assert needle in line, line


def test_as_a_subprocess():
    p = module("calibrate", "--publisher", "Alibaba", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["points"][0]["key"] == "rtp-llm-deepseek-h800"
    assert module_error("calibrate", "--model", "nope").startswith("error: --model")
