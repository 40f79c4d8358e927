"""The FFN taken apart: expand, activate, compress.

:func:`shape_trace` runs the three steps one at a time and records the shape
after each; :func:`hidden_layer` returns the hidden layer before and after
the activation; :func:`conv1d_equivalence_max_diff` checks the original
paper's remark that the FFN is two convolutions with kernel size 1.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, require_positive_int
from .activations import LABELS, get_activation
from .display import readable
from .feedforward import check_input, ffn, ffn_params_of
from .plotting import OTHER_COLOURS, PALETTE, BookFigure, new_figure, styled


def _check_ffn_params(params):
    """The FFN's four arrays from one ``params`` argument, checked (:func:`~ffnbook.feedforward.ffn_params_of`)."""
    return ffn_params_of(params)


def _format_shape(shape: tuple) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def shape_trace(x, params, activation: str = "relu") -> list[dict]:
    """Run the FFN step by step on ``x`` and record every intermediate shape.

    The shapes are read off the arrays actually computed, not derived from
    the widths, so the trace shows what the code does. The last row's array
    is the FFN's output; it equals :func:`~ffnbook.feedforward.ffn` exactly
    (the same operations in the same order).

    Parameters
    ----------
    x : array of shape ``(..., d_model)``
    params : :class:`~ffnbook.feedforward.FFNParams`
    activation : a name from ``ffnbook.ACTIVATIONS``

    Returns
    -------
    list of dicts with keys ``"stage"``, ``"operation"``, ``"shape"`` (a tuple
    of ints) and ``"what"`` (one line on what happens), one per stage: input,
    expand, activate, compress.

    >>> from ffnbook import init_ffn_params
    >>> rows = shape_trace(np.zeros((2, 3, 4)), init_ffn_params(4, 16))
    >>> [(r["stage"], r["shape"]) for r in rows]
    [('input', (2, 3, 4)), ('expand', (2, 3, 16)), ('activate', (2, 3, 16)), ('compress', (2, 3, 4))]
    """
    act = get_activation(activation)
    params = _check_ffn_params(params)
    x = check_input(x, params.d_model, params.dtype)
    expanded = x @ params.W1 + params.b1
    activated = act(expanded)
    compressed = activated @ params.W2 + params.b2
    return [
        {"stage": "input", "operation": "x", "shape": tuple(x.shape),
         "what": "one vector of width d_model per position"},
        {"stage": "expand", "operation": "x W1 + b1", "shape": tuple(expanded.shape),
         "what": "each position's vector is mapped to d_ff hidden values"},
        {"stage": "activate", "operation": f"{activation}(·)", "shape": tuple(activated.shape),
         "what": "the nonlinearity acts on each hidden value separately"},
        {"stage": "compress", "operation": "h W2 + b2", "shape": tuple(compressed.shape),
         "what": "the hidden values are mapped back to width d_model"},
    ]


def shape_trace_table(x, params, activation: str = "relu"):
    """:func:`shape_trace` as a :class:`~ffnbook.display.MarkdownTable` for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        shape_trace(x, params, activation),
        [
            ("stage", "stage", "s"),
            ("operation", "operation", lambda s: f"`{s}`"),
            ("shape", "shape", _format_shape),
            ("what happens", "what", "s"),
        ],
    )


class HiddenLayer(NamedTuple):
    """The FFN's hidden layer for one input, before and after the activation."""

    pre: np.ndarray  #: ``x @ W1 + b1``, shape ``(..., d_ff)``
    post: np.ndarray  #: ``activation(pre)``, same shape


def hidden_layer(x, params, activation: str = "relu") -> HiddenLayer:
    """The hidden layer of the FFN on ``x``: pre-activation and post-activation values.

    >>> from ffnbook import init_ffn_params
    >>> h = hidden_layer(np.ones((3, 4)), init_ffn_params(4, 16))
    >>> h.pre.shape, bool((h.post >= 0).all())
    ((3, 16), True)
    """
    act = get_activation(activation)
    params = _check_ffn_params(params)
    x = check_input(x, params.d_model, params.dtype)
    pre = x @ params.W1 + params.b1
    return HiddenLayer(pre, act(pre))


@readable
class ActiveFraction(NamedTuple):
    """How many hidden units pass a nonzero value on, as a fraction of ``d_ff``."""

    mean: float  #: over all positions
    lowest: float  #: at the position with the fewest active units
    highest: float  #: at the position with the most


def active_fraction(x, params, activation: str = "relu") -> ActiveFraction:
    """Fraction of hidden units whose post-activation value is not exactly zero.

    Meaningful for ReLU, which outputs exact zeros; smooth activations such
    as GELU shrink negative inputs without zeroing them, so nearly every
    unit counts as active for them.

    >>> from ffnbook import init_ffn_params
    >>> p = init_ffn_params(4, 16, seed=0)
    >>> # for x = 0 the hidden layer is relu(b1): active exactly where b1 > 0
    >>> active_fraction(np.zeros((1, 4)), p).mean == float((p.b1 > 0).mean())
    True
    """
    post = hidden_layer(x, params, activation).post
    if post.size == 0:
        raise ValueError(f"x must hold at least one position, got shape {np.shape(x)}")
    per_position = (post != 0).mean(axis=-1).reshape(-1)
    return ActiveFraction(
        mean=float(per_position.mean()),
        lowest=float(per_position.min()),
        highest=float(per_position.max()),
    )


