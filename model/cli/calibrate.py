"""`calibrate`: published (or your own) measurements against their ideal roofline bound and the compute
and bandwidth efficiencies that best predict them; the fitted efficiency model's error on points it
never saw (`--cv`); and its prediction of your own points (`--measurements FILE --predict`)."""

from __future__ import annotations

import argparse
from pathlib import Path as FilePath
from typing import Any

import numpy as np

from .. import presets
from .common import CLIError, Path, problems, read_capped
from .output import kv_lines, table

HELP = ("published measurements against their ideal roofline bound; fitted compute and bandwidth efficiencies; "
        "the efficiency model's cross-validated error (--cv) and predictions of your own points (--predict)")
SYSTEM = False

# Every flag narrows the selection or replaces the built-in points; none is needed.
PATHS = (Path("selection", ()), Path("cross-validation", ()), Path("predict", ()))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="NAME", help="only measurements of this model preset")
    p.add_argument("--hardware", metavar="NAME", help="only measurements on this chip preset")
    p.add_argument("--publisher", metavar="NAME", help="only measurements from this publisher (e.g. NVIDIA)")
    p.add_argument("--measurement", metavar="KEYS", help="comma-separated measurement keys")
    p.add_argument("--measurements", metavar="FILE",
                   help="your own measured points instead of the built-in ones: a CSV (a header row of the "
                        "measurements.yaml field names, one point per row) or a YAML/JSON file in that schema; "
                        "sources optional; a model or hardware may name a YAML/JSON spec file (relative to FILE)")
    p.add_argument("--cv", choices=("publisher", "chip", "model", "k5"),
                   help="cross-validate the efficiency model over the selection: leave one publisher, chip, model "
                        "or random fifth (k5, seeded) out at a time, fit on the rest, predict it")
    p.add_argument("--predict", action="store_true",
                   help="with --measurements FILE: fit the efficiency model on the built-in measurements only and "
                        "predict FILE's points (FILE is not fitted)")


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[2] if a.predict else PATHS[1] if a.cv else PATHS[0]


def load_measurements(path: str) -> dict[str, Any]:
    """A user's measurement file (`--measurements`): CSV, or YAML/JSON in the measurements.yaml schema; a
    model or hardware naming a spec file is read relative to the file's folder."""
    from .. import calibrate

    data = read_capped("--measurements", path)
    try:
        return calibrate.load_user_measurements(data, path, base=FilePath(path).parent)
    except presets.PresetError as e:
        raise CLIError(f"--measurements {path}: {problems(e)}") from None


def _built_in() -> dict[str, Any]:
    try:
        return presets.measurement_presets()
    except OSError as e:
        raise CLIError(f"calibrate: cannot read the built-in measurements ({e.strerror}: {e.filename})") from None


def _select(a: argparse.Namespace, items: dict[str, Any]) -> tuple[dict[str, Any], list[str] | None]:
    """The measurements the filters pick (CLIError naming the flag for an unknown preset or key)."""
    from .. import calibrate

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
    sel = calibrate.select(items, model=resolved.get("model"), hardware=resolved.get("hardware"),
                           publisher=a.publisher, keys=keys)
    given = " ".join(f"{f} {v}" for f, v in (("--model", a.model), ("--hardware", a.hardware),
                                              ("--publisher", a.publisher), ("--measurement", a.measurement)) if v)
    if not sel:
        pubs = sorted({m.publisher for m in items.values()})
        raise CLIError(f"calibrate: no measurement matches {given}; publishers: {', '.join(pubs)}")
    return sel, keys


def _shown(value: str) -> str:
    """A measurement's model or hardware as the user named it (a spec file's path without the prefix)."""
    from .. import calibrate

    return value[len(calibrate.FILE_PREFIX):] if value.startswith(calibrate.FILE_PREFIX) else value


def _terms(fit) -> list[dict[str, Any]]:
    return [{k: t[k] for k in ("field", "symbol", "label", "unit", "value", "stderr", "determined")}
            for t in fit.terms()]


