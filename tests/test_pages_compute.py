"""The numbers on the built Compute page, looked up by glue key, against a fresh recomputation.

Timings and the machine measurement vary from build to build; for them only
what the prose relies on is checked (signs, orderings, consistency).
"""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued, page_text

from ffnbook import compression, compute, inference, models

PAGE = "compute"


def test_flop_counts_on_the_page(site):
    # GPT-2 small: FFN 4·768·3072, projections 8·768², scores 4·1024·768 per token.
    assert glued(site, PAGE, "cp_d_model") == 768 and glued(site, PAGE, "cp_d_ff") == 3072
    assert glued(site, PAGE, "cp_n_ctx") == 1024
    assert glued(site, PAGE, "cp_ffn_formula") == glued(site, PAGE, "cp_ffn_counted") == 4 * 768 * 3072
    assert glued(site, PAGE, "cp_proj_counted") == 8 * 768**2
    assert glued(site, PAGE, "cp_scores_counted") == 4 * 1024 * 768
    assert glued(site, PAGE, "cp_ffn_over_attention") == pytest.approx(4 * 768 * 3072 / (8 * 768**2 + 4 * 1024 * 768))


def test_softmax_numbers(site):
    # One score per position and head: 1024 · 12; each costs the products 2·(64 + 64) FLOPs.
    assert glued(site, PAGE, "cp_softmax_n_ctx") == 1024
    assert glued(site, PAGE, "cp_softmax_scores") == 1024 * 12
    assert glued(site, PAGE, "cp_softmax_flops_per_score") == 256
    assert glued(site, PAGE, "cp_softmax_per_flop") == 1 / 256
    assert glued(site, PAGE, "cp_gpt2_d_head") == 768 // 12 == 64  # openai/gpt-2 src/model.py


def test_kaplan_condition(site):
    # Kaplan et al. §2.1: the context term is negligible when d_model > n_ctx / 12.
    assert glued(site, PAGE, "cp_kaplan_ratio_gpt2") == pytest.approx(1024 / (12 * 768))
    assert glued(site, PAGE, "cp_kaplan_ratio_ours") == pytest.approx(2 * 1024 / (12 * 768))
    assert glued(site, PAGE, "cp_kaplan_limit_gpt2") == 12 * 768
    assert glued(site, PAGE, "cp_kaplan_gpt2") == 2 * 3072  # QKᵀ only: twice our crossover
    assert glued(site, PAGE, "cp_kaplan_factor") == 2.0


def crossover(name):
    return compute.model_crossover(models.get_model(name))["crossover"]


def test_crossovers_on_the_page(site):
    # references.md item 9: ≈3k (GPT-2 small), ≈49k (GPT-3), ≈16.5k (LLaMA-7B), ≈43k (Llama-2 70B, Mixtral).
    assert glued(site, PAGE, "cp_n_gpt2") == 3072.0 == crossover("GPT-2 small")
    assert glued(site, PAGE, "cp_n_gpt3") == 49152.0
    assert glued(site, PAGE, "cp_n_llama") == 1.5 * 11008  # gated: 3/2 · d_ff
    assert glued(site, PAGE, "cp_n_llama70") == glued(site, PAGE, "cp_n_mixtral") == 1.5 * 28672 == 2 * 1.5 * 14336
    assert glued(site, PAGE, "cp_mixtral_active") == 2
    assert glued(site, PAGE, "cp_deepseek_active") == 9  # 8 routed + 1 shared
    # DeepSeek-V3: 9 experts · 6·7168·2048 FLOPs over 2·128·(192 + 128) per position.
    assert glued(site, PAGE, "cp_n_deepseek") == pytest.approx(9 * 6 * 7168 * 2048 / (2 * 128 * 320))
    assert glued(site, PAGE, "cp_deepseek_qk") == 192 and glued(site, PAGE, "cp_deepseek_v") == 128


