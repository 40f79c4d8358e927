"""What a decoding step reads: the counts against the models' shapes, written out."""

from __future__ import annotations

import pytest

from ffnbook import decoding
from ffnbook.models import get_model


def test_llama_counts_from_its_published_shapes():
    # LLaMA-1 7B: d_model 4096, SwiGLU width 11008, 32 heads of 128, multi-head attention.
    llama = get_model("LLaMA-1 7B")
    assert decoding.ffn_weight_values_per_layer(llama) == 3 * 4096 * 11008
    assert decoding.kv_cache_values_per_layer(llama, 2048) == 2 * 2048 * 32 * 128
    assert decoding.cache_equals_ffn_context(llama) == 3 * 4096 * 11008 / (2 * 32 * 128)


def test_grouped_query_attention_and_batching():
    # Llama-2 70B: 8 key/value heads of 128, SwiGLU width 28672 at d_model 8192.
    model = get_model("Llama-2 70B")
    one = decoding.cache_equals_ffn_context(model)
    assert one == 3 * 8192 * 28672 / (2 * 8 * 128)
    # At the crossover context the cache and the weights hold the same number of values.
    assert decoding.kv_cache_values_per_layer(model, int(one)) == decoding.ffn_weight_values_per_layer(model)
    assert decoding.cache_equals_ffn_context(model, batch=64) == one / 64


@pytest.mark.parametrize(
    "name, message",
    [("Mistral 7B", "sliding window"), ("DeepSeek-V3", "mla"), ("Mixtral 8x7B", "experts"),
     ("PaLM 540B", "head size")],
)
def test_models_whose_cache_is_not_plain_are_refused(name, message):
    with pytest.raises(ValueError, match=message):
        decoding.cache_equals_ffn_context(get_model(name))


def test_bad_arguments():
    with pytest.raises(TypeError, match="ModelConfig"):
        decoding.ffn_weight_values_per_layer("LLaMA-1 7B")
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        decoding.cache_equals_ffn_context(get_model("GPT-2 small"), batch=0)
