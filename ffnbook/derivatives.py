"""The activations' slopes: closed forms, checked against finite differences and torch's autograd.

Backpropagation multiplies the incoming gradient by the activation's
derivative, so the derivative's shape near zero and for large negative
inputs decides which hidden units still learn. Each function here is the
closed form of one activation's derivative, under the same name as in
:data:`ffnbook.activations.ACTIVATIONS`; :func:`finite_difference_error` and
:func:`autograd_error` check them against two independent estimates.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from ._checks import as_float_array, input_grid, lookup, require_names, require_positive_number
from .activations import GELU_TANH_CUBIC, LABELS, SQRT_2_OVER_PI, get_activation, sigmoid


def _normal_pdf(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x**2) / math.sqrt(2.0 * math.pi)


def _limits(out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """GELU's and SiLU's slopes tend to 0 at -inf and 1 at +inf; their formulas give NaN there.

    >>> gelu_derivative(np.array([-np.inf, np.inf, np.nan])).tolist()
    [0.0, 1.0, nan]
    """
    if not np.isfinite(x).all():
        out = np.where(np.isneginf(x), out.dtype.type(0.0), np.where(np.isposinf(x), out.dtype.type(1.0), out))
    return out


def relu_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of ReLU: 1 for ``x > 0``, else 0.

    At ``x = 0`` ReLU has no derivative; like PyTorch's autograd we use 0 there.

    >>> relu_derivative(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 1.])
    """
    x = as_float_array(x, "x")
    return (x > 0).astype(x.dtype)


def gelu_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of exact GELU: ``Phi(x) + x * phi(x)`` (product rule on ``x * Phi(x)``).

    At 0 the second term vanishes and ``Phi(0) = 1/2``:

    >>> float(gelu_derivative(np.array([0.0]))[0])
    0.5
    """
    x = as_float_array(x, "x")
    cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    with np.errstate(over="ignore", invalid="ignore"):  # x² overflows for huge |x|; ±inf · 0 at ±inf
        return _limits((cdf + x * _normal_pdf(x)).astype(x.dtype, copy=False), x)


def gelu_tanh_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of GELU's tanh approximation.

    With ``u = sqrt(2/pi) (x + 0.044715 x^3)`` the function is
    ``x (1 + tanh u) / 2``, so the derivative is
    ``(1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2``.

    >>> float(gelu_tanh_derivative(np.array([0.0]))[0])
    0.5
    """
    x = as_float_array(x, "x")
    with np.errstate(over="ignore", invalid="ignore"):  # x**3 overflows for huge |x|; limits below
        u = SQRT_2_OVER_PI * (x + GELU_TANH_CUBIC * x**3)
        du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_CUBIC * x**2)
        t = np.tanh(u)
        steep = 0.5 * x * (1.0 - t**2) * du
        # Where tanh has saturated (t² = 1) the second term is 0, even when du overflowed to inf.
        steep = np.where(t**2 == 1.0, 0.0, steep)
        out = (0.5 * (1.0 + t) + steep).astype(x.dtype, copy=False)
    return _limits(out, x)


def silu_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of SiLU: ``sigma(x) (1 + x (1 - sigma(x)))``.

    >>> float(silu_derivative(np.array([0.0]))[0])
    0.5
    """
    x = as_float_array(x, "x")
    s = sigmoid(x)
    with np.errstate(invalid="ignore"):  # ±inf · 0 at x = ±inf, replaced by the limits
        return _limits((s * (1.0 + x * (1.0 - s))).astype(s.dtype, copy=False), x)


def identity_derivative(x: np.ndarray) -> np.ndarray:
    """Derivative of the identity: 1 everywhere.

    >>> identity_derivative(np.array([-3.0, 5.0]))
    array([1., 1.])
    """
    x = as_float_array(x, "x")
    return np.ones_like(x)


#: Closed-form derivatives, under the same names as ``ffnbook.activations.ACTIVATIONS``.
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
    step = require_positive_number(step, "step")
    x = input_grid(lo, hi, n)
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
    x = input_grid(lo, hi, n)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    TORCH_ACTIVATIONS[name]()(xt).sum().backward()
    return float(np.max(np.abs(xt.grad.numpy() - df(x))))


def derivative_check_rows(names=("relu", "gelu", "gelu_tanh", "silu")) -> list[dict]:
    """For each activation, the closed-form derivative against finite differences and autograd."""
    names = require_names(names, "names", DERIVATIVES)
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
        [("activation", "name", lambda name: LABELS[name]),
         ("max gap to central difference", "finite_difference", ".1e"),
         ("max gap to torch autograd", "autograd", ".1e")],
    )
