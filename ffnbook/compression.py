"""Pruning and quantising one FFN matrix, and what outlier features do to both.

A linear layer ``y = X W`` (tokens × input features times input × output
features, the book's row convention) is the unit of both: pruning zeroes some
weights of ``W``, quantisation rounds ``X`` and ``W`` to a few bits. Outlier
features, a few input dimensions far larger than the rest, decide how well
either works. These functions do each step in NumPy and measure the error in
``y``:

* :func:`quantize`: symmetric round-to-nearest integers with one scale per
  tensor or per slice;
* :func:`smoothing_scales` and :func:`w8a8_error`: SmoothQuant's move of an
  outlier's size from the activations into the weights (Xiao et al., 2023);
* :func:`prune`: magnitude pruning and Wanda's weight-times-activation score
  (Sun et al., 2024), unstructured or in NVIDIA's 2:4 pattern.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import (
    as_float_array,
    require_bool,
    require_choice,
    require_number,
    require_positive_int,
    require_seed,
)

#: Sun et al. (2024, abstract); massive activations can be about 100,000 times larger than others.
MASSIVE_ACTIVATION_RATIO = 100_000
#: Mishra et al. (2021, abstract); keeping 2 of every 4 weights gives twice the math throughput of dense Tensor Cores.
SPARSE_2_4_SPEEDUP = 2
#: Lin et al. (2024, abstract); protecting about 1% of salient weights cuts the quantisation error.
AWQ_SALIENT_SHARE = 0.01
#: Frantar and Alistarh (2023, abstract); OPT-175B and BLOOM-176B pruned in one shot to 60%
#: unstructured sparsity with a negligible increase in perplexity.
SPARSEGPT_MODEL_PARAMS, SPARSEGPT_SPARSITY = (175e9, 176e9), 0.6


def quantize(x, bits, axis=None) -> np.ndarray:
    """``x`` rounded to ``bits``-bit signed integers and scaled back (symmetric, round to nearest).

    One scale ``max|x| / (2^(bits-1) - 1)`` per tensor (``axis=None``) or one
    per slice along ``axis`` (``axis=0``: one per column, ``axis=1``: one per
    row). An all-zero slice stays zero.

    >>> quantize(np.array([0.5, -1.0, 0.26]), 2).tolist()  # levels -1, 0, 1 times the scale 1
    [0.0, -1.0, 0.0]
    """
    x = as_float_array(x, "x", finite=True)
    bits = require_positive_int(bits, "bits", maximum=32)
    if bits < 2:
        raise ValueError(f"bits must be at least 2 for signed levels, got {bits}")
    if axis is not None and axis not in (0, 1):
        raise ValueError(f"axis must be None, 0 or 1, got {axis!r}")
    if axis is not None and x.ndim != 2:
        raise ValueError(f"x must be 2-D for a per-slice scale, got shape {x.shape}")
    levels = 2 ** (bits - 1) - 1
    peak = np.max(np.abs(x), axis=axis, keepdims=True) if axis is not None else np.max(np.abs(x), initial=0.0)
    scale = np.where(peak > 0, peak / levels, 1.0)
    return np.round(x / scale) * scale


def outlier_features(d_in, n_outliers, *, seed=0) -> np.ndarray:
    """Which ``n_outliers`` of ``d_in`` input features :func:`outlier_inputs` makes large (sorted)."""
    d_in = require_positive_int(d_in, "d_in")
    n_outliers = require_positive_int(n_outliers, "n_outliers", maximum=d_in)
    return np.sort(np.random.default_rng([require_seed(seed), 2]).choice(d_in, n_outliers, replace=False))


def outlier_inputs(n_tokens, d_in, n_outliers, outlier_scale, *, seed=0) -> np.ndarray:
    """Standard normal inputs in which ``n_outliers`` features (:func:`outlier_features`) are
    ``outlier_scale`` times larger, as a few fixed dimensions are in large transformers.

    >>> x = outlier_inputs(4, 8, 2, 50.0)
    >>> big = outlier_features(8, 2)
    >>> bool(np.abs(x[:, big]).mean() > 10 * np.abs(np.delete(x, big, axis=1)).mean())
    True
    """
    n_tokens = require_positive_int(n_tokens, "n_tokens")
    d_in = require_positive_int(d_in, "d_in")
    n_outliers = require_positive_int(n_outliers, "n_outliers", maximum=d_in)
    outlier_scale = require_number(outlier_scale, "outlier_scale", low=0, low_open=True)
    x = np.random.default_rng(require_seed(seed)).standard_normal((n_tokens, d_in))
    x[:, outlier_features(d_in, n_outliers, seed=seed)] *= outlier_scale
    return x


def _layer(x, W) -> tuple[np.ndarray, np.ndarray]:
    x = as_float_array(x, "x", finite=True, ndim=2)
    W = as_float_array(W, "W", finite=True, ndim=2)
    if x.shape[1] != W.shape[0]:
        raise ValueError(f"W must have {x.shape[1]} rows, one per input feature of x, got shape {W.shape}")
    return x, W


def smoothing_scales(x, W, alpha: float = 0.5) -> np.ndarray:
    """SmoothQuant's scale for each input feature ``j``: ``max|x_j|^alpha / max|W_j|^(1 - alpha)``.

    Dividing feature ``j`` of the input by ``s_j`` and multiplying row ``j`` of
    ``W`` by it leaves ``x W`` unchanged and moves part of an outlier's size
    into the weights, which are quantised per output column.

    >>> s = smoothing_scales(np.array([[4.0, 1.0]]), np.array([[1.0], [1.0]]))
    >>> s.tolist()
    [2.0, 1.0]
    """
    x, W = _layer(x, W)
    alpha = require_number(alpha, "alpha", low=0, high=1)
    x_peak, w_peak = np.max(np.abs(x), axis=0, initial=0.0), np.max(np.abs(W), axis=1, initial=0.0)
    scales = np.where((x_peak > 0) & (w_peak > 0), x_peak**alpha / np.where(w_peak > 0, w_peak, 1.0) ** (1 - alpha), 1.0)
    return scales


def relative_error(approximate, exact) -> float:
    """``‖approximate − exact‖ / ‖exact‖`` (Frobenius norms)."""
    approximate = as_float_array(approximate, "approximate", finite=True)
    exact = as_float_array(exact, "exact", finite=True)
    if approximate.shape != exact.shape:
        raise ValueError(f"approximate must have the shape of exact, {exact.shape}, got {approximate.shape}")
    norm = np.linalg.norm(exact)
    return float(np.linalg.norm(approximate - exact) / norm) if norm > 0 else float(np.linalg.norm(approximate))


def w8a8_error(x, W, *, smooth: bool = False, alpha: float = 0.5, bits: int = 8) -> float:
    """Relative error of ``x W`` with the input quantised per tensor and ``W`` per output column.

    With ``smooth``, the input is first divided feature by feature by
    :func:`smoothing_scales` and ``W``'s rows multiplied by them, which on its
    own changes ``x W`` only by rounding.

    >>> x, W = outlier_inputs(64, 32, 2, 50.0), np.random.default_rng(1).standard_normal((32, 16))
    >>> w8a8_error(x, W, smooth=True) < w8a8_error(x, W)
    True
    """
    x, W = _layer(x, W)
    smooth = require_bool(smooth, "smooth")
    alpha = require_number(alpha, "alpha", low=0, high=1)
    bits = require_positive_int(bits, "bits", maximum=32)
    if smooth:
        scales = smoothing_scales(x, W, alpha)
        x, W_used = x / scales, W * scales[:, None]
    else:
        W_used = W
    return relative_error(quantize(x, bits) @ quantize(W_used, bits, axis=0), x @ W_used)


#: What :func:`prune` ranks the weights by.
PRUNING_SCORES = ("magnitude", "wanda")
#: Which weights :func:`prune` compares with each other.
PRUNING_PATTERNS = ("unstructured", "2:4")


class Pruned(NamedTuple):
    """A pruned weight matrix and how sparse it is."""

    W: np.ndarray
    kept: float  #: share of the weights kept


def prune(W, x, *, score: str = "wanda", pattern: str = "unstructured") -> Pruned:
    """Zero half the weights of ``W`` (input × output), the half that matters least by ``score``.

    ``"magnitude"`` ranks weights by ``|W_ij|``; ``"wanda"`` by
    ``|W_ij| · ‖x_i‖``, the weight times the norm of its input feature over the
    tokens of ``x``. ``"unstructured"`` keeps the better half of each output
    column's weights; ``"2:4"`` the better two of every four consecutive
    input features in each column (the pattern NVIDIA's sparse Tensor Cores
    run), so ``W`` must have a multiple of four rows.

    >>> W = np.array([[1.0], [2.0], [3.0], [4.0]])
    >>> x = np.array([[10.0, 1.0, 1.0, 1.0]])
    >>> prune(W, x, score="magnitude").W.ravel().tolist(), prune(W, x).W.ravel().tolist()
    ([0.0, 0.0, 3.0, 4.0], [1.0, 0.0, 0.0, 4.0])
    """
    x, W = _layer(x, W)
    require_choice(score, "score", PRUNING_SCORES)
    require_choice(pattern, "pattern", PRUNING_PATTERNS)
    importance = np.abs(W) * (np.linalg.norm(x, axis=0)[:, None] if score == "wanda" else 1.0)
    keep = np.zeros_like(W, dtype=bool)
    if pattern == "unstructured":
        order = np.argsort(-importance, axis=0, kind="stable")[: W.shape[0] // 2]
        np.put_along_axis(keep, order, True, axis=0)
    else:
        if W.shape[0] % 4:
            raise ValueError(f"W must have a multiple of 4 rows for the 2:4 pattern, got {W.shape[0]}")
        groups = importance.reshape(W.shape[0] // 4, 4, W.shape[1])
        best = np.argsort(-groups, axis=1, kind="stable")[:, :2, :]
        mask = np.zeros_like(groups, dtype=bool)
        np.put_along_axis(mask, best, True, axis=1)
        keep = mask.reshape(W.shape)
    return Pruned(np.where(keep, W, 0.0), float(keep.mean()))
