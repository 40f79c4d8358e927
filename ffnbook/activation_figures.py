"""Figures for the activations section: the functions, their slopes, and the tanh approximation's error.

Each function draws on :func:`ffnbook.plotting.new_figure` and returns a
:class:`~ffnbook.plotting.BookFigure`; the numbers behind the curves come
from :mod:`ffnbook.activations`, :mod:`ffnbook.derivatives` and
:mod:`ffnbook.tanh_approximation`, and the names in legends and alt text from
:data:`ffnbook.activations.LABELS`.
"""

from __future__ import annotations

import numpy as np

from ._checks import input_grid, require_names
from .activations import ACTIVATIONS, LABELS, get_activation
from .derivatives import get_derivative
from .plotting import OTHER_COLOURS, BookFigure, new_figure, styled
from .tanh_approximation import tanh_approximation_error, tanh_error_shape, tanh_minus_exact

_DEFAULT_NAMES = ("relu", "gelu", "silu")


def _checked_curves(names, lo, hi) -> tuple[tuple[str, ...], np.ndarray]:
    """The activation names, checked, and the grid of inputs every curve figure plots on."""
    names = tuple(require_names(names, "names", ACTIVATIONS))
    return names, input_grid(lo, hi, 1201)


def _draw_curves(names, lo, hi, which: str, ylabel: str, description: str) -> BookFigure:
    names, x = _checked_curves(names, lo, hi)
    fig = new_figure(7.0, 4.0)
    ax = fig.add_subplot()
    styles = ("-", "--", "-.", ":")
    for i, name in enumerate(names):
        f = get_activation(name) if which == "value" else get_derivative(name)
        ax.plot(x, f(x), color=OTHER_COLOURS[i % len(OTHER_COLOURS)], linestyle=styles[i % len(styles)],
                linewidth=2, label=LABELS[name])
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

    >>> activation_curves().description.startswith("Line plot of ReLU, GELU, SiLU for inputs from -4 to 4.")
    True
    """
    names, x = _checked_curves(names, lo, hi)
    lowest = {n: float(get_activation(n)(x).min()) for n in names}
    dips = [f"{LABELS[n]} reaches {v:.3f}" for n, v in lowest.items() if v < 0]
    description = (
        "Line plot of " + ", ".join(LABELS[n] for n in names) + f" {_range_words(lo, hi)}. "
        "All of them are near zero for large negative inputs and near the line y = x for large "
        "positive ones. ReLU has a sharp corner at zero; the smooth curves dip below zero for "
        "negative inputs" + (" (lowest values: " + "; ".join(dips) + ")" if dips else "") + "."
    )
    return _draw_curves(names, lo, hi, "value", "activation output φ(x)", description)


@styled
def derivative_curves(names=_DEFAULT_NAMES, lo: float = -4.0, hi: float = 4.0) -> BookFigure:
    """The closed-form derivatives of ``names`` over ``[lo, hi]``; the description is the alt text."""
    names, x = _checked_curves(names, lo, hi)
    extremes = {n: (float(get_derivative(n)(x).min()), float(get_derivative(n)(x).max())) for n in names}
    description = (
        "Line plot of the derivatives of " + ", ".join(LABELS[n] for n in names)
        + f" {_range_words(lo, hi)}. "
        + "; ".join(f"{LABELS[n]}'s slope runs from {a:.3f} to {b:.3f}" for n, (a, b) in extremes.items())
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
    err = tanh_approximation_error(lo, hi, n)
    x = input_grid(lo, hi, n)
    fig = new_figure(7.0, 3.6)
    ax = fig.add_subplot()
    ax.plot(x, tanh_minus_exact(x), color=OTHER_COLOURS[2], linewidth=2)
    ax.axhline(0, color="#444444", linewidth=0.8)
    for sign in (-1, 1):
        xs = sign * err.at_x
        ys = float(tanh_minus_exact(np.array([xs]))[0])
        ax.plot([xs], [ys], "o", color=OTHER_COLOURS[1], markersize=7)
    ax.annotate(
        f"largest |error| {err.max_abs_error:.1e}\nat x = ±{err.at_x:.2f}",
        xy=(err.at_x, float(tanh_minus_exact(np.array([err.at_x]))[0])),
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
