"""GELU's tanh approximation against exact GELU."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from ffnbook import activations, tanh_approximation


def test_tanh_approximation_error_matches_a_continuous_maximiser():
    err = tanh_approximation.tanh_approximation_error(-6.0, 6.0, 120001)
    assert type(err.max_abs_error) is float and type(err.at_x) is float
    # Independent: maximise |tanh form - exact| with a scalar optimiser bracketed around the
    # grid's answer; the grid (spacing 1e-4) can only under-estimate the true maximum.
    gap = lambda t: -abs(float(activations.gelu_tanh(np.array([t]))[0] - activations.gelu(np.array([t]))[0]))  # noqa: E731
    best = minimize_scalar(gap, bounds=(err.at_x - 0.5, err.at_x + 0.5), method="bounded", options={"xatol": 1e-9})
    assert abs(best.x - err.at_x) < 1e-3
    assert err.max_abs_error <= -best.fun + 1e-15
    assert err.max_abs_error == pytest.approx(-best.fun, rel=1e-6)
    # The error is even: f(x) - f(-x) = x for both forms.
    assert -gap(-err.at_x) == pytest.approx(-gap(err.at_x), rel=1e-9)
    # The paper calls it an approximation, not an identity: the gap is small but nonzero.
    assert 0 < err.max_abs_error < 1e-3


def test_error_shape_landmarks_lie_in_order():
    err = tanh_approximation.tanh_approximation_error(-6.0, 6.0, 120001)
    shape = tanh_approximation.tanh_error_shape(-6.0, 6.0, 120001)
    assert shape.dip < 0 < shape.dip_at < err.at_x < shape.fades_beyond < 6.0
    # The dip is a minimum of the error curve: its neighbours on the grid lie above it.
    step = 12.0 / 120000
    for x in (shape.dip_at - step, shape.dip_at + step):
        assert float(tanh_approximation.tanh_minus_exact(np.array([x]))[0]) >= shape.dip


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tanh_approximation.tanh_approximation_error(2.0, 1.0), "lo < hi"),
        (lambda: tanh_approximation.tanh_approximation_error(0.0, 1.0, 1), "at least 2"),
        (lambda: tanh_approximation.tanh_error_shape(0.0, float("inf")), "hi must be a finite number, got inf"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
