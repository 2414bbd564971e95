"""The offline deck (ui/present/deck.py): every walkthrough step in one HTML file, plotly.js and KaTeX inline,
nothing fetched from outside, under the size cap; each dial step's frames are the model at the dial's
positions; the command line takes the model CLI's flags."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from model import ModelArch, presets
from tests import ROOT
from tests.ui.present.helpers import view
from ui.present import deck
from ui.present import walkthrough as wk
from ui.state.dials import BATCH_OPTIONS, CONTEXT_OPTIONS

H100 = presets.hardware_presets()["h100"]
LLAMA = presets.model_presets()["llama-3.1-70b"]
KATEX_FONTS = 20          # woff2 files of KaTeX 0.16 (Debian fonts-katex): AMS … Typewriter
KATEX_JS = (Path(deck.KATEX_DIRS[0]) / "katex.min.js").read_text(encoding="utf-8")   # .ci/run installs libjs-katex


def _deck_data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="deck-data">(.*?)</script>', page, re.S)
    assert m, "the deck's data block is missing"
    return json.loads(m.group(1))


def _outside_scripts(page: str) -> str:
    """The document without the inlined code (plotly.js and KaTeX mention URLs in their source)."""
    return re.sub(r"<script\b[^>]*>.*?</script>", "<script></script>", page, flags=re.S)


@pytest.fixture(scope="module")
def default_deck() -> str:
    # `python -m ui.present.deck --out …` with no other flag: the app's default view (H100, Llama 3.1 70B, B 64, T 8k)
    a = deck.make_parser().parse_args(["--out", "unused.html"])
    return deck.build_html(deck.view_from_args(a))


def test_every_walkthrough_step_is_a_slide_in_order(default_deck):
    keys = re.findall(r'<section class="slide" id="step-(\d+)" data-key="([a-z]+)">', default_deck)
    assert [k for _, k in keys] == [s.key for s in wk.STEPS]
    assert [int(n) for n, _ in keys] == list(range(1, len(wk.STEPS) + 1))
    for n, step in enumerate(wk.STEPS, 1):
        assert f"<h1>{n}. {step.title.replace('&', '&amp;')}</h1>" in default_deck
    data = _deck_data(default_deck)
    assert len(data["slides"]) == len(wk.STEPS)
    # every step has its chart, its sentence and equations (rendered from the data by the page's script)
    for s in data["slides"]:
        assert s["figure"] and s["figure"]["data"]
        text = data["texts"][s["texts"][s["active"]]]
        assert len(text["sentence"]) > 40 and text["latex"]


def test_plotly_js_and_katex_are_inline_and_nothing_points_outside(default_deck):
    js = deck.PLOTLY_JS.read_text(encoding="utf-8")
    assert js in default_deck                                        # plotly.min.js, whole, in the file
    doc = _outside_scripts(default_deck)
    assert not re.search(r"<script[^>]*\bsrc\s*=", default_deck)     # no script is loaded from anywhere
    assert not re.search(r"<link\b", doc, re.I)
    assert not re.search(r"""\b(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", doc, re.I)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", default_deck, re.I)
    assert "@import" not in doc
    data = json.dumps(_deck_data(default_deck))
    assert "http" not in data                                       # figures and texts name no address
    # KaTeX from Debian's libjs-katex: the script, and every font as a data: URL
    assert KATEX_JS in default_deck
    assert default_deck.count("url(data:font/woff2;base64,") == KATEX_FONTS
    assert "url(fonts/" not in default_deck


def test_default_deck_is_under_the_size_cap(default_deck):
    size = len(default_deck.encode("utf-8"))
    assert deck.PLOTLY_JS.stat().st_size < size <= deck.SIZE_CAP_BYTES
    # no slider was thinned for the default view: each dial step has every position of its dial
    data = _deck_data(default_deck)
    for step, s in zip(wk.STEPS, data["slides"]):
        if step.dial:
            assert len(s["figure"]["frames"]) == len(deck.DIAL_OPTIONS[step.dial])


def test_frames_are_the_dial_positions():
    v = view(batch=64.0, context=8192.0)
    for step in wk.STEPS:
        if not step.dial:
            continue
        s = deck.build_slide(step, v)
        opts = BATCH_OPTIONS if step.dial == "batch" else CONTEXT_OPTIONS
        frames = s.figure["frames"]
        steps = s.figure["layout"]["sliders"][0]["steps"]
        assert len(frames) == len(steps) == len(s.labels) == len(s.frame_texts) == len(opts)   # 64, 8192 are options
        assert [st["args"][0] for st in steps] == [[f["name"]] for f in frames]
        assert s.labels[s.active] == ("64" if step.dial == "batch" else "8k")
        # every frame draws the same traces, with the whole layout (less template and slider)
        assert {len(f["data"]) for f in frames} == {len(s.figure["data"])}
        assert all("template" not in f["layout"] and "sliders" not in f["layout"] for f in frames)


