"""Where the FFN sits: a whole transformer block in NumPy, and who influences whom.

A block has two sublayers, self-attention and the FFN, each wrapped in a
residual connection and a layer normalisation. The original transformer puts
the normalisation *after* each residual add ("post-norm")::

    h = LN(x + Attention(x))
    y = LN(h + FFN(h))

The common variant normalises the *input* of each sublayer and adds the
sublayer's output to the unnormalised residual stream ("pre-norm")::

    h = x + Attention(LN(x))
    y = h + FFN(LN(h))

:func:`transformer_block` computes either; :func:`influence_matrix` measures,
for every pair of positions, how far an output moves when an input is
nudged, which shows in one picture that attention mixes positions and the
FFN does not.

Both are *serial* blocks: the FFN reads what attention has just added. GPT-J
and PaLM run the two sublayers side by side on the same normalised input
instead, a *parallel* block (:func:`parallel_block`)::

    y = x + Attention(LN(x)) + FFN(LN(x))

so inside one block the FFN never sees what that block's attention gathered
(:func:`ffn_branch`, :func:`ffn_branch_influences`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, describe, require_choice, require_finite, require_positive_number, require_seed
from .activations import get_activation
from .attention import AttentionParams, check_attention_params, self_attention
from .display import readable
from .feedforward import FFNParams, check_input, ffn, ffn_params_of
from .plotting import ATTENTION_COLOUR, FFN_COLOUR, PALETTE, BookFigure, new_figure, styled

Layer = Callable[[np.ndarray], np.ndarray]

#: The layer norms' default ``eps``, as ``torch.nn.LayerNorm``'s (the tiny trained
#: transformer of :mod:`ffnbook.tiny_transformer` uses it too).
LN_EPS = 1e-5

#: The two placements of layer normalisation that :func:`transformer_block` knows.
NORM_PLACEMENTS = ("pre", "post")

#: Second word of the nudge direction's seed, so it never coincides with test inputs.
_NUDGE_STREAM = 0x6E75_6467


def _positive_float(value, name: str) -> float:
    return require_positive_number(value, name)


def layer_norm(x, eps: float = LN_EPS, gain=None, bias=None) -> np.ndarray:
    """Normalise every vector on the last axis of ``x`` to mean 0 and variance 1.

    Computes ``(x - mean) / sqrt(var + eps) * gain + bias`` per position, with
    the biased variance (divide by ``d_model``), as ``torch.nn.LayerNorm``
    does. ``gain`` and ``bias`` (shape ``(d_model,)``) are the learned affine
    parameters; left out, they are 1 and 0, which is also how a freshly
    initialised ``LayerNorm`` starts.

    Parameters
    ----------
    x : array of shape ``(..., d_model)``, float32 or float64
    eps : small positive number added to the variance, so a constant vector
        does not divide by zero
    gain, bias : optional arrays of shape ``(d_model,)`` and the dtype of ``x``

    Returns
    -------
    array of the same shape and dtype as ``x``

    >>> y = layer_norm(np.array([[1.0, 2.0, 3.0, 6.0]]))
    >>> abs(float(y.mean())) < 1e-12, round(float(y.var()), 4)
    (True, 1.0)
    >>> layer_norm(np.ones((2, 4)), gain=np.ones(3))
    Traceback (most recent call last):
    ...
    ValueError: gain must have shape (4,), got (3,)
    """
    x = as_float_array(x, "x")
    if x.ndim == 0:
        raise ValueError("x must have at least one axis (the d_model axis), got a scalar")
    require_finite(x, "x")
    eps = _positive_float(eps, "eps")
    d_model = x.shape[-1]
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    for name, value in (("gain", gain), ("bias", bias)):
        if value is None:
            continue
        value = as_float_array(value, name, dtype=x.dtype)
        if value.shape != (d_model,):
            raise ValueError(f"{name} must have shape ({d_model},), got {value.shape}")
        require_finite(value, name)
        if value.dtype != x.dtype:
            raise TypeError(f"{name} has dtype {value.dtype} but x is {x.dtype}")
    if gain is not None:
        y = y * gain
    if bias is not None:
        y = y + bias
    return y.astype(x.dtype, copy=False)


def transformer_block(
    x,
    attn_params: AttentionParams,
    ffn_params: FFNParams,
    *,
    n_heads: int,
    norm: str = "pre",
    activation: str = "relu",
    eps: float = LN_EPS,
) -> np.ndarray:
    """One transformer block: attention and FFN, each with a residual add and a layer norm.

    Parameters
    ----------
    x : array of shape ``(..., seq_len, d_model)``
    attn_params : :class:`~ffnbook.attention.AttentionParams` of width ``d_model``
    ffn_params : :class:`~ffnbook.feedforward.FFNParams` of width ``d_model``
    n_heads : number of attention heads (must divide ``d_model``)
    norm : ``"post"`` for ``LN(x + sublayer(x))`` after each sublayer, as in the
        original transformer; ``"pre"`` for ``x + sublayer(LN(x))``
    activation : the FFN's activation, a name from ``ffnbook.ACTIVATIONS``
    eps : the layer norms' ``eps``

    Returns
    -------
    array of the same shape as ``x``

    >>> from ffnbook import init_attention_params, init_ffn_params
    >>> a, f = init_attention_params(8, seed=0), init_ffn_params(8, 32, seed=0)
    >>> transformer_block(np.ones((2, 5, 8)), a, f, n_heads=2).shape
    (2, 5, 8)
    >>> transformer_block(np.ones((5, 8)), a, f, n_heads=2, norm="middle")
    Traceback (most recent call last):
    ...
    ValueError: norm must be 'pre' or 'post', got 'middle'
    """
    attn_params, ffn_params = _check_block(attn_params, ffn_params, n_heads, norm, activation)
    eps = _positive_float(eps, "eps")
    x = _block_input(x, ffn_params)

    def attend(t):
        return self_attention(t, attn_params, n_heads=n_heads)

    def transform(t):
        return ffn(t, *ffn_params, activation=activation)

    def ln(t):
        return layer_norm(t, eps=eps)

    if norm == "post":
        h = ln(x + attend(x))
        return ln(h + transform(h))
    h = x + attend(ln(x))
    return h + transform(ln(h))


def _check_block(attn_params, ffn_params, n_heads, norm, activation) -> tuple[AttentionParams, FFNParams]:
    """The checks :func:`transformer_block` makes before it computes: both sublayers' weights, one width."""
    if norm not in NORM_PLACEMENTS:
        raise ValueError(f"norm must be 'pre' or 'post', got {norm!r}")
    get_activation(activation)
    ffn_params = ffn_params_of(ffn_params, "ffn_params")
    attn_params, d_attention = check_attention_params(attn_params, n_heads, "attn_params")
    if d_attention != ffn_params.d_model:
        raise ValueError(
            f"attention has d_model={d_attention} but the FFN has "
            f"d_model={ffn_params.d_model}; the two sublayers (attn_params, ffn_params) must share one width"
        )
    if attn_params.Wq.dtype != ffn_params.dtype:
        raise TypeError(f"attn_params are {attn_params.Wq.dtype} but ffn_params are {ffn_params.dtype}; "
                        "convert one of them")
    return attn_params, ffn_params


