"""`python -m model plan`, and the `step` flags its points carry (--layout, --link-latency,
--chunked-prefill): a point plan reports, fed back to `step` with the flags it lists, gives the same
numbers; bad input exits 2 with one line naming the flag.

The flags-only system of the hand-derived step checks (as in tests/model/test_plan.py):
  F = 1e15 FLOP/s, bw = 1e12 B/s, N = Na = 10e9 params (bf16: W = 20e9 B), kv = 1e5 B/token
"""

from __future__ import annotations

import pytest

from model.plan import POINT_KEYS
from tests.cli.helpers import run_error, run_json, run_text

TOY = ["--flops", "1e15", "--hbm-bw", "1e12", "--total-params", "10e9", "--kv-bytes-per-token", "1e5"]
BASE = ["plan", "--model", "llama-3.1-70b", "--input-tokens", "2000", "--output-tokens", "500", "--ttft", "1",
        "--tpot", "0.05"]


def _step_row(capsys, args: list[str]) -> dict:
    assert args[0] == "step"
    (row,) = run_json(capsys, *args)["rows"]
    return row


def _assert_round_trip(capsys, pt: dict) -> None:
    """`step` with the point's flags gives its step time, speed and bound, and its $/Mtok: the all-in
    figure when aggregated (the prompts ride in the step), the decode replica's when disaggregated."""
    row = _step_row(capsys, pt["step_args"])
    assert row["t_step_s"] == pytest.approx(pt["t_step_s"], rel=1e-9)
    assert row["tokens_per_s_per_user"] == pytest.approx(pt["tokens_per_s_per_user"], rel=1e-9)
    assert row["t_comm_s"] == pytest.approx(pt["t_comm_s"], rel=1e-9, abs=1e-15)
    assert row["bound"] == pt["bound"]
    if pt["mode"] == "aggregated":
        assert row["usd_per_mtok"] == pytest.approx(pt["usd_per_mtok"], rel=1e-9)
        i = pt["step_args"].index("--chunked-prefill")
        plain = _step_row(capsys, pt["step_args"][:i] + pt["step_args"][i + 2:])
        assert plain["usd_per_mtok"] == pytest.approx(pt["usd_per_mtok_output"], rel=1e-9)
    else:
        assert row["usd_per_mtok"] == pytest.approx(pt["usd_per_mtok_output"], rel=1e-9)
        assert row["tokens_per_s_per_chip"] == pytest.approx(pt["decode_tokens_per_s_per_chip"], rel=1e-9)


@pytest.mark.parametrize("extra", [
    ["--hardware", "h100,b200,mi300x"],
    ["--hardware", "h100", "--weight-dtypes", "bf16", "--link-latency", "1e-6", "--mfu", "0.6", "--bw-util", "0.8"],
    ["--hardware", "h100,gb200", "--modes", "disaggregated", "--mode", "per-phase", "--tokens-per-step", "1.5",
     "--hop-latency", "1e-5"],
], ids=["presets", "tp-and-dials", "disaggregated-per-phase"])
def test_best_and_top_round_trip_through_step(capsys, extra):
    d = run_json(capsys, *BASE, *extra)
    assert d["best"] is not None and set(POINT_KEYS) <= set(d["best"])
    for pt in [d["best"], *d["top"]]:
        _assert_round_trip(capsys, pt)
    if "tp-and-dials" in str(extra) or "--link-latency" in extra:
        assert d["efficiency"] == {"source": "dials", "mfu": 0.6, "bw_util": 0.8}
        assert any(p["layout"] == "tp" for p in d["top"])


def test_a_mix_on_an_moe_model_round_trips(capsys):
    d = run_json(capsys, "plan", "--model", "deepseek-v3", "--hardware", "h200,b200", "--mix",
                 "1000:200:0.7,8000:1000:0.3", "--ttft", "2", "--tpot", "0.05", "--max-chips", "32")
    assert [c["share"] for c in d["inputs"]["traffic"]] == [0.7, 0.3]
    assert d["best"] is not None
    for pt in [d["best"], *d["top"][:5]]:
        _assert_round_trip(capsys, pt)
    assert {p["layout"] for p in d["top"]} <= {"ep", "none"}


