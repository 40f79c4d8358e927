"""Gated feed-forward networks: GLU and its transformer variants, in NumPy.

A gated FFN replaces the classic ``act(x W1 + b1) W2 + b2`` by::

    FFN_act(x) = (act(x @ W) * (x @ V)) @ W2

with no biases (Shazeer, 2020): ``W`` and ``V`` both have shape
``(d_model, d_ff)`` and ``W2`` has shape ``(d_ff, d_model)``. One projection,
passed through the activation, multiplies the other elementwise: it *gates*
it. The activation names the variant: "sigmoid" gives GLU, "relu" ReGLU,
"gelu" GEGLU, "silu" SwiGLU and "identity" the bilinear layer.

This module does not import torch; :mod:`ffnbook.gated_torch` holds the
PyTorch version.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import (
    float_arrays,
    float_dtype,
    lookup,
    require_bundle,
    require_finite_and_one_dtype,
    require_positive_int,
    require_seed,
    require_shape,
)
from .activations import gelu, identity, relu, sigmoid, silu
from .feedforward import check_input

# Pages call these as gated.gated_ffn_param_count and gated.equal_parameter_width.
from .parameters import equal_parameter_width, ffn_param_count, gated_ffn_param_count  # noqa: F401

#: Activation names :func:`gated_ffn` accepts, mapped to the NumPy functions.
GATE_ACTIVATIONS = {
    "sigmoid": sigmoid,
    "relu": relu,
    "gelu": gelu,
    "silu": silu,
    "identity": identity,
}

#: The name each activation gives the gated FFN (Shazeer, 2020).
VARIANT_NAMES = {
    "sigmoid": "GLU",
    "relu": "ReGLU",
    "gelu": "GEGLU",
    "silu": "SwiGLU",
    "identity": "Bilinear",
}


def get_gate_activation(name: str):
    """The activation function for the gated variant ``name``, or raise.

    >>> get_gate_activation("tanh")
    Traceback (most recent call last):
    ...
    ValueError: unknown gate activation 'tanh'; expected one of: gelu, identity, relu, sigmoid, silu
    """
    return lookup(GATE_ACTIVATIONS, name, "gate activation")


class GatedParams(NamedTuple):
    """The three matrices of a gated FFN. Unpacks into :func:`gated_ffn`: ``gated_ffn(x, *params)``."""

    W: np.ndarray  #: gate projection, ``(d_model, d_ff)``; the activation is applied to ``x @ W``
    V: np.ndarray  #: linear ("up") projection, ``(d_model, d_ff)``
    W2: np.ndarray  #: output ("down") projection, ``(d_ff, d_model)``

    @property
    def d_model(self) -> int:
        return int(self.W.shape[0])

    @property
    def d_ff(self) -> int:
        return int(self.W.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return self.W.dtype

    def astype(self, dtype) -> GatedParams:
        """The same weights converted to ``dtype`` (float32 or float64)."""
        dtype = float_dtype(dtype)
        return GatedParams(*(np.asarray(a, dtype=dtype) for a in self))


def check_gated_params(W, V, W2) -> GatedParams:
    """Validate the three matrices against each other and return them.

    >>> check_gated_params(np.zeros((4, 8)), np.zeros((4, 8)), np.zeros((4, 8)))
    Traceback (most recent call last):
    ...
    ValueError: W2 must have shape (8, 4), got (4, 8)
    """
    arrays = float_arrays({"W": W, "V": V, "W2": W2})
    if arrays["W"].ndim != 2:
        raise ValueError(
            f"W must be a 2-D array of shape (d_model, d_ff), got shape {arrays['W'].shape}"
        )
    d_model, d_ff = arrays["W"].shape
    require_shape(arrays["V"], (d_model, d_ff), "V")
    require_shape(arrays["W2"], (d_ff, d_model), "W2")
    require_finite_and_one_dtype(arrays)
    return GatedParams(**arrays)


def gated_params_of(params, name: str = "params") -> GatedParams:
    """:func:`check_gated_params` for one argument holding the three matrices (GatedParams or a tuple)."""
    return check_gated_params(*require_bundle(params, name, GatedParams._fields, "GatedParams"))


def init_gated_params(d_model: int, d_ff: int, seed: int = 0, dtype=np.float64) -> GatedParams:
    """Random gated-FFN weights, reproducible from ``seed``.

    Drawn like PyTorch's ``nn.Linear`` default, uniform in ``±1/sqrt(fan_in)``,
    as :func:`~ffnbook.feedforward.init_ffn_params` does for the classic FFN.

    >>> p = init_gated_params(4, 6, seed=1)
    >>> p.W.shape, p.V.shape, p.W2.shape
    ((4, 6), (4, 6), (6, 4))
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    dtype = float_dtype(dtype)
    rng = np.random.default_rng(require_seed(seed))
    bound_in, bound_hidden = 1.0 / np.sqrt(d_model), 1.0 / np.sqrt(d_ff)
    W = rng.uniform(-bound_in, bound_in, size=(d_model, d_ff))
    V = rng.uniform(-bound_in, bound_in, size=(d_model, d_ff))
    W2 = rng.uniform(-bound_hidden, bound_hidden, size=(d_ff, d_model))
    return GatedParams(W, V, W2).astype(dtype)


