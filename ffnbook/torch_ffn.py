"""The same FFN as a PyTorch module, and weight transfer to and from NumPy.

``nn.Linear`` stores its weight as ``(out_features, in_features)`` and computes
``x @ weight.T + bias``; the NumPy code uses ``x @ W1 + b1`` with ``W1`` of
shape ``(d_model, d_ff)``. So ``up.weight == W1.T`` and ``down.weight == W2.T``.
:func:`load_linear` and :func:`linear_weights` are the book's one crossing of
that boundary, in each direction: every torch module in ffnbook that receives
or hands out NumPy weights goes through them.

This module imports torch; ``import ffnbook`` does not, so pages that only
use NumPy start fast.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ._checks import (
    as_float_array,
    describe,
    float_dtype,
    lookup,
    require_bool,
    require_positions,
    require_positive_int,
    require_tensor_size,
)
from .feedforward import FFNParams, check_input, ffn, ffn_params_of

#: Torch modules for the activation names ffnbook.ffn accepts.
TORCH_ACTIVATIONS = {
    "relu": lambda: nn.ReLU(),
    "gelu": lambda: nn.GELU(approximate="none"),
    "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
    "silu": lambda: nn.SiLU(),
    "identity": lambda: nn.Identity(),
}

#: The torch dtype for each NumPy dtype ffnbook computes in.
TORCH_DTYPES = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}


def torch_dtype(dtype) -> torch.dtype:
    """The torch dtype matching a NumPy float32/float64 dtype.

    >>> torch_dtype(np.float64)
    torch.float64
    """
    return TORCH_DTYPES[float_dtype(dtype)]


def load_linear(layer: nn.Module, W: np.ndarray, b: np.ndarray | None = None) -> None:
    """Copy NumPy-convention weights into a torch layer: ``W`` of shape ``(in, out)``, used as ``x @ W``.

    ``nn.Linear`` keeps the transpose, ``(out, in)``; a kernel-size-1
    ``nn.Conv1d`` keeps ``(out, in, 1)``. Both receive ``W.T`` (reshaped to
    their weight's shape) and ``b``, in the layer's dtype. Raises when the
    shapes do not match, rather than letting torch broadcast.

    >>> layer = nn.Linear(3, 2).double()
    >>> load_linear(layer, np.arange(6.0).reshape(3, 2), np.zeros(2))
    >>> layer.weight.tolist()
    [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    """
    _check_layer(layer)
    W = as_float_array(W, "W", finite=True)
    if b is not None:
        b = as_float_array(b, "b", finite=True)
    weight = torch.from_numpy(np.ascontiguousarray(W.T))
    if weight.numel() != layer.weight.numel() or tuple(weight.shape) != tuple(layer.weight.shape[:2]):
        raise ValueError(f"a layer with weight of shape {tuple(layer.weight.shape)} needs W of shape "
                         f"{tuple(layer.weight.shape[:2])[::-1]}, got {np.shape(W)}")
    if (b is None) != (layer.bias is None):
        raise ValueError("give b exactly when the layer has a bias")
    with torch.no_grad():
        layer.weight.copy_(weight.reshape(layer.weight.shape))
        if b is not None:
            bias = torch.from_numpy(np.ascontiguousarray(b))
            if tuple(bias.shape) != tuple(layer.bias.shape):
                raise ValueError(f"b must have shape {tuple(layer.bias.shape)}, got {tuple(bias.shape)}")
            layer.bias.copy_(bias)


def _check_layer(layer) -> nn.Module:
    if not isinstance(layer, nn.Module) or not isinstance(getattr(layer, "weight", None), torch.Tensor):
        raise TypeError(f"layer must be a torch layer with a weight (nn.Linear, nn.Conv1d), got {describe(layer)}")
    return layer


def linear_weights(layer: nn.Module) -> tuple[np.ndarray, np.ndarray | None]:
    """The inverse of :func:`load_linear` for ``nn.Linear``: ``(W, b)`` in the NumPy convention.

    ``W`` has shape ``(in, out)``; ``b`` is ``None`` for a layer without bias.
    Both are copies, detached from torch.

    >>> W, b = linear_weights(nn.Linear(3, 2, bias=False))
    >>> W.shape, b
    ((3, 2), None)
    """
    _check_layer(layer)

    def as_numpy(t):
        return t.detach().cpu().numpy().copy()

    W = as_numpy(layer.weight).T.copy()
    return W, (None if layer.bias is None else as_numpy(layer.bias))


def check_tensor(x, d_model: int, dtype: torch.dtype) -> None:
    """Raise unless ``x`` is a tensor of shape ``(..., d_model)`` in the weights' ``dtype``."""
    d_model = require_positive_int(d_model, "d_model")
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch dtype, got {describe(dtype)}")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() == 0 or x.shape[-1] != d_model:
        raise ValueError(f"x must have last axis d_model={d_model}, got shape {tuple(x.shape)}")
    if x.dtype != dtype:
        raise TypeError(f"x has dtype {x.dtype} but the module's weights are {dtype}")


class PositionwiseFFN(nn.Module):
    """``down(activation(up(x)))`` on the last axis of a ``(..., d_model)`` tensor.

    >>> m = PositionwiseFFN(8, 32, activation="gelu")
    >>> m(torch.zeros(2, 5, 8)).shape
    torch.Size([2, 5, 8])
    >>> sum(p.numel() for p in m.parameters())  # 2*8*32 + 32 + 8
    552
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", bias: bool = True):
        super().__init__()
        self.d_model = require_positive_int(d_model, "d_model")
        self.d_ff = require_positive_int(d_ff, "d_ff")
        bias = require_bool(bias, "bias")
        require_tensor_size({"d_model": self.d_model, "d_ff": self.d_ff}, ("d_model", "d_ff"))
        lookup(TORCH_ACTIVATIONS, activation)
        self.activation_name = activation
        self.up = nn.Linear(self.d_model, self.d_ff, bias=bias)
        self.activation = TORCH_ACTIVATIONS[activation]()
        self.down = nn.Linear(self.d_ff, self.d_model, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the FFN to every position of ``x``; shape and dtype are checked first."""
        check_tensor(x, self.d_model, self.up.weight.dtype)
        return self.down(self.activation(self.up(x)))

    @classmethod
    def from_numpy(cls, params: FFNParams, activation: str = "relu") -> PositionwiseFFN:
        """A module holding exactly the weights in ``params`` (same dtype)."""
        params = ffn_params_of(params)
        module = cls(params.d_model, params.d_ff, activation=activation)
        module.to(torch_dtype(params.dtype))
        load_linear(module.up, params.W1, params.b1)  # stored transposed: up.weight == W1.T
        load_linear(module.down, params.W2, params.b2)
        return module

    def to_numpy(self) -> FFNParams:
        """The module's weights as :class:`~ffnbook.feedforward.FFNParams` (NumPy convention)."""
        if self.up.bias is None:
            raise ValueError("to_numpy needs a module built with bias=True")
        return FFNParams(*linear_weights(self.up), *linear_weights(self.down))


def numpy_torch_max_diff(x: np.ndarray, params: FFNParams, activation: str = "relu") -> float:
    """Largest absolute difference between :func:`~ffnbook.feedforward.ffn` and the torch module.

    Both run in the dtype of ``params`` with identical weights.

    >>> from ffnbook import init_ffn_params
    >>> p = init_ffn_params(8, 32, seed=0)
    >>> numpy_torch_max_diff(np.ones((3, 8)), p, "gelu") < 1e-12
    True
    """
    params = ffn_params_of(params)
    x = require_positions(check_input(x, params.d_model, params.dtype), "x", axis=-1)
    module = PositionwiseFFN.from_numpy(params, activation)
    return module_max_diff(module, x, ffn(x, *params, activation=activation))


def module_max_diff(module: nn.Module, x: np.ndarray, expected: np.ndarray) -> float:
    """Largest ``|module(x) - expected|``, with ``x`` a NumPy array, run without gradients."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {describe(module)}")
    x = require_positions(as_float_array(x, "x", finite=True), "x", axis=-1)
    expected = as_float_array(expected, "expected", finite=True)
    with torch.no_grad():
        got = module(torch.from_numpy(np.ascontiguousarray(x))).numpy()
    if got.shape != expected.shape:
        raise ValueError(f"expected must have the module output's shape {got.shape}, got {expected.shape}")
    return float(np.max(np.abs(got - expected)))