def test_efficiency_predicted_by_default_ideal_or_roofline_on_request(capsys):
    from model.calibrate import built_in_fit

    e = built_in_fit().efficiency
    d = run_json(capsys, *BASE, "--hardware", "h100")
    assert d["efficiency"] == {"source": "predicted", **e.as_dict()}
    assert "--predicted" in d["best"]["step_args"]
    i = run_json(capsys, *BASE, "--hardware", "h100", "--ideal")
    assert i["efficiency"] == {"source": "ideal", "mfu": 1.0, "bw_util": 1.0}
    assert "--predicted" not in i["best"]["step_args"]
    r = run_json(capsys, *BASE, "--hardware", "h100", "--roofline")
    assert r["efficiency"] == {"source": "ideal", "mfu": 1.0, "bw_util": 1.0}     # the roofline at dials of 1
    # The fitted model is slower than the bound: the same targets cost more per request.
    assert d["best"]["usd_per_request"] > i["best"]["usd_per_request"]
    _assert_round_trip(capsys, i["best"])


def test_json_keys_and_throughput(capsys):
    d = run_json(capsys, *BASE, "--hardware", "h100,b200")
    assert d["ranked_by"] == "usd_per_request" and d["efficiency"]["source"] == "predicted"
    assert isinstance(d["configs_evaluated"], int) and d["configs_evaluated"] > 1000
    assert isinstance(d["search_s"], float)
    assert 1 <= len(d["top"]) <= 10 and d["frontier"] and d["frontier_per_chip"]
    assert "replicas" not in d and "reason" not in d and "closest" not in d
    us = [p["tokens_per_s_per_user"] for p in d["frontier"]]
    assert us == sorted(us)
    t = run_json(capsys, *BASE, "--hardware", "h100,b200", "--throughput", "20000", "--throughput-unit", "tokens")
    assert t["ranked_by"] == "usd_per_hour"
    b = t["best"]
    # 20,000 output tokens/s of 500-token answers = 40 requests/s; chips = replicas · C·P (+ prefill)
    assert t["replicas"] == b["replicas"] >= 1 and t["chips"] == b["chips_total"]
    assert t["chips"] == b["replicas"] * b["decode_chips"] + b["prefill_replicas"] * (
        b["prefill_chips"] if b["mode"] == "disaggregated" else 0)
    assert t["usd_per_hour"] == pytest.approx(b["usd_per_hour"])


def test_nothing_feasible_says_which_target_binds(capsys):
    d = run_json(capsys, *BASE[:-1], "1e-5", "--hardware", "h100", "--throughput", "5")
    assert d["best"] is None and d["binding"] == "tpot" and d["closest"]["tpot_s"] > 1e-5
    assert d["replicas"] is None and d["chips"] is None
    assert "TPOT target" in d["reason"] and "replicas and chips need a feasible configuration" in d["reason"]
    text = run_text(capsys, *BASE[:-1], "1e-5", "--hardware", "h100")
    assert "nothing feasible (tpot binds)" in text and "note: the TPOT target" in text


def test_text_names_the_best_and_its_step(capsys):
    text = run_text(capsys, *BASE, "--hardware", "h100,b200")
    assert text.startswith("plan: Llama 3.1 70B, 2000 in / 500 out")
    assert "best: " in text and "its decode step: python -m model step --hardware" in text
    assert "the 10 best:" in text and "predicted: fitted efficiencies" in text
    assert "ideal roofline" in run_text(capsys, *BASE, "--hardware", "h100,b200", "--ideal")


