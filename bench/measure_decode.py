"""Measure your own chip: time decode steps of a random-weight model and write them as measurements.

    python bench/measure_decode.py --model llama-3.1-8b --hardware h100 --out mine.yaml
    python bench/measure_decode.py --model llama-3.1-70b --layers 8 --hardware h100 --batch 1,16,128 \\
        --context 1024,8192 --out mine.yaml            # 8 of the 80 layers: a shape that fits one chip
    python -m model calibrate --measurements mine.yaml --predict     # the efficiency model against them

What it times: one decode step of a dense transformer with the model preset's shape — per layer an
RMSNorm, the Q, K and V projections, attention of every sequence over its own KV cache (grouped-query:
n_heads queries share n_kv_heads keys and values), the output projection, an RMSNorm and a gated
SiLU MLP — at each batch B and context T, with weights drawn at random.  The KV cache is real: one
[B, T + steps, n_kv_heads, head_dim] key and one value buffer per layer, the first T positions filled,
each step writing its token's K and V at the next position and attending over all positions so far.
The MLP width is chosen so that a layer's matmul weights are the preset's active parameters divided
by its layers (the embedding and output head counted in with them), so the weights streamed per step
are the bytes the roofline charges.  Steps are run `--warmup` times, then `--steps` times between
two device synchronisations; the step time is their mean.  Combinations whose weights and KV would
not fit in `--max-gb` are skipped and listed.

It writes a measurements file in the presets schema (presets/README.md, `model.presets.Measurement`):
one point per (B, T), scope "decode", one chip, with the batch as its concurrency and 1 / step as its
speed, the device's name as `chip`, the software versions and this command in the source.  With
`--layers` fewer than the preset's, the shape is written beside it as a model spec file
(`<out>.model.yaml`) that the measurements name; `python -m model calibrate --measurements` reads
both.  (The app's upload takes preset keys only: measure the preset's full shape for a file it reads.)

Needs: numpy (the project's own), and PyTorch for an accelerator — `--backend torch` (the default
when `torch` imports) runs on CUDA or ROCm GPUs, Apple's MPS or the CPU; PyTorch is not in
requirements.txt: install the build for your accelerator from https://pytorch.org.  `--backend
numpy` runs the same loop on the CPU in float32 (tiny shapes: what the tests run).  MoE presets are
refused: a routed layer needs a router and expert dispatch this script does not time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

if __package__ in (None, ""):                      # run as a script: the repository root holds `model`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model import presets
from model.specs import ModelArch

DTYPES = ("bf16", "fp16", "fp32")
GB = 1e9


# ---------------------------------------------------------------- the shape

@dataclass(frozen=True)
class Shape:
    """A dense decoder's shape: what one decode step multiplies and reads."""

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int

    @property
    def layer_params(self) -> int:
        """Matmul weights per layer: Q and O (d · H·hd each), K and V (d · KVH·hd each), gate, up, down (d · d_ff)."""
        d, q, kv = self.d_model, self.n_heads * self.head_dim, self.n_kv_heads * self.head_dim
        return 2 * d * q + 2 * d * kv + 3 * d * self.d_ff

    @property
    def params(self) -> int:
        return self.n_layers * self.layer_params

    def kv_bytes(self, batch: int, tokens: int, bytes_per_element: float) -> float:
        """K and V of `batch` sequences of `tokens` positions over every layer [B]."""
        return 2.0 * self.n_layers * batch * tokens * self.n_kv_heads * self.head_dim * bytes_per_element


def shape_of(model: ModelArch, layers: int | None = None) -> Shape:
    """The preset's shape, with the MLP width that makes a layer's matmul weights N_active / n_layers
    (so the step streams the active parameters the roofline charges); `layers` keeps that many."""
    if model.is_moe:
        raise ValueError(f"{model.name} is an MoE model: this script times dense decoders only")
    if not model.has_architecture or model.d_model is None or model.attention == "mla":
        raise ValueError(f"{model.name} needs n_layers, d_model, n_heads, n_kv_heads and head_dim (and no MLA)")
    d, q, kv = model.d_model, model.n_heads * model.head_dim, model.n_kv_heads * model.head_dim
    per_layer = model.active_params / model.n_layers
    d_ff = round((per_layer - 2 * d * q - 2 * d * kv) / (3 * d))
    if d_ff < 1:
        raise ValueError(f"{model.name}: its attention alone exceeds its parameters per layer")
    n = model.n_layers if layers is None else layers
    if not 1 <= n <= model.n_layers:
        raise ValueError(f"--layers {layers}: choose 1 … {model.n_layers} (the preset's layers)")
    return Shape(n, d, model.n_heads, model.n_kv_heads, model.head_dim, d_ff)


