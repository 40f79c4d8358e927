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


def split_heads(t: np.ndarray, n_heads: int) -> np.ndarray:
    """``(..., T, n_heads·d_head)`` to ``(..., n_heads, T, d_head)``: one slice per head."""
    return np.swapaxes(t.reshape(*t.shape[:-1], n_heads, t.shape[-1] // n_heads), -2, -3)


def merge_heads(t: np.ndarray) -> np.ndarray:
    """The inverse of :func:`split_heads`: ``(..., H, T, d_head)`` to ``(..., T, H·d_head)``."""
    merged = np.swapaxes(t, -2, -3)
    return merged.reshape(*merged.shape[:-2], merged.shape[-2] * merged.shape[-1])


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, score_bias=None, causal: bool = False) -> np.ndarray:
    """Softmax attention of per-head queries over keys and values, shapes ``(..., H, T, d_head)``.

    ``score_bias`` (broadcastable to ``(..., H, T, T)``) is added to the scaled
    scores; ``causal=True`` lets each query see only its own and earlier keys.
    """
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if score_bias is not None:
        scores = scores + score_bias
    if causal:
        n = scores.shape[-1]
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)  # stable softmax
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v


def check_attention_params(params, n_heads: int) -> tuple[AttentionParams, int]:
    """Validate the four projections and the head count; return them and ``d_model``."""
    n_heads = require_positive_int(n_heads, "n_heads")
    mats = [as_float_array(m, name) for m, name in zip(params, AttentionParams._fields)]
    d_model = mats[0].shape[0] if mats[0].ndim == 2 else -1
    for m, name in zip(mats, AttentionParams._fields):
        require_shape(m, (d_model, d_model), name)
        require_finite(m, name)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    return AttentionParams(*mats), d_model


def self_attention(x, params: AttentionParams, n_heads: int = 1) -> np.ndarray:
    """Scaled dot-product self-attention over axis -2 of ``x`` (``(..., seq_len, d_model)``).

    >>> p = init_attention_params(8, seed=0)
    >>> self_attention(np.ones((2, 5, 8)), p, n_heads=2).shape
    (2, 5, 8)
    """
    params, d_model = check_attention_params(params, n_heads)
    x = check_input(x, d_model, params.Wq.dtype)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq_len, d_model), got {x.shape}")
    q, k, v = (split_heads(x @ w, n_heads) for w in (params.Wq, params.Wk, params.Wv))
    return merge_heads(attend(q, k, v)) @ params.Wo
