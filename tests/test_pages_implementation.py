"""The implementation page shows what ffnbook.implementation computes now."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued_after, number

import ffnbook

torch = pytest.importorskip("torch")
from ffnbook import implementation  # noqa: E402

PAGE = "implementation"


@pytest.fixture(scope="module")
def ffn_case():
    params = ffnbook.init_ffn_params(512, 2048, seed=0)
    x = ffnbook.random_tokens((2, 5, 512), seed=0)
    return params, x


def test_cross_checks(site, ffn_case):
    params, x = ffn_case
    shown = glued_after(site, PAGE, "agree on a batch of sequences to within")
    assert shown == f"{ffnbook.numpy_torch_max_diff(x, params, 'gelu'):.2e}"
    relu = implementation.transformer_encoder_ffn_max_diff(params, x, "relu", nhead=8)
    gelu = implementation.transformer_encoder_ffn_max_diff(params, x, "gelu", nhead=8)
    assert glued_after(site, PAGE, "default activation, the two agree to within") == f"{relu:.2e}"
    assert glued_after(site, PAGE, "with exact GELU, to within") == f"{gelu:.2e}"
    assert number(glued_after(site, PAGE, "with exact GELU, to within")) < 1e-12
    shown = glued_after(site, PAGE, "The two agree to within")
    assert shown == f"{implementation.linear_positionwise_max_diff(x):.2e}"
    assert number(shown) < 1e-12


def test_precision_numbers(site, ffn_case):
    params, x = ffn_case
    c = implementation.precision_comparison(params, x[0], "gelu")
    f64 = glued_after(site, PAGE, "In float64 the largest difference is")
    f32 = glued_after(site, PAGE, "in float32 it is")
    assert (f64, f32) == (f"{c.float64:.2e}", f"{c.float32:.2e}")
    assert number(f32) > number(f64)
    assert glued_after(site, PAGE, "about") == f"{c.ratio:.1e}"
    assert glued_after(site, PAGE, "a ratio of") == f"{np.finfo(np.float32).eps / np.finfo(np.float64).eps:.1e}"


def test_dropout_numbers(site, ffn_case):
    params, x = ffn_case
    d = implementation.dropout_demo(params, x, "gelu", p=0.1)
    assert number(glued_after(site, PAGE, "give outputs that differ by up to")) > 0
    assert number(glued_after(site, PAGE, "In evaluation mode the two calls differ by")) == 0.0
    assert glued_after(site, PAGE, "multiplied the rest by") == f"{d.hidden_scale:.4f}" == f"{1 / 0.9:.4f}"


def test_init_numbers(site):
    scales = implementation.init_output_scale(512, 2048, activation="relu")
    assert glued_after(site, PAGE, "Xavier gives") == f"{scales['xavier_uniform']:.3f}"
    assert glued_after(site, PAGE, "LeCun after it gives") == f"{scales['he_lecun']:.3f}"
    assert glued_after(site, PAGE, "a standard deviation of") == f"{np.sqrt(1 / 18):.3f}"


def test_figure_has_alt_text(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 1
    assert len(imgs[0].get("alt", "").strip()) > 40
