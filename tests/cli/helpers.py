"""Running the CLI in-process for tests: JSON out, exit code checked, non-finite numbers refused."""

from __future__ import annotations

import json

from model import cli


def _no_nan(token: str):
    raise AssertionError(f"JSON holds {token}: non-finite values must be null")


def run_json(capsys, *argv: str) -> dict:
    """`python -m model ARGV --json` in-process: exit 0, nothing on stderr, strict JSON on stdout."""
    code = cli.main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    return json.loads(out, parse_constant=_no_nan)
