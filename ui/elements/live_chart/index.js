// The in-place Plotly chart element (ui/elements/live_chart.py): a Streamlit v2 component module.
//
// Streamlit calls the default export on mount and again whenever the element's data changes, with
// the same `parentElement` while the element stays mounted.  The first call creates the graph div;
// every call hands the new figure to Plotly.react, which redraws only what changed (no newPlot, no
// unmount).  plotly.js is loaded once per page from the app's own server (plotly's package_data,
// served by Streamlit's component asset route), never from a CDN.
//
// The look copies st.plotly_chart's theme="streamlit" (Streamlit 1.67 frontend, CustomTheme.tsx):
// the theme's layout is merged into the figure's template.layout (so the figure's own settings win),
// the title is bold, Streamlit's template placeholder colours (#000001…#000040) are replaced, and the
// modebar has Streamlit's buttons (fullscreen first, no lasso/select, no logo).
//
// For the browser tests and bench/bench_ui.py: the graph div is `.js-plotly-plot` in the page's DOM
// (no shadow root); window.__liveChart counts figures started and drawn ({started, drawn, lastDrawn}),
// and each graph div carries __liveDraws (how many figures it has drawn) and __liveDeferred (whether it
// holds a figure until it is scrolled into view).

const PLOTLY_URL = new URL("../roofline.plotlyjs/plotly.min.js", import.meta.url).href;

function loadPlotly() {
  if (!window.__livePlotly) {
    window.__livePlotly = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = PLOTLY_URL;
      s.async = true;
      s.onload = () => {
        if (!window.Plotly) return reject(new Error("plotly.js loaded but defined no Plotly"));
        try {
          cacheArrayAttributes(window.Plotly);
        } catch (e) {                    // plotly as it ships is still correct, only slower
          console.warn("live chart: schema cache not installed", e);
        }
        resolve(window.Plotly);
      };
      s.onerror = () => {
        window.__livePlotly = null;      // let a later draw try again
        reject(new Error(`could not load ${PLOTLY_URL}`));
      };
      document.head.appendChild(s);
    });
  }
  return window.__livePlotly;
}

const stats = (window.__liveChart = window.__liveChart || { started: 0, drawn: 0, lastDrawn: 0, errors: 0 });

// ---------------------------------------------------------------- plotly's per-trace schema walk, cached

// Every Plotly.react runs plotly's supplyDefaults, which calls PlotSchema.findArrayAttributes once
// per trace: it crawls the whole attribute schema of the trace's type (hundreds of attributes,
// allocating a path per attribute) to find which attributes can hold arrays, then looks those up in
// the trace.  A Chromium CPU profile of the MoE page put ≈17 ms of each dial move there (27 traces,
// ≈0.6 ms each).  The schema part depends only on the trace type, so it is crawled once per type
// here, with plotly's own crawl and the same rules, and only the lookups run per trace: the result
// is the same list in the same order (tests/browser/test_chart.py compares the two on every
// trace of three pages).  Nothing is patched if plotly's PlotSchema lacks either function.
function isPlainObject(v) {
  return Object.prototype.toString.call(v) === "[object Object]" && Object.getPrototypeOf(v).hasOwnProperty("hasOwnProperty");
}

