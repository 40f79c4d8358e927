"""Experiments showing that the FFN treats every position on its own.

Each experiment takes a *layer*: any function from an array of shape
``(..., seq_len, d_model)`` to an array of the same shape. :func:`ffn_layer`
makes one from FFN weights and :func:`attention_layer` one from attention
weights, so the same test can pass for the FFN and visibly fail for
attention. Every experiment returns plain Python floats, ready for glue.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ._checks import as_float_array, require_finite, require_positive_int
from .attention import AttentionParams, self_attention
from .feedforward import FFNParams, check_params, ffn

Layer = Callable[[np.ndarray], np.ndarray]


def ffn_layer(params: FFNParams, activation: str = "relu") -> Layer:
    """The FFN with fixed weights, as a one-argument layer."""
    params = check_params(*params)
    return lambda x: ffn(x, *params, activation=activation)


def attention_layer(params: AttentionParams, n_heads: int = 1) -> Layer:
    """Self-attention with fixed weights, as a one-argument layer."""
    return lambda x: self_attention(x, params, n_heads=n_heads)


def random_tokens(shape, *, seed: int = 0, dtype=np.float64) -> np.ndarray:
    """Standard-normal stand-ins for token vectors, reproducible from ``seed``.

    >>> random_tokens((2, 3), seed=0).shape
    (2, 3)
    """
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _check_sequence(x, name: str = "x", min_ndim: int = 2) -> np.ndarray:
    x = as_float_array(x, name)
    if x.ndim < min_ndim:
        axes = "(batch, seq_len, d_model)" if min_ndim == 3 else "(..., seq_len, d_model)"
        raise ValueError(f"{name} must have shape {axes}, got {x.shape}")
    require_finite(x, name)
    return x


def _max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    if a.shape != b.shape:
        raise ValueError(f"layer changed the shape: {b.shape} instead of {a.shape}")
    return float(np.max(np.abs(a - b)))


def batch_vs_rows_max_diff(layer: Layer, x) -> float:
    """Run ``layer`` on the whole sequence, then position by position; return the largest difference.

    ``x`` has shape ``(seq_len, d_model)``. Position ``i`` alone is passed as a
    sequence of length one, ``x[i:i+1]``, so the layer sees nothing but it.
    For a position-wise layer the two agree up to floating-point rounding.
    """
    x = _check_sequence(x)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (seq_len, d_model), got {x.shape}")
    together = layer(x)
    one_at_a_time = np.concatenate([layer(x[i : i + 1]) for i in range(x.shape[0])])
    return _max_abs_diff(together, one_at_a_time)


def reshape_max_diff(layer: Layer, x) -> float:
    """The reshape test: ``(B, T, D) → (B·T, 1, D) → layer → (B, T, D)`` against ``layer(x)``.

    Folding the sequence axis into the batch axis hides every other token
    from each position; a position-wise layer does not notice.
    """
    x = _check_sequence(x, min_ndim=3)
    if x.ndim != 3:
        raise ValueError(f"x must have shape (batch, seq_len, d_model), got {x.shape}")
    batch, seq_len, d_model = x.shape
    direct = layer(x)
    folded = layer(x.reshape(batch * seq_len, 1, d_model)).reshape(batch, seq_len, d_model)
    return _max_abs_diff(direct, folded)


def permutation_max_diff(layer: Layer, x, perm) -> float:
    """Permutation equivariance: compare ``layer(x[..., perm, :])`` with ``layer(x)[..., perm, :]``."""
    x = _check_sequence(x)
    perm = np.asarray(perm)
    seq_len = x.shape[-2]
    if perm.shape != (seq_len,) or sorted(perm.tolist()) != list(range(seq_len)):
        raise ValueError(f"perm must be a permutation of range({seq_len}), got {perm.tolist()}")
    return _max_abs_diff(layer(x)[..., perm, :], layer(x[..., perm, :]))


class TokenChangeResult(NamedTuple):
    """How far each part of the output moved when one input token was replaced."""

    changed_position: float  #: largest output change at the replaced position
    other_positions: float  #: largest output change at any other position


def movement_by_position(layer: Layer, x, position: int, *, seed: int = 1) -> list[float]:
    """Replace the token at ``position`` and report how far the output moved at *every* position.

    ``x`` has shape ``(..., seq_len, d_model)``. The token at ``position`` is
    replaced by a fresh standard-normal vector (reproducible from ``seed``);
    entry ``i`` of the result is the largest absolute change of the output at
    position ``i`` (over the batch and the features). For a position-wise layer
    every entry except ``position`` is zero.

    >>> from ffnbook import init_ffn_params, ffn_layer
    >>> moved = movement_by_position(ffn_layer(init_ffn_params(4, 8)), random_tokens((3, 4)), 0)
    >>> moved[0] > 0, moved[1:]
    (True, [0.0, 0.0])
    """
    x = _check_sequence(x)
    seq_len = x.shape[-2]
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position < seq_len:
        raise ValueError(f"position must be an integer in [0, {seq_len}), got {position!r}")
    edited = x.copy()
    edited[..., position, :] = random_tokens(x[..., position, :].shape, seed=seed, dtype=x.dtype)
    change = np.abs(layer(edited) - layer(x))  # (..., seq_len, d_model)
    per_position = np.moveaxis(change, -2, 0).reshape(seq_len, -1).max(axis=1)
    return [float(v) for v in per_position]


def change_one_token(layer: Layer, x, position: int, *, seed: int = 1) -> TokenChangeResult:
    """Replace the token at ``position`` with a fresh random vector and measure the output change.

    A position-wise layer's output moves only at ``position``; the result
    reports that movement too, so a reader sees the test was able to detect
    a change. :func:`movement_by_position` gives the movement at every position.
    """
    moved = movement_by_position(layer, x, position, seed=seed)
    others = moved[:position] + moved[position + 1 :]
    return TokenChangeResult(changed_position=moved[position], other_positions=max(others, default=0.0))
