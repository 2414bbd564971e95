"""Training tokens — over-training pays (lecture §2.11, 01:18:59; flashcards "RL / Chinchilla").

Chinchilla-optimal training spends 20 tokens per parameter; a model that will serve D_inf tokens should
instead balance its three costs, C_pre = 6·Na·D_pre, C_RL = c_RL·Na·D_RL·ineff, C_inf = 2·Na·D_inf·ineff
("a rising plus a falling cost is least near where they are equal"): 50M tok/s × 60 days ⇒ D_pre ≈ 2.6e14
tokens, ≈ 130× Chinchilla's 2e12 for 100B active.  Beyond the lecture: with the Chinchilla loss fit
(Hoffmann et al. 2022) a target quality fixes the trade between model size and tokens, so the cost-optimal
size can be computed and set beside the heuristic's answer.
"""

import numpy as np
import streamlit as st

from model.training import (
    FITS,
    chinchilla_loss,
    chinchilla_optimal_size,
    chip_seconds,
    cost_optimal_size,
    heuristic_size,
    loss_term_ratio,
    overtrain,
    params_for_loss_at_ratio,
    phase_costs,
    size_for_quality,
    smallest_params_for_loss,
)
from ui.elements import export, metrics
from ui.elements.live_tex import latex
from ui.elements.metrics import Metric
from ui.equations import params
from ui.equations import training as eq
from ui.figures import batch as figures
from ui.figures import training as fig_training
from ui.figures.training import CHIN_COLOR, HEURISTIC_COLOR, PHASE_COLORS
from ui.format import number
from ui.state.dials import choice_dial, number_dial, page_dial
from ui.state.view import current_view, page_header
from views import heading

PAGE = ("training",)
C_PRE, C_INF, CHIN_PER_PARAM = 6.0, 2.0, 20.0     # the lecture's 6ND and 2ND; Hoffmann et al.'s 20 tokens/param
NA_LINES = [10e9, 30e9, 100e9, 300e9, 1e12]        # the over-training chart's grey lines (plus the current Na)
RATE_GRID = np.geomspace(1e6, 1e11, 121)           # global inference tok/s on that chart
TARGETS = ["heuristic", "chinchilla", "custom"]
TARGET_LABELS = {"heuristic": "the heuristic's model (Na on D_pre)", "chinchilla": "Na at 20 tokens/param",
                 "custom": "a loss I type"}
FIT_LABELS = {"hoffmann": "Hoffmann et al. 2022", "besiroglu": "Besiroglu et al. 2024 refit"}
FIT_SOURCES = {"hoffmann": "Hoffmann et al. 2022, arXiv 2203.15556, approach 3, eq. 10 (rounded constants)",
               "besiroglu": "Besiroglu, Erdil, Barnett & You 2024, arXiv 2404.10102 (Epoch AI refit of approach 3)"}


view = current_view()
s = view.system
ss = st.session_state

page_header(heading("training"), view)
st.markdown("A model that will serve many tokens should be **smaller and trained on far more tokens** than "
            "Chinchilla's 20 per parameter. The lecture's rule (§2.11, 01:18:59): a sum of a rising and a falling "
            "cost is least roughly where they are equal, so spend the same compute on pretraining, RL and "
            "inference.")

# ---------------------------------------------------------------- page dials (URL-backed)
page_dial(number_dial("tt_na", 0.1, 10_000, 100.0, PAGE))
page_dial(number_dial("tt_rate", 0.001, 1_000_000, 500.0, PAGE))
page_dial(number_dial("tt_days", 1, 3650, 60.0, PAGE))
page_dial(number_dial("tt_models", 1, 1000, 10.0, PAGE))
page_dial(number_dial("tt_crl", 2, 6, 3.0, PAGE))
page_dial(number_dial("tt_irl", 1, 20, 3.0, PAGE))
page_dial(number_dial("tt_iinf", 1, 20, 3.0, PAGE))

c = st.columns(4)
c[0].number_input("Active params N_active [billions]", min_value=0.1, max_value=10_000.0, step=10.0, format="%.4g",
                  key="tt_na", persist_state="session",
                  help="Parameters each token multiplies through. The lecture: ~100B ('maybe a bit larger').")
