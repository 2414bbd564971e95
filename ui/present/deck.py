"""Stage kit: the walkthrough as one self-contained HTML file that works with no network.

    python -m ui.present.deck --out talk.html [--hardware gb200 --model deepseek-v3 --batch 4096 --context 2048 …]

Every step of `ui.present.walkthrough` becomes a slide: its chart, equation(s), sentence and note, with
← / → (or a click on the step buttons) to move.  Each step's dial (`Step.dial`: batch or context)
scrubs inside the chart with no server: the step is rebuilt from the model at every position of
that sidebar dial (the app's `BATCH_OPTIONS` / `CONTEXT_OPTIONS`, plus the current value), and the
figure carries the positions as Plotly frames under a `layout.sliders` slider; moving it draws that
frame at once (Plotly.react with the frame's data and whole layout: curves, marks and axes change,
nothing left over).  The sentence and the equations follow the slider (they carry that position's
numbers).  Steps without a sidebar dial (over-training, prices, tiers) keep their sweep: their
slider animates the marker along the curve with zero transition.

plotly.js is inlined from plotly's Python package; the equations are typeset by KaTeX from
Debian's `libjs-katex` (the renderer `st.latex` uses, so the TeX reads the same), with its fonts
inlined as data: URLs.  Nothing in the file asks the network for anything.

The flags are the model CLI's (`python -m model step`): the same presets, files and overrides,
parsed and turned into a System by model/cli/'s own parser and `build_system`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import dataclasses
import html
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import plotly

from model import auto_chips, cli
from ui.figures.batch import PLOTLY_CONFIG
from ui.format import number, tokens
from ui.present import walkthrough as wk
from ui.state import dials
from ui.state.dials import BATCH_OPTIONS, CONTEXT_OPTIONS
from ui.state.view import View, system_caption

SIZE_CAP_BYTES = 15_000_000          # the "keep the file under ~15 MB"
DIAL_OPTIONS: dict[str, list[float]] = {"batch": [float(b) for b in BATCH_OPTIONS],
                                        "context": [float(t) for t in CONTEXT_OPTIONS]}
DIAL_SYMBOL = {"batch": "B", "context": "T"}
KATEX_DIRS = ("/usr/share/javascript/katex",)   # Debian's libjs-katex (+ fonts-katex)
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
# A dial step's slider draws a frame with Plotly.react (the page's script, on plotly_sliderchange): the
# curves, the marks and the axes all change, and Plotly.animate merges layout arrays (annotations, shapes)
# index by index and keeps the old axis ranges at zero duration, which left stale marks on the chart.
SCRUB = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0},
         "react": True}
MARKER_SCRUB = {"mode": "immediate", "frame": {"duration": 0, "redraw": False}, "transition": {"duration": 0}}
# Layout keys a frame does not carry: the slider and buttons themselves, the (large) template, the size.
FRAME_LAYOUT_SKIP = ("sliders", "updatemenus", "template", "height", "width", "margin", "autosize")


# ---------------------------------------------------------------- assets

def plotly_js() -> str:
    return PLOTLY_JS.read_text(encoding="utf-8")


def katex_dir() -> Path | None:
    """Where katex.min.js, katex.min.css and fonts/ are (ROOFLINE_KATEX_DIR first), or None."""
    for d in (os.environ.get("ROOFLINE_KATEX_DIR", ""), *KATEX_DIRS):
        if d and (Path(d) / "katex.min.js").is_file() and (Path(d) / "katex.min.css").is_file():
            return Path(d)
    return None


_FONT_SRC = re.compile(r"url\(fonts/([A-Za-z0-9_-]+)\.woff2\) format\(['\"]woff2['\"]\)"
                       r"(?:,\s*url\(fonts/[^)]+\) format\(['\"][a-z0-9]+['\"]\))*")


def katex_assets() -> tuple[str, str] | None:
    """(katex.min.js, katex.min.css with every font inlined as a woff2 data: URL), or None."""
    d = katex_dir()
    if d is None:
        return None

    def inline(m: re.Match) -> str:
        data = base64.b64encode((d / "fonts" / f"{m.group(1)}.woff2").read_bytes()).decode("ascii")
        return f"url(data:font/woff2;base64,{data}) format('woff2')"

    css = _FONT_SRC.sub(inline, (d / "katex.min.css").read_text(encoding="utf-8"))
    if "url(fonts/" in css:
        raise RuntimeError(f"{d / 'katex.min.css'}: a font reference this deck cannot inline")
    return (d / "katex.min.js").read_text(encoding="utf-8"), css


# ---------------------------------------------------------------- positions of a dial

def view_at(view: View, dial: str, value: float) -> View:
    """The view with one sidebar dial moved; an 'auto' chip count is re-sized as the sidebar does."""
    batch = float(value) if dial == "batch" else view.batch
    context = float(value) if dial == "context" else view.context
    s = view.system
    if view.chips_auto:
        s = s.with_(chips=auto_chips(s.hardware, s.model, s.precision, batch, context))
    return dataclasses.replace(view, system=s, batch=batch, context=context)


def positions(view: View, dial: str, every: int = 1) -> list[float]:
    """The dial's options (every `every`-th, ends kept) with the current value added."""
    opts = DIAL_OPTIONS[dial]
    keep = {opts[0], opts[-1], *opts[::max(1, every)]}
    now = view.batch if dial == "batch" else view.context
    return sorted({*keep, float(now)})


