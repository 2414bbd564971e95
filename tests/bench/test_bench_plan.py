"""bench/bench_plan.py at a tiny size: one chip, a handful of looped configurations, one timed search —
the loop is held to the search's numbers, the table and its targets are printed, the run exits 0."""

from __future__ import annotations

import pytest

from bench import bench_plan
from model import presets
from model.plan import Traffic, plan


def test_tiny_run_prints_the_table(capsys):
    code = bench_plan.main(["--hardware", "h100", "--model", "llama-3.1-8b", "--loop", "4", "--repeat", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "search: Llama 3.1 8B on h100; 2000 in / 500 out" in out and "loop: 4 of the same configurations" in out
    assert "| plan: " in out and "| per-configuration loop: 4 configurations |" in out
    assert "plan vs loop, per configuration" in out and "≥ 100×: " in out and "≥ 100,000 in ≤ 200 ms: " in out
    assert "best: h100" in out


def test_the_loop_is_checked_against_the_search():
    m = presets.get("model", "llama-3.1-8b")
    hw = {"h100": presets.get("hardware", "h100")}
    traffic = Traffic.single(1000, 100)
    res = plan(m, hw, traffic, ttft_s=1.0, tpot_s=0.05, max_chips=8)
    sample = [res.point(i) for i in (0, res.configs_evaluated // 2, res.configs_evaluated - 1)]
    out = bench_plan.loop(m, hw, sample, traffic)
    assert bench_plan.check_loop_matches(sample, out) <= 1e-9
    out[1] = {**out[1], "t_step_s": out[1]["t_step_s"] * 1.01}
    with pytest.raises(AssertionError, match="t_step_s"):
        bench_plan.check_loop_matches(sample, out)


def test_tiny_predicted_run(capsys):
    code = bench_plan.main(["--hardware", "h100", "--model", "llama-3.1-8b", "--loop", "4", "--repeat", "1",
                            "--predicted"])
    out = capsys.readouterr().out
    assert code == 0 and "TPOT ≤ 0.05 s, the fitted efficiency model, weights" in out
