"""`overtrain`: the pretraining and RL tokens whose cost equals a deployment's inference (lecture §2.11)."""

from __future__ import annotations

import argparse
import math
from dataclasses import fields
from typing import Any

from .. import training
from .common import BY_FLAG, Path, Uses, number
from .output import kv_lines

HELP = "pretraining and RL tokens that equalise cost with inference"
SYSTEM = False

# The token counts are set per active parameter on both sides, so Na cancels out of them; only the
# Chinchilla yardstick (20 tokens per parameter) and the factor against it use it.
_PER_PARAM = Uses("--active-params", ("chinchilla_tokens", "overtrain_factor"))
PATHS = (Path("tokens", ("--inference-tokens-per-s", "--days"), (_PER_PARAM,)),)


def add_arguments(p: argparse.ArgumentParser) -> None:
    BY_FLAG["--active-params"].add_to(p)
    p.add_argument("--inference-tokens-per-s", type=number("--inference-tokens-per-s", 0, lo_open=True),
                   required=True, help="tokens/s served by this one model")
    p.add_argument("--days", type=number("--days", 0, lo_open=True), required=True)
    p.add_argument("--c-pre", type=number("--c-pre", 0, lo_open=True), default=6.0)
    p.add_argument("--c-rl", type=number("--c-rl", 2, hi=6), default=3.0, help="RL FLOPs per param per token (2…6)")
    p.add_argument("--c-inf", type=number("--c-inf", 0, lo_open=True), default=2.0)
    p.add_argument("--ineff-rl", type=number("--ineff-rl", 1), default=3.0, help="RL inefficiency multiple (≥ 1)")
    p.add_argument("--ineff-inf", type=number("--ineff-inf", 1), default=3.0,
                   help="inference inefficiency multiple (≥ 1; 3 = decode at 1/3 MFU)")
    p.add_argument("--chinchilla-tokens-per-param", type=number("--chinchilla-tokens-per-param", 0, lo_open=True),
                   default=20.0)


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0]


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    na = math.nan if a.active_params is None else a.active_params   # NaN → null in the outputs that use it
    o = training.overtrain(na, a.inference_tokens_per_s, a.days, c_pre=a.c_pre, c_rl=a.c_rl,
                           c_inf=a.c_inf, ineff_rl=a.ineff_rl, ineff_inf=a.ineff_inf,
                           chinchilla_tokens_per_param=a.chinchilla_tokens_per_param)
    data = {"active_params": a.active_params, "inference_tokens_per_s": a.inference_tokens_per_s,
            "days": a.days, **{f.name: float(getattr(o, f.name)) for f in fields(o)}}
    text = kv_lines([("inference tokens", data["inference_tokens"]), ("pretrain tokens", data["pretrain_tokens"]),
                     ("RL tokens", data["rl_tokens"]), ("Chinchilla tokens (20/param)", data["chinchilla_tokens"]),
                     ("over-training factor", data["overtrain_factor"])])
    if a.active_params is None:
        data["reason"] = "chinchilla_tokens and overtrain_factor need the active parameter count (--active-params)"
        text += f"\nnote: {data['reason']}"
    return data, text