def gated_ffn(x, W, V, W2, activation: str = "silu") -> np.ndarray:
    """Apply the gated FFN ``(act(x W) ⊙ x V) W2`` to the last axis of ``x``.

    Parameters
    ----------
    x : array of shape ``(..., d_model)``, float32 or float64
    W, V : gate and linear projections, each ``(d_model, d_ff)``, same dtype as ``x``
    W2 : output projection, ``(d_ff, d_model)``
    activation : str
        ``"sigmoid"`` for GLU, ``"relu"`` for ReGLU, ``"gelu"`` for GEGLU,
        ``"silu"`` for SwiGLU or ``"identity"`` for the bilinear layer

    Returns
    -------
    array of the same shape and dtype as ``x``

    >>> p = init_gated_params(8, 12, seed=0)
    >>> gated_ffn(np.ones((2, 5, 8)), *p, activation="gelu").shape
    (2, 5, 8)
    """
    act = get_gate_activation(activation)
    params = check_gated_params(W, V, W2)
    x = check_input(x, params.d_model, params.dtype)
    gate = act(x @ params.W)
    return (gate * (x @ params.V)) @ params.W2


def gated_layer(params: GatedParams, activation: str = "silu"):
    """The gated FFN with fixed weights, as a one-argument layer for :mod:`ffnbook.position_independence`."""
    params = gated_params_of(params)
    get_gate_activation(activation)
    return lambda x: gated_ffn(x, *params, activation=activation)


class GateSample(NamedTuple):
    """Hidden values of a gated FFN on a batch of inputs, flattened."""

    gate: np.ndarray  #: ``act(x W)``
    linear: np.ndarray  #: ``x V``
    product: np.ndarray  #: ``act(x W) ⊙ x V``, what ``W2`` receives


def hidden_values(x, params: GatedParams, activation: str = "silu") -> GateSample:
    """The gate, the linear branch and their product for input ``x``, each flattened."""
    act = get_gate_activation(activation)
    params = gated_params_of(params)
    x = check_input(x, params.d_model, params.dtype)
    gate, linear = act(x @ params.W), x @ params.V
    return GateSample(gate.ravel(), linear.ravel(), (gate * linear).ravel())


# --- Figures --------------------------------------------------------------------------------


