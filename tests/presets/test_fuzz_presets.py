"""Uploaded preset files, fuzzed: `model.presets.parse_text` is what the Custom page and the CLI's
--hardware/--model FILE run on a user's bytes.

Whatever the bytes — malformed YAML or JSON, wrong types in any field, unknown fields, YAML tags that
would build Python objects, anchors expanding into a billion elements, files past the size cap —
the parser answers with the specs or a `PresetError` whose messages name what is wrong; it never
raises anything else, never runs code, and answers quickly.

Sizes: ROOFLINE_FUZZ_EXAMPLES (default 4) × 25 examples per property; the YAML bombs run in a
subprocess each (a hang or a blow-up cannot take the test run with it), with a time and memory cap.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import fields

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import presets
from model.presets import MAX_FILE_BYTES, PresetError
from tests import ROOT

EXAMPLES = int(os.environ.get("ROOFLINE_FUZZ_EXAMPLES", "4")) * 25
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], print_blob=True)
KINDS = sorted(presets.KINDS)
PARSE_SECONDS = 2.0           # any document under the size cap is judged within this


def parse(text, kind=None):
    """parse_text, which must return specs or raise PresetError (nothing else), within PARSE_SECONDS."""
    t0 = time.perf_counter()
    try:
        out = presets.parse_text(text, kind)
    except PresetError as e:
        assert e.problems and all(isinstance(p, str) and p.strip() for p in e.problems), e.problems
        out = e
    assert time.perf_counter() - t0 < PARSE_SECONDS
    return out


def doc_of(kind: str, key: str | None = None) -> dict:
    """A valid one-item document of `kind` (a built-in preset, as the app's download button writes it)."""
    items = presets.load(kind)
    key = key or next(iter(items))
    return yaml.safe_load(presets.dump_item(items[key], kind, key))


def number_fields(kind: str) -> list:
    return [f for f in fields(presets.KINDS[kind]) if f.metadata.get("kind") == "number"]


# ---------------------------------------------------------------- values

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10 ** 30), 10 ** 30), st.integers(-(10 ** 400), 10 ** 400),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["1e12", "1e400", ".nan", "-.inf", "0x10", "1_000", "yes", "no", "on", "~", "2023-03-01",
                     "<script>x</script>", "🦙", ""]),
)
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
    st.text(max_size=8) | st.integers(), kids, max_size=4), max_leaves=12)
# Values a number field can never take, whatever its range (all ranges here are within [0, inf)).
never_numbers = st.one_of(
    st.lists(st.integers(), max_size=3), st.dictionaries(st.sampled_from(["a", "b", "value_"]), st.integers(),
                                                         min_size=1, max_size=2),
    st.booleans(), st.sampled_from(["abc", "", "12 GB", "1e12x", "nan", "inf", "-inf", "<b>1</b>"]),
    st.sampled_from([math.nan, math.inf, -math.inf, -1.0, -1e300, -(10 ** 30)]),
)