function isArrayOrTypedArray(v) {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

export function cacheArrayAttributes(Plotly) {
  const PS = Plotly && Plotly.PlotSchema;
  if (!PS || PS.__rooflineOriginal || typeof PS.findArrayAttributes !== "function" || typeof PS.crawl !== "function") return false;
  const original = PS.findArrayAttributes;
  const crawl = PS.crawl;
  // The base attributes every trace has: the first thing plotly's function crawls (seen once here).
  let base = null;
  PS.crawl = function (attrs, cb, depth) {
    if (!depth && base === null) base = attrs;
    return crawl.apply(this, arguments);
  };
  try {
    original.call(PS, {});
  } finally {
    PS.crawl = crawl;
  }
  if (!base) return false;
  const byModule = new Map();
  function candidates(module) {
    let list = byModule.get(module);
    if (list) return list;
    list = [];
    let path = [], linked = [];
    const visit = (valObject, key, parent, depth) => {       // plotly's callback, collecting the paths
      path = path.slice(0, depth).concat([key]);
      linked = linked.slice(0, depth).concat([valObject && valObject._isLinkedToArray]);
      if (valObject && (valObject.valType === "data_array" || valObject.arrayOk === true) &&
          !(path[depth - 1] === "colorbar" && (key === "ticktext" || key === "tickvals"))) list.push([path, linked]);
    };
    crawl.call(PS, base, visit);
    if (module && module.attributes) crawl.call(PS, module.attributes, visit);
    byModule.set(module, list);
    return list;
  }
  function lookUp(obj, i, prefix, path, linked, out) {
    const v = obj[path[i]], name = prefix + path[i];
    if (i === path.length - 1) {
      if (isArrayOrTypedArray(v)) out.push(name);
    } else if (linked[i]) {
      if (Array.isArray(v)) for (let d = 0; d < v.length; d++) if (isPlainObject(v[d])) lookUp(v[d], i + 1, `${name}[${d}].`, path, linked, out);
    } else if (isPlainObject(v)) {
      lookUp(v, i + 1, `${name}.`, path, linked, out);
    }
  }
  PS.findArrayAttributes = function (trace) {
    const out = [];
    for (const [path, linked] of candidates(trace._module)) lookUp(trace, 0, "", path, linked, out);
    return out;
  };
  PS.__rooflineOriginal = original;
  return true;
}

// ---------------------------------------------------------------- theme (Streamlit 1.67's)

const GRAY = { 10: "#fafafa", 30: "#e6eaf1", 70: "#808495", 85: "#31333F", 90: "#262730" };
const PX = { twoSm: 12, sm: 14, md: 16, spaceTwoXS: 4, spaceSm: 8, spaceXL: 20, spaceTwoXL: 24 };
const DEFAULTS = {
  categorical: ["#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a", "#6d3fc0", "#d5dae5"],
  sequential: ["#e4f5ff", "#c7ebff", "#a6dcff", "#83c9ff", "#60b4ff", "#3d9df3", "#0068c9", "#0054a3", "#003f7f", "#002b5b"],
  diverging: ["#7d353b", "#bd4043", "#ff4b4b", "#ff8c8c", "#ffc7c7", "#a6dcff", "#60b4ff", "#1c83e1", "#0054a3", "#004280"],
};

function cssVar(el, name) {
  return getComputedStyle(el).getPropertyValue(name).trim();
}

function isLight(color) {
  const m = /^#?([0-9a-f]{6})$/i.exec(color || "");
  let r = 255, g = 255, b = 255;
  if (m) {
    const n = parseInt(m[1], 16);
    r = n >> 16; g = (n >> 8) & 255; b = n & 255;
  } else {
    const c = /rgba?\(([^)]+)\)/.exec(color || "");
    if (c) [r, g, b] = c[1].split(",").map(Number);
  }
  return 0.299 * r + 0.587 * g + 0.114 * b > 127.5;
}