def model_spec(base: ModelArch, shape: Shape, day: str) -> ModelArch:
    """The model the timed shape is, as a spec: the preset with `shape.n_layers` layers and exactly the
    timed parameters (no sliding windows: every layer attends over the whole cache), each number
    sourced to this script."""
    spec = replace(base, name=f"{base.name} ({shape.n_layers} of {base.n_layers} layers, measure_decode.py)",
                   total_params=float(shape.params), active_params=float(shape.params), n_layers=shape.n_layers,
                   n_window_layers=0, window_tokens=None, kv_bytes_per_token=None, meta={})
    src = presets.Sourced(f"the shape timed by bench/measure_decode.py: {base.name}, {shape.n_layers} layers, "
                          f"MLP width {shape.d_ff}", day)
    object.__setattr__(spec, "meta", {f: src for f in type(spec).field_names()
                                      if isinstance(getattr(spec, f), (int, float)) and f != "meta"})
    return spec


# ---------------------------------------------------------------- backends

class NumpyOps:
    """The step's operations on the CPU with numpy (float32).  Array API shared with `TorchOps`:
    `@`, reshape, slicing and `einsum`."""

    name = "numpy"

    def __init__(self, dtype: str = "fp32", seed: int = 0):
        if dtype != "fp32":
            raise ValueError("--backend numpy runs in fp32 only")
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)

    def randn(self, *shape: int, scale: float = 1.0):
        return (self.rng.standard_normal(shape, dtype=np.float32) * np.float32(scale))

    def zeros(self, *shape: int):
        return np.zeros(shape, np.float32)

    def einsum(self, spec: str, *xs):
        return np.einsum(spec, *xs, optimize=False)

    def softmax(self, x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def rms_norm(self, x, w):
        return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * w

    def silu(self, x):
        return x / (1.0 + np.exp(-x))

    def sync(self) -> None:
        pass

    def device(self) -> str:
        return f"CPU ({platform.processor() or platform.machine()})"

    def versions(self) -> dict[str, str]:
        return {"python": platform.python_version(), "numpy": np.__version__}

    def free_bytes(self) -> float | None:
        return None


class TorchOps:
    """The same operations with PyTorch on `device` (cuda, mps or cpu)."""

    name = "torch"

    def __init__(self, dtype: str = "bf16", seed: int = 0, device: str | None = None):
        import torch

        self.torch = torch
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
        self.dev = torch.device(device)
        self.dtype = dtype
        self.tdtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
        self.gen = torch.Generator(device=self.dev).manual_seed(seed)

    def randn(self, *shape: int, scale: float = 1.0):
        t = self.torch.randn(shape, generator=self.gen, device=self.dev, dtype=self.torch.float32) * scale
        return t.to(self.tdtype)

    def zeros(self, *shape: int):
        return self.torch.zeros(shape, device=self.dev, dtype=self.tdtype)

    def einsum(self, spec: str, *xs):
        return self.torch.einsum(spec, *xs)

    def softmax(self, x):
        return self.torch.softmax(x.float(), dim=-1).to(x.dtype)

    def rms_norm(self, x, w):
        xf = x.float()
        return (xf * self.torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6)).to(x.dtype) * w

    def silu(self, x):
        return self.torch.nn.functional.silu(x)

    def sync(self) -> None:
        if self.dev.type == "cuda":
            self.torch.cuda.synchronize(self.dev)
        elif self.dev.type == "mps":
            self.torch.mps.synchronize()

    def device(self) -> str:
        if self.dev.type == "cuda":
            return self.torch.cuda.get_device_name(self.dev)
        return {"mps": "Apple GPU (MPS)"}.get(self.dev.type, f"CPU ({platform.processor() or platform.machine()})")

    def versions(self) -> dict[str, str]:
        v = {"python": platform.python_version(), "numpy": np.__version__, "torch": self.torch.__version__}
        if self.torch.version.cuda:
            v["cuda"] = self.torch.version.cuda
        if getattr(self.torch.version, "hip", None):
            v["rocm"] = self.torch.version.hip
        return v

    def free_bytes(self) -> float | None:
        if self.dev.type == "cuda":
            free, _total = self.torch.cuda.mem_get_info(self.dev)
            return float(free)
        return None