def _block_input(x, ffn_params: FFNParams) -> np.ndarray:
    """A block's input: ``(..., seq_len >= 1, d_model)``, finite, in the weights' dtype."""
    x = check_input(x, ffn_params.d_model, ffn_params.dtype)
    if x.ndim < 2 or x.shape[-2] == 0:
        raise ValueError(f"x must have shape (..., seq_len, d_model) with seq_len >= 1, got {x.shape}")
    return x


#: The two arrangements of a block's sublayers that :func:`ffn_branch` knows, ``"serial"``
#: (the FFN after attention, pre-norm) and ``"parallel"`` (both read the block's normalised
#: input, as in GPT-J and PaLM).
LAYOUTS = ("serial", "parallel")


def parallel_block(
    x,
    attn_params: AttentionParams,
    ffn_params: FFNParams,
    *,
    n_heads: int,
    activation: str = "relu",
    eps: float = LN_EPS,
) -> np.ndarray:
    """A parallel transformer block: ``x + Attention(LN(x)) + FFN(LN(x))``.

    Attention and the FFN read the same normalised copy of the block's input
    and both outputs are added to it, as in GPT-J's layer (one layer norm feeds
    both sublayers) and in PaLM's "parallel" formulation. Compare the pre-norm
    serial block of :func:`transformer_block`, ``h = x + Attention(LN(x))``,
    ``y = h + FFN(LN(h))``, whose FFN reads what attention just added.

    Parameters
    ----------
    x : array of shape ``(..., seq_len, d_model)``
    attn_params, ffn_params, n_heads, activation, eps : as for :func:`transformer_block`

    Returns
    -------
    array of the same shape as ``x``

    >>> from ffnbook import init_attention_params, init_ffn_params
    >>> a, f = init_attention_params(8, seed=0), init_ffn_params(8, 32, seed=0)
    >>> parallel_block(np.ones((2, 5, 8)), a, f, n_heads=2).shape
    (2, 5, 8)
    """
    attn_params, ffn_params = _check_block(attn_params, ffn_params, n_heads, "pre", activation)
    x = _block_input(x, ffn_params)
    normed = layer_norm(x, eps=eps)
    return x + self_attention(normed, attn_params, n_heads=n_heads) + ffn(normed, *ffn_params, activation=activation)