function themeOf(el) {
  const bg = cssVar(el, "--st-background-color") || "#ffffff";
  const light = isLight(bg);
  const list = (name, dflt) => {
    const v = cssVar(el, name);
    const a = v && v !== "unset" ? v.split(",").map(s => s.trim()).filter(Boolean) : [];
    return a.length >= 10 ? a : dflt;
  };
  return {
    light,
    bg,
    text: cssVar(el, "--st-text-color") || (light ? "#31333F" : "#fafafa"),
    heading: cssVar(el, "--st-heading-color") || (light ? "#31333F" : "#fafafa"),
    border: cssVar(el, "--st-border-color") || (light ? "rgba(49, 51, 63, 0.2)" : "rgba(250, 250, 250, 0.2)"),
    font: cssVar(el, "--st-font") || '"Source Sans", sans-serif',
    headingFont: cssVar(el, "--st-heading-font") || cssVar(el, "--st-font") || '"Source Sans", sans-serif',
    weight: Number(cssVar(el, "--st-base-font-weight")) || 400,
    muted: light ? GRAY[70] : GRAY[30],      // axis, tick and legend-title text
    strong: light ? GRAY[90] : GRAY[10],     // legend text
    grid: light ? GRAY[30] : GRAY[85],       // grid, zero and tick lines
    categorical: list("--st-chart-categorical-colors", DEFAULTS.categorical),
    sequential: list("--st-chart-sequential-colors", DEFAULTS.sequential),
    diverging: list("--st-chart-diverging-colors", DEFAULTS.diverging),
  };
}

function themeLayout(t) {
  return {
    font: { color: t.muted, family: t.font, size: PX.twoSm, weight: t.weight },
    title: { font: { family: t.headingFont, size: PX.md, color: t.heading }, pad: { l: PX.spaceTwoXS }, xanchor: "left", x: 0 },
    legend: { title: { font: { size: PX.twoSm, color: t.muted }, side: "top" }, valign: "top", bordercolor: "rgba(0,0,0,0)",
              borderwidth: 0, font: { size: PX.twoSm, color: t.strong } },
    paper_bgcolor: t.bg,
    plot_bgcolor: t.bg,
    yaxis: { ticklabelposition: "outside", zerolinecolor: t.grid, title: { font: { color: t.muted, size: PX.sm }, standoff: PX.spaceTwoXL },
             tickcolor: t.grid, tickfont: { color: t.muted, size: PX.twoSm }, gridcolor: t.grid, minor: { gridcolor: t.grid }, automargin: true },
    xaxis: { zerolinecolor: t.grid, gridcolor: t.grid, showgrid: false, tickfont: { color: t.muted, size: PX.twoSm }, tickcolor: t.grid,
             title: { font: { color: t.muted, size: PX.sm }, standoff: PX.spaceXL }, minor: { gridcolor: t.grid }, zeroline: false, automargin: true,
             rangeselector: { bgcolor: t.bg, bordercolor: t.grid, borderwidth: 1, x: 0 } },
    margin: { pad: PX.spaceSm, r: 0, l: 0 },
    hoverlabel: { bgcolor: t.bg, bordercolor: t.border, font: { color: t.muted, family: t.font, size: PX.twoSm } },
    coloraxis: { colorbar: { thickness: 16, xpad: PX.spaceTwoXL, ticklabelposition: "outside", outlinecolor: "rgba(0,0,0,0)", outlinewidth: 8,
                             len: 0.75, y: 0.5745, title: { font: { color: t.muted, size: PX.sm } }, tickfont: { color: t.muted, size: PX.twoSm } } },
  };
}

// lodash-style deep merge of plain objects: `src` wins (as Streamlit's merge into template.layout).
function merge(dst, src) {
  for (const [k, v] of Object.entries(src)) {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      if (!dst[k] || typeof dst[k] !== "object" || Array.isArray(dst[k])) dst[k] = {};
      merge(dst[k], v);
    } else {
      dst[k] = v;
    }
  }
  return dst;
}

