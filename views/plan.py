"""Plan — the cheapest deployment that meets a latency target, every configuration searched at once.

The question the other pages answer backwards: "I serve the sidebar's model to requests of I input and O
output tokens; TTFT must stay under one target and TPOT under another (or tokens/s per user above it).
Which chip, how many, which batch and precision — and what does it cost?"  model/plan.py searches chip ×
layout (C chips × P stages) × weight and KV dtype × aggregated/disaggregated serving × batch in one pass;
`python -m model plan` is the same search from the shell.

Every input is a URL parameter with the page's prefix `pl_`: pl_hw (chips to consider, comma-separated
preset keys or `custom`; empty = every searchable chip), pl_i / pl_o (tokens), pl_mix (a mix of request
classes, I:O:share,… — when given it replaces pl_i / pl_o), pl_ttft [s], pl_by (tpot or tps), pl_tpot [ms],
pl_tps [tokens/s], pl_rps (a throughput, empty = none) in pl_ru (requests or output tokens per second),
pl_u (utilisation), pl_wd / pl_kd / pl_md (the weight dtypes, KV dtypes and serving modes searched) and
pl_eff (predicted: the efficiency model fitted to the published measurements, the default; roofline: the
XX
roofline mode and a sidebar price for the sidebar's chip come from the sidebar; its batch, context, C and
precision are what the plan searches, so they are not read.
"""

import csv
import dataclasses
import io
import math
from urllib.parse import urlencode

import numpy as np
import streamlit as st

from model import Precision, System, decode_step, presets
from model import calibrate as cal
from model.cluster import layout_comm_time
from model.plan import (
    KV_DTYPES,
    MODES,
    STEP_TERMS,
    THROUGHPUT_UNITS,
    WEIGHT_DTYPES,
    Config,
    Traffic,
    evaluate,
    plan,
    searchable_hardware,
)
from model.roofline import chunked_prefill
from ui import estimate
from ui.elements import export, metrics, tables
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations.plan import PREDICTED_NOTE, binding_term, predicted_step
from ui.figures import plan as fig_plan
from ui.figures.batch import step_breakdown
from ui.format import number, seconds, short_name, usd
from ui.state import custom, dials
from ui.state.dials import BATCH_OPTIONS, CHIP_OPTIONS, CONTEXT_OPTIONS, Dial, choice_dial, number_dial, page_dial
from ui.state.view import assemble, current_view, page_header
from views import heading

PAGE = ("plan",)
TTFT_OPTIONS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0]          # [s]
TPOT_OPTIONS = [1, 2, 3, 5, 7.5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000]   # [ms]
TPS_OPTIONS = [1, 2, 3, 5, 10, 15, 20, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000]            # [tokens/s]
MAX_TOKENS = 10_000_000                     # as the CLI's --input-tokens / --output-tokens
RPS_RANGE = (0.001, 1e9)
HW = presets.hardware_presets()
SEARCHABLE = list(searchable_hardware())
CHIP_CHOICES = [*HW, dials.CUSTOM]
BY_LABELS = {"tpot": "time per output token", "tps": "tokens/s per user"}
EFF_LABELS = {"predicted": "predicted (fitted to measurements)",
              "roofline": "roofline (the sidebar's Efficiency dials)", "ideal": "ideal roofline"}
EFF_ALIASES = {"realistic": "roofline"}     # what links made before the fitted model said for the dials
RU_LABELS = {"requests": "requests/s", "tokens": "output tokens/s"}
MAX_CLASSES = 8                             # request classes in a mix
PRECISIONS = [f"{w} weights, {kv} KV" for w in WEIGHT_DTYPES for kv in KV_DTYPES]   # index w·len(KV) + kv
BINDS = {"hbm": "HBM capacity binds", "ttft": "the TTFT target binds", "tpot": "the TPOT target binds",
         "ttft+tpot": "the TTFT and TPOT targets bind together"}     # model.plan.Plan.binding
ss = st.session_state


# ---------------------------------------------------------------- dials (each one URL parameter)
def _parse_chips(text: str) -> list[str]:
    """pl_hw: chip preset keys (or `custom`), comma-separated; `all` or empty = every searchable chip."""
    text = text.strip()
    if text.lower() in ("", "all"):
        return []
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise ValueError("an empty element in the chip list")
        if part not in CHIP_CHOICES:
            raise ValueError(f"unknown chip {part!r}")
        if part not in out:
            out.append(part)
    return out


def _parse_count(text: str) -> int:
    v = float(text)
    if not (math.isfinite(v) and v.is_integer() and 1 <= v <= MAX_TOKENS):
        raise ValueError(text)
    return int(v)


