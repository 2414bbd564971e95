"""Running the CLI for tests, in-process (fast) or as the real `python -m model` process: exit code and streams
checked, non-finite JSON numbers refused."""

from __future__ import annotations

import json
import subprocess
import sys

from model import cli
from tests import ROOT


def refuse_non_finite(token: str):
    """`json.loads(..., parse_constant=refuse_non_finite)`: NaN or ±Infinity in the CLI's JSON fail the test."""
    raise AssertionError(f"JSON holds {token}: non-finite values must be null")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """`python -m model ARGV` in-process: (exit code, stdout, stderr) — what the CLI wrote, not what the test
    wrote before it (an AppTest run in the same test may log to stderr first)."""
    capsys.readouterr()
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> dict:
    """`python -m model ARGV --json` in-process: exit 0, nothing on stderr, strict JSON on stdout."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    assert err == ""
    return json.loads(out, parse_constant=refuse_non_finite)


def run_text(capsys, *argv: str) -> str:
    """`python -m model ARGV` in-process: exit 0; the table it prints."""
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return out


def run_error(capsys, *argv: str) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr and no traceback; returns that line."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def module(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m model ARGV` as a real process from the repository root (text streams, never raises on its
    exit code)."""
    return subprocess.run([sys.executable, "-m", "model", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)


def module_error(*argv: str) -> str:
    """The real process: exit 2, nothing on stdout, exactly one line on stderr starting "error: " and no
    traceback; returns that line."""
    p = module(*argv)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in p.stderr, p.stderr
    return lines[0]