def test_crossover_table_on_the_page(site):
    text = page_text(site, PAGE)
    for row in compute.crossover_rows():
        if row["crossover"] is not None:
            assert f"{row['crossover']:,.0f}" in text


def test_contexts_and_mistrals_window(site):
    # Mistral 7B Table 1: window_size 4096, context_len 8192; its crossover 1.5 · 14336 = 21504.
    assert glued(site, PAGE, "cp_mistral_window") == 4096
    assert glued(site, PAGE, "cp_mistral_context") == 8192
    assert glued(site, PAGE, "cp_mistral_crossover") == 21504.0
    known = [m for m in models.load_models() if m.context_length is not None and crossover(m.name) is not None]
    beyond = [m for m in known if crossover(m.name) > m.context_length]
    assert glued(site, PAGE, "cp_n_context_known") == len(known)
    assert glued(site, PAGE, "cp_n_beyond_context") == len(beyond)
    assert len(beyond) > len(known) / 2  # the prose says "most"
    assert glued(site, PAGE, "cp_gpt2_context") == 1024 and glued(site, PAGE, "cp_gpt2_context_fraction") == 1024 / 3072
    assert glued(site, PAGE, "cp_mixtral_context") == 32768


def test_timing_numbers_are_consistent(site):
    # The FLOP-model crossover of the timed widths is d_ff; the measurements vary.
    default_d_ff = compute.time_ffn_vs_attention.__kwdefaults__["d_ff"]
    assert glued(site, PAGE, "cp_flop_crossover") == default_d_ff == glued(site, PAGE, "cp_time_d_ff")
    assert glued(site, PAGE, "cp_measured_crossover") > 0
    assert glued(site, PAGE, "cp_attention_slope") > glued(site, PAGE, "cp_ffn_slope") > 0


def test_inference_numbers(site):
    # What decoding at batch one offers: 2 FLOPs per weight, 4 bytes (float32) or 2 (bfloat16).
    assert glued(site, PAGE, "cp_offer_f32") == 0.5 and glued(site, PAGE, "cp_offer_bf16") == 1.0
    ratio = glued(site, PAGE, "cp_machine_gflops") / glued(site, PAGE, "cp_machine_gbytes")
    assert ratio == pytest.approx(glued(site, PAGE, "cp_machine_flops_per_byte"))
    assert glued(site, PAGE, "cp_busy_batch") == pytest.approx(2 * ratio)
    # Llama-2 70B in bfloat16: FFN 80 · 3·8192·28672 weights of 2 bytes.
    row = {r["model"]: r for r in inference.decode_rows()}["Llama-2 70B"]
    assert glued(site, PAGE, "cp_l70_weights_gb") == pytest.approx(row["weights_gb"])
    ffn_bytes = 2 * 80 * 3 * 8192 * 28672
    assert glued(site, PAGE, "cp_l70_ffn_share") == pytest.approx(ffn_bytes / (row["weights_gb"] * 1e9))
    # Mixtral's KV cache at 32k: 32 layers · 2 · 8 heads · 128 · 32768 positions · 2 bytes.
    assert glued(site, PAGE, "cp_mixtral_kv_gb") == pytest.approx(32 * 2 * 8 * 128 * 32768 * 2 / 1e9)
    assert glued(site, PAGE, "cp_mixtral_ffn_share_context") < glued(site, PAGE, "cp_mixtral_ffn_share_short")
    assert glued(site, PAGE, "cp_gpt2_vocab") == 50257


def test_six_n(site):
    # Kaplan et al.: C ≈ 6N per training token; GPT-3's N ≈ 12 · 96 · 12288² (plus biases and norms).
    assert glued(site, PAGE, "cp_6n_gpt3") == pytest.approx(6 * 12 * 96 * 12288**2, rel=2e-3)
    assert glued(site, PAGE, "cp_6n_gpt3_ffn") == pytest.approx(2 / 3, abs=1e-3)
    assert glued(site, PAGE, "cp_6n_l70_ffn") > glued(site, PAGE, "cp_6n_gpt3_ffn")  # wide FFN, GQA
    assert glued(site, PAGE, "cp_6n_deepseek") < glued(site, PAGE, "cp_6n_l70")  # only active experts count


