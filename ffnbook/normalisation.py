"""Normalisation layers and position independence: which ones treat each token on its own.

Layer normalisation (:func:`ffnbook.block.layer_norm`) and RMS normalisation
(:func:`rms_norm`) compute their statistics from one vector, over its
features: like the FFN, they are position-wise. Batch normalisation in
training mode (:func:`batch_norm_train`) computes each feature's mean and
variance over *all the tokens it is given*, so one token's output depends on
the others. :func:`position_tests` runs the chapter's tests on any of them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import (
    as_float_array,
    require_callable,
    require_finite,
    require_index,
    require_number,
    require_positions,
    require_positive_int,
    require_seed,
)


def _checked(x, name: str = "x") -> np.ndarray:
    x = as_float_array(x, name)
    if x.ndim == 0:
        raise ValueError(f"{name} must have at least one axis (the features), got a scalar")
    require_finite(x, name)
    return x


def _eps(eps) -> float:
    """``eps``, a finite number >= 0 (0 is allowed: the docstrings' exact examples use it)."""
    return require_number(eps, "eps", low=0)


def rms_norm(x, eps: float = 1e-6) -> np.ndarray:
    """Divide every vector on the last axis of ``x`` by its root mean square.

    ``x / sqrt(mean(x**2) + eps)``, computed per position, as RMSNorm does
    (Zhang & Sennrich, 2019) with its gain at its initial value of one; no mean
    is subtracted.

    >>> rms_norm(np.array([[3.0, 4.0]]), eps=0.0).round(6).tolist()
    [[0.848528, 1.131371]]
    """
    x = _checked(x)
    eps = _eps(eps)
    return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)


def batch_norm_train(x, eps: float = 1e-5) -> np.ndarray:
    """Batch normalisation as in training: each feature normalised over every token of ``x``.

    ``x`` has shape ``(..., d)``; the mean and the (biased) variance of each of
    the ``d`` features are taken over all leading axes together, batch and
    positions, as ``torch.nn.BatchNorm1d`` does for a ``(batch, d, length)``
    input in training mode.

    >>> batch_norm_train(np.array([[1.0], [3.0]]), eps=0.0).tolist()
    [[-1.0], [1.0]]
    """
    x = _checked(x)
    eps = _eps(eps)
    axes = tuple(range(x.ndim - 1))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def batch_norm_eval(x, running_mean, running_var, eps: float = 1e-5) -> np.ndarray:
    """Batch normalisation at inference: fixed per-feature statistics, so a per-token affine map."""
    x = _checked(x)
    eps = _eps(eps)
    mean = _checked(running_mean, "running_mean")
    var = _checked(running_var, "running_var")
    if mean.shape != (x.shape[-1],) or var.shape != (x.shape[-1],):
        raise ValueError(f"running_mean and running_var must have shape ({x.shape[-1]},), one value per feature "
                         f"of x, got {mean.shape} and {var.shape}")
    if (var < 0).any():
        raise ValueError("running_var must be non-negative")
    return (x - mean) / np.sqrt(var + eps)


class PositionTests(NamedTuple):
    """The chapter's tests on one layer: each a largest difference (0 for a position-wise layer)."""

    one_at_a_time: float  #: whole sequence against one position per call
    reshape: float  #: ``(B, T, D)`` against ``(B·T, 1, D)``
    other_positions_moved: float  #: largest move of untouched positions when one token is edited


def _check_inputs(x_sequence, x_batch) -> tuple[np.ndarray, np.ndarray]:
    """The two inputs of the position tests: ``(seq_len, d)`` and ``(batch, seq_len, d)``, one width."""
    x_sequence = require_positions(as_float_array(x_sequence, "x_sequence", finite=True, ndim=2), "x_sequence")
    x_batch = require_positions(as_float_array(x_batch, "x_batch", finite=True, ndim=3), "x_batch")
    if x_batch.shape[-1] != x_sequence.shape[-1]:
        raise ValueError(f"x_sequence {x_sequence.shape} and x_batch {x_batch.shape} must share the last axis")
    return x_sequence, x_batch


def position_tests(layer, x_sequence, x_batch, edited_position: int = 0) -> PositionTests:
    """Run the whole-versus-one-at-a-time, reshape and edit-one-token tests on ``layer``."""
    from .position_independence import batch_vs_rows_max_diff, change_one_token, reshape_max_diff

    require_callable(layer, "layer", "a layer: a function of an array")
    x_sequence, x_batch = _check_inputs(x_sequence, x_batch)
    edited_position = require_index(edited_position, "edited_position", x_batch.shape[1],
                                    of="x_batch's positions")
    return PositionTests(
        one_at_a_time=batch_vs_rows_max_diff(layer, x_sequence),
        reshape=reshape_max_diff(layer, x_batch),
        other_positions_moved=change_one_token(layer, x_batch, edited_position).other_positions,
    )


def normalisation_layers(d_model: int, seed: int = 0) -> dict:
    """The normalisations compared on the page, as one-argument layers, by display name."""
    from .block import layer_norm

    d_model = require_positive_int(d_model, "d_model")
    rng = np.random.default_rng([require_seed(seed), d_model])
    running_mean, running_var = rng.standard_normal(d_model), rng.uniform(0.5, 2.0, d_model)
    return {
        "LayerNorm": layer_norm,
        "RMSNorm": rms_norm,
        "BatchNorm, training mode": batch_norm_train,
        "BatchNorm, inference mode": lambda t: batch_norm_eval(t, running_mean, running_var),
    }


def position_test_rows(x_sequence, x_batch, seed: int = 0) -> list[dict]:
    """:func:`position_tests` for every layer of :func:`normalisation_layers`, as table rows."""
    x_sequence, x_batch = _check_inputs(x_sequence, x_batch)
    rows = []
    for name, layer in normalisation_layers(x_sequence.shape[-1], seed).items():
        tests = position_tests(layer, x_sequence, x_batch)
        rows.append({"layer": name, **tests._asdict()})
    return rows


def position_test_table(x_sequence, x_batch, seed: int = 0):
    """:func:`position_test_rows` as a table for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        position_test_rows(x_sequence, x_batch, seed),
        [("layer", "layer", "s"),
         ("whole vs one at a time", "one_at_a_time", ".1e"),
         ("reshape test", "reshape", ".1e"),
         ("edit one token: others moved", "other_positions_moved", ".1e")],
    )
