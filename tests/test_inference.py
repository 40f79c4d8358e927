"""Bytes read per decoded token, the KV cache and the 6N rule, against hand counts."""

from __future__ import annotations

import pytest

from ffnbook import inference
from ffnbook import model_parameters as mp
from ffnbook.models import get_model
from ffnbook.plotting import BookFigure


def test_kv_cache_values_per_position_by_hand():
    # Standard attention: a key and a value of n_kv_heads · d_head per layer.
    assert inference.kv_cache_values_per_position(get_model("GPT-2 small")) == 12 * 2 * 12 * 64
    assert inference.kv_cache_values_per_position(get_model("Llama-2 70B")) == 80 * 2 * 8 * 128
    assert inference.kv_cache_values_per_position(get_model("Mistral 7B")) == 32 * 2 * 8 * 128
    # DeepSeek-V3 §2.1.1: only the 512-d latent and the 64-d rotary key are cached, per layer.
    assert inference.kv_cache_values_per_position(get_model("DeepSeek-V3")) == 61 * (512 + 64)


def test_decode_bytes_of_gpt2_small_by_hand():
    model = get_model("GPT-2 small")
    b = inference.decode_bytes_per_token(model, 1024, "float32")
    d, layers = 768, 12
    # Per block: FFN 2·d·4d + 4d + d; attention 4·d² + 4·d (biases); two LayerNorms of 2·d; one final.
    assert b.ffn == 4 * layers * (8 * d * d + 5 * d)
    assert b.attention == 4 * layers * (4 * d * d + 4 * d)
    assert b.other == 4 * (2 * layers + 1) * 2 * d
    # The tied head (50257 × 768) read in full, plus one token row and one position row.
    assert b.head_and_embeddings == 4 * (50257 * d + 2 * d)
    assert b.kv_cache == 4 * 1024 * layers * 2 * d
    assert b.total == b.weights + b.kv_cache
    # All parameters, except that of the 1024-row position table only one row is read (the token
    # table is the tied head, read in full, plus one row).
    assert b.weights // 4 == mp.parameter_breakdown(model).total - 1024 * d + 2 * d


def test_bfloat16_halves_every_count():
    model = get_model("LLaMA-1 7B")
    f32 = inference.decode_bytes_per_token(model, 2048, "float32")
    bf16 = inference.decode_bytes_per_token(model, 2048, "bfloat16")
    assert all(
        2 * getattr(bf16, k) == getattr(f32, k)
        for k in ("ffn", "attention", "head_and_embeddings", "other", "kv_cache")
    )
    assert bf16.ffn_share == pytest.approx(f32.ffn_share)


def test_sliding_window_caps_the_cache():
    mistral = get_model("Mistral 7B")
    at_window = inference.decode_bytes_per_token(mistral, 4096)
    beyond = inference.decode_bytes_per_token(mistral, 65536)
    assert beyond.kv_cache == at_window.kv_cache  # rolling buffer of W = 4096 positions
    llama = get_model("Llama-2 7B")
    assert (
        inference.decode_bytes_per_token(llama, 8192).kv_cache
        == 2 * inference.decode_bytes_per_token(llama, 4096).kv_cache
    )


def test_a_window_on_some_layers_caps_only_their_cache():
    # gpt-oss-120b: 18 of 36 layers keep to 128 positions; 8 key/value heads of 64, bfloat16.
    oss = get_model("gpt-oss-120b")
    per_layer_position = 2 * 8 * 64 * 2  # a key and a value, two bytes each
    b = inference.decode_bytes_per_token(oss, 10_000)
    assert b.kv_cache == per_layer_position * (18 * 10_000 + 18 * 128)
    assert inference.decode_bytes_per_token(oss, 100).kv_cache == per_layer_position * 36 * 100  # inside the window


def test_the_ffn_share_falls_as_the_cache_grows():
    model = get_model("Mixtral 8x7B")
    shares = [inference.decode_bytes_per_token(model, n).ffn_share for n in (1, 1024, 32768)]
    assert shares == sorted(shares, reverse=True)
    short = inference.decode_bytes_per_token(model, 1)
    counts = mp.parameter_breakdown(model)
    assert short.ffn == 2 * counts.ffn_active  # only the two active experts are read


