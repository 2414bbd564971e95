"""`calibrate`: published (or your own) measurements against their ideal roofline bound, and the
compute and bandwidth efficiencies that best predict them."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .. import presets
from .common import CLIError, Path, problems, read_capped
from .output import kv_lines, table

HELP = "published measurements against their ideal roofline bound; fitted compute and bandwidth efficiencies"
SYSTEM = False

# Every flag narrows the selection or replaces the built-in points; none is needed.
PATHS = (Path("selection", ()),)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="NAME", help="only measurements of this model preset")
    p.add_argument("--hardware", metavar="NAME", help="only measurements on this chip preset")
    p.add_argument("--publisher", metavar="NAME", help="only measurements from this publisher (e.g. NVIDIA)")
    p.add_argument("--measurement", metavar="KEYS", help="comma-separated measurement keys")
    p.add_argument("--measurements", metavar="FILE",
                   help="your own measured points instead of the built-in ones: a CSV (a header row of the "
                        "measurements.yaml field names, one point per row) or a YAML/JSON file in that schema; "
                        "sources optional")


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0]


def load_measurements(path: str) -> dict[str, Any]:
    """A user's measurement file (`--measurements`): CSV, or YAML/JSON in the measurements.yaml schema."""
    from .. import calibrate

    data = read_capped("--measurements", path)
    try:
        return calibrate.load_user_measurements(data, path)
    except presets.PresetError as e:
        raise CLIError(f"--measurements {path}: {problems(e)}") from None


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Published measurements against their ideal bound; the (MFU, BWU) that best predicts them."""
    from .. import calibrate  # only this subcommand needs it

    if a.measurements is not None:
        items = load_measurements(a.measurements)
    else:
        try:
            items = presets.measurement_presets()
        except OSError as e:
            raise CLIError(f"calibrate: cannot read the built-in measurements ({e.strerror}: {e.filename})") from None
    resolved = {}
    for flag, kind, value in (("--model", "model", a.model), ("--hardware", "hardware", a.hardware)):
        if value is not None:
            try:
                presets.get(kind, value)
            except ValueError as e:
                raise CLIError(f"{flag}: {e}") from None
            k = value.strip().lower()
            resolved[kind] = presets.aliases(kind).get(k, k)
    keys = None
    if a.measurement is not None:
        keys = [k.strip() for k in a.measurement.split(",")]
        bad = [k for k in keys if k not in items]
        if bad:
            where = a.measurements or "presets/measurements.yaml"
            raise CLIError(f"--measurement: unknown measurement {bad[0]!r}; the keys are those of "
                           f"{where}, e.g. {', '.join(list(items)[:3])}")
    model_key, hw_key = resolved.get("model"), resolved.get("hardware")
    sel = calibrate.select(items, model=model_key, hardware=hw_key, publisher=a.publisher, keys=keys)
    given = " ".join(f"{f} {v}" for f, v in (("--model", a.model), ("--hardware", a.hardware),
                                              ("--publisher", a.publisher), ("--measurement", a.measurement)) if v)
    if not sel:
        pubs = sorted({m.publisher for m in items.values()})
        raise CLIError(f"calibrate: no measurement matches {given}; publishers: {', '.join(pubs)}")
    c = calibrate.check(sel)
    f = calibrate.fit_check(c)
    rows = []
    for i, k in enumerate(c.keys):
        m = sel[k]
        rows.append({"key": k, "name": m.name, "publisher": m.publisher, "model": m.model, "hardware": m.hardware,
                     "measured_tokens_per_s_per_gpu": float(c.measured[i]),
                     "tokens_per_s_per_user": float(c.speed[i]), "ideal_tokens_per_s_per_gpu": float(c.ideal[i]),
                     "efficiency": float(c.efficiency[i]), "ideal_bound": str(c.bound[i]),
                     "fitted_tokens_per_s_per_gpu": float(f.predicted[i]), "residual_log10": float(f.residual_log10[i]),
                     "fitted_bound": str(f.bound[i]), "uncertain": presets.uncertain_fields(m),
                     "unsourced": presets.unsourced_fields(m)})
    data = {"selection": {"model": a.model, "hardware": a.hardware, "publisher": a.publisher,
                          "measurement": keys, "measurements_file": a.measurements},
            "count": len(rows), "mfu": f.mfu, "bw_util": f.bwu, "mfu_determined": f.mfu_determined,
            "bw_util_determined": f.bwu_determined, "rms_log10": f.rms_log10,
            "rms_factor": 10.0 ** f.rms_log10, "max_efficiency": float(np.max(c.efficiency)), "points": rows}
    notes = []
    if not f.mfu_determined:
        notes.append("no point is compute-bound at the fit: MFU is not pinned down (shown at the highest value "
                     "that fits as well)")
    if not f.bwu_determined:
        notes.append("no point is memory-bound at the fit: bandwidth utilisation is not pinned down (shown at "
                     "the highest value that fits as well)")
    if notes:
        data["reason"] = "; ".join(notes)
    text = table(["measurement", "measured tok/s/GPU", "tok/s/user", "ideal tok/s/GPU", "efficiency",
                  "fitted tok/s/GPU", "residual ×"],
                 [[r["key"], r["measured_tokens_per_s_per_gpu"], r["tokens_per_s_per_user"],
                   r["ideal_tokens_per_s_per_gpu"], r["efficiency"], r["fitted_tokens_per_s_per_gpu"],
                   10.0 ** r["residual_log10"]] for r in rows])
    head = kv_lines([("measurements", len(rows)), ("fitted compute MFU", f.mfu),
                     ("fitted HBM bandwidth utilisation", f.bwu),
                     ("RMS residual (factor)", data["rms_factor"]),
                     ("highest measured ÷ ideal", data["max_efficiency"])])
    return data, head + ("\n" + "\n".join(f"note: {n}" for n in notes) if notes else "") + "\n\n" + text