c[1].number_input("Global inference rate [M tokens/s]", min_value=0.001, max_value=1_000_000.0, step=50.0,
                  format="%.4g", key="tt_rate", persist_state="session",
                  help="Tokens/s a lab serves across all its models. The lecture: 500M tok/s (typed in by Dwarkesh).")
c[2].number_input("Deployment [days]", min_value=1.0, max_value=3650.0, step=10.0, format="%.4g", key="tt_days",
                  persist_state="session", help="How long this model serves before it is replaced. The lecture: "
                  "2 months (60 days). Derate it for the chance the model is not frontier and is thrown away.")
c[3].number_input("Models sharing the traffic", min_value=1.0, max_value=1000.0, step=1.0, format="%.4g",
                  key="tt_models", persist_state="session",
                  help="The global rate divided among a family of models. The lecture: 'divide by 5–10×' → "
                       "~50M tok/s per model.")
c = st.columns(3)
c[0].slider("RL FLOPs per param per token c_RL", 2.0, 6.0, step=0.1, key="tt_crl", persist_state="session",
            help="2 if RL were forward passes only (sampling), 6 if every token were also trained on. Lecture: 2…6.")
c[1].slider("RL inefficiency [×]", 1.0, 20.0, step=0.5, key="tt_irl", persist_state="session",
            help="RL compute per useful FLOP relative to pretraining (rollouts decode at low MFU). Flashcard: 3.")
c[2].slider("Inference inefficiency [×]", 1.0, 20.0, step=0.5, key="tt_iinf", persist_state="session",
            help="Decode MFU relative to training's: 3 = decode at 1/3 of training MFU (the flashcard's value).")

na = float(ss["tt_na"]) * 1e9
rate = float(ss["tt_rate"]) * 1e6
days, models = float(ss["tt_days"]), float(ss["tt_models"])
c_rl, i_rl, i_inf = float(ss["tt_crl"]), float(ss["tt_irl"]), float(ss["tt_iinf"])
coef = {"c_rl": c_rl, "ineff_rl": i_rl, "ineff_inf": i_inf}

# ---------------------------------------------------------------- the lecture's equal-cost answer
o = overtrain(na, rate, days, models=models, **coef)
d_inf, d_pre, d_rl = float(o.inference_tokens), float(o.pretrain_tokens), float(o.rl_tokens)
d_chin, factor = float(o.chinchilla_tokens), float(o.overtrain_factor)
pc = phase_costs(na, d_pre, d_rl, d_inf, **coef)
c_each = float(pc.pretrain_flops)
chip_days = float(chip_seconds(c_each, s.flops)) / 86_400
usd_pre = chip_days * 24 * s.hardware.price_usd_per_hour

metrics.grid([    # two rows of four
    Metric("Inference D_inf [tokens]", number(d_inf),
           help=f"Per model: {number(rate / models)} tok/s × {days:g} days × 86,400 s/day."),
    Metric("Pretraining D_pre [tokens]", number(d_pre), help="6·D_pre = 2·ineff_inf·D_inf."),
    Metric("RL D_RL [tokens]", number(d_rl), help="c_RL·ineff_RL·D_RL = 2·ineff_inf·D_inf."),
    Metric("Chinchilla 20·N_active [tokens]", number(d_chin),
           help="Hoffmann et al. 2022: compute-optimal pretraining is ~20 tokens per parameter."),
    Metric("Over-training factor", f"{factor:.3g}×", help="D_pre ÷ (20·N_active)."),
    Metric("Tokens per parameter", f"{number(d_pre / na)}", help="D_pre ÷ N_active (Chinchilla: 20)."),
    Metric("Compute per phase [FLOP]", number(c_each),
           help="Each of C_pre, C_RL, C_inf (equal by construction; inefficiencies included)."),
    Metric("All three phases [FLOP]", number(float(pc.total_flops)), help="C_pre + C_RL + C_inf = 3·C_pre."),
], columns=4)

