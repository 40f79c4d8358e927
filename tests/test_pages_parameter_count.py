"""The parameter-count page, looked up by glue key, against hand counts and published totals."""

from __future__ import annotations

import pytest
from sitecheck import figures, glued

from ffnbook import model_parameters as mp
from ffnbook.models import get_model

PAGE = "parameter-count"


def breakdown(name):
    return mp.parameter_breakdown(get_model(name))


def test_formula_against_modules(site):
    # The seeds' numbers: 2·512·2048 + 2048 + 512 and 4·512².
    assert glued(site, PAGE, "pc_ffn_formula") == glued(site, PAGE, "pc_ffn_counted") == 2_099_712
    assert glued(site, PAGE, "pc_attn_formula") == glued(site, PAGE, "pc_attn_counted") == 1_048_576
    assert glued(site, PAGE, "pc_n_heads") == 8
    assert glued(site, PAGE, "pc_weight_ratio") == 2.0  # "twice the size of attention"
    assert glued(site, PAGE, "pc_ratio") == pytest.approx(2_099_712 / 1_048_576)
    assert glued(site, PAGE, "pc_ffn_share") == pytest.approx(2_099_712 / (2_099_712 + 1_048_576))


def test_other_widths(site):
    # Predicted d_ff / (2·d_model): 1/2 at d_ff = d_model, 4 at 8·d_model.
    assert glued(site, PAGE, "pc_predicted_at_1x") == 0.5
    assert glued(site, PAGE, "pc_widest_multiple") == 8.0 and glued(site, PAGE, "pc_predicted_at_widest") == 4.0
    assert glued(site, PAGE, "pc_ratio_at_1x") == pytest.approx((2 * 512**2 + 1024) / (4 * 512**2))


def test_exact_counts(site):
    assert glued(site, PAGE, "pc_gpt2_total") == 124_439_808  # openai/gpt-2 README: "124M"
    assert glued(site, PAGE, "pc_bert_total") == 109_482_240


def test_block_counts(site):
    # A GPT-2 block: 12·768² weights, 9·768 biases and two LayerNorms of 2·768.
    assert glued(site, PAGE, "pc_block_gpt2") == 12 * 768**2 + 9 * 768 + 4 * 768
    # Mixtral: 4096²·(2 + 2/4) attention + 8 experts of 3·4096·14336 + router 8·4096 + 2 RMSNorms.
    d = 4096
    attention, expert = 2 * d * d + 2 * d * 1024, 3 * d * 14336
    assert glued(site, PAGE, "pc_block_mixtral") == attention + 8 * expert + 8 * d + 2 * d
    assert glued(site, PAGE, "pc_block_mixtral_active") == attention + 2 * expert + 8 * d + 2 * d
    assert (glued(site, PAGE, "pc_mixtral_k"), glued(site, PAGE, "pc_mixtral_e")) == (2, 8)


def test_reported_sizes(site):
    assert glued(site, PAGE, "pc_gpt3_reported_b") == 175.0
    assert glued(site, PAGE, "pc_gpt3_total_b") == pytest.approx(breakdown("GPT-3 175B").total / 1e9)
    assert glued(site, PAGE, "pc_mixtral_total_b") == pytest.approx(46.70, abs=0.005)
    # LLaMA-1 7B, untied head as in meta-llama/llama model.py: 6.74B against the paper's 6.7B;
    # a tied head would drop one 32000 × 4096 matrix.
    llama = breakdown("LLaMA-1 7B")
    assert glued(site, PAGE, "pc_llama_total_b") == pytest.approx(llama.total / 1e9)
    assert round(glued(site, PAGE, "pc_llama_total_b"), 1) == glued(site, PAGE, "pc_llama_reported_b") == 6.7
    assert glued(site, PAGE, "pc_llama_tied_b") == pytest.approx((llama.total - 32000 * 4096) / 1e9)
    assert round(glued(site, PAGE, "pc_llama_tied_b"), 1) != 6.7


def test_two_thirds_shares(site):
    assert glued(site, PAGE, "pc_gpt3_ne") == pytest.approx(2 / 3, abs=5e-4)
    assert glued(site, PAGE, "pc_enc_dec_share") == pytest.approx(4 / 7)  # 16 / 28
    assert glued(site, PAGE, "pc_t5_ne") == pytest.approx(breakdown("T5-base v1.0").ffn_share_non_embedding)
    assert glued(site, PAGE, "pc_gpt2_all") == pytest.approx(breakdown("GPT-2 small").ffn_share)


def test_moe_shares(site):
    mixtral, deepseek = breakdown("Mixtral 8x7B"), breakdown("DeepSeek-V3")
    assert glued(site, PAGE, "pc_mixtral_share") == pytest.approx(mixtral.ffn_share)
    assert glued(site, PAGE, "pc_mixtral_share_active") == pytest.approx(mixtral.ffn_share_active)
    assert deepseek.ffn_share > 0.95 > 0.7 > glued(site, PAGE, "pc_deepseek_share_active")


def test_gqa_block_units(site):
    # GQA with 8 of 32 KV heads: Q and O full, K and V a quarter -> 2.5 d²; SwiGLU at 3.5 d -> 10.5 d².
    assert glued(site, PAGE, "pc_l3_attn_d2") == 2.5
    assert glued(site, PAGE, "pc_l3_ffn_d2") == 10.5
    assert glued(site, PAGE, "pc_l3_block_share") == pytest.approx(10.5 / 13)
    assert glued(site, PAGE, "pc_l3_group") == 4


def test_figure_alt_text_from_its_values(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 1
    gpt2 = breakdown("GPT-2 small")
    assert f"GPT-2 small: FFN {100 * gpt2.ffn_share:.0f}%" in imgs[0].get("alt", "")