def ffn_branch(
    x,
    attn_params: AttentionParams,
    ffn_params: FFNParams,
    *,
    n_heads: int,
    layout: str = "serial",
    activation: str = "relu",
    eps: float = LN_EPS,
) -> np.ndarray:
    """What the FFN adds to the residual stream inside one block, as a function of the block's input.

    ``layout="serial"``: ``FFN(LN(x + Attention(LN(x))))``, the pre-norm block
    of :func:`transformer_block`; its input already holds what attention
    gathered from the other positions. ``layout="parallel"``: ``FFN(LN(x))``,
    the branch of :func:`parallel_block`, which reads the block's input only.
    """
    require_choice(layout, "layout", LAYOUTS)
    attn_params, ffn_params = _check_block(attn_params, ffn_params, n_heads, "pre", activation)
    x = _block_input(x, ffn_params)
    if layout == "serial":
        x = x + self_attention(layer_norm(x, eps=eps), attn_params, n_heads=n_heads)
    return ffn(layer_norm(x, eps=eps), *ffn_params, activation=activation)


def ffn_branch_influences(
    x, attn_params: AttentionParams, ffn_params: FFNParams, *, n_heads: int, activation: str = "relu",
) -> dict[str, np.ndarray]:
    """Influence matrices (:func:`influence_matrix`) of the FFN's branch in a serial and a parallel block.

    Rows are positions of the FFN's output, columns positions of the block's
    input. Returns ``{"serial": ..., "parallel": ...}``: in the serial block
    every position's FFN output moves when any input moves, through the
    attention in front of it; in the parallel block only the diagonal is
    non-zero.
    """
    return {
        layout: influence_matrix(
            lambda t, layout=layout: ffn_branch(t, attn_params, ffn_params, n_heads=n_heads,
                                                layout=layout, activation=activation), x)
        for layout in LAYOUTS
    }


def block_layer(
    attn_params: AttentionParams,
    ffn_params: FFNParams,
    *,
    n_heads: int,
    norm: str = "pre",
    activation: str = "relu",
) -> Layer:
    """:func:`transformer_block` with fixed weights, as a one-argument layer."""
    attn_params, ffn_params = _check_block(attn_params, ffn_params, n_heads, norm, activation)
    return lambda x: transformer_block(
        x, attn_params, ffn_params, n_heads=n_heads, norm=norm, activation=activation
    )


class SublayerParameters(NamedTuple):
    """How a block's two sublayers split their parameters (FFN with biases, attention without)."""

    ffn: int  #: ``2·d_model·d_ff + d_ff + d_model``
    attention: int  #: ``4·d_model²``: the four projections, bias-free
    ffn_over_attention: float  #: ``ffn / attention``
    ffn_share: float  #: ``ffn / (ffn + attention)``


def sublayer_parameters(d_model: int, d_ff: int, n_heads: int) -> SublayerParameters:
    """The FFN's and attention's parameter counts in one block, and how they compare.

    >>> split = sublayer_parameters(512, 2048, 8)
    >>> split.ffn, split.attention, round(split.ffn_share, 4)
    (2099712, 1048576, 0.6669)
    """
    from .parameters import attention_param_count, ffn_param_count

    ffn_count = ffn_param_count(d_model, d_ff)
    attention = attention_param_count(d_model, n_heads=n_heads)
    return SublayerParameters(ffn_count, attention, ffn_count / attention, ffn_count / (ffn_count + attention))


