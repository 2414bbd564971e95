"""Every path of every subcommand, walked from raw flags alone (docs/design.md "The command line").

Each subcommand module declares its paths (`PATHS`): the flags a path cannot answer without
(`needs`) and, for each input it can do without, the outputs that use it (`uses`).  The code reads
the same declarations (`build_system`'s checks, `null_missing`), and this test holds the two
together.  For each path, with no preset:

- given exactly its needs and its optional inputs, it exits 0 and every declared output is there;
- given its needs only, it exits 0 and every output of a missing optional input is null with a
  reason (a `reason` naming the flag, or a reason beside the null);
- dropping any one given flag either exits 2 with one line naming that flag (a need), or turns
  exactly the outputs that use it into null with a reason (an optional input); nothing else moves.

Flags with a default (C auto, B = 1, T = 0, active = total params, a dense model's zero experts, …)
pick out a path and are held fixed (`SETTINGS`); paths of a subcommand with `--context` are walked
at context 0 and past it.  A path, or a subcommand, without settings here fails the test.

The made-up system keeps the arithmetic round (as in test_inputs.py):
  F = 1e15 FLOP/s, bw = 2e12 B/s, M = 1e12 B, $3.6/chip-hour  →  F/bw = 500 FLOP/B
  N = 100e9 params (bf16: W = 200e9 B), Na = 10e9 (sparsity 10), kv = 1e5 B/token
"""

from __future__ import annotations

import argparse
import re
from typing import Any

import pytest

from model import cli
from model.cli.common import BY_FLAG, Path
from tests import ROOT
from tests.cli.helpers import run_error, run_json, run_text

VALUES = {
    "--flops": "1e15", "--hbm-bw": "2e12", "--hbm-bytes": "1e12", "--price-per-hour": "3.6",
    "--total-params": "100e9", "--active-params": "10e9", "--kv-bytes-per-token": "1e5",
    "--experts": "64", "--experts-per-token": "4", "--d-model": "4096", "--moe-layers": "30",
    "--scaleup-bw": "400e9", "--scaleout-bw": "50e9",
    "--batch-standard": "10000", "--batch-fast": "1000", "--speedup": "2", "--price-multiple": "5",
    "--crossover-context": "1e5", "--hold-seconds": "10", "--inference-tokens-per-s": "5e7", "--days": "60",
    "--model": "llama-3.1-8b", "--input-tokens": "1000", "--output-tokens": "200", "--ttft": "1", "--tpot": "0.05",
}
MOE_SHAPE = ["--experts", "64", "--experts-per-token", "4", "--moe-layers", "30"]
CONTEXT = "100"

# (subcommand, path) → the settings it is walked with, one list of flags per variant.
SETTINGS: dict[tuple[str, str], list[list[str]]] = {
    ("step", "step"): [["--chips", "4", "--batch", "100"]],
    ("balance", "balance"): [[]],
    ("fast-mode", "batches"): [["--chips", "1"]],
    ("fast-mode", "quote"): [["--chips", "1"]],
    ("kv-from-price", "crossover"): [[]],
    ("overtrain", "tokens"): [[]],
    ("layout", "one GPU"): [["--gpus", "1", "--batch", "256"]],
    ("layout", "within a domain"): [["--gpus", "8", "--domain", "8", "--batch", "256"],
                                    ["--chips", "8", "--domain", "8", "--batch", "256"]],     # G = C
    ("layout", "across domains"): [["--gpus", "16", "--domain", "8", "--batch", "256"]],
    ("pipeline", "stages"): [["--chips", "2", "--stages", "1,2,4", "--micro-batch", "8", *MOE_SHAPE]],
    ("cache-tier", "hold"): [[]],
    ("calibrate", "selection"): [[], ["--publisher", "NVIDIA"], ["--model", "deepseek-v3"], ["--hardware", "h100"],
                                 ["--measurement", "deepseek-h800-production,sglang-deepseek-h100-decode"],
                                 ["--measurements", str(ROOT / "docs" / "example_measurements.csv")]],
    ("calibrate", "cross-validation"): [["--cv", "k5"]],
    ("calibrate", "predict"): [["--predict", "--measurements", str(ROOT / "docs" / "example_measurements.csv")]],
    ("presets", "list"): [[], *([kind] for kind in cli.COMMANDS["presets"].KINDS)],
    ("plan", "plan"): [["--hardware", "h100,b200"], ["--hardware", "h100", "--throughput", "50", "--max-chips", "8"]],
}
# Dropping --experts leaves --experts-per-token asking for more experts than the model has: the
# line names that flag and the field `n_experts`.
NAMED_INSTEAD = {("layout", "--experts"): "--experts-per-token"}

PARSERS: dict[str, argparse.ArgumentParser] = next(
    a.choices for a in cli.make_parser()._actions if isinstance(a, argparse._SubParsersAction))


