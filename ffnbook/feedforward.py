"""The position-wise feed-forward network in NumPy.

The FFN of a transformer block maps every position's vector ``x`` (width
``d_model``) through a wider hidden layer (width ``d_ff``) and back::

    FFN(x) = activation(x @ W1 + b1) @ W2 + b2

with ``W1`` of shape ``(d_model, d_ff)`` and ``W2`` of shape ``(d_ff, d_model)``
(the row-vector convention of Vaswani et al., 2017). :func:`ffn` applies this
to the last axis of an array of any leading shape: ``(d_model,)``,
``(seq_len, d_model)``, ``(batch, seq_len, d_model)`` and so on.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import (
    as_float_array,
    describe,
    float_arrays,
    float_dtype,
    require_bundle,
    require_finite,
    require_finite_and_one_dtype,
    require_positive_int,
    require_seed,
    require_shape,
)
from .activations import get_activation


class FFNParams(NamedTuple):
    """The four arrays of one FFN. Unpacks into :func:`ffn`: ``ffn(x, *params)``."""

    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray

    @property
    def d_model(self) -> int:
        return int(self.W1.shape[0])

    @property
    def d_ff(self) -> int:
        return int(self.W1.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return self.W1.dtype

    def astype(self, dtype) -> FFNParams:
        """The same weights converted to ``dtype`` (float32 or float64)."""
        dtype = float_dtype(dtype)
        return FFNParams(*(np.asarray(a, dtype=dtype) for a in self))


def check_params(W1, b1, W2, b2) -> FFNParams:
    """Validate the four FFN arrays against each other and return them.

    Raises TypeError for a dtype other than float32/float64 or for arrays of
    different dtypes, and ValueError for wrong ranks, mismatched widths or
    non-finite values.

    >>> check_params(np.zeros((4, 8)), np.zeros(8), np.zeros((8, 4)), np.zeros(3))
    Traceback (most recent call last):
    ...
    ValueError: b2 must have shape (4,), got (3,)
    """
    arrays = float_arrays({"W1": W1, "b1": b1, "W2": W2, "b2": b2})
    if arrays["W1"].ndim != 2:
        raise ValueError(
            f"W1 must be a 2-D array of shape (d_model, d_ff), got shape {arrays['W1'].shape}"
        )
    d_model, d_ff = arrays["W1"].shape
    require_shape(arrays["b1"], (d_ff,), "b1")
    require_shape(arrays["W2"], (d_ff, d_model), "W2")
    require_shape(arrays["b2"], (d_model,), "b2")
    require_finite_and_one_dtype(arrays)
    return FFNParams(**arrays)


def ffn_params_of(params, name: str = "params") -> FFNParams:
    """:func:`check_params` for one argument holding the four arrays (FFNParams or a plain tuple)."""
    return check_params(*require_bundle(params, name, FFNParams._fields, "FFNParams"))


def init_ffn_params(
    d_model: int, d_ff: int, *, seed: int = 0, dtype=np.float64
) -> FFNParams:
    """Random FFN weights, reproducible from ``seed``.

    Weights are drawn like PyTorch's ``nn.Linear`` default: uniform in
    ``±1/sqrt(fan_in)``, so activations keep roughly unit scale; biases use
    the same bound. The same seed always gives the same arrays.

    >>> p = init_ffn_params(4, 16, seed=1)
    >>> p.W1.shape, p.b1.shape, p.W2.shape, p.b2.shape
    ((4, 16), (16,), (16, 4), (4,))
    >>> bool(np.array_equal(p.W1, init_ffn_params(4, 16, seed=1).W1))
    True
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    dtype = float_dtype(dtype)
    rng = np.random.default_rng(require_seed(seed))
    bound_in = 1.0 / np.sqrt(d_model)
    bound_hidden = 1.0 / np.sqrt(d_ff)
    W1 = rng.uniform(-bound_in, bound_in, size=(d_model, d_ff))
    b1 = rng.uniform(-bound_in, bound_in, size=d_ff)
    W2 = rng.uniform(-bound_hidden, bound_hidden, size=(d_ff, d_model))
    b2 = rng.uniform(-bound_hidden, bound_hidden, size=d_model)
    return FFNParams(W1, b1, W2, b2).astype(dtype)


def check_input(x, d_model: int, dtype: np.dtype, name: str = "x") -> np.ndarray:
    """Validate an FFN input: float, finite, last axis ``d_model``, matching ``dtype``.

    Integer input is converted to ``dtype``, the weights' dtype.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be the argument's name (str), got {describe(name)}")
    d_model = require_positive_int(d_model, "d_model")
    dtype = float_dtype(dtype)
    x = as_float_array(x, name, dtype=dtype)
    if x.ndim == 0:
        raise ValueError(f"{name} must have at least one axis of width d_model={d_model}, got a scalar")
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name} must have last axis d_model={d_model}, got shape {x.shape}"
        )
    if x.dtype != dtype:
        raise TypeError(f"{name} has dtype {x.dtype} but the weights are {dtype}; convert one of them")
    require_finite(x, name)
    return x


def ffn(x, W1, b1, W2, b2, activation: str = "relu") -> np.ndarray:
    """Apply the feed-forward network to the last axis of ``x``.

    Parameters
    ----------
    x : array of shape ``(..., d_model)``, float32 or float64
    W1, b1, W2, b2 : the FFN's weights, shapes ``(d_model, d_ff)``, ``(d_ff,)``,
        ``(d_ff, d_model)``, ``(d_model,)``, same dtype as ``x``
    activation : one of ``ffnbook.ACTIVATIONS`` ("relu", "gelu", "gelu_tanh",
        "silu", "identity")

    Returns
    -------
    array of the same shape and dtype as ``x``

    >>> p = init_ffn_params(8, 32, seed=0)
    >>> ffn(np.ones((2, 5, 8)), *p).shape
    (2, 5, 8)
    >>> ffn(np.ones((5, 7)), *p)
    Traceback (most recent call last):
    ...
    ValueError: x must have last axis d_model=8, got shape (5, 7)
    """
    act = get_activation(activation)
    params = check_params(W1, b1, W2, b2)
    x = check_input(x, params.d_model, params.dtype)
    hidden = act(x @ params.W1 + params.b1)
    return hidden @ params.W2 + params.b2


def collapse_linear_ffn(W1, b1, W2, b2) -> tuple[np.ndarray, np.ndarray]:
    """The single affine map an FFN *without* activation is equal to.

    ``(x @ W1 + b1) @ W2 + b2 == x @ (W1 @ W2) + (b1 @ W2 + b2)``: two linear
    layers with nothing between them are one ``d_model × d_model`` matrix and
    one bias. Returns ``(W, b)``.

    >>> p = init_ffn_params(4, 16, seed=0)
    >>> W, b = collapse_linear_ffn(*p)
    >>> W.shape, b.shape
    ((4, 4), (4,))
    >>> x = np.ones((3, 4))
    >>> bool(np.allclose(x @ W + b, ffn(x, *p, activation="identity")))
    True
    """
    params = check_params(W1, b1, W2, b2)
    return params.W1 @ params.W2, params.b1 @ params.W2 + params.b2