@readable
class NormComparison(NamedTuple):
    """Pre-norm and post-norm blocks with the same weights on the same input."""

    same_shape: bool  #: whether both outputs have the input's shape
    max_abs_diff: float  #: largest difference between the two outputs
    input_rms: float  #: root mean square of the input
    pre_output_rms: float  #: root mean square of the pre-norm block's output
    post_output_rms: float  #: root mean square of the post-norm block's output


def compare_norm_placements(
    x, attn_params: AttentionParams, ffn_params: FFNParams, *, n_heads: int, activation: str = "relu"
) -> NormComparison:
    """Run the same block pre-norm and post-norm and report how the outputs differ.

    The post-norm output ends in a layer norm, so every position has unit
    variance and its RMS is (up to ``eps``) exactly 1. The pre-norm output is
    the residual stream itself: the input plus what both sublayers added, at
    whatever scale that has.
    """
    x = as_float_array(x, "x")
    pre = transformer_block(x, attn_params, ffn_params, n_heads=n_heads, norm="pre", activation=activation)
    post = transformer_block(x, attn_params, ffn_params, n_heads=n_heads, norm="post", activation=activation)

    def rms(a):
        return float(np.sqrt(np.mean(a**2)))

    return NormComparison(
        same_shape=bool(pre.shape == post.shape == x.shape),
        max_abs_diff=float(np.max(np.abs(pre - post))),
        input_rms=rms(x),
        pre_output_rms=rms(pre),
        post_output_rms=rms(post),
    )


def influence_matrix(layer: Layer, x, *, step: float = 1e-3, seed: int = 0) -> np.ndarray:
    """How strongly each output position responds to each input position.

    For every input position ``j``, the vector ``x[j]`` is nudged by ``step``
    times a fixed random *unit* vector ``u`` (a standard-normal draw from
    ``seed``, divided by its length), so the nudge has Euclidean length
    ``step``. The layer is run again, and for every output position ``i`` the
    largest absolute change of any feature is recorded, divided by ``step``::

        M[i, j] = max_k |layer(x + step·u at j)[i, k] - layer(x)[i, k]| / step

    ``M[i, j]`` is thus the largest output change per unit length of input
    change; for a small ``step`` it approximates ``max_k |(J_ij u)_k|``, with
    ``J_ij`` the derivative of output ``i`` with respect to input ``j``.
    ``M[i, j] == 0`` means not one bit of output ``i`` moved. The same
    direction is used at every position, so columns are comparable.

    Parameters
    ----------
    layer : function from ``(seq_len, d_model)`` to ``(seq_len, d_model)``
    x : array of shape ``(seq_len, d_model)``
    step : size of the nudge, a positive number
    seed : seed of the nudge direction

    Returns
    -------
    array of shape ``(seq_len, seq_len)``: rows are outputs, columns inputs

    >>> m = influence_matrix(lambda t: 2 * t, np.zeros((3, 4)))
    >>> bool(np.all(m[~np.eye(3, dtype=bool)] == 0)), bool(np.all(np.diag(m) > 0))
    (True, True)
    """
    if not callable(layer):
        raise TypeError(f"layer must be a function of x, got {type(layer).__name__}")
    x = as_float_array(x, "x")
    if x.ndim != 2:
        raise ValueError(f"x must have shape (seq_len, d_model), got {x.shape}")
    require_finite(x, "x")
    step = _positive_float(step, "step")
    seed = require_seed(seed)
    seq_len, d_model = x.shape
    # A seed sequence of its own: with a plain default_rng(seed) the direction
    # would equal x[0] whenever x came from random_tokens(..., seed=seed), and a
    # nudge along x[j] itself is invisible to a layer norm (it only rescales).
    direction = np.random.default_rng([seed, _NUDGE_STREAM]).standard_normal(d_model)
    direction = (direction / np.linalg.norm(direction)).astype(x.dtype)  # a nudge of length `step`
    base = layer(x)
    if base.shape != x.shape:
        raise ValueError(f"layer changed the shape: {base.shape} instead of {x.shape}")
    influence = np.empty((seq_len, seq_len))
    for j in range(seq_len):
        nudged = x.copy()
        nudged[j] += step * direction
        influence[:, j] = np.abs(layer(nudged) - base).max(axis=-1) / step
    return influence


