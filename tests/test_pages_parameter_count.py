"""The parameter-count page, looked up by glue key, against hand counts and published totals."""

from __future__ import annotations

import pytest
from hand_counts import (
    BERT_EMBEDDINGS,
    BERT_FFN,
    BERT_TOTAL,
    GPT2_EMBEDDINGS,
    GPT2_FFN,
    GPT2_TOTAL,
    LLAMA_1_7B,
    LLAMA_2_70B,
    LLAMA_3_8B,
    MISTRAL_7B,
    MIXTRAL,
)
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


def test_the_worked_example_and_its_widths(site):
    assert (glued(site, PAGE, "pc_d_model"), glued(site, PAGE, "pc_d_ff")) == (512, 2048)
    assert glued(site, PAGE, "pc_width_multiple") == 4.0
    # The widest row, d_ff = 8 · 512: FFN weights and biases over four 512² attention matrices.
    assert glued(site, PAGE, "pc_ratio_at_widest") == pytest.approx((2 * 512 * 4096 + 4096 + 512) / (4 * 512**2))


def test_gpt2_and_bert_shares_from_hand_counts(site):
    assert GPT2_EMBEDDINGS + 12 * (4 * (768 * 768 + 768) + GPT2_FFN // 12 + 4 * 768) + 2 * 768 == GPT2_TOTAL
    assert BERT_TOTAL == 109_482_240
    assert glued(site, PAGE, "pc_gpt2_total_m") == 124
    assert glued(site, PAGE, "pc_gpt2_reported_m") == 124.0  # openai/gpt-2 README (corrected from 117M)
    assert glued(site, PAGE, "pc_bert_reported_m") == 110.0  # arXiv:1810.04805 §3: 110M
    assert glued(site, PAGE, "pc_gpt2_ne") == pytest.approx(GPT2_FFN / (GPT2_TOTAL - GPT2_EMBEDDINGS), rel=1e-12)
    assert glued(site, PAGE, "pc_gpt2_emb") == pytest.approx(GPT2_EMBEDDINGS / GPT2_TOTAL, rel=1e-12)
    assert glued(site, PAGE, "pc_gpt2_vocab") == 50257
    assert glued(site, PAGE, "pc_bert_ne") == pytest.approx(BERT_FFN / (BERT_TOTAL - BERT_EMBEDDINGS), rel=1e-12)
    assert glued(site, PAGE, "pc_bert_all") == pytest.approx(BERT_FFN / BERT_TOTAL, rel=1e-12)


def test_llama_family_shares_from_hand_counts(site):
    total, _, ffn, _, embeddings = LLAMA_3_8B
    assert total == 8_030_261_248  # the 8.03B of Meta's Llama 3 8B
    assert glued(site, PAGE, "pc_block_llama3") == (total - embeddings - 4096) // 32
    assert glued(site, PAGE, "pc_l3_ne") == pytest.approx(ffn / (total - embeddings), rel=1e-12)
    assert glued(site, PAGE, "pc_l3_all") == pytest.approx(ffn / total, rel=1e-12)
    assert glued(site, PAGE, "pc_l3_emb") == pytest.approx(embeddings / total, rel=1e-12)
    assert glued(site, PAGE, "pc_l3_vocab") == 128256
    for key, (total, _, ffn, _, embeddings) in {
        "pc_mistral_ne": MISTRAL_7B,
        "pc_l270_ne": LLAMA_2_70B,
        "pc_llama_ne": LLAMA_1_7B,
    }.items():
        assert glued(site, PAGE, key) == pytest.approx(ffn / (total - embeddings), rel=1e-12), key


def test_mixtral_active_size_from_hand_counts(site):
    total, active, *_ = MIXTRAL
    assert glued(site, PAGE, "pc_mixtral_total_b") == pytest.approx(total / 1e9, rel=1e-12)
    assert glued(site, PAGE, "pc_mixtral_active_b") == pytest.approx(active / 1e9, rel=1e-12)
    # arXiv:2401.04088 §1: "47B parameters", "13B active parameters"; the counts round to them.
    assert (glued(site, PAGE, "pc_mixtral_reported_b"), glued(site, PAGE, "pc_mixtral_reported_active_b")) == (
        47.0,
        13.0,
    )
    assert (round(total / 1e9), round(active / 1e9)) == (47, 13)


def test_deepseek_v3_against_its_reported_sizes(site):
    # arXiv:2412.19437 abstract: 671B total parameters, 37B activated per token.
    assert (glued(site, PAGE, "pc_deepseek_reported_b"), glued(site, PAGE, "pc_deepseek_reported_active_b")) == (
        671.0,
        37.0,
    )
    assert glued(site, PAGE, "pc_deepseek_total_b") == pytest.approx(671, rel=0.01)
    assert glued(site, PAGE, "pc_deepseek_active_b") == pytest.approx(37, rel=0.03)
    assert glued(site, PAGE, "pc_deepseek_share") > 0.95


def test_gpt3_share_and_gap_from_a_hand_count(site):
    # arXiv:2005.14165 Table 2.1: 96 GPT-2-style blocks of d = 12288 (d_ff = 4d), a tied
    # 50257-token embedding; the paper states no position table, so none is counted.
    d = 12288
    ffn = 96 * (2 * d * 4 * d + 4 * d + d)
    total = 96 * (4 * (d * d + d) + ffn // 96 + 4 * d) + 2 * d + 50257 * d
    assert glued(site, PAGE, "pc_gpt3_all") == pytest.approx(ffn / total, rel=1e-12)
    assert glued(site, PAGE, "pc_gpt3_gap") == pytest.approx(1 - total / 175e9, rel=1e-9)  # the paper's 175.0B
