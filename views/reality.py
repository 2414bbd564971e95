"""Reality check — published serving measurements against the roofline of their own setup.

The lecture's roofline is a lower bound on time ("time is at least this", §1; 00:00:00–00:31:59):
every FLOP at peak, every byte at full HBM bandwidth. Here each published result (presets/
measurements.yaml: DeepSeek's production figures, SGLang, RTP-LLM, TensorRT-LLM, InferenceX) is
held against that bound for exactly its setup — chip, model, formats, chips per replica, context,
MTP, prompt work — using model/calibrate.py. measured ÷ ideal is how close real serving came; a
compute MFU and HBM bandwidth utilisation fitted in log space to the selected points turn the
ideal curves of every other page into realistic ones (the sidebar's efficiency dials). The
lecture's own sizing uses ~30% MFU and decode at ~1/3–1/5 of prefill's (§2.6, §2.11; 01:18:49).
"""

import numpy as np
import streamlit as st

from model import calibrate as cal
from model import presets
from ui import estimate
from ui.elements import export, metrics, tables
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import tex_int, tex_num
from ui.figures import reality as fig_reality
from ui.figures.batch import Prediction
from ui.format import number, short_name, tokens
from ui.state import dials
from ui.state.dials import choice_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("reality",)
ALL = "all"
DEFAULT = "deepseek-h800-production"
GRID = 240                                   # batch points on the frontier curves


@st.cache_data(show_spinner=False)
def _checked() -> cal.Check:
    """Every built-in measurement against its ideal bound (the presets do not change while the app runs)."""
    return cal.check(presets.measurement_presets())


@st.cache_data(show_spinner=False)
def _fitted(keys: tuple[str, ...]) -> cal.Fit:
    c = _checked()
    return cal.fit_check(c, np.isin(np.array(c.keys), np.array(keys)))


@st.cache_data(show_spinner=False)
def _held_out() -> dict[str, dict]:
    """Every way of holding the built-in points out (model.calibrate.CV_KINDS): each point's held-out ratio and
    group, the median and 90th-percentile error; and the in-sample fit's errors beside them."""
    out = {}
    for by in cal.CV_KINDS:
        cv = cal.built_in_cv(by)
        out[by] = {"keys": cv.keys, "groups": cv.groups, "ratio": cv.ratio, "predicted": cv.predicted,
                   "median": cv.median_error, "p90": cv.p90_error, "band": cv.band}
    fitted = cal.built_in_fit().fitted
    err = np.abs(fitted.ratio - 1.0)
    out["in-sample"] = {"median": float(np.median(err)), "p90": float(np.percentile(err, 90))}
    return out


def _apply(mfu: float, bwu: float) -> None:
    """on_click: set the sidebar's efficiency dials (their widgets were drawn before this page ran)."""
    st.session_state["mfu"] = float(min(1.0, max(0.01, round(mfu, 2))))
    st.session_state["bwu"] = float(min(1.0, max(0.01, round(bwu, 2))))


def tex_s(t: float) -> str:
    """Seconds for KaTeX in ms, µs or ns (the per-sequence terms are tiny)."""
    for mul, unit in ((1.0, "s"), (1e3, "ms"), (1e6, "µs"), (1e9, "ns")):
        if abs(t) * mul >= 1 or unit == "ns":
            return rf"{t * mul:.3g}\,\text{{{unit}}}"
    return tex_num(t, "s")


def _date(m) -> str:
    meta = (m.meta or {}).get("throughput")
    return (meta.date or "no date") if meta else "—"


USER_PREFIX = "yours:"                       # the keys of uploaded measurements (never a preset key)


TEXT_FIELDS = ("name", "publisher", "chip", "engine", "parallelism")


def _clean(text: str) -> str:
    """A file's text for labels, legends and hovers: printable, no '<' or '>' (Plotly reads some HTML), ≤ 120."""
    return "".join(ch for ch in str(text) if ch.isprintable() and ch not in "<>")[:120]


def _md(text: str, key: str) -> str:
    """Markdown for a measurement's own text: an uploaded file's is shown as code (never a link or emphasis)."""
    return dials.md_code(text) if key.startswith(USER_PREFIX) else text


