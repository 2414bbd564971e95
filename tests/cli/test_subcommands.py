"""`python -m model`: every subcommand's JSON against hand-derived numbers, and bad input → exit 2.

Most tests call `model.cli.main([...])` in-process (fast); a few run the real module in a
subprocess to check the exit status, the single stderr line and that no traceback escapes.
Expected values are worked out by hand in the comments (docs/design.md "The physics"), not by
calling the library, except where a test's point is that the CLI and the library agree.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from model import Deployment, Precision, System, auto_chips, decode_step, presets
from tests.cli.helpers import module, module_error, run, run_error, run_json

# H100-like chip and a dense 70B model with Llama-70B's KV (80 layers · 2 · 8 heads · 128 · 2 B =
# 327,680 B/token), all from flags: no preset involved.
H100_FLAGS = ["--flops", "9.89e14", "--hbm-bw", "3.35e12", "--hbm-bytes", "80e9", "--price-per-hour", "2"]
DENSE70_FLAGS = ["--total-params", "70e9", "--kv-bytes-per-token", "327680"]
FLAGS = H100_FLAGS + DENSE70_FLAGS

ROW_KEYS = {"batch", "context", "t_matmul_s", "t_attn_s", "t_weights_s", "t_kv_s", "t_comm_s", "t_step_s",
            "bound", "tokens_per_s_per_user", "tokens_per_s", "tokens_per_s_per_chip", "usd_per_mtok",
            "hbm_bytes_per_chip", "fits"}


# ---------------------------------------------------------------- step

def test_step_flags_only_hand_derived(capsys):
    d = run_json(capsys, "step", *FLAGS, "--batch", "64", "--context", "8192")
    (r,) = d["rows"]
    assert ROW_KEYS <= set(r)
    assert d["inputs"]["chips"] == 1  # no preset: the scale-up domain is 1 chip
    # W = 70e9 · 2 B = 140e9 B; t_weights = W/(C·bw) = 140e9/3.35e12 = 41.791 ms
    assert r["t_weights_s"] == pytest.approx(0.041791045, rel=1e-8)
    # t_matmul = 2·Na·B/(C·F) = 2·70e9·64/9.89e14 = 9.0597 ms
    assert r["t_matmul_s"] == pytest.approx(0.0090596562, rel=1e-8)
    # t_kv = B·T·kv/(C·bw) = 64·8192·327680/3.35e12 = 51.283 ms
    assert r["t_kv_s"] == pytest.approx(0.051283192, rel=1e-8)
    # lecture: t_step = max(9.06, 41.79 + 51.28) = 93.074 ms, the KV term is the larger memory part
    assert r["t_step_s"] == pytest.approx(0.093074236, rel=1e-8)
    assert r["bound"] == "kv"
    assert r["t_attn_s"] == 0.0 and r["t_comm_s"] == 0.0  # no attention shapes given; one chip
    # 1/t_step = 10.744 tok/s/user; × 64 = 687.62 tok/s; one chip so per chip the same
    assert r["tokens_per_s_per_user"] == pytest.approx(10.744112, rel=1e-6)
    assert r["tokens_per_s"] == pytest.approx(687.62315, rel=1e-6)
    assert r["tokens_per_s_per_chip"] == pytest.approx(687.62315, rel=1e-6)
    # $/Mtok = C·price/3600 · t_step/B · 1e6 = 2/3600 · 0.093074/64 · 1e6 = 0.80794
    assert r["usd_per_mtok"] == pytest.approx(0.80793608, rel=1e-6)
    # HBM = W + B·T·kv = 140e9 + 64·8192·327680 = 311.80e9 B > 80e9
    assert r["hbm_bytes_per_chip"] == pytest.approx(311_798_691_840, rel=1e-12)
    assert r["fits"] is False


def test_step_lists_broadcast_batch_major(capsys):
    d = run_json(capsys, "step", *FLAGS, "--batch", "1,64,1024", "--context", "0,8192")
    rows = d["rows"]
    assert len(rows) == 3 * 2  # len(batch) × len(context)
    assert [(r["batch"], r["context"]) for r in rows] == [
        (1, 0), (1, 8192), (64, 0), (64, 8192), (1024, 0), (1024, 8192)]
    # context 0 → no KV traffic; t_weights is the same 41.79 ms in every row
    assert all(r["t_kv_s"] == 0 for r in rows if r["context"] == 0)
    assert {round(r["t_weights_s"], 12) for r in rows} == {round(140e9 / 3.35e12, 12)}
    # B = 1024, T = 0: t_matmul = 2·70e9·1024/9.89e14 = 144.95 ms > 41.79 ms → compute-bound
    r = rows[4]
    assert r["bound"] == "compute"
    assert r["t_step_s"] == pytest.approx(0.14495450, rel=1e-7)
    # B = 1, T = 0: 41.79 ms weight fetch ≫ 0.14 ms matmul → weights-bound
    assert rows[0]["bound"] == "weights"


def test_step_one_list_broadcasts_against_a_single_value(capsys):
    d = run_json(capsys, "step", *FLAGS, "--batch", "1,2,4,8", "--context", "1024")
    assert len(d["rows"]) == 4
    assert {r["context"] for r in d["rows"]} == {1024}


def test_step_per_phase_mode(capsys):
    # B = 1024, T = 8192: t_matmul = 144.95 ms, t_weights = 41.79 ms, t_kv = 1024·8192·327680/3.35e12 = 820.53 ms
    # lecture:   max(144.95, 41.79 + 820.53) = 862.32 ms
    # per-phase: max(144.95, 41.79) + max(t_attn = 0, 820.53) = 965.49 ms
    args = ["step", *FLAGS, "--batch", "1024", "--context", "8192"]
    lecture = run_json(capsys, *args)["rows"][0]
    phase = run_json(capsys, *args, "--mode", "per-phase")["rows"][0]
    assert lecture["t_step_s"] == pytest.approx(0.86232211, rel=1e-7)
    assert phase["t_step_s"] == pytest.approx(0.96548556, rel=1e-7)


def test_step_chips_and_dtype_flags(capsys):
    base = run_json(capsys, "step", *FLAGS, "--batch", "8")["rows"][0]
    # --chips 8: W/(C·bw) = 41.79 ms / 8 = 5.224 ms
    eight = run_json(capsys, "step", *FLAGS, "--batch", "8", "--chips", "8")["rows"][0]
    assert eight["t_weights_s"] == pytest.approx(base["t_weights_s"] / 8, rel=1e-12)
    assert eight["t_weights_s"] == pytest.approx(0.0052238806, rel=1e-8)
    # fp8 weights (1 B/param) and --bytes-per-param 1 both halve W: 70e9/3.35e12 = 20.896 ms
    fp8 = run_json(capsys, "step", *FLAGS, "--batch", "8", "--weight-dtype", "fp8")["rows"][0]
    bpp = run_json(capsys, "step", *FLAGS, "--batch", "8", "--bytes-per-param", "1")["rows"][0]
    assert fp8["t_weights_s"] == pytest.approx(0.0208955224, rel=1e-8)
    assert bpp["t_weights_s"] == pytest.approx(fp8["t_weights_s"], rel=1e-12)


def test_bytes_per_param_between_and_below_dtypes(capsys):
    # 1.25 B/param (a mixed quantisation): W = 70e9 · 1.25 = 87.5e9 B → 87.5e9/3.35e12 = 26.119 ms
    r = run_json(capsys, "step", *FLAGS, "--bytes-per-param", "1.25")["rows"][0]
    assert r["t_weights_s"] == pytest.approx(0.0261194030, rel=1e-8)
    assert r["t_matmul_s"] == pytest.approx(2 * 70e9 / 9.89e14, rel=1e-12)  # Na unchanged
    # 0.25 B/param (2-bit) on the lecture's 700B / 87.5B MoE: W = 175e9 B; B* = F·W/(2·Na·bw)
    # = 9.89e14 · 175e9 / (2 · 87.5e9 · 3.35e12) = 295.22; the reported sparsity stays 700/87.5 = 8
    d = run_json(capsys, "balance", "--flops", "9.89e14", "--hbm-bw", "3.35e12", "--total-params", "700e9",
                 "--sparsity", "8", "--bytes-per-param", "0.25")
    assert d["inputs"]["weight_bytes"] == pytest.approx(175e9)
    assert d["inputs"]["total_params"] == pytest.approx(700e9)
    assert d["sparsity"] == pytest.approx(8)
    assert d["batch_balance"] == pytest.approx(295.22388, rel=1e-7)


def test_uncertain_preset_fields_are_reported_until_overridden(capsys, tmp_path):
    f = tmp_path / "chip.yaml"
    f.write_text("schema: roofline-presets/1\nkind: hardware\nitems:\n  x:\n    name: X\n    source: s\n"
                 "    date: '2026'\n    flops_bf16_per_s: 1e15\n    hbm_bytes: 80e9\n"
                 "    hbm_bandwidth_bytes_per_s: 3e12\n"
                 "    price_usd_per_hour: {value: 2, uncertain: true, note: guess}\n")
    d = run_json(capsys, "step", "--hardware", str(f), *DENSE70_FLAGS)
    assert d["inputs"]["uncertain_inputs"] == ["hardware.price_usd_per_hour"]
    code, out, _ = run(capsys, "step", "--hardware", str(f), *DENSE70_FLAGS)
    assert code == 0 and "uncertain" in out and "price_usd_per_hour" in out
    d = run_json(capsys, "step", "--hardware", str(f), *DENSE70_FLAGS, "--price-per-hour", "3")
    assert "uncertain_inputs" not in d["inputs"]


def test_scientific_notation_and_plain_decimals_agree(capsys):
    a = run_json(capsys, "step", *FLAGS, "--batch", "1e3", "--context", "8.192e3")
    b = run_json(capsys, "step", "--flops", "989000000000000", "--hbm-bw", "3.35E+12", "--hbm-bytes", "8e+10",
                 "--price-per-hour", "2.0", "--total-params", "7E10", "--kv-bytes-per-token", "3.2768e5",
                 "--batch", "1000", "--context", "8192")
    assert a["rows"] == b["rows"]
    assert a["rows"][0]["batch"] == 1000


def test_step_fractional_batch_is_allowed(capsys):
    # Batch ≥ 1 and may be fractional (an average batch); t_matmul scales linearly with B
    r = run_json(capsys, "step", *FLAGS, "--batch", "1.5")["rows"][0]
    assert r["t_matmul_s"] == pytest.approx(2 * 70e9 * 1.5 / 9.89e14, rel=1e-12)


def test_step_prints_a_table_without_json(capsys):
    code, out, err = run(capsys, "step", *FLAGS, "--batch", "1,64,1024", "--context", "0,8192")
    assert code == 0 and err == ""
    lines = out.strip().splitlines()
    header = next(i for i, line in enumerate(lines) if "t_step ms" in line)
    body = lines[header + 2:]  # header, rule, then one line per (batch, context)
    assert len(body) == 6
    assert "bound" in lines[header] and "$/Mtok" in lines[header]
    assert body[-1].split()[0] == "1,024"
    assert not out.lstrip().startswith("{")


# ---------------------------------------------------------------- balance

def test_balance_lecture_sparsity(capsys):
    # F/bw = 989/3.35 = 295.22 FLOP/byte; B* = (F/bw)·(total/active) = 295.22 × 8 = 2361.8
    d = run_json(capsys, "balance", "--flops", "9.89e14", "--hbm-bw", "3.35e12", "--total-params", "700e9",
                 "--sparsity", "8")
    assert {"flops_per_byte", "sparsity", "batch_balance", "context_never_compute_bound", "hbm_drain_s"} <= set(d)
    assert d["flops_per_byte"] == pytest.approx(295.22388, rel=1e-7)
    assert d["sparsity"] == pytest.approx(8)
    assert d["batch_balance"] == pytest.approx(2361.7910, rel=1e-7)
    # neither KV bytes nor HBM capacity were given: those answers are null, and the reason says why
    assert d["context_never_compute_bound"] is None
    assert d["hbm_drain_s"] is None
    assert "--kv-bytes-per-token" in d["reason"] and "--hbm-bytes" in d["reason"]


def test_balance_does_not_depend_on_chips_or_active_flag_form(capsys):
    args = ["balance", "--flops", "9.89e14", "--hbm-bw", "3.35e12", "--total-params", "700e9"]
    by_sparsity = run_json(capsys, *args, "--sparsity", "8")["batch_balance"]
    by_active = run_json(capsys, *args, "--active-params", "87.5e9", "--chips", "16")["batch_balance"]
    assert by_active == pytest.approx(by_sparsity, rel=1e-12)  # C cancels; 700/87.5 = 8


def test_balance_with_kv_and_drain_time(capsys):
    # T_never = 2·Na·bw/(F·kv) = 2·70e9·3.35e12/(9.89e14·327680) = 1447.19 tokens
    # B*(1000) = (W/bw)/(2·Na/F − T·kv/bw) = 0.041791/(1.41557e-4 − 9.78149e-5) = 955.39
    # hbm_drain = M/bw = 80e9/3.35e12 = 23.88 ms
    d = run_json(capsys, "balance", *FLAGS, "--context", "1000")
    assert d["context_never_compute_bound"] == pytest.approx(1447.1935, rel=1e-7)
    assert d["batch_balance"] == pytest.approx(955.39415, rel=1e-7)
    assert d["hbm_drain_s"] == pytest.approx(0.023880597, rel=1e-8)
    assert "reason" not in d


def test_balance_null_when_memory_bound_at_every_batch(capsys):
    # 2000 tokens > T_never = 1447: the KV fetch alone outweighs the matmuls at any batch
    d = run_json(capsys, "balance", *FLAGS, "--context", "2000")
    assert d["batch_balance"] is None
    assert "memory-bound at every batch" in d["reason"]
    code, out, _ = run(capsys, "balance", *FLAGS, "--context", "2000")
    assert code == 0 and "memory-bound" in out


def test_hbm_drain_time_via_flags(capsys):
    # M/bw = 288e9 B / 20e12 B/s = 14.4 ms (a B300/Rubin-class chip, flags only)
    d = run_json(capsys, "balance", "--flops", "5e15", "--hbm-bw", "20e12", "--hbm-bytes", "288e9",
                 "--total-params", "1e12")
    assert d["hbm_drain_s"] == pytest.approx(0.0144, rel=1e-12)


# ---------------------------------------------------------------- fast-mode

FAST_FLAGS = [*FLAGS, "--chips", "2"]  # 160 GB holds the 140 GB of weights; at context 0 any batch fits


def test_fast_mode_from_a_quote(capsys):
    # No KV (context 0): B* = F·W/(2·Na·bw) = 295.22 for a dense model.  S = 2.5, Pm = 6:
    # B_std = S·B* = 738.06, B_fast = B*/Pm = 49.204 — the lecture's "2.5·B* and B*/6"
    d = run_json(capsys, "fast-mode", *FAST_FLAGS, "--speedup", "2.5", "--price-multiple", "6")
    assert {"speedup", "price_multiple", "batch_standard", "batch_fast", "batch_standard_over_balance",
            "batch_fast_over_balance"} <= set(d)
    assert d["batch_balance"] == pytest.approx(295.22388, rel=1e-7)
    assert d["batch_standard"] == pytest.approx(738.05970, rel=1e-6)
    assert d["batch_fast"] == pytest.approx(49.203980, rel=1e-6)
    assert d["batch_standard_over_balance"] == pytest.approx(2.5, rel=1e-6)
    assert d["batch_fast_over_balance"] == pytest.approx(1 / 6, rel=1e-6)
    assert "reason" not in d


def test_fast_mode_forward_inverts_the_quote(capsys):
    # B_std = 2.5·B*: compute-bound, t = 2·Na·B_std/F; B_fast = B*/6: weight-bound, t = W/bw.
    # speedup = B_std/B* = 2.5; price multiple = (t_f/B_f)/(t_s/B_s) = B*/B_fast = 6
    d = run_json(capsys, "fast-mode", *FAST_FLAGS, "--batch-standard", "738.0597015", "--batch-fast", "49.20398010")
    assert d["speedup"] == pytest.approx(2.5, rel=1e-7)
    assert d["price_multiple"] == pytest.approx(6, rel=1e-7)


@pytest.mark.parametrize("speedup", ["1", "0.8"])
def test_fast_mode_speedup_at_most_one_is_null_with_reason(capsys, speedup):
    d = run_json(capsys, "fast-mode", *FAST_FLAGS, "--speedup", speedup, "--price-multiple", "6")
    assert d["batch_standard"] is None and d["batch_fast"] is None
    assert "speedup > 1" in d["reason"]


def test_fast_mode_beyond_the_latency_floor_is_null_with_reason(capsys):
    # B_fast = B*/Pm = 295.2/1000 = 0.295 < 1 sequence
    d = run_json(capsys, "fast-mode", *FAST_FLAGS, "--speedup", "2", "--price-multiple", "1000")
    assert d["batch_fast"] is None
    assert "< 1 sequence" in d["reason"]


# ---------------------------------------------------------------- kv-from-price, overtrain

def test_kv_from_price_lecture_1667(capsys):
    # kv = 2·Na·bw/(F·T) = 2·100e9·8e12/(4.8e15·2e5) = 1.6e24/9.6e20 = 1666.67 B/token (fp8)
    d = run_json(capsys, "kv-from-price", "--flops", "4.8e15", "--compute-dtype", "fp8", "--hbm-bw", "8e12",
                 "--active-params", "100e9", "--crossover-context", "2e5")
    assert d["kv_bytes_per_token"] == pytest.approx(1666.6667, rel=1e-7)
    assert d["flops_per_byte"] == pytest.approx(600)
    assert d["compute_dtype"] == "fp8"


def test_overtrain_lecture_numbers(capsys):
    # D_inf = 50e6 tok/s · 60 d · 86,400 s/d = 2.592e14
    # equal costs: 6·D_pre = 2·3·D_inf → D_pre = D_inf = 2.592e14; 3·3·D_RL = 6·D_inf → D_RL = 1.728e14
    # Chinchilla: 20 · 100e9 = 2e12; over-training factor = 2.592e14/2e12 = 129.6
    d = run_json(capsys, "overtrain", "--active-params", "100e9", "--inference-tokens-per-s", "50e6",
                 "--days", "60")
    assert d["inference_tokens"] == pytest.approx(2.592e14, rel=1e-12)
    assert d["pretrain_tokens"] == pytest.approx(2.592e14, rel=1e-12)
    assert d["rl_tokens"] == pytest.approx(1.728e14, rel=1e-12)
    assert d["chinchilla_tokens"] == pytest.approx(2e12, rel=1e-12)
    assert d["overtrain_factor"] == pytest.approx(129.6, rel=1e-12)


def test_overtrain_coefficients(capsys):
    # c_rl = 6, ineff_rl = 1: 6·1·D_RL = 2·3·D_inf → D_RL = D_inf = 2.592e14
    d = run_json(capsys, "overtrain", "--active-params", "100e9", "--inference-tokens-per-s", "50e6",
                 "--days", "60", "--c-rl", "6", "--ineff-rl", "1")
    assert d["rl_tokens"] == pytest.approx(2.592e14, rel=1e-12)


# ---------------------------------------------------------------- presets

def test_presets_lists_every_kind(capsys):
    d = run_json(capsys, "presets")
    assert set(d) == {"hardware", "model", "price", "tier", "measurement"}
    assert "h100" in d["hardware"] and "llama-3.1-70b" in d["model"]
    assert d["hardware"]["h100"]["hbm_bytes"] == 80e9
    assert isinstance(d["hardware"]["h100"]["uncertain"], list)
    code, out, _ = run(capsys, "presets", "hardware")
    assert code == 0
    keys = [line.split()[0] for line in out.splitlines()[1:]]
    assert keys == list(presets.hardware_presets())


def test_step_with_presets_matches_the_library(capsys):
    argv = ["step", "--hardware", "h100", "--model", "llama-3.1-70b", "--batch", "1,64,1024", "--context", "8192"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert "t_step ms" in out and len(out.strip().splitlines()) >= 3 + 2
    d = run_json(capsys, *argv)
    hw, m = presets.get("hardware", "h100"), presets.get("model", "llama-3.1-70b")
    chips = auto_chips(hw, m, Precision(), 1024, 8192)
    # auto sizes for the largest batch: 141.2 GB + 1024·8192·327,680 B = 2.89 TB ≫ 8 × 72 GB → the 8-GPU domain
    assert chips == 8 and d["inputs"]["chips"] == 8
    ref = decode_step(System(hw, m, Precision(), Deployment(chips=chips)), np.array([1.0, 64, 1024])[:, None],
                      np.array([8192.0])[None, :])
    assert d["rows"] == json.loads(json.dumps(ref.rows()))
    # by hand at B = 64: t_weights = 141.2e9/(8·3.35e12) = 5.269 ms; t_kv = 64·8192·327680/(8·3.35e12) = 6.410 ms
    r = d["rows"][1]
    assert r["t_weights_s"] == pytest.approx(0.0052686567, rel=1e-7)
    assert r["t_kv_s"] == pytest.approx(0.0064103990, rel=1e-7)
    assert r["bound"] == "kv"


def test_flag_overrides_a_preset_field(capsys):
    base = ["step", "--hardware", "h100", "--model", "llama-3.1-70b", "--chips", "2"]
    r = run_json(capsys, *base, "--hbm-bw", "4e12")["rows"][0]
    assert r["t_weights_s"] == pytest.approx(141.2e9 / (2 * 4e12), rel=1e-9)  # 17.65 ms
    # --compute-dtype fp8 picks the preset's fp8 FLOP/s: t_matmul halves (1978.9 vs 989.4 TFLOP/s)
    bf16 = run_json(capsys, *base, "--batch", "512")["rows"][0]
    fp8 = run_json(capsys, *base, "--batch", "512", "--compute-dtype", "fp8")["rows"][0]
    assert bf16["t_matmul_s"] / fp8["t_matmul_s"] == pytest.approx(1978.9 / 989.4, rel=1e-9)


def test_hardware_from_a_yaml_file(capsys, tmp_path):
    f = tmp_path / "chip.yaml"
    f.write_text("schema: roofline-presets/1\nkind: hardware\nitems:\n  mychip:\n    name: My chip\n"
                 "    source: test\n    date: '2026-01'\n    flops_bf16_per_s: 1e15\n    hbm_bytes: 96e9\n"
                 "    hbm_bandwidth_bytes_per_s: 4e12\n    price_usd_per_hour: 3\n")
    # F/bw = 1e15/4e12 = 250; M/bw = 96e9/4e12 = 24 ms
    d = run_json(capsys, "balance", "--hardware", str(f), "--total-params", "70e9")
    assert d["flops_per_byte"] == pytest.approx(250)
    assert d["hbm_drain_s"] == pytest.approx(0.024)
    assert d["batch_balance"] == pytest.approx(250)  # dense: B* = F/bw


# ---------------------------------------------------------------- bad input: exit 2, one line naming the flag

BAD = [
    # (argv, substrings the one error line must contain)
    (["step", *FLAGS, "--mfu", "1.5"], ["--mfu", "> 0 and ≤ 1"]),                        # out of range
    (["step", *FLAGS, "--batch", "nan"], ["--batch", "≥ 1"]),                             # NaN
    (["step", *FLAGS, "--context", "inf"], ["--context", "≥ 0"]),                         # inf
    (["balance", *FLAGS, "--context", "1e999"], ["--context", "≥ 0"]),                    # overflows to inf
    (["step", *H100_FLAGS, "--total-params", "-inf"], ["--total-params", "> 0"]),         # -inf
    (["step", *FLAGS, "--hbm-bw", "-1e12"], ["--hbm-bw", "> 0"]),                         # negative, sci notation
    (["step", *FLAGS, "--context", "-5"], ["--context", "≥ 0"]),                          # negative
    (["step", *FLAGS, "--batch", "4,-1"], ["--batch", "≥ 1"]),                            # negative in a list
    (["step", *FLAGS, "--batch", "0"], ["--batch", "≥ 1"]),                               # zero
    (["step", *FLAGS, "--price-per-hour", "0"], ["--price-per-hour", "> 0"]),             # zero
    (["kv-from-price", *FLAGS, "--crossover-context", "0"], ["--crossover-context", "> 0"]),
    (["step", *FLAGS, "--flops", "fast"], ["--flops", "not a number", "> 0"]),            # non-numeric
    (["step", *FLAGS, "--batch", "1,x"], ["--batch", "not a number"]),
    (["step", *FLAGS, "--batch", "1,,64"], ["--batch", "empty", "≥ 1"]),                  # empty element
    (["step", *FLAGS, "--batch", "1,"], ["--batch", "empty"]),
    (["step", *FLAGS, "--batch", ""], ["--batch", "empty"]),
    (["step", *FLAGS, "--pipeline-stages", "1.5"], ["--pipeline-stages", "integer"]),
    (["step", *FLAGS, "--sparsity", "0.5"], ["--sparsity", "≥ 1"]),
    (["step", *FLAGS, "--bytes-per-param", "0.25"], ["--bytes-per-param", "≥ 0.5"]),     # dense: W < Na·0.5
    (["overtrain", "--active-params", "1e11", "--inference-tokens-per-s", "1e6", "--days", "1", "--c-rl", "7"],
     ["--c-rl", "≤ 6"]),
    (["step", *FLAGS, "--active-params", "80e9"], ["--active-params", "total_params"]),   # active > total
    (["step", *FLAGS, "--active-params", "1e9", "--sparsity", "2"], ["--sparsity", "--active-params"]),
    (["step", *FLAGS, "--sparse-attention", "fraction", "--sparse-param", "2"], ["--sparse-param", "≤ 1"]),
    (["step", *FLAGS, "--mode", "fast"], ["--mode", "lecture", "per-phase"]),
    (["step", *FLAGS, "--compute-dtype", "int8"], ["--compute-dtype", "fp4"]),
    (["step", "--hardware", "nosuch", *DENSE70_FLAGS], ["--hardware", "nosuch", "h100"]),    # unknown preset
    (["step", *H100_FLAGS, "--model", "gpt-9"], ["--model", "gpt-9", "llama-3.1-70b"]),
    (["frobnicate"], ["frobnicate", "step"]),                                                # unknown subcommand
    (["presets", "chips"], ["chips", "hardware"]),
    ([], ["subcommand", "step"]),
    (["step", *DENSE70_FLAGS], ["--hardware", "--flops", "--hbm-bw"]),                       # missing flags
    (["step", "--flops", "1e15", *DENSE70_FLAGS], ["--hbm-bw"]),          # price and HBM bytes are optional
    (["step", *H100_FLAGS], ["--model", "--total-params"]),
    (["kv-from-price", *FLAGS], ["--crossover-context"]),
    (["overtrain", "--active-params", "1e11", "--inference-tokens-per-s", "5e7"], ["--days"]),
    (["step", *FLAGS, "--batch"], ["--batch"]),
    (["step", *FLAGS, "--frobnicate", "1"], ["--frobnicate"]),
    (["step", *FLAGS, "--batch", ",".join(["1"] * 10_001)], ["--batch", "10,000"]),
    (["step", *H100_FLAGS, "--total-params", "70e9", "--context", "8192"], ["--kv-bytes-per-token"]),  # no KV
    (["balance", *H100_FLAGS, "--total-params", "70e9", "--context", "8192"], ["--context", "--kv-bytes-per-token"]),
    # fast-mode: the two flag sets are mutually exclusive, and each needs both of its flags
    (["fast-mode", *FAST_FLAGS, "--speedup", "2", "--price-multiple", "6", "--batch-standard", "512",
      "--batch-fast", "64"], ["--batch-standard", "--speedup"]),
    (["fast-mode", *FAST_FLAGS, "--speedup", "2"], ["--speedup", "--price-multiple"]),
    (["fast-mode", *FAST_FLAGS, "--batch-fast", "8"], ["--batch-standard", "--batch-fast"]),
    (["fast-mode", *FAST_FLAGS], ["--batch-standard", "--speedup"]),
    (["fast-mode", *FAST_FLAGS, "--speedup", "nan", "--price-multiple", "6"], ["--speedup", "> 0"]),
    # fp4 on a chip without an fp4 figure (H100 has bf16 and fp8 only)
    (["step", "--hardware", "h100", "--model", "llama-3.1-70b", "--compute-dtype", "fp4"],
     ["--compute-dtype", "fp4", "bf16, fp8"]),
]


@pytest.mark.parametrize(("argv", "expected"), BAD, ids=[" ".join(a[:1] + a[-2:])[:60] for a, _ in BAD])
def test_bad_input_exits_2_with_one_line(capsys, argv, expected):
    line = run_error(capsys, *argv)
    assert line.startswith("error: ")
    for s in expected:
        assert s in line, (s, line)


def test_malformed_yaml_hardware_file(capsys, tmp_path):
    f = tmp_path / "broken.yaml"
    f.write_text("schema: roofline-presets/1\nkind: hardware\nitems:\n  x: {name: [unclosed\n")
    line = run_error(capsys, "step", "--hardware", str(f), *DENSE70_FLAGS)
    assert "--hardware" in line and "not valid YAML" in line and "line" in line


def test_hardware_file_with_an_out_of_range_field(capsys, tmp_path):
    f = tmp_path / "neg.yaml"
    f.write_text("schema: roofline-presets/1\nkind: hardware\nitems:\n  x:\n    name: X\n    source: s\n"
                 "    date: '2026'\n    flops_bf16_per_s: 1e15\n    hbm_bytes: 80e9\n"
                 "    hbm_bandwidth_bytes_per_s: .nan\n    price_usd_per_hour: -2\n")
    line = run_error(capsys, "step", "--hardware", str(f), *DENSE70_FLAGS)
    assert "--hardware" in line and "hbm_bandwidth_bytes_per_s" in line and "> 0" in line
    assert "(and 1 more)" in line  # the price is wrong too


def test_model_file_of_the_wrong_kind_and_missing_file(capsys, tmp_path):
    f = tmp_path / "chip.json"
    f.write_text(json.dumps({"schema": "roofline-presets/1", "kind": "hardware", "items": {"x": {
        "name": "X", "source": "s", "date": "2026", "flops_bf16_per_s": 1e15, "hbm_bytes": 8e10,
        "hbm_bandwidth_bytes_per_s": 3e12, "price_usd_per_hour": 2}}}))
    assert "expected a model file" in run_error(capsys, "step", *H100_FLAGS, "--model", str(f))
    line = run_error(capsys, "step", "--hardware", str(tmp_path / "absent.yaml"), *DENSE70_FLAGS)
    assert "--hardware" in line and "cannot read" in line


def test_fp4_on_a_file_chip_without_fp4(capsys, tmp_path):
    f = tmp_path / "chip.yaml"
    f.write_text("schema: roofline-presets/1\nkind: hardware\nitems:\n  x:\n    name: Old chip\n    source: s\n"
                 "    date: '2026'\n    flops_bf16_per_s: 1e15\n    flops_fp8_per_s: 2e15\n    hbm_bytes: 80e9\n"
                 "    hbm_bandwidth_bytes_per_s: 3e12\n    price_usd_per_hour: 2\n")
    line = run_error(capsys, "step", "--hardware", str(f), *DENSE70_FLAGS, "--compute-dtype", "fp4")
    assert "--compute-dtype fp4" in line and "Old chip" in line and "bf16, fp8" in line
    # --flops given: used as is at whatever dtype the user meant, so fp4 is then fine
    d = run_json(capsys, "step", "--hardware", str(f), *DENSE70_FLAGS, "--compute-dtype", "fp4", "--flops", "4e15")
    assert d["inputs"]["flops_per_s"] == 4e15


# ---------------------------------------------------------------- the real module, in a subprocess

@pytest.mark.parametrize("argv", [
    ["balance", "--flops", "nan", "--hbm-bw", "3.35e12", "--total-params", "70e9"],
    ["step", "--hardware", "no-such-chip", "--model", "llama-3.1-70b"],
    ["step", *FLAGS, "--hbm-bw", "-3.35e12"],
])
def test_subprocess_bad_input(argv):
    line = module_error(*argv)
    assert any(a in line for a in argv if a in ("--flops", "--hardware", "--hbm-bw")), line


def test_subprocess_json_round_trip():
    p = module("kv-from-price", "--flops", "4.8e15", "--compute-dtype", "fp8", "--hbm-bw", "8e12",
                "--active-params", "1e11", "--crossover-context", "200000", "--json")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert json.loads(p.stdout)["kv_bytes_per_token"] == pytest.approx(1666.6667, rel=1e-7)


# ---------------------------------------------------------------- layout and pipeline

def test_layout_deepseek_on_a_gb200_rack(capsys):
    d = run_json(capsys, "layout", "--hardware", "gb200", "--model", "deepseek-v3", "--chips", "64",
                 "--batch", "2048", "--context", "4096")
    # 256 experts over 64 GPUs = 4 each (lecture §2.9); per token 2·8·7168·2 B·58 layers = 13,303,808 B.
    assert d["experts_per_gpu"] == 4
    assert d["alltoall_bytes_per_token"] == 2 * 8 * 7168 * 2 * 58
    assert d["alltoall_bytes_per_step"] == pytest.approx(2048 * 13_303_808)
    # Inside the 72-GPU domain: 63/64 of each GPU's bytes on NVLink at 900 GB/s, none on the NIC.
    assert d["share_scaleout"] == 0
    assert d["t_scaleup_s"] == pytest.approx(2048 * 13_303_808 / 64 * 63 / 64 / 900e9)
    assert d["t_comm_s"] == d["t_scaleup_s"]


def test_layout_leaving_the_rack_crosses_scaleout(capsys):
    d = run_json(capsys, "layout", "--hardware", "gb200", "--model", "deepseek-v3", "--gpus", "144",
                 "--batch", "2048")
    # 144 GPUs = 2 racks: (144 − 72)/144 = half of each GPU's traffic over the 400 Gb/s (50 GB/s) NIC.
    assert d["share_scaleout"] == 0.5 and d["domains_spanned"] == 2
    assert d["t_scaleout_s"] == pytest.approx(2048 * 13_303_808 / 144 * 0.5 / 50e9)
    assert d["inputs"]["chips"] == 144 and d["inputs"]["chips_auto"] is False


def test_layout_needs_an_moe_model(capsys):
    line = run_error(capsys, "layout", "--hardware", "h100", "--model", "llama-3.1-70b")
    assert "no routed experts" in line


def test_pipeline_kv_per_chip_is_constant(capsys):
    d = run_json(capsys, "pipeline", "--hardware", "h100", "--model", "llama-3.1-405b", "--chips", "8",
                 "--micro-batch", "16", "--context", "8192", "--stages", "1,2,4,8", "--hop-latency", "3e-3")
    rows = d["rows"]
    # Weights 405.9e9 · 2 B over 8·P chips; KV 16 · 8192 · 516,096 B over 8 chips whatever P is.
    for r, P in zip(rows, (1, 2, 4, 8), strict=True):
        assert r["weight_bytes_per_chip"] == pytest.approx(405.9e9 * 2 / (8 * P), rel=1e-3)
        assert r["kv_bytes_per_chip"] == pytest.approx(16 * 8192 * 516_096 / 8)
        assert r["training_bubble"] == pytest.approx((P - 1) / (2 * P - 1))
    # Latency grows by P hops of 3 ms past P = 1.
    assert rows[1]["latency_s"] - rows[0]["latency_s"] == pytest.approx(2 * 3e-3)
    assert [r["fits"] for r in rows] == [False, True, True, True]


def test_pipeline_cut_ratio_with_preset_links(capsys):
    d = run_json(capsys, "pipeline", "--hardware", "gb200", "--model", "deepseek-v3", "--chips", "64",
                 "--micro-batch", "512", "--context", "4096", "--stages", "1,2,61")
    # Only MoE layers carry the all-to-all: DeepSeek-V3 has 58 of 61 (config.json first_k_dense_replace 3).
    # P = 2: 29 MoE layers per stage, (50/900) · 2 · 8 · 29 = 25.78.
    # P = 61: 58/61 per stage, (50/900) · 2 · 8 · 58/61 = 0.8452 (< 1: GB200's NIC is 18× slower than NVLink).
    r1, r2, r61 = d["rows"]
    assert r2["moe_layers_per_stage"] == 29 and r2["cut_ratio"] == pytest.approx(50 / 900 * 16 * 29)
    assert r61["cut_ratio"] == pytest.approx(50 / 900 * 16 * 58 / 61)
    # P = 1: one stage, no cut — null with a reason, not a ratio.
    assert r1["cut_ratio"] is None and "no cut" in r1["cut_reason"]
    assert "cut_reason" not in r2


def test_pipeline_cut_ratio_counts_llama4_maverick_moe_layers_only(capsys):
    # Maverick: 48 layers, MoE on alternate ones (interleave_moe_layer_step 2) → 24 MoE layers, k = 1.
    # P = 4: 6 MoE layers per stage; GB200 (50/900) · 2 · 1 · 6 = 0.6667 (counting all 48 would give 1.333).
    d = run_json(capsys, "pipeline", "--hardware", "gb200", "--model", "llama-4-maverick", "--chips", "8",
                 "--stages", "4")
    assert d["rows"][0]["moe_layers_per_stage"] == 6
    assert d["rows"][0]["cut_ratio"] == pytest.approx(50 / 900 * 2 * 6)


def test_pipeline_cut_ratio_is_null_for_a_dense_model(capsys):
    d = run_json(capsys, "pipeline", "--hardware", "gb200", "--model", "llama-3.1-70b", "--chips", "8",
                 "--stages", "2")
    assert d["rows"][0]["cut_ratio"] is None and "dense" in d["rows"][0]["cut_reason"]


@pytest.mark.parametrize("argv,flag", [
    (["layout", "--hardware", "gb200", "--model", "deepseek-v3", "--gpus", "0"], "--gpus"),
    (["layout", "--hardware", "gb200", "--model", "deepseek-v3", "--experts", "2.5"], "--experts"),
    (["pipeline", "--hardware", "h100", "--model", "llama-3.1-70b", "--stages", "1,0"], "--stages"),
    (["pipeline", "--hardware", "h100", "--model", "llama-3.1-70b", "--micro-batch", "nan"], "--micro-batch"),
])
def test_layout_and_pipeline_bad_input(capsys, argv, flag):
    assert flag in run_error(capsys, *argv)
