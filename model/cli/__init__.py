"""`python -m model SUBCOMMAND [flags] [--json]` — the same functions the pages call.

Readable tables by default; `--json` prints one JSON object (non-finite values are null, with a
`reason` where it helps).  Bad input exits 2 with one line on stderr naming the flag and the
allowed range — never a traceback.

One module per subcommand, registered in `COMMANDS`: each defines `HELP`, `SYSTEM` (whether it
takes the shared hardware/model/deployment flags of `common.FLAGS`), `add_arguments(parser)` for
its own flags, `PATHS` and `path_of(args)` (which inputs each way through it needs, and which
outputs are null without an optional one) and `run(args) -> (data, text)`.  A new subcommand is
one more module and one more line here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from types import ModuleType

from ..presets import PresetError
from . import (
    balance,
    cache_tier,
    calibrate,
    fast_mode,
    kv_from_price,
    layout,
    overtrain,
    pipeline,
    plan,
    presets,
    step,
)
from .common import CLIError, Parser, add_system_flags, build_system
from .output import clean

COMMANDS: dict[str, ModuleType] = {
    "step": step,
    "balance": balance,
    "fast-mode": fast_mode,
    "kv-from-price": kv_from_price,
    "overtrain": overtrain,
    "layout": layout,
    "pipeline": pipeline,
    "cache-tier": cache_tier,
    "calibrate": calibrate,
    "plan": plan,
    "presets": presets,
}


def make_parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m model", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", metavar="SUBCOMMAND", parser_class=Parser)
    for name, module in COMMANDS.items():
        sp = sub.add_parser(name, help=module.HELP, description=module.HELP)
        if module.SYSTEM:
            add_system_flags(sp)
        sp.add_argument("--json", action="store_true", help="print one JSON object")
        module.add_arguments(sp)
        sp.set_defaults(func=module.run)
    return p


# A value that starts with "-" but is not a plain integer or decimal ("-1e12", "-inf", "-1,2") would
# be taken by argparse for an option; glue it to its flag so the range check can name it.
_DASH_NUMBER = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def _glue_dash_values(argv: Sequence[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("--") and "=" not in tok and i + 1 < len(argv) and _DASH_NUMBER.match(argv[i + 1]):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
        else:
            out.append(tok)
            i += 1
    return out


USER_ERRORS = (CLIError, PresetError, ValueError)
"""What bad input raises: our own flag checks, a preset or file that does not parse, a spec's range check
(worded with field and range)."""


def user_error(e: Exception) -> int:
    """One line on stderr for bad input; the exit code 2."""
    print(f"error: {e.problems[0] if isinstance(e, PresetError) else e}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    try:
        a = parser.parse_args(_glue_dash_values(list(sys.argv[1:] if argv is None else argv)))
        if not getattr(a, "cmd", None):
            raise CLIError(f"a subcommand is required: choose from {', '.join(COMMANDS)} "
                           "(see `python -m model --help`)")
        data, text = a.func(a)
    except USER_ERRORS as e:
        return user_error(e)
    except Exception as e:  # a bug of ours: still one line, never a traceback
        print(f"error: internal error ({type(e).__name__}: {e}); please report the command line", file=sys.stderr)
        return 1
    try:
        print(json.dumps(clean(data), allow_nan=False) if getattr(a, "json", False) else text)
        sys.stdout.flush()
    except BrokenPipeError:  # `python -m model … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


__all__ = ["COMMANDS", "USER_ERRORS", "CLIError", "build_system", "main", "make_parser", "user_error"]
