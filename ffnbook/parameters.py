"""Counting parameters: closed-form formulas and the count of real modules.

The formulas count weights and biases of one sublayer; layer norms are not
included. :func:`count_module_parameters` counts what a torch module really
holds, so a page can check every formula against an actual module.
"""

from __future__ import annotations

from ._checks import (
    describe,
    require_bool,
    require_positive_int,
    require_positive_number,
    require_sequence,
    require_tensor_size,
)


def ffn_param_count(d_model: int, d_ff: int, bias: bool = True) -> int:
    """Parameters of a two-matrix FFN: ``2·d_model·d_ff`` weights, plus ``d_ff + d_model`` biases.

    >>> ffn_param_count(512, 2048)
    2099712
    >>> ffn_param_count(512, 2048, bias=False)
    2097152
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    bias = require_bool(bias, "bias")
    return 2 * d_model * d_ff + ((d_ff + d_model) if bias else 0)


def gated_ffn_param_count(d_model: int, d_ff: int, bias: bool = False) -> int:
    """Parameters of a gated (GLU-style) FFN: three ``d_model × d_ff`` matrices (gate, up, down).

    With ``bias`` the gate and up projections each add ``d_ff`` biases and the
    down projection ``d_model``, as ``nn.Linear(..., bias=True)`` would. The
    gated FFNs of the book's models have none (Shazeer, 2020, drops them).

    >>> gated_ffn_param_count(768, 2048)
    4718592
    >>> gated_ffn_param_count(768, 2048) == ffn_param_count(768, 3072, bias=False)
    True
    >>> gated_ffn_param_count(8, 12, bias=True) - gated_ffn_param_count(8, 12)  # 12 + 12 + 8
    32
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    bias = require_bool(bias, "bias")
    return 3 * d_model * d_ff + ((2 * d_ff + d_model) if bias else 0)


def equal_parameter_width(d_ff_classic: float) -> float:
    """The gated width with the parameters of a bias-free classic FFN of width ``d_ff_classic``.

    ``2·d·d_ff = 3·d·d_ff'`` gives ``d_ff' = 2/3·d_ff``, whatever ``d_model``: the
    book's one statement of the two-thirds rule. ``d_ff_classic`` may also be a
    ratio to ``d_model`` (4 gives 8/3).

    >>> equal_parameter_width(3072)
    2048.0
    """
    require_positive_number(d_ff_classic, "d_ff_classic")
    return 2 * d_ff_classic / 3


def ffn_weights_in_d2(d_ff: int, d_model: int, gated: bool) -> float:
    """An FFN's weight count in units of ``d_model²``: ``3·d_ff/d_model`` gated, ``2·d_ff/d_model`` classic.

    >>> ffn_weights_in_d2(3072, 768, gated=False), ffn_weights_in_d2(2048, 768, gated=True)
    (8.0, 8.0)
    """
    count = gated_ffn_param_count if require_bool(gated, "gated") else ffn_param_count
    d_model = require_positive_int(d_model, "d_model")
    return count(d_model, d_ff, bias=False) / d_model**2


def attention_param_count(
    d_model: int, n_heads: int = 1, n_kv_heads: int | None = None, bias: bool = False,
    d_head: int | None = None,
) -> int:
    """Parameters of multi-head self-attention (Q, K, V and output projections).

    With every head owning its own keys and values (``n_kv_heads == n_heads``,
    the default) and heads of ``d_head = d_model / n_heads`` (the default) this
    is ``4·d_model²`` without bias, whatever the head count: the heads split
    ``d_model`` between them rather than adding to it. With grouped-query
    attention the K and V projections shrink to ``n_kv_heads·d_head`` columns
    each. A ``d_head`` of its own (PaLM, Qwen3's MoE models, gpt-oss) makes the
    queries ``n_heads·d_head`` wide, which need not be ``d_model``; biases, where
    there are any, sit on the Q, K and V outputs and on the output projection.

    >>> attention_param_count(512, n_heads=8)
    1048576
    >>> attention_param_count(512, n_heads=8) == attention_param_count(512, n_heads=1)
    True
    >>> attention_param_count(4096, n_heads=32, n_kv_heads=8)  # Q, O full; K, V a quarter
    41943040
    >>> attention_param_count(2048, n_heads=32, n_kv_heads=4, d_head=128)  # 32 heads of 128 on a width of 2048
    18874368
    """
    d_model = require_positive_int(d_model, "d_model")
    n_heads = require_positive_int(n_heads, "n_heads")
    n_kv_heads = n_heads if n_kv_heads is None else require_positive_int(n_kv_heads, "n_kv_heads")
    bias = require_bool(bias, "bias")
    if d_head is None:
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}, or d_head given")
        d_head = d_model // n_heads
    else:
        d_head = require_positive_int(d_head, "d_head")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_heads={n_heads} must be divisible by n_kv_heads={n_kv_heads}")
    d_query, d_kv = n_heads * d_head, n_kv_heads * d_head
    weights = 2 * d_model * d_query + 2 * d_model * d_kv  # Q and O, then K and V
    biases = (d_query + 2 * d_kv + d_model) if bias else 0
    return weights + biases


