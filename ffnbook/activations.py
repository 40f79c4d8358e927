"""Activation functions used between the FFN's two linear layers.

Each function works elementwise on a float32/float64 NumPy array and returns
an array of the same dtype. ``ACTIVATIONS`` maps the names accepted by
:func:`~ffnbook.feedforward.ffn` to these functions.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import erf

from ._checks import lookup

#: sqrt(2/pi), the constant of the tanh approximation of GELU.
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
#: Cubic coefficient of the tanh approximation (Hendrycks & Gimpel, 2016).
_GELU_TANH_CUBIC = 0.044715


def relu(x: np.ndarray) -> np.ndarray:
    """Rectified linear unit, ``max(0, x)``.

    >>> relu(np.array([-2.0, 0.0, 3.0]))
    array([0., 0., 3.])
    """
    return np.maximum(x, 0).astype(x.dtype, copy=False)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, ``x * Phi(x)`` with ``Phi`` the standard normal CDF.

    ``Phi(1)`` is the familiar 0.8413 of the normal table, so ``gelu(1)`` is too:

    >>> round(float(gelu(np.array([1.0]))[0]), 4)
    0.8413
    """
    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(x.dtype, copy=False)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU's tanh approximation, as used by GPT-2.

    >>> float(abs(gelu_tanh(np.array([1.0]))[0] - gelu(np.array([1.0]))[0])) < 1e-3
    True
    """
    inner = _SQRT_2_OVER_PI * (x + _GELU_TANH_CUBIC * x**3)
    return (0.5 * x * (1.0 + np.tanh(inner))).astype(x.dtype, copy=False)


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU / Swish-1, ``x * sigmoid(x)``.

    >>> float(silu(np.array([0.0]))[0])
    0.0
    """
    # 0.5 * (1 + tanh(x/2)) is the logistic sigmoid without overflow for large |x|.
    return (x * 0.5 * (1.0 + np.tanh(0.5 * x))).astype(x.dtype, copy=False)


def identity(x: np.ndarray) -> np.ndarray:
    """No activation: what the FFN would be without its nonlinearity."""
    return x


ACTIVATIONS = {
    "relu": relu,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "silu": silu,
    "identity": identity,
}


def get_activation(name: str):
    """Return the activation function called ``name``, or raise ValueError."""
    return lookup(ACTIVATIONS, name)


# --- Derivatives --------------------------------------------------------------------------
#
# Closed forms of each activation's derivative. They are what backpropagation
# multiplies the incoming gradient by, so their shape near zero and for large
# negative inputs decides which hidden units still learn.


def _float_input(x) -> np.ndarray:
    # Local import keeps this module's import light and free of cycles.
    from ._checks import as_float_array

    return as_float_array(x, "x")


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic sigmoid, ``1 / (1 + exp(-x))``, the gate of the original GLU.

    Written through tanh, so it does not overflow for large ``|x|``:

    >>> sigmoid(np.array([-1000.0, 0.0, 1000.0]))
    array([0. , 0.5, 1. ])
    """
    x = _float_input(x)
    return (0.5 * (1.0 + np.tanh(0.5 * x))).astype(x.dtype, copy=False)


def _normal_pdf(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x**2) / math.sqrt(2.0 * math.pi)


def relu_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of ReLU: 1 for ``x > 0``, else 0.

    At ``x = 0`` ReLU has no derivative; like PyTorch's autograd we use 0 there.

    >>> relu_derivative(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 1.])
    """
    x = _float_input(x)
    return (x > 0).astype(x.dtype)


def gelu_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of exact GELU: ``Phi(x) + x * phi(x)`` (product rule on ``x * Phi(x)``).

    At 0 the second term vanishes and ``Phi(0) = 1/2``:

    >>> float(gelu_derivative(np.array([0.0]))[0])
    0.5
    """
    x = _float_input(x)
    cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    return (cdf + x * _normal_pdf(x)).astype(x.dtype, copy=False)


def gelu_tanh_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of GELU's tanh approximation.

    With ``u = sqrt(2/pi) (x + 0.044715 x^3)`` the function is
    ``x (1 + tanh u) / 2``, so the derivative is
    ``(1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2``.

    >>> float(gelu_tanh_derivative(np.array([0.0]))[0])
    0.5
    """
    x = _float_input(x)
    u = _SQRT_2_OVER_PI * (x + _GELU_TANH_CUBIC * x**3)
    du = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_TANH_CUBIC * x**2)
    t = np.tanh(u)
    return (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t**2) * du).astype(x.dtype, copy=False)


