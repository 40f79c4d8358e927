"""A minimal multi-head self-attention in NumPy, for contrast with the FFN.

The chapter does not study attention; it needs one only to show the opposite
behaviour: attention's output at a position changes when another position's
input changes, the FFN's does not. No masking, no biases.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, require_finite, require_positive_int, require_shape
from .feedforward import check_input


class AttentionParams(NamedTuple):
    """Query, key, value and output projections, each ``(d_model, d_model)``."""

    Wq: np.ndarray
    Wk: np.ndarray
    Wv: np.ndarray
    Wo: np.ndarray


def init_attention_params(d_model: int, *, seed: int = 0, dtype=np.float64) -> AttentionParams:
    """Random projections with ``nn.Linear``'s default scale, reproducible from ``seed``."""
    d_model = require_positive_int(d_model, "d_model")
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(d_model)
    mats = [rng.uniform(-bound, bound, size=(d_model, d_model)).astype(dtype) for _ in range(4)]
    return AttentionParams(*mats)


def self_attention(x, params: AttentionParams, n_heads: int = 1) -> np.ndarray:
    """Scaled dot-product self-attention over axis -2 of ``x`` (``(..., seq_len, d_model)``).

    >>> p = init_attention_params(8, seed=0)
    >>> self_attention(np.ones((2, 5, 8)), p, n_heads=2).shape
    (2, 5, 8)
    """
    n_heads = require_positive_int(n_heads, "n_heads")
    mats = [as_float_array(m, name) for m, name in zip(params, AttentionParams._fields)]
    d_model = mats[0].shape[0] if mats[0].ndim == 2 else -1
    for m, name in zip(mats, AttentionParams._fields):
        require_shape(m, (d_model, d_model), name)
        require_finite(m, name)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    x = check_input(x, d_model, mats[0].dtype)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq_len, d_model), got {x.shape}")
    Wq, Wk, Wv, Wo = mats
    d_head = d_model // n_heads

    def split(t):  # (..., T, D) -> (..., H, T, d_head)
        return np.swapaxes(t.reshape(*t.shape[:-1], n_heads, d_head), -2, -3)

    q, k, v = split(x @ Wq), split(x @ Wk), split(x @ Wv)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    scores -= scores.max(axis=-1, keepdims=True)  # stable softmax
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    heads = weights @ v  # (..., H, T, d_head)
    merged = np.swapaxes(heads, -2, -3).reshape(x.shape)
    return merged @ Wo
