"""The test suite: its folders mirror the code (model, cli, presets, ui, app, browser, bench, deploy, docs)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository root."""