def dial_label(dial: str, value: float) -> str:
    return tokens(value) if dial == "context" else number(value)


# ---------------------------------------------------------------- figures → JSON for the file

def _pack(x: Any) -> Any:
    """JSON-ready: float arrays as plotly.js typed-array specs (float32, base64), numpy scalars as Python."""
    if isinstance(x, dict):
        return {k: _pack(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        if len(x) >= 16 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x):
            return _pack(np.asarray(x, float))
        return [_pack(v) for v in x]
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f" and x.ndim == 1 and x.size >= 16:
            return {"dtype": "f4", "bdata": base64.b64encode(x.astype("<f4").tobytes()).decode("ascii")}
        return [_pack(v) for v in x.tolist()]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def unpack(v: Any) -> np.ndarray:
    """A packed array (typed-array spec or list) back to numpy — for tests and checks."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]).newbyteorder("<")).astype(float)
    return np.asarray([np.nan if e is None else e for e in v], dtype=float)


def _fig_dict(fig) -> dict[str, Any]:
    d = fig.to_plotly_json()
    d.setdefault("frames", [])
    return d


@dataclasses.dataclass(frozen=True)
class Text:
    """What a slide says at one position: the sentence and note (HTML) and the equations (TeX)."""

    sentence: str
    note: str
    latex: tuple[str, ...]


@dataclasses.dataclass
class Slide:
    key: str
    title: str
    video_s: int
    chapter: str
    dial: str                                    # "batch", "context", the sweep's quantity, or ""
    labels: list[str]                            # one per frame (the slider's ticks)
    active: int                                  # the frame shown first (the current dial value)
    frame_texts: list[int]                       # per frame: index into `texts`
    figure: dict[str, Any] | None                # data, layout (with sliders), frames; None when it cannot be drawn
    problem: str = ""
    texts: list[Text] = dataclasses.field(default_factory=list)   # what the slide says, each distinct once

    def text_at(self, frame: int) -> Text:
        return self.texts[self.frame_texts[frame]]


def _md(text: str) -> str:
    """The walkthrough's sentences are Markdown with '\\$' for dollars and the odd **bold**: to HTML."""
    out = html.escape(text, quote=False).replace("\\$", "$")
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)


def _text(shown: wk.Shown) -> Text:
    return Text(_md(shown.sentence), _md(shown.note), tuple(shown.latex))


def _slider(labels: list[str], active: int, prefix: str, scrub: dict[str, Any],
            names: list[str] | None = None) -> dict[str, Any]:
    names = names or [str(i) for i in range(len(labels))]
    return {"active": active, "x": 0.0, "len": 1.0, "y": 0, "yanchor": "top", "pad": {"t": 150, "b": 0},
            "currentvalue": {"prefix": prefix, "font": {"size": 22}, "xanchor": "left"},
            "font": {"size": 13}, "transition": {"duration": 0},
            "steps": [{"label": lab, "method": "skip" if scrub.get("react") else "animate",
                       "args": [[name], {k: v for k, v in scrub.items() if k != "react"}]}
                      for name, lab in zip(names, labels)]}


def _bottom_margin(layout: dict[str, Any]) -> None:
    """Room under the plot for the slider; the size is the slide's (the chart fills its box)."""
    layout.pop("height", None)
    layout.pop("width", None)
    layout["autosize"] = True
    m = dict(layout.get("margin") or {})
    m["b"] = max(float(m.get("b") or 0), 260)
    layout["margin"] = m