def _parse_rps(text: str) -> float | None:
    if text.strip().lower() in ("", "none"):
        return None
    v = float(text)
    if not (math.isfinite(v) and RPS_RANGE[0] <= v <= RPS_RANGE[1]):
        raise ValueError(text)
    return v


def _parse_mix(text: str) -> list[tuple[float, float, float]]:
    """pl_mix: request classes I:O[:share], comma-separated (equal shares where none is given); empty = none."""
    text = text.strip()
    if text.lower() in ("", "none"):
        return []
    out = []
    for part in text.split(","):
        f = part.strip().split(":")
        if len(f) not in (2, 3):
            raise ValueError(f"{part.strip()!r} is not I:O or I:O:share")
        i, o, w = (float(f[0]), float(f[1]), float(f[2]) if len(f) == 3 else 1.0)
        if not (all(math.isfinite(v) for v in (i, o, w)) and 1 <= i <= MAX_TOKENS and 1 <= o <= MAX_TOKENS and w > 0):
            raise ValueError(f"{part.strip()!r}: tokens must be 1 to {MAX_TOKENS:,}, the share > 0")
        out.append((i, o, w))
    if len(out) > MAX_CLASSES:
        raise ValueError(f"{len(out)} classes; at most {MAX_CLASSES}")
    return out


def _fmt_mix(classes: list) -> str:
    return ",".join(f"{i:g}:{o:g}:{w:g}" for i, o, w in classes)


def _parse_mix_text(text: str) -> str:
    """pl_mix as its widget holds it: the classes written back in one form ("" for none)."""
    return _fmt_mix(_parse_mix(text))


def _parse_eff(text: str) -> str:
    text = EFF_ALIASES.get(text, text)
    if text not in EFF_LABELS:
        raise ValueError(text)
    return text


def _subset_dial(key: str, options: tuple[str, ...]) -> Dial:
    """A comma-separated subset of `options` (default: all of them), kept in the options' order."""
    def parse(text: str) -> list[str]:
        parts = [p.strip() for p in text.split(",")]
        bad = [p for p in parts if p not in options]
        if bad or not text.strip():
            raise ValueError(text)
        return [o for o in options if o in parts]
    return Dial(key, list(options), parse, ",".join, "one or more of " + ", ".join(options) + ", comma-separated",
                PAGE)


def _count_dial(key: str, default: int) -> Dial:
    return Dial(key, default, _parse_count, str, f"a whole number of tokens from 1 to {MAX_TOKENS:,}", PAGE)


page_dial(Dial("pl_hw", [], _parse_chips, lambda v: ",".join(v) or "all", "chip preset keys (" + ", ".join(HW)
               + ") or custom, comma-separated; all (or empty) for every searchable chip", PAGE, max_chars=400,
               explain=True))
page_dial(_count_dial("pl_i", 2000))
page_dial(_count_dial("pl_o", 500))
page_dial(Dial("pl_mix", "", _parse_mix_text, str, f"request classes I:O:share, comma-separated (at most "
               f"{MAX_CLASSES}; tokens 1 to {MAX_TOKENS:,}, shares > 0), or none", PAGE, max_chars=400, explain=True))
page_dial(choice_dial("pl_ttft", TTFT_OPTIONS, 1.0, PAGE))
page_dial(choice_dial("pl_by", list(BY_LABELS), "tpot", PAGE))
page_dial(choice_dial("pl_tpot", TPOT_OPTIONS, 50, PAGE))
page_dial(choice_dial("pl_tps", TPS_OPTIONS, 20, PAGE))
page_dial(Dial("pl_rps", None, _parse_rps, lambda v: "none" if v is None else f"{v:.12g}",
               f"a number of requests/s from {RPS_RANGE[0]:g} to {RPS_RANGE[1]:g}, or none", PAGE))
page_dial(choice_dial("pl_ru", list(THROUGHPUT_UNITS), "requests", PAGE))
page_dial(number_dial("pl_u", 0.01, 1, 0.7, PAGE))
page_dial(_subset_dial("pl_wd", WEIGHT_DTYPES))
page_dial(_subset_dial("pl_kd", KV_DTYPES))
page_dial(_subset_dial("pl_md", MODES))
page_dial(Dial("pl_eff", "predicted", _parse_eff, str, "one of predicted, roofline, ideal (realistic: roofline)", PAGE,
               options=tuple(EFF_LABELS)))


def _chip_label(key: str) -> str:
    if key == dials.CUSTOM:
        return "Custom chip (the link's xhw)"
    return short_name(HW[key].name) + ("" if HW[key].status == "shipping" else f" ({HW[key].status})")