def test_a_value_between_options_is_a_position_too():
    s = deck.build_slide(wk.STEPS[0], view(batch=100.0))
    assert len(s.figure["frames"]) == len(BATCH_OPTIONS) + 1
    assert s.labels[s.active] == "100" and s.labels[s.active - 1] == "96" and s.labels[s.active + 1] == "128"


def _cost_curve(frame: dict) -> tuple[np.ndarray, np.ndarray]:
    """All plotted (context, $/Mtok) points of the KV step's cost curve (fits and does-not-fit parts)."""
    xs, ys = [], []
    for t in frame["data"]:
        if t.get("name") in ("roofline cost, $/Mtok", "does not fit in HBM"):
            x, y = deck.unpack(t["x"]), deck.unpack(t["y"])
            ok = np.isfinite(x) & np.isfinite(y)
            xs.append(x[ok])
            ys.append(y[ok])
    return np.concatenate(xs), np.concatenate(ys)


def test_kv_step_curves_change_with_batch_as_the_roofline_says():
    v = view(chips=8)
    s = deck.build_slide(next(st for st in wk.STEPS if st.key == "kv"), v)
    assert s.dial == "batch"
    F, bw = H100.flops("bf16"), H100.hbm_bandwidth_bytes_per_s
    W = LLAMA.total_params * 2                                      # bf16 weights
    kv = 80 * 2 * 8 * 128 * 2                                       # Llama 3.1 70B: 327,680 B of bf16 KV per token
    C, price = 8, H100.price_usd_per_hour
    curves = {}
    for B in (1.0, 1024.0):
        i = s.labels.index(f"{B:,.0f}")
        T, usd = _cost_curve(s.figure["frames"][i])
        assert T.size > 100
        # lecture roofline: t = max(2·Na·B/(C·F), (W + B·kv·T)/(C·bw)); $/Mtok = C·price/3600 · t/B · 1e6
        t = np.maximum(2 * LLAMA.active_params * B / (C * F), (W + B * kv * T) / (C * bw))
        np.testing.assert_allclose(usd, C * price / 3600 * t / B * 1e6, rtol=1e-6)   # float32 in the file
        curves[B] = np.interp(8192.0, T, usd)
    # at T = 8k the weight read dominates B = 1 (141 GB vs 2.7 GB of KV) and is shared at B = 1024
    assert curves[1.0] > 20 * curves[1024.0]


def test_the_sentence_follows_the_slider():
    s = deck.build_slide(wk.STEPS[0], view(chips=8))
    for i, label in enumerate(s.labels):
        B = float(label.replace(",", ""))
        assert f"(B = {B:g} now:" in s.text_at(i).sentence
        # the step time it quotes: max(2·Na·B/(C·F), (W + B·kv·T)/(C·bw)) — at B = 1: (141.2 GB + 2.68 GB)/26.8 TB/s
    assert "(B = 1 now: 5.37 ms" in s.text_at(0).sentence


def test_auto_chips_are_resized_at_each_position():
    # The app's 'auto': the smallest power of two whose 0.9 × 80 GB per chip holds W + B·kv·T:
    # B = 1: 141.2 GB + 8,192 × 327,680 B = 143.9 GB ≤ 2 × 72 GB → 2 chips; B = 64: 141.2 + 171.8 = 313 GB → 8.
    v = view(chips=None)
    assert deck.view_at(v, "batch", 1.0).chips == 2
    assert deck.view_at(v, "batch", 64.0).chips == 8
    s = deck.build_slide(wk.STEPS[0], v)
    floor_1 = "5.27 ms"                       # 141.2 GB / (8 × 3.35 TB/s) at B = 64 …
    floor_2 = "21.1 ms"                       # … and / (2 × 3.35 TB/s) at B = 1, where 2 chips hold it
    assert floor_1 in s.text_at(s.active).sentence and floor_2 in s.text_at(0).sentence


def test_sweep_steps_slide_their_marker():
    v = view()
    for key in ("training", "prices", "tiers"):
        step = next(st for st in wk.STEPS if st.key == key)
        s = deck.build_slide(step, v)
        frames = s.figure["frames"]
        assert len(frames) == len(s.labels) == 60                 # with_play's sweep: 60 marker positions
        steps = s.figure["layout"]["sliders"][0]["steps"]
        assert [st["args"][0] for st in steps] == [[f["name"]] for f in frames]
        assert all(st["method"] == "animate" and st["args"][1]["transition"]["duration"] == 0 for st in steps)


