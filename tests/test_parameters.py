"""Closed-form parameter counts against the count of real torch modules."""

from __future__ import annotations

import pytest

import ffnbook

torch = pytest.importorskip("torch")
nn = torch.nn


def count(module) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("d_model, d_ff", [(512, 2048), (768, 3072), (64, 100), (1, 1), (96, 256)])
@pytest.mark.parametrize("bias", [True, False])
def test_ffn_formula_equals_plain_linear_layers(d_model, d_ff, bias):
    with torch.device("meta"):
        plain = nn.Sequential(nn.Linear(d_model, d_ff, bias=bias), nn.ReLU(), nn.Linear(d_ff, d_model, bias=bias))
    assert ffnbook.ffn_param_count(d_model, d_ff, bias=bias) == count(plain)


@pytest.mark.parametrize("d_model, d_ff", [(768, 2048), (64, 100), (1, 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_gated_formula_equals_three_linear_layers(d_model, d_ff, bias):
    # One count, one bias rule, for every gated FFN of the book: gate and up add d_ff each, down d_model.
    from ffnbook.parameters import gated_ffn_param_count

    with torch.device("meta"):
        plain = nn.ModuleList(
            [
                nn.Linear(d_model, d_ff, bias=bias),
                nn.Linear(d_model, d_ff, bias=bias),
                nn.Linear(d_ff, d_model, bias=bias),
            ]
        )
    assert gated_ffn_param_count(d_model, d_ff, bias=bias) == count(plain)


def test_weights_in_d2_units_are_the_counts_over_d_model_squared():
    from ffnbook.parameters import ffn_weights_in_d2

    assert ffn_weights_in_d2(14336, 4096, gated=True) == 3 * 14336 / 4096
    assert ffn_weights_in_d2(3072, 768, gated=False) == 8.0


@pytest.mark.parametrize("d_model, n_heads", [(512, 8), (512, 1), (768, 12), (1024, 16)])
@pytest.mark.parametrize("bias", [True, False])
def test_attention_formula_equals_torch_multihead_attention(d_model, n_heads, bias):
    with torch.device("meta"):
        mha = nn.MultiheadAttention(d_model, n_heads, bias=bias)
    assert ffnbook.attention_param_count(d_model, n_heads=n_heads, bias=bias) == count(mha)


@pytest.mark.parametrize("d_model, n_heads, n_kv_heads", [(4096, 32, 8), (512, 8, 1), (512, 8, 8)])
def test_grouped_query_attention_formula(d_model, n_heads, n_kv_heads):
    d_head = d_model // n_heads
    with torch.device("meta"):
        projections = nn.ModuleList(
            [
                nn.Linear(d_model, n_heads * d_head, bias=False),  # Q
                nn.Linear(d_model, n_kv_heads * d_head, bias=False),  # K
                nn.Linear(d_model, n_kv_heads * d_head, bias=False),  # V
                nn.Linear(n_heads * d_head, d_model, bias=False),  # O
            ]
        )
    assert ffnbook.attention_param_count(d_model, n_heads, n_kv_heads) == count(projections)


def test_the_chapter_numbers_follow_from_the_algebra():
    # 2·512·2048 + 2048 + 512 and 4·512², written out independently of ffnbook.
    assert ffnbook.ffn_param_count(512, 2048) == 2 * 512 * 2048 + 2048 + 512 == 2_099_712
    assert ffnbook.attention_param_count(512, n_heads=8) == 4 * 512**2 == 1_048_576


def test_block_modules_are_real_and_free():
    ffn, attn = ffnbook.block_modules(512, 2048, 8)
    assert isinstance(attn, nn.MultiheadAttention)
    assert all(p.device.type == "meta" for p in ffn.parameters())
    assert ffnbook.count_module_parameters(ffn) == ffnbook.ffn_param_count(512, 2048)


def test_width_ratio_rows_follow_d_ff_over_2_d_model():
    for row in ffnbook.width_ratio_rows(256, (1, 2, 4, 8)):
        assert row["predicted_ratio"] == row["d_ff"] / (2 * 256)
        # Biases add (d_ff + d_model) / (4 d_model²): under 1 % at this width.
        assert row["ratio"] == pytest.approx(row["predicted_ratio"], rel=1e-2)
        assert row["ratio"] > row["predicted_ratio"]


def test_count_module_parameters_rejects_non_modules():
    with pytest.raises(TypeError, match="module must be a torch.nn.Module, got int 3"):
        ffnbook.count_module_parameters(3)
