"""`python -m model cache-tier`: JSON keys, costs against hand-derived numbers, bad input → exit 2 with one line."""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import module, module_error, run_error, run_json, run_text

# An H100-like chip and a 70B model with Llama-70B's KV (327,680 B/token), from flags only: no preset.
FLAGS = ["--flops", "1e15", "--hbm-bw", "3.35e12", "--hbm-bytes", "80e9", "--price-per-hour", "3.6",
         "--active-params", "70e9", "--kv-bytes-per-token", "327680"]
KEYS = {"inputs", "hold_seconds", "kv_bytes_per_token", "tiers", "recompute_usd_per_token", "recompute_usd_per_mtok",
        "cheapest", "cheapest_name", "cheapest_usd_per_token", "cheapest_usd_per_mtok", "cheapest_tier", "switches"}
TIER_KEYS = {"key", "name", "medium", "capacity_bytes", "bandwidth_bytes_per_s", "usd_per_hour", "drain_s",
             "hold_usd_per_token", "retrieve_usd_per_token", "usd_per_token", "usd_per_mtok", "uncertain"}
KV = 327_680.0


def test_json_keys_and_costs_by_hand(capsys):
    d = run_json(capsys, "cache-tier", *FLAGS, "--hold-seconds", "300")
    assert KEYS <= set(d)
    assert [r["key"] for r in d["tiers"]] == ["hbm", "ddr5-socket", "nvme-gen5", "hdd-24tb"]
    assert all(TIER_KEYS <= set(r) for r in d["tiers"])
    assert d["kv_bytes_per_token"] == KV and d["hold_seconds"] == 300
    # Recompute: 2 · 70e9 / 1e15 s × $3.6/h = 1.4e-4 s × $0.001/s = 1.4e-7 USD per token = $0.14/Mtok.
    assert d["recompute_usd_per_token"] == pytest.approx(1.4e-7)
    assert d["recompute_usd_per_mtok"] == pytest.approx(0.14)
    hbm, ddr, flash, disk = d["tiers"]
    # HBM: 327,680/80e9 × $0.001/s × 300 s = 4.096e-6 × 0.3 = 1.2288e-6 USD; nothing to read back;
    # drain 80e9/3.35e12 = 23.9 ms.
    assert hbm["hold_usd_per_token"] == pytest.approx(1.2288e-6) and hbm["retrieve_usd_per_token"] == 0
    assert hbm["drain_s"] == pytest.approx(0.0238806, rel=1e-5) and hbm["medium"] == "hbm"
    # DDR (preset: 1.536 TB, 576 GB/s, $0.22/h): hold 327,680/1.536e12 × 0.22/3600 × 300,
    # read 327,680/576e9 × 0.22/3600.
    assert ddr["hold_usd_per_token"] == pytest.approx(KV / 1.536e12 * 0.22 / 3600 * 300)
    assert ddr["retrieve_usd_per_token"] == pytest.approx(KV / 576e9 * 0.22 / 3600)
    assert ddr["drain_s"] == pytest.approx(2.6667, rel=1e-4)
    # Flash (15.36 TB, 14 GB/s, $0.044/h) at 5 min: 7.822e-11 + 2.861e-10 = 3.643e-10 USD — the cheapest.
    assert flash["usd_per_token"] == pytest.approx(KV * 0.044 / 3600 * (300 / 15.36e12 + 1 / 14e9))
    assert flash["usd_per_mtok"] == pytest.approx(flash["usd_per_token"] * 1e6)
    assert disk["drain_s"] == pytest.approx(24e12 / 285e6)
    assert d["cheapest"] == "nvme-gen5" == d["cheapest_tier"]
    assert d["cheapest_usd_per_token"] == pytest.approx(flash["usd_per_token"])
    assert disk["uncertain"] == ["usd_per_hour"] and hbm["uncertain"] == []       # flags: no preset price
    # Hand-over times: HBM → DDR at read_DDR / (hold_HBM − hold_DDR) per second.
    sw = d["switches"]
    assert [(x["from"], x["to"]) for x in sw] == [("hbm", "ddr5-socket"), ("ddr5-socket", "nvme-gen5"),
                                                  ("nvme-gen5", "hdd-24tb"), ("hdd-24tb", "recompute")]
    b_hbm, b_ddr = KV / 80e9 * 0.001, KV / 1.536e12 * 0.22 / 3600
    assert sw[0]["hold_s"] == pytest.approx(ddr["retrieve_usd_per_token"] / (b_hbm - b_ddr))
    # disk → recompute where the disk line reaches the recompute cost: (1.4e-7 − read) / hold rate.
    b_hd, a_hd = KV / 24e12 * 0.033 / 3600, KV / 285e6 * 0.033 / 3600
    assert sw[3]["hold_s"] == pytest.approx((1.4e-7 - a_hd) / b_hd)


@pytest.mark.parametrize("hold, best", [("0.001", "hbm"), ("1", "ddr5-socket"), ("3600", "nvme-gen5"),
                                        ("86400", "hdd-24tb"), ("1e8", "recompute")])