def _tidy_mix() -> None:
    """The mix as typed, written back in one form when it parses (a bad one is said in the notices)."""
    try:
        ss["pl_mix"] = _parse_mix_text(ss["pl_mix"])
    except ValueError:
        pass


# ---------------------------------------------------------------- the page: header, notices, card | inputs
view = current_view()
# The sidebar's C and compute precision are searched here, not read: their warnings do not apply.
page_header(heading("plan"), dataclasses.replace(view, warnings=tuple(
    w for w in view.warnings if "scale-up domain" not in w and "FLOP/s figure" not in w)))
notices = st.container()        # one fixed slot for what comes and goes with the inputs
card, inputs = st.columns([3, 2], gap="medium")   # a phone stacks them: the card first

with inputs:
    st.multiselect("Chips to consider", CHIP_CHOICES, key="pl_hw", format_func=_chip_label,
                   placeholder=f"every searchable chip ({len(SEARCHABLE)})", persist_state="session",
                   help="Chip presets to search; empty: every preset but the illustrative lecture GPU. "
                        "'Custom' is the chip of the link's xhw parameter (the Custom page).")
    mix_text = ss["pl_mix"]
    c = st.columns(2)
    c[0].number_input("Prompt tokens I", min_value=1, max_value=MAX_TOKENS, step=100, key="pl_i",
                      persist_state="session", help="Input tokens per request.", disabled=bool(mix_text))
    c[1].number_input("Output tokens O", min_value=1, max_value=MAX_TOKENS, step=100, key="pl_o",
                      persist_state="session", help="Output tokens per request.", disabled=bool(mix_text))
    st.text_input("…or a mix of requests (I:O:share, …)", key="pl_mix", placeholder="e.g. 1000:200:0.7, 8000:1000:0.3",
                  persist_state="session", on_change=_tidy_mix,
                  help="Request classes with their shares of requests; planned on the KV and step time the mix "
                       f"really implies, not on its mean lengths. Replaces I and O while set; at most {MAX_CLASSES} "
                       "classes.")
    st.select_slider("Time to first token ≤ (TTFT target)", TTFT_OPTIONS, key="pl_ttft", format_func=seconds,
                     persist_state="session", help="The prompt's prefill, plus its KV's hand-over when "
                                                   "disaggregated; queueing is kept small by the utilisation.")
    st.radio("Speed target as", list(BY_LABELS), key="pl_by", format_func=BY_LABELS.get, horizontal=True,
             persist_state="session")
    if ss["pl_by"] == "tpot":
        st.select_slider("Time per output token ≤ (TPOT target)", TPOT_OPTIONS, key="pl_tpot",
                         format_func=lambda v: f"{v:g} ms", persist_state="session")
    else:
        st.select_slider("Tokens/s per user ≥", TPS_OPTIONS, key="pl_tps", format_func=lambda v: f"{v:g} tokens/s",
                         persist_state="session")
    c = st.columns([2, 2, 1.4])
    c[0].number_input(f"Throughput [{RU_LABELS[ss['pl_ru']]}]", min_value=RPS_RANGE[0], max_value=RPS_RANGE[1],
                      step=1.0, key="pl_rps", placeholder="none", persist_state="session",
                      help="Optional: the throughput to serve. Then the plan counts replicas and chips and ranks "
                           "by the whole deployment's $/hour.")
    c[1].radio("in", list(RU_LABELS), key="pl_ru", format_func=RU_LABELS.get, persist_state="session")
    c[2].number_input("Utilisation ≤", min_value=0.01, max_value=1.0, step=0.05, key="pl_u", persist_state="session",
                      help="The busiest a replica may run (with a throughput), so queueing does not eat the "
                           "TTFT budget.")
    st.radio("Efficiency", list(EFF_LABELS), key="pl_eff", format_func=EFF_LABELS.get, horizontal=True,
             persist_state="session", help="Predicted: the efficiency model fitted to the published measurements "
                                           "(docs/prediction.md), with its held-out error. Roofline: the sidebar's "
                                           "Efficiency dials. Ideal: every efficiency 1, a bound on time.")
    with st.expander("Precisions and serving modes searched"):
        c = st.columns(3)
        c[0].multiselect("Weights", list(WEIGHT_DTYPES), key="pl_wd", persist_state="session",
                         help="fp4 only on chips with fp4 FLOP/s. Quality is not modelled: leave out a format your "
                              "model cannot be served in.")
        c[1].multiselect("KV cache", list(KV_DTYPES), key="pl_kd", persist_state="session")
        c[2].multiselect("Modes", list(MODES), key="pl_md", persist_state="session",
                         help="Aggregated: one replica prefills and decodes. Disaggregated: prefill replicas hand "
                              "the KV to decode replicas.")

