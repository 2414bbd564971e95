"""Every built-in preset figure cites a public document a reader can open: a full https URL (a paper by
its arXiv or DOI link), never a private notes file or a path outside the repository, and a real date.

The checks read the YAML files themselves (every `source:` on an entry or a field, wherever it sits),
and again through the loader (the source and date each number actually ends up with), so a figure that
inherits its entry's source is held to the same rule.
"""

import re
from urllib.parse import urlsplit

import pytest
import yaml

from model import presets
from tests import ROOT

PRESET_DIR = ROOT / "presets"
FILES = sorted(PRESET_DIR.glob("*.yaml"))
KINDS = ("hardware", "model", "price", "tier", "measurement")

# What a reader cannot follow: the project's private notes, local or relative paths, other schemes.
PRIVATE = re.compile(r"presets_reference|shared/reference|/work/|file:|~/|\\\\|\.\./", re.I)
URL = re.compile(r"https?://[^\s;,)'\"]+")
# A web address written without its scheme ("deploybase.ai/articles/x", "gpu.blog"): not followable as is.
BARE_HOST = re.compile(r"(?<![\w@.-])(?:[a-z0-9-]+\.)+(?:com|org|net|io|ai|dev|co|app|blog|wiki|store|edu|gov|info|"
                       r"me|sh|jp|kr|uk|ru|cn|cz|lt|xyz|fyi|google|tech)(?=[/\s;,)'\"]|$)", re.I)
