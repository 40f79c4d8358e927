"""The activations' derivatives: closed forms against finite differences, torch autograd and textbook formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit, ndtr

from ffnbook import activations, derivatives

NAMES = ["relu", "gelu", "gelu_tanh", "silu", "identity"]


def _points(seed=0, n=400):
    x = np.random.default_rng(seed).uniform(-8, 8, n)
    return x[np.abs(x) > 1e-3]  # away from ReLU's kink


def test_every_activation_has_a_derivative():
    assert set(derivatives.DERIVATIVES) == set(activations.ACTIVATIONS)


@pytest.mark.parametrize("name", NAMES)
def test_derivative_matches_central_difference(name):
    f, df = activations.get_activation(name), derivatives.get_derivative(name)
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
    np.testing.assert_allclose(derivatives.get_derivative(name)(x), t.grad.numpy(), atol=1e-12)


def test_derivatives_from_textbook_formulas():
    x = _points(2)
    # GELU' = Phi + x phi, with scipy's normal CDF; SiLU' = s + x s (1 - s) with scipy's expit.
    phi = np.exp(-(x**2) / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(derivatives.gelu_derivative(x), ndtr(x) + x * phi, atol=1e-14)
    s = expit(x)
    np.testing.assert_allclose(derivatives.silu_derivative(x), s + x * s * (1 - s), atol=1e-14)
    np.testing.assert_allclose(activations.sigmoid(x), s, atol=1e-15)
    assert np.array_equal(derivatives.relu_derivative(x), (x > 0).astype(float))


def test_the_autograd_and_finite_difference_checks_report_small_gaps():
    for row in derivatives.derivative_check_rows():
        assert type(row["finite_difference"]) is float and row["finite_difference"] < 1e-8
        assert row["autograd"] < 1e-12


def test_the_check_table_names_activations_by_their_labels():
    table = derivatives.derivative_check_table(("relu", "gelu_tanh"))._repr_markdown_()
    assert f"| {activations.LABELS['gelu_tanh']} |" in table


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda: derivatives.get_derivative("tanh"), ValueError, "unknown activation 'tanh'"),
        (lambda: derivatives.get_derivative(3), TypeError, "must be a name"),
        (lambda: derivatives.gelu_derivative(np.array(["1", "2"])), TypeError, "float32 or float64"),
        (lambda: derivatives.finite_difference_error("relu", 1.0, 0.0), ValueError, "lo < hi"),
        (lambda: derivatives.autograd_error("relu", n=1), ValueError, "at least 2"),
    ],
)
def test_bad_input_is_refused(call, exc, message):
    with pytest.raises(exc, match=message):
        call()
