"""`plan`: the cheapest deployment that meets a TTFT and a TPOT target — every chip, layout, precision,
serving mode and batch searched at once (model/plan.py; docs/design.md "Serving a request: the planner").

Each reported point carries `step_args`: the `python -m model step` command line that gives its
decode step (t_step_s, tokens/s/user and, for the point's own traffic, usd_per_mtok: the all-in
figure when aggregated, usd_per_mtok_output when disaggregated).
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import plan as planner
from ..specs import Deployment
from .common import FLAGS, CLIError, Path, _load, number, traffic_list
from .output import fmt, table

HELP = "the cheapest chip, layout, batch and precision that meet a TTFT and a TPOT target"
SYSTEM = False

PATHS = (Path("plan", ("--model", "--input-tokens", "--output-tokens", "--ttft", "--tpot")),)
# Deployment flags read from the shared table; chips and stages are what the planner searches.
_DEPLOYMENT = tuple(f for f in FLAGS if f.group == "deployment" and f.flag != "--pipeline-stages")
MAX_CHIPS = 16_384
MAX_HARDWARE = 64


def choice_list(flag: str, allowed: tuple[str, ...]):
    """An argparse `type`: comma-separated names, each one of `allowed`."""
    def parse(text: str) -> list[str]:
        parts = [p.strip() for p in text.split(",")]
        bad = [p for p in parts if p not in allowed]
        if bad or not text.strip():
            raise CLIError(f"{flag}: {text!r} is not allowed; allowed: comma-separated, each one of "
                           f"{', '.join(allowed)}")
        return list(dict.fromkeys(parts))
    return parse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="NAME|FILE", help="model preset key or YAML/JSON file (required)")
    p.add_argument("--hardware", metavar="NAME|FILE,…",
                   help="chip presets or files to search, comma-separated (default: every preset but the "
                        "illustrative lecture GPU)")
    tok = f"integer from 1 to {10_000_000:,}"
    p.add_argument("--input-tokens", type=number("--input-tokens", 1, hi=10_000_000, integer=True),
                   help=f"prompt tokens per request, I ({tok})")
    p.add_argument("--output-tokens", type=number("--output-tokens", 1, hi=10_000_000, integer=True),
                   help=f"output tokens per request, O ({tok})")
    p.add_argument("--mix", type=traffic_list("--mix"), metavar="I:O[:SHARE],…",
                   help="a traffic mix instead of --input-tokens/--output-tokens: request classes with their "
                        "shares of requests (equal shares when left out)")
    p.add_argument("--ttft", type=number("--ttft", 0, lo_open=True), help="time-to-first-token target [s] (> 0)")
    p.add_argument("--tpot", type=number("--tpot", 0, lo_open=True),
                   help="time-per-output-token target [s] (> 0); 1/tokens per second per user")
    p.add_argument("--throughput", type=number("--throughput", 0, lo_open=True),
                   help="required throughput (> 0): replicas and chips to serve it, each replica at most at "
                        "--utilisation; the ranking is then by $/hour of the whole deployment")
    p.add_argument("--throughput-unit", choices=planner.THROUGHPUT_UNITS, default="requests",
                   help="requests/s (default) or output tokens/s")
    p.add_argument("--utilisation", type=number("--utilisation", 0, lo_open=True, hi=1), default=0.7,
                   help="the busiest a replica may run, so queueing does not eat the TTFT budget (default 0.7)")
    eff = p.add_mutually_exclusive_group()
    eff.add_argument("--ideal", action="store_true",
                     help="plan on the ideal roofline (MFU = bandwidth utilisation = 1), a bound on time")
    eff.add_argument("--roofline", action="store_true",
                     help="plan on the roofline at --mfu, --bw-util and --mode (implied when one of them is given)")
    # Neither: the efficiency model fitted to the built-in measurements (docs/prediction.md), the default.
    p.add_argument("--weight-dtypes", type=choice_list("--weight-dtypes", planner.WEIGHT_DTYPES),
                   default=list(planner.WEIGHT_DTYPES), help="weight dtypes to search (default bf16,fp8,fp4; fp4 "
                                                             "only where the chip has fp4 FLOP/s)")
    p.add_argument("--kv-dtypes", type=choice_list("--kv-dtypes", planner.KV_DTYPES),
                   default=list(planner.KV_DTYPES), help="KV dtypes to search (default bf16,fp8)")
    p.add_argument("--modes", type=choice_list("--modes", planner.MODES), default=list(planner.MODES),
                   help="serving modes to search (default aggregated,disaggregated)")
    p.add_argument("--max-chips", type=number("--max-chips", 1, hi=MAX_CHIPS, integer=True), default=1024,
                   help=f"most chips one replica may have, C·P (default 1024, at most {MAX_CHIPS:,})")
    p.add_argument("--link-latency", type=number("--link-latency", 0), default=0.0,
                   help="seconds per ring hop of a tensor-parallel all-reduce (default 0: bandwidth only)")
    p.add_argument("--top", type=number("--top", 1, hi=100, integer=True), default=10,
                   help="how many of the best configurations to list (default 10)")
    g = p.add_argument_group("deployment (chips and pipeline stages are searched)")
    for f in _DEPLOYMENT:
        f.add_to(g)


def path_of(a: argparse.Namespace) -> Path:
    return PATHS[0]


def _hardware(a: argparse.Namespace) -> dict[str, Any]:
    if a.hardware is None:
        return planner.searchable_hardware()
    keys = [k.strip() for k in a.hardware.split(",")]
    if not any(keys):
        raise CLIError("--hardware: the chip list is empty; allowed: chip preset keys or YAML/JSON files, "
                       "comma-separated (see `python -m model presets`)")
    if any(not k for k in keys):
        raise CLIError(f"--hardware: {a.hardware!r} has an empty element; allowed: comma-separated chip keys or files")
    keys = list(dict.fromkeys(keys))
    if len(keys) > MAX_HARDWARE:
        raise CLIError(f"--hardware: {len(keys)} chips; at most {MAX_HARDWARE}")
    return {k: _load("hardware", k) for k in keys}


def _traffic(a: argparse.Namespace) -> planner.Traffic:
    if a.mix is not None:
        if a.input_tokens is not None or a.output_tokens is not None:
            raise CLIError("--mix: give --mix or --input-tokens/--output-tokens, not both")
        return planner.Traffic.mix(a.mix)
    for flag, v in (("--input-tokens", a.input_tokens), ("--output-tokens", a.output_tokens)):
        if v is None:
            raise CLIError(f"{flag} is missing: give --input-tokens and --output-tokens, or --mix I:O:SHARE,…")
    return planner.Traffic.single(a.input_tokens, a.output_tokens)


ROOFLINE_FLAGS = ("--mfu", "--bw-util", "--mode")     # the roofline's dials: given, the plan is on the roofline


def _roofline_dials(a: argparse.Namespace) -> list[str]:
    """The roofline flags given a value other than their default."""
    return [f.flag for f in _DEPLOYMENT if f.flag in ROOFLINE_FLAGS and getattr(a, f.dest) != f.default]


def efficiency_source(a: argparse.Namespace) -> str:
    """ideal (--ideal), roofline (--roofline or a roofline dial given) or predicted (the default)."""
    return "ideal" if a.ideal else "roofline" if a.roofline or _roofline_dials(a) else "predicted"


def _deployment(a: argparse.Namespace) -> Deployment:
    if a.ideal and set(_roofline_dials(a)) & {"--mfu", "--bw-util"}:
        raise CLIError("--ideal: the ideal roofline has MFU and bandwidth utilisation 1; leave out --mfu and "
                       "--bw-util, or drop --ideal")
    if a.sparse_attention == "fraction" and a.sparse_param > 1:
        raise CLIError(f"--sparse-param: {a.sparse_param:g} is out of range; with --sparse-attention "
                       "fraction it must be > 0 and ≤ 1")
    sparse_param = min(a.sparse_param, 1.0) if a.sparse_attention == "fraction" else a.sparse_param
    return Deployment(pipeline_hop_s=a.hop_latency, mfu=a.mfu, bw_util=a.bw_util, tokens_per_step=a.tokens_per_step,
                      mode=a.mode, sparse_attention=a.sparse_attention, sparse_param=sparse_param)


def _num(v: float) -> str:
    """A number as a flag value that parses back to the same float."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def step_args(pt: dict[str, Any], model_key: str, traffic: planner.Traffic, a: argparse.Namespace) -> list[str]:
    """The `python -m model step` arguments that give this point's decode step."""
    out = ["step", "--hardware", pt["hardware"], "--model", model_key, "--chips", _num(pt["chips"]),
           "--pipeline-stages", _num(pt["pipeline_stages"]), "--weight-dtype", pt["weight_dtype"],
           "--kv-dtype", pt["kv_dtype"], "--compute-dtype", pt["compute_dtype"], "--batch", _num(pt["batch"]),
           "--context", _num(pt["context"]), "--layout", pt["layout"]]
    if pt["layout"] == "tp" and a.link_latency:
        out += ["--link-latency", _num(a.link_latency)]
    if efficiency_source(a) == "predicted":
        out.append("--predicted")
    if pt["mode"] == "aggregated":
        out += ["--chunked-prefill", ",".join(f"{_num(i)}:{_num(o)}:{_num(s)}" for i, o, s in
                                              zip(traffic.input_tokens, traffic.output_tokens, traffic.shares))]
    for f in _DEPLOYMENT:
        v = getattr(a, f.dest)
        if v != f.default and not (a.ideal and f.flag in ("--mfu", "--bw-util")):
            out += [f.flag, _num(v) if f.lo is not None else str(v)]
    return out


