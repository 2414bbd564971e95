"""`fast-mode`: the speedup and price multiple of a smaller batch, or the two batches behind a quote."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from .. import economics
from .common import CLIError, Path, Uses, build_system, null_missing, number, system_summary
from .output import header, kv_lines

HELP = "speedup and price multiple of a smaller batch, or the batches for a quote"
SYSTEM = True

_CORE = ("--flops", "--hbm-bw", "--total-params")
# The price multiple is a ratio (the price per hour cancels); $/Mtok is not.
_USES = (Uses("--price-per-hour", ("usd_per_mtok_standard", "usd_per_mtok_fast")),)
PATHS = (Path("batches", (*_CORE, "--batch-standard", "--batch-fast"), _USES),
         # From a quote, the standard batch must fit in HBM; two given batches need no HBM figure.
         Path("quote", (*_CORE, "--speedup", "--price-multiple", "--hbm-bytes"), _USES))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch-standard", type=number("--batch-standard", 1))
    p.add_argument("--batch-fast", type=number("--batch-fast", 1))
    p.add_argument("--speedup", type=number("--speedup", 0, lo_open=True))
    p.add_argument("--price-multiple", type=number("--price-multiple", 0, lo_open=True))
    p.add_argument("--context", type=number("--context", 0), default=0.0)


def path_of(a: argparse.Namespace) -> Path:
    batches = a.batch_standard is not None or a.batch_fast is not None
    quotes = a.speedup is not None or a.price_multiple is not None
    if batches == quotes:
        raise CLIError("fast-mode: give either --batch-standard and --batch-fast, "
                       "or --speedup and --price-multiple")
    return PATHS[quotes].at_context(a.context)


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    path = path_of(a)
    batches = a.batch_standard is not None or a.batch_fast is not None   # else a quote (path_of checked)
    s = build_system(a, path.system_needs(), batch=max(a.batch_standard or 0, a.batch_fast or 0), context=a.context)
    try:
        if batches:
            if a.batch_standard is None or a.batch_fast is None:
                raise CLIError("fast-mode: --batch-standard and --batch-fast go together")
            fm = economics.fast_mode_forward(s, a.batch_standard, a.batch_fast, a.context)
        else:
            if a.speedup is None or a.price_multiple is None:
                raise CLIError("fast-mode: --speedup and --price-multiple go together")
            fm = economics.fast_mode_batches(s, a.speedup, a.price_multiple, a.context)
    except ValueError as e:
        raise CLIError(str(e)) from None
    data = {"inputs": system_summary(s, a), "context": a.context, **asdict(fm)}
    data["reason"] = "; ".join(x for x in (data["reason"], *null_missing(data, a, path.uses)) if x)
    if not data["reason"]:
        data.pop("reason")
    text = kv_lines([("speedup", fm.speedup), ("price multiple", fm.price_multiple),
                     ("standard batch", fm.batch_standard), ("fast batch", fm.batch_fast),
                     ("balance batch B*", fm.batch_balance),
                     ("standard / B*", fm.batch_standard_over_balance), ("fast / B*", fm.batch_fast_over_balance),
                     ("standard step [ms]", None if fm.t_step_standard_s is None else fm.t_step_standard_s * 1e3),
                     ("fast step [ms]", None if fm.t_step_fast_s is None else fm.t_step_fast_s * 1e3)])
    if fm.reason:
        text += f"\nno solution: {fm.reason}"
    return data, header(data["inputs"]) + "\n\n" + text
