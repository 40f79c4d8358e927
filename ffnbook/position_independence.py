"""Experiments showing that the FFN treats every position on its own.

Each experiment takes a *layer*: any function from an array of shape
``(..., seq_len, d_model)`` to an array of the same shape. :func:`ffn_layer`
makes one from FFN weights and :func:`attention_layer` one from attention
weights, so the same test can pass for the FFN and visibly fail for
attention. Every experiment returns plain Python floats, ready for glue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ._checks import (
    as_float_array,
    as_index_array,
    describe,
    float_dtype,
    require_callable,
    require_finite,
    require_index,
    require_positions,
    require_positive_int,
    require_seed,
    require_sequence,
)
from .activations import get_activation
from .attention import AttentionParams, check_attention_params, self_attention
from .display import readable
from .feedforward import FFNParams, ffn, ffn_params_of

Layer = Callable[[np.ndarray], np.ndarray]


def ffn_layer(params: FFNParams, activation: str = "relu") -> Layer:
    """The FFN with fixed weights, as a one-argument layer."""
    params = ffn_params_of(params)
    get_activation(activation)
    return lambda x: ffn(x, *params, activation=activation)


def attention_layer(params: AttentionParams, n_heads: int = 1) -> Layer:
    """Self-attention with fixed weights, as a one-argument layer."""
    params, _ = check_attention_params(params, n_heads)
    return lambda x: self_attention(x, params, n_heads=n_heads)


def random_tokens(shape, *, seed: int = 0, dtype=np.float64) -> np.ndarray:
    """Standard-normal stand-ins for token vectors, reproducible from ``seed``.

    >>> random_tokens((2, 3), seed=0).shape
    (2, 3)
    """
    if _is_count(shape):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(_is_count(n) for n in shape):
        raise TypeError(f"shape must be an integer >= 0 or a tuple of them, got {describe(shape)}")
    dtype = float_dtype(dtype)
    return np.random.default_rng(require_seed(seed)).standard_normal(tuple(int(n) for n in shape)).astype(dtype)


def _is_count(n) -> bool:
    return isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) and n >= 0


def _check_layer(layer) -> Layer:
    return require_callable(layer, "layer", "a layer: a function of an array")


def _check_sequence(x, name: str = "x", min_ndim: int = 2) -> np.ndarray:
    x = as_float_array(x, name)
    if x.ndim < min_ndim:
        axes = "(batch, seq_len, d_model)" if min_ndim == 3 else "(..., seq_len, d_model)"
        raise ValueError(f"{name} must have shape {axes}, got {x.shape}")
    require_positions(x, name)
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
    _check_layer(layer)
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
    _check_layer(layer)
    x = _check_sequence(x, min_ndim=3)
    if x.ndim != 3:
        raise ValueError(f"x must have shape (batch, seq_len, d_model), got {x.shape}")
    batch, seq_len, d_model = x.shape
    direct = layer(x)
    folded = layer(x.reshape(batch * seq_len, 1, d_model)).reshape(batch, seq_len, d_model)
    return _max_abs_diff(direct, folded)


def permutation_max_diff(layer: Layer, x, perm) -> float:
    """Permutation equivariance: compare ``layer(x[..., perm, :])`` with ``layer(x)[..., perm, :]``."""
    _check_layer(layer)
    x = _check_sequence(x)
    seq_len = x.shape[-2]
    perm = as_index_array(perm, "perm", high=seq_len, ndim=1, what="positions")
    if perm.shape != (seq_len,) or sorted(perm.tolist()) != list(range(seq_len)):
        raise ValueError(f"perm must be a permutation of range({seq_len}), got {perm.tolist()}")
    return _max_abs_diff(layer(x)[..., perm, :], layer(x[..., perm, :]))


@readable
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
    _check_layer(layer)
    x = _check_sequence(x)
    seq_len = x.shape[-2]
    position = require_index(position, "position", seq_len, of="x's positions")
    seed = require_seed(seed)
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


# --- What size of difference is rounding? ------------------------------------------------------


@readable
class RoundingGap(NamedTuple):
    """A difference between two computations of the same outputs, on three scales."""

    max_abs_diff: float  #: largest ``|a - b|``
    relative_to_largest: float  #: ``max_abs_diff / max|a|``
    in_eps_of_largest: float  #: that ratio in units of machine epsilon
    in_eps_of_terms: float  #: largest ``|a - b| / (eps · terms)`` over the outputs
    max_ulps: float  #: largest ``|a - b|`` in units in the last place of the output itself
    share_differing: float  #: fraction of outputs that differ at all


def rounding_gap(a, b, terms) -> RoundingGap:
    """Measure ``|a - b|`` against the outputs and against the size of what was summed.

    ``terms`` has the shape of ``a`` and holds, for each output, the sum of the
    absolute values of the numbers added up to make it (for ``y = h @ W + c``:
    ``|h| @ |W| + |c|``). Reordering a floating-point sum moves its result by
    a small multiple of ``eps · terms``, however small the result itself is;
    ``in_eps_of_terms`` is that multiple, measured.

    >>> g = rounding_gap(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 2**-51]), np.array([1.0, 2.0]))
    >>> g.in_eps_of_largest, g.in_eps_of_terms, g.max_ulps, g.share_differing
    (1.0, 1.0, 1.0, 0.5)
    """
    a, b = as_float_array(a, "a", finite=True), as_float_array(b, "b", finite=True)
    terms = as_float_array(terms, "terms", finite=True)
    if not a.shape == b.shape == terms.shape:
        raise ValueError(f"a, b and terms must have one shape, got {a.shape}, {b.shape}, {terms.shape}")
    if (terms <= 0).any():
        raise ValueError("terms must be positive: they are sums of absolute values")
    eps = float(np.finfo(a.dtype).eps)
    gap = np.abs(a - b)
    largest = float(np.max(np.abs(a)))
    return RoundingGap(
        max_abs_diff=float(gap.max()),
        relative_to_largest=float(gap.max() / largest),
        in_eps_of_largest=float(gap.max() / largest / eps),
        in_eps_of_terms=float(np.max(gap / (eps * terms))),
        max_ulps=float(np.max(gap / np.spacing(np.maximum(np.abs(a), np.abs(b))))),
        share_differing=float(np.mean(gap > 0)),
    )


def ffn_rounding_gap(params: FFNParams, x, activation: str = "relu") -> RoundingGap:
    """:func:`rounding_gap` of the FFN on the whole sequence ``x`` against one position at a time.

    The terms of output ``j`` at a position are ``|h| @ |W2[:, j]| + |b2[j]|``,
    with ``h`` the hidden layer after the activation.
    """
    from .activations import get_activation

    params = ffn_params_of(params)
    get_activation(activation)
    x = _check_sequence(x)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (seq_len, d_model), got {x.shape}")
    together = ffn(x, *params, activation=activation)
    alone = np.concatenate([ffn(x[i : i + 1], *params, activation=activation) for i in range(x.shape[0])])
    hidden = get_activation(activation)(x @ params.W1 + params.b1)
    terms = np.abs(hidden) @ np.abs(params.W2) + np.abs(params.b2)
    return rounding_gap(together, alone, terms)


def rounding_sweep(d_model: int, d_ff: int, seq_lens, seeds, activation: str = "gelu") -> list[dict]:
    """:func:`ffn_rounding_gap` for every sequence length and input seed (weights from seed 0).

    Shows how much the printed difference depends on the shapes and on the
    random numbers, while its size against ``eps · terms`` stays put.
    """
    from .feedforward import init_ffn_params

    params = init_ffn_params(d_model, d_ff, seed=0)
    seq_lens = require_sequence(seq_lens, "seq_lens", item=require_positive_int)
    seeds = require_sequence(seeds, "seeds", item=require_seed)
    get_activation(activation)
    rows = []
    for seq_len in seq_lens:
        for seed in seeds:
            gap = ffn_rounding_gap(params, random_tokens((seq_len, d_model), seed=seed), activation)
            rows.append({"seq_len": int(seq_len), "seed": int(seed), **gap._asdict()})
    return rows


def summation_orders(values) -> dict[str, float]:
    """One sum added up in four orders, each minus the correctly rounded sum (``math.fsum``).

    Left to right, ``1 + 1e-16`` rounds to ``1`` and the small term is lost:

    >>> summation_orders([1.0, 1e-16, -1.0])["left to right"]
    -1e-16
    """
    import math

    v = as_float_array(values, "values", finite=True).ravel()
    exact = math.fsum(v.tolist())

    def left_to_right(seq):
        total = 0.0
        for term in seq:
            total += term
        return total

    return {
        "left to right": left_to_right(v.tolist()) - exact,
        "right to left": left_to_right(v[::-1].tolist()) - exact,
        "NumPy (pairwise)": float(np.sum(v)) - exact,
        "largest first": left_to_right(sorted(v.tolist(), key=abs, reverse=True)) - exact,
    }


def blas_library() -> str:
    """Name and version of the BLAS library this NumPy calls for matrix products."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas['name']} {blas['version']}"
    except (KeyError, TypeError):
        return "an unreported BLAS library"