per_model = rate / models
latex(eq.equal_costs(na, rate, days, models, **coef), key="training.equal_costs")
st.caption(f"Pretraining alone, 6·N_active·D_pre = {number(c_each)} FLOP, is {number(chip_days)} chip-days of "
           f"{s.hardware.name} at {s.flops / 1e12:.4g} TFLOP/s effective (sidebar precision and MFU) — about "
           f"${number(usd_pre)} at ${s.hardware.price_usd_per_hour:.2f}/chip-hour; RL and inference cost the same "
           f"again each. Per model the rate is {number(per_model)} tok/s.")

# ---------------------------------------------------------------- charts: the three phases; factor against rate
na_lines = sorted({*NA_LINES, na})
rates = np.unique(np.append(RATE_GRID, rate))
ot = overtrain(np.array(na_lines)[:, None], rates[None, :], days, models=models, **coef)
c1, c2 = st.columns(2)
with c1:
    fig = fig_training.tokens_bars(
        ["Chinchilla<br>20·N", "pretraining<br>D_pre", "RL<br>D_RL", "inference<br>D_inf"],
        np.array([d_chin, d_pre, d_rl, d_inf]),
        np.array([np.nan, c_each, float(pc.rl_flops), float(pc.inference_flops)]),
        [PHASE_COLORS[k] for k in ("chinchilla", "pretrain", "rl", "inference")],
        title=f"Tokens per phase at equal costs (N_active = {number(na)})")
    export.chart(fig, key="training_tokens")
    st.caption("Tokens each phase processes when pretraining, RL and inference cost the same FLOPs (log scale); "
               "the grey bar is Chinchilla's compute-optimal 20 tokens per parameter, for scale.")
with c2:
    fig = fig_training.overtrain_vs_rate(rates, ot.overtrain_factor, na_lines, na_now=na, now=(rate, factor),
                                         title=f"Over-training against traffic ({days:g} d, {models:g} models)")
    export.chart(fig, key="training_factor")
    st.caption("Over-training factor = equal-cost pretraining tokens ÷ Chinchilla's 20·N_active, against the "
               "lab's global inference tokens/s: it grows in proportion to the traffic and falls with model size.")

# ---------------------------------------------------------------- beyond the heuristic: the Chinchilla loss fit
st.subheader("Beyond the heuristic: the size that really minimises cost, from Chinchilla's loss fit")
page_dial(choice_dial("tt_tgt", TARGETS, "heuristic", PAGE))
page_dial(number_dial("tt_loss", 1.5, 5.0, 2.0, PAGE))
page_dial(choice_dial("tt_fit", list(FITS), "hoffmann", PAGE))
c = st.columns([2, 1, 1.4])
c[0].radio("Target quality (pretraining loss)", TARGETS, key="tt_tgt", horizontal=True, persist_state="session",
           format_func=TARGET_LABELS.get,
           help="The loss every model size on the chart must reach: by default the loss of the heuristic's own "
                "answer (N_active trained on D_pre), so the question is whether another size is cheaper.")
c[1].number_input("Target loss [nats/token]", min_value=1.5, max_value=5.0, step=0.01, format="%.3f", key="tt_loss",
                  persist_state="session", disabled=ss["tt_tgt"] != "custom",
                  help="Used when the target is 'a loss I type'. It must exceed the fit's irreducible loss E.")
c[2].radio("Loss fit", list(FITS), key="tt_fit", horizontal=True, persist_state="session", format_func=FIT_LABELS.get,
           help="L(N, D) = E + A/N^α + B/D^β. Hoffmann et al.'s printed (rounded) constants put the compute-optimal "
                "ratio well above 20 tokens/param at this scale; Besiroglu et al.'s refit keeps it near 20.")

fit_key = ss["tt_fit"]
fit = FITS[fit_key]
if ss["tt_tgt"] == "heuristic":
    target = float(chinchilla_loss(na, d_pre, fit))
elif ss["tt_tgt"] == "chinchilla":
    target = float(chinchilla_loss(na, CHIN_PER_PARAM * na, fit))
else:
    target = float(ss["tt_loss"])
E, A, B, al, be = fit["E"], fit["A"], fit["B"], fit["alpha"], fit["beta"]


