"""The gated FFN as a PyTorch module, for cross-checks against NumPy and for counting parameters.

``nn.Linear`` stores weights as ``(out_features, in_features)``, so
``w.weight == W.T``, ``v.weight == V.T`` and ``w2.weight == W2.T`` relative to
:mod:`ffnbook.gated`. This module imports torch; ``ffnbook.gated`` does not.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ._checks import lookup, require_positions, require_positive_int, require_tensor_size
from .feedforward import check_input
from .gated import GatedParams, gated_ffn, gated_params_of
from .torch_ffn import TORCH_ACTIVATIONS, PositionwiseFFN, check_tensor, load_linear, module_max_diff, torch_dtype

#: Torch modules for the activation names :func:`ffnbook.gated.gated_ffn` accepts:
#: the FFN's own (without the tanh-approximated GELU) plus the sigmoid of GLU.
TORCH_GATE_ACTIVATIONS = {
    **{name: make for name, make in TORCH_ACTIVATIONS.items() if name != "gelu_tanh"},
    "sigmoid": lambda: nn.Sigmoid(),
}


class GatedFFN(nn.Module):
    """``w2(act(w(x)) * v(x))`` on the last axis, three bias-free linear layers.

    >>> m = GatedFFN(8, 12, activation="silu")
    >>> m(torch.zeros(2, 5, 8)).shape
    torch.Size([2, 5, 8])
    >>> sum(p.numel() for p in m.parameters())  # 3 * 8 * 12
    288
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "silu"):
        super().__init__()
        self.d_model = require_positive_int(d_model, "d_model")
        self.d_ff = require_positive_int(d_ff, "d_ff")
        require_tensor_size({"d_model": self.d_model, "d_ff": self.d_ff}, ("d_model", "d_ff"))
        lookup(TORCH_GATE_ACTIVATIONS, activation, "gate activation")
        self.activation_name = activation
        self.w = nn.Linear(self.d_model, self.d_ff, bias=False)
        self.v = nn.Linear(self.d_model, self.d_ff, bias=False)
        self.w2 = nn.Linear(self.d_ff, self.d_model, bias=False)
        self.activation = TORCH_GATE_ACTIVATIONS[activation]()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the gated FFN to every position of ``x``; shape and dtype are checked first."""
        check_tensor(x, self.d_model, self.w.weight.dtype)
        return self.w2(self.activation(self.w(x)) * self.v(x))

    @classmethod
    def from_numpy(cls, params: GatedParams, activation: str = "silu") -> GatedFFN:
        """A module holding exactly the weights in ``params`` (same dtype)."""
        params = gated_params_of(params)
        module = cls(params.d_model, params.d_ff, activation=activation)
        module.to(torch_dtype(params.dtype))
        for layer, weight in ((module.w, params.W), (module.v, params.V), (module.w2, params.W2)):
            load_linear(layer, weight)
        return module


def meta_gated_ffn(d_model: int, d_ff: int, activation: str = "silu") -> GatedFFN:
    """A :class:`GatedFFN` on torch's ``meta`` device: real shapes, no memory."""
    with torch.device("meta"):
        return GatedFFN(d_model, d_ff, activation=activation)


def meta_classic_ffn(d_model: int, d_ff: int, activation: str = "relu", bias: bool = False):
    """A classic :class:`~ffnbook.torch_ffn.PositionwiseFFN` on the ``meta`` device."""
    with torch.device("meta"):
        return PositionwiseFFN(d_model, d_ff, activation=activation, bias=bias)


def numpy_torch_max_diff(x: np.ndarray, params: GatedParams, activation: str = "silu") -> float:
    """Largest absolute difference between :func:`~ffnbook.gated.gated_ffn` and :class:`GatedFFN`.

    >>> from ffnbook.gated import init_gated_params
    >>> numpy_torch_max_diff(np.ones((3, 8)), init_gated_params(8, 12), "gelu") < 1e-12
    True
    """
    params = gated_params_of(params)
    x = require_positions(check_input(x, params.d_model, params.dtype), "x", axis=-1)
    module = GatedFFN.from_numpy(params, activation)
    return module_max_diff(module, x, gated_ffn(x, *params, activation=activation))
