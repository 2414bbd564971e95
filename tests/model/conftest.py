"""Fixtures of the model tests alone (the shared specs they build on are in tests/conftest.py)."""

import pytest

from model import ModelArch


@pytest.fixture
def lecture_deepseek(deepseek) -> ModelArch:
    # The lecture's round numbers: 700B total, sparsity 8 ("32 of 256 experts").
    return deepseek.with_(total_params=700e9, active_params=87.5e9)
