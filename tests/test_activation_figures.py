"""The activations page's figures: they render, and their alt text carries the computed landmarks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ffnbook import activation_figures, activations, tanh_approximation
from ffnbook.plotting import BookFigure


@pytest.mark.parametrize(
    "make",
    [
        activation_figures.activation_curves,
        activation_figures.derivative_curves,
        lambda: activation_figures.tanh_error_curve(-6.0, 6.0, 2001),
    ],
)
def test_figures_render_to_svg(make):
    fig = make()
    assert isinstance(fig, BookFigure) and fig.description.strip()
    svg = fig.to_svg()
    assert svg.lstrip().startswith("<?xml") and "dimensionless" in svg  # axis labels carry units


def test_figure_alt_texts_carry_the_computed_landmarks():
    text = activation_figures.activation_curves().description
    assert "for inputs from -4 to 4" in text
    # GELU's minimum x·Φ(x) over the plotted grid, found here by brute force with math.erf.
    grid = [-4 + 8 * k / 1200 for k in range(1201)]
    gelu_min = min(x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in grid)
    assert f"{activations.LABELS['gelu']} reaches {gelu_min:.3f}" in text

    slopes = activation_figures.derivative_curves().description
    assert "ReLU's slope runs from 0.000 to 1.000" in slopes

    tanh = activation_figures.tanh_error_curve(-6.0, 6.0, 120001).description
    err = tanh_approximation.tanh_approximation_error(-6.0, 6.0, 120001)
    assert f"peaks at {err.max_abs_error:.1e} at ±{err.at_x:.2f}" in tanh
    shape = tanh_approximation.tanh_error_shape(-6.0, 6.0, 120001)
    assert f"dips to {shape.dip:.1e} near ±{shape.dip_at:.2f}" in tanh


def test_legends_use_the_one_label_set():
    fig = activation_figures.activation_curves(("relu", "gelu_tanh"))
    legend = [t.get_text() for t in fig.figure.axes[0].get_legend().get_texts()]
    assert legend == [activations.LABELS["relu"], activations.LABELS["gelu_tanh"]]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: activation_figures.activation_curves(("relu", "nope")), r"names\[1\] must be one of"),
        (lambda: activation_figures.activation_curves(()), "at least one"),
        (lambda: activation_figures.derivative_curves(lo=1.0, hi=0.0), "lo < hi"),
        (lambda: activation_figures.tanh_error_curve(0.0, np.nan), "hi must be a finite number, got nan"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
