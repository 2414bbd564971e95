"""The CLI's input contract (docs/design.md "The command line"): a subcommand needs only the
inputs its output uses.  Every subcommand runs from flags alone (no preset), with values derived by
hand in the comments; an output whose input is missing is null with a reason; and every
`python -m model …` example in the README exits 0.

One made-up chip and model keep the arithmetic round:
  F = 1e15 FLOP/s, bw = 2e12 B/s  →  F/bw = 500 FLOP/B
  N = 100e9 params (bf16: W = 200e9 B), Na = 10e9 (sparsity 10)
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from model import cli
from tests import ROOT
from tests.cli.helpers import run_error, run_json, run_text

CHIP = ["--flops", "1e15", "--hbm-bw", "2e12"]
MODEL = ["--total-params", "100e9", "--active-params", "10e9"]
MOE = ["--experts", "64", "--experts-per-token", "4", "--d-model", "4096", "--moe-layers", "30", "--layers", "32"]
LINKS = ["--scaleup-bw", "400e9", "--scaleout-bw", "50e9", "--domain", "8"]




# ---------------------------------------------------------------- step

def test_step_without_price_or_hbm_capacity_still_gives_the_step(capsys):
    # No --price-per-hour, no --hbm-bytes, no KV figure (context 0), no preset.
    d = run_json(capsys, "step", *CHIP, *MODEL, "--batch", "100")
    (r,) = d["rows"]
    # t_weights = W/bw = 200e9/2e12 = 0.1 s; t_matmul = 2·Na·B/F = 2·10e9·100/1e15 = 2 ms → weights-bound
    assert r["t_weights_s"] == pytest.approx(0.1, rel=1e-12)
    assert r["t_matmul_s"] == pytest.approx(2e-3, rel=1e-12)
    assert r["t_step_s"] == pytest.approx(0.1, rel=1e-12) and r["bound"] == "weights"
    # 1/0.1 s = 10 tok/s per user; × 100 sequences = 1,000 tok/s
    assert r["tokens_per_s_per_user"] == pytest.approx(10.0) and r["tokens_per_s"] == pytest.approx(1000.0)
    # HBM used per chip is W at context 0 (it needs no capacity figure); whether it fits does.
    assert r["hbm_bytes_per_chip"] == pytest.approx(200e9)
    assert r["usd_per_mtok"] is None and r["fits"] is None
    assert "--price-per-hour" in d["reason"] and "--hbm-bytes" in d["reason"]
    inp = d["inputs"]
    assert inp["price_usd_per_hour"] is None and inp["hbm_bytes"] is None
    assert inp["not_given"] == ["--hbm-bytes", "--price-per-hour"]
    assert inp["chips"] == 1 and inp["kv_bytes_per_token"] is None
    text = run_text(capsys, "step", *CHIP, *MODEL, "--batch", "100")
    assert "note: usd_per_mtok needs a price per chip-hour" in text and "not given" in text


def test_step_with_price_and_capacity_from_flags(capsys):
    # C = 4: t_weights = 200e9/(4·2e12) = 25 ms ≥ t_matmul = 2·10e9·100/(4e15) = 0.5 ms
    # $/Mtok = C·price/3600 · t_step/B · 1e6 = 4 · 3.6/3600 · 0.025/100 · 1e6 = 1.0
    # HBM per chip = 200e9/4 = 50e9 ≤ 100e9 → fits
    d = run_json(capsys, "step", *CHIP, *MODEL, "--price-per-hour", "3.6", "--hbm-bytes", "100e9", "--chips", "4",
                 "--batch", "100")
    (r,) = d["rows"]
    assert r["usd_per_mtok"] == pytest.approx(1.0, rel=1e-12)
    assert r["fits"] is True
    assert "reason" not in d and "not_given" not in d["inputs"]


def test_step_needs_a_kv_figure_only_past_context_zero(capsys):
    assert "--kv-bytes-per-token" in run_error(capsys, "step", *CHIP, *MODEL, "--context", "1000")
    # With one: t_kv = B·T·kv/bw = 100 · 1000 · 1e5 / 2e12 = 5 ms
    d = run_json(capsys, "step", *CHIP, *MODEL, "--batch", "100", "--context", "1000", "--kv-bytes-per-token", "1e5")
    assert d["rows"][0]["t_kv_s"] == pytest.approx(5e-3, rel=1e-12)


# ---------------------------------------------------------------- balance

def test_balance_from_flags_alone(capsys):
    # B* = (F/bw)·(N/Na) = 500 · 10 = 5,000; no HBM capacity → no drain time; no KV → no "never" context
    d = run_json(capsys, "balance", *CHIP, *MODEL)
    assert d["flops_per_byte"] == pytest.approx(500.0) and d["batch_balance"] == pytest.approx(5000.0)
    assert d["hbm_drain_s"] is None and d["context_never_compute_bound"] is None
    assert "--hbm-bytes" in d["reason"]
    # With kv = 1e5 B/token: never compute-bound past T = 2·Na·bw/(F·kv) = 2·10e9·2e12/(1e15·1e5) = 400;
    # drain = M/bw = 100e9/2e12 = 50 ms.
    d = run_json(capsys, "balance", *CHIP, *MODEL, "--kv-bytes-per-token", "1e5", "--hbm-bytes", "100e9")
    assert d["context_never_compute_bound"] == pytest.approx(400.0)
    assert d["hbm_drain_s"] == pytest.approx(0.05)


# ---------------------------------------------------------------- fast-mode

def test_fast_mode_two_batches_need_no_hbm_figure_or_price(capsys):
    # t(10,000) = max(2·10e9·1e4/1e15 = 0.2, 0.1) = 0.2 s; t(1,000) = max(0.02, 0.1) = 0.1 s
    # speedup = 0.2/0.1 = 2; price multiple = (0.1/1,000)/(0.2/10,000) = 5 (the price per hour cancels)
    # B* = 5,000 → standard/B* = 2, fast/B* = 0.2
    d = run_json(capsys, "fast-mode", *CHIP, *MODEL, "--batch-standard", "10000", "--batch-fast", "1000")
    assert d["speedup"] == pytest.approx(2.0) and d["price_multiple"] == pytest.approx(5.0)
    assert d["batch_standard_over_balance"] == pytest.approx(2.0)
    assert d["batch_fast_over_balance"] == pytest.approx(0.2)
    assert d["t_step_standard_s"] == pytest.approx(0.2) and d["t_step_fast_s"] == pytest.approx(0.1)
    assert d["usd_per_mtok_standard"] is None and d["usd_per_mtok_fast"] is None
    assert "--price-per-hour" in d["reason"]


def test_fast_mode_from_a_quote_needs_the_hbm_capacity(capsys):
    # From a quote the standard batch must fit in HBM, so the capacity is needed then.
    line = run_error(capsys, "fast-mode", *CHIP, *MODEL, "--speedup", "2", "--price-multiple", "5")
    assert "--hbm-bytes" in line and "--price-per-hour" not in line
    # S·Pm = λ = 10; B_std = S·B* = 2 · 5,000 = 10,000, B_fast = B*/Pm = 1,000 (no KV at context 0)
    d = run_json(capsys, "fast-mode", *CHIP, *MODEL, "--hbm-bytes", "1e15", "--speedup", "2",
                 "--price-multiple", "5")
    assert d["batch_standard"] == pytest.approx(10_000, rel=1e-6)
    assert d["batch_fast"] == pytest.approx(1_000, rel=1e-6)


# ---------------------------------------------------------------- kv-from-price

def test_kv_from_price_from_flags_alone(capsys):
    # kv = 2·Na·bw/(F·T) = 2·10e9·2e12/(1e15·1e5) = 400 B/token; no total params, HBM or price needed
    d = run_json(capsys, "kv-from-price", *CHIP, "--active-params", "10e9", "--crossover-context", "1e5")
    assert d["kv_bytes_per_token"] == pytest.approx(400.0)


# ---------------------------------------------------------------- layout

def test_layout_from_flags_alone(capsys):
    d = run_json(capsys, "layout", *CHIP, *MODEL, *MOE, *LINKS, "--gpus", "16", "--batch", "256")
    # ⌈64/16⌉ = 4 experts per GPU; 16 GPUs over domains of 8 → 2 domains
    assert d["experts_per_gpu"] == 4 and d["domains_spanned"] == 2 and d["domain"] == 8
    # per token: dispatch + combine over the 30 MoE layers, 2·k·d·a·L = 2·4·4096·2·30 = 1,966,080 B
    assert d["alltoall_bytes_per_token"] == 1_966_080
    # per step 256 · 1,966,080 = 503,316,480 B; per GPU ÷16 = 31,457,280 B
    assert d["alltoall_bytes_per_step"] == 503_316_480 and d["alltoall_bytes_per_gpu"] == 31_457_280
    # (min(16, 8) − 1)/16 = 7/16 on scale-up, (16 − 8)/16 = 1/2 over scale-out
    assert d["share_scaleup"] == pytest.approx(7 / 16) and d["share_scaleout"] == pytest.approx(0.5)
    # t_up = 31,457,280 · 7/16 / 400e9 = 34.406 µs; t_out = 31,457,280 · 0.5 / 50e9 = 314.57 µs
    assert d["t_scaleup_s"] == pytest.approx(31_457_280 * 7 / 16 / 400e9, rel=1e-12)
    assert d["t_scaleout_s"] == pytest.approx(314.5728e-6, rel=1e-12)
    assert d["t_comm_s"] == d["t_scaleout_s"]
    # step on 16 chips: t_weights = 200e9/(16·2e12) = 6.25 ms > t_matmul 0.32 ms and t_comm 0.315 ms
    assert d["t_step_s"] == pytest.approx(6.25e-3, rel=1e-12) and d["bound"] == "weights"
    # 256 tokens over 64 experts, 4 each: 64·(1 − (1 − 4/64)^256) = 64·(1 − 6.7e-8)
    assert d["expected_distinct_experts"] == pytest.approx(64 * (1 - (60 / 64) ** 256), rel=1e-12)
    assert d["usd_per_mtok"] is None and "--price-per-hour" in d["reason"]


def test_layout_within_one_domain_needs_no_scaleout_figure(capsys):
    # 8 GPUs inside a domain of 8: everything on scale-up, 7/8 of each GPU's bytes:
    # 256 · 1,966,080 / 8 · 7/8 / 400e9 = 137.63 µs
    d = run_json(capsys, "layout", *CHIP, *MODEL, *MOE, "--scaleup-bw", "400e9", "--domain", "8", "--gpus", "8",
                 "--batch", "256")
    assert d["share_scaleout"] == 0
    assert d["t_comm_s"] == pytest.approx(256 * 1_966_080 / 8 * 7 / 8 / 400e9, rel=1e-12)


@pytest.mark.parametrize(("drop", "flag"), [
    ("--d-model", "--d-model"), ("--experts", "--experts"), ("--scaleout-bw", "--scaleout-bw"),
    ("--scaleup-bw", "--scaleup-bw"),
])
def test_layout_names_the_missing_flag(capsys, drop, flag):
    argv = [*CHIP, *MODEL, *MOE, *LINKS, "--gpus", "16"]
    i = argv.index(drop)
    del argv[i:i + 2]
    assert flag in run_error(capsys, "layout", *argv)


def test_layout_flags_are_range_checked(capsys):
    line = run_error(capsys, "layout", *CHIP, *MODEL, *LINKS, "--experts", "4", "--experts-per-token", "8",
                     "--d-model", "4096", "--layers", "2")
    assert "--experts-per-token" in line and "n_experts" in line
    assert "--moe-layers" in run_error(capsys, "layout", *CHIP, *MODEL, *LINKS, "--moe-layers", "0")


# ---------------------------------------------------------------- pipeline

def test_pipeline_from_flags_alone_needs_no_price(capsys):
    d = run_json(capsys, "pipeline", *CHIP, *MODEL, *MOE, *LINKS, "--chips", "2", "--stages", "1,2,4",
                 "--micro-batch", "8")
    r1, r2, r4 = d["rows"]
    # weights per chip = W/(C·P) = 200e9/(2·P): 100, 50, 25 GB; no KV at context 0
    assert [r["weight_bytes_per_chip"] for r in d["rows"]] == pytest.approx([100e9, 50e9, 25e9])
    assert all(r["kv_bytes_per_chip"] == 0 for r in d["rows"])
    # the whole step: max(2·10e9·8/(2·1e15) = 80 µs, 200e9/(2·2e12) = 50 ms) = 50 ms; tokens/s = P·b/t
    assert r2["latency_s"] == pytest.approx(0.05) and r2["tokens_per_s"] == pytest.approx(2 * 8 / 0.05)
    # cut check over MoE layers: (50/400)·2·4·(30/P): P = 2 → 15, P = 4 → 7.5; P = 1 has no cut
    assert r2["cut_ratio"] == pytest.approx(15.0) and r4["cut_ratio"] == pytest.approx(7.5)
    assert r2["moe_layers_per_stage"] == 15
    assert r1["cut_ratio"] is None and "no cut" in r1["cut_reason"]
    # no HBM capacity: fits is null, with a reason
    assert all(r["fits"] is None for r in d["rows"]) and "--hbm-bytes" in d["reason"]


# ---------------------------------------------------------------- cache-tier

def test_cache_tier_needs_no_hbm_bandwidth(capsys):
    d = run_json(capsys, "cache-tier", "--flops", "1e15", "--hbm-bytes", "100e9", "--price-per-hour", "3.6",
                 *MODEL, "--kv-bytes-per-token", "1e5", "--hold-seconds", "10")
    hbm = d["tiers"][0]
    assert hbm["key"] == "hbm"
    # hold in HBM: kv/M · price/3600 · t = 1e5/100e9 · 1e-3 $/s · 10 s = 1e-8 $; retrieving from HBM is free
    assert hbm["usd_per_token"] == pytest.approx(1e-8, rel=1e-12) and hbm["retrieve_usd_per_token"] == 0
    # recompute: 2·Na/F · price/3600 = 2·10e9/1e15 · 1e-3 = 2e-8 $ per token
    assert d["recompute_usd_per_token"] == pytest.approx(2e-8, rel=1e-12)
    assert hbm["bandwidth_bytes_per_s"] is None and hbm["drain_s"] is None and "--hbm-bw" in d["reason"]


def test_cache_tier_still_needs_price_and_capacity(capsys):
    line = run_error(capsys, "cache-tier", "--flops", "1e15", *MODEL, "--kv-bytes-per-token", "1e5",
                     "--hold-seconds", "10")
    assert "--hbm-bytes" in line and "--price-per-hour" in line and "--hbm-bw" not in line


# ---------------------------------------------------------------- the README's examples

def _readme_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    cmds = []
    for line in text.splitlines():
        m = re.match(r"\s*python -m model (.*)$", line)
        if m:
            cmds.append(shlex.split(m.group(1).split(" #")[0]))
    return cmds


def test_the_readme_has_cli_examples():
    cmds = _readme_commands()
    assert len(cmds) >= 9
    assert {c[0] for c in cmds} >= {"step", "balance", "fast-mode", "kv-from-price", "layout", "pipeline",
                                    "overtrain", "cache-tier", "presets", "calibrate"}
    # A layout from flags alone (no preset), as the CLI contract promises.
    assert any(c[0] == "layout" and "--hardware" not in c and "--model" not in c for c in cmds)


@pytest.mark.parametrize("argv", _readme_commands(),
                         ids=lambda a: " ".join(a)[:70])
def test_every_readme_example_exits_0(capsys, monkeypatch, argv):
    monkeypatch.chdir(ROOT)                          # the examples' file paths are relative to the repository
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip() and err == ""


def test_the_example_measurements_fit_half_the_bandwidth(capsys):
    # docs/example_measurements.csv holds the points of tests/presets/helpers.py: generated at
    # exactly half the ideal bandwidth bound (derivation there), so the fit gives BWU 0.5.
    d = run_json(capsys, "calibrate", "--measurements", str(ROOT / "docs" / "example_measurements.csv"))
    assert d["count"] == 3 and d["bw_util"] == pytest.approx(0.5, rel=5e-3)


# ---------------------------------------------------------------- a user's file without sources

def test_a_chip_file_without_sources_runs_and_its_numbers_are_listed_unsourced(capsys, tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("schema: roofline-presets/1\nkind: hardware\nitems:\n  mine:\n    name: My chip\n"
                 "    flops_bf16_per_s: 1e15\n    hbm_bytes: 100e9\n    hbm_bandwidth_bytes_per_s: 2e12\n"
                 "    price_usd_per_hour: {value: 3.6, source: my invoice, date: '2026-11'}\n")
    d = run_json(capsys, "step", "--hardware", str(f), *MODEL, "--batch", "100", "--chips", "4")
    assert d["inputs"]["unsourced"] == ["hardware.flops_bf16_per_s", "hardware.hbm_bytes",
                                        "hardware.hbm_bandwidth_bytes_per_s"]
    # the numbers are used: the same $1.0/Mtok as test_step_with_price_and_capacity_from_flags
    assert d["rows"][0]["usd_per_mtok"] == pytest.approx(1.0, rel=1e-12)
    text = run_text(capsys, "step", "--hardware", str(f), *MODEL, "--batch", "100", "--chips", "4")
    assert "note: unsourced numbers" in text and "hardware.hbm_bytes" in text
    # A flag that replaces a file's number: that number is the user's flag, no longer the file's.
    d = run_json(capsys, "step", "--hardware", str(f), *MODEL, "--hbm-bw", "3e12", "--chips", "4")
    assert "hardware.hbm_bandwidth_bytes_per_s" not in d["inputs"]["unsourced"]
    m = tmp_path / "model.json"
    m.write_text(json.dumps({"schema": "roofline-presets/1", "kind": "model",
                             "items": {"m": {"total_params": 100e9, "active_params": 10e9}}}))
    d = run_json(capsys, "kv-from-price", "--hardware", str(f), "--model", str(m), "--crossover-context", "1e5")
    assert d["kv_bytes_per_token"] == pytest.approx(400.0)
    assert "model.total_params" in d["unsourced"] and "hardware.flops_bf16_per_s" in d["unsourced"]


def test_presets_have_no_unsourced_inputs(capsys):
    d = run_json(capsys, "step", "--hardware", "h100", "--model", "llama-3.1-70b", "--batch", "8")
    assert d["inputs"]["unsourced"] == []
    assert "unsourced" not in run_text(capsys, "step", "--hardware", "h100", "--model", "llama-3.1-70b")
