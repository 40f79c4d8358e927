"""The model sheet (ffnbook/data/models.csv through ffnbook.models): its columns, its labels, its one parsers.

The columns added when per-model facts moved out of the code are checked
against the values the code used to type (each traced to the source the sheet
now cites), so moving them changed no number the book computes.
"""

from __future__ import annotations

import dataclasses

import pytest

from ffnbook import activations, gated, models
from ffnbook.models import get_model, load_models, reported_size

NAMES = [m.name for m in load_models()]


def test_deepseek_latent_attention_dimensions():
    # inference/configs/config_671B.json of deepseek-ai/DeepSeek-V3 (P in the sheet's notes).
    m = get_model("DeepSeek-V3")
    assert m.latent_attention._asdict() == {
        "q_lora_rank": 1536,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
    }
    assert m.attention == "mla" and m.n_heads == 128
    assert (m.d_head, m.d_head_v) == (128 + 64, 128)  # scores in 192 dimensions, returns 128


def test_only_deepseek_has_latent_attention():
    assert [m.name for m in load_models() if m.latent_attention] == ["DeepSeek-V3"]


# Heads whose width the sources give apart from d_model: query width n_heads · d_head, and d_model.
HEADS_OF_THEIR_OWN = {
    "PaLM 540B": (48 * 256, 18432),  # "the attention head size is always 256" (arXiv:2204.02311, Table 1)
    "Qwen3-30B-A3B": (32 * 128, 2048),  # config.json: num_attention_heads 32, head_dim 128, hidden_size 2048
    "Qwen3-235B-A22B": (64 * 128, 4096),  # config.json: 64 heads of 128, hidden_size 4096
    "gpt-oss-120b": (64 * 64, 2880),  # openai/gpt-oss model.py ModelConfig: 64 heads of 64, hidden_size 2880
    "gpt-oss-20b": (64 * 64, 2880),
}


def test_only_the_models_with_a_head_size_of_their_own_have_heads_that_do_not_split_d_model():
    for m in load_models():
        if m.latent_attention is not None:
            continue
        if m.name in HEADS_OF_THEIR_OWN:
            assert not m.heads_split_d_model and (m.n_heads * m.d_head, m.d_model) == HEADS_OF_THEIR_OWN[m.name]
        else:
            assert m.heads_split_d_model and m.n_heads * m.d_head == m.d_model, m.name


def test_windows_on_some_layers():
    # gpt-oss: sliding_window 128 on every other layer (layer_idx % 2 == 0) of 36 and 24 layers;
    # Llama 4: chunks of 8192 on the RoPE layers, a NoPE layer every fourth (no_rope_layer_interval 4).
    for name, window, layers, total in (
        ("gpt-oss-120b", 128, 18, 36),
        ("gpt-oss-20b", 128, 12, 24),
        ("Llama 4 Scout", 8192, 36, 48),
        ("Llama 4 Maverick", 8192, 36, 48),
    ):
        m = get_model(name)
        assert (m.attention_window, m.windowed_layers, m.n_layers) == (window, layers, total)
        assert not m.window_on_every_layer and m.attention_span == m.context_length  # the full layers reach further
    mistral = get_model("Mistral 7B")
    assert mistral.window_on_every_layer and mistral.windowed_layers == 32 and mistral.attention_span == 4096
    assert get_model("GPT-2 small").windowed_layers == 0


def test_maverick_alternates_dense_and_moe_layers():
    # (layer_id + 1) % interleave_moe_layer_step == 0 with step 2 (llama-models model.py): every other of 48.
    m = get_model("Llama 4 Maverick")
    assert (m.n_dense_layers, m.n_moe_layers, m.d_ff, m.d_ff_dense) == (24, 24, 8192, 16384)
    assert (m.n_experts, m.n_shared_experts, m.experts_per_token) == (128, 1, 1)


def test_architectures():
    arch = {m.name: m.architecture for m in load_models()}
    assert {n for n, a in arch.items() if a == "encoder"} == {"BERT-base", "BERT-large"}
    assert {n for n, a in arch.items() if a == "encoder-decoder"} == {
        "Transformer base (Vaswani et al.)",
        "Transformer big (Vaswani et al.)",
        "T5-base v1.0",
        "T5-base v1.1",
    }
    for m in load_models():
        assert m.n_encoder_layers + m.n_decoder_layers == m.n_layers


def test_embedding_layouts():
    # GPT-2: tied head, 1024-row wpe (openai/gpt-2 src/model.py); BERT: 512 positions, 2 segment
    # types, pooler (the cited BertModel); untied where the cited code keeps a separate output.
    for size in ("small", "medium", "large", "XL"):
        m = get_model(f"GPT-2 {size}")
        assert m.tied_embeddings and m.position_table == 1024 and not m.pooler
    for name in ("BERT-base", "BERT-large"):
        m = get_model(name)
        assert (m.position_table, m.segment_types, m.pooler) == (512, 2, True)
    untied = {m.name for m in load_models() if not m.tied_embeddings}
    assert untied == {
        "T5-base v1.1",
        "LLaMA-1 7B",
        "Llama-2 7B",
        "Llama-2 70B",
        "Llama-3 8B",
        "Mistral 7B",
        "Mixtral 8x7B",
        "DeepSeek-V3",
        "Qwen3-30B-A3B",  # tie_word_embeddings false
        "Qwen3-235B-A22B",
        "Llama 4 Scout",  # tie_word_embeddings false
        "Llama 4 Maverick",
        "gpt-oss-120b",  # a separate unembedding in openai/gpt-oss model.py
        "gpt-oss-20b",
    }
    assert get_model("GPT-3 175B").position_table is None  # not stated in the paper
    assert {m.name for m in load_models() if m.segment_types or m.pooler} == {"BERT-base", "BERT-large"}