def dial_slide(step: wk.Step, view: View, every: int = 1) -> Slide:
    """A step rebuilt at each position of its sidebar dial: one frame per position."""
    dial = step.dial
    built: list[tuple[float, wk.Shown]] = []
    first_error = ""
    with wk.without_play():
        for v in positions(view, dial, every):
            try:
                built.append((v, step.build(view_at(view, dial, v))))
            except ValueError as exc:     # e.g. a model without a KV figure: that position is left out
                first_error = first_error or str(exc)
    now = view.batch if dial == "batch" else view.context
    if not any(v == now for v, _ in built):
        return Slide(step.key, step.title, step.video_s, step.chapter, dial, [], 0, [], None,
                     first_error or "this step cannot be drawn here")
    figs = [_fig_dict(shown.fig) for _, shown in built]
    n = max(len(f["data"]) for f in figs)
    kinds: list[str] = []
    for j in range(n):
        kinds.append(next(f["data"][j].get("type", "scatter") for f in figs if j < len(f["data"])))

    def padded(f: dict[str, Any]) -> list[dict[str, Any]]:
        data = [dict(t) for t in f["data"]]
        for j in range(len(data), n):
            data.append({"type": kinds[j], "x": [], "y": [], "showlegend": False, "hoverinfo": "skip"})
        for j, t in enumerate(data):        # a trace absent at one position is drawn empty there
            t.setdefault("visible", True)
            t.setdefault("type", kinds[j])
        return data

    active = next(i for i, (v, _) in enumerate(built) if v == now)
    labels = [dial_label(dial, v) for v, _ in built]
    # Each frame carries its whole layout (less the template, slider and size, which stay), every key any
    # position has — None where this one has none — so that drawing a frame leaves nothing of another.
    keys = sorted({k for f in figs for k in f["layout"] if k not in FRAME_LAYOUT_SKIP})
    frames = []
    for i, f in enumerate(figs):
        lay = {k: f["layout"].get(k, [] if k in ("shapes", "annotations", "images") else None) for k in keys}
        frames.append({"name": str(i), "data": padded(f), "traces": list(range(n)), "layout": lay})
    layout = dict(figs[active]["layout"])
    layout.pop("updatemenus", None)
    _bottom_margin(layout)
    sym = DIAL_SYMBOL[dial]
    layout["sliders"] = [_slider(labels, active, f"{dial} {sym} = ", SCRUB)]
    figure = {"data": padded(figs[active]), "layout": layout, "frames": frames}
    texts: list[Text] = []
    idx = []
    for _, shown in built:
        t = _text(shown)
        if t not in texts:
            texts.append(t)
        idx.append(texts.index(t))
    return Slide(step.key, step.title, step.video_s, step.chapter, dial, labels, active, idx, _pack(figure),
                 texts=texts)


def sweep_slide(step: wk.Step, view: View) -> Slide:
    """A step whose chart has the walkthrough's ▶ sweep: a slider over the same frames (the marker moves)."""
    try:
        shown = step.build(view)
    except ValueError as exc:
        return Slide(step.key, step.title, step.video_s, step.chapter, step.play, [], 0, [], None, str(exc))
    f = _fig_dict(shown.fig)
    texts = [_text(shown)]
    frames = f["frames"]
    if not frames:                           # nothing to sweep: a still chart
        return Slide(step.key, step.title, step.video_s, step.chapter, "", [], 0, [0], _pack(f), texts=texts)
    labels = []
    for fr in frames:
        text = (fr["data"][0].get("text") or [""])[0]
        labels.append(str(text).split(" = ", 1)[-1])
    layout = dict(f["layout"])
    _bottom_margin(layout)
    symbol = str(frames[0]["data"][0].get("text", [""])[0]).split(" = ", 1)[0]
    layout["sliders"] = [_slider(labels, 0, f"{step.play} {symbol} = ", MARKER_SCRUB,
                                 [str(fr["name"]) for fr in frames])]
    f["layout"] = layout
    return Slide(step.key, step.title, step.video_s, step.chapter, step.play, labels, 0,
                 [0] * len(frames), _pack(f), texts=texts)


def build_slide(step: wk.Step, view: View, every: int = 1) -> Slide:
    return dial_slide(step, view, every) if step.dial else sweep_slide(step, view)


# ---------------------------------------------------------------- the page

