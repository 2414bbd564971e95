"""Custom chips and models: the compact URL form (ui/state/custom.py), the sidebar using it, the editor and
uploads on the Custom page (views/custom.py)."""

from __future__ import annotations

import json

import pytest

from model import decode_step, presets
from model.roofline import System, auto_chips
from model.specs import Precision
from tests.app.helpers import V1, app, assert_clean, metrics, page_text
from ui.format import seconds

H100 = presets.hardware_presets()["h100"]
LLAMA = presets.model_presets()["llama-3.1-70b"]


def test_custom_chip_from_the_url_drives_the_numbers():
    text = "h100~bw:4e12~n:Fast HBM"
    at = app({"chip": "custom", "xhw": text, "c": "8"})
    assert_clean(at)
    hw = H100.with_(hbm_bandwidth_bytes_per_s=4e12, name="Fast HBM")
    s = System(hw, LLAMA).with_(chips=8)
    want = decode_step(s, 64, 8192)
    assert metrics(at)["Ideal latency per token"] == seconds(float(want.t_step_s))
    assert "Fast HBM × Llama 3.1 70B" in at.caption[0].value
    # Preset H100 would be slower (3.35 TB/s): the custom figure really is used.
    assert metrics(at)["Ideal latency per token"] != seconds(float(decode_step(System(H100, LLAMA).with_(chips=8),
                                                                         64, 8192).t_step_s))
    notes = page_text(at, "markdown")
    assert "your own figures" in notes and "hbm bandwidth bytes per s" in notes


def test_custom_model_from_the_url_with_auto_chips():
    at = app({"model": "custom", "xm": "llama-3.1-70b~N:4e11~Na:4e10~n:Big"})
    assert_clean(at)
    m = LLAMA.with_(total_params=4e11, active_params=4e10, name="Big")
    chips = auto_chips(H100, m, Precision(), 64, 8192)
    want = decode_step(System(H100, m).with_(chips=chips), 64, 8192)
    assert metrics(at)["Ideal latency per token"] == seconds(float(want.t_step_s))


def test_custom_choice_without_a_definition_falls_back_with_a_warning():
    at = app({"chip": "custom", "v": "2"})
    assert not at.exception
    assert any("Custom chip not used" in w.value for w in at.warning)
    assert at.caption[0].value.startswith("NVIDIA GB200 NVL72")         # today's default chip


def test_garbled_custom_parameter_gives_a_notice_naming_it_and_the_field():
    at = app({"xhw": "h100~bw:-5", "chip": "custom"})
    assert not at.exception
    text = " ".join(w.value for w in at.warning)
    assert "URL parameter 'xhw'" in text and "hbm_bandwidth_bytes_per_s" in text


# ---------------------------------------------------------------- the Custom page

def _input(at, label_start):
    return next(n for n in at.number_input if n.label.startswith(label_start))


def test_editor_use_puts_the_chip_in_the_sidebar_and_the_link():
    at = app(V1, page="custom")
    assert_clean(at)
    _input(at, "HBM bandwidth").set_value(4.0).run()
    assert "xhw=h100~bw:4e12" in " ".join(c.value for c in at.caption)
    at.button(key="_cu_hardware_use").click().run()
    assert not at.exception
    assert at.query_params["xhw"] == "h100~bw:4e12" and at.query_params["chip"] == "custom"
    assert at.caption[0].value.startswith("NVIDIA H100 SXM5 80GB (custom) ×")


def test_editor_rejects_an_impossible_model_with_the_field_named():
    at = app(V1, page="custom")
    _input(at, "Active parameters").set_value(5000.0).run()      # 5 T active > 70.6 B total
    assert not at.exception
    assert any("active_params" in e.value for e in at.error)


def _doc(kind, item):
    return json.dumps({"schema": presets.SCHEMA, "kind": kind, "items": {"mine": item}}).encode()


GOOD_CHIP = {"source": "test sheet", "date": "2026-12", "flops_bf16_per_s": 2e15, "hbm_bytes": 1.9e11,
             "hbm_bandwidth_bytes_per_s": 8e12, "price_usd_per_hour": 4.0, "scaleup_domain_chips": 72}


def test_upload_a_valid_file_loads_it_into_the_editor():
    at = app(V1, page="custom")
    at.file_uploader(key="_cu_hardware_upload").set_value(("mine.json", _doc("hardware", GOOD_CHIP),
                                                           "application/json")).run()
    assert not at.exception
    assert any("loaded ` mine `" in s.value for s in at.success)
    assert _input(at, "HBM bandwidth").value == pytest.approx(8.0)        # TB/s
    assert _input(at, "Dense bf16 compute").value == pytest.approx(2000.0)        # TFLOP/s


@pytest.mark.parametrize(("data", "says"), [
    (_doc("hardware", {**GOOD_CHIP, "hbm_bytes": "lots"}), "hbm_bytes"),
    (_doc("hardware", {**GOOD_CHIP, "hbm_bytes": -1}), "hbm_bytes"),
    (_doc("hardware", {**GOOD_CHIP, "hbm_bytes": float("nan")}), "hbm_bytes"),
    (_doc("hardware", {k: v for k, v in GOOD_CHIP.items() if k != "hbm_bytes"}), "hbm_bytes"),
    (_doc("hardware", {**GOOD_CHIP, "warp_drive": 1}), "unknown field 'warp_drive'"),
    (_doc("model", {"source": "x", "date": "y", "total_params": 1e9, "active_params": 1e9}),
     "expected a hardware file"),
    (b"a: [unclosed", "not valid YAML or JSON"),
    (b"just some words", "expected a mapping"),
    (b"x" * (presets.MAX_FILE_BYTES + 1), "the limit is"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"a: &a [*a, *a]\nb: !!python/object/apply:os.system ['true']", "not valid YAML or JSON"),
])
def test_malformed_uploads_name_the_problem(data, says):
    at = app(V1, page="custom")
    at.file_uploader(key="_cu_hardware_upload").set_value(("bad.yaml", data, "application/x-yaml")).run()
    assert not at.exception
    assert any("was not loaded" in e.value for e in at.error)
    assert says in " ".join(t.value for t in at.text), [t.value for t in at.text]


# ---------------------------------------------------------------- a user's file without sources

BARE_CHIP = {"flops_bf16_per_s": 2e15, "hbm_bytes": 1.9e11, "hbm_bandwidth_bytes_per_s": 8e12,
             "price_usd_per_hour": 4.0, "scaleup_domain_chips": 72}       # no source, no date anywhere


def test_an_upload_without_sources_loads_and_is_marked_unsourced():
    at = app(V1, page="custom")
    at.file_uploader(key="_cu_hardware_upload").set_value(("bare.json", _doc("hardware", BARE_CHIP),
                                                           "application/json")).run()
    assert not at.exception and not at.error
    ok = " ".join(s.value for s in at.success)
    assert "loaded ` mine `" in ok and "5 of its numbers have no source or date" in ok and "hbm_bytes" in ok
    assert _input(at, "HBM bandwidth").value == pytest.approx(8.0)            # TB/s
    # Used in the sidebar, its numbers are flagged as the user's own on every page.
    at.button(key="_cu_hardware_use").click().run()
    assert not at.exception and at.query_params["chip"] == "custom"
    notes = page_text(at, "markdown")
    assert "your own figures, not a sourced preset" in notes
    for f in ("hbm bandwidth bytes per s", "hbm bytes", "flops bf16 per s", "price usd per hour"):
        assert f in notes, (f, notes)
