"""From the NumPy FFN to PyTorch: layouts, a cross-check, precision, dropout and initialisation.

Everything here that touches PyTorch lives in this module, which imports torch
at the top; ``import ffnbook`` does not import it. The functions return plain
Python numbers and NamedTuples, ready for glue.

The facts about PyTorch's own code that the chapter relies on, checked in the
installed torch source:

* ``nn.Linear`` stores ``weight`` as ``(out_features, in_features)`` and
  computes ``x @ weight.T + bias`` on the last axis of ``x``.
* ``nn.Linear.reset_parameters`` draws the weight with
  ``kaiming_uniform_(a=sqrt(5))``, which is uniform in ``±1/sqrt(fan_in)``,
  and the bias uniform in ``±1/sqrt(fan_in)``.
* ``nn.TransformerEncoderLayer._ff_block`` computes
  ``dropout2(linear2(dropout(activation(linear1(x)))))``; the residual add and
  LayerNorm happen in ``forward``.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._checks import (
    as_float_array,
    describe,
    lookup,
    require_choice,
    require_finite,
    require_names,
    require_number,
    require_positions,
    require_positive_int,
    require_positive_number,
    require_seed,
    require_tensor_size,
)
from .display import readable
from .feedforward import FFNParams, check_input, ffn, ffn_params_of, init_ffn_params
from .plotting import OTHER_COLOURS, PALETTE, BookFigure, new_figure, styled
from .position_independence import batch_vs_rows_max_diff, ffn_layer, random_tokens
from .torch_ffn import linear_weights, load_linear, torch_dtype

#: What to pass as ``activation=`` to ``nn.TransformerEncoderLayer`` for each ffnbook name.
#: The layer accepts the strings "relu" and "gelu" (exact GELU) or any callable.
ENCODER_ACTIVATIONS = {
    "relu": "relu",
    "gelu": "gelu",
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}


def _check_activation(activation: str) -> str:
    lookup(ENCODER_ACTIVATIONS, activation)
    return activation


class LinearLayout(NamedTuple):
    """Shapes of the same first FFN matrix in the two conventions."""

    numpy_W1: tuple  #: ffnbook's ``W1``: (d_model, d_ff), used as ``x @ W1``
    torch_weight: tuple  #: ``nn.Linear(d_model, d_ff).weight``: (d_ff, d_model), used as ``x @ weight.T``


def linear_layout(d_model: int, d_ff: int) -> LinearLayout:
    """The shape of ``W1`` in ffnbook and of the matching ``nn.Linear`` weight.

    The linear layer is built on the ``meta`` device, so nothing is allocated.

    >>> linear_layout(512, 2048)
    LinearLayout(numpy_W1=(512, 2048), torch_weight=(2048, 512))
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    require_tensor_size({"d_model": d_model, "d_ff": d_ff}, ("d_model", "d_ff"))
    linear = nn.Linear(d_model, d_ff, device="meta")
    return LinearLayout(numpy_W1=(d_model, d_ff), torch_weight=tuple(linear.weight.shape))


def linear_positionwise_max_diff(x, *, d_out: int = 8, seed: int = 0) -> float:
    """``nn.Linear`` applied to a whole ``(B, T, D)`` array versus to each position's vector alone.

    A float64 ``nn.Linear(D, d_out)`` (default initialisation, seeded) is run
    once on the 3-D tensor and then, in a Python loop, on every ``x[b, t]`` as a
    1-D vector. Returns the largest absolute difference: rounding only, since
    ``nn.Linear`` acts on the last axis and broadcasts over the others.

    >>> linear_positionwise_max_diff(np.ones((2, 3, 4))) < 1e-12
    True
    """
    x = as_float_array(x, "x")
    if x.ndim != 3 or x.size == 0:
        raise ValueError(f"x must have shape (batch, seq_len, d_model), with at least one position, got {x.shape}")
    require_finite(x, "x")
    d_out = require_positive_int(d_out, "d_out", maximum=65_536)
    torch.manual_seed(require_seed(seed))
    linear = nn.Linear(x.shape[-1], d_out).double()
    xt = torch.from_numpy(x.astype(np.float64))
    with torch.no_grad():
        whole = linear(xt)
        each = torch.stack(
            [torch.stack([linear(xt[b, t]) for t in range(x.shape[1])]) for b in range(x.shape[0])]
        )
    return float((whole - each).abs().max())