CSS = """
:root { --ink: #111; --muted: #555; --accent: #1f77b4; }
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; font-family: "Source Sans Pro", "Segoe UI", Helvetica, Arial, sans-serif;
  color: var(--ink); background: #fff; }
header { display: flex; align-items: center; gap: 0.6rem; padding: 0.5rem 1.2rem; border-bottom: 1px solid #ddd;
  flex-wrap: wrap; }
header .system { color: var(--muted); font-size: 1rem; flex: 1 1 30rem; }
nav { display: flex; gap: 0.25rem; flex-wrap: wrap; }
button { font: inherit; font-size: 1.1rem; padding: 0.3rem 0.8rem; border: 1px solid #bbb; border-radius: 0.4rem;
  background: #f6f6f6; cursor: pointer; }
button:disabled { opacity: 0.4; cursor: default; }
nav button.on { background: var(--accent); color: #fff; border-color: var(--accent); }
.slide { display: none; padding: 0.6rem 2rem 1.5rem; }
.slide.on { display: block; }
.slide h1 { font-size: 3rem; margin: 0.3rem 0 0.6rem; }
.sentence { font-size: 1.75rem; line-height: 1.4; margin: 0 0 0.6rem; max-width: 95rem; }
.chart { width: 100%; height: 80vh; min-height: 660px; }
.equations { font-size: 1.5rem; overflow-x: auto; }
.equations pre { font-size: 1.1rem; white-space: pre-wrap; }
.note { font-size: 1.15rem; color: var(--muted); max-width: 95rem; }
.foot { font-size: 1rem; color: var(--muted); margin-top: 0.6rem; }
.problem { font-size: 1.5rem; background: #fff4e5; border: 1px solid #f0b66c; padding: 1rem; border-radius: 0.5rem; }
"""

JS = r"""
const D = JSON.parse(document.getElementById('deck-data').textContent);
const slides = Array.from(document.querySelectorAll('.slide'));
const navButtons = Array.from(document.querySelectorAll('nav button'));
const drawn = new Set();
let cur = 0;
function renderTex(el, tex) {
  if (window.katex) { katex.render(tex, el, {displayMode: true, throwOnError: false}); }
  else { const pre = document.createElement('pre'); pre.textContent = tex; el.appendChild(pre); }
}
function setText(i, frame) {
  const s = D.slides[i];
  if (!s.texts.length) return;
  const t = D.texts[s.texts[Math.max(0, Math.min(frame, s.texts.length - 1))]];
  const el = slides[i];
  if (el.dataset.text === String(t.id)) return;
  el.dataset.text = String(t.id);
  el.querySelector('.sentence').innerHTML = t.sentence;
  el.querySelector('.note').innerHTML = t.note;
  const eq = el.querySelector('.equations');
  eq.textContent = '';
  for (const tex of t.latex) {
    const d = document.createElement('div'); d.className = 'eq'; eq.appendChild(d); renderTex(d, tex);
  }
}
function scrub(i, gd, k) {
  // a dial step: draw frame k whole (its data and layout) with the slider kept at k
  const f = D.slides[i].figure;
  const fr = f.frames[k];
  if (!fr || !fr.layout) return;            // a sweep step: its slider animates the marker itself
  // shallow: the frame's own layout objects carry what Plotly computes for them (ranges) to the next visit
  const layout = Object.assign({}, f.layout, fr.layout, {autosize: true});
  layout.sliders = [Object.assign({}, f.layout.sliders[0], {active: k})];
  Plotly.react(gd, fr.data, layout, D.config).then(() => { gd.dataset.frame = String(k); });
}
function draw(i) {
  const s = D.slides[i];
  if (drawn.has(i) || !s.figure) return;
  drawn.add(i);
  const gd = slides[i].querySelector('.chart');
  const f = s.figure;
  Plotly.newPlot(gd, f.data, Object.assign({}, f.layout, {autosize: true}), D.config).then(() => {
    if (f.frames && f.frames.length) { return Plotly.addFrames(gd, f.frames); }
  }).then(() => { gd.dataset.ready = '1'; });
  gd.on('plotly_sliderchange', e => { scrub(i, gd, e.slider.active); setText(i, e.slider.active); });
}
function show(i) {
  i = Math.max(0, Math.min(slides.length - 1, i));
  slides[cur].classList.remove('on');
  navButtons[cur].classList.remove('on');
  cur = i;
  slides[i].classList.add('on');
  navButtons[i].classList.add('on');
  document.getElementById('prev').disabled = i === 0;
  document.getElementById('next').disabled = i === slides.length - 1;
  document.getElementById('where').textContent = `${i + 1} / ${slides.length}`;
  if (!slides[i].dataset.text) setText(i, D.slides[i].active);
  draw(i);
  const gd = slides[i].querySelector('.chart');
  if (gd && gd.dataset.ready) Plotly.Plots.resize(gd);
  if (location.hash !== '#' + (i + 1)) history.replaceState(null, '', '#' + (i + 1));
}
document.getElementById('prev').addEventListener('click', () => show(cur - 1));
document.getElementById('next').addEventListener('click', () => show(cur + 1));
navButtons.forEach((b, i) => b.addEventListener('click', () => show(i)));
document.addEventListener('keydown', e => {
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.key === 'ArrowRight' || e.key === 'PageDown' || e.key === ' ') { show(cur + 1); e.preventDefault(); }
  else if (e.key === 'ArrowLeft' || e.key === 'PageUp') { show(cur - 1); e.preventDefault(); }
  else if (e.key === 'Home') { show(0); e.preventDefault(); }
  else if (e.key === 'End') { show(slides.length - 1); e.preventDefault(); }
});
const start = parseInt((location.hash || '#1').slice(1), 10);
show(isNaN(start) ? 0 : start - 1);
"""