def _walks() -> list[tuple[str, Path, list[str]]]:
    out = []
    for name, module in cli.COMMANDS.items():
        has_context = any("--context" in a.option_strings for a in PARSERS[name]._actions)
        for path in module.PATHS:
            for settings in SETTINGS.get((name, path.name), []):
                out.append((name, path, settings))
                if has_context:
                    out.append((name, path.at_context(float(CONTEXT)), [*settings, "--context", CONTEXT]))
    return out


WALKS = _walks()


def _id(w: tuple[str, Path, list[str]]) -> str:
    name, path, settings = w
    return f"{name}: {path.name} {' '.join(settings)}"[:90]


def _given(path: Path, settings: list[str]) -> list[str]:
    flags = [*path.needs, *(u.flag for u in path.uses)]
    flags = [f for i, f in enumerate(flags) if f not in flags[:i] and f not in settings]
    return [x for f in flags for x in (f, VALUES[f])]


def _drop(argv: list[str], flag: str) -> list[str]:
    i = argv.index(flag)
    return argv[:i] + argv[i + 2:]


def _json(capsys, argv: list[str]) -> dict[str, Any]:
    """The JSON of a command line that exits 0, as text too."""
    assert run_text(capsys, *argv).strip(), argv
    return run_json(capsys, *argv)


def _leaves(x: Any, at: tuple = ()) -> dict[tuple, Any]:
    if isinstance(x, dict):
        return {k: v for key, item in x.items() for k, v in _leaves(item, (*at, key)).items()}
    if isinstance(x, list) and x and isinstance(x[0], (dict, list)):
        return {k: v for i, item in enumerate(x) for k, v in _leaves(item, (*at, i)).items()}
    return {at: x}


def _matches(leaf: tuple, pattern: str) -> bool:
    parts = pattern.split(".")
    return len(leaf) == len(parts) and all(p == "*" or str(k) == p for k, p in zip(leaf, parts))


def _outputs(leaves: dict[tuple, Any], patterns: tuple[str, ...]) -> set[tuple]:
    found = {leaf for leaf in leaves for p in patterns if _matches(leaf, p)}
    assert found, f"no output matches {patterns}: the declaration names keys the JSON does not have"
    return found


def _is_reason(leaf: tuple) -> bool:
    return str(leaf[-1]).endswith("reason")


def _has_reason(data: dict, leaves: dict[tuple, Any], out: set[tuple], flag: str) -> bool:
    """A top-level reason naming the flag, or a reason beside every null output."""
    if flag in data.get("reason", ""):
        return True
    return all(any(_is_reason(k) and k[:-1] == leaf[:-1] and leaves[k] for k in leaves) for leaf in out)


def _names(line: str, flag: str) -> bool:
    return re.search(re.escape(flag) + r"(?![\w-])", line) is not None


def test_every_path_has_settings_and_every_flag_a_value():
    declared = {(name, p.name) for name, module in cli.COMMANDS.items() for p in module.PATHS}
    assert declared == set(SETTINGS), "a path without settings here, or settings for a path that is gone"
    for name, module in cli.COMMANDS.items():
        options = {o for a in PARSERS[name]._actions for o in a.option_strings}
        for p in module.PATHS:
            for flag in (*p.needs, *(u.flag for u in p.uses)):
                assert flag in options, (name, p.name, flag)
                assert flag in VALUES, f"{flag}: no value to walk it with"


@pytest.mark.parametrize("walk", WALKS, ids=_id)
def test_a_path_from_flags_alone(capsys, walk):
    name, path, settings = walk
    given = _given(path, settings)
    argv = [name, *settings, *given]
    full = _json(capsys, argv)
    full_leaves = _leaves(full)
    # Every input an output uses was given: no reason asks for a flag (what is left is physics, such as
    # "memory-bound at every batch" or "P = 1 has no cut").
    assert not [v for k, v in full_leaves.items() if _is_reason(k) and re.search(r"--[a-z]", str(v))], argv
    for u in path.uses:
        out = _outputs(full_leaves, u.outputs)
        assert any(full_leaves[leaf] is not None for leaf in out), (u.flag, "its outputs are null with it given")

    # Its needs only: every output of a missing optional input is null, with a reason.
    minimal = [name, *settings, *(x for f in path.needs if f not in settings for x in (f, VALUES[f]))]
    bare = _json(capsys, minimal)
    bare_leaves = _leaves(bare)
    for u in path.uses:
        out = _outputs(bare_leaves, u.outputs)
        assert all(bare_leaves[leaf] is None for leaf in out), (u.flag, minimal)
        assert _has_reason(bare, bare_leaves, out, u.flag), (u.flag, bare.get("reason"))

    # Each given flag dropped in turn.
    optional = {u.flag: u for u in path.uses}
    for flag in given[::2]:
        dropped = _drop(argv, flag)
        if flag in path.needs:
            line = run_error(capsys, *dropped)
            assert line.startswith("error: ") and _names(line, NAMED_INSTEAD.get((name, flag), flag)), (flag, line)
            continue
        d = _json(capsys, dropped)
        leaves = _leaves(d)
        out = _outputs(leaves, optional[flag].outputs)
        assert all(leaves[leaf] is None for leaf in out), (flag, dropped)
        assert _has_reason(d, leaves, out, flag), (flag, d.get("reason"))
        echo = BY_FLAG[flag].dest if flag in BY_FLAG else flag[2:].replace("-", "_")
        moved = {leaf for leaf in set(leaves) | set(full_leaves)
                 if leaf[0] != "inputs" and not _is_reason(leaf) and leaf[-1] != echo
                 and leaves.get(leaf) != full_leaves.get(leaf)}
        assert moved == {leaf for leaf in out if full_leaves[leaf] is not None}, (flag, sorted(moved))


