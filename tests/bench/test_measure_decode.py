"""bench/measure_decode.py on the CPU with numpy and a tiny shape: the shape taken from a preset, the KV
cache's layout and growth, one decode step against a hand-written one, the timing loop with a fake
clock, and the file it writes read back by the presets loader and `calibrate --predict`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bench import measure_decode as md
from model import calibrate as cal
from model import presets
from model.specs import ModelArch
from tests.cli.helpers import run_json

TINY = md.Shape(n_layers=2, d_model=32, n_heads=4, n_kv_heads=2, head_dim=8, d_ff=48)
# A dense model spec of that shape: per layer 2·32·32 + 2·32·16 + 3·32·48 = 7,680 matmul weights.
TINY_SPEC = ModelArch(name="tiny", total_params=2 * 7680, active_params=2 * 7680, n_layers=2, d_model=32,
                      n_heads=4, n_kv_heads=2, head_dim=8)


def test_shape_of_a_preset_streams_its_active_parameters():
    m = presets.get("model", "llama-3.1-8b")
    s = md.shape_of(m)
    assert (s.n_layers, s.d_model, s.n_heads, s.n_kv_heads, s.head_dim) == (32, 4096, 32, 8, 128)
    # The MLP width makes the matmul weights the active parameters (to the rounding of one width step).
    assert abs(s.params - m.active_params) <= 3 * 4096 * 32
    assert md.shape_of(m, 4).n_layers == 4 and md.shape_of(m, 4).d_ff == s.d_ff
    assert md.shape_of(TINY_SPEC) == TINY
    with pytest.raises(ValueError, match="MoE"):
        md.shape_of(presets.get("model", "qwen3-30b-a3b"))
    with pytest.raises(ValueError, match="--layers 33"):
        md.shape_of(m, 33)


def test_kv_cache_layout():
    ops = md.NumpyOps()
    c = md.kv_cache(ops, TINY, batch=3, context=5, steps=4)
    assert len(c.keys) == len(c.values) == TINY.n_layers and c.length == 5 and c.capacity == 9
    assert c.keys[0].shape == (3, 9, 2, 8) and c.values[1].shape == (3, 9, 2, 8)
    assert np.all(c.keys[0][:, :5] != 0) and np.all(c.keys[0][:, 5:] == 0)
    assert TINY.kv_bytes(3, 9, 4.0) == 2 * 2 * 3 * 9 * 2 * 8 * 4


def _reference_step(shape, layers, keys, values, pos, x):
    """One decode step written out per sequence and per head, from the same weights and cache."""
    B, G = x.shape[0], shape.n_heads // shape.n_kv_heads
    for i, w in enumerate(layers):
        h = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w.attn_norm
        q, k_new, v_new = h @ w.wq, h @ w.wk, h @ w.wv
        keys[i][:, pos] = k_new.reshape(B, shape.n_kv_heads, shape.head_dim)
        values[i][:, pos] = v_new.reshape(B, shape.n_kv_heads, shape.head_dim)
        o = np.zeros((B, shape.n_heads * shape.head_dim), np.float32)
        for b in range(B):
            for head in range(shape.n_heads):
                kvh = head // G
                qh = q[b, head * shape.head_dim:(head + 1) * shape.head_dim]
                s = keys[i][b, :pos + 1, kvh] @ qh / np.sqrt(shape.head_dim)
                p = np.exp(s - s.max())
                p /= p.sum()
                o[b, head * shape.head_dim:(head + 1) * shape.head_dim] = p @ values[i][b, :pos + 1, kvh]
        x = x + o @ w.wo
        h = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w.mlp_norm
        g = h @ w.w_gate
        x = x + ((g / (1 + np.exp(-g))) * (h @ w.w_up)) @ w.w_down
    return x


def test_decode_step_matches_a_step_written_out_by_hand():
    ops = md.NumpyOps(seed=3)
    layers = md.random_layers(ops, TINY)
    cache = md.kv_cache(ops, TINY, batch=2, context=6, steps=2)
    keys = [k.copy() for k in cache.keys]
    values = [v.copy() for v in cache.values]
    x = ops.randn(2, TINY.d_model)
    got = md.decode_step(ops, TINY, layers, cache, x)
    want = _reference_step(TINY, layers, keys, values, 6, x.copy())
    assert got.shape == (2, TINY.d_model) and np.all(np.isfinite(got))
    assert np.allclose(got, want, rtol=1e-4, atol=1e-5)
    assert cache.length == 7 and np.allclose(cache.keys[1][:, 6], keys[1][:, 6], atol=1e-5)   # the new K at T
    md.decode_step(ops, TINY, layers, cache, got)
    with pytest.raises(ValueError, match="full"):
        md.decode_step(ops, TINY, layers, cache, got)


def test_time_steps_is_the_mean_between_two_synchronisations():
    calls, syncs = [], []
    ticks = iter([10.0, 12.0])
    t = md.time_steps(lambda: calls.append(1), lambda: syncs.append(len(calls)), warmup=3, steps=4,
                      clock=lambda: next(ticks))
    assert t == pytest.approx(0.5) and len(calls) == 7 and syncs == [3, 7]


def test_sweep_skips_what_does_not_fit_and_times_the_rest():
    ops = md.NumpyOps()
    clock = itertools.count(0.0, 0.004).__next__            # every reading 4 ms after the last
    res, skipped = md.sweep(ops, TINY, [1, 4, 64], [8, 32], warmup=1, steps=2, max_bytes=TINY.params * 4 + 40_000,
                            clock=clock)
    # KV of (B, T + 3) tokens at 2 layers × 2 heads × 8 × 2 (K and V) × 4 B = 256 B per token.
    fits = {(b, t) for b in (1, 4, 64) for t in (8, 32) if 256 * b * (t + 3) <= 40_000}
    assert {(r.batch, r.context) for r in res} == fits and set(skipped) == {(1, 8), (1, 32), (4, 8), (4, 32),
                                                                            (64, 8), (64, 32)} - fits
    for r in res:
        assert r.step_s == pytest.approx(0.002) and r.tokens_per_s == pytest.approx(r.batch / 0.002)


def test_the_written_file_is_read_by_calibrate(capsys, tmp_path):
    spec = tmp_path / "tiny.yaml"
    spec.write_text(presets.dump_item(TINY_SPEC, "model", "tiny"))
    out = tmp_path / "mine.yaml"
    clock = itertools.count(0.0, 0.003).__next__
    code = md.main(["--model", str(spec), "--hardware", "h100", "--batch", "1,4", "--context", "16,64",
                    "--steps", "3", "--warmup", "1", "--out", str(out)], ops=md.NumpyOps(), clock=clock)
    assert code == 0
    printed = capsys.readouterr().out
    assert "wrote" in printed and "calibrate --measurements" in printed
    items = presets.parse_user_file(out.read_bytes(), "measurement", out.name)
    assert len(items) == 4
    m = items["measured-b4-t64"]
    assert m.model == "mine.model.yaml" and m.hardware == "h100" and m.scope == "decode" and m.concurrency == 4
    assert m.output_tokens_per_s_per_gpu == pytest.approx(4 / 0.001) and m.tokens_per_s_per_user == pytest.approx(1000)
    assert m.context_tokens == pytest.approx(64 + 1 + 2)                    # the mean KV length over the timed steps
    assert "python bench/measure_decode.py --model" in m.meta["throughput"].source
    assert "numpy" in m.engine and m.weights == "fp32"
    # The shape written beside it is the timed one, and calibrate reads both files.
    shape = presets.load_spec("model", str(tmp_path / "mine.model.yaml"))
    assert shape.n_layers == 2 and shape.active_params == TINY.params and shape.d_model == 32
    mine = cal.load_user_measurements(out.read_bytes(), str(out), base=tmp_path)
    assert cal.system_for(mine["measured-b1-t16"]).model.active_params == TINY.params
    d = run_json(capsys, "calibrate", "--measurements", str(out), "--predict")
    assert d["count"] == 4 and {r["load"] for r in d["points"]} == {"batch"}
    assert {r["batch"] for r in d["points"]} == {1, 4}


def test_a_preset_at_its_full_shape_is_named_by_its_key(tmp_path, capsys, monkeypatch):
    """With every layer of a preset timed, the file names the preset (no spec file beside it).  The sweep is
    stubbed: the 8B's full shape is too big for a test machine, and the naming is what is checked."""
    monkeypatch.setattr(md, "sweep", lambda *a, **k: ([md.Result(1, 16, 0.01)], []))
    out = tmp_path / "full.yaml"
    assert md.main(["--model", "Llama-3.1-8B", "--hardware", "h100", "--out", str(out)], ops=md.NumpyOps()) == 0
    assert presets.parse_user_file(out.read_bytes(), "measurement", out.name)["measured-b1-t16"].model == "llama-3.1-8b"
    assert not (tmp_path / "full.model.yaml").exists()
    capsys.readouterr()


@pytest.mark.parametrize("argv, needle", [
    (["--model", "qwen3-30b-a3b", "--hardware", "h100", "--out", "x.yaml"], "MoE"),
    (["--model", "gpt-9", "--hardware", "h100", "--out", "x.yaml"], "unknown model preset"),
    (["--model", "llama-3.1-8b", "--hardware", "h900", "--out", "x.yaml"], "unknown hardware preset"),
])
def test_bad_input_is_one_line(argv, needle, capsys):
    assert md.main(argv, ops=md.NumpyOps()) == 2
    assert needle in capsys.readouterr().err


def test_the_torch_backend_runs_the_same_step_where_torch_is_installed():
    torch = pytest.importorskip("torch")
    ops = md.TorchOps(dtype="fp32", device="cpu")
    res, _ = md.sweep(ops, TINY, [2], [8], warmup=1, steps=2)
    assert len(res) == 1 and res[0].step_s > 0 and "torch" in ops.versions() and torch.__version__
