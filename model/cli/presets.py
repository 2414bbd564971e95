"""`presets`: the built-in hardware, model, price, tier and measurement presets."""

from __future__ import annotations

import argparse
from typing import Any

from .. import presets
from .common import CLIError, Path

HELP = "list the built-in presets"
SYSTEM = False
KINDS = ("hardware", "model", "price", "tier", "measurement")

PATHS = (Path("list", ()),)   # one kind, or every kind


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kind", nargs="?", choices=list(KINDS))


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0]


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    kinds = [a.kind] if a.kind else list(KINDS)
    data: dict[str, Any] = {}
    out = []
    for kind in kinds:
        try:
            items = presets.load(kind)
        except OSError as e:
            raise CLIError(f"presets {kind}: cannot read the built-in presets ({e.strerror}: {e.filename})") from None
        data[kind] = {k: {**v.to_dict(), "uncertain": presets.uncertain_fields(v)} for k, v in items.items()}
        out.append(f"{kind}:")
        for k, v in items.items():
            unc = presets.uncertain_fields(v)
            flag = "  [uncertain: " + ", ".join(unc) + "]" if unc else ""
            out.append(f"  {k:<18} {getattr(v, 'name', '')}{flag}")
    return data, "\n".join(out)
