// A display equation (ui/elements/live_tex.py): a Streamlit v2 component module.
//
// The element's data is {tex}; a changed equation is redrawn after the run (see afterRun).  KaTeX (Debian's
// libjs-katex, KaTeX 0.16, served by the app itself through the asset route of the component
// `roofline.katexjs`, never a CDN) is loaded once per page and renders the TeX in display mode into
// this element's div.  Its CSS and fonts are the KaTeX 0.16 stylesheet Streamlit's frontend already
// has on the page for st.latex.  If the script cannot be loaded the TeX source is shown instead.

const KATEX_URL = new URL("../roofline.katexjs/katex.min.js", import.meta.url).href;

function loadKatex() {
  if (!window.__liveKatex) {
    window.__liveKatex = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = KATEX_URL;
      s.async = true;
      s.onload = () => (window.katex && typeof window.katex.render === "function"
        ? resolve(window.katex) : reject(new Error("katex.min.js loaded but defined no katex.render")));
      s.onerror = () => {
        window.__liveKatex = null;       // let a later equation try again
        reject(new Error(`could not load ${KATEX_URL}`));
      };
      document.head.appendChild(s);
    });
  }
  return window.__liveKatex;
}

// A changed equation is redrawn once the script run that sent it has ended, one task after the
// charts' draws (ui/elements/live_chart/index.js waits for the same moment): drawn mid-run, KaTeX's work
// held up the run's remaining elements and then the charts.
// A run state that never comes back (a changed Streamlit test attribute, a lost connection) delays an
// equation by at most MAX_WAIT_MS.
const MAX_WAIT_MS = 1000;

function afterRun(fn) {
  const app = document.querySelector('[data-testid="stApp"]');
  const running = () => app.getAttribute("data-test-script-state") === "running";
  const later = () => setTimeout(() => setTimeout(fn, 0), 0);   // after the charts' draws of that moment
  if (!app || !running()) {
    later();
    return;
  }
  let done = false;
  const finish = then => {
    if (done) return;
    done = true;
    obs.disconnect();
    then();
  };
  const obs = new MutationObserver(() => {
    if (!running()) finish(later);
  });
  obs.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  setTimeout(() => finish(fn), MAX_WAIT_MS);
}

export default function (component) {
  const { data, parentElement } = component;
  let el = parentElement.__liveTex;
  if (!el) {
    el = document.createElement("div");
    el.className = "stLiveTex";
    el.setAttribute("data-testid", "stLiveTex");
    parentElement.appendChild(el);
    parentElement.__liveTex = el;
  }
  const tex = data && typeof data.tex === "string" ? data.tex : null;
  if (tex !== null && tex !== el.__tex) {
    const first = el.__tex === undefined;
    el.__tex = tex;
    loadKatex().then(
      katex => {
        if (el.__tex !== tex) return;               // a newer TeX arrived meanwhile
        const draw = () => {
          if (el.__tex === tex) katex.render(tex, el, { displayMode: true, throwOnError: false });
        };
        if (first) draw();
        else afterRun(draw);
      },
      err => {
        if (el.__tex !== tex) return;
        console.error("live tex: KaTeX could not be loaded", err);
        el.textContent = tex;
        el.classList.add("stLiveTexSource");
      });
  }
  return () => {};
}