# A file path ("docs/source/x.md", "/opt/notes.txt") outside a URL.
PATH = re.compile(r"(?:^|[\s(])(?:/|[\w.-]+/)[\w./-]*\.(?:md|txt|pdf|json|ya?ml|csv|py|html?|mdx)\b", re.I)
DATE = re.compile(r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$")
PRIVATE_HOST = re.compile(r"^(localhost|127\.|10\.|192\.168\.|0\.0\.0\.0)|\.(local|internal|lan)$", re.I)


def source_problems(source) -> list[str]:
    """Why a source string is not a public, followable citation ([] when it is)."""
    if not isinstance(source, str) or not source.strip():
        return ["empty source"]
    problems = []
    if PRIVATE.search(source):
        problems.append("points at a private file or a path outside the repository")
    urls = URL.findall(source)
    if not urls:
        problems.append("no https URL")
    for u in urls:
        parts = urlsplit(u.rstrip("."))
        if parts.scheme != "https":
            problems.append(f"not https: {u}")
        host = parts.hostname or ""
        if "." not in host or PRIVATE_HOST.search(host):
            problems.append(f"not a public host: {u}")
    rest = URL.sub(" ", source)
    if m := BARE_HOST.search(rest):
        problems.append(f"web address without https://: {m.group(0)!r}")
    if m := PATH.search(rest):
        problems.append(f"file path outside a URL: {m.group(0).strip()!r}")
    if re.search(r"\barXiv\b", source, re.I) and not re.search(r"https://arxiv\.org/(abs|pdf)/\d{4}\.\d{4,5}", source):
        problems.append("cites arXiv without an https://arxiv.org link")
    if re.search(r"\bdoi\b", source, re.I) and not re.search(r"https://(dx\.)?doi\.org/10\.", source):
        problems.append("cites a DOI without an https://doi.org link")
    return problems


def _sources_in(node, where):
    """(location, source) for every `source:` key anywhere in a parsed YAML document."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "source":
                yield where, v
            else:
                yield from _sources_in(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _sources_in(v, f"{where}[{i}]")


def all_sources():
    return [(f"{f.name}:{w}", s) for f in FILES for w, s in _sources_in(yaml.safe_load(f.read_text()), "")]


# ----------------------------------------------------------------------------- the checker itself

@pytest.mark.parametrize("bad,why", [
    ("presets_reference.md A.1 (HGX H100: 8 GPUs)", "private"),
    ("NVLink5 per direction; presets_reference.md A.1", "private"),
    ("see /work/shared/reference/notes.md", "private"),
    ("", "empty"),
    ("   ", "empty"),
    (None, "empty"),
    ("NVIDIA H100 datasheet", "no https URL"),
    ("deploybase.ai/articles/gemini-2.5-pricing", "no https URL"),
    ("Pricing page: https://example.com/p; deploybase.ai/articles/x", "without https"),
    ("Notes: http://example.com/page", "not https"),
    ("Local copy: https://localhost/notes", "not a public host"),
    ("Config at https://huggingface.co/x/y and docs/source/perf-overview.md", "file path"),
    ("DeepSeek-V3 technical report (arXiv 2412.19437)", "arXiv"),
    ("Some paper, doi 10.1145/3458817: https://example.org/paper", "DOI"),
])
def test_the_checker_rejects_what_a_reader_cannot_follow(bad, why):
    problems = source_problems(bad)
    assert problems and any(why.lower() in p.lower() for p in problems), problems


@pytest.mark.parametrize("good", [
    "NVIDIA DGX BasePOD RA, 'Core Components' (2024): https://docs.nvidia.com/dgx-basepod/x/core-components.html",
    "DeepSeek-V3 Technical Report (arXiv 2412.19437, 2024-12): https://arxiv.org/abs/2412.19437",
    "derived: fp8 / 2 from the rack figure (https://megaobzor.com/a.html)",
    "Config: https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json; docs: https://huggingface.co/docs/x",
    "A paper (doi 10.1145/1): https://doi.org/10.1145/1",
])
def test_the_checker_accepts_public_citations(good):
    assert source_problems(good) == []


# ----------------------------------------------------------------------------- the presets

def test_sources_were_found_in_every_preset_file():
    # Guards the checks below against silently checking nothing: every file cites something.
    files = {loc.split(":")[0] for loc, _ in all_sources()}
    assert files == {f.name for f in FILES} and len(FILES) == 5


def test_every_source_in_the_yaml_is_a_public_https_citation():
    bad = {loc: p for loc, s in all_sources() if (p := source_problems(s))}
    assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())


def test_no_preset_file_mentions_the_private_notes():
    # Notes, comments and sources alike: a reader of presets/ cannot open the project's notes file.
    for f in [*FILES, PRESET_DIR / "README.md"]:
        text = f.read_text()
        assert not re.search(r"presets_reference|shared/reference", text), f.name


@pytest.mark.parametrize("kind", KINDS)
def test_every_number_has_a_followable_source_and_a_real_date(kind):
    items = presets.load(kind)
    assert items
    checked = 0
    for key, spec in items.items():
        for field, m in spec.meta.items():
            assert not source_problems(m.source), f"{kind} {key}.{field}: {source_problems(m.source)}"
            assert DATE.match(m.date), f"{kind} {key}.{field}: date {m.date!r} is not YYYY, YYYY-MM or YYYY-MM-DD"
            assert 2000 <= int(m.date[:4]) <= 2030, f"{kind} {key}.{field}: date {m.date!r}"
            if m.uncertain:
                assert m.note.strip(), f"{kind} {key}.{field}: flagged uncertain without a note saying why"
            checked += 1
    assert checked >= len(items)        # every entry carries at least one sourced number


def test_the_opus_long_context_tier_is_attributed_to_opus_4_6_and_dated():
    # Anthropic's pricing page: Claude Opus 4.6 with the 1M-token context beta paid 2x input ($5 -> $10) and
    # 1.5x output ($25 -> $37.50) above 200K tokens of prompt, until the 1M window went GA at standard rates
    # on 2026-03-13. Opus 4.7 (launched 2026-04-16) never had the tier.
    offers = presets.price_presets()
    o46, o47 = offers["claude-opus-4.6"], offers["claude-opus-4.7"]
    assert (o46.long_context_threshold_tokens, o46.long_context_input_usd_per_mtok,
            o46.long_context_output_usd_per_mtok) == (200e3, 2 * 5, 1.5 * 25)
    for f in ("long_context_threshold_tokens", "long_context_input_usd_per_mtok", "long_context_output_usd_per_mtok"):
        m = o46.meta[f]
        assert "Opus 4.6" in m.source and "platform.claude.com" in m.source and m.date == "2026-02"
        assert m.uncertain and "2026-03-13" in m.note
    assert o47.long_context_threshold_tokens is None and o47.long_context_input_usd_per_mtok is None
