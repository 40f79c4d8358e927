"""Why the FFN needs a nonlinearity: the best affine fit of its outputs."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook
from ffnbook import nonlinearity


def test_linear_ffn_collapses_and_relu_ffn_does_not(small_params):
    x = ffnbook.random_tokens((200, 16), seed=5)
    fits = nonlinearity.affine_fit_by_activation(x, small_params, ("identity", "relu", "gelu", "silu"))
    assert fits["identity"].relative_residual < 1e-12
    for name in ("relu", "gelu", "silu"):
        assert fits[name].relative_residual > 0.05
    # Same answer as the one-at-a-time function and as numpy's SVD-based lstsq.
    y = ffnbook.ffn(x, *small_params, activation="relu")
    design = np.hstack([x, np.ones((200, 1))])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    expected = np.linalg.norm(y - design @ coef) / np.linalg.norm(y - y.mean(axis=0))
    assert nonlinearity.best_affine_fit(x, y).relative_residual == pytest.approx(expected, rel=1e-10)
    assert fits["relu"].relative_residual == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: nonlinearity.best_affine_fit(np.zeros((3, 4)), np.zeros((3, 1))), "more samples than unknowns"),
        (lambda: nonlinearity.best_affine_fit(np.zeros((9, 2)), np.zeros((8, 1))), "9 rows"),
        (lambda: nonlinearity.best_affine_fit(np.zeros(9), np.zeros((9, 1))), "must be 2-D"),
        (lambda: nonlinearity.best_affine_fit(np.full((9, 2), np.nan), np.zeros((9, 1))), "must be finite"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