def count_module_parameters(module) -> int:
    """Number of scalars a torch module stores (every parameter tensor's ``numel``)."""
    if not hasattr(module, "parameters") or not callable(module.parameters):
        raise TypeError(f"module must be a torch.nn.Module, got {describe(module)}")
    return int(sum(p.numel() for p in module.parameters()))


def block_modules(d_model: int, d_ff: int, n_heads: int, activation: str = "gelu"):
    """A real FFN and a real bias-free multi-head attention of the given widths.

    Returns ``(ffn, attention)``: :class:`~ffnbook.torch_ffn.PositionwiseFFN` and
    ``torch.nn.MultiheadAttention(d_model, n_heads, bias=False)``. Built on
    torch's ``meta`` device, so even model-sized widths cost no memory.
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    n_heads = require_positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
    require_tensor_size({"d_model": d_model, "d_ff": d_ff}, ("d_model", "d_ff"), (3, "d_model", "d_model"))

    import torch
    from torch import nn

    from .torch_ffn import PositionwiseFFN

    with torch.device("meta"):
        ffn_module = PositionwiseFFN(d_model, d_ff, activation=activation)
        attention = nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True)
    return ffn_module, attention


def width_ratio_rows(d_model: int, multipliers=(1, 2, equal_parameter_width(4), 4, 8)) -> list[dict]:  # noqa: B008 - a constant
    """FFN-vs-attention parameter ratio at several FFN widths ``d_ff = m·d_model``.

    Each row has ``d_ff``, both counts (FFN with bias, attention without), the
    counted ratio, and the weights-only algebra: the FFN holds
    ``2·d_ff/d_model`` units of ``d_model²`` against attention's 4, so the
    predicted ratio is ``d_ff / (2·d_model)``.

    >>> [round(r["ratio"], 3) for r in width_ratio_rows(512, (1, 4))]
    [0.501, 2.002]
    """
    d_model = require_positive_int(d_model, "d_model")
    multipliers = require_sequence(multipliers, "multipliers", item=require_positive_number)
    rows = []
    for m in multipliers:
        d_ff = int(round(m * d_model))
        if d_ff < 1:
            raise ValueError(f"multipliers: {m:g} · d_model={d_model} rounds to a width of {d_ff}")
        ffn_count = ffn_param_count(d_model, d_ff)
        attn_count = attention_param_count(d_model)
        rows.append(
            {
                "d_ff": d_ff,
                "multiplier": float(m),
                "ffn_params": ffn_count,
                "attention_params": attn_count,
                "ratio": ffn_count / attn_count,
                "ffn_in_d2_units": 2 * d_ff / d_model,
                "predicted_ratio": d_ff / (2 * d_model),
            }
        )
    return rows


def width_ratio_table(d_model: int, multipliers=(1, 2, equal_parameter_width(4), 4, 8)):  # noqa: B008 - a constant
    """:func:`width_ratio_rows` as a table for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        width_ratio_rows(d_model, multipliers),
        [
            ("d_ff / d_model", "multiplier", ".3g"),
            ("d_ff", "d_ff", ",d"),
            ("FFN parameters", "ffn_params", ",d"),
            ("attention parameters", "attention_params", ",d"),
            ("FFN weights / d_model² (2·d_ff/d_model)", "ffn_in_d2_units", ".3g"),
            ("predicted ratio d_ff/(2·d_model)", "predicted_ratio", ".4f"),
            ("counted ratio (with biases)", "ratio", ".4f"),
        ],
    )