// Streamlit's Python template ("streamlit", set as plotly's default) carries placeholder colours
// that its frontend swaps for the theme's; do the same (only if a figure carries any).
function replacePlaceholders(text, t) {
  if (!text.includes('"#0000')) return text;
  const map = {};
  for (let i = 0; i < 10; i++) {
    map[`#0000${String(i + 1).padStart(2, "0")}`] = t.categorical[i];
    map[`#0000${String(i + 11).padStart(2, "0")}`] = t.sequential[i];
    map[`#0000${String(i + 21).padStart(2, "0")}`] = t.diverging[i];
  }
  Object.assign(map, {
    "#000032": t.light ? "#29b09d" : "#7defa1", "#000033": t.light ? "#ff2b2b" : "#ff6c6c",
    "#000034": t.light ? "#0068c9" : "#83c9ff", "#000035": t.grid, "#000036": t.muted, "#000037": t.strong,
    "#000038": t.bg, "#000039": t.light ? "rgba(49, 51, 63, 0.05)" : "rgba(250, 250, 250, 0.05)",
    "#000040": t.light ? "#f4f5f8" : "#1a1c24",
  });
  return text.replace(/"#0000[0-4][0-9]"/g, m => (map[m.slice(1, -1)] ? `"${map[m.slice(1, -1)]}"` : m));
}

function themed(figure, t) {
  const layout = figure.layout || (figure.layout = {});
  const template = layout.template && typeof layout.template === "object" ? layout.template : (layout.template = {});
  template.layout = merge(template.layout && typeof template.layout === "object" ? template.layout : {}, themeLayout(t));
  if (layout.title !== undefined && layout.title !== null) {
    const title = typeof layout.title === "string" ? { text: layout.title } : layout.title;
    if (typeof title.text === "string" && title.text && !title.text.startsWith("<b>")) title.text = `<b>${title.text}</b>`;
    layout.title = title;
  }
  return figure;
}

// ---------------------------------------------------------------- modebar (st.plotly_chart's)

const ICON_EXPAND = { width: 600, height: 470, name: "fullscreen-expand", path: "M32 32C14.3 32 0 46.3 0 64v96c0 17.7 14.3 32 32 32s32-14.3 32-32V96h64c17.7 0 32-14.3 32-32s-14.3-32-32-32H32zM64 352c0-17.7-14.3-32-32-32s-32 14.3-32 32v96c0 17.7 14.3 32 32 32h96c17.7 0 32-14.3 32-32s-14.3-32-32-32H64V352zM320 32c-17.7 0-32 14.3-32 32s14.3 32 32 32h64v64c0 17.7 14.3 32 32 32s32-14.3 32-32V64c0-17.7-14.3-32-32-32H320zM448 352c0-17.7-14.3-32-32-32s-32 14.3-32 32v64H320c-17.7 0-32 14.3-32 32s14.3 32 32 32h96c17.7 0 32-14.3 32-32V352z" };

function configOf(cfg, state) {
  const c = { ...(cfg || {}) };
  c.displaylogo = c.displaylogo ?? false;
  c.showSendToCloud = c.showSendToCloud ?? false;
  c.responsive = false;    // our ResizeObserver resizes; plotly's window listener would double it
  const remove = new Set([...(c.modeBarButtonsToRemove || []), "lasso2d", "select2d", "sendChartToCloud"]);
  c.modeBarButtonsToRemove = [...remove];
  // One button object per chart, kept across figures: Plotly.react compares the config with the
  // last one and falls back to a full newPlot (new SVG, every trace drawn anew) when anything in it
  // is a different object, a new click function included.
  c.modeBarButtonsToAdd = [state.fullscreenButton, ...(c.modeBarButtonsToAdd || [])];
  return c;
}

// ---------------------------------------------------------------- unchanged arrays kept

// Without layout.datarevision, Plotly.react compares data arrays by identity: a trace whose arrays are
// new objects is recomputed and the whole chart redrawn (15-30 ms), even if the numbers are the same,
// and so is a chart whose layout template is a new object.  A figure arrives as fresh JSON every time,
// so arrays equal to the previous figure's are swapped for the previous objects (plotly's base64 typed
// arrays decoded here once, as plotly would), and an unchanged template for the previous one: a move
// that changes only layout (a marker shape, a label) then costs a few ms.  Layout arrays are reused
// only where plotly treats them as data (tick values and labels, category orders): plotly writes back
// into others (axis ranges).
const TYPED = { f8: Float64Array, f4: Float32Array, i4: Int32Array, u4: Uint32Array, i2: Int16Array, u2: Uint16Array,
                i1: Int8Array, u1: Uint8Array, u1c: Uint8ClampedArray };
