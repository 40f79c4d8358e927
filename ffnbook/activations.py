"""Activation functions used between the FFN's two linear layers.

Each function works elementwise on a float32/float64 NumPy array and returns
an array of the same dtype (integer input is computed in float64). At ±inf
each returns its limit; NaN stays NaN. ``ACTIVATIONS`` maps the names accepted by
:func:`~ffnbook.feedforward.ffn` to these functions, and ``LABELS`` is how the
book writes each name in tables, legends and alt text.

The chapter's other questions about activations have their own modules:
:mod:`ffnbook.derivatives` (their slopes), :mod:`ffnbook.tanh_approximation`
(how good GELU's tanh form is) and :mod:`ffnbook.nonlinearity` (why the FFN
needs one at all).
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import as_float_array, lookup

#: sqrt(2/pi), the constant of the tanh approximation of GELU.
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
#: Cubic coefficient of the tanh approximation (Hendrycks & Gimpel, 2016).
GELU_TANH_CUBIC = 0.044715


def relu(x: np.ndarray) -> np.ndarray:
    """Rectified linear unit, ``max(0, x)``.

    >>> relu(np.array([-2.0, 0.0, 3.0]))
    array([0., 0., 3.])
    """
    x = as_float_array(x, "x")
    return np.maximum(x, 0).astype(x.dtype, copy=False)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, ``x * Phi(x)`` with ``Phi`` the standard normal CDF.

    Like every activation here it takes any array of real numbers (an integer
    array is computed in float64, never truncated) and returns float32 or
    float64 of the same shape.

    ``Phi(1)`` is the familiar 0.8413 of the normal table, so ``gelu(1)`` is too:

    >>> round(float(gelu(np.array([1.0]))[0]), 4)
    0.8413
    """
    # Imported here: scipy costs 0.3 s of CPU to import, and ``import ffnbook`` (the build's
    # number formatting, the API pages) should not pay for it when nothing computes GELU.
    from scipy.special import erf

    x = as_float_array(x, "x")
    with np.errstate(invalid="ignore"):  # -inf · 0 at x = -inf, replaced by the limit
        out = (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(x.dtype, copy=False)
    return _at_minus_inf(out, x)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU's tanh approximation, as used by GPT-2.

    >>> float(abs(gelu_tanh(np.array([1.0]))[0] - gelu(np.array([1.0]))[0])) < 1e-3
    True
    """
    x = as_float_array(x, "x")
    with np.errstate(over="ignore", invalid="ignore"):  # x**3 overflows to ±inf for |x| > ~1e102
        inner = SQRT_2_OVER_PI * (x + GELU_TANH_CUBIC * x**3)
        out = (0.5 * x * (1.0 + np.tanh(inner))).astype(x.dtype, copy=False)
    return _at_minus_inf(out, x)


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU / Swish-1, ``x * sigmoid(x)``.

    >>> float(silu(np.array([0.0]))[0])
    0.0
    """
    # 0.5 * (1 + tanh(x/2)) is the logistic sigmoid without overflow for large |x|.
    x = as_float_array(x, "x")
    with np.errstate(invalid="ignore"):  # -inf · 0 at x = -inf, replaced by the limit
        out = (x * 0.5 * (1.0 + np.tanh(0.5 * x))).astype(x.dtype, copy=False)
    return _at_minus_inf(out, x)


def identity(x: np.ndarray) -> np.ndarray:
    """No activation: what the FFN would be without its nonlinearity."""
    return as_float_array(x, "x")


def _at_minus_inf(out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """GELU and SiLU tend to 0 as x → -inf, but their formulas give -inf · 0 = NaN there: set the limit.

    (The same formulas give +inf at +inf, their limit.) NaN inputs stay NaN.

    >>> gelu(np.array([-np.inf, np.inf])).tolist(), silu(np.array([-np.inf, np.nan])).tolist()
    ([0.0, inf], [0.0, nan])
    """
    if not np.isfinite(x).all():
        out = np.where(np.isneginf(x), out.dtype.type(0.0), out)
    return out


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic sigmoid, ``1 / (1 + exp(-x))``, the gate of the original GLU.

    Written through tanh, so it does not overflow for large ``|x|``:

    >>> sigmoid(np.array([-1000.0, 0.0, 1000.0]))
    array([0. , 0.5, 1. ])
    """
    x = as_float_array(x, "x")
    return (0.5 * (1.0 + np.tanh(0.5 * x))).astype(x.dtype, copy=False)


#: The activation functions, by the names :func:`ffnbook.feedforward.ffn` accepts.
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


#: How the book writes each activation's name, the one set of labels for tables,
#: legends and alt text. ``"gelu"`` is plain "GELU", because the model sheet's
#: ``gelu`` does not always say which form a model used.
LABELS = {
    "relu": "ReLU",
    "gelu": "GELU",
    "gelu_tanh": "GELU (tanh approx.)",
    "silu": "SiLU",
    "sigmoid": "sigmoid",
    "identity": "identity",
}