def encoder_layer_with(params: FFNParams, activation: str = "relu", *, nhead: int = 1,
                       dropout: float = 0.0) -> nn.TransformerEncoderLayer:
    """A ``nn.TransformerEncoderLayer`` whose ``linear1``/``linear2`` hold exactly ``params``.

    The layer is built in the dtype of ``params`` with ``batch_first=True`` and
    ``dim_feedforward = d_ff``; the weights are copied transposed, because
    ``nn.Linear`` stores ``(out, in)``. It is returned in eval mode.
    """
    params = ffn_params_of(params)
    activation = _check_activation(activation)
    nhead = require_positive_int(nhead, "nhead")
    if params.d_model % nhead:
        raise ValueError(f"nhead={nhead} must divide d_model={params.d_model}")
    dropout = require_number(dropout, "dropout", low=0, high=1, high_open=True, expected="a probability in [0, 1)")
    layer = nn.TransformerEncoderLayer(
        params.d_model, nhead, dim_feedforward=params.d_ff, dropout=float(dropout),
        activation=ENCODER_ACTIVATIONS[activation], batch_first=True,
        dtype=torch_dtype(params.dtype),
    )
    load_linear(layer.linear1, params.W1, params.b1)
    load_linear(layer.linear2, params.W2, params.b2)
    return layer.eval()


def transformer_encoder_ffn_max_diff(params: FFNParams, x, activation: str = "relu", *,
                                     nhead: int = 1) -> float:
    """Largest difference between PyTorch's encoder-layer feed-forward path and :func:`ffnbook.feedforward.ffn`.

    The weights go into ``nn.TransformerEncoderLayer`` (dropout 0, eval mode);
    its own ``_ff_block`` method, the code its ``forward`` calls for the FFN
    sublayer, is then run on ``x`` of shape ``(..., d_model)``.

    >>> p = init_ffn_params(8, 32, seed=0)
    >>> transformer_encoder_ffn_max_diff(p, np.ones((2, 3, 8)), "gelu", nhead=2) < 1e-12
    True
    """
    params = ffn_params_of(params)
    x = require_positions(check_input(x, params.d_model, params.dtype), "x", axis=-1)
    layer = encoder_layer_with(params, activation, nhead=nhead)
    with torch.no_grad():
        got = layer._ff_block(torch.from_numpy(np.ascontiguousarray(x))).numpy()
    expected = ffn(x, *params, activation=activation)
    return float(np.max(np.abs(got - expected)))


def ff_block_source() -> str:
    """The source code of ``nn.TransformerEncoderLayer._ff_block`` in the installed PyTorch."""
    return textwrap.dedent(inspect.getsource(nn.TransformerEncoderLayer._ff_block))


def linear_init_source() -> str:
    """The source code of ``nn.Linear.reset_parameters`` in the installed PyTorch."""
    return textwrap.dedent(inspect.getsource(nn.Linear.reset_parameters))


@readable
class PrecisionComparison(NamedTuple):
    """Whole-sequence versus one-position-at-a-time differences in two precisions."""

    float32: float  #: max difference computed in float32
    float64: float  #: max difference computed in float64
    ratio: float  #: float32 / float64
    eps32: float  #: machine epsilon of float32
    eps64: float  #: machine epsilon of float64
    ulps32: float  #: float32 difference in units of eps32 × the largest absolute output
    ulps64: float  #: float64 difference in units of eps64 × the largest absolute output