def _script_json(obj: Any) -> str:
    """JSON safe inside <script>: no '</' can close the element early."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")).replace("</", "<\\/")


def _clock(s: int) -> str:
    return f"{s // 3600:d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def render_html(view: View, slides: list[Slide], katex: tuple[str, str] | None, plotly_src: str) -> str:
    texts: list[Text] = []
    offsets = []
    for s in slides:
        offsets.append(len(texts))
        texts += s.texts
    data = {"config": {**PLOTLY_CONFIG, "responsive": True, "showLink": False, "showSendToCloud": False,
                       "showEditInChartStudio": False},
            "slides": [{"key": s.key, "active": s.active, "texts": [o + k for k in s.frame_texts], "figure": s.figure}
                       for s, o in zip(slides, offsets)],
            "texts": [{"id": i, "sentence": t.sentence, "note": t.note, "latex": list(t.latex)}
                      for i, t in enumerate(texts)]}
    sections = []
    for k, s in enumerate(slides):
        body = (f'<div class="problem">This step cannot be drawn for this chip and model: '
                f'{html.escape(s.problem)}</div>' if s.figure is None else '<div class="chart"></div>')
        scrub = ""
        if s.figure is not None and s.labels:
            scrub = (f" · the slider under the chart scrubs {html.escape(s.dial)} "
                     f"({len(s.labels)} positions, {html.escape(s.labels[0])} … {html.escape(s.labels[-1])})")
        sections.append(
            f'<section class="slide" id="step-{k + 1}" data-key="{html.escape(s.key)}">'
            f'<h1>{k + 1}. {html.escape(s.title)}</h1><p class="sentence"></p>{body}'
            f'<div class="equations"></div><p class="note"></p>'
            f'<p class="foot">The lecture at {_clock(s.video_s)} — {html.escape(s.chapter)} '
            f'(Dwarkesh Podcast, Reiner Pope, 2026; youtu.be/xmkSf5IS-zw?t={s.video_s}){scrub}</p></section>')
    nav = "".join(f'<button type="button" title="{html.escape(s.title)}">{k + 1}</button>'
                  for k, s in enumerate(slides))
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    katex_css = f"<style>{katex[1]}</style>" if katex else ""
    katex_js = f"<script>{katex[0]}</script>" if katex else ""
    no_tex = ("" if katex else '<p class="foot">Equations shown as TeX: KaTeX (Debian\'s libjs-katex) was not '
              'installed where this deck was made.</p>')
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Roofline walkthrough — {html.escape(view.system.hardware.name)} × {html.escape(view.system.model.name)}</title>
<style>{CSS}</style>{katex_css}
<script>{plotly_src}</script>{katex_js}
</head><body>
<header><button type="button" id="prev">← Back</button><button type="button" id="next">Next →</button>
<span id="where"></span><nav>{nav}</nav>
<span class="system">{html.escape(system_caption(view))} · made {made} · ← / → to move</span></header>
<main>{"".join(sections)}</main>{no_tex}
<script type="application/json" id="deck-data">{_script_json(data)}</script>
<script>{JS}</script>
</body></html>
"""


