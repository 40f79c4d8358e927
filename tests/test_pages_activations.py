"""The built activations page shows what ffnbook computes now."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sitecheck import figures, glued, page_text

import ffnbook

PAGE = "activations"


@pytest.fixture(scope="module")
def setup():
    return ffnbook.init_ffn_params(512, 2048, seed=0), ffnbook.random_tokens((1024, 512), seed=0)


def test_linear_collapse_numbers(site, setup):
    params, x = setup
    W, b = ffnbook.collapse_linear_ffn(*params)
    diff = float(np.max(np.abs(ffnbook.ffn(x, *params, activation="identity") - (x @ W + b))))
    assert diff < 1e-12 and 0 <= glued(site, PAGE, "ac_collapse_diff") < 1e-12
    assert (glued(site, PAGE, "ac_w_rows"), glued(site, PAGE, "ac_w_cols")) == (512, 512)
    assert glued(site, PAGE, "ac_n_tokens") == 1024
    assert (glued(site, PAGE, "ac_d_model"), glued(site, PAGE, "ac_d_ff")) == (512, 2048)  # the shapes of W


def test_affine_fit_numbers(site, setup):
    """Least squares by numpy's lstsq, independent of ffnbook.activations' QR."""
    params, x = setup
    design = np.hstack([x, np.ones((len(x), 1))])
    for name in ("identity", "relu", "gelu", "silu"):
        y = ffnbook.ffn(x, *params, activation=name)
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        relative = np.linalg.norm(y - design @ coef) / np.linalg.norm(y - y.mean(axis=0))
        assert glued(site, PAGE, f"ac_fit_{name}") == pytest.approx(relative, rel=1e-6, abs=1e-12)
    assert glued(site, PAGE, "ac_fit_identity") < 1e-12 < 0.1 < glued(site, PAGE, "ac_fit_relu")


def test_tanh_error_numbers(site):
    grid = np.linspace(-6.0, 6.0, 120001)
    exact = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in grid])
    tanh = 0.5 * grid * (1 + np.tanh(math.sqrt(2 / math.pi) * (grid + 0.044715 * grid**3)))
    err = np.abs(tanh - exact)
    assert glued(site, PAGE, "ac_tanh_max_error") == pytest.approx(err.max(), rel=1e-9)
    assert glued(site, PAGE, "ac_tanh_at_x") == pytest.approx(abs(grid[np.argmax(err)]), abs=1e-4)
    assert (glued(site, PAGE, "ac_tanh_lo"), glued(site, PAGE, "ac_tanh_hi"), glued(site, PAGE, "ac_tanh_n")) == (
        -6.0,
        6.0,
        120001,
    )


def test_derivative_checks(site):
    assert 0 < glued(site, PAGE, "ac_worst_fd") < 1e-8
    assert 0 <= glued(site, PAGE, "ac_worst_autograd") < 1e-12


def test_figure_alt_texts_are_computed_with_the_figures(site):
    # A glued BookFigure's text is its alt text (bookext.content.figurealt uses it when :alt: is absent).
    alts = [glued(site, PAGE, k) for k in ("ac_curves", "ac_derivatives", "ac_tanh_figure")]
    assert [img["alt"] for img in figures(site, PAGE)] == alts
    assert "from -4 to 4" in alts[0] and "from -6 to 6" in alts[2]
    err = glued(site, PAGE, "ac_tanh_max_error")
    assert f"peaks at {err:.1e}" in alts[2]


@pytest.mark.parametrize("name", ["ReLU", "GELU", "SiLU"])
def test_page_names_the_activations(site, name):
    assert name in page_text(site, PAGE)