def test_decode_refuses_what_it_cannot_count():
    with pytest.raises(ValueError, match="decoder-only"):
        inference.decode_bytes_per_token(get_model("BERT-base"), 10)
    with pytest.raises(ValueError, match="band"):
        inference.decode_bytes_per_token(get_model("GPT-3 175B"), 10)
    with pytest.raises(ValueError, match="dtype"):
        inference.decode_bytes_per_token(get_model("GPT-2 small"), 10, "int4")
    with pytest.raises(TypeError, match="ModelConfig"):
        inference.decode_bytes_per_token("GPT-2 small", 10)


def test_decode_flops_per_byte():
    assert inference.decode_flops_per_byte("bfloat16") == 1.0
    assert inference.decode_flops_per_byte("float32") == 0.5
    assert inference.decode_flops_per_byte("bfloat16", 64) == 64.0


def test_training_flops_are_six_n():
    # GPT-3: N = 96 blocks of 12·12288² weights plus biases and LayerNorms; 6N per token.
    gpt3 = get_model("GPT-3 175B")
    counts = mp.parameter_breakdown(gpt3)
    n = counts.total - counts.embeddings
    assert inference.training_flops_per_token(gpt3) == 6 * n
    assert n == pytest.approx(12 * 96 * 12288**2, rel=1e-3)
    assert inference.ffn_share_of_training_flops(gpt3) == pytest.approx(2 / 3, abs=1e-3)
    # A mixture of experts counts the experts a token uses, not the stored ones.
    mixtral = mp.parameter_breakdown(get_model("Mixtral 8x7B"))
    assert inference.training_flops_per_token(get_model("Mixtral 8x7B")) == 6 * (
        mixtral.total_active - mixtral.embeddings
    )


def test_decode_rows_and_figure():
    rows = {r["model"]: r for r in inference.decode_rows()}
    assert rows["Llama-2 70B"]["context"] == 4096
    assert rows["Mixtral 8x7B"]["ffn_share_at_context"] < rows["Mixtral 8x7B"]["ffn_share_short"]
    fig = inference.decode_share_figure()
    assert isinstance(fig, BookFigure)
    for name in inference.DECODE_MODELS:
        assert name in fig.alt


def test_machine_balance_is_positive():
    balance = inference.measure_machine_balance(n=128, copy_mib=4, repeats=1)
    assert balance.flops_per_second > 0 and balance.bytes_per_second > 0
    assert balance.flops_per_byte == balance.flops_per_second / balance.bytes_per_second


# --- batches of a mixture of experts, and quantised FFN weights -----------------------------------


def test_decode_step_reads_what_the_batch_uses():
    from ffnbook import model_parameters as mp
    from ffnbook import moe

    mixtral = get_model("Mixtral 8x7B")
    counts = mp.parameter_breakdown(mixtral)
    expert = 3 * 4096 * 14336  # one SwiGLU expert (arXiv:2401.04088, Table 1)
    head = 32000 * 4096
    # Everything but the eight routed experts per layer, read once per step; the output head in full.
    shared = counts.total - counts.embeddings - 32 * 8 * expert + head
    for batch in (1, 3, 50):
        step = inference.decode_step_weight_bytes(mixtral, batch)
        distinct = moe.expected_distinct_experts(8, 2, batch)
        assert step.weights == pytest.approx(2 * (shared + batch * 4096 + 32 * distinct * expert), rel=1e-12)
        assert step.per_token == pytest.approx(step.weights / batch)
    # At batch size one it is the batch-one count; with a large batch nearly all that is stored.
    assert (
        inference.decode_step_weight_bytes(mixtral, 1).weights == inference.decode_bytes_per_token(mixtral, 1).weights
    )
    assert inference.decode_step_weight_bytes(mixtral, 512).of_stored > 0.99
    with pytest.raises(ValueError, match="dense model"):
        inference.decode_step_weight_bytes(get_model("Llama-2 70B"), 4)


def test_quantised_ffn_weights_shrink_only_the_ffn_bytes():
    model = get_model("Llama-2 70B")
    plain = inference.decode_bytes_per_token(model, 1)
    for fmt, bits in (("int8", 8), ("int4", 4)):
        q = inference.decode_bytes_per_token(model, 1, ffn_dtype=fmt)
        assert q.ffn == plain.ffn * bits // 16
        assert (q.attention, q.head_and_embeddings, q.kv_cache) == (
            plain.attention,
            plain.head_and_embeddings,
            plain.kv_cache,
        )
    with pytest.raises(ValueError, match="ffn_dtype must be one of"):
        inference.decode_bytes_per_token(model, 1, ffn_dtype="int3")