def run(a: argparse.Namespace) -> tuple[dict[str, Any], str]:
    if a.model is None:
        raise CLIError("--model is missing: give a model preset (see `python -m model presets`) or a YAML/JSON file")
    traffic = _traffic(a)
    for flag, v in (("--ttft", a.ttft), ("--tpot", a.tpot)):
        if v is None:
            raise CLIError(f"{flag} is missing: give the target in seconds (> 0)")
    model = _load("model", a.model)
    hardware = _hardware(a)
    dep = _deployment(a)
    fitted = None
    if efficiency_source(a) == "predicted":
        from .. import calibrate

        fitted = calibrate.built_in_fit().efficiency
    try:
        res = planner.plan(model, hardware, traffic, ttft_s=a.ttft, tpot_s=a.tpot, throughput=a.throughput,
                           throughput_unit=a.throughput_unit, utilisation=a.utilisation, deployment=dep,
                           ideal=a.ideal, weight_dtypes=a.weight_dtypes, kv_dtypes=a.kv_dtypes, modes=a.modes,
                           max_chips=a.max_chips, link_latency_s=a.link_latency, top_n=a.top, efficiency=fitted)
    except ValueError as e:
        msg = str(e)
        raise CLIError(msg if msg.startswith("--") else f"--model: {msg}" if msg.startswith("model") else
                       f"plan: {msg}") from None

    def point(i: int) -> dict[str, Any]:
        pt = res.point(i)
        if pt["mode"] == "aggregated":
            del pt["prefill_decode_chip_ratio"]           # one replica does both
        pt["step_args"] = step_args(pt, a.model, traffic, a)
        return pt

    data: dict[str, Any] = {
        "inputs": {"model": model.name, "hardware": list(hardware), "traffic": [
            {"input_tokens": i, "output_tokens": o, "share": s}
            for i, o, s in zip(traffic.input_tokens, traffic.output_tokens, traffic.shares)],
            "ttft_s": a.ttft, "tpot_s": a.tpot, "throughput": a.throughput, "throughput_unit": a.throughput_unit,
            "utilisation": a.utilisation, "weight_dtypes": a.weight_dtypes, "kv_dtypes": a.kv_dtypes, "modes": a.modes,
            "max_chips": a.max_chips, "link_latency_s": a.link_latency, "mode": dep.mode,
            "tokens_per_step": dep.tokens_per_step, "hop_latency_s": dep.pipeline_hop_s},
        "efficiency": res.efficiency, "ranked_by": res.ranked_by,
        "best": None if res.best is None else point(res.best),
        "frontier": [point(i) for i in res.frontier],
        "frontier_per_chip": [point(i) for i in res.frontier_per_chip],
        "top": [point(i) for i in res.top],
        "configs_evaluated": res.configs_evaluated, "search_s": res.search_s,
    }
    reasons = []
    if a.throughput is not None:
        rep = res.replicas()
        data.update(replicas=None, prefill_replicas=None, chips=None, usd_per_hour=None)
        if rep is not None:
            data.update(replicas=rep["replicas"], prefill_replicas=rep["prefill_replicas"], chips=rep["chips"],
                        usd_per_hour=rep["usd_per_hour"])
        else:
            reasons.append("replicas and chips need a feasible configuration")
    if res.best is None:
        data["binding"] = res.binding
        data["closest"] = point(res.closest)
        reasons.insert(0, res.reason)
    if reasons:
        data["reason"] = "; ".join(reasons)
    if res.notes:
        data["notes"] = list(res.notes)
    return data, _text(data, res)


