"""The numbers and figures on the built anatomy page equal a fresh recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued, page_text

import ffnbook

PAGE = "anatomy"
D_MODEL, D_FF = 512, 2048  # the base transformer (Vaswani et al., 2017)


@pytest.fixture(scope="module")
def setup():
    params = ffnbook.init_ffn_params(D_MODEL, D_FF, seed=0)
    x = ffnbook.random_tokens((2, 6, D_MODEL), seed=0)
    return params, x


def test_widths(site):
    assert (glued(site, PAGE, "an_d_model"), glued(site, PAGE, "an_d_ff")) == (D_MODEL, D_FF)
    assert glued(site, PAGE, "an_ratio") == D_FF / D_MODEL
    assert f"(2, 6, {D_FF})" in page_text(site, PAGE)  # the traced hidden shape


def test_batch_and_hidden_values(site):
    assert (glued(site, PAGE, "an_batch"), glued(site, PAGE, "an_seq_len")) == (2, 6)
    assert glued(site, PAGE, "an_positions") == 2 * 6
    assert glued(site, PAGE, "an_hidden_values") == 2 * 6 * D_FF


def test_active_fraction(site, setup):
    params, x = setup
    # Independent of ffnbook.anatomy: count positive pre-activations directly.
    per_position = ((x @ params.W1 + params.b1) > 0).mean(axis=-1).reshape(-1)
    assert glued(site, PAGE, "an_active_mean") == pytest.approx(per_position.mean(), rel=1e-15)
    assert glued(site, PAGE, "an_active_lowest") == per_position.min()
    assert glued(site, PAGE, "an_active_highest") == per_position.max()


def test_figure_alt_text_is_computed_with_the_figure(site, setup):
    params, x = setup
    alt = glued(site, PAGE, "an_hidden_figure")  # the figure's text is its alt text
    per_position = ((x @ params.W1 + params.b1) > 0).mean(axis=-1).reshape(-1)
    assert f"between {per_position.min():.1%} and {per_position.max():.1%}" in alt
    assert f"{2 * 6 * D_FF:,} hidden values" in alt
    assert [img["alt"] for img in figures(site, PAGE)] == [alt]


def test_equivalences_are_rounding_only(site, setup):
    params, x = setup
    W, b = ffnbook.collapse_linear_ffn(*params)
    collapse = float(np.abs(x @ W + b - ffnbook.ffn(x, *params, activation="identity")).max())
    assert collapse < 1e-12 and 0 <= glued(site, PAGE, "an_collapse_diff") < 1e-12
    assert 0 <= glued(site, PAGE, "an_conv_diff") < 1e-12