const LAYOUT_ARRAYS = new Set(["tickvals", "ticktext", "categoryarray"]);

// As plotly's decodeTypedArraySpec: one typed array, or for a 2-D shape "rows, cols" (numpy order) an
// Array of rows (heatmap z).  Left to plotly otherwise (3-D), as it would then decode it anew on every
// call, which for a heatmap means recomputing and redrawing the map (~30 ms) on every rerun.
function decodeTyped(spec, dims) {
  const bin = atob(spec.bdata);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const T = TYPED[spec.dtype];
  if (dims.length < 2) return new T(bytes.buffer);
  const [rows, cols] = dims;
  const out = [];
  for (let r = 0; r < rows; r++) out.push(new T(bytes.buffer, r * cols * T.BYTES_PER_ELEMENT, cols));
  return out;
}

const flat = v => v === null || typeof v !== "object";

function reuseArrays(node, prev, next) {
  if (Array.isArray(node)) {
    // a list of numbers or text, or a list of such lists (2-D customdata, text, z)
    if (node.every(flat) || node.every(v => Array.isArray(v) && v.every(flat))) {
      const key = "a" + JSON.stringify(node);
      const hit = prev.get(key) || node;
      next.set(key, hit);
      return hit;
    }
    for (let i = 0; i < node.length; i++) node[i] = reuseArrays(node[i], prev, next);
    return node;
  }
  if (node && typeof node === "object") {
    const dims = node.shape === undefined ? [] : String(node.shape).split(",").map(Number);
    if (typeof node.bdata === "string" && typeof node.dtype === "string" && TYPED[node.dtype] &&
        dims.length <= 2 && dims.every(n => Number.isInteger(n) && n >= 0)) {
      const key = `t${node.dtype}:${dims}:${node.bdata}`;
      const hit = prev.get(key) || decodeTyped(node, dims);
      next.set(key, hit);
      return hit;
    }
    for (const k of Object.keys(node)) node[k] = reuseArrays(node[k], prev, next);
  }
  return node;
}

function layoutArrays(node, prev, next) {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) layoutArrays(node[i], prev, next);
  } else if (node && typeof node === "object") {
    for (const k of Object.keys(node)) {
      if (k === "template") continue;
      if (LAYOUT_ARRAYS.has(k)) node[k] = reuseArrays(node[k], prev, next);
      else layoutArrays(node[k], prev, next);
    }
  }
}

function keepUnchanged(state, figure) {
  const next = new Map();
  const prev = state.arrays || next;
  figure.data = reuseArrays(figure.data || [], prev, next);
  layoutArrays(figure.layout, prev, next);
  state.arrays = next;
  state.template = sameObject(state.template, figure.layout, "template");
  // layout.meta (ui.figures.plot's narrow layout and panel titles) too: plotly compares an object of type "any" by
  // identity, and its edit type is "plot", so a new meta object made every move a full redraw (a figure of
  // panels on Compare, a move that only shifts shapes: Plotly.react 29 ms instead of 12, tried in the page).
  state.meta = sameObject(state.meta, figure.layout, "meta");
}

// The previous value of `layout[name]` if the new one is equal to it (kept in `layout`), else the new one:
// returns the { key, value } to keep for the next figure.
function sameObject(kept, layout, name) {
  const key = JSON.stringify(layout[name]);
  if (kept && key === kept.key) {
    if (layout[name] !== undefined) layout[name] = kept.value;
    return kept;
  }
  return { key, value: layout[name] };
}

// ---------------------------------------------------------------- the element