def test_cheapest_moves_to_slower_tiers(capsys, hold, best):
    d = run_json(capsys, "cache-tier", *FLAGS, "--hold-seconds", hold)
    assert d["cheapest"] == best
    if best == "recompute":     # still says where a hit would be held: the cheapest tier
        assert d["cheapest_tier"] == "hdd-24tb"
        assert d["cheapest_usd_per_token"] == pytest.approx(d["recompute_usd_per_token"])


def test_presets_and_a_tier_file(capsys, tmp_path):
    d = run_json(capsys, "cache-tier", "--hardware", "h100", "--model", "llama-3.1-70b", "--hold-seconds", "300")
    assert d["kv_bytes_per_token"] == KV
    assert d["tiers"][0]["name"] == "HBM (NVIDIA H100 SXM5 80GB)"
    assert "hardware.price_usd_per_hour" in d["inputs"]["uncertain_inputs"]
    f = tmp_path / "tiers.yaml"
    f.write_text("schema: roofline-presets/1\nkind: tier\nitems:\n  tape:\n    name: LTO tape\n    medium: other\n"
                 "    source: 'made up for a test'\n    date: '2026-12'\n    capacity_bytes: 18e12\n"
                 "    bandwidth_bytes_per_s: 400e6\n    usd_per_hour: 0.001\n")
    d = run_json(capsys, "cache-tier", *FLAGS, "--hold-seconds", "86400", "--tiers", str(f))
    assert [r["key"] for r in d["tiers"]] == ["hbm", "tape"]
    # Tape: hold 327,680/18e12 × 0.001/3600 × 86,400 + read 327,680/400e6 × 0.001/3600 per token.
    assert d["tiers"][1]["usd_per_token"] == pytest.approx(KV * 0.001 / 3600 * (86400 / 18e12 + 1 / 400e6))
    assert d["cheapest"] == "tape"
    assert all(r["unsourced"] == [] for r in d["tiers"])


def test_a_tier_file_without_sources_is_used_and_marked_unsourced(capsys, tmp_path):
    f = tmp_path / "tiers.yaml"
    f.write_text("schema: roofline-presets/1\nkind: tier\nitems:\n  tape:\n    name: LTO tape\n    medium: other\n"
                 "    capacity_bytes: 18e12\n    bandwidth_bytes_per_s: 400e6\n    usd_per_hour: 0.001\n")
    d = run_json(capsys, "cache-tier", *FLAGS, "--hold-seconds", "86400", "--tiers", str(f))
    tape = d["tiers"][1]
    # the same hand-derived cost as with sources: the numbers are used as given
    assert tape["usd_per_token"] == pytest.approx(KV * 0.001 / 3600 * (86400 / 18e12 + 1 / 400e6))
    assert sorted(tape["unsourced"]) == ["bandwidth_bytes_per_s", "capacity_bytes", "usd_per_hour"]
    out = run_text(capsys, "cache-tier", *FLAGS, "--hold-seconds", "86400", "--tiers", str(f))
    assert "note: unsourced numbers" in out and "tape.capacity_bytes" in out


def test_readable_table(capsys):
    out = run_text(capsys, "cache-tier", *FLAGS, "--hold-seconds", "300")
    assert "nvme-gen5" in out and "← cheapest" in out and "recompute" in out
    assert next(ln for ln in out.splitlines() if "← cheapest" in ln).split()[0] == "nvme-gen5"


@pytest.mark.parametrize("args, flag", [
    (["--hold-seconds", "0"], "--hold-seconds"),
    (["--hold-seconds", "-5"], "--hold-seconds"),
    (["--hold-seconds", "nan"], "--hold-seconds"),
    (["--hold-seconds", "inf"], "--hold-seconds"),
    (["--hold-seconds", "five"], "--hold-seconds"),
    ([], "--hold-seconds"),                                  # required
])
def test_bad_hold_time_exits_2(capsys, args, flag):
    line = run_error(capsys, "cache-tier", *FLAGS, *args)
    assert flag in line


def test_other_bad_input_exits_2(capsys, tmp_path):
    assert "--hardware" in run_error(capsys, "cache-tier", "--hardware", "nope", "--model", "llama-3.1-70b",
                                     "--hold-seconds", "1")
    assert "--hardware is missing" in run_error(capsys, "cache-tier", "--active-params", "7e10",
                                                "--kv-bytes-per-token", "1000", "--hold-seconds", "1")
    assert "--kv-bytes-per-token" in run_error(capsys, "cache-tier", *FLAGS[:-2], "--kv-bytes-per-token", "0",
                                               "--hold-seconds", "1")
    assert "--kv-bytes-per-token" in run_error(capsys, "cache-tier", *FLAGS[:-2], "--hold-seconds", "1")
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: roofline-presets/1\nkind: tier\nitems:\n  x: {name: x, capacity_bytes: -1}\n")
    assert "--tiers" in run_error(capsys, "cache-tier", *FLAGS, "--hold-seconds", "1", "--tiers", str(bad))
    assert "--tiers" in run_error(capsys, "cache-tier", *FLAGS, "--hold-seconds", "1",
                                  "--tiers", str(tmp_path / "missing.yaml"))


def test_real_process_exit_status_and_one_line():
    assert "--hold-seconds" in module_error("cache-tier", *FLAGS, "--hold-seconds", "-1")
    p = module("cache-tier", *FLAGS, "--hold-seconds", "300", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["cheapest"] == "nvme-gen5"
