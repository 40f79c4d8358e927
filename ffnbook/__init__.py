"""ffnbook: the code behind the executable chapter on the transformer feed-forward network.

Every number and figure in the book is computed by a function in this
package at build time. NumPy-only parts import eagerly; the PyTorch parts
(:class:`PositionwiseFFN`, :func:`numpy_torch_max_diff`) load torch on first
use, so a page that never touches them does not pay for ``import torch``.
"""

from __future__ import annotations

import importlib

from .activations import ACTIVATIONS, gelu, gelu_tanh, get_activation, identity, relu, silu
from .attention import AttentionParams, init_attention_params, self_attention
from .display import MarkdownTable
from .feedforward import FFNParams, check_params, collapse_linear_ffn, ffn, init_ffn_params
from .parameters import (
    attention_param_count,
    block_modules,
    count_module_parameters,
    ffn_param_count,
    width_ratio_rows,
    width_ratio_table,
)
from .position_independence import (
    TokenChangeResult,
    attention_layer,
    batch_vs_rows_max_diff,
    change_one_token,
    ffn_layer,
    movement_by_position,
    permutation_max_diff,
    random_tokens,
    reshape_max_diff,
)

__version__ = "0.1.0"

# Names whose modules import torch: resolved on first attribute access.
_LAZY = {
    "PositionwiseFFN": "ffnbook.torch_ffn",
    "numpy_torch_max_diff": "ffnbook.torch_ffn",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ffnbook' has no attribute {name!r}")


__all__ = [
    "ACTIVATIONS",
    "AttentionParams",
    "MarkdownTable",
    "FFNParams",
    "PositionwiseFFN",
    "TokenChangeResult",
    "attention_layer",
    "attention_param_count",
    "batch_vs_rows_max_diff",
    "block_modules",
    "change_one_token",
    "movement_by_position",
    "check_params",
    "collapse_linear_ffn",
    "count_module_parameters",
    "ffn",
    "ffn_layer",
    "ffn_param_count",
    "gelu",
    "gelu_tanh",
    "get_activation",
    "identity",
    "init_attention_params",
    "init_ffn_params",
    "numpy_torch_max_diff",
    "permutation_max_diff",
    "random_tokens",
    "relu",
    "reshape_max_diff",
    "self_attention",
    "silu",
    "width_ratio_rows",
    "width_ratio_table",
]
