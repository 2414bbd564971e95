import math

import pytest

from model import Deployment, Hardware, ModelArch, Precision


def test_bad_value_names_field_value_and_range():
    with pytest.raises(ValueError) as e:
        Hardware(name="x", flops_bf16_per_s=-1, hbm_bytes=80e9, hbm_bandwidth_bytes_per_s=1e12,
                 price_usd_per_hour=1)
    msg = str(e.value)
    assert "Hardware.flops_bf16_per_s" in msg and "-1" in msg and "> 0" in msg


@pytest.mark.parametrize("value", [0, -3, math.nan, math.inf, "abc", True])
def test_rejects_non_positive_and_non_finite(value):
    with pytest.raises(ValueError, match="hbm_bytes"):
        Hardware(name="x", flops_bf16_per_s=1e15, hbm_bytes=value, hbm_bandwidth_bytes_per_s=1e12,
                 price_usd_per_hour=1)


def test_numeric_strings_in_scientific_notation_are_numbers():
    h = Hardware(name="x", flops_bf16_per_s="9.89e14", hbm_bytes="80e9", hbm_bandwidth_bytes_per_s=3.35e12,
                 price_usd_per_hour=2)
    assert h.flops_bf16_per_s == 9.89e14 and h.hbm_bytes == 80e9


def test_integer_fields_reject_fractions():
    with pytest.raises(ValueError, match=r"n_layers = 2.5 .* integer"):
        ModelArch(name="m", total_params=1e9, active_params=1e9, n_layers=2.5)


def test_active_cannot_exceed_total():
    with pytest.raises(ValueError, match=r"active_params .* ≤ total_params"):
        ModelArch(name="m", total_params=1e9, active_params=2e9)


def test_range_and_choice_checks():
    with pytest.raises(ValueError, match=r"Deployment.mfu = 1.5 .* ≤ 1"):
        Deployment(mfu=1.5)
    with pytest.raises(ValueError, match="choose one of"):
        Precision(weights="int3")
    with pytest.raises(ValueError, match="fraction"):
        Deployment(sparse_attention="fraction", sparse_param=2)


def test_flops_by_dtype(h100):
    assert h100.flops("bf16") == h100.flops("fp16") == 989e12
    assert h100.flops("fp8") == 1979e12
    with pytest.raises(ValueError, match="no fp4"):
        h100.flops("fp4")


def test_sparsity_and_with_sparsity(lecture_deepseek):
    assert lecture_deepseek.sparsity == pytest.approx(8.0)
    assert lecture_deepseek.with_sparsity(4).active_params == pytest.approx(175e9)
    with pytest.raises(ValueError, match="sparsity"):
        lecture_deepseek.with_sparsity(0.5)


def test_from_dict_unknown_and_missing_fields():
    with pytest.raises(ValueError, match=r"unknown field.*colour"):
        ModelArch.from_dict({"name": "m", "total_params": 1e9, "active_params": 1e9, "colour": "red"})
    with pytest.raises(ValueError, match=r"missing field.*active_params"):
        ModelArch.from_dict({"name": "m", "total_params": 1e9})
