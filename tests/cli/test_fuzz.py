"""`python -m model` flags, fuzzed: every subcommand and flag the parser declares (read from
`cli.make_parser()`, so new subcommands are covered as they are added).

Any command line ends in exit 0 with output (strict JSON under --json), or exit 2 with exactly one
line on stderr starting "error:" and nothing on stdout — never exit 1 ("internal error", our bug),
never an exception, never a traceback, and within a few seconds.

Sizes: ROOFLINE_FUZZ_EXAMPLES (default 4) × 50 command lines in process, plus a few real
subprocesses (non-UTF-8 argv, options in odd places).  Under CI=true the examples are derandomised.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import cli, presets
from tests import ROOT
from tests.cli.helpers import refuse_non_finite

EXAMPLES = int(os.environ.get("ROOFLINE_FUZZ_EXAMPLES", "4")) * 50
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], print_blob=True)
CALL_SECONDS = 10.0

PARSER = cli.make_parser()
SUBCOMMANDS: dict[str, argparse.ArgumentParser] = next(
    a.choices for a in PARSER._actions if isinstance(a, argparse._SubParsersAction))

NUMBERS = ["1", "2", "8", "64", "0", "-0", "-1", "0.5", "1e-9", "1e3", "8192", "1e12", "1e308", "-1e308", "1e999",
           "nan", "-nan", "inf", "-inf", "Infinity", "1_000", " 3 ", "3.", ".5", "0x10", "1e", "e5", "", " ", "abc",
           "٣", "１", "1,2", "1,,2", ",", "1,2,3,4,5,6,7,8", "1;2", "--", "-", "9" * 400, "1" * 5000]
NAMES = ["h100", "H100", "b200", "llama-3.1-70b", "deepseek-v3", "lecture-gpu", "nope", "", " ", "../x", "h100~bw:1",
         "🦙", "<b>x</b>", "x" * 300]
JUNK = ["--nope", "-x", "x", "-", "--", "--json", "--json=1", "--batch", "--=1", "-1", "--hardware=", "🦙", "\x7f",
        "--help-me", "-j"]
SYSTEM = ["--hardware", "h100", "--model", "llama-3.1-70b"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    """Preset files to pass as --hardware/--model/--tiers: valid, wrong kind, malformed, missing, a folder."""
    d = tmp_path_factory.mktemp("cli-files")
    hw = presets.dump_item(presets.load("hardware")["h100"], "hardware", "mine")
    out = {"hw.yaml": hw, "hw.json": json.dumps(yaml.safe_load(hw)),
           "model.yaml": presets.dump_item(presets.load("model")["llama-3.1-70b"], "model", "mine"),
           "two.yaml": hw.replace("items:\n", "items:\n  other: {}\n"), "bad.yaml": "items: [", "empty.json": "",
           "kind.yaml": "schema: roofline-presets/1\nkind: [hardware]\nitems: {a: {}}", "bin.yaml": "\x00\xff"}
    paths = []
    for name, text in out.items():
        (d / name).write_text(text, encoding="utf-8", errors="surrogateescape")
        paths.append(str(d / name))
    return [*paths, str(d / "missing.yaml"), str(d), str(d / "no-such-dir" / "x.json")]


def _value(draw, action: argparse.Action, files: list[str]) -> str:
    if action.choices:
        return draw(st.sampled_from([*map(str, action.choices), "nope", "", "BF16"]))
    if action.metavar and ("FILE" in action.metavar or "NAME" in action.metavar or "KEYS" in action.metavar):
        return draw(st.sampled_from(NAMES + files))
    return draw(st.one_of(st.sampled_from(NUMBERS), st.floats().map(repr), st.integers(-(10 ** 20), 10 ** 20).map(str),
                          st.text(max_size=12)))


@st.composite
def command_lines(draw, files: list[str]) -> list[str]:
    shape = draw(st.sampled_from(["sub", "sub", "sub", "sub", "none", "unknown"]))
    if shape == "none":
        return draw(st.lists(st.sampled_from(JUNK + NUMBERS), max_size=3))
    if shape == "unknown":
        return [draw(st.sampled_from(["nope", "STEP", "step2", "", "-step"])),
                *draw(st.lists(st.sampled_from(JUNK), max_size=2))]
    name = draw(st.sampled_from(sorted(SUBCOMMANDS)))
    sub = SUBCOMMANDS[name]
    opts = [a for a in sub._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]
    positionals = [a for a in sub._actions if not a.option_strings]
    argv = [name]
    if any("--hardware" in a.option_strings for a in opts) and draw(st.booleans()):
        argv += SYSTEM                                   # get past the presets, into the arithmetic
    for _ in range(draw(st.integers(0, 6))):
        a = draw(st.sampled_from(opts))
        flag = draw(st.sampled_from(a.option_strings))
        if a.nargs == 0:
            argv.append(flag)
            continue
        v = _value(draw, a, files)
        form = draw(st.sampled_from(["sep", "sep", "eq", "missing", "abbrev"]))
        if form == "eq":
            argv.append(f"{flag}={v}")
        elif form == "missing":
            argv.append(flag)
        elif form == "abbrev" and len(flag) > 5:
            argv += [flag[:-2], v]
        else:
            argv += [flag, v]
    for a in positionals:
        if draw(st.booleans()):
            argv.append(_value(draw, a, files))
    if draw(st.integers(0, 4)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from(JUNK)))
    return argv


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as e:               # argparse's --help only
            code = e.code
    assert time.perf_counter() - t0 < CALL_SECONDS, f"{argv} took {time.perf_counter() - t0:.1f} s"
    return code, out.getvalue(), err.getvalue()


def check(argv: list[str]) -> None:
    code, out, err = run_main(argv)
    assert "Traceback" not in out + err, (argv, err)
    assert code != 1, f"internal error for {argv}: {err.strip()}"
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert out == "", (argv, out[:300])
        assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) > len("error: "), (argv, err)
    else:
        assert out.strip(), argv
        if "--json" in argv and argv[0] in SUBCOMMANDS:
            json.loads(out, parse_constant=refuse_non_finite)


def test_fuzzed_command_lines(files):
    @FUZZ
    @given(argv=command_lines(files))
    def run(argv):
        check(argv)
    run()


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_flag_of_every_subcommand_with_every_kind_of_bad_number(name, files):
    """Deterministic sweep: each numeric flag alone with each bad number, on top of a working system."""
    sub = SUBCOMMANDS[name]
    base = [name, *SYSTEM] if any("--hardware" in a.option_strings for a in sub._actions) else [name]
    numeric = [a for a in sub._actions if a.option_strings and a.type is not None and not a.choices]
    for a in numeric:
        for v in ("nan", "-inf", "1e999", "-1", "abc", "", "9" * 400):
            check([*base, f"{a.option_strings[0]}={v}"])


def test_a_huge_step_grid_is_refused_not_computed():
    """10,000 batches × 10,000 contexts would be 10⁸ rows (hours, tens of GB): refused up front."""
    many = ",".join(str(i + 1) for i in range(10_000))
    code, out, err = run_main(["step", *SYSTEM, "--batch", many, "--context", many, "--json"])
    assert code == 2 and out == "" and ("--context" in err or "--batch" in err), err


ARGV_BYTES = [
    [b"step", b"--batch", b"\xff\xfe"],
    [b"step", b"--hardware", b"h\xe9100"],
    [b"\xff"],
    [b"presets", b"--json", b"\xc3("],
    [b"step", b"--batch=-1e999", b"--hardware", b"h100", b"--model", b"llama-3.1-70b"],
]


@pytest.mark.parametrize("argv", ARGV_BYTES, ids=range(len(ARGV_BYTES)))
def test_real_process_with_undecodable_argv_exits_2_with_one_line(argv):
    r = subprocess.run([sys.executable.encode(), b"-m", b"model", *argv], cwd=ROOT, capture_output=True, timeout=60,
                       env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2, (r.returncode, err)
    assert r.stdout == b"" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err


ENDLESS = [["cache-tier", *SYSTEM, "--hold-seconds", "1", "--tiers", "/dev/zero"],
           ["step", "--hardware", "/dev/zero", "--model", "llama-3.1-70b"],
           ["step", "--hardware", "h100", "--model", "/dev/zero"]]


@pytest.mark.parametrize("argv", ENDLESS, ids=["tiers", "hardware", "model"])
def test_an_endless_file_is_refused_at_the_size_cap(argv):
    """A file argument is read only up to the preset size cap (+1 byte to see it is over).  Run under a
    1 GiB address-space limit, so a reader that does not stop fails fast instead of filling the machine."""
    limit = "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); " \
            "sys.argv = ['model', *sys.argv[1:]]; runpy.run_module('model', run_name='__main__')"
    r = subprocess.run([sys.executable, "-c", limit, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert f"{presets.MAX_FILE_BYTES:,}" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
