"""Figures for the activations section: the functions, their slopes, and the tanh approximation's error.

Each function draws on :func:`ffnbook.plotting.new_figure` and returns a
:class:`~ffnbook.plotting.BookFigure`; the numbers behind the curves come
from :mod:`ffnbook.activations`.
"""

from __future__ import annotations

import math

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


@styled
def activation_curves(names=_DEFAULT_NAMES, lo: float = -4.0, hi: float = 4.0) -> BookFigure:
    """The activations ``names`` plotted over ``[lo, hi]``.

    >>> activation_curves().description
    'ReLU, GELU (exact), SiLU / Swish-1 on [-4, 4]'
    """
    names = _check_names(names)
    description = ", ".join(LABELS.get(n, n) for n in names) + f" on [{lo:g}, {hi:g}]"
    return _draw_curves(names, lo, hi, "value", "activation output φ(x)", description)


@styled
def derivative_curves(names=_DEFAULT_NAMES, lo: float = -4.0, hi: float = 4.0) -> BookFigure:
    """The closed-form derivatives of the activations ``names`` over ``[lo, hi]``."""
    names = _check_names(names)
    description = "derivatives of " + ", ".join(LABELS.get(n, n) for n in names) + f" on [{lo:g}, {hi:g}]"
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
    return BookFigure(
        fig, f"tanh-approximation error of GELU on [{lo:g}, {hi:g}], max {err.max_abs_error:.1e} at ±{err.at_x:.2f}"
    )
