"""A minimal multi-head self-attention in NumPy, for contrast with the FFN.

The chapter does not study attention; it needs one only to show the opposite
behaviour: attention's output at a position changes when another position's
input changes, the FFN's does not. No masking, no biases.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import (
    as_float_array,
    float_dtype,
    require_bool,
    require_bundle,
    require_finite_and_one_dtype,
    require_positive_int,
    require_seed,
    require_shape,
)
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
    dtype = float_dtype(dtype)
    rng = np.random.default_rng(require_seed(seed))
    bound = 1.0 / np.sqrt(d_model)
    mats = [rng.uniform(-bound, bound, size=(d_model, d_model)).astype(dtype) for _ in range(4)]
    return AttentionParams(*mats)


def split_heads(t: np.ndarray, n_heads: int) -> np.ndarray:
    """``(..., T, n_heads·d_head)`` to ``(..., n_heads, T, d_head)``: one slice per head.

    >>> split_heads(np.zeros((5, 6)), 2).shape
    (2, 5, 3)
    """
    t = as_float_array(t, "t", min_ndim=2)
    n_heads = require_positive_int(n_heads, "n_heads")
    if t.shape[-1] % n_heads:
        raise ValueError(f"t's last axis ({t.shape[-1]}) must be divisible by n_heads={n_heads}")
    return np.swapaxes(t.reshape(*t.shape[:-1], n_heads, t.shape[-1] // n_heads), -2, -3)


def merge_heads(t: np.ndarray) -> np.ndarray:
    """The inverse of :func:`split_heads`: ``(..., H, T, d_head)`` to ``(..., T, H·d_head)``.

    >>> merge_heads(split_heads(np.arange(12.0).reshape(2, 6), 3)).tolist() == np.arange(12.0).reshape(2, 6).tolist()
    True
    """
    t = as_float_array(t, "t", min_ndim=3)
    merged = np.swapaxes(t, -2, -3)
    return merged.reshape(*merged.shape[:-2], merged.shape[-2] * merged.shape[-1])


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, score_bias=None, causal: bool = False) -> np.ndarray:
    """Softmax attention of per-head queries over keys and values, shapes ``(..., H, T, d_head)``.

    ``score_bias`` (broadcastable to ``(..., H, T, T)``) is added to the scaled
    scores; ``causal=True`` lets each query see only its own and earlier keys.
    """
    q, k, v = (as_float_array(a, name, min_ndim=2, finite=True) for a, name in ((q, "q"), (k, "k"), (v, "v")))
    if k.shape[-1] != q.shape[-1] or k.shape[-2] != v.shape[-2] or not q.shape[:-2] == k.shape[:-2] == v.shape[:-2] \
            or k.shape[-2] == 0:
        raise ValueError(f"q, k and v must have shapes (..., T, d_head), (..., S, d_head), (..., S, d_v) with "
                         f"S >= 1, got {q.shape}, {k.shape}, {v.shape}")
    causal = require_bool(causal, "causal")
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal attention needs as many queries as keys, got q {q.shape} and k {k.shape}")
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if score_bias is not None:
        score_bias = as_float_array(score_bias, "score_bias")
        if np.isnan(score_bias).any() or np.isposinf(score_bias).any():
            raise ValueError("score_bias must hold no NaN and no +inf (-inf masks a key)")
        try:
            np.broadcast_shapes(score_bias.shape, scores.shape)
        except ValueError:
            raise ValueError(f"score_bias must broadcast to the scores' shape {scores.shape}, "
                             f"got {score_bias.shape}") from None
        scores = scores + score_bias
    if causal:
        n = scores.shape[-1]
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)  # stable softmax
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v


def check_attention_params(params, n_heads: int, name: str = "params") -> tuple[AttentionParams, int]:
    """Validate the four projections and the head count; return them and ``d_model``.

    ``name`` is what the caller calls ``params`` (e.g. ``attn_params``), for the messages.
    """
    n_heads = require_positive_int(n_heads, "n_heads")
    params = require_bundle(params, name, AttentionParams._fields, "AttentionParams")
    mats = {name: as_float_array(m, name) for m, name in zip(params, AttentionParams._fields)}
    if mats["Wq"].ndim != 2:
        raise ValueError(f"Wq must be a 2-D array of shape (d_model, d_model), got shape {mats['Wq'].shape}")
    d_model = mats["Wq"].shape[0]
    for name, m in mats.items():
        require_shape(m, (d_model, d_model), name)
    require_finite_and_one_dtype(mats)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    return AttentionParams(**mats), d_model


def self_attention(x, params: AttentionParams, n_heads: int = 1) -> np.ndarray:
    """Scaled dot-product self-attention over axis -2 of ``x`` (``(..., seq_len, d_model)``).

    >>> p = init_attention_params(8, seed=0)
    >>> self_attention(np.ones((2, 5, 8)), p, n_heads=2).shape
    (2, 5, 8)
    """
    params, d_model = check_attention_params(params, n_heads)
    x = check_input(x, d_model, params.Wq.dtype)
    if x.ndim < 2 or x.shape[-2] == 0:
        raise ValueError(f"x must have shape (..., seq_len, d_model) with seq_len >= 1, got {x.shape}")
    q, k, v = (split_heads(x @ w, n_heads) for w in (params.Wq, params.Wk, params.Wv))
    return merge_heads(attend(q, k, v)) @ params.Wo