def make_ops(backend: str, dtype: str, seed: int = 0):
    """The backend by name: "torch" (needs PyTorch), "numpy", or "auto" (torch when it imports)."""
    if backend == "auto":
        try:
            import torch  # noqa: F401
        except ImportError:
            backend = "numpy"
        else:
            backend = "torch"
    if backend == "numpy":
        return NumpyOps("fp32" if dtype == "auto" else dtype, seed)
    if backend == "torch":
        try:
            return TorchOps("bf16" if dtype == "auto" else dtype, seed)
        except ImportError:
            raise SystemExit("error: --backend torch needs PyTorch (not in requirements.txt): install the build for "
                             "your accelerator from https://pytorch.org, or use --backend numpy") from None
    raise ValueError(f"backend {backend!r}: choose torch, numpy or auto")


# ---------------------------------------------------------------- the model and its KV cache

@dataclass
class Layer:
    attn_norm: Any
    wq: Any            # [d, H·hd]
    wk: Any            # [d, KVH·hd]
    wv: Any            # [d, KVH·hd]
    wo: Any            # [H·hd, d]
    mlp_norm: Any
    w_gate: Any        # [d, d_ff]
    w_up: Any          # [d, d_ff]
    w_down: Any        # [d_ff, d]


def random_layers(ops, shape: Shape) -> list[Layer]:
    """Random weights, scaled by 1/√fan-in so activations stay of order one through the layers."""
    d, q, kv, f = shape.d_model, shape.n_heads * shape.head_dim, shape.n_kv_heads * shape.head_dim, shape.d_ff
    out = []
    for _ in range(shape.n_layers):
        out.append(Layer(ops.randn(d, scale=0.0) + 1, ops.randn(d, q, scale=d ** -0.5),
                         ops.randn(d, kv, scale=d ** -0.5), ops.randn(d, kv, scale=d ** -0.5),
                         ops.randn(q, d, scale=q ** -0.5), ops.randn(d, scale=0.0) + 1,
                         ops.randn(d, f, scale=d ** -0.5), ops.randn(d, f, scale=d ** -0.5),
                         ops.randn(f, d, scale=f ** -0.5)))
    return out


@dataclass
class KVCache:
    """One key and one value buffer per layer, [B, capacity, n_kv_heads, head_dim]; `length` positions
    hold tokens (the context), the next step writes position `length`."""

    keys: list[Any]
    values: list[Any]
    length: int

    @property
    def capacity(self) -> int:
        return int(self.keys[0].shape[1])


def kv_cache(ops, shape: Shape, batch: int, context: int, steps: int) -> KVCache:
    """A cache for `context` tokens already in (random K and V) and room for `steps` more."""
    cap = context + steps
    keys, values = [], []
    for _ in range(shape.n_layers):
        k = ops.zeros(batch, cap, shape.n_kv_heads, shape.head_dim)
        v = ops.zeros(batch, cap, shape.n_kv_heads, shape.head_dim)
        if context:
            k[:, :context] = ops.randn(batch, context, shape.n_kv_heads, shape.head_dim)
            v[:, :context] = ops.randn(batch, context, shape.n_kv_heads, shape.head_dim)
        keys.append(k)
        values.append(v)
    return KVCache(keys, values, context)


def decode_step(ops, shape: Shape, layers: Sequence[Layer], cache: KVCache, x):
    """One decode step for the batch's hidden states x [B, d]: every layer writes its token's K and V at
    position `cache.length` and attends over positions 0 … length; returns the new hidden states and
    advances the cache by one position."""
    B = x.shape[0]
    H, KVH, hd = shape.n_heads, shape.n_kv_heads, shape.head_dim
    G = H // KVH
    pos = cache.length
    if pos >= cache.capacity:
        raise ValueError(f"the KV cache is full ({cache.capacity} positions)")
    scale = hd ** -0.5
    for i, w in enumerate(layers):
        h = ops.rms_norm(x, w.attn_norm)
        q = (h @ w.wq).reshape(B, KVH, G, hd)
        cache.keys[i][:, pos] = (h @ w.wk).reshape(B, KVH, hd)
        cache.values[i][:, pos] = (h @ w.wv).reshape(B, KVH, hd)
        k = cache.keys[i][:, :pos + 1]                           # [B, T + 1, KVH, hd]
        v = cache.values[i][:, :pos + 1]
        p = ops.softmax(ops.einsum("bkgd,btkd->bkgt", q, k) * scale)
        o = ops.einsum("bkgt,btkd->bkgd", p, v).reshape(B, H * hd)
        x = x + o @ w.wo
        h = ops.rms_norm(x, w.mlp_norm)
        x = x + (ops.silu(h @ w.w_gate) * (h @ w.w_up)) @ w.w_down
    cache.length = pos + 1
    return x