def test_a_size_cap_thins_the_largest_sliders_and_keeps_the_current_value():
    v = view()
    page = deck.build_html(v, cap_bytes=7_000_000)
    assert len(page.encode("utf-8")) <= 7_000_000
    data = _deck_data(page)
    thinned = 0
    for step, s in zip(wk.STEPS, data["slides"]):
        if not step.dial:
            continue
        labels = [st["label"] for st in s["figure"]["layout"]["sliders"][0]["steps"]]
        full = deck.DIAL_OPTIONS[step.dial]
        thinned += len(labels) < len(full)
        assert labels[0] == deck.dial_label(step.dial, full[0]) and labels[-1] == deck.dial_label(step.dial, full[-1])
        assert labels[s["active"]] == ("64" if step.dial == "batch" else "8k")
        assert f"({len(labels)} positions" in page
    assert thinned >= 1


def test_a_step_the_model_cannot_draw_says_so():
    bare = ModelArch(name="bare", total_params=70e9, active_params=70e9)   # no attention shapes, no KV figure
    page = deck.build_html(view(model=bare, context=8192.0))
    data = _deck_data(page)
    assert len(data["slides"]) == len(wk.STEPS)
    assert "This step cannot be drawn for this chip and model" in page
    assert any(s["figure"] is None for s in data["slides"])


def test_without_katex_the_equations_are_shown_as_tex(monkeypatch):
    monkeypatch.setattr(deck, "katex_dir", lambda: None)
    page = deck.build_html(view())
    assert KATEX_JS not in page and "url(data:font/woff2" not in page
    assert "Equations shown as TeX" in page and "libjs-katex" in page
    assert _deck_data(page)["texts"][0]["latex"]                   # the TeX is still there, for the <pre> fallback


def test_script_json_cannot_close_its_script_element():
    assert "</script>" not in deck._script_json({"t": "</script><b>"})


# ---------------------------------------------------------------- command line

def test_cli_writes_the_deck_for_the_flags(tmp_path, capsys):
    out = tmp_path / "talk.html"
    rc = deck.main(["--out", str(out), "--hardware", "gb200", "--model", "deepseek-v3", "--batch", "256",
                    "--context", "32768", "--weight-dtype", "fp8"])
    assert rc == 0
    page = out.read_text(encoding="utf-8")
    gb200, dsv3 = presets.hardware_presets()["gb200"], presets.model_presets()["deepseek-v3"]
    assert f"{gb200.name} × {dsv3.name}" in page and "weights fp8" in page and "B = 256, T = 32k" in page
    data = _deck_data(page)
    floor = data["slides"][0]
    assert floor["figure"]["layout"]["sliders"][0]["steps"][floor["active"]]["label"] == "256"
    assert str(out) in capsys.readouterr().out


@pytest.mark.parametrize("argv, says", [
    (["--batch", "0"], "--batch: 0 is out of range"),
    (["--batch", "1,2"], "--batch: give one value"),
    (["--context", "abc"], "--context: 'abc' is not a number"),
    (["--hardware", "no-such-chip"], "no-such-chip"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["--json"], "--json"),
    (["--mfu", "2"], "--mfu"),
], ids=["batch0", "two-batches", "context-text", "unknown-chip", "unknown-flag", "json", "mfu"])
def test_cli_bad_flags_exit_2_with_one_line(tmp_path, capsys, argv, says):
    out = tmp_path / "x.html"
    assert deck.main(["--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err and "Traceback" not in err
    assert not out.exists()


def test_cli_without_out_or_into_a_missing_folder(tmp_path, capsys):
    assert deck.main([]) == 2
    assert "--out" in capsys.readouterr().err
    assert deck.main(["--out", str(tmp_path / "no" / "such" / "talk.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --out") and err.count("\n") == 1


def test_python_m_ui_deck(tmp_path):
    out = tmp_path / "talk.html"
    r = subprocess.run([sys.executable, "-m", "ui.present.deck", "--out", str(out), "--hardware", "h100", "--model",
                        "llama-3.1-70b"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size <= deck.SIZE_CAP_BYTES and "MB, 11 steps" in r.stdout
    bad = subprocess.run([sys.executable, "-m", "ui.present.deck", "--out", str(out), "--chips", "-1"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stderr.count("\n") == 1