def parse_upload(data: bytes, filename: str) -> tuple[dict, str, list[str]]:
    """An uploaded measurement file → ({key: Measurement}, message, problems): the model's parser
    (CSV or YAML/JSON, size-capped, sources optional), keys prefixed so they never shadow a preset."""
    try:
        got = cal.load_user_measurements(data, filename)
    except presets.PresetError as e:
        return {}, f"{dials.md_code(filename)} was not loaded — {len(e.problems)} problem(s):", e.problems
    mine = {USER_PREFIX + _clean(k): m.with_(**{f: _clean(getattr(m, f)) for f in TEXT_FIELDS})
            for k, m in got.items()}
    if len(mine) < len(got):
        return {}, f"{dials.md_code(filename)} was not loaded — 1 problem(s):", [
            "two keys are the same once '<', '>' and control characters are removed"]
    bare = sum(1 for m in mine.values() if presets.unsourced_fields(m))
    return mine, (f"{dials.md_code(filename)}: {len(mine)} measurement(s) loaded and selected below"
                  + (f"; {bare} of them give numbers without a source or date (your own, unsourced figures)"
                     if bare else "") + "."), []


def _on_upload() -> None:
    """Callback (runs before the script): parse the upload; on success select its points."""
    up = ss.get("_rc_upload")
    if up is None:
        ss.pop("_rc_user", None)
        ss.pop("_rc_upmsg", None)
        return
    mine, msg, problems = parse_upload(up.getvalue(), up.name)
    ss["_rc_upmsg"] = ("error" if problems else "ok", msg, problems)
    if problems:
        ss.pop("_rc_user", None)
        return
    ss["_rc_user"] = mine
    pubs_mine = {m.publisher for m in mine.values()}
    ss["rc_model"], ss["rc_chip"] = ALL, ALL
    ss["rc_pub"] = next(iter(pubs_mine)) if len(pubs_mine) == 1 else ALL
    ss["rc_m"] = next(iter(mine))


def _speed(x: float) -> str:
    return "not published" if not np.isfinite(x) else f"{x:.3g} tok/s"


view = current_view()
ss = st.session_state
page_header(heading("reality"), view)
st.caption("This page draws each measurement's own setup, not the sidebar's; the sidebar receives the fitted "
           "efficiency when you apply it below.")

st.file_uploader("Your own measurements (CSV, or YAML/JSON in the presets schema)", type=["csv", "yaml", "yml", "json"],
                 key="_rc_upload", on_change=_on_upload,
                 help="The fields of presets/measurements.yaml (presets/README.md): a CSV has a header row of those "
                      "names (model and hardware are preset keys; key, source, date optional) and one measured point "
                      "per row. Parsed as data, size-capped; every problem is named with its row and field.")
if ss.get("_rc_upmsg"):
    level, text, problems = ss["_rc_upmsg"]
    if level == "ok":
        st.success(text, icon="✅")
    else:
        st.error(text, icon="🚫")
        for p_ in problems[:20]:
            st.text(f"• {p_}")          # plain text: a file's strings are never rendered as markdown
        if len(problems) > 20:
            st.text(f"• … and {len(problems) - 20} more")

user = ss.get("_rc_user") or {}
items = {**presets.measurement_presets(), **user}
c = _checked() if not user else cal.check(items)
keys = list(c.keys)
models = sorted({m.model for m in items.values()})
chips = sorted({m.hardware for m in items.values()})
pubs = sorted({m.publisher for m in items.values()})

# ---------------------------------------------------------------- page dials (URL-backed)
page_dial(choice_dial("rc_model", [ALL, *models], ALL, PAGE))
page_dial(choice_dial("rc_chip", [ALL, *chips], ALL, PAGE))
page_dial(choice_dial("rc_pub", [ALL, *pubs], ALL, PAGE))
page_dial(choice_dial("rc_m", keys, DEFAULT if DEFAULT in keys else keys[0], PAGE))
page_dial(choice_dial("rc_cv", list(cal.CV_KINDS), "model", PAGE))

hw_names = {k: presets.get("hardware", k).name for k in chips}
md_names = {k: presets.get("model", k).name for k in models}
f1, f2, f3 = st.columns(3)
f1.selectbox("Model", [ALL, *models], key="rc_model", persist_state="session",
             format_func=lambda k: "all models" if k == ALL else md_names[k],
             help="Keep the measurements of one model (for the list, the fit and the distribution's colours).")
f2.selectbox("Chip (preset used for the bound)", [ALL, *chips], key="rc_chip", persist_state="session",
             format_func=lambda k: "all chips" if k == ALL else hw_names[k],
             help="H800 results use the H100 preset: same compute and HBM, slower NVLink (not charged here).")