def time_steps(step: Callable[[], Any], sync: Callable[[], None], *, warmup: int, steps: int,
               clock: Callable[[], float] = time.perf_counter) -> float:
    """Mean seconds per call of `step` over `steps` calls, after `warmup` untimed ones; the device is
    synchronised before the clock starts and before it stops."""
    if steps < 1:
        raise ValueError("steps must be ≥ 1")
    for _ in range(warmup):
        step()
    sync()
    t0 = clock()
    for _ in range(steps):
        step()
    sync()
    return (clock() - t0) / steps


# ---------------------------------------------------------------- a sweep and its file

@dataclass(frozen=True)
class Result:
    batch: int
    context: int
    step_s: float

    @property
    def tokens_per_s_per_user(self) -> float:
        return 1.0 / self.step_s

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.step_s


def sweep(ops, shape: Shape, batches: Sequence[int], contexts: Sequence[int], *, warmup: int = 2, steps: int = 8,
          max_bytes: float | None = None, clock: Callable[[], float] = time.perf_counter,
          log: Callable[[str], None] = lambda s: None) -> tuple[list[Result], list[tuple[int, int]]]:
    """Time every (batch, context) that fits: ([results], [(batch, context) skipped for memory])."""
    bpe = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0}[ops.dtype]
    layers = random_layers(ops, shape)
    weights = shape.params * bpe
    results, skipped = [], []
    for T in contexts:
        for B in batches:
            need = weights + shape.kv_bytes(B, T + warmup + steps, bpe)
            if max_bytes is not None and need > max_bytes:
                skipped.append((B, T))
                log(f"B = {B:>5}, T = {T:>6}: skipped ({need / GB:,.1f} GB > {max_bytes / GB:,.1f} GB)")
                continue
            cache = kv_cache(ops, shape, B, T, warmup + steps)
            state = {"x": ops.randn(B, shape.d_model)}

            def one(cache=cache, state=state):
                state["x"] = decode_step(ops, shape, layers, cache, state["x"])

            t = time_steps(one, ops.sync, warmup=warmup, steps=steps, clock=clock)
            results.append(Result(B, T, t))
            log(f"B = {B:>5}, T = {T:>6}: {t * 1e3:9.3f} ms/step  {B / t:12,.1f} tok/s  {1 / t:9.1f} tok/s/user")
            del cache, state
    return results, skipped


