"""`python -m model calibrate`: fitted compute and bandwidth efficiencies and residuals for a selection of
measurements, the same numbers as model/calibrate.py; bad input exits 2 with one line on stderr."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model import calibrate as cal
from model import presets
from tests import ROOT
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
    assert d["count"] == len(cal.select(ITEMS, model="deepseek-v3", hardware="gb200")) == 10
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


# ---------------------------------------------------------------- the efficiency model: --cv and --predict

def test_cross_validation_json_is_the_modules(capsys):
    d = run_json(capsys, "calibrate", "--cv", "k5")
    cv = cal.built_in_cv("k5")
    assert d["cv"] == "k5" and d["seed"] == cal.CV_SEED and d["groups"] == 5 and d["count"] == len(ITEMS)
    assert d["median_abs_error"] == pytest.approx(cv.median_error) and d["p90_abs_error"] == pytest.approx(cv.p90_error)
    assert d["band"] == pytest.approx(list(cv.band))
    rows = {r["key"]: r for r in d["points"]}
    assert set(rows) == set(ITEMS)
    for i, k in enumerate(cv.keys):
        r = rows[k]
        assert r["group"] == cv.groups[i] and r["measured_tokens_per_s_per_gpu"] == pytest.approx(cv.measured[i])
        assert r["predicted_tokens_per_s_per_gpu"] == pytest.approx(cv.predicted[i])
        assert r["ratio"] == pytest.approx(cv.predicted[i] / cv.measured[i])
    # The same median from the points themselves.
    assert np.median([abs(r["ratio"] - 1) for r in d["points"]]) == pytest.approx(d["median_abs_error"])
    terms = {t["field"]: t for t in d["terms"]}
    fit = cal.built_in_fit()
    for name in cal.MODEL_TERMS:
        assert terms[name]["value"] == pytest.approx(getattr(fit.efficiency, name))
        assert terms[name]["stderr"] == pytest.approx(fit.stderr[name]) and terms[name]["determined"]
    assert terms["prefill"]["stderr"] is None and not terms["prefill"]["determined"]     # NaN → null


def test_cross_validation_by_model_names_each_points_model(capsys):
    d = run_json(capsys, "calibrate", "--cv", "model")
    assert {r["group"] for r in d["points"]} == {m.model for m in ITEMS.values()} and d["groups"] == 11
    assert d["median_abs_error"] == pytest.approx(cal.built_in_cv("model").median_error)


def test_cross_validation_of_a_selection_fits_only_the_selection(capsys):
    d = run_json(capsys, "calibrate", "--cv", "chip", "--publisher", "NVIDIA")
    sel = cal.select(ITEMS, publisher="NVIDIA")
    cv = cal.cross_validate(sel, "chip")
    assert d["count"] == len(sel) and d["median_abs_error"] == pytest.approx(cv.median_error)
    assert {r["group"] for r in d["points"]} == {"h100", "h200", "b200", "gb200", "gb300"}


def test_cross_validation_table(capsys):
    out = run_text(capsys, "calibrate", "--cv", "k5")
    for needle in ("held-out median |predicted ÷ measured − 1|", "held-out 90th percentile", "fold 1",
                   "predicted ÷ measured", "η_bw", "t_ℓp", "deepseek-h800-production"):
        assert needle in out, needle
    cv = cal.built_in_cv("k5")
    assert f"{cv.median_error:.1%}" in out and f"{cv.p90_error:.1%}" in out


def _own_points(tmp_path) -> str:
    """Two points of the built-in set's own setups, written as a user's file with its own keys, one of them
    on a chip of the user's own (the h100 preset renamed, as a spec file)."""
    (tmp_path / "chips").mkdir()
    chip = presets.dump_item(presets.get("hardware", "h100").with_(name="Lab H100"), "hardware", "lab-h100")
    (tmp_path / "chips" / "lab.yaml").write_text(chip)
    head = ("key,publisher,model,hardware,weights,kv,compute,scope,gpus,chips_per_replica,input_tokens,"
            "output_tokens,throughput,throughput_metric,engine,concurrency\n")
    rows = ("lab-8b,Lab,llama-3.1-8b,chips/lab.yaml,fp8,fp8,fp8,system,1,1,1000,1000,12000,output per GPU,vLLM,256\n"
            "lab-70b,Lab,Llama-3.1-70B,H200,fp8,fp8,fp8,system,2,2,1000,1000,2500,output per group,vLLM,128\n")
    f = tmp_path / "lab.csv"
    f.write_text(head + rows)
    return str(f)


def test_predict_fits_the_built_in_points_only(capsys, tmp_path):
    path = _own_points(tmp_path)
    d = run_json(capsys, "calibrate", "--measurements", path, "--predict")
    fit = cal.built_in_fit()
    assert d["fitted_count"] == len(ITEMS) and d["count"] == 2
    assert {t["field"]: t["value"] for t in d["terms"]}["bandwidth"] == pytest.approx(fit.efficiency.bandwidth)
    assert d["expected_band"] == pytest.approx(list(cal.built_in_cv("k5").band))
    mine = cal.load_user_measurements(open(path, "rb").read(), path, base=tmp_path)
    pred = cal.predict_measurements(mine, fit.efficiency)
    ideal = cal.check(mine).ideal
    rows = {r["key"]: r for r in d["points"]}
    for i, k in enumerate(pred.keys):
        r = rows[k]
        assert r["measured_tokens_per_s_per_gpu"] == pytest.approx(pred.measured[i])
        assert r["predicted_tokens_per_s_per_gpu"] == pytest.approx(pred.predicted[i])
        assert r["ideal_tokens_per_s_per_gpu"] == pytest.approx(ideal[i])
        assert r["ratio"] == pytest.approx(pred.predicted[i] / pred.measured[i]) and r["load"] == "batch"
        assert 0 < r["predicted_tokens_per_s_per_gpu"] < r["ideal_tokens_per_s_per_gpu"]
    assert rows["lab-8b"]["hardware"] == str((tmp_path / "chips" / "lab.yaml").resolve())
    assert rows["lab-70b"]["measured_tokens_per_s_per_gpu"] == 1250 and rows["lab-70b"]["hardware"] == "h200"
    assert rows["lab-8b"]["batch"] == 256 and rows["lab-70b"]["batch"] == 128
    text = run_text(capsys, "calibrate", "--measurements", path, "--predict")
    assert "your file is not fitted" in text and "lab-70b" in text and "η_e" in text


def test_predict_says_when_a_published_speed_is_out_of_reach(capsys):
    d = run_json(capsys, "calibrate", "--measurements", str(ROOT / "docs" / "example_measurements.csv"), "--predict")
    assert d["count"] == 3 and all(r["load"] == "speed" for r in d["points"])
    assert "cannot reach the published speed" in d["reason"]


@pytest.mark.parametrize("args, needle", [
    (["--predict"], "--predict: needs --measurements FILE"),
    (["--predict", "--cv", "k5", "--measurements", "x.csv"], "--predict: not with --cv"),
    (["--cv", "model", "--model", "llama-3.1-8b"], "--cv model: the selection has one model only"),
    (["--cv", "engine"], "invalid choice"),
])
def test_bad_model_flags_exit_2_with_one_line(args, needle, capsys):
    line = run_error(capsys, "calibrate", *args)
    assert needle in line, line