f3.selectbox("Publisher", [ALL, *pubs], key="rc_pub", persist_state="session",
             format_func=lambda k: "all publishers" if k == ALL else k)

selected = cal.select(items, model=None if ss["rc_model"] == ALL else ss["rc_model"],
                      hardware=None if ss["rc_chip"] == ALL else ss["rc_chip"],
                      publisher=None if ss["rc_pub"] == ALL else ss["rc_pub"])

if not selected:
    st.info("No measurement matches these filters: widen one of them (the lists show only what was measured).",
            icon="ℹ️")
else:
    sel_keys = list(selected)
    if ss.get("rc_m") not in selected:
        ss["rc_m"] = sel_keys[0]                 # before the widget: the choice must be one of its options
    st.selectbox(f"Measurement ({len(sel_keys)} match)", sel_keys, key="rc_m", persist_state="session",
                 format_func=lambda k: items[k].name + (" (yours)" if k.startswith(USER_PREFIX) else ""),
                 help="Each is one published figure with its full setup, source and date (expand below).")
    key = ss["rc_m"]
    m = items[key]
    i = keys.index(key)
    t = cal.Terms(**{f: float(c.terms[f][i]) for f in cal.Terms.__dataclass_fields__})
    s = cal.system_for(m)
    measured, ideal, eff = float(c.measured[i]), float(c.ideal[i]), float(c.efficiency[i])
    speed, b_ideal, bound = float(c.speed[i]), float(c.batch[i]), str(c.bound[i])
    mask = np.isin(np.array(keys), np.array(sel_keys))
    fit = _fitted(tuple(sel_keys)) if not user else cal.fit_check(c, mask)
    # The efficiency model's prediction of this point by a fit that never saw it: a built-in point held out
    # five-fold (its fifth left out), a point of yours by the fit to every built-in one.
    held = _held_out()
    lo, hi = held[estimate.CV_KIND]["band"]
    if key.startswith(USER_PREFIX):
        predicted = float(cal.predict_measurements({key: m}, estimate.fit().efficiency).predicted[0])
        pred_how = "by the efficiency model fitted to every built-in measurement (none of yours)"
    else:
        predicted = float(held[estimate.CV_KIND]["predicted"][list(held[estimate.CV_KIND]["keys"]).index(key)])
        pred_how = "by the efficiency model fitted to the other four fifths of the built-in measurements (k5)"

    # ------------------------------------------------------------ headline numbers
    metrics.grid([
        Metric("Measured [out tok/s/GPU]", number(measured),
               help=f"As published: {m.throughput:,.6g} tok/s, {m.throughput_metric}"
                    + (f" (× O/(L+O) = {m.output_share:.3g} for output)" if m.throughput_metric.startswith("total")
                       else "") + "."),
        Metric("Ideal bound [out tok/s/GPU]", number(ideal),
               help=("At the measured speed " + _speed(speed) + " per user." if np.isfinite(speed) else
                     "No speed published: the top of the frontier (the largest batch that fits in HBM).")),
        Metric("Measured ÷ ideal", f"{100 * eff:.3g} %" if np.isfinite(eff) else "above the bound",
               help="How close real serving came to the roofline of its own setup (1 = the bound)."),
        Metric("What caps the ideal batch", bound,
               help="compute: B·c fills the step; memory: weights + KV fill it; capacity: the KV cache fills HBM."),
        Metric("Predicted [out tok/s/GPU]", number(predicted), delta=f"{predicted / measured:.2f}× measured",
               delta_color="off", delta_arrow="off",
               help=f"Predicted {pred_how}, at the point's own load. Held out, 8 in 10 built-in points are predicted "
                    f"between {lo:.2f}× and {hi:.2f}× their measured throughput."),
    ], columns=5)

    # ------------------------------------------------------------ the bound, with today's numbers
    C, a, k = t.chips, t.a, m.tokens_computed_per_step
    T = m.decode_context
    st.markdown(f"**{_md(m.name, key)}** — {s.hardware.name}" + (f" (published: {_md(m.chip, key)})" if m.chip else "")
                + f" × {s.model.name}, weights {m.weights}, KV {m.kv}, compute {m.compute}; C = {C:g} chips per "
                f"replica, T = {tokens(T)} mean context, {a:g} of {k:g} tokens accepted per step; scope "
                f"**{m.scope}** ({'decode GPUs only' if m.scope == 'decode' else 'prefill included'}).")
    pre = (r" + \tfrac{a}{O}\,\tfrac{2 N_a L_{new}}{C F}" if m.scope == "system" else "")
    latex(rf"t(B) = \max\big(B\,c,\ m_0 + B\,m\big),\qquad c = k\,\tfrac{{t_{{mm}} + t_{{attn}}}}{{B}}{pre}"
          rf" = {tex_s(t.c)}", key="reality.step")
    latex(rf"m_0 = \tfrac{{W}}{{C\,bw}} = {tex_s(t.m0)},\quad m = \tfrac{{t_{{kv}}}}{{B}}"
          + (r" + \tfrac{a}{O}\,t_{kv,\,prompt}" if m.scope == "system" else "")
          + rf" = {tex_s(t.m)},\quad B_{{fit}} = \tfrac{{C\,M - W}}{{kv(T)}} = {tex_int(t.b_fit)}",
          key="reality.memory")
    if np.isfinite(speed):
        tau = a / speed
        latex(rf"\tau = \tfrac{{a}}{{u}} = \tfrac{{{a:g}}}{{{speed:.4g}}} = {tex_s(tau)},\quad "
              rf"B^* = \min\Big(\tfrac{{\tau}}{{c}},\ \tfrac{{\tau - m_0}}{{m}},\ B_{{fit}}\Big) = "
              rf"{tex_int(b_ideal)}\ \ ({bound})", key="reality.batch")
        latex(rf"\text{{ideal}} = \tfrac{{B^* u}}{{C}} = \tfrac{{{tex_int(b_ideal)}\times{speed:.4g}}}{{{C:g}}}"
              rf" = {tex_int(ideal)}\ \text{{tok/s/GPU}},\qquad \text{{efficiency}} = "
              rf"\tfrac{{{tex_int(measured)}}}{{{tex_int(ideal)}}} = {100 * eff:.3g}\,\%", key="reality.efficiency")
    else:
        latex(rf"\text{{no speed published: }} B = B_{{fit}} = {tex_int(b_ideal)},\quad "
              rf"\text{{ideal}} = \tfrac{{B\,a}}{{C\,t(B)}} = {tex_int(ideal)}\ \text{{tok/s/GPU}}",
              key="reality.batch")
        latex(rf"\text{{efficiency}} = \tfrac{{\text{{measured}}}}{{\text{{ideal}}}} = "
              rf"\tfrac{{{tex_int(measured)}}}{{{tex_int(ideal)}}} = {100 * eff:.3g}\,\%", key="reality.efficiency")

    # ------------------------------------------------------------ charts
    u_top, u_max = cal.speed_range(t)
    u_top_real = cal.speed_range(t, fit.mfu, fit.bwu)[0]          # the fitted curve's knee sits further left
    known = [float(x) for x in c.speed[[keys.index(kk) for kk in keys if cal.same_setup(items[kk], m)]]
             if np.isfinite(x)]
    u_lo = min([u_top, u_top_real, *known]) / 3.0
    u = np.logspace(np.log10(u_lo), np.log10(u_max), GRID)
    ideal_curve = cal.at_speed(t, u)["tokens_per_s_per_chip"]
    # The efficiency model at each speed: the largest batch whose predicted step gives u (at most what fits), its
    # throughput B·u/C; a speed one sequence cannot reach has no point.
    parts = cal.parts(m)
    b_pred = cal.batch_at_speed(parts, u, estimate.fit().efficiency)
    pred_curve = np.where(b_pred >= 1.0, b_pred * u / float(parts.chips), np.nan)
    pred_lo, pred_hi = estimate.rate_band(pred_curve)
    real_curve = cal.at_speed(t, u, fit.mfu, fit.bwu)["tokens_per_s_per_chip"]
    b_big = t.b_fit * np.logspace(0.0, 3.0, 80) if np.isfinite(t.b_fit) else None
    unl = cal.frontier(t, b_big) if b_big is not None else None
    if unl is not None:                              # only the part on the chart's speed range
        keep = unl["tokens_per_s_per_user"] >= u_lo
        unl = {kk: v[keep] for kk, v in unl.items()}
    same = [kk for kk in keys if cal.same_setup(items[kk], m)]
    pts = [fig_reality.Point(items[kk].name, float(c.speed[keys.index(kk)]), float(c.measured[keys.index(kk)]),
                             float(c.ideal[keys.index(kk)]), kk == key) for kk in same]
    col1, col2 = st.columns([1.15, 1])
    with col1:
        fig = fig_reality.frontier(u, ideal_curve, points=pts, tps_real=real_curve,
                                   u_unlimited=None if unl is None else unl["tokens_per_s_per_user"],
                                   tps_unlimited=None if unl is None else unl["tokens_per_s_per_chip"],
                                   real_label=f"at the fitted MFU {fit.mfu:.2f}, BWU {fit.bwu:.2f}",
                                   title="This setup's bound and its measurements",
                                   predicted=Prediction(pred_curve, pred_lo, pred_hi))
        export.chart(fig, key="reality_frontier")
        st.caption("The most output tokens/s per GPU the roofline allows at each speed per user u: B*(u)·u/C with the "
                   "largest batch B* whose step t(B) ≤ a/u and whose KV fits in HBM (left of the knee the HBM cap "
                   "binds; grey: what unlimited HBM would allow). Dashed red: the same setup at the efficiency fitted "
                   "to the selected measurements. Dashed purple: the efficiency model fitted to every built-in "
                   f"measurement, shaded where 8 in 10 held-out points fall (measured between predicted ÷ {hi:.2f} and "
                   f"predicted ÷ {lo:.2f}). {len(pts)} measurement(s) share this exact setup.")
    with col2:
        groups = [items[kk].publisher for kk in keys]
        names = [items[kk].name for kk in keys]
        fig = fig_reality.efficiency_strip(groups, names, c.efficiency, mask, i)
        export.chart(fig, key="reality_strip")
        med = float(np.median(c.efficiency[mask]))
        st.caption(f"Every measurement's measured ÷ ideal bound at its own speed (or the frontier's top when no speed "
                   f"was published). Coloured: the {int(mask.sum())} selected; grey: the rest. Median of the "
                   f"selected: {100 * med:.3g} %. None exceeds 100 %: a point above it would mean the data or the "
                   f"model is wrong.")

    # ------------------------------------------------------------ the efficiency model, held out
    st.subheader("Predicted: the efficiency model and its error on points it never saw")
    kinds = [*cal.CV_KINDS[::-1], "in-sample"]                 # k5, model, chip, publisher, then in-sample
    e = estimate.fit().efficiency
    st.markdown(f"The sidebar's **Estimate → predicted** draws this model beside the ideal roofline: HBM bandwidth at "
                f"{100 * e.bandwidth:.3g} %, dense compute at {100 * e.compute:.3g} % (attention's FLOPs at the "
                f"chip's bf16 peak, whatever the weights' format), {cal.expert_phrase(e)} "
                f"and {e.prompt_layer_s * 1e3:.3g} ms per layer in a step with prompt "
                f"work, fitted to the {estimate.fit().n} built-in measurements (docs/prediction.md). Below: each "
                "point predicted by a fit that never saw its group.")
    h1, h2 = st.columns([1, 1.15])
    with h1:
        export.chart(fig_reality.held_out_error(kinds, [100 * held[k]["median"] for k in kinds],
                                                [100 * held[k]["p90"] for k in kinds]), key="reality_cv_error")
        k5 = held[estimate.CV_KIND]
        st.caption(f"|predicted ÷ measured − 1| of every built-in point, each predicted by a fit without its group: "
                   f"a random fifth (seed 0, the pages' band: median {100 * k5['median']:.3g} %, 90th percentile "
                   f"{100 * k5['p90']:.3g} %), one model, one chip or one publisher left out at a time; in-sample "
                   "for comparison. Reproduce: python -m model calibrate --cv k5 (or model, chip, publisher).")
    with h2:
        by = ss["rc_cv"]
        st.radio("Held out", list(cal.CV_KINDS), key="rc_cv", persist_state="session", horizontal=True,
                 format_func=lambda k: fig_reality.CV_LABELS[k],
                 help="Which groups the cross-validation leaves out one at a time: a row per group.")
        cv = held[by]
        glabels = ({k: short_name(md_names.get(k) or presets.get("model", k).name) for k in set(cv["groups"])}
                   if by == "model" else
                   {k: short_name(hw_names.get(k) or presets.get("hardware", k).name) for k in set(cv["groups"])}
                   if by == "chip" else {})
        cv_keys = list(cv["keys"])
        export.chart(fig_reality.held_out_strip(
            cv["groups"], [items[kk].name for kk in cv_keys], cv["ratio"], (lo, hi), labels=glabels,
            current=cv_keys.index(key) if key in cv_keys else None,
            title=f"Held-out predicted ÷ measured, {fig_reality.CV_LABELS[by]} out"),
            key="reality_cv_strip")
        worst = max(set(cv["groups"]), key=lambda g: abs(np.log(np.median(cv["ratio"][cv["groups"] == g]))))
        w_med = float(np.median(cv["ratio"][cv["groups"] == worst]))
        st.caption(f"Each dot a built-in measurement, predicted with {fig_reality.CV_LABELS[by]} left out at a time "
                   f"(median error {100 * cv['median']:.3g} %); a bar marks each group's median. The group furthest "
                   f"off: {glabels.get(worst, worst)}, predicted at {w_med:.2f}× its measurements (median). Shaded: "
                   f"the pages' band, where 8 in 10 points fall held out five-fold ({lo:.2f}–{hi:.2f}).")

    if user:
        # ------------------------------------------------------------ the user's points: predicted, not refitted
        ukeys = list(user)
        up = cal.predict_measurements(user, estimate.fit().efficiency)
        in_fit = [kk for kk in ukeys if kk in sel_keys]
        fitted_of = dict(zip(sel_keys, fit.predicted))
        fitted_u = np.array([float(fitted_of[kk]) if kk in fitted_of else np.nan for kk in ukeys])
        ratio_u = up.predicted / up.measured
        inside = int(np.sum((ratio_u >= lo) & (ratio_u <= hi)))
        st.subheader("Your points, predicted (the built-in fit, no refit)")
        metrics.grid([
            Metric("Your points", f"{len(ukeys)}"),
            Metric("Median |predicted ÷ measured − 1|", f"{100 * float(np.median(np.abs(ratio_u - 1))):.3g} %",
                   help="The efficiency model fitted to the built-in measurements only: your points are not fitted."),
            Metric("Inside the held-out band", f"{inside} of {len(ukeys)}",
                   help=f"Predicted ÷ measured between {lo:.2f} and {hi:.2f}, where 8 in 10 built-in points fall held "
                        "out five-fold."),
            Metric("Refitted (MFU, BWU)", f"{fit.mfu:.2f}, {fit.bwu:.2f}",
                   help="The roofline's two efficiencies fitted to the selection (the section below): a refit, "
                        "which your points do move."),
        ], columns=4)
        export.chart(fig_reality.predicted_vs_measured(
            up.measured, up.predicted, [items[kk].name for kk in ukeys], (lo, hi),
            fitted=fitted_u if in_fit else None, fitted_label=f"refitted: MFU {fit.mfu:.2f}, BWU {fit.bwu:.2f}"),
            key="reality_yours")
        st.caption("Purple: each of your points predicted by the efficiency model fitted to the built-in measurements "
                   "(python -m model calibrate --measurements FILE --predict gives the same numbers); red squares: "
                   "the roofline at the MFU and bandwidth fitted to the selection, your points included. Shaded: "
                   f"predicted between {lo:.2f}× and {hi:.2f}× measured, where 8 in 10 built-in points fall held out.")
        tables.dataframe({"measurement": [items[kk].name for kk in ukeys],
                          "measured tok/s/GPU": [round(float(x), 1) for x in up.measured],
                          "predicted tok/s/GPU": [round(float(x), 1) for x in up.predicted],
                          "predicted ÷ measured": [round(float(x), 3) for x in ratio_u],
                          "batch per replica": [round(float(x), 2) for x in up.batch],
                          "load": [str(x) for x in up.load],
                          "refitted tok/s/GPU": [None if not np.isfinite(x) else round(float(x), 1) for x in fitted_u]},
                         key="reality_yours_table", width="stretch")

    # ------------------------------------------------------------ the fit, and applying it everywhere
    st.subheader("Fitted efficiency → every page")
    metrics.grid([
        Metric("Compute MFU", f"{fit.mfu:.2f}" + ("" if fit.mfu_determined else " (not pinned)"),
               help="Achieved ÷ peak FLOP/s that best predicts the selected points."),
        Metric("HBM bandwidth util.", f"{fit.bwu:.2f}" + ("" if fit.bwu_determined else " (not pinned)"),
               help="Achieved ÷ peak HBM bytes/s that best predicts the selected points."),
        Metric("Typical miss (RMS)", f"× {10 ** fit.rms_log10:.3g}",
               help="Root-mean-square of log10(measured ÷ predicted), as a factor."),
        Metric("Points in the fit", f"{len(sel_keys)}"),
    ], columns=4)
    latex(rf"\min_{{MFU,\,BWU}}\ \sum_{{i=1}}^{{{len(sel_keys)}}}\Big(\log_{{10}}\text{{measured}}_i - "
          rf"\log_{{10}}\text{{bound}}_i(MFU, BWU)\Big)^2\ \Rightarrow\ MFU = {fit.mfu:.3g},\ BWU = {fit.bwu:.3g}",
          key="reality.fit")
    if not fit.mfu_determined:
        st.info("No selected point is compute-bound at the fit, so MFU is not pinned down: it is shown at the highest "
                "value that predicts the points as well.", icon="ℹ️")
    if not fit.bwu_determined:
        st.info("No selected point is memory-bound at the fit, so bandwidth utilisation is not pinned down: it is "
                "shown at the highest value that predicts the points as well.", icon="ℹ️")
    b1, b2, b3 = st.columns([1.4, 1, 1.6])
    b1.button(f"Use MFU {round(fit.mfu, 2):.2f} and bandwidth {round(fit.bwu, 2):.2f} on every page", key="rc_apply",
              on_click=_apply, args=(max(fit.mfu, 0.01), max(fit.bwu, 0.01)), type="primary",
              help="Sets the sidebar's 'Efficiency' dials, so every page draws realistic curves.")
    b2.button("Back to the ideal (1, 1)", key="rc_reset", on_click=_apply, args=(1.0, 1.0))
    b3.caption(f"Sidebar now: MFU {float(ss.get('mfu', 1.0)):.2f}, bandwidth {float(ss.get('bwu', 1.0)):.2f}. "
               "The fit includes each setup's attention FLOPs; the sidebar's lecture roofline leaves them out, so "
               "at long context its curves stay a little optimistic.")

    idx = np.flatnonzero(mask)
    rows = {"measurement": [items[keys[j]].name for j in idx],
            "output tok/s/GPU": [round(float(c.measured[j])) for j in idx],
            "tok/s/user": [None if not np.isfinite(c.speed[j]) else round(float(c.speed[j]), 2) for j in idx],
            "ideal tok/s/GPU": [round(float(c.ideal[j])) for j in idx],
            "measured ÷ ideal %": [round(100 * float(c.efficiency[j]), 1) for j in idx],
            "at the fit tok/s/GPU": [round(float(p)) for p in fit.predicted],
            "miss ×": [round(float(10 ** r), 2) for r in fit.residual_log10],
            "source": [f"{items[keys[j]].publisher}, {_date(items[keys[j]])}" for j in idx]}
    with st.expander(f"The {len(idx)} selected measurements: measured, ideal, fitted"):
        tables.dataframe(rows, width="stretch")

    # ------------------------------------------------------------ the chosen measurement's setup and sources
    unc = presets.uncertain_fields(m)
    with st.expander(("⚠ " if unc else "") + "Setup and sources of this measurement"
                     + (f" ({len(unc)} uncertain figure(s))" if unc else "")):
        st.markdown(f"**Engine** {_md(m.engine, key) if m.engine else '—'} · **parallelism** "
                    f"{_md(m.parallelism, key) if m.parallelism else '—'} · **GPUs** {m.gpus}"
                    + (f" ({m.prefill_gpus} prefill)" if m.prefill_gpus else "")
                    + f" · **L/O** {m.input_tokens:,.0f}/{m.output_tokens:,.0f}"
                    + (f" · **concurrency** {m.concurrency:,.0f}" if m.concurrency else "")
                    + (f" · **prefix-cache hits** {100 * m.cache_hit_rate:.3g} %" if m.cache_hit_rate else ""))
        note = presets.entry_notes("measurement").get(key, "")
        if note:
            st.markdown(note)
        for f, meta in (m.meta or {}).items():
            v = getattr(m, f)
            st.markdown(f"- {'⚠ ' if meta.uncertain else ''}`{f}` = {v:,.6g} — "
                        + (f"{dials.md_code(meta.source)} ({dials.md_code(meta.date)})" if key.startswith(USER_PREFIX)
                           and meta.source and meta.date else f"{meta.source} ({meta.date})" if meta.source
                           and meta.date else "no source or date given (your own, unsourced figure)")
                        + (f". {meta.note}" if meta.note else ""))
