"""The built activations page shows what ffnbook computes now."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued_after, number, page_text

import ffnbook
from ffnbook import activations

PAGE = "activations"


def test_linear_collapse_numbers(site):
    params = ffnbook.init_ffn_params(512, 2048, seed=0)
    x = ffnbook.random_tokens((1024, 512), seed=0)
    W, b = ffnbook.collapse_linear_ffn(*params)
    diff = float(np.max(np.abs(ffnbook.ffn(x, *params, activation="identity") - (x @ W + b))))
    shown = glued_after(site, PAGE, "give outputs that differ by at most")
    assert shown == f"{diff:.1e}"
    assert number(shown) < 1e-12  # rounding only: the two computations are the same map
    assert "the single 512 × 512 matrix" in page_text(site, PAGE)


def test_affine_fit_numbers(site):
    params = ffnbook.init_ffn_params(512, 2048, seed=0)
    x = ffnbook.random_tokens((1024, 512), seed=0)
    fits = activations.affine_fit_by_activation(x, params, ("identity", "relu", "gelu", "silu"))
    assert glued_after(site, PAGE, "With ReLU it leaves") == f"{fits['relu'].relative_residual:.1%}"
    assert glued_after(site, PAGE, "with GELU") == f"{fits['gelu'].relative_residual:.1%}"
    identity = glued_after(site, PAGE, "Without an activation the best affine map leaves")
    assert identity == f"{fits['identity'].relative_residual:.1e}" and number(identity) < 1e-12
    assert number(glued_after(site, PAGE, "With ReLU it leaves")) > 0.1


def test_tanh_error_numbers(site):
    err = activations.tanh_approximation_error(-6.0, 6.0, 120001)
    shown = glued_after(site, PAGE, "between the tanh form and exact GELU is")
    assert shown == f"{err.max_abs_error:.2e}"
    assert 0 < number(shown) < 1e-3
    assert glued_after(site, PAGE, "reached at") == f"{err.at_x:.2f}"


@pytest.mark.parametrize("name", ["ReLU", "GELU", "SiLU"])
def test_page_names_the_activations(site, name):
    assert name in page_text(site, PAGE)