def dump(doc, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(doc, default=str)
    return yaml.safe_dump(doc, allow_unicode=True)


# ---------------------------------------------------------------- properties

@FUZZ
@given(data=st.one_of(st.binary(max_size=400), st.text(max_size=400)), kind=st.sampled_from([None, *KINDS]))
def test_arbitrary_bytes_give_specs_or_a_preset_error(data, kind):
    parse(data, kind)


@FUZZ
@given(kind=st.sampled_from(KINDS), fmt=st.sampled_from(["yaml", "json"]), data=st.data())
def test_any_value_in_any_place_gives_specs_or_a_preset_error(kind, fmt, data):
    doc = doc_of(kind)
    (key, item), = doc["items"].items()
    where = data.draw(st.sampled_from(["field", "field", "field-value", "new-field", "top", "item", "items"]))
    v = data.draw(values)
    if where == "field":
        item[data.draw(st.sampled_from(sorted(item)))] = v
    elif where == "field-value":
        f = data.draw(st.sampled_from([k for k, x in item.items() if isinstance(x, dict)] or sorted(item)))
        if isinstance(item[f], dict):
            item[f][data.draw(st.sampled_from(["value", "source", "date", "uncertain", "note", "zz"]))] = v
        else:
            item[f] = v
    elif where == "new-field":
        item[data.draw(st.text(max_size=10))] = v
    elif where == "top":
        doc[data.draw(st.sampled_from(["schema", "kind", "items", "note", "zz"]))] = v
    elif where == "item":
        doc["items"][key] = v
    else:
        doc["items"] = {data.draw(st.text(max_size=10) | st.integers()): v}
    parse(dump(doc, fmt), data.draw(st.sampled_from([None, kind])))


@FUZZ
@given(kind=st.sampled_from(KINDS), fmt=st.sampled_from(["yaml", "json"]), data=st.data())
def test_a_bad_number_is_reported_by_field_name(kind, fmt, data):
    doc = doc_of(kind)
    (key, item), = doc["items"].items()
    f = data.draw(st.sampled_from(number_fields(kind)))
    bad = data.draw(never_numbers)
    if data.draw(st.booleans()) or f.name not in item:
        item[f.name] = {"value": bad, "source": "fuzz", "date": "2026"}
    else:
        item[f.name] = bad
    out = parse(dump(doc, fmt), kind)
    assert isinstance(out, PresetError), f"{kind}.{f.name} = {bad!r} was accepted"
    assert any(f.name in p for p in out.problems), (f.name, out.problems)


@pytest.mark.parametrize("kind", KINDS)
def test_every_builtin_preset_round_trips_through_its_download(kind):
    for key, spec in presets.load(kind).items():
        for fmt in ("yaml", "json"):
            out = parse(presets.dump_item(spec, kind, key, fmt=fmt), kind)
            assert not isinstance(out, PresetError), (key, fmt, out)
            assert out[key] == spec


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_source_or_date_or_a_wrong_kind_is_named(kind):
    doc = doc_of(kind)
    (key, item), = doc["items"].items()
    f = next(n for n, v in item.items() if isinstance(v, dict))
    item[f].pop("source")
    out = parse(dump(doc, "yaml"), kind)
    assert isinstance(out, PresetError) and any(f in p and "source" in p for p in out.problems), out
    other = next(k for k in KINDS if k != kind)
    out = parse(dump(doc_of(kind), "json"), other)
    assert isinstance(out, PresetError) and any(other in p and kind in p for p in out.problems), out


MALFORMED = [
    "", " ", "\n\n", "---", "--- \n...", "null", "[]", "{}", "42", "'text'", "{", "}", "[1, 2", "{'a': }",
    '{"schema": "roofline-presets/1", "kind": "hardware", "items": {"a": {"hbm_bytes": 1,}}}',   # JSON trailing comma
    '{"schema": "roofline-presets/1" "kind": "hardware"}', "schema: [unclosed", "a: b: c", "\t- tab indented",
    "schema: roofline-presets/1\nkind: hardware\nitems:\n  a:\n    hbm_bytes: 1\n   bad_indent: 2",
    "\ufeff" + json.dumps({"schema": "roofline-presets/1", "kind": "hardware", "items": {}}),
    "schema: roofline-presets/1\nkind: hardware\nitems: {a: {name: x, name: y}}",
    "%YAML 9.9\n---\na: 1", "%TAG ! tag:example.com,2000:\n---\n!foo 1", "! 1", "!!binary AAAA", "!!set {a, b}",
    "!!omap [a: 1, a: 2]", "!!timestamp 2001-12-14t21:59:43.10-05:00", "? [a, b]\n: c", "&a [*a]", "*unknown",
    "<?xml version='1.0'?><a/>", "\x00\x01\x02", "é: ü", "🦙: 🦙", "a: " + "[" * 200 + "]" * 200,
]


@pytest.mark.parametrize("text", MALFORMED, ids=range(len(MALFORMED)))
@pytest.mark.parametrize("kind", [None, "hardware"])
def test_malformed_documents_give_a_preset_error(text, kind):
    out = parse(text, kind)
    assert isinstance(out, PresetError), out
    out_b = parse(text.encode("utf-8"), kind)
    assert isinstance(out_b, PresetError)


def test_not_utf8_is_named():
    for data in (b"\xff\xfe\x00\x00", b"schema: \xe9t\xe9", "schema: x".encode("utf-16")):
        out = parse(data)
        assert isinstance(out, PresetError)
        assert any("UTF-8" in p or "YAML" in p for p in out.problems), out.problems


CANARY_TAGS = [
    "!!python/object/apply:os.system ['touch {canary}']",
    "!!python/object/apply:builtins.exec [\"open('{canary}', 'w').write('x')\"]",
    "!!python/object/new:builtins.exec [\"open('{canary}', 'w').write('x')\"]",
    "!!python/name:os.system",
    "!!python/module:os",
    "x: !!python/object/apply:subprocess.check_output [['touch', '{canary}']]",
    "schema: roofline-presets/1\nkind: hardware\n"
    "items: {{a: {{name: !!python/object/apply:os.system ['touch {canary}']}}}}",
]


@pytest.mark.parametrize("template", CANARY_TAGS, ids=range(len(CANARY_TAGS)))
def test_python_tags_are_refused_and_nothing_runs(template, tmp_path):
    canary = tmp_path / "ran"
    out = parse(template.format(canary=canary))
    assert isinstance(out, PresetError), out
    assert any("YAML" in p for p in out.problems), out.problems
    assert not canary.exists(), "a YAML tag ran code"


def test_files_past_the_cap_are_refused_unread():
    ok_doc = dump(doc_of("hardware"), "yaml")
    padded = ok_doc + "#" * (MAX_FILE_BYTES - len(ok_doc.encode()))          # a comment: still a valid file
    assert len(padded.encode()) == MAX_FILE_BYTES
    assert not isinstance(parse(padded), PresetError)
    for size in (MAX_FILE_BYTES + 1, 10 * MAX_FILE_BYTES, 50_000_000):
        big = (ok_doc + "#" * size)[:size].encode()
        t0 = time.perf_counter()
        out = parse(big)
        assert isinstance(out, PresetError) and any(f"{MAX_FILE_BYTES:,}" in p for p in out.problems), out
        assert time.perf_counter() - t0 < 0.5, "an oversized file must be refused before it is parsed"
    assert isinstance(parse("a" * (MAX_FILE_BYTES + 1)), PresetError)          # the str path too


# ---------------------------------------------------------------- YAML bombs (each in a subprocess)

def _laughs(levels: int = 9, width: int = 9) -> tuple[str, str]:
    """Anchors defined inside an allowed key ('note'); the last alias stands for width**levels strings."""
    defs = ['&a0 [' + ", ".join(['"lol"'] * width) + ']']
    defs += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "note: [" + ", ".join(defs) + "]\n", f"*a{levels - 1}"


_DEFS, _REF = _laughs()
_HEAD = "schema: roofline-presets/1\nkind: hardware\n"
BOMBS = {
    "schema": _DEFS + f"schema: {_REF}\nkind: hardware\nitems: {{a: {{}}}}",
    "kind": _DEFS + f"schema: roofline-presets/1\nkind: {_REF}\nitems: {{a: {{}}}}",
    "items": _DEFS + _HEAD + f"items: {_REF}",
    "item": _DEFS + _HEAD + f"items: {{a: {_REF}}}",
    "name": _DEFS + _HEAD + f"items: {{a: {{name: {_REF}}}}}",
    "entry source": _DEFS + _HEAD + f"items: {{a: {{source: {_REF}, date: d, hbm_bytes: 1}}}}",
    "entry date": _DEFS + _HEAD + f"items: {{a: {{source: s, date: {_REF}, hbm_bytes: 1}}}}",
    "number": _DEFS + _HEAD + f"items: {{a: {{source: s, date: d, hbm_bytes: {_REF}}}}}",
    "number value": _DEFS + _HEAD + f"items: {{a: {{source: s, date: d, hbm_bytes: {{value: {_REF}}}}}}}",
    "uncertain": _DEFS + _HEAD + f"items: {{a: {{source: s, date: d, hbm_bytes: {{value: 1, uncertain: {_REF}}}}}}}",
    "field note": _DEFS + _HEAD + f"items: {{a: {{source: s, date: d, hbm_bytes: {{value: 1, note: {_REF}}}}}}}",
    "unknown field": _DEFS + _HEAD + f"items: {{a: {{{_REF[1:]}x: {_REF}}}}}",
    "top-level key": _DEFS + _HEAD + f"items: {{a: {{}}}}\nzz: {_REF}",
}
BOMB_SCRIPT = textwrap.dedent("""
    import resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))      # 1 GiB: a blow-up fails fast, not the machine
    sys.path.insert(0, sys.argv[1])
    from model import presets
    text = sys.stdin.read()
    t0 = time.perf_counter()
    try:
        presets.parse_text(text.encode())
        print("accepted")
    except presets.PresetError as e:
        print("PresetError", time.perf_counter() - t0, e.problems[0][:200])
    """)


@pytest.mark.parametrize("where", list(BOMBS))
def test_yaml_bombs_are_refused_quickly(where):
    text = BOMBS[where]
    assert len(text.encode()) < 1000                  # a few hundred bytes …
    try:
        r = subprocess.run([sys.executable, "-c", BOMB_SCRIPT, str(ROOT)], input=text, capture_output=True,
                           text=True, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail(f"YAML bomb in {where!r}: parse_text still running after 15 s (9**9 = 387M aliased "
                    "elements are being expanded)", pytrace=False)
    assert r.returncode == 0, f"YAML bomb in {where!r}: {r.stderr.strip().splitlines()[-1:]}"
    assert r.stdout.startswith("PresetError"), r.stdout
    assert float(r.stdout.split()[1]) < PARSE_SECONDS, r.stdout


@pytest.mark.parametrize("digits", [20, 400, 4299, 5000, 100_000])
@pytest.mark.parametrize("where", ["number", "name", "top"])
def test_huge_integers_are_reported(digits, where):
    """400 digits overflow a float; past 4,300 digits Python refuses to read the integer at all."""
    n = "9" * digits
    body = {"number": f"items: {{a: {{source: s, date: d, hbm_bytes: {n}}}}}",
            "name": f"items: {{a: {{name: {n}}}}}",
            "top": f"items: {{a: {{}}}}\nnote: {n}"}[where]
    out = parse("schema: roofline-presets/1\nkind: hardware\n" + body)
    assert isinstance(out, PresetError), out
    if where == "number" and 400 <= digits < 4300:
        assert any("hbm_bytes" in p for p in out.problems), out.problems       # overflows a float
    if digits > 4300:
        assert any("digits" in p for p in out.problems), out.problems          # unreadable: said so
