"""Figure builders for the Fast Mode page (pure: arrays in, go.Figure out; no Streamlit, no physics)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ui.figures.batch import (
    BOUND_COLORS,
    GREY,
    Prediction,
    batch_range,
    label_side,
    prediction_traces,
    shade_bounds,
    split_fit,
    vline,
)
from ui.figures.plot import (
    COUNT_DECADES,
    FONT_SIZE,
    NARROW_META,
    PANEL_DOMAINS,
    PANELS_META,
    Spec,
    axis,
    base_layout,
    narrow_stack,
    panel_title_annotation,
)

# (label, batch, latency [s], cost [$/Mtok], colour)
Point = tuple[str, float, float, float, str]

STANDARD_COLOR = "#1F5FAD"
FAST_COLOR = "#D62728"
REFERENCE_COLOR = "#7F7F7F"
FLOOR_COLOR = "#6A3D9A"
LATENCY_TITLE = "time per token [ms]"
COST_TITLE = "cost [$ per million output tokens]"
BATCH_TITLE = "batch B (sequences per step)"
LABEL_OFFSET_PX = 55          # an operating point's label: this far right/left and up of the point


def _refs(col: int) -> tuple[str, str]:
    """The axes of panel `col`: ("x", "y") or ("x2", "y2")."""
    return ("x", "y") if col == 1 else (f"x{col}", f"y{col}")


def _axis(title: str, **props) -> dict:
    """A log axis with explicit fonts, so that Streamlit's chart theme does not shrink them (projector-readable)."""
    return axis(title, tickformat=",~g", tickfont={"size": FONT_SIZE - 2}, **props)


def _floor(spec: Spec, col: int, y: float, text: str, color: str) -> None:
    """A dash-dotted floor across panel `col`; nothing runs below it, so its label goes underneath the line."""
    spec.hline(y, color=color, dash="dashdot", width=2.5, axis=col)
    spec.label(0.99, float(np.log10(y)), text, axis=col, x_is_data=False, y_is_data=True, xanchor="right",
               yanchor="top", font={"size": FONT_SIZE - 2, "color": color})


def _finite_pos(x) -> bool:
    return x is not None and np.isfinite(x) and x > 0


def _log_axis(values) -> dict:
    """Range and ticks for a log axis over `values`: ticks at powers of ten when the data span more
    than two decades (else 1-2-5), and room below the data for the floor's label."""
    v = np.concatenate([np.ravel(np.asarray(a, float)) for a in values])
    v = np.log10(v[np.isfinite(v) & (v > 0)])
    if not v.size:
        return {}
    lo, hi = float(v.min()), float(v.max())
    span = max(hi - lo, 0.5)
    return {"range": [lo - 0.1 * span - 0.05, hi + 0.05 * span], "dtick": 1 if span > 2 else "D2"}


def batch_text(b: float) -> str:
    """A batch for a label: 6.31, 94.7, 2,048."""
    return f"{b:,.0f}" if b >= 100 else f"{b:.3g}"


