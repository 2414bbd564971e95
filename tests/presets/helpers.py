"""A user's measured points at exactly half the ideal bandwidth bound, worked out by hand (the fit of them must give
HBM bandwidth utilisation 0.5).  Used by tests/presets/test_user_measurements.py (the CLI and the parser) and
tests/app/test_reality_upload.py (the Reality-check page's upload).

  H100 preset: bw = 3.35e12 B/s; Llama 3.1 8B preset: W = 8.0e9 · 2 B = 16e9 B (bf16),
  KV = 2 · 32 layers · 8 heads · 128 · 2 B = 131,072 B/token; context T = 1 token.
  Memory per step at batch b: (W + b·T·kv)/bw; compute b·2·8e9/989.4e12 is ~70× smaller: memory-bound.
  At BWU = 0.5 the step is t(b) = 2·(16e9 + b·131,072)/3.35e12, speed u = 1/t(b), and one GPU
  (C = 1) makes b·u output tokens/s.
"""

from __future__ import annotations

W, KV, BW = 16e9, 131_072.0, 3.35e12
HEAD = ("key,name,publisher,model,hardware,weights,kv,compute,scope,gpus,chips_per_replica,input_tokens,"
        "output_tokens,context_tokens,throughput,throughput_metric,tokens_per_s_per_user")


def half_bound_point(b: float) -> tuple[float, float]:
    """(output tok/s per GPU, tok/s per user) at batch b and BWU 0.5 — see the module docstring."""
    t = 2.0 * (W + b * KV * 1.0) / BW
    return b / t, 1.0 / t


def half_bound_csv(batches=(4, 16, 64)) -> str:
    """The points as a CSV file in the measurements.yaml schema, one row per batch (key `half-<b>`)."""
    rows = [HEAD]
    for b in batches:
        tps, u = half_bound_point(b)
        rows.append(f"half-{b},Half bound at B={b},Me,llama-3.1-8b,h100,bf16,bf16,bf16,decode,1,1,1,1,1,"
                    f"{tps!r},output per GPU,{u!r}")
    return "\n".join(rows) + "\n"


GOOD_ROW = half_bound_csv((4,)).splitlines()[1]
"""One valid row (B = 4), for tests that break one of its cells."""