@readable
class InfluenceSummary(NamedTuple):
    """The diagonal and off-diagonal parts of an influence matrix."""

    diagonal_mean: float  #: mean influence of a position on itself
    off_diagonal_max: float  #: largest influence of one position on another
    off_diagonal_share: float  #: off-diagonal sum over total sum, between 0 and 1


def summarize_influence(matrix) -> InfluenceSummary:
    """Split an influence matrix into self-influence and cross-position influence.

    >>> summarize_influence(np.array([[2.0, 1.0], [0.0, 2.0]]))
    InfluenceSummary(diagonal_mean=2.0, off_diagonal_max=1.0, off_diagonal_share=0.2)
    """
    m = as_float_array(matrix, "matrix", finite=True)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
        raise ValueError(f"matrix must be square with at least 2 rows, got shape {m.shape}")
    if np.any(m < 0):
        raise ValueError("matrix must hold non-negative values, as an influence matrix does")
    off = m[~np.eye(m.shape[0], dtype=bool)]
    total = m.sum()
    return InfluenceSummary(
        diagonal_mean=float(np.diag(m).mean()),
        off_diagonal_max=float(off.max()),
        off_diagonal_share=float(off.sum() / total) if total > 0 else 0.0,
    )


def block_influences(
    x, attn_params: AttentionParams, ffn_params: FFNParams, *, n_heads: int,
    norm: str = "pre", activation: str = "relu",
) -> dict[str, np.ndarray]:
    """Influence matrices of the attention sublayer, the FFN sublayer and the whole block.

    The sublayers are measured bare (no residual, no norm), the block with
    both. Returns ``{"attention": ..., "ffn": ..., "block": ...}``.
    """
    attn_params, ffn_params = _check_block(attn_params, ffn_params, n_heads, norm, activation)
    layers = {
        "attention": lambda t: self_attention(t, attn_params, n_heads=n_heads),
        "ffn": lambda t: ffn(t, *ffn_params, activation=activation),
        "block": block_layer(attn_params, ffn_params, n_heads=n_heads, norm=norm, activation=activation),
    }
    return {name: influence_matrix(layer, x) for name, layer in layers.items()}


def _influence_panels(influences, titles: dict) -> dict:
    """The square, finite, non-negative matrices of ``influences`` under the keys of ``titles``, checked."""
    if not isinstance(influences, dict):
        raise TypeError(f"influences must be a dict of matrices with keys {list(titles)}, got {describe(influences)}")
    missing = [k for k in titles if k not in influences]
    if missing:
        raise ValueError(f"influences needs keys {list(titles)}, missing {missing}")
    panels = {}
    for key in titles:
        m = as_float_array(influences[key], f"influences[{key!r}]", finite=True)
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 1 or (m < 0).any():
            raise ValueError(f"influences[{key!r}] must be a square matrix of non-negative values, "
                             f"got shape {m.shape}")
        panels[key] = m
    return panels


@styled
def influence_figure(influences: dict[str, np.ndarray]) -> BookFigure:
    """Three heatmaps side by side: who influences whom in attention, the FFN and the block.

    ``influences`` is the dictionary :func:`block_influences` returns. Each
    panel has its own colour scale, from 0 (white) to that panel's largest
    value, so the *pattern* is comparable across panels.
    """
    titles = {"attention": "attention sublayer", "ffn": "FFN sublayer", "block": "whole block"}
    influences = _influence_panels(influences, titles)
    from matplotlib.colors import LinearSegmentedColormap

    cmap = LinearSegmentedColormap.from_list("ffnbook_blue", ["#ffffff", PALETTE[0], "#002a47"])
    fig = new_figure(10.5, 3.8)
    axes = fig.subplots(1, 3)
    for ax, (key, title) in zip(axes, titles.items()):
        m = np.asarray(influences[key])
        n = m.shape[0]
        top = float(m.max()) or 1.0
        image = ax.imshow(m, cmap=cmap, vmin=0.0, vmax=top)
        ax.set_title(title)
        ax.set_xlabel("input position j (nudged)")
        ax.set_ylabel("output position i")
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.grid(False)
        bar = fig.colorbar(image, ax=ax, shrink=0.8)
        bar.set_label("output change per unit length of nudge")
    description = (
        "Influence heatmaps: attention dense, FFN diagonal only, whole block dense."
    )
    return BookFigure(fig, description)


