"""The built width page shows the numbers the code computes, looked up by glue key."""

from __future__ import annotations

import math

import pytest
from sitecheck import figures, glued

from ffnbook.models import get_model, load_models

PAGE = "width"


def test_base_transformer_widths(site):
    # Vaswani et al. §3.3: d_model = 512, d_ff = 2048.
    assert glued(site, PAGE, "wd_base_d_model") == 512
    assert glued(site, PAGE, "wd_base_d_ff") == 2048
    assert glued(site, PAGE, "wd_base_ratio") == 4.0


def test_model_counts_match_the_sheet(site):
    dense = [m for m in load_models() if not m.is_moe]
    classic = [m for m in dense if not m.gated]
    gated = [m for m in dense if m.gated]
    assert glued(site, PAGE, "wd_n_models") == len(dense)
    assert glued(site, PAGE, "wd_n_classic") == len(classic)
    # The prose says "all of them sit at exactly four".
    assert glued(site, PAGE, "wd_n_classic_at_4") == len(classic) == sum(m.d_ff == 4 * m.d_model for m in classic)
    assert glued(site, PAGE, "wd_n_gated") == len(gated)
    assert glued(site, PAGE, "wd_n_gated_below_4") == sum(m.d_ff < 4 * m.d_model for m in gated)
    # PaLM: d_ff = 4·d_model with three matrices, so 12 units of d_model² (arXiv:2204.02311).
    assert glued(site, PAGE, "wd_palm_ratio") == 4.0
    assert glued(site, PAGE, "wd_palm_d2") == 12.0


def test_gated_budget_numbers(site):
    # Shazeer (2020): T5-base's 3072 becomes 2048; 2·768·3072 = 3·768·2048 = 4,718,592.
    assert glued(site, PAGE, "wd_budget_d_model") == 768
    assert glued(site, PAGE, "wd_budget_classic_width") == 3072
    assert glued(site, PAGE, "wd_budget_gated_width") == 2048
    assert glued(site, PAGE, "wd_budget_weights") == 2 * 768 * 3072 == 3 * 768 * 2048


def test_llama_rounding_steps(site):
    # Meta's rule, written out here: int(8·4096/3) = 10922, rounded up to 256 -> 11008.
    assert glued(site, PAGE, "wd_llama_d_model") == 4096
    assert glued(site, PAGE, "wd_llama_exact") == pytest.approx(8 * 4096 / 3)
    assert glued(site, PAGE, "wd_llama_truncated") == 10922
    assert glued(site, PAGE, "wd_llama_multiple_of") == 256
    assert glued(site, PAGE, "wd_llama_d_ff") == glued(site, PAGE, "wd_llama_sheet") == 11008
    assert glued(site, PAGE, "wd_llama_ratio") == pytest.approx(11008 / 4096)
    # 3·11008 weights per d_model over the classic 8·4096: 33024 / 32768 - 1.
    assert glued(site, PAGE, "wd_llama_excess") == pytest.approx(33024 / 32768 - 1)


def test_later_llama_widths(site):
    # meta-llama/llama3 params.json: multiplier 1.3, multiple_of 1024 -> 14336;
    # Llama-2 70B (quoted params.json): multiple_of 4096 -> 28672.
    assert glued(site, PAGE, "wd_multiplier") == 1.3
    assert glued(site, PAGE, "wd_l3_multiple_of") == 1024
    assert glued(site, PAGE, "wd_l3_d_ff") == get_model("Llama-3 8B").d_ff == 14336
    assert glued(site, PAGE, "wd_l2_70b_multiple_of") == 4096
    assert glued(site, PAGE, "wd_l2_70b_d_ff") == get_model("Llama-2 70B").d_ff == 28672
    assert glued(site, PAGE, "wd_l3_ratio") == 3.5
    assert glued(site, PAGE, "wd_l3_d2") == 10.5  # 3 · 3.5
    assert glued(site, PAGE, "wd_l3_over_classic") == pytest.approx(10.5 / 8 - 1)
    assert glued(site, PAGE, "wd_mistral_d_ff") == 14336  # Mistral 7B Table 1 hidden_dim


def test_fixed_budget_widths(site):
    # Kaplan et al.'s count 2·d·(2·d + r·d) held at GPT-2 small's 12·768² per block.
    budget = 12 * 768**2
    low, high = glued(site, PAGE, "wd_kaplan_ratio_min"), glued(site, PAGE, "wd_kaplan_ratio_max")
    assert low < 4 < high
    assert glued(site, PAGE, "wd_kaplan_d_model_narrow_ffn") == pytest.approx(math.sqrt(budget / (2 * (2 + low))))
    assert glued(site, PAGE, "wd_kaplan_d_model_wide_ffn") == pytest.approx(math.sqrt(budget / (2 * (2 + high))))
    assert glued(site, PAGE, "wd_gpt2_d_model") == 768


def test_figure_alt_text_comes_from_the_figure(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 1
    alt = imgs[0].get("alt", "")
    n_dense = sum(not m.is_moe for m in load_models())
    assert f"for {n_dense} dense models" in alt
    assert "Llama-3 8B 3.50" in alt and "LLaMA-1 7B 2.69" in alt


def test_mup_numbers(site):
    # Yang et al. (2021, abstract): a 40M proxy, the 6.7B GPT-3 model, 7% of its pretraining cost.
    assert glued(site, PAGE, "wd_mup_proxy_millions") == 40
    assert glued(site, PAGE, "wd_mup_target") == 6.7
    assert glued(site, PAGE, "wd_mup_cost") == 0.07
    assert (glued(site, PAGE, "wd_mup_narrow"), glued(site, PAGE, "wd_mup_wide")) == (256, 8192)
    assert glued(site, PAGE, "wd_mup_width_ratio") == 32
    # Recomputed with torch's own Adam (tests/test_mup.py's helper): the same RMS changes.
    from test_mup import torch_first_step

    standard = [torch_first_step(64, w, 1e-3) for w in (256, 8192)]
    scaled = [torch_first_step(64, w, 1e-3 * 256 / w) for w in (256, 512, 1024, 2048, 4096, 8192)]
    assert glued(site, PAGE, "wd_mup_growth") == pytest.approx(standard[1] / standard[0], rel=1e-6)
    assert glued(site, PAGE, "wd_mup_spread") == pytest.approx(max(scaled) / min(scaled), rel=1e-6)
    assert glued(site, PAGE, "wd_mup_growth") > 0.8 * 32 and glued(site, PAGE, "wd_mup_spread") < 1.1