def precision_comparison(params: FFNParams, x, activation: str = "relu") -> PrecisionComparison:
    """Run :func:`ffnbook.position_independence.batch_vs_rows_max_diff` on the same weights and input in float32 and float64.

    >>> p = init_ffn_params(64, 256, seed=0)
    >>> c = precision_comparison(p, random_tokens((5, 64), seed=0), "gelu")
    >>> c.float32 > c.float64
    True
    """
    params = ffn_params_of(params)
    x = require_positions(check_input(x, params.d_model, params.dtype), "x", axis=-1)
    diffs, ulps, eps = {}, {}, {}
    for dtype in (np.float32, np.float64):
        p, xd = params.astype(dtype), x.astype(dtype)
        diffs[dtype] = batch_vs_rows_max_diff(ffn_layer(p, activation), xd)
        eps[dtype] = float(np.finfo(dtype).eps)
        scale = float(np.abs(ffn(xd, *p, activation=activation)).max())
        ulps[dtype] = diffs[dtype] / (eps[dtype] * scale)
    if diffs[np.float64] == 0.0:
        raise ValueError("the float64 difference is exactly zero; use a longer sequence to see rounding")
    return PrecisionComparison(
        float32=diffs[np.float32], float64=diffs[np.float64],
        ratio=diffs[np.float32] / diffs[np.float64],
        eps32=eps[np.float32], eps64=eps[np.float64],
        ulps32=ulps[np.float32], ulps64=ulps[np.float64],
    )


#: The floating-point formats compared by :func:`dtype_rows`, widest first.
DTYPES = ("float64", "float32", "bfloat16", "float16")


def dtype_rows(params: FFNParams, x, activation: str = "relu", dtypes: Sequence[str] = DTYPES) -> list[dict]:
    """The FFN in several floating-point formats: format limits, rounding and accuracy.

    The weights and ``x`` (shape ``(seq_len, d_model)``) are cast to each
    format and the FFN is run in torch on the CPU, once on the whole sequence
    and once position by position. Each row holds the format's ``bits``,
    machine epsilon ``eps``, largest value ``max`` and smallest normal value
    ``tiny`` (from ``torch.finfo``); ``batch_vs_rows`` (the largest difference
    between the two runs) and ``rel_error`` (the largest deviation from the
    float64 result, over the largest float64 output), all plain floats.

    >>> rows = dtype_rows(init_ffn_params(16, 64, seed=0), random_tokens((4, 16), seed=1), "gelu")
    >>> [r["dtype"] for r in rows], rows[0]["rel_error"]
    (['float64', 'float32', 'bfloat16', 'float16'], 0.0)
    """
    params = ffn_params_of(params)
    x = require_positions(check_input(x, params.d_model, params.dtype), "x", axis=-1)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (seq_len, d_model), got {x.shape}")
    _check_activation(activation)
    names = require_names(dtypes, "dtypes", DTYPES)
    act = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
           "silu": F.silu}[activation]
    tensors = [torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in (x, *params)]

    def run(dtype):
        xt, W1, b1, W2, b2 = (t.to(dtype) for t in tensors)

        def f(v):
            return act(v @ W1 + b1) @ W2 + b2

        with torch.no_grad():
            whole = f(xt)
            rows = torch.cat([f(xt[i : i + 1]) for i in range(xt.shape[0])])
        return whole.double(), rows.double()

    reference, _ = run(torch.float64)
    scale = float(reference.abs().max())
    out = []
    for name in names:
        dtype = getattr(torch, name)
        whole, rows = run(dtype)
        info = torch.finfo(dtype)
        out.append({
            "dtype": name,
            "bits": int(info.bits),
            "eps": float(info.eps),
            "max": float(info.max),
            "tiny": float(info.tiny),
            "batch_vs_rows": float((whole - rows).abs().max()),
            "rel_error": float((whole - reference).abs().max()) / scale,
        })
    return out


def dtype_table(params: FFNParams, x, activation: str = "relu", dtypes: Sequence[str] = DTYPES):
    """:func:`dtype_rows` as a table for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        dtype_rows(params, x, activation, dtypes),
        [
            ("format", "dtype", str),
            ("bits", "bits", "d"),
            ("machine epsilon", "eps", ".2e"),
            ("largest value", "max", ".3g"),
            ("smallest normal value", "tiny", ".3g"),
            ("whole vs one position at a time", "batch_vs_rows", ".2e"),
            ("error vs float64 (relative)", "rel_error", ".2e"),
        ],
    )


def stored_as(value: float, dtypes: Sequence[str] = DTYPES) -> dict:
    """What ``value`` becomes when stored in each format: ``{dtype: float}``.

    >>> stored_as(1e-8, ("float16", "bfloat16"))["float16"]
    0.0
    """
    value = require_number(value, "value", allow_inf=True, expected="a real number")
    dtypes = require_names(dtypes, "dtypes", DTYPES)
    return {name: float(torch.tensor(value, dtype=getattr(torch, name)).double()) for name in dtypes}


@readable
class DropoutDemo(NamedTuple):
    """How the encoder layer's FFN path behaves with dropout in train and eval mode."""

    p: float  #: dropout probability
    train_diff: float  #: max difference between two train-mode calls on the same input
    eval_diff: float  #: max difference between two eval-mode calls on the same input
    eval_vs_ffn: float  #: max difference between the eval-mode path and ffnbook.ffn
    hidden_zero_fraction: float  #: share of hidden activations the first dropout zeroed in one train call
    hidden_scale: float  #: survivors' value divided by their value without dropout (1/(1-p) expected)


