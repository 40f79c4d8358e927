"""Derivatives, the tanh approximation, the affine-fit experiment and the activation figures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit, ndtr

import ffnbook
from ffnbook import activation_figures, activations
from ffnbook.plotting import BookFigure

NAMES = ["relu", "gelu", "gelu_tanh", "silu", "identity"]


def _points(seed=0, n=400):
    x = np.random.default_rng(seed).uniform(-8, 8, n)
    return x[np.abs(x) > 1e-3]  # away from ReLU's kink


@pytest.mark.parametrize("name", NAMES)
def test_derivative_matches_central_difference(name):
    f, df = activations.get_activation(name), activations.get_derivative(name)
    x, h = _points(), 1e-6
    numeric = (f(x + h) - f(x - h)) / (2 * h)
    # truncation O(h^2) plus rounding O(eps/h) ~ 1e-10 for O(1) values
    np.testing.assert_allclose(df(x), numeric, atol=1e-8)


@pytest.mark.parametrize(
    "name, torch_fn",
    [
        ("relu", lambda t, F: F.relu(t)),
        ("gelu", lambda t, F: F.gelu(t, approximate="none")),
        ("gelu_tanh", lambda t, F: F.gelu(t, approximate="tanh")),
        ("silu", lambda t, F: F.silu(t)),
        ("identity", lambda t, F: t * 1.0),
    ],
)
def test_derivative_matches_torch_autograd(name, torch_fn):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = np.concatenate([_points(1), [0.0, -0.0]])  # include the kink: frameworks use slope 0
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    torch_fn(t, F).sum().backward()
    np.testing.assert_allclose(activations.get_derivative(name)(x), t.grad.numpy(), atol=1e-12)


def test_derivatives_from_textbook_formulas():
    x = _points(2)
    # GELU' = Phi + x phi, with scipy's normal CDF; SiLU' = s + x s (1 - s) with scipy's expit.
    phi = np.exp(-x**2 / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(activations.gelu_derivative(x), ndtr(x) + x * phi, atol=1e-14)
    s = expit(x)
    np.testing.assert_allclose(activations.silu_derivative(x), s + x * s * (1 - s), atol=1e-14)
    np.testing.assert_allclose(activations.sigmoid(x), s, atol=1e-15)
    assert np.array_equal(activations.relu_derivative(x), (x > 0).astype(float))


def test_the_autograd_and_finite_difference_checks_report_small_gaps():
    for row in activations.derivative_check_rows():
        assert type(row["finite_difference"]) is float and row["finite_difference"] < 1e-8
        assert row["autograd"] < 1e-12


def test_tanh_approximation_error_matches_a_continuous_maximiser():
    err = activations.tanh_approximation_error(-6.0, 6.0, 120001)
    assert type(err.max_abs_error) is float and type(err.at_x) is float
    # Independent: maximise |tanh form - exact| with a scalar optimiser bracketed around the
    # grid's answer; the grid (spacing 1e-4) can only under-estimate the true maximum.
    gap = lambda t: -abs(float(activations.gelu_tanh(np.array([t]))[0] - activations.gelu(np.array([t]))[0]))  # noqa: E731
    best = minimize_scalar(gap, bounds=(err.at_x - 0.5, err.at_x + 0.5), method="bounded",
                           options={"xatol": 1e-9})
    assert abs(best.x - err.at_x) < 1e-3
    assert err.max_abs_error <= -best.fun + 1e-15
    assert err.max_abs_error == pytest.approx(-best.fun, rel=1e-6)
    # The error is even: f(x) - f(-x) = x for both forms.
    assert -gap(-err.at_x) == pytest.approx(-gap(err.at_x), rel=1e-9)
    # The paper calls it an approximation, not an identity: the gap is small but nonzero.
    assert 0 < err.max_abs_error < 1e-3


def test_linear_ffn_collapses_and_relu_ffn_does_not(small_params):
    x = ffnbook.random_tokens((200, 16), seed=5)
    fits = activations.affine_fit_by_activation(x, small_params, ("identity", "relu", "gelu", "silu"))
    assert fits["identity"].relative_residual < 1e-12
    for name in ("relu", "gelu", "silu"):
        assert fits[name].relative_residual > 0.05
    # Same answer as the one-at-a-time function and as numpy's SVD-based lstsq.
    y = ffnbook.ffn(x, *small_params, activation="relu")
    design = np.hstack([x, np.ones((200, 1))])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    expected = np.linalg.norm(y - design @ coef) / np.linalg.norm(y - y.mean(axis=0))
    assert activations.best_affine_fit(x, y).relative_residual == pytest.approx(expected, rel=1e-10)
    assert fits["relu"].relative_residual == pytest.approx(expected, rel=1e-10)


def test_models_by_ffn_type_covers_the_sheet():
    groups = activations.models_by_ffn_type()
    from ffnbook.models import load_models

    assert sorted(sum(groups.values(), [])) == sorted(m.name for m in load_models())
    assert "T5-base v1.1" in groups["geglu"]


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda: activations.get_derivative("tanh"), ValueError, "unknown activation 'tanh'"),
        (lambda: activations.get_derivative(3), TypeError, "must be a name"),
        (lambda: activations.gelu_derivative(np.array([1, 2])), TypeError, "float32 or float64, got int64"),
        (lambda: activations.tanh_approximation_error(2.0, 1.0), ValueError, "lo < hi"),
        (lambda: activations.tanh_approximation_error(0.0, 1.0, 1), ValueError, "at least 2"),
        (lambda: activations.best_affine_fit(np.zeros((3, 4)), np.zeros((3, 1))), ValueError,
         "more samples than unknowns"),
        (lambda: activations.best_affine_fit(np.zeros((9, 2)), np.zeros((8, 1))), ValueError, "9 rows"),
        (lambda: activation_figures.activation_curves(("relu", "nope")), ValueError, "unknown activation"),
        (lambda: activation_figures.derivative_curves(lo=1.0, hi=0.0), ValueError, "lo < hi"),
    ],
)
def test_bad_input_is_refused(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


@pytest.mark.parametrize(
    "make",
    [activation_figures.activation_curves, activation_figures.derivative_curves,
     lambda: activation_figures.tanh_error_curve(-6.0, 6.0, 2001)],
)
def test_figures_render_to_svg(make):
    fig = make()
    assert isinstance(fig, BookFigure) and fig.description.strip()
    svg = fig.to_svg()
    assert svg.lstrip().startswith("<?xml") and "dimensionless" in svg  # axis labels carry units


def test_figure_alt_texts_carry_the_computed_landmarks():
    import math

    text = activation_figures.activation_curves().description
    assert "for inputs from -4 to 4" in text
    # GELU's minimum x·Φ(x) over the plotted grid, found here by brute force with math.erf.
    grid = [-4 + 8 * k / 1200 for k in range(1201)]
    gelu_min = min(x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in grid)
    assert f"GELU (exact) reaches {gelu_min:.3f}" in text

    slopes = activation_figures.derivative_curves().description
    assert "ReLU's slope runs from 0.000 to 1.000" in slopes

    tanh = activation_figures.tanh_error_curve(-6.0, 6.0, 120001).description
    err = activations.tanh_approximation_error(-6.0, 6.0, 120001)
    assert f"peaks at {err.max_abs_error:.1e} at ±{err.at_x:.2f}" in tanh
    shape = activation_figures.tanh_error_shape(-6.0, 6.0, 120001)
    assert shape.dip < 0 < shape.dip_at < err.at_x < shape.fades_beyond < 6.0