def beyond_the_heuristic() -> None:
    """The Chinchilla-fit section (drawn only when the target loss is reachable under the fit)."""
    k_inf = dict(ineff_inf=i_inf, fit=fit)
    opt = cost_optimal_size(target, d_inf, **k_inf)
    heur = heuristic_size(target, d_inf, **k_inf)
    chin = chinchilla_optimal_size(target, fit=fit)
    n_rule = float(params_for_loss_at_ratio(target, CHIN_PER_PARAM, fit))
    n_opt, d_opt = float(opt.params), float(opt.pretrain_tokens)
    n_heur, n_chin = float(heur.params), float(chin.params)
    share = float(opt.pretrain_flops / opt.total_flops)
    heur_ok = bool(np.isfinite(n_heur))

    # cost against N: one call over a grid that also holds the marked sizes
    marks = np.array([n_opt, n_heur, n_chin, n_rule])
    fin = marks[np.isfinite(marks)]
    n_min = float(smallest_params_for_loss(target, fit))   # D → ∞ at this size: nothing smaller reaches the target
    grid = np.geomspace(max(n_min * 1.02, fin.min() / 10), fin.max() * 10, 300)
    sq = size_for_quality(target, d_inf, np.concatenate([grid, np.where(np.isfinite(marks), marks, grid[0])]), **k_inf)
    g = len(grid)
    tot_heur, tot_chin, tot_rule = (float(sq.total_flops[g + i]) for i in (1, 2, 3))
    tot_opt = float(opt.total_flops)
    excess = tot_heur / tot_opt - 1.0 if heur_ok else float("nan")
    under = heur_ok and n_heur > n_chin          # equal costs land on the under-trained side of Chinchilla

    metrics.grid([    # two rows of four
        Metric("Target loss [nats/token]", f"{target:.4g}",
               help=f"{TARGET_LABELS[ss['tt_tgt']]}, under {FIT_LABELS[fit_key]}."),
        Metric("Cost-optimal size N* [params]", number(n_opt),
               help="Least pretraining + inference compute for the target loss and this model's D_inf."),
        Metric("…trained on D* [tokens]", number(d_opt), help=f"{number(d_opt / n_opt)} tokens per parameter."),
        Metric("Pretraining share at N*", f"{100 * share:.3g} %",
               help="C_pre ÷ (C_pre + C_inf) at the optimum. The heuristic's answer is 50 %."),
        Metric("Heuristic's model [params]", number(n_heur) if heur_ok else "—",
               help="The size that reaches the target on the heuristic's D_pre tokens"
                    + ("" if heur_ok else ": none does — D_pre tokens cannot reach this loss at any size.")),
        Metric("Heuristic's extra cost", f"+{100 * excess:.3g} %" if heur_ok else "—",
               help="Its pretraining + inference compute over the optimum's."),
        Metric("Chinchilla-optimal (fit) [params]", number(n_chin),
               help=f"Least pretraining compute alone for the target: {number(float(chin.pretrain_tokens) / n_chin)} "
                    "tokens per parameter under this fit."),
        Metric("Chinchilla-optimal's extra cost", f"+{100 * (tot_chin / tot_opt - 1):.3g} %",
               help="Pretraining + inference compute of the Chinchilla-optimal model over the optimum's: serving a "
                    "big model is what it forgets."),
    ], columns=4)

    r_opt = float(loss_term_ratio(n_opt, d_opt, fit))
    latex(rf"\begin{{aligned}}L(N, D) &= E + \frac{{A}}{{N^{{\alpha}}}} + \frac{{B}}{{D^{{\beta}}}} = {E:g} + "
          rf"\frac{{{A:g}}}{{N^{{{al:g}}}}} + \frac{{{B:g}}}{{D^{{{be:g}}}}} = {target:.4g}\ \text{{nats/token}}\\ "
          rf"\min_N\ &6\,N\,D(N) + 2\,\text{{ineff}}_{{inf}}\,N\,D_{{inf}}\ \Rightarrow\ "
          rf"N^* = {params(n_opt)},\ D^* = {eq.tex_tok(d_opt)}\\ "
          rf"\frac{{C_{{inf}}}}{{C_{{pre}}}}\Big|_{{N^*}} &= \frac{{\alpha}}{{\beta}}\cdot"
          rf"\frac{{A/N^{{*\alpha}}}}{{B/D^{{*\beta}}}} - 1 = \frac{{{al:g}}}{{{be:g}}}\times{r_opt:.3g} - 1 = "
          rf"{(al / be) * r_opt - 1:.3g}\quad(\text{{equal costs}} \Leftrightarrow 1)\end{{aligned}}",
          key="training.loss")
    st.caption(f"Fit: {FIT_SOURCES[fit_key]}. The fit is for dense models trained on up to ~16B parameters and "
               "~500B tokens; here N is read as active parameters and the fit is extrapolated far beyond its data.")

    # split against inference volume: one call for the optimum, one for the heuristic, over D_inf
    d_grid = np.unique(np.append(np.geomspace(min(1e11, d_inf / 100), max(1e17, d_inf * 100), 161), d_inf))
    opt_v = cost_optimal_size(target, d_grid, **k_inf)
    heur_v = heuristic_size(target, d_grid, **k_inf)
    under_v = heur_v.params > n_chin
    exc_v = np.where(np.isfinite(heur_v.total_flops) & ~under_v, heur_v.total_flops / opt_v.total_flops - 1.0, np.nan)
    under_below = float(d_grid[under_v | ~np.isfinite(heur_v.params)].max()) if np.any(
        under_v | ~np.isfinite(heur_v.params)) else None

    c3, c4 = st.columns(2)
    with c3:
        points = [("cost-optimal N*", n_opt, tot_opt, figures.NOW_MARKER["color"], "star"),
                  ("heuristic: equal costs", n_heur, tot_heur, HEURISTIC_COLOR, "diamond-open"),
                  ("Chinchilla-optimal (fit)", n_chin, tot_chin, CHIN_COLOR, "square"),
                  ("20 tokens per param", n_rule, tot_rule, PHASE_COLORS["rl"], "triangle-up")]
        fig = fig_training.cost_vs_size(grid, sq.pretrain_flops[:g], sq.inference_flops[:g], sq.total_flops[:g],
                                        points=points, title=f"Cost of loss {target:.4g} against model size")
        export.chart(fig, key="training_cost")
        st.caption("Compute to reach the target loss and then serve D_inf tokens, for each model size N (log–log; "
                   "FLOPs at training efficiency, inference × its inefficiency). Smaller models need more tokens; "
                   "bigger ones cost more per token served.")
    with c4:
        fig = fig_training.split_vs_volume(d_grid, opt_v.pretrain_flops / opt_v.total_flops, exc_v,
                                           under_below=under_below, now=(d_inf, share, excess if not under else np.nan),
                                           title=f"Where the equal split is right (loss {target:.4g})")
        export.chart(fig, key="training_split")
        st.caption("At the cost-optimal size, pretraining's share of pretraining + inference compute (left) and how "
                   "much more the equal-cost heuristic spends (right), against the tokens the model will serve.")

    if under:
        st.info("At this inference volume the equal-cost tokens D_pre are fewer than the Chinchilla-optimal count for "
                "this loss: the heuristic's model is bigger than Chinchilla's and under-trained — equal costs is not a "
                "good guide when inference is small.", icon="ℹ️")
    st.markdown(
        f"**How near is 'equal'?** At the optimum the marginal FLOP saved on inference equals the one added to "
        f"pretraining, which makes the two costs equal only when one falls as 1/x while the other rises as x "
        f"(x + 1/x). "
        f"Under this fit the optimum spends **{100 * share:.3g} %** on pretraining"
        + (f", and the heuristic's {number(n_heur)}-parameter model costs **{100 * excess:+.3g} %** more. "
           if heur_ok and not under else ". ")
        + "Whatever the fit, the equal-cost point on the over-trained side never costs more than **twice** the "
        "optimum: there the total is twice the larger cost, and the larger cost is at its least where the two cross. "
        "The loss fit knows nothing of RL, so the RL third stays the lecture's assumption.")


if not target > E:
    st.warning(f"A target loss of {target:.3f} nats/token is not reachable under {FIT_LABELS[fit_key]}'s fit: "
               f"its irreducible loss E is {E:g}, which no model size or token count gets below. Raise the "
               f"target loss.", icon="⚠️")
else:
    beyond_the_heuristic()