def dropout_demo(params: FFNParams, x, activation: str = "relu", *, p: float = 0.1,
                 seed: int = 0) -> DropoutDemo:
    """Run ``_ff_block`` of a ``nn.TransformerEncoderLayer`` with dropout ``p`` twice in each mode.

    In train mode each call draws fresh dropout masks, so two calls differ;
    in eval mode dropout is the identity and the path equals :func:`ffnbook.feedforward.ffn`.
    A forward hook on the first dropout module records which hidden
    activations it zeroed and how it rescaled the rest.
    """
    params = ffn_params_of(params)
    x = require_positions(check_input(x, params.d_model, params.dtype), "x", axis=-1)
    p = require_number(p, "p", low=0, high=1, low_open=True, high_open=True,
                       expected="a dropout probability in (0, 1)")
    seed = require_seed(seed)
    layer = encoder_layer_with(params, activation, dropout=p)
    xt = torch.from_numpy(np.ascontiguousarray(x))
    seen = {}

    def record(module, inputs, output):
        seen["in"], seen["out"] = inputs[0].detach().clone(), output.detach().clone()

    handle = layer.dropout.register_forward_hook(record)
    try:
        torch.manual_seed(seed)
        layer.train()
        with torch.no_grad():
            first, second = layer._ff_block(xt), layer._ff_block(xt)
        before, after = seen["in"], seen["out"]  # from the second train call
        layer.eval()
        with torch.no_grad():
            e1, e2 = layer._ff_block(xt), layer._ff_block(xt)
    finally:
        handle.remove()
    nonzero = before != 0
    dropped = nonzero & (after == 0)
    kept = nonzero & (after != 0)
    return DropoutDemo(
        p=float(p),
        train_diff=float((first - second).abs().max()),
        eval_diff=float((e1 - e2).abs().max()),
        eval_vs_ffn=float(np.max(np.abs(e1.numpy() - ffn(x, *params, activation=activation)))),
        hidden_zero_fraction=float(dropped.sum() / nonzero.sum()),
        hidden_scale=float((after[kept] / before[kept]).mean()),
    )


#: Initialisation schemes compared by :func:`init_output_scale`.
INIT_SCHEMES = ("torch_default", "ffnbook", "xavier_uniform", "he_lecun")

INIT_LABELS = {
    "torch_default": "nn.Linear default",
    "ffnbook": "ffnbook init_ffn_params",
    "xavier_uniform": "Xavier/Glorot uniform",
    "he_lecun": "He (W1) + LeCun (W2)",
}


def init_params(scheme: str, d_model: int, d_ff: int, *, seed: int = 0) -> FFNParams:
    """FFN weights (float64, NumPy convention) initialised by ``scheme``.

    ``"torch_default"``: two freshly built ``nn.Linear`` layers (their own
    ``reset_parameters``). ``"ffnbook"``: :func:`ffnbook.feedforward.init_ffn_params`.
    ``"xavier_uniform"``: ``nn.init.xavier_uniform_`` on both weights, zero
    biases. ``"he_lecun"``: normal weights with variance ``2/d_model`` for
    ``W1`` (suits a ReLU after it) and ``1/d_ff`` for ``W2`` (nothing after
    it), zero biases.

    >>> init_params("torch_default", 4, 16).W1.shape
    (4, 16)
    """
    require_choice(scheme, "scheme", INIT_SCHEMES)
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    seed = require_seed(seed)
    if scheme == "ffnbook":
        return init_ffn_params(d_model, d_ff, seed=seed)
    torch.manual_seed(seed)
    up, down = nn.Linear(d_model, d_ff).double(), nn.Linear(d_ff, d_model).double()
    with torch.no_grad():
        if scheme == "xavier_uniform":
            for lin in (up, down):
                nn.init.xavier_uniform_(lin.weight)
                nn.init.zeros_(lin.bias)
        elif scheme == "he_lecun":
            nn.init.normal_(up.weight, std=float(np.sqrt(2.0 / d_model)))
            nn.init.normal_(down.weight, std=float(np.sqrt(1.0 / d_ff)))
            nn.init.zeros_(up.bias)
            nn.init.zeros_(down.bias)
    return FFNParams(*linear_weights(up), *linear_weights(down))