def fast_mode_curves(batch: np.ndarray, latency_s: np.ndarray, usd: np.ndarray, fits: np.ndarray,
                     bound: np.ndarray, points: Sequence[Point], floor_s: float, cost_floor: float | None,
                     b_star: float | None, *, curve_name: str = "roofline",
                     reference: tuple[str, np.ndarray, np.ndarray] | None = None,
                     reference_points: Sequence[Point] = (),
                     titles: tuple[str, str] = ("Latency per token", "Cost per token"),
                     predicted: tuple[Prediction, Prediction] | None = None) -> go.Figure:
    """Latency [ms] and cost [$/Mtok] against batch, side by side (log–log), shaded by bound and greyed
    where weights + KV do not fit, with named operating points (label, batch, latency_s, usd, colour),
    the latency floor W/(C·bw) (left), the slow-mode floor (right: large-batch compute + KV cost)
    and B*.  `reference` = (name, latency_s, usd): a dotted comparison curve on the same batch grid
    (e.g. no KV), with `reference_points` drawn hollow on it.  `predicted` = (latency [s], cost [$/Mtok]): a
    predicted curve with its band on each panel (ui.figures.batch.prediction_traces).
    """
    batch = np.asarray(batch, float)
    spec = Spec()
    spec.annotations += [panel_title_annotation(t, col) for col, t in enumerate(titles, 1)]
    for col in (1, 2):
        _draw_panel(spec, col, batch, latency_s, usd, fits, bound, points, floor_s, cost_floor,
                    b_star, curve_name, reference, reference_points, None if predicted is None else predicted[col - 1])
    lat_all, usd_all = _ranges(latency_s, usd, points, floor_s, cost_floor, reference, reference_points)
    if predicted is not None:
        lat_all += [np.asarray(a, float) * 1e3 for a in (predicted[0].y, predicted[0].lo, predicted[0].hi)]
        usd_all += [np.asarray(a, float) for a in (predicted[1].y, predicted[1].lo, predicted[1].hi)]
    # Batch ticks 1, 10, 100, 1k …: level and short on a narrow panel too.
    # Both panels span the grid (batch_range), not the cost panel's labels to the right of its points.
    batch_axis = {**COUNT_DECADES, "tickfont": {"size": FONT_SIZE - 2}, "range": batch_range(batch)}
    spec.layout = base_layout(
        "", height=560, margin={"l": 80, "r": 30, "t": 60, "b": 120}, hovermode="closest",
        xaxis=axis(BATCH_TITLE, domain=list(PANEL_DOMAINS[0]), anchor="y", **batch_axis),
        xaxis2=axis(BATCH_TITLE, domain=list(PANEL_DOMAINS[1]), anchor="y2", **batch_axis),
        yaxis=_axis(LATENCY_TITLE, domain=[0.0, 1.0], anchor="x", **_log_axis(lat_all)),
        yaxis2=_axis(COST_TITLE, domain=[0.0, 1.0], anchor="x2", tickprefix="$", **_log_axis(usd_all)),
    )
    del spec.layout["title"]                              # the panels carry the titles
    # A phone: the panels one under the other, full width, and the legend under both (the page's caption
    # says "left, or above").  Only the chart element reads this; st.plotly_chart keeps them side by side.
    # The panels' titles in the meta: the CSV export names each row's panel (ui.elements.export.figure_frame).
    spec.layout["meta"] = {PANELS_META: list(titles), NARROW_META: narrow_stack()}
    return spec.figure()


def _ranges(latency_s, usd, points, floor_s, cost_floor, reference, reference_points) -> tuple[list, list]:
    """Everything each panel's y axis must hold: the curves, the floor and the operating points."""
    lat_all = [np.asarray(latency_s, float) * 1e3, [floor_s * 1e3], [p[2] * 1e3 for p in (*points, *reference_points)]]
    usd_all = [np.asarray(usd, float), [cost_floor if cost_floor is not None else np.nan],
               [p[3] for p in (*points, *reference_points)]]
    if reference is not None:
        lat_all.append(np.asarray(reference[1], float) * 1e3)
        usd_all.append(np.asarray(reference[2], float))
    return lat_all, usd_all


