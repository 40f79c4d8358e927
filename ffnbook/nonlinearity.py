"""Why the FFN needs a nonlinearity: without one it is an affine map, with one no affine map fits.

Two linear layers with nothing between them are one linear layer
(:func:`ffnbook.feedforward.collapse_linear_ffn` computes it). The experiment
here measures the converse: :func:`best_affine_fit` finds the affine map
``x @ A + c`` closest to a layer's outputs, by least squares, and reports how
much of the outputs it leaves unexplained; :func:`affine_fit_by_activation`
runs it on the FFN with each activation.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, require_finite, require_names
from .activations import ACTIVATIONS
from .display import readable
from .feedforward import check_input, ffn, ffn_params_of


@readable
class AffineFit(NamedTuple):
    """How well the best affine map ``x @ A + c`` reproduces a layer's outputs."""

    #: Norm of the residual over the norm of ``y`` minus its mean; 0 for an affine
    #: layer, 1 for a fit no better than a constant.
    relative_residual: float
    max_abs_residual: float  #: largest entry of ``|y - fit|``
    n_samples: int


def _fit_design(x) -> np.ndarray:
    """An orthonormal basis of the columns of ``[x, 1]``: the space of affine functions of ``x``."""
    x = as_float_array(x, "x")
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D, (n_samples, d_in), got shape {x.shape}")
    if x.shape[0] <= x.shape[1] + 1:
        raise ValueError(
            f"x must hold more samples than unknowns (n > d_in + 1 = {x.shape[1] + 1}), got n={x.shape[0]}"
        )
    require_finite(x, "x")
    design = np.hstack([x, np.ones((x.shape[0], 1), dtype=x.dtype)])
    # Least squares by QR: the best affine fit of y is its projection onto span(q).
    q, _ = np.linalg.qr(design)
    return q


def _fit_residual(q: np.ndarray, y) -> AffineFit:
    y = as_float_array(y, "y")
    if y.ndim != 2 or y.shape[0] != q.shape[0]:
        raise ValueError(f"y must be 2-D with {q.shape[0]} rows (one per sample of x), got shape {y.shape}")
    require_finite(y, "y")
    residual = y - q @ (q.T @ y)
    spread = np.linalg.norm(y - y.mean(axis=0))
    return AffineFit(
        relative_residual=float(np.linalg.norm(residual) / spread),
        max_abs_residual=float(np.max(np.abs(residual))),
        n_samples=int(y.shape[0]),
    )


def best_affine_fit(x, y) -> AffineFit:
    """Fit ``y ≈ x @ A + c`` by least squares and report what is left over.

    ``x`` has shape ``(n, d_in)`` and ``y`` shape ``(n, d_out)``, with more
    samples than unknowns (``n > d_in + 1``) so a nonzero residual means no
    affine map fits, not that there was too little data.

    >>> x = np.random.default_rng(0).standard_normal((50, 3))
    >>> best_affine_fit(x, x @ np.ones((3, 2)) + 1.0).relative_residual < 1e-12
    True
    >>> best_affine_fit(x, np.abs(x)).relative_residual > 0.5
    True
    """
    return _fit_residual(_fit_design(x), y)


def affine_fit_by_activation(x, params, names=("identity", "relu", "gelu", "silu")) -> dict:
    """:func:`best_affine_fit` of the FFN ``params`` on inputs ``x``, for each activation in ``names``.

    The least-squares basis depends only on ``x``, so it is computed once.
    Returns ``{name: AffineFit}``.

    >>> from ffnbook.feedforward import init_ffn_params
    >>> x = np.random.default_rng(0).standard_normal((40, 4))
    >>> fits = affine_fit_by_activation(x, init_ffn_params(4, 16), ("identity", "relu"))
    >>> fits["identity"].relative_residual < 1e-12 < fits["relu"].relative_residual
    True
    """
    names = require_names(names, "names", ACTIVATIONS)
    params = ffn_params_of(params)
    q = _fit_design(x)
    x = check_input(x, params.d_model, params.dtype)
    return {name: _fit_residual(q, ffn(x, *params, activation=name)) for name in names}