# ---------------------------------------------------------------- the inputs, resolved
model = view.system.model
sidebar_dep = view.system.deployment
eff_choice = ss["pl_eff"]
ideal, predicted = eff_choice == "ideal", eff_choice == "predicted"
fitted = cal.built_in_summary() if predicted else None
plan_dep = sidebar_dep.with_(mfu=1.0, bw_util=1.0) if ideal else sidebar_dep
a = plan_dep.tokens_per_step
try:
    classes = _parse_mix(ss["pl_mix"])
    mix_problem = None
except ValueError as e:
    classes, mix_problem = [], str(e)
traffic = Traffic.mix(classes) if classes else Traffic.single(int(ss["pl_i"]), int(ss["pl_o"]))
I, O = traffic.mean_input, traffic.mean_output
ttft = float(ss["pl_ttft"])
tpot = float(ss["pl_tpot"]) / 1e3 if ss["pl_by"] == "tpot" else a / float(ss["pl_tps"])
rps, unit = ss["pl_rps"], ss["pl_ru"]
util = float(ss["pl_u"])
space_notes = []
searched = {}
for k, allowed, what in (("pl_wd", WEIGHT_DTYPES, "weight formats"), ("pl_kd", KV_DTYPES, "KV formats"),
                         ("pl_md", MODES, "serving modes")):
    searched[k] = tuple(ss[k]) or allowed
    if not ss[k]:
        space_notes.append(f"No {what} chosen: searching all of them ({', '.join(allowed)}).")


def _custom_chip():
    """The link's custom chip (xhw), or (None, why not)."""
    text = ss.get("xhw") or ""
    if not text:
        return None, "the link has no xhw parameter; define one on the Custom page"
    try:
        return custom.decode("hardware", text)[1], ""
    except ValueError as e:
        return None, str(e)


def hardware_to_search() -> tuple[dict, list[str]]:
    """chip key → Hardware in search order, and notes on chips left out.  The sidebar's chip carries the
    sidebar's price (and is the custom chip when the sidebar shows one)."""
    chosen, out, said = list(ss["pl_hw"]) or SEARCHABLE, {}, []
    for k in chosen:
        if k == view.chip_key:
            out[k] = view.system.hardware
        elif k == dials.CUSTOM:
            spec, why = _custom_chip()
            if spec is None:
                said.append(f"The custom chip is left out: {dials.md_code(why)}.")
                continue
            out[k] = spec
        else:
            out[k] = HW[k]
    if not out:
        said.append(f"No chip left to search: planning over every searchable chip ({len(SEARCHABLE)}).")
        out = {k: (view.system.hardware if k == view.chip_key else HW[k]) for k in SEARCHABLE}
    return out, said


hardware, chip_notes = hardware_to_search()
order = list(CHIP_CHOICES)
colors = [fig_plan.CHIP_COLORS[order.index(k) % len(fig_plan.CHIP_COLORS)] for k in hardware]
names = [short_name(h.name) for h in hardware.values()]


# ---------------------------------------------------------------- the search (cached: a sidebar move re-plans nothing)
def _point_text(pt: dict, name: str) -> str:
    return fig_plan.describe(name, pt["chips"], pt["pipeline_stages"], pt["batch"], pt["weight_dtype"],
                             pt["kv_dtype"], pt["mode"], pt["prefill_chips"], pt["prefill_batch"])


@st.cache_data(max_entries=16, show_spinner=False)
def search(key: str, _model, _hardware, _traffic, _ttft, _tpot, _rps, _unit, _util, _dep, _ideal, _eff, _space,
           _names) -> dict:
    """One `plan` call and what the page draws of it: the thinned dots, the frontier, the best (or the
    closest) point, the ten best.  `key` is the repr of every input (the rest are not hashed)."""
    res = plan(_model, _hardware, _traffic, ttft_s=_ttft, tpot_s=_tpot, throughput=_rps, throughput_unit=_unit,
               utilisation=_util, deployment=_dep, ideal=_ideal, efficiency=_eff, weight_dtypes=_space["pl_wd"],
               kv_dtypes=_space["pl_kd"], modes=_space["pl_md"])
    p = res.points
    fits = np.flatnonzero(p["fits"])
    x, y = p["tokens_per_s_per_user"][fits], p["usd_per_mtok"][fits]
    chip, mode, meets = p["hardware"][fits], p["mode"][fits], p["meets_ttft"][fits]
    per_decade = fig_plan.cells_per_decade(len(_hardware))
    keep = fig_plan.thin(x, y, chip, per_decade, rank=np.where(meets, y, y * 1e100))   # TTFT-meeting dots first
    sel = fits[keep]
    dots = {"x": x[keep], "y": y[keep], "chip": chip[keep], "mode": mode[keep], "meets": meets[keep],
            "precision": p["weight_dtype"][sel].astype(np.int64) * len(KV_DTYPES) + p["kv_dtype"][sel],
            "custom": np.stack([p[k][sel] for k in fig_plan.CUSTOM], axis=1).astype(np.float32)}
    return {
        "best": None if res.best is None else res.point(res.best),
        "closest": None if res.closest is None else res.point(res.closest),
        "binding": res.binding, "reason": res.reason, "notes": res.notes, "efficiency": res.efficiency,
        "evaluated": res.configs_evaluated, "fit": int(fits.size), "search_s": res.search_s, "per_decade": per_decade,
        "top": [res.point(int(i)) for i in res.top], "replicas": res.replicas(), "dots": dots,
        "frontier": {"x": p["tokens_per_s_per_user"][res.frontier], "y": p["usd_per_mtok"][res.frontier],
                     "text": [_point_text(res.point(int(i)), _names[int(p["hardware"][i])]) for i in res.frontier]},
    }