def build_html(view: View, *, cap_bytes: int = SIZE_CAP_BYTES) -> str:
    """The deck for `view`.  When it would pass `cap_bytes`, the largest dial slide keeps every other
    position (then every third, …; its ends and the current value always) until the file fits; each
    slide's footer says how many positions its slider has."""
    plotly_src = plotly_js()
    katex = katex_assets()
    slides = [build_slide(step, view) for step in wk.STEPS]
    every = [1] * len(slides)
    while True:
        out = render_html(view, slides, katex, plotly_src)
        if len(out.encode("utf-8")) <= cap_bytes:
            return out
        thinner = [i for i, s in enumerate(slides) if s.figure is not None and s.dial in DIAL_OPTIONS
                   and every[i] < 8]
        if not thinner:
            return out
        i = max(thinner, key=lambda i: len(_script_json(slides[i].figure)))
        every[i] += 1
        slides[i] = build_slide(wk.STEPS[i], view, every[i])


# ---------------------------------------------------------------- command line

class _DeckParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:       # argparse's own errors: one line, exit 2
        raise cli.CLIError(message)


def make_parser() -> argparse.ArgumentParser:
    """`python -m model step`'s flags (model/cli/'s own parser: presets, files, overrides), with
    --batch and --context taking one value each, and --out."""
    top = cli.make_parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    step = sub.choices["step"]
    p = _DeckParser(prog="python -m ui.present.deck", parents=[step], conflict_handler="resolve",
                    description="Write the walkthrough as one HTML file that works with no network (plotly.js "
                                "and KaTeX inlined). The flags are those of `python -m model step`; without "
                                "--hardware/--model (or their fields) the app's default chip and model are used.")
    by_dest = {a.dest: a for a in step._actions}
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)   # step's; refused with a reason
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument("--batch", type=by_dest["batch"].type, default=None,
                   help="batch B (one value ≥ 1; default: the app's)")
    p.add_argument("--context", type=by_dest["context"].type, default=None,
                   help="context T in tokens (one value ≥ 0; default: the app's)")
    # Precisions left out take the app's defaults (not the model CLI's bf16), so a bare deck is the app's view.
    p.set_defaults(weight_dtype=None, kv_dtype=None, compute_dtype=None)
    return p


HW_FIELD_FLAGS = ("flops", "hbm_bw", "hbm_bytes", "price_per_hour")
MODEL_FIELD_FLAGS = ("total_params",)


def view_from_args(a: argparse.Namespace) -> View:
    defaults = {d.key: d.default for d in dials.sidebar_dials()}   # the app's defaults, not a copy of them
    if getattr(a, "json", False):
        raise cli.CLIError("--json: a deck is HTML; this flag belongs to `python -m model step`")
    for flag, value in (("--batch", a.batch), ("--context", a.context)):
        if value is not None and len(value) != 1:
            raise cli.CLIError(f"{flag}: give one value (the deck's slider sweeps the others)")
    batch = float(a.batch[0]) if a.batch else float(defaults["b"])
    context = float(a.context[0]) if a.context else float(defaults["ctx"])
    if not a.hardware and all(getattr(a, f) is None for f in HW_FIELD_FLAGS):
        a.hardware = defaults["chip"]
        if a.chips is None and defaults["c"] != "auto":    # the app's C belongs to the app's chip
            a.chips = float(defaults["c"])
    if not a.model and all(getattr(a, f) is None for f in MODEL_FIELD_FLAGS):
        a.model = defaults["model"]
    for dest, key in (("weight_dtype", "w"), ("kv_dtype", "kv"), ("compute_dtype", "cd")):
        if getattr(a, dest) is None:
            setattr(a, dest, defaults[key])
    s = cli.build_system(a, ["flops", "hbm_bandwidth_bytes_per_s", "hbm_bytes", "price_usd_per_hour",
                             "total_params"], batch=batch, context=context)
    return View(s, batch, context, a.chips is None, a.hardware or "custom", a.model or "custom")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        a = make_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
        view = view_from_args(a)
        text = build_html(view)
    except cli.USER_ERRORS as e:
        return cli.user_error(e)
    try:
        Path(a.out).write_text(text, encoding="utf-8")
    except OSError as e:
        print(f"error: --out {a.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    size = len(text.encode("utf-8"))
    print(f"{a.out}: {size / 1e6:.1f} MB, {len(wk.STEPS)} steps "
          f"({view.system.hardware.name} × {view.system.model.name}, B = {view.batch:g}, "
          f"T = {tokens(view.context)})")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