def silu_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of SiLU: ``sigma(x) (1 + x (1 - sigma(x)))``.

    >>> float(silu_derivative(np.array([0.0]))[0])
    0.5
    """
    s = sigmoid(x)
    x = np.asarray(x)
    return (s * (1.0 + x * (1.0 - s))).astype(s.dtype, copy=False)


def identity_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of the identity: 1 everywhere.

    >>> identity_derivative(np.array([-3.0, 5.0]))
    array([1., 1.])
    """
    x = _float_input(x)
    return np.ones_like(x)


#: Closed-form derivatives, under the same names as ``ACTIVATIONS``.
DERIVATIVES = {
    "relu": relu_derivative,
    "gelu": gelu_derivative,
    "gelu_tanh": gelu_tanh_derivative,
    "silu": silu_derivative,
    "identity": identity_derivative,
}


def get_derivative(name: str):
    """Return the derivative of the activation called ``name``, or raise ValueError.

    >>> get_derivative("silu") is silu_derivative
    True
    """
    return lookup(DERIVATIVES, name)


def _input_grid(lo: float, hi: float, n: int) -> np.ndarray:
    from ._checks import require_positive_int

    n = require_positive_int(n, "n")
    if n < 2:
        raise ValueError(f"n must be at least 2 to span an interval, got {n}")
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise ValueError(f"need finite lo < hi, got lo={lo!r}, hi={hi!r}")
    return np.linspace(float(lo), float(hi), n)


def finite_difference_error(name: str, lo: float = -6.0, hi: float = 6.0, n: int = 1201,
                            step: float = 1e-5) -> float:
    """Largest gap between the closed-form derivative and a central difference.

    The central difference ``(f(x+h) - f(x-h)) / 2h`` is an independent
    estimate with error of order ``h^2`` from truncation and ``eps/h`` from
    rounding, about 1e-10 at the default step. ReLU's kink is skipped: the
    grid is shifted off ``x = 0`` when it would land on it.

    >>> finite_difference_error("gelu") < 1e-8
    True
    """
    f, df = get_activation(name), get_derivative(name)
    x = _input_grid(lo, hi, n)
    x = np.where(np.abs(x) < 2 * step, x + 4 * step, x)  # stay clear of the kink at 0
    numeric = (f(x + step) - f(x - step)) / (2 * step)
    return float(np.max(np.abs(numeric - df(x))))


def autograd_error(name: str, lo: float = -6.0, hi: float = 6.0, n: int = 1201) -> float:
    """Largest gap between the closed-form derivative and PyTorch's autograd (float64).

    Uses torch's own activation modules (``nn.GELU(approximate=...)``,
    ``nn.SiLU`` ...), so this checks our formulas against an independent
    implementation. Imports torch.
    """
    import torch

    from .torch_ffn import TORCH_ACTIVATIONS

    df = get_derivative(name)
    if name not in TORCH_ACTIVATIONS:
        raise ValueError(f"no torch module for activation {name!r}")
    x = _input_grid(lo, hi, n)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    TORCH_ACTIVATIONS[name]()(xt).sum().backward()
    return float(np.max(np.abs(xt.grad.numpy() - df(x))))


def derivative_check_rows(names=("relu", "gelu", "gelu_tanh", "silu")) -> list[dict]:
    """For each activation, the closed-form derivative against finite differences and autograd."""
    return [
        {"name": name, "finite_difference": finite_difference_error(name),
         "autograd": autograd_error(name)}
        for name in names
    ]