#: Fill colours of the diagram's boxes, by kind of step.
_DIAGRAM_COLOURS = {"attention": ATTENTION_COLOUR, "ffn": FFN_COLOUR, "norm": PALETTE[2]}
#: Label colour per box, chosen for at least 4.5:1 contrast with its fill.
_DIAGRAM_TEXT = {"attention": "white", "ffn": "#111111", "norm": "#111111"}

#: Steps of each placement, top to bottom, and the residual connections as
#: (index of the step the branch leaves after, index of the add it joins).
_DIAGRAM_STEPS = {
    "post": (
        [("in", "input x"), ("attention", "self-attention"), ("add", "+"), ("norm", "layer norm"),
         ("ffn", "FFN"), ("add", "+"), ("norm", "layer norm"), ("out", "output y")],
        [(0, 2), (3, 5)],
    ),
    "pre": (
        [("in", "input x"), ("norm", "layer norm"), ("attention", "self-attention"), ("add", "+"),
         ("norm", "layer norm"), ("ffn", "FFN"), ("add", "+"), ("out", "output y")],
        [(0, 3), (3, 6)],
    ),
}


@styled
def block_diagram() -> BookFigure:
    """The post-norm and pre-norm blocks as two flow charts side by side.

    Data flows from top to bottom. Boxes are the sublayers (attention, FFN)
    and the layer norms; circles are residual adds, and the line that
    bypasses each sublayer on the right is its residual connection.
    """
    from matplotlib.patches import Circle, FancyBboxPatch

    fig = new_figure(8.0, 5.6)
    axes = fig.subplots(1, 2)
    titles = {"post": "post-norm (original)", "pre": "pre-norm"}
    # Equal aspect, so the add circles stay round; x runs to 0.66 to fill a tall panel.
    box_w, box_h, radius, x0 = 0.38, 0.072, 0.03, 0.26
    for ax, (placement, (steps, residuals)) in zip(axes, _DIAGRAM_STEPS.items()):
        ax.set_xlim(0, 0.66)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_axis_off()
        ax.set_title(titles[placement])
        ys = np.linspace(0.93, 0.07, len(steps))

        def half_height(kind):
            return radius if kind == "add" else (box_h / 2 if kind in _DIAGRAM_COLOURS else 0.025)

        for (kind, label), y in zip(steps, ys):
            if kind == "add":
                ax.add_patch(Circle((x0, y), radius, facecolor="white", edgecolor="#222222", linewidth=1.4))
                ax.text(x0, y, "+", ha="center", va="center", fontsize=14)
            elif kind in _DIAGRAM_COLOURS:
                ax.add_patch(FancyBboxPatch(
                    (x0 - box_w / 2, y - box_h / 2), box_w, box_h, boxstyle="round,pad=0.005",
                    facecolor=_DIAGRAM_COLOURS[kind], edgecolor="#222222", linewidth=1.0,
                ))
                ax.text(x0, y, label, ha="center", va="center", color=_DIAGRAM_TEXT[kind],
                        fontweight="bold" if kind == "ffn" else "normal")
            else:
                ax.text(x0, y, label, ha="center", va="center", style="italic")
        arrow = dict(arrowstyle="-|>", color="#222222", linewidth=1.2, shrinkA=0, shrinkB=0)
        for i in range(len(steps) - 1):
            top = ys[i] - half_height(steps[i][0])
            bottom = ys[i + 1] + half_height(steps[i + 1][0])
            ax.annotate("", xy=(x0, bottom), xytext=(x0, top), arrowprops=arrow)
        for leave, join in residuals:
            # The branch leaves the main line between step `leave` and the next one.
            y_branch = (ys[leave] - half_height(steps[leave][0]) + ys[leave + 1] + half_height(steps[leave + 1][0])) / 2
            x_side = x0 + box_w / 2 + 0.08
            ax.plot([x0, x_side, x_side], [y_branch, y_branch, ys[join]], color=PALETTE[6], linewidth=1.2)
            ax.annotate("", xy=(x0 + radius, ys[join]), xytext=(x_side, ys[join]), arrowprops=arrow)
        ax.text(x0 + box_w / 2 + 0.1, (ys[residuals[0][0]] + ys[residuals[0][1]]) / 2, "residual",
                rotation=90, ha="left", va="center", fontsize=9, color="#333333")
    description = "Flow charts of a post-norm and a pre-norm transformer block."
    return BookFigure(fig, description)
