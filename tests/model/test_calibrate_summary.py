"""The built-in fit's stored summary (model/fit_summary.json): current with today's measurements and code, equal
to the fit it stands for, and never used once its inputs change."""

from __future__ import annotations

import json

import pytest

from model import calibrate as cal


def test_the_stored_summary_is_current_and_equals_the_fit():
    """Fails after a change to a measurement, a chip, a model or the fitting code: run `python -m model.store_fit`."""
    stored = cal.stored_summary()
    assert stored is not None, ("model/fit_summary.json does not match today's inputs "
                                f"({', '.join(cal.SUMMARY_INPUTS)}): run `python -m model.store_fit`")
    fit, cv = cal.built_in_fit(), cal.built_in_cv("k5")
    assert stored.n == fit.n == len(cv.keys)
    # 1e-5: the fit converges to a relative cost change of 1e-12, so another machine's BLAS may end it a few
    # parts per million away; the pages print three significant digits.
    for name, value in fit.efficiency.as_dict().items():
        got = getattr(stored.efficiency, name)
        assert (got is None and value is None) or got == pytest.approx(value, rel=1e-5, abs=1e-12), name
    assert stored.band == pytest.approx(cv.band, rel=1e-5)
    assert stored.median_error == pytest.approx(cv.median_error, rel=1e-5)


def test_a_summary_from_other_inputs_is_not_used(tmp_path):
    doc = json.loads(cal.SUMMARY_PATH.read_text(encoding="utf-8"))
    doc["inputs_sha256"] = "0" * 64
    doc["band"] = [0.1, 9.9]
    stale = tmp_path / "fit_summary.json"
    stale.write_text(json.dumps(doc), encoding="utf-8")
    assert cal.stored_summary(stale) is None
    for bad in ("", "{", "[]", json.dumps({**doc, "inputs_sha256": cal.inputs_digest(), "band": "x"})):
        stale.write_text(bad, encoding="utf-8")
        assert cal.stored_summary(stale) is None
    assert cal.stored_summary(tmp_path / "missing.json") is None


def test_the_digest_follows_every_input(monkeypatch, tmp_path):
    """Each listed file's bytes change the digest (here: a copy of the project with one byte added to each)."""
    root = tmp_path / "root"
    for name in cal.SUMMARY_INPUTS:
        dst = root / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes((cal._ROOT / name).read_bytes())
    monkeypatch.setattr(cal, "_ROOT", root)
    base = cal.inputs_digest()
    assert base == cal.inputs_digest()                  # deterministic
    seen = {base}
    for name in cal.SUMMARY_INPUTS:
        with (root / name).open("ab") as f:
            f.write(b"\n")
        seen.add(cal.inputs_digest())
    assert len(seen) == len(cal.SUMMARY_INPUTS) + 1


def test_write_summary_stores_what_built_in_summary_reads(monkeypatch, tmp_path):
    path = tmp_path / "fit_summary.json"
    written = cal.write_summary(path)
    assert cal.stored_summary(path) == written
    monkeypatch.setattr(cal, "SUMMARY_PATH", path)
    cal._built_in_summary.cache_clear()
    try:
        assert cal.built_in_summary() == written
    finally:
        cal._built_in_summary.cache_clear()


def test_without_a_current_summary_the_pages_get_the_fit_itself(monkeypatch, tmp_path):
    monkeypatch.setattr(cal, "SUMMARY_PATH", tmp_path / "none.json")
    cal._built_in_summary.cache_clear()
    try:
        s = cal.built_in_summary()
        assert s.efficiency == cal.built_in_fit().efficiency and s.band == cal.built_in_cv("k5").band
    finally:
        cal._built_in_summary.cache_clear()