def derivative_check_table(names=("relu", "gelu", "gelu_tanh", "silu")):
    """:func:`derivative_check_rows` as a table for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        derivative_check_rows(names),
        [("activation", "name", "s"),
         ("max gap to central difference", "finite_difference", ".1e"),
         ("max gap to torch autograd", "autograd", ".1e")],
    )


# --- How good is the tanh approximation? ----------------------------------------------------


class ApproximationError(NamedTuple):
    """Where and how far GELU's tanh approximation departs from exact GELU."""

    max_abs_error: float  #: largest ``|gelu_tanh(x) - gelu(x)|`` on the grid
    at_x: float  #: ``|x|`` where that largest error occurs (it occurs at ``+at_x`` and ``-at_x``)
    lo: float
    hi: float
    n: int


def tanh_approximation_error(lo: float = -6.0, hi: float = 6.0, n: int = 120001) -> ApproximationError:
    """Measure the tanh approximation against exact GELU on ``n`` evenly spaced inputs.

    Both forms satisfy ``f(x) - f(-x) = x``, so the error at ``-x`` equals
    the error at ``x``: the worst input comes as a pair ``±at_x`` and
    ``at_x`` reports its magnitude.

    >>> err = tanh_approximation_error(-4.0, 4.0, 8001)
    >>> err.max_abs_error < 1e-3
    True
    """
    x = _input_grid(lo, hi, n)
    gap = np.abs(gelu_tanh(x) - gelu(x))
    worst = int(np.argmax(gap))
    # x and -x tie up to rounding, so which one argmax picks is arbitrary: report |x|.
    return ApproximationError(float(gap[worst]), float(abs(x[worst])), float(lo), float(hi), int(n))


# --- Why a nonlinearity is needed -------------------------------------------------------------


class AffineFit(NamedTuple):
    """How well the best affine map ``x @ A + c`` reproduces a layer's outputs."""

    #: Norm of the residual over the norm of ``y`` minus its mean; 0 for an affine
    #: layer, 1 for a fit no better than a constant.
    relative_residual: float
    max_abs_residual: float  #: largest entry of ``|y - fit|``
    n_samples: int


def _fit_design(x) -> np.ndarray:
    """An orthonormal basis of the columns of ``[x, 1]``: the space of affine functions of ``x``."""
    from ._checks import as_float_array, require_finite

    x = as_float_array(x, "x")
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D, (n_samples, d_in), got shape {x.shape}")
    if x.shape[0] <= x.shape[1] + 1:
        raise ValueError(
            f"need more samples than unknowns (n > d_in + 1 = {x.shape[1] + 1}), got n={x.shape[0]}"
        )
    require_finite(x, "x")
    design = np.hstack([x, np.ones((x.shape[0], 1), dtype=x.dtype)])
    # Least squares by QR: the best affine fit of y is its projection onto span(q).
    q, _ = np.linalg.qr(design)
    return q


def _fit_residual(q: np.ndarray, y) -> AffineFit:
    from ._checks import as_float_array, require_finite

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
    from .feedforward import ffn

    q = _fit_design(x)
    return {name: _fit_residual(q, ffn(x, *params, activation=name)) for name in names}


# --- Which models use which activation ------------------------------------------------------

#: How the model sheet's ``ffn_type`` values read in a table.
FFN_TYPE_LABELS = {
    "relu": "ReLU",
    "gelu": "GELU",
    "gelu_tanh": "GELU, tanh approximation",
    "geglu": "GEGLU (gated, GELU)",
    "swiglu": "SwiGLU (gated, SiLU)",
}


def models_by_ffn_type() -> dict[str, list[str]]:
    """Model names from :mod:`ffnbook.models`, grouped by their FFN type, in the sheet's order.

    >>> "T5-base v1.0" in models_by_ffn_type()["relu"]
    True
    """
    from .models import load_models

    groups: dict[str, list[str]] = {}
    for model in load_models():
        groups.setdefault(model.ffn_type, []).append(model.name)
    return groups


def ffn_type_table():
    """:func:`models_by_ffn_type` as a two-column table for a page."""
    from .display import MarkdownTable

    rows = [{"type": FFN_TYPE_LABELS.get(t, t), "models": ", ".join(names)}
            for t, names in models_by_ffn_type().items()]
    return MarkdownTable(rows, [("FFN activation", "type", "s"), ("models in the sheet", "models", "s")])
