"""Shared fixtures: small, seeded FFN weights and inputs."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook


@pytest.fixture
def small_params() -> ffnbook.FFNParams:
    return ffnbook.init_ffn_params(16, 64, seed=3)


@pytest.fixture
def tokens() -> np.ndarray:
    return ffnbook.random_tokens((2, 7, 16), seed=4)
