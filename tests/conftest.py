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


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The whole book, built once per test session with `make html` into a temporary folder.

    Set FFNBOOK_SITE to an already built ``html`` folder to test it instead
    (quicker while writing tests; CI always builds).
    """
    import os
    from pathlib import Path

    from sitecheck import DOCS, make_html

    if os.environ.get("FFNBOOK_SITE"):
        return Path(os.environ["FFNBOOK_SITE"])

    build = tmp_path_factory.mktemp("site")
    result = make_html(DOCS, build)
    assert result.returncode == 0, f"make html failed:\n{result.stdout[-8000:]}\n{result.stderr[-8000:]}"
    return build / "html"
