"""Custom chips and models in the URL: the compact form (ui/state/custom.py) — only what differs from the preset,
read back exactly, a bad text named.  The sidebar and the Custom page using it: tests/app/test_custom.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model import presets
from ui.state import custom

H100 = presets.hardware_presets()["h100"]
LLAMA = presets.model_presets()["llama-3.1-70b"]


# ---------------------------------------------------------------- the compact form

def test_encode_only_what_differs():
    assert custom.encode("hardware", H100, "h100") == "h100"
    text = custom.encode("hardware", H100.with_(hbm_bandwidth_bytes_per_s=4e12, name="My chip"), "h100")
    assert text == "h100~n:My chip~bw:4e12"          # no '+' (it would read back as a space)
    base, spec = custom.decode("hardware", text)
    assert base == "h100" and spec.name == "My chip"
    assert spec.hbm_bandwidth_bytes_per_s == 4e12
    assert spec.hbm_bytes == H100.hbm_bytes           # the rest comes from the preset
    assert spec.meta["hbm_bandwidth_bytes_per_s"] is custom.USER_SOURCE
    assert spec.meta["hbm_bytes"] == H100.meta["hbm_bytes"]   # preset figures keep their sources


def test_unnamed_change_is_called_custom_and_none_clears_an_optional_field():
    _, spec = custom.decode("model", "llama-3.1-70b~N:1e12~kvb:none")
    assert spec.name == "Llama 3.1 70B (custom)" and spec.total_params == 1e12
    assert spec.kv_bytes_per_token is None


@pytest.mark.parametrize(("kind", "text", "says"), [
    ("hardware", "", "empty"),
    ("hardware", "zz", "unknown hardware preset 'zz'"),
    ("hardware", "h100~bw:-1", "hbm_bandwidth_bytes_per_s"),
    ("hardware", "h100~bw:nan", "hbm_bandwidth_bytes_per_s"),
    ("hardware", "h100~bw:inf", "hbm_bandwidth_bytes_per_s"),
    ("hardware", "h100~bw:fast", "not a number"),
    ("hardware", "h100~q:1", "unknown field code 'q'"),
    ("hardware", "h100~bw", "not code:value"),
    ("hardware", "h100~bw:1e12~bw:2e12", "given twice"),
    ("hardware", "h100~d:2.5", "scaleup_domain_chips"),
    ("hardware", "h100~f:none", "cannot be none"),
    ("hardware", "h100~s:sold-out", "status"),
    ("model", "llama-3.1-70b~Na:1e12", "active_params"),
    ("model", "h100", "unknown model preset"),
    ("hardware", "h100~n:" + "x" * 700, "at most 600"),
])
def test_bad_custom_text_names_the_problem(kind, text, says):
    with pytest.raises(ValueError, match=None) as e:
        custom.decode(kind, text)
    assert says in str(e.value)


_fields = st.fixed_dictionaries({}, optional={
    "hbm_bandwidth_bytes_per_s": st.floats(1e9, 1e14), "hbm_bytes": st.floats(1e9, 1e12),
    "flops_bf16_per_s": st.floats(1e12, 1e17), "price_usd_per_hour": st.floats(0.01, 100),
    "scaleup_domain_chips": st.integers(1, 1000), "power_w": st.floats(1, 5000),
    "name": st.text(st.characters(codec="utf-8", exclude_characters="~"), min_size=1, max_size=30)})


@settings(max_examples=60, deadline=None)
@given(changes=_fields)
def test_round_trip(changes):
    spec = H100.with_(**changes)
    base, back = custom.decode("hardware", custom.encode("hardware", spec, "h100"))
    assert base == "h100"
    for k, v in changes.items():
        if k == "name":
            assert back.name == custom._clean_name(v)            # the name as the editor cleans it
        else:
            assert getattr(back, k) == pytest.approx(v, rel=1e-5)