function setup(parentElement) {
  const root = document.createElement("div");
  root.className = "stLiveChart";
  root.setAttribute("data-testid", "stLiveChart");
  root.style.width = "100%";
  const gd = document.createElement("div");
  gd.style.width = "100%";
  gd.style.height = "100%";
  root.appendChild(gd);
  parentElement.appendChild(root);
  const state = { root, gd, text: null, theme: null, next: null, busy: false, height: 0, width: 0, Plotly: null,
                  figHeight: 450, bg: "" };
  state.fullscreenButton = {
    name: "Fullscreen", title: "Fullscreen", icon: ICON_EXPAND,
    click: () => {
      if (document.fullscreenElement) document.exitFullscreen();
      else root.requestFullscreen?.();
    },
  };
  // The box's size comes from the observer's own entry (measured after layout): reading clientWidth
  // after each draw instead forced a layout per chart per move (≈3 ms each on the MoE page).
  state.ro = new ResizeObserver(entries => {
    const box = entries[entries.length - 1].contentRect;
    const w = Math.round(box.width), h = Math.round(box.height);
    if (w === state.width && h === state.height) return;
    state.width = w; state.height = h;
    if (!state.Plotly || !gd._fullLayout || w === 0) return;   // not drawn yet: the first draw uses this size
    if (state.narrowSpec && isNarrow(state.narrowSpec, w) !== state.narrow) {
      state.text = null;                                      // the other layout: draw the figure again
      if (prepare(state)) drain(state);
      return;
    }
    state.Plotly.Plots.resize(gd);
  });
  state.ro.observe(root);
  state.onFullscreen = () => {
    const full = document.fullscreenElement === root;
    root.style.height = full ? "100vh" : `${state.figHeight}px`;
    root.style.background = full ? state.bg : "";
  };
  document.addEventListener("fullscreenchange", state.onFullscreen);
  return state;
}

function showError(state, message) {
  let box = state.root.querySelector(":scope > .stLiveChartError");
  if (!box) {
    box = document.createElement("div");
    box.className = "stLiveChartError";
    box.setAttribute("role", "alert");
    state.root.prepend(box);
  }
  box.textContent = message;
}

// ---------------------------------------------------------------- charts off screen wait

// A new figure for a chart that is drawn already but lies off screen (scrolled away, in a tab or an
// expander not shown) is held, not drawn: the chart redraws when it comes within DEFER_MARGIN_PX of
// the visible part of the page's scroll box, or before the page prints.  On a page of four or six
// charts a dial move then costs the charts one can see, not all of them (plotly redraws a chart in
// 10-35 ms: docs/design.md "Charts off screen").  A chart's first drawing is never held, so every chart is
// on the page from the start.  The graph div's __liveDeferred says whether it holds a figure.
const DEFER_MARGIN_PX = 100;
const held = new Set();                     // states holding a figure
let scroller;                               // the page's scroll box (undefined: not looked up yet)

// The nearest ancestor that scrolls (Streamlit's main section), else the viewport (null), looked up
// after a chart's first drawing and kept while it is on the page.  With the viewport as the root the
// margin is lost (the main section clips), not the deferral.
function scrollBox(el) {
  if (scroller && scroller.isConnected) return scroller;
  scroller = null;
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    if (p.scrollHeight <= p.clientHeight + 1) continue;     // (an element's own box is "auto" too)
    const oy = getComputedStyle(p).overflowY;
    if (oy === "auto" || oy === "scroll") {
      scroller = p;
      break;
    }
  }
  return scroller;
}

function watchVisibility(state) {
  if (state.io || typeof IntersectionObserver !== "function") return;
  const root = scrollBox(state.root);
  state.io = new IntersectionObserver(entries => {
    state.visible = entries[entries.length - 1].isIntersecting;
    if (state.visible) release(state);
  }, { root, rootMargin: `${DEFER_MARGIN_PX}px 0px` });
  state.io.observe(state.root);
}

