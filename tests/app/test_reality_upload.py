"""AppTest: the Reality-check page's upload of a user's own measured points — the
same parser as `calibrate --measurements` (model.calibrate.load_user_measurements), the same fit and
chart, one plain-text message per problem, and the page keeps working after a bad file."""

from __future__ import annotations

import numpy as np
import pytest

from model import calibrate as cal
from model import presets
from tests.app.helpers import app, arr, assert_clean, fig, metrics
from tests.presets.helpers import GOOD_ROW, HEAD, half_bound_csv, half_bound_point
from ui.format import number


def _upload(at, data: bytes, name: str = "mine.csv"):
    at.file_uploader(key="_rc_upload").set_value((name, data, "text/csv")).run()
    return at


def test_uploaded_points_are_selected_and_fitted():
    # Points at exactly half the ideal bandwidth bound (tests/presets/helpers.py): BWU 0.5.
    at = _upload(app(page="reality"), half_bound_csv().encode())
    assert_clean(at)
    assert any("3 measurement(s) loaded" in s.value for s in at.success)
    assert at.session_state["rc_m"] == "yours:half-4" and at.session_state["rc_pub"] == "Me"
    want = cal.fit_check(cal.check(cal.load_user_measurements(half_bound_csv().encode(), "mine.csv")))
    assert want.bwu == pytest.approx(0.5, rel=5e-3)
    m = metrics(at)
    assert m["HBM bandwidth util."] == f"{want.bwu:.2f}" == "0.50"
    assert m["Compute MFU"] == "1.00 (not pinned)"            # every point memory-bound: MFU not pinned down
    assert m["Points in the fit"] == "3"
    # The chosen point is drawn where it was measured: (u, b·u) at B = 4 (hand numbers in tests/presets/helpers.py).
    f = fig(at, "This setup's bound")
    chosen = next(t for t in f["data"] if t.get("name") == "chosen measurement")
    tps, u = half_bound_point(4)
    assert chosen["x"][0] == pytest.approx(u) and chosen["y"][0] == pytest.approx(tps)
    assert "Half bound at B=4" in chosen["hovertemplate"]
    # all three share one setup: the other two are drawn too
    assert sum(1 for t in f["data"] if t.get("legendgroup") == "other measurements of this setup") == 2
    assert "Half bound at B=4 (yours)" in at.selectbox(key="rc_m").options


@pytest.mark.parametrize(("data", "says"), [
    ((HEAD + "\n" + GOOD_ROW.replace(",h100,", ",h900,") + "\n").encode(), "'half-4'.hardware"),
    ((HEAD.replace("scope", "mood") + "\n" + GOOD_ROW + "\n").encode(), "column 'mood'"),
    ((HEAD + "\n" + GOOD_ROW.replace(",decode,1,", ",decode,-3,") + "\n").encode(), "'half-4'.gpus"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"x" * (300 * 1024), "the limit is"),
])
def test_malformed_uploads_name_the_problem_and_the_page_keeps_working(data, says):
    at = _upload(app(page="reality"), data)
    assert not at.exception
    assert any("was not loaded" in e.value for e in at.error)
    assert says in " ".join(t.value for t in at.text), [t.value for t in at.text]
    # the built-in measurements still drive the page
    assert at.session_state["rc_m"] == "deepseek-h800-production"
    assert metrics(at)["Points in the fit"]


def test_a_yaml_upload_and_clearing_it():
    yaml_text = ("schema: roofline-presets/1\nkind: measurement\nitems:\n  one:\n    publisher: Me\n"
                 "    model: llama-3.1-8b\n    hardware: h100\n    weights: bf16\n    kv: bf16\n    compute: bf16\n"
                 "    scope: decode\n    gpus: 1\n    chips_per_replica: 1\n    input_tokens: 1\n    output_tokens: 1\n"
                 "    context_tokens: 1\n    throughput: 400\n    throughput_metric: output per GPU\n"
                 "    tokens_per_s_per_user: 100\n")
    at = _upload(app(page="reality"), yaml_text.encode(), "mine.yaml")
    assert_clean(at)
    assert at.session_state["rc_m"] == "yours:one"
    assert any("without a source or date" in s.value for s in at.success)
    exp = next(e for e in at.expander if "Setup and sources" in e.label)
    assert "unsourced" in " ".join(md.value for md in exp.markdown)
    at.file_uploader(key="_rc_upload").set_value(None).run()
    assert not at.exception and "_rc_user" not in at.session_state
    assert not np.any([o.endswith("(yours)") for o in at.selectbox(key="rc_m").options])


def test_uploaded_points_are_predicted_by_the_built_in_fit_as_well_as_refitted():
    """Your points predicted, not refitted: the efficiency model fitted to the built-in measurements alone
    (as `calibrate --measurements FILE --predict`), beside the roofline refitted to them."""
    data = half_bound_csv().encode()
    at = _upload(app(page="reality"), data)
    assert_clean(at)
    mine = cal.load_user_measurements(data, "mine.csv")
    want = cal.predict_measurements(mine, cal.fit_efficiency(presets.measurement_presets()).efficiency)
    f = fig(at, "Your points: predicted against measured")
    p = next(t for t in f["data"] if t.get("name") == "predicted by the built-in fit (no refit)")
    assert np.allclose(arr(p["x"]).astype(float), want.measured)
    assert np.allclose(arr(p["y"]).astype(float), want.predicted, rtol=1e-9)
    refit = cal.fit_check(cal.check(mine))
    r = next(t for t in f["data"] if (t.get("name") or "").startswith("refitted"))
    assert np.allclose(arr(r["y"]).astype(float), refit.predicted, rtol=1e-9)
    m = metrics(at)
    ratio = want.predicted / want.measured
    lo, hi = np.percentile(cal.built_in_cv("k5").ratio, [10, 90])
    assert m["Your points"] == "3"
    assert m["Median |predicted ÷ measured − 1|"] == f"{100 * float(np.median(np.abs(ratio - 1))):.3g} %"
    assert m["Inside the held-out band"] == f"{int(np.sum((ratio >= lo) & (ratio <= hi)))} of 3"
    # The chosen point (one of yours) is predicted by the same fit.
    assert m["Predicted [out tok/s/GPU]"] == number(float(want.predicted[list(mine).index("half-4")]))