def init_output_scale(d_model: int, d_ff: int, *, schemes: Sequence[str] = INIT_SCHEMES,
                      activation: str = "relu", n_tokens: int = 512, seed: int = 0) -> dict:
    """Standard deviation of the FFN output for unit-variance input, per initialisation scheme.

    The input is ``n_tokens`` standard-normal vectors; the std is taken over
    all output entries. Returns ``{scheme: std}`` as plain floats.

    >>> s = init_output_scale(64, 256, schemes=("he_lecun",), n_tokens=512)
    >>> 0.8 < s["he_lecun"] < 1.2
    True
    """
    n_tokens = require_positive_int(n_tokens, "n_tokens")
    d_model = require_positive_int(d_model, "d_model")
    schemes = require_names(schemes, "schemes", INIT_SCHEMES)
    _check_activation(activation)
    seed = require_seed(seed)
    x = random_tokens((n_tokens, d_model), seed=seed + 1000)
    out = {}
    for scheme in schemes:
        params = init_params(scheme, d_model, d_ff, seed=seed)
        out[scheme] = float(np.std(ffn(x, *params, activation=activation)))
    return out


def predicted_default_output_std() -> float:
    """The output standard deviation that ``nn.Linear``'s default predicts for a ReLU FFN, ``sqrt(1/18)``.

    A weight uniform on ``±1/sqrt(n)`` has variance ``1/(3n)``. With
    unit-variance input each pre-activation has variance ``n·1/(3n) = 1/3``;
    ReLU keeps half of a symmetric distribution's second moment, ``1/6``; the
    second layer multiplies by ``1/3`` again: ``1/18``. Biases are ignored.

    >>> round(predicted_default_output_std() ** 2 * 18, 12)
    1.0
    """
    return float(np.sqrt((1 / 3) * (1 / 2) * (1 / 3)))


@styled
def init_scale_figure(scales: dict) -> BookFigure:
    """Horizontal bars: output std per initialisation scheme, with the input's std of 1 marked."""
    if not isinstance(scales, dict) or not scales:
        raise TypeError(f"scales must be a non-empty dict {{scheme: output std}}, got {describe(scales)}")
    for name, value in scales.items():
        require_choice(name, "scales' keys", INIT_SCHEMES)
        require_positive_number(value, f"scales[{name!r}]")
    names = list(scales)
    fig = new_figure(7.0, 0.6 * len(names) + 1.4)
    ax = fig.subplots()
    ypos = np.arange(len(names))[::-1]
    ax.barh(ypos, [scales[n] for n in names], color=[OTHER_COLOURS[i % len(OTHER_COLOURS)] for i in range(len(names))])
    ax.axvline(1.0, color=PALETTE[6], linestyle="--", linewidth=1.2, label="input std = 1")
    ax.set_yticks(ypos, [INIT_LABELS.get(n, n) for n in names])
    for y, n in zip(ypos, names):
        ax.text(scales[n] + 0.02, y, f"{scales[n]:.2f}", va="center")
    ax.set_xlabel("standard deviation of FFN output (unit-variance input)")
    ax.set_xlim(0, max(1.7, max(scales.values()) * 1.15))
    ax.legend(loc="center right")  # right of the dashed line, clear of the bars
    listed = "; ".join(f"{INIT_LABELS.get(n, n)} {scales[n]:.2f}" for n in names)
    return BookFigure(
        fig,
        "Horizontal bar chart of the standard deviation of a freshly initialised FFN's output for "
        f"unit-variance input, under {len(names)} initialisations, with a dashed line at the input's "
        f"standard deviation of 1: {listed}.",
    )
