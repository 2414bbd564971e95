"""Custom chips and models in the URL: a preset to start from plus the fields that differ.

    xhw=h100~bw:4e12~m:1.92e11~n:My chip
    xm=llama-3.1-70b~N:4e11~Na:4e10

Each field has a short code (below); values are numbers (scientific notation welcome), choice
names, or `none` to clear an optional field. The link carries the numbers, choices and the name;
it cannot carry per-number sources, dates or notes (a custom figure is shown as "user" input).
Decoding validates every field through the spec (range checks name the field); any problem
raises ValueError with one line naming the code, the field and what is allowed.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from model import presets
from model.presets import Sourced
from model.specs import Hardware, ModelArch

MAX_CHARS = 600          # a URL parameter this long is still comfortably inside every browser's limit
MAX_NAME_CHARS = 60
SEP, KV = "~", ":"

CODES: dict[str, dict[str, str]] = {
    "hardware": {
        "name": "n", "flops_bf16_per_s": "f", "flops_fp8_per_s": "f8", "flops_fp4_per_s": "f4",
        "hbm_bytes": "m", "hbm_bandwidth_bytes_per_s": "bw", "price_usd_per_hour": "p",
        "scaleup_domain_chips": "d", "scaleup_bandwidth_bytes_per_s": "up",
        "scaleout_bandwidth_bytes_per_s": "out", "power_w": "w", "status": "s",
    },
    "model": {
        "name": "n", "total_params": "N", "active_params": "Na", "n_layers": "L", "d_model": "d",
        "n_heads": "h", "n_kv_heads": "kvh", "head_dim": "hd", "attention": "at", "kv_lora_rank": "r",
        "qk_rope_dim": "rp", "n_window_layers": "wl", "window_tokens": "wt", "window_kind": "wk",
        "n_experts": "E", "experts_per_token": "k", "n_shared_experts": "es", "n_moe_layers": "ml",
        "moe_intermediate_size": "mi", "kv_bytes_per_token": "kvb", "native_weight_dtype": "nd",
    },
}
CLASSES = {"hardware": Hardware, "model": ModelArch}
USER_SOURCE = Sourced("user input (custom link or editor)", "user", uncertain=False)


def _presets(kind: str) -> dict[str, Any]:
    return presets.hardware_presets() if kind == "hardware" else presets.model_presets()


def _fmt(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        f = float(v)
        if f.is_integer() and abs(f) < 1e6:
            return str(int(f))
        for digits in (6, 9, 12, 17):             # the shortest text that reads back as the same number
            text = f"{f:.{digits}g}".replace("e+", "e")     # '+' would read back as a space in a URL
            if float(text) == f:
                return text
        return text
    return str(v)


def _clean_name(name: str) -> str:
    keep = "".join(ch for ch in str(name) if ch.isprintable() and ch not in (SEP, "<", ">", "&", '"', "`", "[", "]"))
    return keep.strip()[:MAX_NAME_CHARS] or "custom"


def encode(kind: str, spec: Any, base: str) -> str:
    """The compact URL text for `spec`: `base` plus every field that differs from that preset."""
    ref = _presets(kind)[base]
    parts = [base]
    for fname, code in CODES[kind].items():
        v, r = getattr(spec, fname), getattr(ref, fname)
        if fname == "name":
            if v != r:
                parts.append(f"{code}{KV}{_clean_name(v)}")
            continue
        if v != r and not (isinstance(v, float) and isinstance(r, float) and math.isclose(v, r, rel_tol=1e-9)):
            parts.append(f"{code}{KV}{_fmt(v)}")
    return SEP.join(parts)


def decode(kind: str, text: str) -> tuple[str, Any]:
    """(base preset key, validated spec) from the URL text; ValueError with one line on any problem."""
    text = str(text).strip()
    if not text:
        raise ValueError("empty")
    if len(text) > MAX_CHARS:
        raise ValueError(f"{len(text)} characters; at most {MAX_CHARS}")
    base, *pairs = text.split(SEP)
    table = _presets(kind)
    aliases = presets.aliases(kind)
    base = aliases.get(base, base)
    if base not in table:
        raise ValueError(f"unknown {kind} preset {base!r} to start from")
    by_code = {c: f for f, c in CODES[kind].items()}
    cls = CLASSES[kind]
    meta_of = {f.name: f.metadata for f in fields(cls)}
    values = table[base].to_dict()
    changed: list[str] = []
    for pair in pairs:
        code, sep, raw = pair.partition(KV)
        if not sep:
            raise ValueError(f"{pair!r} is not code{KV}value")
        if code not in by_code:
            raise ValueError(f"unknown field code {code!r}; known: {', '.join(by_code)}")
        fname = by_code[code]
        if fname in changed:
            raise ValueError(f"field {code!r} ({fname}) is given twice")
        changed.append(fname)
        m = meta_of[fname]
        if fname == "name":
            values["name"] = _clean_name(raw)
        elif raw.lower() == "none":
            if not m.get("optional"):
                raise ValueError(f"{code} ({fname}) cannot be none")
            values.pop(fname, None)
        elif m.get("kind") == "number":
            try:
                values[fname] = float(raw)
            except ValueError:
                raise ValueError(f"{code} ({fname}) = {raw!r} is not a number") from None
            if m.get("integer") and math.isfinite(values[fname]) and values[fname].is_integer():
                values[fname] = int(values[fname])
        else:
            values[fname] = raw
    if "name" not in changed:
        values["name"] = f"{table[base].name} (custom)" if changed else table[base].name
    try:
        spec = cls.from_dict(values)
    except (TypeError, ValueError) as e:
        raise ValueError(str(e)) from None
    base_meta = getattr(table[base], "meta", {}) or {}
    meta = {k: (USER_SOURCE if k in changed else v) for k, v in base_meta.items()}
    meta.update({k: USER_SOURCE for k in changed if k != "name" and k not in meta})
    object.__setattr__(spec, "meta", meta)
    return base, spec