def _term_lines(fit, title: str) -> str:
    rows = []
    for t in fit.terms():
        if t["unit"] == "s":
            value, unit = f"{t['value'] * 1e3:.3f}", "ms"
            err = f"± {t['stderr'] * 1e3:.3f}" if np.isfinite(t["stderr"]) else "not fitted: 0"
        elif t["field"] == "prefill" and not t["determined"]:
            value, unit, err = f"{t['value']:.3f}", "", "not fitted: = η_c"
        elif t["unit"] == "elements":
            value, unit = f"{t['value'] / 1e6:.2f}", "M"
            err = f"± {t['stderr'] / 1e6:.2f}" if np.isfinite(t["stderr"]) else "not fitted: 0"
        elif t["field"] == "expert" and not t["determined"] and fit.efficiency.expert_size_half > 0:
            value, unit, err = "–", "", "not fitted: η_c · s/(s + s½)"
        else:
            value, unit = f"{t['value']:.3f}", ""
            err = f"± {t['stderr']:.3f}" if np.isfinite(t["stderr"]) else "not fitted: 1"
        rows.append([t["symbol"], t["label"], value, unit, err])
    return title + "\n" + table(["term", "what", "value", "unit", "± 1σ"], rows)


def _selection(a: argparse.Namespace, keys) -> dict[str, Any]:
    return {"model": a.model, "hardware": a.hardware, "publisher": a.publisher, "measurement": keys,
            "measurements_file": a.measurements}


def _cross_validation(a: argparse.Namespace, items: dict[str, Any], sel: dict[str, Any],
                      keys) -> tuple[dict[str, Any], str]:
    from .. import calibrate

    whole = a.measurements is None and len(sel) == len(items)        # the built-in set: its cached fit
    try:
        cv = calibrate.built_in_cv(a.cv) if whole else calibrate.cross_validate(sel, a.cv)
        fit = calibrate.built_in_fit() if whole else calibrate.fit_efficiency(sel)
    except ValueError as e:
        raise CLIError(f"--cv {a.cv}: {e}") from None
    ins = np.abs(fit.fitted.ratio - 1.0)
    lo, hi = cv.band
    rows = [{"key": k, "group": str(g), "measured_tokens_per_s_per_gpu": float(m), "predicted_tokens_per_s_per_gpu":
             float(p), "ratio": float(p / m)} for k, g, m, p in zip(cv.keys, cv.groups, cv.measured, cv.predicted)]
    data = {"selection": _selection(a, keys), "cv": a.cv, "seed": calibrate.CV_SEED if a.cv == "k5" else None,
            "groups": len(set(cv.groups.tolist())), "count": len(rows), "median_abs_error": cv.median_error,
            "p90_abs_error": cv.p90_error, "band": [lo, hi],
            "in_sample_median_abs_error": float(np.median(ins)),
            "in_sample_p90_abs_error": float(np.percentile(ins, 90)),
            "terms": _terms(fit), "sigma_log": fit.sigma_log, "points": rows}
    what = {"publisher": "one publisher", "chip": "one chip", "model": "one model",
            "k5": f"one random fifth (seed {calibrate.CV_SEED})"}[a.cv]
    head = kv_lines([("cross-validation", f"leave {what} out, fit on the rest, predict it ({data['groups']} groups)"),
                     ("points", len(rows)),
                     ("held-out median |predicted ÷ measured − 1|", f"{cv.median_error:.1%}"),
                     ("held-out 90th percentile", f"{cv.p90_error:.1%}"),
                     ("held-out predicted ÷ measured, 10th–90th percentile", f"{lo:.2f}–{hi:.2f}"),
                     ("in-sample median / 90th percentile", f"{np.median(ins):.1%} / {np.percentile(ins, 90):.1%}")])
    text = table(["measurement", "group", "measured tok/s/GPU", "predicted tok/s/GPU", "predicted ÷ measured"],
                 [[r["key"], r["group"], r["measured_tokens_per_s_per_gpu"], r["predicted_tokens_per_s_per_gpu"],
                   r["ratio"]] for r in rows])
    return data, head + "\n\n" + _term_lines(fit, f"terms fitted to all {len(rows)} points:") + "\n\n" + text


