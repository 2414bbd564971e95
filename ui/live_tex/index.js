// A display equation (ui/live_tex.py): a Streamlit v2 component module.
//
// The element's data is {tex}.  KaTeX (Debian's libjs-katex, KaTeX 0.16, served by the app itself
// through the asset route of the component `roofline.katexjs`, never a CDN) is loaded once per page
// and renders the TeX in display mode into this element's div.  Its CSS and fonts are the KaTeX 0.16
// stylesheet Streamlit's frontend already has on the page for st.latex.  If the script cannot be
// loaded the TeX source is shown instead.

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
    el.__tex = tex;
    loadKatex().then(
      katex => {
        if (el.__tex !== tex) return;               // a newer TeX arrived meanwhile
        katex.render(tex, el, { displayMode: true, throwOnError: false });
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