def measurements(results: Sequence[Result], *, model: str, hardware: str, chip: str, dtype: str, publisher: str,
                 command: str, versions: dict[str, str], steps: int, warmup: int, day: str) -> dict[str, Any]:
    """The results as a measurements document (presets/README.md's schema, `kind: measurement`)."""
    fmt = {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16"}[dtype]
    soft = ", ".join(f"{k} {v}" for k, v in versions.items())
    items = {}
    for r in results:
        items[f"measured-b{r.batch}-t{r.context}"] = {
            "name": f"measure_decode.py, {chip}, B = {r.batch}, T = {r.context}",
            "publisher": publisher, "engine": f"bench/measure_decode.py ({soft})", "model": model,
            "hardware": hardware, "chip": chip, "parallelism": "one chip",
            "weights": fmt, "kv": fmt, "compute": "bf16",
            "scope": "decode", "gpus": 1, "chips_per_replica": 1,
            "input_tokens": max(r.context, 1), "output_tokens": steps,
            "context_tokens": r.context + warmup + (steps + 1) / 2,
            "concurrency": r.batch, "throughput": r.tokens_per_s, "throughput_metric": "output per GPU",
            "tokens_per_s_per_user": r.tokens_per_s_per_user,
            "source": f"measured: {command}", "date": day,
            "note": (f"random weights, {warmup} warm-up then {steps} timed decode steps (mean), KV cache of "
                     f"{r.context} tokens growing by one per step; no sampling, no embedding lookup or output head "
                     f"(their weights are counted in the MLP); compute format {dtype} (the bound uses the chip's "
                     f"bf16 peak); {soft}"),
        }
    return {"schema": "roofline-presets/1", "kind": "measurement",
            "note": "Decode steps timed by bench/measure_decode.py on one chip.", "items": items}


def _ints(text: str, flag: str) -> list[int]:
    try:
        out = [int(float(x)) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"error: {flag}: expected comma-separated integers, got {text!r}") from None
    if not out or min(out) < (1 if flag == "--batch" else 0):
        raise SystemExit(f"error: {flag}: expected integers ≥ {1 if flag == '--batch' else 0}, got {text!r}")
    return out


def main(argv: Sequence[str] | None = None, *, ops=None, clock: Callable[[], float] = time.perf_counter) -> int:
    p = argparse.ArgumentParser(prog="python bench/measure_decode.py", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="a dense model preset or spec file (its shape is timed)")
    p.add_argument("--hardware", required=True,
                   help="the chip preset or spec file the bound should use for this chip (e.g. h100, my_chip.yaml)")
    p.add_argument("--layers", type=int, help="time only this many of the preset's layers (a shape that fits)")
    p.add_argument("--batch", default="1,8,32,128", help="batches (comma-separated)")
    p.add_argument("--context", default="512,4096", help="KV lengths at the first timed step (comma-separated)")
    p.add_argument("--steps", type=int, default=8, help="timed steps per point")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps before them")
    p.add_argument("--backend", choices=("auto", "torch", "numpy"), default="auto")
    p.add_argument("--dtype", choices=("auto", *DTYPES), default="auto", help="bf16 on torch, fp32 on numpy")
    p.add_argument("--max-gb", type=float, help="skip points whose weights and KV exceed this (default: 90 %% of "
                                                "the device's free memory on CUDA, 4 GB otherwise)")
    p.add_argument("--publisher", default="me", help="who measured it (the file's publisher field)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="the measurements file to write (.yaml)")
    a = p.parse_args(argv)
    try:
        base = presets.load_spec("model", a.model)
        presets.load_spec("hardware", a.hardware)
        shape = shape_of(base, a.layers)
    except (ValueError, presets.PresetError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.steps < 1 or a.warmup < 0:
        print("error: --steps must be ≥ 1 and --warmup ≥ 0", file=sys.stderr)
        return 2
    batches, contexts = _ints(a.batch, "--batch"), _ints(a.context, "--context")
    ops = ops if ops is not None else make_ops(a.backend, a.dtype, a.seed)
    free = ops.free_bytes()
    max_bytes = a.max_gb * GB if a.max_gb is not None else (0.9 * free if free is not None else 4 * GB)
    print(f"{ops.device()} ({ops.name}, {ops.dtype}); {base.name}: {shape.n_layers} layers, d = {shape.d_model}, "
          f"{shape.n_heads}/{shape.n_kv_heads} heads × {shape.head_dim}, MLP {shape.d_ff}; "
          f"{shape.params / 1e9:,.2f}B parameters")
    results, skipped = sweep(ops, shape, batches, contexts, warmup=a.warmup, steps=a.steps, max_bytes=max_bytes,
                             clock=clock, log=print)
    if not results:
        print("error: no (batch, context) fits in --max-gb; lower --batch or --context, or time fewer --layers",
              file=sys.stderr)
        return 2
    out = Path(a.out)
    key = a.model.strip().lower()
    is_preset = key in presets.load("model") or key in presets.aliases("model")
    model_ref = presets.aliases("model").get(key, key)
    if not is_preset or shape.n_layers != base.n_layers:
        # The timed shape is no preset: written beside the measurements, which name it by file name.
        spec_path = out.with_name(out.stem + ".model.yaml")
        name = Path(a.model).stem if not is_preset else model_ref
        spec = model_spec(base, shape, dt.date.today().isoformat())
        spec_path.write_text(presets.dump_item(spec, "model", f"{name}-{shape.n_layers}-layers"), encoding="utf-8")
        model_ref = spec_path.name
        print(f"wrote {spec_path} (the timed shape as a model spec)")
    command = "python bench/measure_decode.py " + " ".join(shlex.quote(x) for x in (argv if argv is not None
                                                                                     else sys.argv[1:]))
    doc = measurements(results, model=model_ref, hardware=a.hardware, chip=ops.device(), dtype=ops.dtype,
                       publisher=a.publisher, command=command, versions=ops.versions(), steps=a.steps,
                       warmup=a.warmup, day=dt.date.today().isoformat())
    out.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    print(f"wrote {out}: {len(results)} points" + (f"; skipped {len(skipped)} that do not fit" if skipped else ""))
    print(f"next: python -m model calibrate --measurements {shlex.quote(str(out))} --predict")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
