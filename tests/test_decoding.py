"""When the KV cache outweighs the FFN in a decoding step: against the models' shapes, written out."""

from __future__ import annotations

import pytest

from ffnbook import decoding
from ffnbook.models import get_model


def test_llama_from_its_published_shapes():
    # LLaMA-1 7B: 32 layers, d_model 4096, SwiGLU width 11008, 32 heads of 128 (multi-head).
    per_layer_ffn, per_layer_cache_per_position = 3 * 4096 * 11008, 2 * 32 * 128
    assert decoding.cache_equals_ffn_context(get_model("LLaMA-1 7B")) == (
        32 * per_layer_ffn / (32 * per_layer_cache_per_position)
    )


def test_grouped_query_attention_and_batching():
    # Llama-2 70B: 80 layers, d_model 8192, SwiGLU width 28672, 8 key/value heads of 128.
    one = decoding.cache_equals_ffn_context(get_model("Llama-2 70B"))
    assert one == 3 * 8192 * 28672 / (2 * 8 * 128)
    assert decoding.cache_equals_ffn_context(get_model("Llama-2 70B"), batch=64) == one / 64


@pytest.mark.parametrize(
    "name, batch, message",
    [("Mistral 7B", 1, "32 of its 32 layers to a window of 4096"), ("Mixtral 8x7B", 8, "different experts")],
)
def test_models_whose_reads_do_not_compare_are_refused(name, batch, message):
    with pytest.raises(ValueError, match=message):
        decoding.cache_equals_ffn_context(get_model(name), batch)


def test_bad_arguments():
    with pytest.raises(TypeError, match="ModelConfig"):
        decoding.cache_equals_ffn_context("LLaMA-1 7B")
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        decoding.cache_equals_ffn_context(get_model("GPT-2 small"), batch=0)
