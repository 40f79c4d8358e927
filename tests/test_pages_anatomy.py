"""The numbers and figures on the built anatomy page equal a fresh recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued_after, number, page_text

import ffnbook
from ffnbook import models

PAGE = "anatomy"


@pytest.fixture(scope="module")
def setup():
    base = models.get_model("Transformer base (Vaswani et al.)")
    params = ffnbook.init_ffn_params(base.d_model, base.d_ff, seed=0)
    x = ffnbook.random_tokens((2, 6, base.d_model), seed=0)
    return base, params, x


def test_widths(site, setup):
    base, _, _ = setup
    assert number(glued_after(site, PAGE, "the hidden layer is")) == base.d_ff / base.d_model
    text = page_text(site, PAGE)
    assert f"({2}, {6}, {base.d_ff})" in text  # the traced hidden shape, from the widths


def test_hidden_values(site, setup):
    base, _, x = setup
    assert number(glued_after(site, PAGE, "they become")) == x.shape[0] * x.shape[1] * base.d_ff


def test_active_fraction(site, setup):
    _, params, x = setup
    # Independent of ffnbook.anatomy: count positive pre-activations directly.
    per_position = ((x @ params.W1 + params.b1) > 0).mean(axis=-1).reshape(-1)
    assert glued_after(site, PAGE, "On average") == f"{per_position.mean():.1%}"
    assert glued_after(site, PAGE, "between") == f"{per_position.min():.1%}"
    assert f"{per_position.max():.1%}" in page_text(site, PAGE)


def test_equivalences_are_rounding_only(site):
    assert 0 <= number(glued_after(site, PAGE, "agree to")) < 1e-12
    assert 0 <= number(glued_after(site, PAGE, "differ by at most")) < 1e-12
