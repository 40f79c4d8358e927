"""The NumPy FFN against independent re-derivations of the same mathematics."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ffnbook


def reference_ffn(x, params, act):
    """Position by position, with explicit sums: no matmul broadcasting involved."""
    W1, b1, W2, b2 = params
    flat = x.reshape(-1, x.shape[-1])
    out = np.empty_like(flat)
    for n, row in enumerate(flat):
        hidden = np.array([act(sum(row[i] * W1[i, j] for i in range(len(row))) + b1[j]) for j in range(W1.shape[1])])
        out[n] = [sum(hidden[j] * W2[j, k] for j in range(len(hidden))) + b2[k] for k in range(W2.shape[1])]
    return out.reshape(x.shape)


SCALAR_ACTIVATIONS = {
    "relu": lambda v: max(v, 0.0),
    "gelu": lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))),
    "gelu_tanh": lambda v: 0.5 * v * (1.0 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))),
    "silu": lambda v: v / (1.0 + math.exp(-v)),
    "identity": lambda v: v,
}


@pytest.mark.parametrize("name", sorted(SCALAR_ACTIVATIONS))
def test_ffn_matches_scalar_reference(name):
    params = ffnbook.init_ffn_params(5, 9, seed=11)
    x = ffnbook.random_tokens((2, 3, 5), seed=12)
    expected = reference_ffn(x, params, SCALAR_ACTIVATIONS[name])
    got = ffnbook.ffn(x, *params, activation=name)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SCALAR_ACTIVATIONS))
def test_activation_elementwise_values(name):
    grid = np.linspace(-6, 6, 121)
    expected = np.array([SCALAR_ACTIVATIONS[name](v) for v in grid])
    np.testing.assert_allclose(ffnbook.ACTIVATIONS[name](grid), expected, rtol=1e-12, atol=1e-14)


def test_gelu_is_x_times_normal_cdf_at_table_values():
    # Phi(1) = 0.841344746..., Phi(-1) = 1 - Phi(1), from the standard normal table.
    phi_1 = 0.8413447460685429
    np.testing.assert_allclose(ffnbook.gelu(np.array([1.0, -1.0, 0.0])), [phi_1, -(1 - phi_1), 0.0], atol=1e-15)


def test_gelu_tanh_approximation_is_close_but_not_exact():
    grid = np.linspace(-5, 5, 2001)
    gap = np.abs(ffnbook.gelu(grid) - ffnbook.gelu_tanh(grid)).max()
    assert 0 < gap < 1e-3


@pytest.mark.parametrize("shape", [(16,), (7, 16), (2, 7, 16), (2, 3, 4, 16)])
def test_any_leading_shape_is_kept(small_params, shape):
    x = ffnbook.random_tokens(shape, seed=0)
    y = ffnbook.ffn(x, *small_params)
    assert y.shape == shape
    # The leading axes are just positions: the flattened computation agrees.
    flat = ffnbook.ffn(x.reshape(-1, 16), *small_params).reshape(shape)
    np.testing.assert_allclose(y, flat, atol=1e-13, rtol=0)


def test_float32_in_float32_out(small_params):
    p32 = small_params.astype(np.float32)
    x = ffnbook.random_tokens((3, 16), seed=1, dtype=np.float32)
    y = ffnbook.ffn(x, *p32, activation="gelu")
    assert y.dtype == np.float32
    y64 = ffnbook.ffn(x.astype(np.float64), *p32.astype(np.float64), activation="gelu")
    np.testing.assert_allclose(y, y64, atol=1e-5)


def test_init_is_seeded_and_scaled():
    a = ffnbook.init_ffn_params(64, 256, seed=5)
    b = ffnbook.init_ffn_params(64, 256, seed=5)
    c = ffnbook.init_ffn_params(64, 256, seed=6)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert not np.array_equal(a.W1, c.W1)
    # nn.Linear's default bound: |w| <= 1/sqrt(fan_in).
    assert np.abs(a.W1).max() <= 1 / np.sqrt(64)
    assert np.abs(a.W2).max() <= 1 / np.sqrt(256)
    assert (a.d_model, a.d_ff) == (64, 256)


def test_without_activation_the_ffn_is_one_affine_map(small_params):
    W1, b1, W2, b2 = small_params
    x = ffnbook.random_tokens((5, 16), seed=9)
    collapsed = x @ (W1 @ W2) + (b1 @ W2 + b2)
    np.testing.assert_allclose(ffnbook.ffn(x, *small_params, activation="identity"), collapsed, atol=1e-12)
