"""What one decoding step reads: the FFN's weights against attention's KV cache.

Generating a token runs every layer once for that token. Its FFN reads the
FFN's weight matrices, a fixed amount; its attention reads the cached keys
and values of every earlier position of the sequence, an amount that grows
with the context. When several sequences are decoded together, the weights
are read once for all of them and each sequence's cache separately. Counts
here are numbers of stored values; multiply by the bytes per value (two in
bfloat16) for bytes. The comparison is only meaningful for attention whose
cache holds every earlier position, so models with a sliding window or with
compressed (latent) caches are refused.
"""

from __future__ import annotations

from ._checks import require_positive_int


def _check_model(model):
    from .compute import ATTENTION_NOTES, UNCONFIRMED_HEAD_SIZE

    for name in ("name", "d_model", "d_ff_dense", "n_layers", "n_kv_heads", "d_head", "attention", "gated"):
        if not hasattr(model, name):
            raise TypeError(f"model must be an ffnbook.models.ModelConfig, got {type(model).__name__}")
    if model.attention not in ("mha", "gqa", "mqa"):
        raise ValueError(f"{model.name}: a {model.attention} cache is not a plain key/value cache")
    if model.name in UNCONFIRMED_HEAD_SIZE:
        raise ValueError(f"{model.name}: {UNCONFIRMED_HEAD_SIZE[model.name]}, so its cache size is not known")
    if model.name in ATTENTION_NOTES:
        raise ValueError(f"{model.name}: {ATTENTION_NOTES[model.name]}; its cache stops growing")
    if model.is_moe:
        raise ValueError(f"{model.name}: an MoE layer reads different experts for different tokens")
    return model


def ffn_weight_values_per_layer(model) -> int:
    """Values in one dense FFN's weight matrices: ``3·d_model·d_ff`` if gated, else ``2·d_model·d_ff``.

    >>> from ffnbook.models import get_model
    >>> ffn_weight_values_per_layer(get_model("LLaMA-1 7B")) == 3 * 4096 * 11008
    True
    """
    model = _check_model(model)
    return (3 if model.gated else 2) * model.d_model * model.d_ff_dense


def kv_cache_values_per_layer(model, n_ctx: int) -> int:
    """Values one sequence's cache holds in one layer at context ``n_ctx``: ``2·n_ctx·n_kv_heads·d_head``.

    >>> from ffnbook.models import get_model
    >>> kv_cache_values_per_layer(get_model("Llama-2 70B"), 1000) == 2 * 1000 * 8 * 128
    True
    """
    model = _check_model(model)
    n_ctx = require_positive_int(n_ctx, "n_ctx")
    return 2 * n_ctx * model.n_kv_heads * model.d_head


def cache_equals_ffn_context(model, batch: int = 1) -> float:
    """The context at which a decoding step reads as many cache values as FFN weights.

    With ``batch`` sequences the FFN weights are read once and ``batch`` caches
    in full, so the context is ``ffn values / (2·batch·n_kv_heads·d_head)``.

    >>> from ffnbook.models import get_model
    >>> cache_equals_ffn_context(get_model("LLaMA-1 7B"))  # 3·4096·11008 / (2·4096)
    16512.0
    """
    model = _check_model(model)
    batch = require_positive_int(batch, "batch")
    return ffn_weight_values_per_layer(model) / (2 * batch * model.n_kv_heads * model.d_head)