@pytest.mark.parametrize(("args", "flag"), [
    (["--ttft", "0"], "--ttft"), (["--tpot", "-1"], "--tpot"), (["--tpot", "nan"], "--tpot"),
    (["--input-tokens", "0"], "--input-tokens"), (["--output-tokens", "20000000"], "--output-tokens"),
    (["--hardware", "h100,nope"], "--hardware"), (["--hardware", ","], "--hardware"),
    (["--hardware", ""], "--hardware"),
    (["--model", "nope"], "--model"), (["--mix", "1000:100"], "--mix"), (["--mix", "1:2,3:4:0.5"], "--mix"),
    (["--ideal", "--mfu", "0.5"], "--ideal"), (["--ideal", "--roofline"], "--roofline"),
    (["--weight-dtypes", "fp16"], "--weight-dtypes"),
    (["--utilisation", "0"], "--utilisation"), (["--throughput", "-5"], "--throughput"),
    (["--max-chips", "1e9"], "--max-chips"),
])
def test_bad_input_exits_2_naming_the_flag(capsys, args, flag):
    line = run_error(capsys, *BASE, *args)
    assert flag in line, line


def test_missing_inputs_and_a_custom_chip_with_a_missing_field(capsys, tmp_path):
    assert "--model is missing" in run_error(capsys, "plan", *BASE[3:])
    assert "--output-tokens is missing" in run_error(capsys, *BASE[:5], *BASE[7:])
    assert "--tpot is missing" in run_error(capsys, *BASE[:-2])
    chip = tmp_path / "chip.yaml"
    chip.write_text("schema: roofline-presets/1\nkind: hardware\nitems:\n  mine:\n    name: Mine\n"
                    "    flops_bf16_per_s: 1e15\n    hbm_bandwidth_bytes_per_s: 4e12\n    price_usd_per_hour: 2\n")
    line = run_error(capsys, *BASE, "--hardware", str(chip))
    assert line.startswith("error: --hardware") and "hbm_bytes" in line
    chip.write_text(chip.read_text() + "    hbm_bytes: 200e9\n")
    d = run_json(capsys, *BASE, "--hardware", str(chip), "--ideal")
    assert d["best"]["hardware"] == str(chip)
    _assert_round_trip(capsys, d["best"])


# ---------------------------------------------------------------- the step flags, by hand

def test_step_chunked_prefill_by_hand(capsys):
    # B = 94 at T = 1,050 with 1,000-token prompts over 100 output tokens: x = 10 prompt tokens per sequence
    # per step; matmul 2e10 · 94 · 11/1e15 = 20.68 ms; memory 20 ms + 94 · (1.05e8 + 1e6)/1e12 = 29.964 ms.
    row = _step_row(capsys, ["step", *TOY, "--batch", "94", "--context", "1050", "--chunked-prefill", "1000:100"])
    assert row["t_matmul_s"] == pytest.approx(20.68e-3, rel=1e-12)
    assert row["t_step_s"] == pytest.approx(29.964e-3, rel=1e-12) and row["bound"] == "weights"
    d = run_json(capsys, "step", *TOY, "--batch", "94", "--context", "1050",
                 "--chunked-prefill", "1000:100:3,5000:500:1")
    assert d["inputs"]["chunked_prefill"] == [{"input_tokens": 1000, "output_tokens": 100, "share": 0.75},
                                              {"input_tokens": 5000, "output_tokens": 500, "share": 0.25}]
    assert d["rows"][0]["t_step_s"] == pytest.approx(29.964e-3, rel=1e-12)    # the same x = 10
    plain = run_json(capsys, "step", *TOY, "--batch", "94", "--context", "1050")
    assert "chunked_prefill" not in plain["inputs"] and "layout" not in plain["inputs"]