def _draw_panel(spec: Spec, col: int, batch, latency_s, usd, fits, bound, points,
                floor_s, cost_floor, b_star, curve_name, reference, reference_points,
                predicted: Prediction | None = None) -> None:
    """Panel `col` (1: latency [ms], 2: cost [$/Mtok]); the legend lists the latency panel's traces only."""
    fits = np.asarray(fits, bool)
    first = col == 1
    y, unit, scale = (latency_s, "ms", 1e3) if first else (usd, "$/Mtok", 1.0)
    xa, ya = _refs(col)
    on = {"axis": col, "xaxis": xa, "yaxis": ya, "showlegend": first}
    # The bound regions' names and B*'s label on the latency panel only: the cost panel beside (or under) it
    # is shaded alike.  A third of the figure's annotations, each of which plotly draws twice per redraw
    # (bench/profile_move.py, sidebar Context, 4 rounds of 12 moves: last chart p50 136 → 126 ms).
    rows = shade_bounds(spec, batch, bound, axis=col, labelled=first)
    if reference is not None:
        ref_y = np.asarray(reference[1] if first else reference[2], float) * scale
        spec.scatter(x=batch, y=ref_y, mode="lines", name=reference[0], legendgroup="ref",
                     line={"width": 2.5, "color": REFERENCE_COLOR, "dash": "dot"},
                     hovertemplate=f"B = %{{x:.4g}}: %{{y:.4g}} {unit}<extra>{reference[0]}</extra>", **on)
    if predicted is not None:
        p = Prediction(*(np.asarray(a, float) * scale for a in (predicted.y, predicted.lo, predicted.hi)),
                       predicted.name, predicted.band_name)
        prediction_traces(spec, batch, p, unit=unit, legendgroup="predicted", **on)
    y_fit, y_no = split_fit(np.asarray(y, float) * scale, fits)
    spec.scatter(x=batch, y=y_fit, mode="lines", line={"width": 4, "color": "#222"}, name=curve_name,
                 legendgroup="curve", legendrank=1,
                 hovertemplate=f"B = %{{x:.4g}}: %{{y:.4g}} {unit}<extra></extra>", **on)
    if np.any(~fits):
        spec.scatter(x=batch, y=y_no, mode="lines", line={"width": 4, "color": GREY, "dash": "dash"},
                     name="does not fit in HBM", legendgroup="nofit",
                     hovertemplate=f"B = %{{x:.4g}}: %{{y:.4g}} {unit} (does not fit)<extra></extra>", **on)
    for label, b, lat, cost, color in reference_points:
        yv = (lat * 1e3) if first else cost
        if not (_finite_pos(b) and _finite_pos(yv)):
            continue
        spec.scatter(x=[b], y=[yv], mode="markers", name=label, legendgroup=label,
                     marker={"size": 14, "color": "white", "symbol": "circle",
                             "line": {"width": 3, "color": color}},
                     hovertemplate=f"{label}: B = %{{x:.4g}}, %{{y:.4g}} {unit}<extra></extra>", **on)
    lo, hi = batch_range(batch)
    near_end = hi - 0.25 * (hi - lo)             # log10 B past which a cost-panel label goes straight above its point
    for label, b, lat, cost, color in points:
        yv = (lat * 1e3) if first else cost
        if not (_finite_pos(b) and _finite_pos(yv)):
            continue
        spec.scatter(x=[b], y=[yv], mode="markers", name=f"{label}: B = {batch_text(b)}",
                     marker={"size": 18, "color": color, "line": {"width": 2, "color": "white"}},
                     legendgroup=label, cliponaxis=False,
                     hovertemplate=f"{label}: B = %{{x:.4g}}, %{{y:.4g}} {unit}<extra></extra>", **on)
        # Label in the empty corner: above-left of the rising latency curve, above-right of the
        # falling cost curve, on a leader line from the point (annotations on log axes take log10 of
        # the data: `label` does x, we do y).  The line is a shape, not the annotation's arrow (Spec.leader).
        # On the cost panel a point in the last quarter of the axis's decades is labelled straight above: to its
        # right the label would run past the axis's end (off the chart at 390 px), to its left onto the fast point.
        dx = -LABEL_OFFSET_PX if first else 0 if np.log10(b) > near_end else LABEL_OFFSET_PX
        spec.leader(float(b), float(yv), dx, LABEL_OFFSET_PX, color=color, axis=col)
        spec.label(float(b), float(np.log10(yv)), f"<b>{label}</b><br>B = {batch_text(b)}", axis=col,
                   y_is_data=True, xshift=dx, yshift=LABEL_OFFSET_PX, font={"size": FONT_SIZE - 1, "color": color},
                   bgcolor="rgba(255,255,255,0.8)")
    if _finite_pos(b_star):
        # B*'s label at the top, in a row clear of the regions' names: at the bottom it lay on the latency floor's
        # label whenever B* stood over it (the floor's label runs along the bottom right, under the floor).
        vline(spec, b_star, f"B* = {b_star:,.0f}" if first else None, axis=col, rows=rows,
              side=label_side(b_star, float(batch.min()), float(batch.max())))
    if first and _finite_pos(floor_s):
        _floor(spec, col, floor_s * 1e3, f"latency floor W/(C·bw) = {floor_s * 1e3:.3g} ms", BOUND_COLORS["weights"])
    if not first and _finite_pos(cost_floor):
        _floor(spec, col, cost_floor, f"slow-mode floor ${cost_floor:.3g}/Mtok", FLOOR_COLOR)