def _prediction(a: argparse.Namespace, sel: dict[str, Any], keys) -> tuple[dict[str, Any], str]:
    from .. import calibrate

    fit = calibrate.built_in_fit()
    band = calibrate.built_in_cv("k5").band
    pred = calibrate.predict_measurements(sel, fit.efficiency)
    ideal = calibrate.check(sel).ideal
    rows = []
    for i, k in enumerate(pred.keys):
        m = sel[k]
        rows.append({"key": k, "name": m.name, "model": _shown(m.model), "hardware": _shown(m.hardware),
                     "measured_tokens_per_s_per_gpu": float(pred.measured[i]),
                     "predicted_tokens_per_s_per_gpu": float(pred.predicted[i]),
                     "ideal_tokens_per_s_per_gpu": float(ideal[i]), "ratio": float(pred.ratio[i]),
                     "batch": float(pred.batch[i]), "load": str(pred.load[i]),
                     "uncertain": presets.uncertain_fields(m), "unsourced": presets.unsourced_fields(m)})
    err = np.abs(pred.ratio - 1.0)
    data = {"selection": _selection(a, keys), "fitted_on": "presets/measurements.yaml", "fitted_count": fit.n,
            "terms": _terms(fit), "sigma_log": fit.sigma_log, "expected_band": list(band),
            "expected_band_from": "k5 cross-validation of the built-in measurements", "count": len(rows),
            "median_abs_error": float(np.median(err)), "p90_abs_error": float(np.percentile(err, 90)), "points": rows}
    slow = [r["key"] for r, ok in zip(rows, pred.reachable) if not ok]
    if slow:
        data["reason"] = (f"at the fitted terms even one sequence cannot reach the published speed of "
                          f"{', '.join(slow[:3])}{' …' if len(slow) > 3 else ''}: predicted at a batch below 1")
    head = kv_lines([("fitted on", f"the {fit.n} built-in measurements (your file is not fitted)"),
                     ("points predicted", len(rows)),
                     ("median |predicted ÷ measured − 1|", f"{data['median_abs_error']:.1%}"),
                     ("expected predicted ÷ measured (k5, 10th–90th percentile)", f"{band[0]:.2f}–{band[1]:.2f}")])
    text = table(["measurement", "measured tok/s/GPU", "predicted tok/s/GPU", "predicted ÷ measured",
                  "ideal tok/s/GPU", "batch", "load"],
                 [[r["key"], r["measured_tokens_per_s_per_gpu"], r["predicted_tokens_per_s_per_gpu"], r["ratio"],
                   r["ideal_tokens_per_s_per_gpu"], r["batch"], r["load"]] for r in rows])
    note = f"\nnote: {data['reason']}" if slow else ""
    return data, head + note + "\n\n" + _term_lines(fit, "terms:") + "\n\n" + text


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Published measurements against their ideal bound; the (MFU, BWU) that best predicts them; or the
    efficiency model cross-validated (--cv), or predicting a file of your own (--predict)."""
    from .. import calibrate  # only this subcommand needs it

    if a.predict and a.cv:
        raise CLIError("--predict: not with --cv (--cv measures the error on the selection; --predict fits the "
                       "built-in points and predicts --measurements FILE)")
    if a.predict and a.measurements is None:
        raise CLIError("--predict: needs --measurements FILE, the points to predict (the fit uses the built-in ones)")
    items = load_measurements(a.measurements) if a.measurements is not None else _built_in()
    sel, keys = _select(a, items)
    if a.cv:
        return _cross_validation(a, items, sel, keys)
    if a.predict:
        return _prediction(a, sel, keys)
    c = calibrate.check(sel)
    f = calibrate.fit_check(c)
    rows = []
    for i, k in enumerate(c.keys):
        m = sel[k]
        rows.append({"key": k, "name": m.name, "publisher": m.publisher, "model": _shown(m.model),
                     "hardware": _shown(m.hardware),
                     "measured_tokens_per_s_per_gpu": float(c.measured[i]),
                     "tokens_per_s_per_user": float(c.speed[i]), "ideal_tokens_per_s_per_gpu": float(c.ideal[i]),
                     "efficiency": float(c.efficiency[i]), "ideal_bound": str(c.bound[i]),
                     "fitted_tokens_per_s_per_gpu": float(f.predicted[i]), "residual_log10": float(f.residual_log10[i]),
                     "fitted_bound": str(f.bound[i]), "uncertain": presets.uncertain_fields(m),
                     "unsourced": presets.unsourced_fields(m)})
    data = {"selection": _selection(a, keys),
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