def test_step_layout_tp_by_hand(capsys):
    # C = 4 of a domain of 4 at 1e12 B/s, d = 1000, 10 layers, B = 2,000 tokens, 1 µs a hop:
    # 10 · 2 · (2·3/4 · 2000·1000·2 B / 1e12 + 2·3 · 1e-6) = 10 · 2 · (6e-6 + 6e-6) = 0.24 ms.
    args = ["step", *TOY, "--chips", "4", "--domain", "4", "--scaleup-bw", "1e12", "--d-model", "1000",
            "--layers", "10", "--batch", "2000", "--layout", "tp", "--link-latency", "1e-6"]
    d = run_json(capsys, *args)
    assert d["rows"][0]["t_comm_s"] == pytest.approx(0.24e-3, rel=1e-12)
    assert d["inputs"]["layout"] == "tp" and d["inputs"]["link_latency_s"] == 1e-6
    assert "communication: tp over C = 4 chips" in run_text(capsys, *args)


@pytest.mark.parametrize(("args", "words"), [
    (["--chips", "4", "--layout", "tp"], "--domain"),
    (["--chips", "4", "--domain", "4", "--d-model", "1000", "--layers", "10", "--layout", "tp"], "--scaleup-bw"),
    (["--chips", "4", "--domain", "4", "--scaleup-bw", "1e12", "--layout", "tp"], "--d-model and --layers"),
    (["--chips", "4", "--layout", "ep"], "--experts"),
    (["--chunked-prefill", "0:10"], "--chunked-prefill"), (["--chunked-prefill", "10"], "--chunked-prefill"),
    (["--link-latency", "-1"], "--link-latency"), (["--layout", "dp"], "--layout"),
])
def test_step_layout_and_chunked_prefill_errors(capsys, args, words):
    line = run_error(capsys, "step", *TOY, "--batch", "8", *args)
    assert words in line, line


def test_step_predicted_by_hand(capsys):
    # The fitted model on the toy system (no layers: no fixed time): B = 94 at T = 1,050,
    # compute 94 · 2e10/1e15 / η_c, memory (20e9 + 94 · 1,050 · 1e5)/1e12 / η_bw; the larger is the step.
    from model.calibrate import built_in_fit

    e = built_in_fit().efficiency
    d = run_json(capsys, "step", *TOY, "--batch", "94", "--context", "1050", "--predicted")
    (row,) = d["rows"]
    compute, memory = 94 * 2e10 / 1e15 / e.compute, (20e9 + 94 * 1050 * 1e5) / 1e12 / e.bandwidth
    assert row["t_dense_s"] == pytest.approx(compute, rel=1e-12)
    assert row["t_weights_s"] + row["t_kv_s"] == pytest.approx(memory, rel=1e-12)
    assert row["t_step_s"] == pytest.approx(max(compute, memory), rel=1e-12) and row["t_fixed_s"] == 0.0
    assert row["bound"] == ("compute" if compute >= memory else "weights")
    assert d["inputs"]["efficiency"]["source"] == "predicted"
    assert "predicted: the efficiency model fitted to" in run_text(capsys, "step", *TOY, "--predicted")


def test_step_predicted_prices_attention_at_the_bf16_peak(capsys):
    # DeepSeek-V3 on eight B200: fp4 9 / bf16 2.25 PFLOP/s per GPU.  The dense matmuls run 4× faster at fp4;
    # attention runs at the bf16 peak either way, so its time does not change, and the text says so.
    args = ["step", "--model", "deepseek-v3", "--hardware", "b200", "--weight-dtype", "fp4", "--kv-dtype", "fp8",
            "--chips", "8", "--batch", "256", "--context", "4000", "--predicted"]
    (fp4,) = run_json(capsys, *args, "--compute-dtype", "fp4")["rows"]
    (bf16,) = run_json(capsys, *args, "--compute-dtype", "bf16")["rows"]
    assert fp4["t_attn_s"] == pytest.approx(bf16["t_attn_s"], rel=1e-12) and fp4["t_attn_s"] > 0
    assert fp4["t_dense_s"] == pytest.approx(bf16["t_dense_s"] / 4, rel=1e-12)
    assert "of the bf16 peak (1/4 of the fp4 peak)" in run_text(capsys, *args, "--compute-dtype", "fp4")
    assert "of the bf16 peak" not in run_text(capsys, *args, "--compute-dtype", "bf16")