def parameter_budget_figure(d_model: int, d_ff_classic: int):
    """Parameters against hidden width for a bias-free classic and a gated FFN.

    The classic FFN's line has slope ``2·d_model``, the gated one ``3·d_model``;
    the horizontal line is the classic FFN's budget at ``d_ff_classic``, and it
    meets the gated line at ``2/3·d_ff_classic``.
    """
    from .plotting import FFN_COLOUR, BookFigure, new_figure, styled

    d_model = require_positive_int(d_model, "d_model")
    d_ff_classic = require_positive_int(d_ff_classic, "d_ff_classic")

    @styled
    def draw():
        widths = np.linspace(0, 1.25 * d_ff_classic, 200)
        budget = ffn_param_count(d_model, d_ff_classic, bias=False)
        d_ff_gated = equal_parameter_width(d_ff_classic)
        fig = new_figure(7.0, 4.0)
        ax = fig.add_subplot()
        scale = 1e6
        # Parameters per unit of width: the slope of each line.
        classic_slope = ffn_param_count(d_model, 1, bias=False)
        gated_slope = gated_ffn_param_count(d_model, 1)
        ax.plot(widths, classic_slope * widths / scale, color=FFN_COLOUR, linewidth=2,
                label="classic FFN: 2·d_model·d_ff")
        ax.plot(widths, gated_slope * widths / scale, color=FFN_COLOUR, linewidth=2, linestyle="--",
                label="gated FFN: 3·d_model·d_ff")
        ax.axhline(budget / scale, color="#666666", linewidth=1, linestyle=":")
        ax.plot([d_ff_classic], [budget / scale], "o", color=FFN_COLOUR, markersize=8)
        ax.plot([d_ff_gated], [budget / scale], "s", color=FFN_COLOUR, markersize=8)
        ax.annotate(f"d_ff = {d_ff_classic:,}", (d_ff_classic, budget / scale), xytext=(6, -16),
                    textcoords="offset points", color="#111111")
        ax.annotate(f"d_ff = {d_ff_gated:,.0f}", (d_ff_gated, budget / scale), xytext=(-78, 8),
                    textcoords="offset points", color="#111111")
        ax.set_xlabel("hidden width d_ff (units)")
        ax.set_ylabel("parameters per FFN (millions)")
        ax.set_xlim(0, widths[-1])
        ax.set_ylim(0, None)
        ax.legend(loc="upper left")
        return BookFigure(
            fig,
            f"parameters vs d_ff at d_model={d_model}: classic and gated lines; equal budget "
            f"{budget:,} at d_ff {d_ff_classic:,} and {d_ff_gated:,.0f}",
        )

    return draw()


def gate_histogram_figure(x, params: GatedParams, activation: str = "silu"):
    """Histograms of the gate ``act(x W)`` and of the gated product ``act(x W) ⊙ x V``.

    Values that are exactly zero (a closed ReLU gate) are left out of the bars,
    which would otherwise be one tall spike, and reported in each panel's
    corner instead. The gate alone has the activation's one-sided shape; after
    multiplying by the linear branch the hidden values take both signs.
    """
    from .plotting import OTHER_COLOURS, BookFigure, new_figure, styled

    sample = hidden_values(x, params, activation)
    if sample.gate.size == 0:
        raise ValueError(f"x must hold at least one position, got shape {np.shape(x)}")

    @styled
    def draw():
        fig = new_figure(7.0, 3.6)
        axes = fig.subplots(1, 2, sharey=True)
        name = VARIANT_NAMES[activation]
        panels = ((sample.gate, f"gate act(xW), act = {activation}", OTHER_COLOURS[0]),
                  (sample.product, f"{name} hidden: act(xW) ⊙ xV", OTHER_COLOURS[1]))
        lo = float(min(sample.gate.min(), sample.product.min()))
        hi = float(max(sample.gate.max(), sample.product.max()))
        bins = np.linspace(lo, hi, 61)
        for ax, (values, title, colour) in zip(axes, panels):
            nonzero = values[values != 0]
            ax.hist(nonzero, bins=bins, color=colour, alpha=0.85)
            ax.axvline(0, color="#444444", linewidth=0.8)
            ax.set_title(title)
            ax.set_xlabel("hidden value (dimensionless)")
            zero_share = 1.0 - nonzero.size / values.size
            ax.text(0.97, 0.95, f"exactly 0: {zero_share:.0%}\n(not drawn)", transform=ax.transAxes,
                    ha="right", va="top", color="#111111")
        axes[0].set_ylabel("count of nonzero hidden values")
        negative = float(np.mean(sample.product < 0))
        return BookFigure(
            fig,
            f"histograms of {activation} gate and gated product over {sample.gate.size:,} hidden "
            f"values; {negative:.0%} of products negative",
        )

    return draw()