// Draw now (true) or hold the figure until the chart is in view (false).  A figure that came back
// unchanged is not held: prepare() finds nothing to draw (unless the theme changed).
function drawNow(state) {
  if (!state.gd._fullLayout || state.visible !== false || state.incoming === state.text ||
      document.fullscreenElement === state.root) {
    return true;
  }
  held.add(state);
  state.gd.__liveDeferred = true;
  return false;
}

function release(state) {
  if (!held.delete(state)) return;
  state.gd.__liveDeferred = false;
  if (prepare(state)) drain(state);
}

window.addEventListener("beforeprint", () => {
  for (const state of [...held]) release(state);
});

// ---------------------------------------------------------------- when to draw

// A chart draws once the script run that sent it has ended, i.e. once the run's other elements are
// on the page.  Drawn mid-run, each of plotly's text measurements makes the browser lay out the
// half-updated page again, and the drawing holds up the elements still arriving (bench/profile_move.py's
// driver: the Batch page's last chart settled ~15-35 ms sooner).  Outside a run (first mount, a theme
// change) the draw waits one task.  A run state that never comes back (a changed Streamlit test
// attribute, a lost connection) delays a chart by at most MAX_WAIT_MS.
const MAX_WAIT_MS = 1000;
const pending = new Set();
let runObserver = null;

function appRoot() {
  return document.querySelector('[data-testid="stApp"]');
}

function running(app) {
  return app.getAttribute("data-test-script-state") === "running";
}

function flushPending() {
  const fns = [...pending];
  pending.clear();
  for (const fn of fns) fn();
}

function whenRunEnds(fn) {
  const app = appRoot();
  if (!app || !running(app)) {
    setTimeout(fn, 0);
    return;
  }
  let done = false;
  const once = () => {
    if (!done) {
      done = true;
      pending.delete(once);
      fn();
    }
  };
  pending.add(once);
  setTimeout(once, MAX_WAIT_MS);
  if (!runObserver) {
    runObserver = new MutationObserver(() => {
      if (!running(app)) flushPending();
    });
    runObserver.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  }
}

async function drain(state) {
  if (state.busy) return;
  state.busy = true;
  try {
    const Plotly = state.Plotly || (state.Plotly = await loadPlotly());
    while (state.next) {
      const { figure, config, configKey } = state.next;
      state.next = null;
      // The config goes to plotly only when it differs from the one drawn: given one, Plotly.react
      // deep-copies the chart's whole context (defaults, locales) twice and compares the copies, every
      // call (≈3 ms per chart in a CPU profile of the MoE page).  Without one it keeps the context.
      const same = configKey === state.configKey && state.gd._fullLayout;
      state.configKey = null;
      try {
        await Plotly.react(state.gd, figure.data || [], figure.layout || {}, same ? undefined : config);
        state.configKey = configKey;
        state.gd.__liveDraws = (state.gd.__liveDraws || 0) + 1;
        watchVisibility(state);
        state.root.querySelector(":scope > .stLiveChartError")?.remove();
      } catch (e) {
        stats.errors += 1;
        console.error("live chart: Plotly.react failed", e);
      }
      stats.drawn += 1;
      stats.lastDrawn = performance.now();
    }
  } catch (e) {                              // plotly.js did not load: say so; the next figure retries
    stats.errors += 1;
    stats.drawn += state.next ? 1 : 0;
    state.next = null;
    state.text = null;
    showError(state, `This chart could not be drawn: ${e.message}`);
  } finally {
    state.busy = false;
  }
}

// The theme, read from the page's CSS variables once per flush of charts (not once per chart, and
// not while React is still writing the run's elements: each getComputedStyle on a changed page makes
// the browser recompute its styles).
let themeCache = null;

function currentTheme(el) {
  if (!themeCache) {
    const t = themeOf(el);
    themeCache = { t, key: JSON.stringify(t) };
    setTimeout(() => { themeCache = null; }, 0);
  }
  return themeCache;
}