def test_llama_width_rule_settings():
    rules = {m.name: m.ffn_width_rule for m in load_models() if m.ffn_width_rule}
    assert rules == {
        "LLaMA-1 7B": (256, None, "P"),  # meta-llama/llama model.py default multiple_of
        "Llama-2 70B": (4096, 1.3, "S"),  # params.json, quoted by third parties
        "Llama-3 8B": (1024, 1.3, "P"),  # meta-llama/llama3 params.json
    }


def test_every_source_names_where_its_new_columns_come_from():
    for m in load_models():
        if m.latent_attention is not None:
            assert "latent_attention" in m.source and "config_671B.json" in m.source
        else:
            assert "d_head" in m.source, m.name
        if m.ffn_width_rule is not None:
            assert "ffn_width_rule" in m.source, m.name


# --- one set of FFN-type labels ------------------------------------------------------------------


def test_ffn_type_labels_come_from_the_activation_and_gated_names():
    for ffn_type, (activation, is_gated) in models.FFN_TYPES.items():
        expected = gated.VARIANT_NAMES[activation] if is_gated else activations.LABELS[activation]
        assert models.ffn_type_label(ffn_type) == expected
    assert {m.ffn_type for m in load_models()} == set(models.FFN_TYPES)
    assert get_model("LLaMA-1 7B").gated and get_model("LLaMA-1 7B").activation == "silu"
    assert not get_model("GPT-2 small").gated


def test_every_table_names_ffn_types_with_the_one_label_set():
    from ffnbook import compute, width

    labels = set(map(models.ffn_type_label, models.FFN_TYPES))
    width_column = {r["ffn_label"] for r in width.width_table().rows}
    crossover_column = {r["ffn"].split(" × ")[0] for r in compute.crossover_table().rows}
    type_column = {r["type"].split(" (gated")[0] for r in models.ffn_type_table().rows}
    assert width_column <= labels and crossover_column <= labels and type_column == labels
    with pytest.raises(ValueError, match="unknown ffn_type 'reglu'"):
        models.ffn_type_label("reglu")


def test_models_by_ffn_type_covers_the_sheet():
    groups = models.models_by_ffn_type()
    assert sorted(sum(groups.values(), [])) == sorted(NAMES)
    assert "T5-base v1.1" in groups["geglu"]


# --- the one reported-size parser ----------------------------------------------------------------


@pytest.mark.parametrize(
    "name, which, expected",
    [
        ("GPT-3 175B", "total", 175.0e9),
        ("GPT-2 small", "total", 124e6),  # the corrected count of OpenAI's README, not the paper's 117M
        ("BERT-base", "total", 110e6),
        ("Mixtral 8x7B", "total", 47e9),
        ("Mixtral 8x7B", "active", 13e9),
        ("DeepSeek-V3", "total", 671e9),
        ("DeepSeek-V3", "active", 37e9),
    ],
)
def test_reported_size_reads_the_sheet(name, which, expected):
    assert reported_size(get_model(name), which) == expected


def test_reported_size_refuses_what_the_sheet_does_not_give():
    with pytest.raises(ValueError, match="no reported active size for GPT-3 175B"):
        reported_size(get_model("GPT-3 175B"), "active")
    with pytest.raises(ValueError, match="no reported total size"):
        reported_size(get_model("Transformer base (Vaswani et al.)"))
    with pytest.raises(ValueError, match="which must be one of 'total', 'active'"):
        reported_size(get_model("GPT-3 175B"), "stored")
    with pytest.raises(TypeError, match="ModelConfig"):
        reported_size("GPT-3 175B")


# --- the parser fails loudly -------------------------------------------------------------------


def _row(**changes):
    import csv
    from importlib import resources

    text = resources.files("ffnbook").joinpath("data/models.csv").read_text(encoding="utf-8")
    rows = {r["model"]: r for r in csv.DictReader(text.splitlines())}
    return {**rows[changes.pop("model", "DeepSeek-V3")], **changes}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"latent_attention": "q_lora_rank 1536; kv_lora_rank 512"}, "latent_attention must give"),
        ({"latent_attention": "n/a"}, "latent_attention dimensions are needed exactly when"),
        ({"d_head": "192"}, "d_head must be 'n/a'"),
        ({"model": "BERT-base", "architecture": "encoder-decoder"}, "encoder-decoder models, and only they"),
        ({"model": "GPT-2 small", "architecture": "decoder-only"}, "architecture must be one of"),
        ({"model": "GPT-2 small", "tied_embeddings": "maybe"}, "tied_embeddings must be 'yes' or 'no'"),
        ({"model": "LLaMA-1 7B", "ffn_width_rule": "multiple_of 256"}, "ffn_width_rule"),
        ({"model": "GPT-2 small", "d_head": "sixty-four"}, "d_head must be a whole number"),
    ],
)
def test_a_cell_that_does_not_parse_fails_loudly(changes, message):
    with pytest.raises(ValueError, match=message):
        models._parse_row(_row(**changes))


def test_the_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_model("GPT-2 small").d_head = 1
