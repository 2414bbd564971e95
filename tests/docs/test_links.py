"""Every document the project cites is in the repository: the README's and the docs' relative links
resolve, and every reference to a document in code, tests and configuration names a file that exists
(and, where it quotes a heading, a heading that exists)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests import ROOT


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", *patterns],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return sorted({ROOT / f for f in out if (ROOT / f).is_file()})


DOCS = _tracked("*.md")
CODE = [f for f in _tracked() if f.suffix in {".py", ".js", ".toml", ".yaml", ".yml", ".txt", ".in", ".cfg", ".sh"}
        or f.name in {"Dockerfile", "run", "test"}]
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
DOC_REF = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)\b(?:\s+\"([^\"]+)\")?")
# Notes that live outside the repository and that nothing in it may send a reader to.
OUTSIDE = re.compile(r"DESIGN\.md|STYLE\.md|shared/|streamlit_notes|presets_reference|lecture\.md")
# Files that name such paths on purpose, and names that only look like documents.
EXEMPT = {"tests/presets/test_preset_sources.py"}   # its test cases are sources that must be rejected
NOT_DOCS = {("tests/deploy/test_deploy.py", "KEEP.md"),    # a .dockerignore pattern under test
            ("ui/elements/live_chart/index.js", "PX.md")}  # a font size in the theme


def _headings(doc: Path) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", doc.read_text(encoding="utf-8"), re.M)}


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path):
    broken = []
    for m in LINK.finditer(doc.read_text(encoding="utf-8")):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):      # http:, https:, mailto: …
            continue
        path, _, frag = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(target)
        elif frag and dest.suffix == ".md" and frag not in {_anchor(h) for h in _headings(dest)}:
            broken.append(target)
    assert broken == []


def test_code_cites_only_documents_in_the_repository():
    missing, outside = [], []
    for f in CODE + DOCS:
        text = f.read_text(encoding="utf-8", errors="replace")
        rel = f.relative_to(ROOT)
        if rel.parts[:2] == ("tests", "docs") or str(rel) in EXEMPT:
            continue                                       # this test names the patterns it looks for
        outside += [f"{rel}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
        for m in DOC_REF.finditer(text):
            name, heading = m.group(1), m.group(2)
            if (str(rel), name) in NOT_DOCS:
                continue
            cands = [ROOT / name, f.parent / name]
            doc = next((c for c in cands if c.is_file()), None)
            if doc is None:
                missing.append(f"{rel}: {name}")
            elif heading and heading not in _headings(doc):
                missing.append(f'{rel}: {name} "{heading}"')
    assert outside == []
    assert missing == []


def test_readme_stays_short_and_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 220
    first = text[: text.index("\n## ", 1) if "\n## " in text else len(text)]
    assert "streamlit run app.py" in first and "bash scripts/test" in first


# How the project was developed stays out of the product: no working-session numbers, no tracker issue
# numbers (the tracker is not in the repository; CHANGELOG.md may name what changed, not where it was asked).
HISTORY = re.compile(r"\b[Ss]ession \d+\b|\b[Ii]ssue \d+\b")
EXTERNAL = re.compile(r"https?://\S+|SGLang issue \d+")     # an external project's public issue is a source


def test_no_development_history_in_code_or_docs():
    found = []
    for f in CODE + DOCS:
        rel = f.relative_to(ROOT)
        if rel.parts[:2] == ("tests", "docs"):
            continue
        text = EXTERNAL.sub("", f.read_text(encoding="utf-8", errors="replace"))
        found += [f"{rel}: {m.group(0)}" for m in HISTORY.finditer(text)]
    assert found == []


def test_the_stated_held_out_error_is_the_models():
    """The README and docs/prediction.md state the five-fold and leave-one-group-out errors; they are the
    model's (`python -m model calibrate --cv …`), recomputed here."""
    from model import calibrate

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    doc = (ROOT / "docs" / "prediction.md").read_text(encoding="utf-8")
    k5 = calibrate.built_in_cv("k5")
    med, p90 = f"{100 * k5.median_error:.1f} %", f"{100 * k5.p90_error:.1f} %"
    lo, hi = (f"{x:.2f}" for x in k5.band)
    assert f"median {med}, 90th percentile {p90}" in readme
    assert f"between {lo}× and {hi}×" in readme.replace("\n  ", " ")
    for by in ("k5", "model"):
        cv = calibrate.built_in_cv(by)
        row = (f"`python -m model calibrate --cv {by}` | {100 * cv.median_error:.1f} % | "
               f"{100 * cv.p90_error:.1f} % | {cv.band[0]:.2f}–{cv.band[1]:.2f} |")
        assert row in doc
