"""When a decoding step reads more KV cache than FFN weights.

Generating a token reads the weights of the FFN (the active experts, for a
mixture of experts) once, a fixed amount, and the cached keys and values of
every earlier position, an amount that grows with the context
(:mod:`ffnbook.inference` counts both). When several sequences are decoded
together the weights are read once for all of them and each sequence's cache
in full. :func:`cache_equals_ffn_context` is the context at which the two
reads are equal.
"""

from __future__ import annotations

from ._checks import require_positive_int


def cache_equals_ffn_context(model, batch: int = 1) -> float:
    """The context at which one decoding step reads as many KV-cache values as FFN weights.

    ``ffn_active / (batch · cache values per position)``, both counted over all
    layers. Refused where the cache stops growing (a sliding window) and, for
    ``batch > 1``, for mixtures of experts, whose tokens read different experts.

    >>> from ffnbook.models import get_model
    >>> cache_equals_ffn_context(get_model("LLaMA-1 7B"))  # 3·4096·11008 / (2·4096) per layer
    16512.0
    """
    from .inference import kv_cache_values_per_position
    from .model_parameters import parameter_breakdown
    from .models import check_model

    batch = require_positive_int(batch, "batch")
    model = check_model(model)
    if model.attention_window is not None:
        raise ValueError(f"model {model.name} keeps {model.windowed_layers} of its {model.n_layers} layers to a "
                         f"window of {model.attention_window} positions; their cache stops growing")
    if batch > 1 and model.is_moe:
        raise ValueError(f"batch={batch} for {model.name}: with several sequences, tokens read different experts")
    return parameter_breakdown(model).ffn_active / (batch * kv_cache_values_per_position(model))
