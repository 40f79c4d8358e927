"""The same FFN as a PyTorch module, and weight transfer to and from NumPy.

``nn.Linear`` stores its weight as ``(out_features, in_features)`` and computes
``x @ weight.T + bias``; the NumPy code uses ``x @ W1 + b1`` with ``W1`` of
shape ``(d_model, d_ff)``. So ``up.weight == W1.T`` and ``down.weight == W2.T``.

This module imports torch; ``import ffnbook`` does not, so pages that only
use NumPy start fast.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ._checks import lookup, require_positive_int
from .feedforward import FFNParams, check_params

#: Torch modules for the activation names ffnbook.ffn accepts.
TORCH_ACTIVATIONS = {
    "relu": lambda: nn.ReLU(),
    "gelu": lambda: nn.GELU(approximate="none"),
    "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
    "silu": lambda: nn.SiLU(),
    "identity": lambda: nn.Identity(),
}

_TORCH_DTYPES = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}


def check_tensor(x, d_model: int, dtype: torch.dtype) -> None:
    """Raise unless ``x`` is a tensor of shape ``(..., d_model)`` in the weights' ``dtype``."""
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
    def from_numpy(cls, params: FFNParams, activation: str = "relu") -> "PositionwiseFFN":
        """A module holding exactly the weights in ``params`` (same dtype)."""
        params = check_params(*params)
        module = cls(params.d_model, params.d_ff, activation=activation)
        dtype = _TORCH_DTYPES[params.dtype]
        module.to(dtype)
        with torch.no_grad():
            module.up.weight.copy_(torch.from_numpy(params.W1.T.copy()))
            module.up.bias.copy_(torch.from_numpy(params.b1))
            module.down.weight.copy_(torch.from_numpy(params.W2.T.copy()))
            module.down.bias.copy_(torch.from_numpy(params.b2))
        return module

    def to_numpy(self) -> FFNParams:
        """The module's weights as :class:`~ffnbook.feedforward.FFNParams` (NumPy convention)."""
        if self.up.bias is None:
            raise ValueError("to_numpy needs a module built with bias=True")
        as_np = lambda t: t.detach().cpu().numpy().copy()  # noqa: E731
        return FFNParams(
            as_np(self.up.weight).T.copy(),
            as_np(self.up.bias),
            as_np(self.down.weight).T.copy(),
            as_np(self.down.bias),
        )


def numpy_torch_max_diff(x: np.ndarray, params: FFNParams, activation: str = "relu") -> float:
    """Largest absolute difference between :func:`~ffnbook.feedforward.ffn` and the torch module.

    Both run in the dtype of ``params`` with identical weights.

    >>> from ffnbook import init_ffn_params
    >>> p = init_ffn_params(8, 32, seed=0)
    >>> numpy_torch_max_diff(np.ones((3, 8)), p, "gelu") < 1e-12
    True
    """
    from .feedforward import ffn

    params = check_params(*params)
    module = PositionwiseFFN.from_numpy(params, activation)
    return module_max_diff(module, x, ffn(x, *params, activation=activation))


def module_max_diff(module: nn.Module, x: np.ndarray, expected: np.ndarray) -> float:
    """Largest ``|module(x) - expected|``, with ``x`` a NumPy array, run without gradients."""
    with torch.no_grad():
        got = module(torch.from_numpy(np.ascontiguousarray(x))).numpy()
    return float(np.max(np.abs(got - expected)))