# ---------------------------------------------------------------- a few paths against numbers worked out by hand

FLAGS = [x for f in ("--flops", "--hbm-bw", "--total-params", "--active-params") for x in (f, VALUES[f])]


def test_step_by_hand(capsys):
    # C = 4: t_weights = W/(C·bw) = 200e9/(4·2e12) = 25 ms ≥ t_matmul = 2·Na·B/(C·F) = 2·10e9·100/4e15 = 0.5 ms;
    # $/Mtok = C·price/3600 · t/B · 1e6 = 4 · 1e-3 · 0.025/100 · 1e6 = 1.0; 50 GB per chip ≤ 1 TB
    d = _json(capsys, ["step", *FLAGS, "--chips", "4", "--batch", "100", "--price-per-hour", "3.6",
                       "--hbm-bytes", "1e12"])
    (r,) = d["rows"]
    assert r["t_step_s"] == pytest.approx(0.025, rel=1e-12) and r["usd_per_mtok"] == pytest.approx(1.0, rel=1e-12)
    assert r["fits"] is True


def test_balance_by_hand(capsys):
    # B* = (F/bw)·(N/Na) = 500 · 10 = 5,000; never compute-bound past T = 2·Na·bw/(F·kv)
    # = 2·10e9·2e12/(1e15·1e5) = 400 tokens; drain = M/bw = 1e12/2e12 = 0.5 s
    d = _json(capsys, ["balance", *FLAGS, "--kv-bytes-per-token", "1e5", "--hbm-bytes", "1e12"])
    assert d["batch_balance"] == pytest.approx(5000.0)
    assert d["context_never_compute_bound"] == pytest.approx(400.0)
    assert d["hbm_drain_s"] == pytest.approx(0.5)


def test_fast_mode_quote_by_hand(capsys):
    # λ = S·Pm = 10; B_std = S·B* = 2 · 5,000 = 10,000, B_fast = B*/Pm = 1,000; without a price the
    # batches stand (the price cancels in the multiple) and only $/Mtok is null
    d = _json(capsys, ["fast-mode", *FLAGS, "--chips", "1", "--hbm-bytes", "1e12", "--speedup", "2",
                       "--price-multiple", "5"])
    assert d["batch_standard"] == pytest.approx(10_000, rel=1e-6)
    assert d["batch_fast"] == pytest.approx(1_000, rel=1e-6)
    assert d["usd_per_mtok_standard"] is None and "--price-per-hour" in d["reason"]


def test_overtrain_needs_no_active_params_for_the_token_counts(capsys):
    # D_inf = 5e7 tok/s · 60 d · 86,400 s/d = 2.592e14; D_pre = c_inf·ineff_inf·D_inf/c_pre = 2·3/6 · D_inf
    # = 2.592e14; D_RL = 2·3/(3·3) · D_inf = 1.728e14 — Na cancels out of all three
    argv = ["overtrain", "--inference-tokens-per-s", "5e7", "--days", "60"]
    d = _json(capsys, argv)
    assert d["inference_tokens"] == pytest.approx(2.592e14, rel=1e-12)
    assert d["pretrain_tokens"] == pytest.approx(2.592e14, rel=1e-12)
    assert d["rl_tokens"] == pytest.approx(1.728e14, rel=1e-12)
    assert d["chinchilla_tokens"] is None and d["overtrain_factor"] is None and "--active-params" in d["reason"]
    # With Na = 10e9: Chinchilla D = 20 · 10e9 = 2e11; over-training factor = 2.592e14/2e11 = 1,296
    d = _json(capsys, [*argv, "--active-params", "10e9"])
    assert d["chinchilla_tokens"] == pytest.approx(2e11) and d["overtrain_factor"] == pytest.approx(1296.0)
    assert "reason" not in d
    assert "note: chinchilla_tokens and overtrain_factor need" in run_text(capsys, *argv)
