"""Figures for the activations section: the functions, their slopes, and the tanh approximation's error.

Each function draws on :func:`ffnbook.plotting.new_figure` and returns a
:class:`~ffnbook.plotting.BookFigure`; the numbers behind the curves come
from :mod:`ffnbook.activations`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .activations import get_activation, get_derivative, tanh_approximation_error
from .plotting import PALETTE, BookFigure, new_figure, styled

#: Display names for the activations drawn in the book.
LABELS = {
    "relu": "ReLU",
    "gelu": "GELU (exact)",
    "gelu_tanh": "GELU (tanh approx.)",
    "silu": "SiLU / Swish-1",
    "identity": "identity",
}

_DEFAULT_NAMES = ("relu", "gelu", "silu")


def _check_range(lo: float, hi: float) -> None:
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise ValueError(f"need finite lo < hi, got lo={lo!r}, hi={hi!r}")


def _check_names(names) -> tuple[str, ...]:
    names = tuple(names)
    if not names:
        raise ValueError("need at least one activation name")
    for name in names:
        get_activation(name)  # raises for unknown names
    return names


def _draw_curves(names, lo, hi, which: str, ylabel: str, description: str) -> BookFigure:
    names = _check_names(names)
    _check_range(lo, hi)
    x = np.linspace(lo, hi, 1201)
    fig = new_figure(7.0, 4.0)
    ax = fig.add_subplot()
    styles = ("-", "--", "-.", ":")
    for i, name in enumerate(names):
        f = get_activation(name) if which == "value" else get_derivative(name)
        ax.plot(x, f(x), color=PALETTE[i % len(PALETTE)], linestyle=styles[i % len(styles)],
                linewidth=2, label=LABELS.get(name, name))
    ax.axhline(0, color="#444444", linewidth=0.8)
    ax.axvline(0, color="#444444", linewidth=0.8)
    ax.set_xlabel("pre-activation input x (dimensionless)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(lo, hi)
    ax.legend(loc="upper left")
    return BookFigure(fig, description)


def _range_words(lo: float, hi: float) -> str:
    return f"for inputs from {lo:g} to {hi:g}"


@styled
def activation_curves(names=_DEFAULT_NAMES, lo: float = -4.0, hi: float = 4.0) -> BookFigure:
    """The activations ``names`` plotted over ``[lo, hi]``; the description is the alt text.

    >>> activation_curves().description.startswith("Line plot of ReLU, GELU (exact), SiLU / Swish-1 for inputs from -4 to 4.")
    True
    """
    names = _check_names(names)
    _check_range(lo, hi)
    x = np.linspace(lo, hi, 1201)
    lowest = {n: float(get_activation(n)(x).min()) for n in names}
    dips = [f"{LABELS.get(n, n)} reaches {v:.3f}" for n, v in lowest.items() if v < 0]
    description = (
        "Line plot of " + ", ".join(LABELS.get(n, n) for n in names) + f" {_range_words(lo, hi)}. "
        "All of them are near zero for large negative inputs and near the line y = x for large "
        "positive ones. ReLU has a sharp corner at zero; the smooth curves dip below zero for "
        "negative inputs" + (" (lowest values: " + "; ".join(dips) + ")" if dips else "") + "."
    )
    return _draw_curves(names, lo, hi, "value", "activation output φ(x)", description)


@styled
def derivative_curves(names=_DEFAULT_NAMES, lo: float = -4.0, hi: float = 4.0) -> BookFigure:
    """The closed-form derivatives of ``names`` over ``[lo, hi]``; the description is the alt text."""
    names = _check_names(names)
    _check_range(lo, hi)
    x = np.linspace(lo, hi, 1201)
    extremes = {n: (float(get_derivative(n)(x).min()), float(get_derivative(n)(x).max())) for n in names}
    description = (
        "Line plot of the derivatives of " + ", ".join(LABELS.get(n, n) for n in names)
        + f" {_range_words(lo, hi)}. "
        + "; ".join(f"{LABELS.get(n, n)}'s slope runs from {a:.3f} to {b:.3f}" for n, (a, b) in extremes.items())
        + ". ReLU's is a step at the origin; the smooth ones rise through one half at zero, "
        "dip slightly below zero for moderately negative inputs and overshoot one before "
        "settling back."
    )
    fig = _draw_curves(names, lo, hi, "derivative", "slope φ′(x)", description)
    fig.figure.axes[0].axhline(1, color="#888888", linewidth=0.8, linestyle=":")
    return fig


@styled
def tanh_error_curve(lo: float = -6.0, hi: float = 6.0, n: int = 120001) -> BookFigure:
    """The tanh approximation minus exact GELU, with the largest gap marked at ``±at_x``."""
    from .activations import gelu, gelu_tanh

    _check_range(lo, hi)
    err = tanh_approximation_error(lo, hi, n)
    x = np.linspace(lo, hi, n)
    fig = new_figure(7.0, 3.6)
    ax = fig.add_subplot()
    ax.plot(x, gelu_tanh(x) - gelu(x), color=PALETTE[0], linewidth=2)
    ax.axhline(0, color="#444444", linewidth=0.8)
    for sign in (-1, 1):
        xs = sign * err.at_x
        ys = float(gelu_tanh(np.array([xs]))[0] - gelu(np.array([xs]))[0])
        ax.plot([xs], [ys], "o", color=PALETTE[1], markersize=7)
    ax.annotate(
        f"largest |error| {err.max_abs_error:.1e}\nat x = ±{err.at_x:.2f}",
        xy=(err.at_x, float(gelu_tanh(np.array([err.at_x]))[0] - gelu(np.array([err.at_x]))[0])),
        xytext=(0.36, 0.84), textcoords="axes fraction", color="#111111",
        arrowprops={"arrowstyle": "->", "color": "#444444"},
    )
    ax.set_xlabel("input x (dimensionless)")
    ax.set_ylabel("tanh approx. − exact GELU")
    ax.set_xlim(lo, hi)
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    shape = tanh_error_shape(lo, hi, n)
    description = (
        f"Line plot of the tanh approximation minus exact GELU {_range_words(lo, hi)}. The "
        f"difference is zero at the origin, dips to {shape.dip:.1e} near ±{shape.dip_at:.2f}, "
        f"peaks at {err.max_abs_error:.1e} at ±{err.at_x:.2f}, where the two peaks are marked, "
        f"and stays below a hundredth of that peak beyond ±{shape.fades_beyond:.1f}."
    )
    return BookFigure(fig, description)


class TanhErrorShape(NamedTuple):
    """Landmarks of the curve ``gelu_tanh(x) - gelu(x)`` for ``x >= 0`` (it is even in ``x``)."""

    dip: float  #: its most negative value
    dip_at: float  #: where that is
    fades_beyond: float  #: ``|x|`` beyond which ``|error|`` stays under 1% of its largest value


def tanh_error_shape(lo: float = -6.0, hi: float = 6.0, n: int = 120001) -> TanhErrorShape:
    """Where the tanh approximation's error dips and where it fades, for the alt text."""
    from .activations import gelu, gelu_tanh

    _check_range(lo, hi)
    x = np.linspace(lo, hi, n)
    x = x[x >= 0]
    error = gelu_tanh(x) - gelu(x)
    dip = int(np.argmin(error))
    above = np.nonzero(np.abs(error) >= 0.01 * np.abs(error).max())[0]
    return TanhErrorShape(float(error[dip]), float(x[dip]), float(x[above[-1]]))