def test_figures_have_alt_text_from_their_values(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 2
    timing_alt, decode_alt = (img.get("alt", "") for img in imgs)
    assert f"fitted slope {glued(site, PAGE, 'cp_ffn_slope'):.2f}" in timing_alt
    for name in inference.DECODE_MODELS:
        assert name in decode_alt


def test_palm_and_deepseek_forms(site):
    # PaLM: "the attention head size is always 256" (arXiv:2204.02311, Table 1 caption); SwiGLU at
    # d_ff = 4·18432; 48 heads: n* = 6·18432·73728 / (4·48·256), 2.25 times d_ff.
    assert glued(site, PAGE, "cp_palm_d_head") == 256
    assert glued(site, PAGE, "cp_n_palm") == 6 * 18432 * 73728 / (4 * 48 * 256)
    assert glued(site, PAGE, "cp_palm_ratio") == 6 * 18432 / (4 * 48 * 256)
    # DeepSeek-V3 absorbed (DeepSeek-V2 §2.1; inference/model.py attn_impl "absorb"): every head scores
    # against the 512-wide latent plus the 64-wide rotary key and sums 512-wide latents.
    assert (glued(site, PAGE, "cp_deepseek_abs_qk"), glued(site, PAGE, "cp_deepseek_abs_v")) == (576, 512)
    assert glued(site, PAGE, "cp_n_deepseek_absorbed") == pytest.approx(9 * 6 * 7168 * 2048 / (2 * 128 * 1088))
    # "inside the 4K context of its pre-training" (arXiv:2412.19437 §4.2).
    assert glued(site, PAGE, "cp_deepseek_context") == 4096 > glued(site, PAGE, "cp_n_deepseek_absorbed")


def test_quantised_ffn_bytes(site):
    # Llama-2 70B at batch one, a one-position context: the FFN is 80 · 3·8192·28672 weights.
    ffn_weights = 80 * 3 * 8192 * 28672
    bf16 = glued(site, PAGE, "cp_q_bfloat16_gb") * 1e9
    assert glued(site, PAGE, "cp_q_int8_gb") * 1e9 == pytest.approx(bf16 - ffn_weights * (2 - 1))
    assert glued(site, PAGE, "cp_q_int4_gb") * 1e9 == pytest.approx(bf16 - ffn_weights * (2 - 0.5))
    assert glued(site, PAGE, "cp_q_bfloat16_ffn_share") == pytest.approx(2 * ffn_weights / bf16)
    assert glued(site, PAGE, "cp_q_int8_ffn_share") == pytest.approx(
        ffn_weights / glued(site, PAGE, "cp_q_int8_gb") / 1e9
    )
    assert glued(site, PAGE, "cp_q_int4_ffn_share") == pytest.approx(
        0.5 * ffn_weights / glued(site, PAGE, "cp_q_int4_gb") / 1e9
    )
    assert glued(site, PAGE, "cp_q_int4_speedup") == pytest.approx(bf16 / (glued(site, PAGE, "cp_q_int4_gb") * 1e9))
    assert glued(site, PAGE, "cp_q_bits_int4") == 4


def test_chinchilla_numbers(site):
    # Hoffmann et al. 2022: Table 2 exponents (Kaplan 0.73/0.27, approach 1 0.50/0.50), Table 3 tokens
    # per parameter (8.0B for 400M ... 1.5T for 67B), Chinchilla 70B on 1.4T tokens.
    assert glued(site, PAGE, "cp_ch_budget_factor") == 10
    assert glued(site, PAGE, "cp_ch_kaplan_model") == pytest.approx(10**0.73)
    assert glued(site, PAGE, "cp_ch_kaplan_data") == pytest.approx(10**0.27)
    assert glued(site, PAGE, "cp_ch_equal") == pytest.approx(10**0.5)
    assert glued(site, PAGE, "cp_ch_ratio_low") == pytest.approx(8.0e9 / 400e6)
    assert glued(site, PAGE, "cp_ch_ratio_high") == pytest.approx(1.5e12 / 67e9)
    assert (glued(site, PAGE, "cp_ch_params_b"), glued(site, PAGE, "cp_ch_tokens_t")) == (70, 1.4)
    assert glued(site, PAGE, "cp_ch_ratio") == 20
    assert glued(site, PAGE, "cp_ch_flops") == pytest.approx(6 * 70e9 * 1.4e12)


def _int8(a, axis=None):
    # Symmetric round to nearest, 127 levels each side, one scale per tensor or per column.
    peak = abs(a).max(axis=axis, keepdims=axis is not None)
    return np.round(a / (peak / 127)) * (peak / 127)


def test_outliers_quantisation_and_pruning(site):
    # Sun et al. 2024 abstract (100,000 times), Lin et al. 2024 (1%), Frantar & Alistarh 2023
    # (OPT-175B, BLOOM-176B, 60%), Mishra et al. 2021 (twice the math throughput).
    assert glued(site, PAGE, "cp_massive_ratio") == 100_000
    assert glued(site, PAGE, "cp_awq_salient") == 0.01
    assert (glued(site, PAGE, "cp_sparsegpt_params_small"), glued(site, PAGE, "cp_sparsegpt_params_large")) == (
        175,
        176,
    )
    assert glued(site, PAGE, "cp_sparsegpt_sparsity") == 0.6
    assert glued(site, PAGE, "cp_sparse_speedup") == 2
    # The page's layer: 256 tokens, 512 features of which 4 are 50 times larger, 256 outputs.
    n_out, d, scale = glued(site, PAGE, "cp_q_outlier_features"), glued(site, PAGE, "cp_q_features"), 50.0
    assert (n_out, d, glued(site, PAGE, "cp_q_outlier_scale")) == (4, 512, scale)
    x = compression.outlier_inputs(256, d, n_out, scale, seed=0)
    plain = np.random.default_rng(0).standard_normal((256, d))
    W = np.random.default_rng(1).standard_normal((d, 256)) / np.sqrt(d)

    def error(a, w):
        return np.linalg.norm(_int8(a) @ _int8(w, axis=0) - a @ w) / np.linalg.norm(a @ w)

    assert glued(site, PAGE, "cp_q_error_plain") == pytest.approx(error(plain, W))
    assert glued(site, PAGE, "cp_q_error_outliers") == pytest.approx(error(x, W))
    s = np.sqrt(abs(x).max(axis=0)) / np.sqrt(abs(W).max(axis=1))
    assert glued(site, PAGE, "cp_q_error_smoothed") == pytest.approx(error(x / s, W * s[:, None]))
    assert glued(site, PAGE, "cp_prune_removed") == 0.5
    # Half the weights of each output column go, ranked by |W| or |W|·‖x_j‖, freely or two of every four.
    reference = x @ W
    for key, importance, group in (
        ("cp_prune_magnitude", abs(W), d),
        ("cp_prune_wanda", abs(W) * np.linalg.norm(x, axis=0)[:, None], d),
        ("cp_prune_magnitude_24", abs(W), 4),
        ("cp_prune_wanda_24", abs(W) * np.linalg.norm(x, axis=0)[:, None], 4),
    ):
        kept = np.zeros_like(W)
        for j in range(W.shape[1]):
            for start in range(0, d, group):
                block = importance[start : start + group, j]
                best = start + np.argsort(-block)[: group // 2]
                kept[best, j] = W[best, j]
        assert glued(site, PAGE, key) == pytest.approx(np.linalg.norm(x @ kept - reference) / np.linalg.norm(reference))