eff_terms = None if fitted is None else fitted.efficiency
key = repr((model, list(hardware.items()), traffic, ttft, tpot, rps, unit, util, plan_dep, ideal, eff_terms, searched))
try:
    found = search(key, model, hardware, traffic, ttft, tpot, rps, unit, util, sidebar_dep, ideal, eff_terms, searched,
                   names)
    failed = None
except ValueError as e:          # the model or a custom chip lacks a figure the search needs
    found, failed = None, str(e)

with notices:
    if mix_problem:
        st.warning(f"The mix {dials.md_code(ss['pl_mix'])} is not understood ({dials.md_code(mix_problem)}): planning "
                   f"on I = {I:,.0f} and O = {O:,.0f}. Write classes as I:O:share, comma-separated.", icon="⚠️")
    for n in space_notes:
        st.info(n, icon="ℹ️")
    for n in chip_notes:
        st.warning(n, icon="⚠️")
    if failed:
        st.warning(f"No plan for {model.name}: {dials.md_code(failed)}", icon="⚠️")
    elif found["best"] is None:
        cl = found["closest"]
        st.warning(f"**Nothing meets the targets** ({BINDS[found['binding']]}): "
                   f"{found['reason']}. The card shows the closest point — TTFT {seconds(cl['ttft_s'])}, TPOT "
                   f"{seconds(cl['tpot_s'])} at {usd(cl['usd_per_mtok'])} per million output tokens.", icon="⚠️")

if found is None:
    card.info("Change the model or the chips to plan again.")