@styled
def hidden_layer_figure(x, params, activation: str = "relu", bins: int = 60) -> BookFigure:
    """Two panels on the hidden layer of the FFN applied to ``x``.

    Left: histograms of the hidden values before and after the activation
    (the post-activation spike at zero is the units the activation switched
    off). Right: for each position, the fraction of hidden units left active.
    ``x`` has shape ``(seq_len, d_model)`` or ``(batch, seq_len, d_model)``;
    positions of all sequences are numbered in order on the right.
    """
    params = _check_ffn_params(params)
    bins = require_positive_int(bins, "bins", maximum=10_000)
    x = as_float_array(x, "x")
    if x.ndim not in (2, 3) or x.size == 0:
        raise ValueError(f"x must have shape (seq_len, d_model) or (batch, seq_len, d_model), with at least one "
                         f"position, got {x.shape}")
    hidden = hidden_layer(x, params, activation)
    pre, post = hidden.pre.reshape(-1), hidden.post.reshape(-1)
    per_position = (hidden.post != 0).mean(axis=-1).reshape(-1)

    fig = new_figure(10.0, 3.8)
    left, right = fig.subplots(1, 2, width_ratios=[1.3, 1.0])
    edges = np.linspace(min(pre.min(), post.min()), max(pre.max(), post.max()), bins + 1)
    left.hist(pre, bins=edges, color=OTHER_COLOURS[0], alpha=0.55, label="before activation")
    left.hist(post, bins=edges, color=OTHER_COLOURS[1], histtype="step", linewidth=1.8,
              label=f"after {activation}")
    left.set_yscale("log")
    left.set_xlabel("hidden value (dimensionless)")
    left.set_ylabel("count of hidden values (log scale)")
    left.set_title(f"all {pre.size:,} hidden values")
    left.legend(loc="upper right")

    positions = np.arange(per_position.size)
    right.bar(positions, per_position, color=PALETTE[2], width=0.8)
    right.axhline(per_position.mean(), color=PALETTE[6], linestyle="--", linewidth=1.2,
                  label=f"mean {per_position.mean():.1%}")
    right.set_ylim(0, 1)
    right.set_xlabel("position (all sequences in order)")
    right.set_ylabel("fraction of hidden units active")
    right.set_title("active units per position")
    right.legend(loc="upper right")
    name = LABELS[activation]
    description = (
        f"Left, a histogram with a logarithmic count axis of all {pre.size:,} hidden values, "
        f"before {name} (a bell shape centred near zero, from {pre.min():.1f} to "
        f"{pre.max():.1f}) and after it, where {float(np.mean(post == 0)):.1%} of them sit in "
        "one tall bar at zero and the positive side is unchanged. Right, a bar chart of the "
        f"fraction of hidden units active at each of the {per_position.size} positions: every "
        f"bar lies between {per_position.min():.1%} and {per_position.max():.1%}, with a dashed "
        f"line at the mean, {per_position.mean():.1%}."
    )
    return BookFigure(fig, description)


def conv1d_equivalence_max_diff(params, x, activation: str = "relu") -> float:
    """Largest difference between the FFN and two kernel-size-1 convolutions with its weights.

    ``torch.nn.Conv1d(d_model, d_ff, kernel_size=1)`` followed by the
    activation and ``Conv1d(d_ff, d_model, kernel_size=1)`` receives the FFN's
    weights (a convolution weight has shape ``(out_channels, in_channels,
    kernel_size)``, so ``W1.T`` gains a last axis of length 1). Convolutions
    want channels first, ``(batch, channels, length)``, so ``x`` is
    transposed on the way in and back on the way out. Everything runs in
    float64.

    Parameters
    ----------
    params : :class:`~ffnbook.feedforward.FFNParams`
    x : array of shape ``(batch, seq_len, d_model)``
    activation : a name from ``ffnbook.ACTIVATIONS``

    Returns
    -------
    float, the largest absolute difference over all outputs

    >>> from ffnbook import init_ffn_params
    >>> p = init_ffn_params(4, 16, seed=0)
    >>> conv1d_equivalence_max_diff(p, np.ones((2, 3, 4))) < 1e-12
    True
    """
    params = _check_ffn_params(params).astype(np.float64)
    x = as_float_array(x, "x")
    if x.ndim != 3 or x.size == 0:
        raise ValueError(f"x must have shape (batch, seq_len, d_model), with at least one position, got {x.shape}")
    x = check_input(x.astype(np.float64), params.d_model, np.dtype(np.float64))
    get_activation(activation)  # a clear error for an unknown name, before torch loads

    import torch
    from torch import nn

    from .torch_ffn import TORCH_ACTIVATIONS, load_linear

    expand = nn.Conv1d(params.d_model, params.d_ff, kernel_size=1).double()
    compress = nn.Conv1d(params.d_ff, params.d_model, kernel_size=1).double()
    load_linear(expand, params.W1, params.b1)  # weight (d_ff, d_model, 1): W1.T with a kernel axis
    load_linear(compress, params.W2, params.b2)
    with torch.no_grad():
        channels_first = torch.from_numpy(np.ascontiguousarray(x)).transpose(1, 2)
        out = compress(TORCH_ACTIVATIONS[activation]()(expand(channels_first)))
        conv_out = out.transpose(1, 2).numpy()
    expected = ffn(x, *params, activation=activation)
    return float(np.max(np.abs(conv_out - expected)))
