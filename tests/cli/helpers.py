"""Running the CLI in-process for tests: exit code and streams checked, non-finite JSON numbers refused."""

from __future__ import annotations

import json

from model import cli


def _no_nan(token: str):
    raise AssertionError(f"JSON holds {token}: non-finite values must be null")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """`python -m model ARGV` in-process: (exit code, stdout, stderr)."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> dict:
    """`python -m model ARGV --json` in-process: exit 0, nothing on stderr, strict JSON on stdout."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    assert err == ""
    return json.loads(out, parse_constant=_no_nan)


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