def _describe(pt: dict[str, Any]) -> str:
    lay = f"C = {pt['chips']}" + (f" × P = {pt['pipeline_stages']}" if pt["pipeline_stages"] > 1 else "")
    pre = (f", prefill on {pt['prefill_chips']} (batch {pt['prefill_batch']})" if pt["mode"] == "disaggregated"
           else "")
    return (f"{pt['hardware']} {lay} ({pt['layout']}), batch {pt['batch']:,}, weights {pt['weight_dtype']}, "
            f"KV {pt['kv_dtype']}, {pt['mode']}{pre}")


def _efficiency_text(eff: dict[str, Any]) -> str:
    if eff["source"] == "ideal":
        return "ideal roofline"
    if eff["source"] == "predicted":
        return (f"predicted: fitted efficiencies — HBM bandwidth {eff['bandwidth']:.3g}, dense compute "
                f"{eff['compute']:.3g}, routed experts {eff['expert']:.3g}, {eff['prompt_layer_s'] * 1e3:.3g} ms per "
                "layer of a step with prompt work (--ideal or --roofline for the bound)")
    return f"roofline at MFU {eff['mfu']:g}, bandwidth {eff['bw_util']:g}"


def _text(d: dict[str, Any], res: planner.Plan) -> str:
    i = d["inputs"]
    mix = ", ".join(f"{t['input_tokens']:g} in / {t['output_tokens']:g} out ({t['share']:.0%})" for t in i["traffic"])
    eff = d["efficiency"]
    lines = [f"plan: {i['model']}, {mix}; targets TTFT ≤ {fmt(i['ttft_s'])} s, TPOT ≤ {fmt(i['tpot_s'])} s",
             f"searched {d['configs_evaluated']:,} configurations over {len(i['hardware'])} chips in "
             f"{d['search_s'] * 1e3:,.0f} ms; " + _efficiency_text(eff),
             ""]
    pt = d["best"] or d["closest"]
    head = "best" if d["best"] else f"nothing feasible ({d['binding']} binds) — closest"
    lines += [f"{head}: {_describe(pt)}",
              f"  TTFT {fmt(pt['ttft_s'])} s, TPOT {fmt(pt['tpot_s'])} s "
              f"({fmt(pt['tokens_per_s_per_user'])} tok/s/user), "
              f"{fmt(pt['tokens_per_s_per_chip'])} tok/s/chip; bound: {pt['bound']}",
              f"  ${fmt(pt['usd_per_mtok_output'])}/Mtok out, ${fmt(pt['usd_per_mtok_input'])}/Mtok in, "
              f"${fmt(pt['usd_per_request'])}/request",
              "  its decode step: python -m model " + " ".join(pt["step_args"])]
    if d.get("replicas") is not None:
        lines.append(f"  for {fmt(i['throughput'])} {i['throughput_unit']}/s at ≤ {i['utilisation']:.0%}: "
                     f"{d['replicas']:,} replicas" + (f" + {d['prefill_replicas']:,} prefill replicas"
                                                       if d["prefill_replicas"] else "")
                     + f", {d['chips']:,} chips, ${fmt(d['usd_per_hour'])}/hour")
    if d["top"]:
        lines += ["", f"the {len(d['top'])} best:",
                  table(["chip", "C", "P", "batch", "weights", "KV", "mode", "TTFT s", "TPOT ms", "tok/s/chip",
                         "$/Mtok out", "$/request", "bound"],
                        [[t["hardware"], t["chips"], t["pipeline_stages"], t["batch"], t["weight_dtype"], t["kv_dtype"],
                          t["mode"][:5], t["ttft_s"], t["tpot_s"] * 1e3, t["tokens_per_s_per_chip"],
                          t["usd_per_mtok_output"], t["usd_per_request"], t["bound"]] for t in d["top"]])]
    f = d["frontier"]
    if f:
        lines += ["", f"frontier ($/request against tok/s/user, TTFT met): {len(f)} points from "
                      f"{fmt(f[0]['tokens_per_s_per_user'])} to {fmt(f[-1]['tokens_per_s_per_user'])} tok/s/user"]
    if d.get("reason"):
        lines.append(f"note: {d['reason']}")
    lines += [f"note: {n}" for n in d.get("notes", [])]
    return "\n".join(lines)