// A figure's narrow layout (ui.figures.plot.NARROW_META in layout.meta: {below_px, layout}) is merged over its own
// while the chart is narrower than below_px, e.g. two panels stacked on a phone instead of side by side.
// state.narrowSpec: the figure's spec (null: none); state.narrow: whether it applies.  The ResizeObserver
// redraws the figure when a resize crosses below_px.
const NARROW_META = "roofline_narrow";

// The figure's narrow-layout spec, or null if it has none.
function narrowSpec(layout) {
  const spec = layout.meta && layout.meta[NARROW_META];
  return spec && spec.below_px > 0 ? spec : null;
}

function isNarrow(spec, width) {
  return width > 0 && width < spec.below_px;
}

function applyNarrow(state, layout) {
  const spec = (state.narrowSpec = narrowSpec(layout));
  // before the observer's first entry the width is measured once
  state.narrow = spec ? isNarrow(spec, state.width || state.root.clientWidth) : null;
  if (state.narrow) merge(layout, spec.layout || {});
}

// A new chart's box takes its figure's height at once, before plotly has loaded or the run has ended, so
// that the page below does not move when it draws (an element of height "content", i.e. a figure with a
// narrow layout, has no height of its own until then).  Once per chart: later figures size it in prepare().
function sizeFirst(state) {
  try {
    const layout = (JSON.parse(state.incoming).figure || {}).layout || {};
    const spec = narrowSpec(layout);
    const narrow = spec && isNarrow(spec, state.root.clientWidth);
    const h = narrow && spec.layout && spec.layout.height >= 10 ? spec.layout.height : layout.height;
    state.root.style.height = `${h >= 10 ? h : 450}px`;
  } catch (e) {                            // prepare() reports a figure it cannot read
    state.root.style.height = "450px";
  }
}

// Parse the newest figure text and queue it for drawing, unless neither it nor the theme changed.
function prepare(state) {
  const text = state.incoming;
  const { t, key } = currentTheme(state.root);
  if (text === state.text && key === state.theme) return false;   // a rerun that left this figure as it was
  state.text = text;
  state.theme = key;
  const msg = JSON.parse(replacePlaceholders(text, t));
  const figure = themed(msg.figure || {}, t);
  applyNarrow(state, figure.layout);
  keepUnchanged(state, figure);
  const layout = figure.layout;
  state.figHeight = layout.height >= 10 ? layout.height : 450;
  state.bg = t.bg;
  delete layout.width;                  // the width is the container's (width="stretch")
  layout.autosize = true;
  if (document.fullscreenElement !== state.root && state.root.style.height !== `${state.figHeight}px`) {
    state.root.style.height = `${state.figHeight}px`;
    if (state.gd._fullLayout) state.height = state.figHeight;   // this draw takes the new height: no resize too
  }
  delete layout.height;                 // follow the root's height (fullscreen too)
  if (state.next) stats.drawn += 1;     // the superseded figure is settled without drawing
  stats.started += 1;
  state.next = { figure, config: configOf(msg.config, state), configKey: JSON.stringify(msg.config || {}) };
  return true;
}

export default function (component) {
  const { data, parentElement } = component;
  const state = parentElement.__liveChart || (parentElement.__liveChart = setup(parentElement));
  if (data) {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    state.incoming = new TextDecoder().decode(bytes);
    if (!state.root.style.height) sizeFirst(state);
    if (!state.queued) {
      state.queued = true;
      whenRunEnds(() => {
        state.queued = false;
        if (drawNow(state) && prepare(state)) drain(state);
      });
    }
  }
  // Streamlit calls this on unmount; it may also call a superseded call's cleanup while the element
  // stays, so only tear down once the node has left the page.
  return () => {
    setTimeout(() => {
      if (!state.root.isConnected) {
        state.ro.disconnect();
        state.io?.disconnect();
        held.delete(state);
        document.removeEventListener("fullscreenchange", state.onFullscreen);
        if (state.Plotly) state.Plotly.purge(state.gd);
        delete parentElement.__liveChart;
      }
    }, 0);
  };
}
