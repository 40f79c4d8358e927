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

from ._checks import as_float_array, require_finite


def _checked(x, name: str = "x") -> np.ndarray:
    x = as_float_array(x, name)
    if x.ndim == 0:
        raise ValueError(f"{name} must have at least one axis (the features), got a scalar")
    require_finite(x, name)
    return x


def rms_norm(x, eps: float = 1e-6) -> np.ndarray:
    """Divide every vector on the last axis of ``x`` by its root mean square.

    ``x / sqrt(mean(x**2) + eps)``, computed per position, as RMSNorm does
    (Zhang & Sennrich, 2019) with its gain at its initial value of one; no mean
    is subtracted.

    >>> rms_norm(np.array([[3.0, 4.0]]), eps=0.0).round(6).tolist()
    [[0.848528, 1.131371]]
    """
    x = _checked(x)
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
    axes = tuple(range(x.ndim - 1))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def batch_norm_eval(x, running_mean, running_var, eps: float = 1e-5) -> np.ndarray:
    """Batch normalisation at inference: fixed per-feature statistics, so a per-token affine map."""
    x = _checked(x)
    mean = _checked(running_mean, "running_mean")
    var = _checked(running_var, "running_var")
    if mean.shape != (x.shape[-1],) or var.shape != (x.shape[-1],):
        raise ValueError(f"running statistics must have shape ({x.shape[-1]},), got {mean.shape} and {var.shape}")
    if (var < 0).any():
        raise ValueError("running_var must be non-negative")
    return (x - mean) / np.sqrt(var + eps)


class PositionTests(NamedTuple):
    """The chapter's tests on one layer: each a largest difference (0 for a position-wise layer)."""

    one_at_a_time: float  #: whole sequence against one position per call
    reshape: float  #: ``(B, T, D)`` against ``(B·T, 1, D)``
    other_positions_moved: float  #: largest move of untouched positions when one token is edited


def position_tests(layer, x_sequence, x_batch, edited_position: int = 0) -> PositionTests:
    """Run the whole-versus-one-at-a-time, reshape and edit-one-token tests on ``layer``."""
    from .position_independence import batch_vs_rows_max_diff, change_one_token, reshape_max_diff

    return PositionTests(
        one_at_a_time=batch_vs_rows_max_diff(layer, x_sequence),
        reshape=reshape_max_diff(layer, x_batch),
        other_positions_moved=change_one_token(layer, x_batch, edited_position).other_positions,
    )


def normalisation_layers(d_model: int, seed: int = 0) -> dict:
    """The normalisations compared on the page, as one-argument layers, by display name."""
    from .block import layer_norm

    rng = np.random.default_rng([seed, d_model])
    running_mean, running_var = rng.standard_normal(d_model), rng.uniform(0.5, 2.0, d_model)
    return {
        "LayerNorm": layer_norm,
        "RMSNorm": rms_norm,
        "BatchNorm, training mode": batch_norm_train,
        "BatchNorm, inference mode": lambda t: batch_norm_eval(t, running_mean, running_var),
    }


def position_test_rows(x_sequence, x_batch, seed: int = 0) -> list[dict]:
    """:func:`position_tests` for every layer of :func:`normalisation_layers`, as table rows."""
    x_sequence = _checked(x_sequence, "x_sequence")
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
