"""How good is GELU's tanh approximation? Its error against exact GELU, measured on a grid.

GPT-2's code computes GELU through ``tanh`` instead of the normal CDF
(:func:`ffnbook.activations.gelu_tanh`). :func:`tanh_approximation_error`
finds the largest gap between the two forms, and :func:`tanh_error_shape` the
other landmarks of the error curve, which the figure
:func:`ffnbook.activation_figures.tanh_error_curve` draws and describes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import input_grid
from .activations import gelu, gelu_tanh
from .display import readable


def tanh_minus_exact(x: np.ndarray) -> np.ndarray:
    """The approximation's error at ``x``: ``gelu_tanh(x) - gelu(x)``.

    >>> float(tanh_minus_exact(np.array([0.0]))[0])
    0.0
    """
    return gelu_tanh(x) - gelu(x)


@readable
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
    x = input_grid(lo, hi, n)
    gap = np.abs(tanh_minus_exact(x))
    worst = int(np.argmax(gap))
    # x and -x tie up to rounding, so which one argmax picks is arbitrary: report |x|.
    return ApproximationError(float(gap[worst]), float(abs(x[worst])), float(lo), float(hi), int(n))


class TanhErrorShape(NamedTuple):
    """Landmarks of the curve ``gelu_tanh(x) - gelu(x)`` for ``x >= 0`` (it is even in ``x``)."""

    dip: float  #: its most negative value
    dip_at: float  #: where that is
    fades_beyond: float  #: ``|x|`` beyond which ``|error|`` stays under 1% of its largest value


def tanh_error_shape(lo: float = -6.0, hi: float = 6.0, n: int = 120001) -> TanhErrorShape:
    """Where the tanh approximation's error dips and where it fades, on the grid of :func:`tanh_approximation_error`.

    >>> shape = tanh_error_shape(-6.0, 6.0, 12001)
    >>> shape.dip < 0 < shape.dip_at < shape.fades_beyond
    True
    """
    x = input_grid(lo, hi, n)
    x = x[x >= 0]
    error = tanh_minus_exact(x)
    dip = int(np.argmin(error))
    above = np.nonzero(np.abs(error) >= 0.01 * np.abs(error).max())[0]
    return TanhErrorShape(float(error[dip]), float(x[dip]), float(x[above[-1]]))