else:
    best = found["best"]
    feasible = best is not None
    pt = best if feasible else found["closest"]
    hw_pt = hardware[pt["hardware"]]
    name = short_name(hw_pt.name)

    # The point's own decode step, term by term (what the planner priced; model.plan.evaluate's recipe).
    s_pt = System(hw_pt, model, Precision(weights=pt["weight_dtype"], kv=pt["kv_dtype"], compute=pt["compute_dtype"]),
                  plan_dep.with_(chips=float(pt["chips"]), pipeline_stages=int(pt["pipeline_stages"])))
    agg = pt["mode"] == "aggregated"
    pf = chunked_prefill(s_pt, traffic.input_tokens, traffic.output_tokens, traffic.shares) if agg else None
    n_tok = pt["batch"] if pf is None else float(pf.tokens(pt["batch"]))
    step = decode_step(s_pt, pt["batch"], pt["context"], t_comm=layout_comm_time(s_pt, n_tok, pt["layout"]),
                       prefill=pf)
    if predicted:   # the fitted model's terms of the same step (what the planner priced)
        ev = evaluate(model, hw_pt, Config(pt["chips"], pt["pipeline_stages"], pt["batch"], pt["weight_dtype"],
                                           pt["kv_dtype"], pt["mode"], pt["prefill_chips"] // pt["prefill_stages"],
                                           pt["prefill_stages"], pt["prefill_batch"]),
                      traffic, deployment=plan_dep, efficiency=eff_terms)

    # ------------------------------------------------ the card
    with card, st.container(border=True):
        lay = f"{name} × {pt['chips']:,}" + (f" × {pt['pipeline_stages']} stages" if pt["pipeline_stages"] > 1 else "")
        st.markdown(("**Cheapest configuration that meets both targets**" if feasible else
                     "**Closest point — not feasible**") + f": {lay}, batch {pt['batch']:,}, {pt['weight_dtype']} "
                    f"weights, {pt['kv_dtype']} KV, {pt['mode']}")

        def verdict(value: float, target: float, what: str) -> Metric:
            ok = value <= target * (1 + 1e-9)
            return Metric(what, seconds(value), delta=f"target ≤ {seconds(target)}", delta_arrow="off",
                          delta_color="green" if ok else "red")

        layout_word = {"none": "one chip a stage", "tp": "tensor-parallel", "ep": "experts spread"}[pt["layout"]]
        if pt["pipeline_stages"] > 1:
            layout_word += f", {pt['pipeline_stages']} stages"
        items = [
            Metric("Chips per replica", f"{pt['chips']:,}" + (f" × {pt['pipeline_stages']}" if pt["pipeline_stages"] > 1
                                                                else ""),
                   delta=f"{name}, {layout_word}", delta_color="off", delta_arrow="off",
                   help="C chips per pipeline stage (× P stages): the decode replica when disaggregated."),
            Metric("Batch", f"{pt['batch']:,}", help="Sequences per decode step (per stage)."),
            Metric("Precision", f"{pt['weight_dtype']} / {pt['kv_dtype']}", delta=f"compute {pt['compute_dtype']}",
                   delta_color="off", delta_arrow="off", help="Weights / KV cache. Quality is not modelled."),
            Metric("Mode", pt["mode"], delta_color="off", delta_arrow="off",
                   delta=(f"prefill {pt['prefill_chips']:,} : decode {pt['decode_chips']:,} chips" if not agg
                          else "prompts chunked into the decode steps"),
                   help="Aggregated: one replica prefills and decodes. Disaggregated: prefill chips hand the "
                        "KV to a decode replica."),
            verdict(pt["ttft_s"], ttft, "TTFT"),
            verdict(pt["tpot_s"], tpot, "TPOT"),
            Metric("Tokens/s per user", number(pt["tokens_per_s_per_user"])),
            Metric("Tokens/s per chip", number(pt["tokens_per_s_per_chip"]), help="Every chip, prefill included."),
            Metric("$/Mtok output", usd(pt["usd_per_mtok_output"])),
            Metric("$/Mtok input", usd(pt["usd_per_mtok_input"])),
            Metric("$ per request", usd(pt["usd_per_request"]),
                   help=f"E[I]·$/Mtok input + E[O]·$/Mtok output, for {I:,.0f} + {O:,.0f} tokens."),
            Metric("Bound", pt["bound"], help="The decode step's largest term (the equation below)."),
        ]
        if rps is not None:
            ok_r = feasible and found["replicas"] is not None
            r = found["replicas"] if ok_r else None
            items += [Metric("Replicas", f"{r['replicas']:,}" if ok_r else "—",
                             delta=(f"+ {r['prefill_replicas']:,} prefill" if ok_r and r["prefill_replicas"] else
                                    f"for {rps:g} {RU_LABELS[unit]} at ≤ {util:.0%}"), delta_color="off",
                             delta_arrow="off"),
                      Metric("Chips in all", f"{r['chips']:,}" if ok_r else "—",
                             delta=f"{usd(r['usd_per_hour'])}/hour" if ok_r else "needs a feasible point",
                             delta_color="off", delta_arrow="off")]
        metrics.grid(items, columns=3)

        # ------------------------------------------------ the link to the Batch page
        def at_most(options: list, v: float):
            """The largest option ≤ v (the smallest option when none is)."""
            nums = sorted(o for o in options if isinstance(o, (int, float)))
            return max((o for o in nums if o <= v), default=nums[0])

        def at_least(options: list, v: float):
            nums = sorted(o for o in options if isinstance(o, (int, float)))
            return min((o for o in nums if o >= v), default=nums[-1])

        # The Batch page's dials take set values: a batch and context rounded down (the point still fits
        # and is no slower), the chips rounded up (C·P as one stage: at least the HBM it had).
        CP = pt["chips"] * pt["pipeline_stages"]
        b_link, t_link, c_link = at_most(BATCH_OPTIONS, pt["batch"]), at_most(CONTEXT_OPTIONS, pt["context"]), \
            at_least(CHIP_OPTIONS, CP)
        chip_key = pt["hardware"]
        q = {"chip": chip_key, "model": view.model_key, "w": pt["weight_dtype"], "kv": pt["kv_dtype"],
             "cd": pt["compute_dtype"], "b": str(b_link), "ctx": str(t_link), "c": str(c_link)}
        if chip_key == dials.CUSTOM:
            q["xhw"] = ss["xhw"]
        if view.model_key == dials.CUSTOM:
            q["xm"] = ss["xm"]
        if ss.get("sp") is not None:
            q["sp"] = dials.REGISTRY.dials["sp"].fmt(ss["sp"])
        price = ss.get("price") if chip_key == view.chip_key else None
        if price is not None:
            q["price"] = dials.REGISTRY.dials["price"].fmt(price)
        if plan_dep.mode != "lecture":
            q["mode"] = plan_dep.mode
        for k, v in (("mfu", plan_dep.mfu), ("bwu", plan_dep.bw_util)):
            if v != 1.0:
                q[k] = dials.REGISTRY.dials[k].fmt(v)
        if predicted:
            q[dials.ESTIMATE_KEY] = "predicted"
        q["v"] = str(dials.URL_VERSION)
        st.markdown(f"**[Open on the Batch page ↗](batch?{urlencode(q)})**")

        # What the Batch page will show there, built as its sidebar builds it.
        hw0 = custom.decode("hardware", ss["xhw"])[1] if chip_key == dials.CUSTOM else HW[chip_key]
        model0 = (custom.decode("model", ss["xm"])[1] if view.model_key == dials.CUSTOM
                  else presets.model_presets()[view.model_key])
        s_link = assemble(hw0, model0, pt["weight_dtype"], pt["kv_dtype"], pt["compute_dtype"], c_link, b_link, t_link,
                          price=price, sparsity=ss.get("sp"), mfu=plan_dep.mfu, bw_util=plan_dep.bw_util,
                          mode=plan_dep.mode)[0]
        if predicted:       # the Batch page's predicted metrics (ui/estimate.py: the fitted model, no prompts)
            there = estimate.predict(s_link, b_link, t_link)
            there_tps, there_usd = float(there.tokens_per_s_per_user), float(there.usd_per_mtok)
        else:
            there = decode_step(s_link, b_link, t_link)
            there_tps, there_usd = float(there.tokens_per_s_per_user), float(there.usd_per_mtok)
        moved = []
        if b_link != pt["batch"]:
            moved.append(f"batch {pt['batch']:,} → {b_link:,}")
        if t_link != pt["context"]:
            moved.append(f"context {pt['context']:,.0f} → {t_link:,} tokens")
        if pt["pipeline_stages"] > 1:
            moved.append(f"{pt['chips']:,} chips × {pt['pipeline_stages']} stages → C = {c_link:,} in one stage")
        elif c_link != CP:
            moved.append(f"C = {CP:,} → {c_link:,}")
        left_out = (["the prompts chunked into the step"] if agg else ["the prefill replica"])
        if float(step.t_comm_s) > 0:
            left_out.append("the communication term")
        st.caption((f"The Batch page's dials take set values ({'; '.join(moved)}). " if moved else "")
                   + f"It shows the decode step alone, without {' or '.join(left_out)}: "
                   + ("predicted " if predicted else "")
                   + f"{number(there_tps)} tokens/s per user, {usd(there_usd)}/Mtok there.")

        # ------------------------------------------------ the binding term, with its numbers
        if predicted:
            e = eff_terms.for_model(model)          # η_e of this model's experts
            latex(predicted_step(ev, e, pt["batch"], model.n_layers or 0, a / O if agg else 0.0), key="plan.binding")
            st.caption(PREDICTED_NOTE)
            title = f"Where its decode step goes (predicted): {seconds(ev['t_step_s'])}"
            export.chart(fig_plan.predicted_breakdown({k: ev[k] for k in STEP_TERMS}, title), key="plan_breakdown")
        else:
            latex(binding_term(s_pt, step, pt["batch"], pt["context"], pf, pt["layout"]), key="plan.binding")
            terms = {"matmul": float(step.t_matmul_s), "attention": float(step.t_attn_s),
                     "weights": float(step.t_weights_s), "kv": float(step.t_kv_s), "comm": float(step.t_comm_s),
                     "hops": float(step.t_hops_s)}
            title = f"Where its decode step goes: {seconds(float(step.t_step_s))}"
            export.chart(step_breakdown(terms, plan_dep.mode, title), key="plan_breakdown")
        eff = found["efficiency"]
        if predicted:
            lo, hi = fitted.band
            e = eff_terms.for_model(model)
            terms = [f"HBM bandwidth at {100 * e.bandwidth:.3g} %", f"dense compute at {100 * e.compute:.3g} %",
                     cal.expert_phrase(eff_terms, model), cal.attention_phrase(e, hw_pt, pt["compute_dtype"])]
            eff_text = (f"Planned on the **predicted** step: the efficiency model fitted to {fitted.n} published "
                        f"measurements — {', '.join(t for t in terms if t)} and {1e3 * e.prompt_layer_s:.3g} ms per "
                        f"layer of a step that carries prompt work (docs/prediction.md). Held out five-fold it "
                        f"missed a measurement by a median of "
                        f"{100 * fitted.median_error:.3g} %; 8 in 10 measured costs per token lay between "
                        f"{lo:.2f}× and {hi:.2f}× the predicted one (the band around the frontier). The communication "
                        "and the prefill passes (TTFT) use the same efficiencies, but no published measurement "
                        "tested them.")
        elif ideal:
            eff_text = "Planned on the **ideal roofline** (MFU and HBM bandwidth utilisation 1): a lower bound on time."
        elif eff["source"] == "ideal":
            eff_text = ("Planned with the **sidebar's efficiencies**, both 1 — the ideal roofline; set them under "
                        "Efficiency in the sidebar.")
        else:
            eff_text = (f"Planned with the **sidebar's efficiencies**: MFU {eff['mfu']:g}, HBM bandwidth utilisation "
                        f"{eff['bw_util']:g}.")
        st.caption(eff_text + ("" if predicted else f" {sidebar_dep.mode.capitalize()} roofline.")
                   + f" List prices per chip-hour ({name}: {usd(hw_pt.price_usd_per_hour)}).")

    # ------------------------------------------------ every configuration, the frontier, the targets
    d = found["dots"]
    target_label = (f"TPOT ≤ {seconds(tpot)}" if ss["pl_by"] == "tpot" else f"≥ {a / tpot:g} tokens/s per user")
    export.chart(fig_plan.plan_figure(
        d["x"], d["y"], d["chip"], d["mode"], d["meets"], [PRECISIONS[i] for i in d["precision"]], d["custom"],
        chip_names=names, chip_colors=colors, frontier_x=found["frontier"]["x"], frontier_y=found["frontier"]["y"],
        frontier_text=found["frontier"]["text"], winner=(pt["tokens_per_s_per_user"], pt["usd_per_mtok"]),
        feasible=feasible, target_x=a / tpot, target_label=target_label, evaluated=found["evaluated"],
        per_decade=found["per_decade"], band=estimate.band() if predicted else None),
        key="plan_points")
    st.caption(f"{found['evaluated']:,} configurations of {model.name} over {len(hardware)} chip(s), searched in "
               f"{found['search_s'] * 1e3:,.0f} ms; {found['fit']:,} fit in HBM (the dots). Right of the dashed line "
               "the TPOT target is met; open dots miss the TTFT target. The frontier joins the configurations that "
               "meet TTFT and that nothing beats on both speed and cost."
               + (" Shaded: where 8 in 10 measured points of the frontier's configurations would lie, by the "
                  "predicted model's held-out error; switch Efficiency to ideal for the bound." if predicted else ""))

    def row(i: int, t: dict) -> dict:
        out = {"#": i, "chip": short_name(hardware[t["hardware"]].name), "C": t["chips"],
               "P": t["pipeline_stages"], "batch": t["batch"], "weights": t["weight_dtype"], "KV": t["kv_dtype"],
               "mode": t["mode"], "prefill chips": t["prefill_chips"] if t["mode"] == "disaggregated" else None,
               "TTFT [s]": t["ttft_s"], "TPOT [ms]": t["tpot_s"] * 1e3,
               "tokens/s per user": t["tokens_per_s_per_user"], "tokens/s per chip": t["tokens_per_s_per_chip"],
               "$/Mtok output": t["usd_per_mtok_output"], "$/Mtok input": t["usd_per_mtok_input"],
               "$/request": t["usd_per_request"], "bound": t["bound"]}
        if rps is not None:
            out.update({"replicas": t["replicas"], "chips in all": t["chips_total"], "$/hour": t["usd_per_hour"]})
        return out

    rows = [row(i, t) for i, t in enumerate(found["top"], 1)]
    st.markdown(f"**The {len(rows)} best** (cheapest per {'hour' if rps is not None else 'request'}, one per "
                "chip, layout, precision and mode)" if rows else
                "**The ten best**: none — no configuration meets both targets.")

    def top_csv() -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(row(1, pt)))
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()

    fmt3 = {c: st.column_config.NumberColumn(format="%.3g") for c in
            ("TTFT [s]", "TPOT [ms]", "tokens/s per user", "tokens/s per chip", "$/Mtok output", "$/Mtok input",
             "$/request", "$/hour")}
    tables.dataframe(rows or {k: [] for k in row(1, pt)}, key="plan_top", column_config=fmt3)
    st.download_button("⬇ CSV", data=top_csv, file_name="plan_top.csv", mime="text/csv", key="plan_top_csv",
                       on_click="ignore", help="The ten best, every number at full precision.")
    st.caption(" ".join(f"Note: {n}." for n in found["notes"]) or " ")
