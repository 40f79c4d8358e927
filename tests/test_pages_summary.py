"""The built Summary page: glued numbers equal a recomputation, answers are folded."""

from __future__ import annotations

import re

import pytest
from hand_counts import GPT2_EMBEDDINGS, GPT2_FFN, GPT2_TOTAL
from sitecheck import chapter_order, glued, page_text, soup_of

from ffnbook import model_parameters
from ffnbook.models import get_model

PAGE = "summary"


def test_interview_answers_are_folded(site):
    section = soup_of(site, PAGE).find("section", id="interview-follow-up-questions")
    boxes = section.find_all("details", class_="sd-dropdown")
    assert len(boxes) >= 5
    assert all(not box.has_attr("open") for box in boxes)
    assert all(box.find("summary").get_text(strip=True).endswith("?") for box in boxes)


def test_classic_block_numbers(site):
    d, f = 512, 2048  # the base transformer (Vaswani et al., 2017)
    ffn, attn = 2 * d * f + f + d, 4 * d * d
    assert (glued(site, PAGE, "su_d_model"), glued(site, PAGE, "su_d_ff"), glued(site, PAGE, "su_n_heads")) == (d, f, 8)
    assert (glued(site, PAGE, "su_ffn_count"), glued(site, PAGE, "su_attn_count")) == (ffn, attn)
    assert glued(site, PAGE, "su_ratio") == ffn / attn
    assert glued(site, PAGE, "su_block_share") == ffn / (ffn + attn)
    assert glued(site, PAGE, "su_ffn_flops") == 4 * d * f


def test_parameter_shares_of_real_models(site):
    for key, name in (
        ("su_share_gpt2_small", "GPT-2 small"),
        ("su_share_gpt3", "GPT-3 175B"),
        ("su_share_mistral", "Mistral 7B"),
        ("su_share_mixtral", "Mixtral 8x7B"),
    ):
        assert glued(site, PAGE, key) == model_parameters.parameter_breakdown(get_model(name)).ffn_share
    # GPT-2 small independently: 12 blocks of 2·768·3072 + 3072 + 768 FFN parameters in a model
    # of 124,439,808 (the project's recount of the released checkpoint, models_notes.md).
    assert glued(site, PAGE, "su_share_gpt2_small") == pytest.approx(12 * (2 * 768 * 3072 + 3072 + 768) / 124_439_808)
    assert glued(site, PAGE, "su_share_gpt2_small_nonemb") == pytest.approx(
        GPT2_FFN / (GPT2_TOTAL - GPT2_EMBEDDINGS), rel=1e-12
    )
    shares = [
        glued(site, PAGE, k) for k in ("su_share_gpt2_small", "su_share_gpt3", "su_share_mistral", "su_share_mixtral")
    ]
    assert min(shares) < 0.5 < 0.9 < max(shares)  # nowhere near one fixed two-thirds


def test_when_attention_is_the_expensive_part(site):
    # LLaMA-1 7B: d_model 4096, 32 heads of 128, SwiGLU d_ff 11008 (Touvron et al., 2023a).
    llama_ffn_flops = 2 * 3 * 4096 * 11008
    assert glued(site, PAGE, "su_llama_flop_crossover") == llama_ffn_flops / (4 * 32 * 128)
    assert glued(site, PAGE, "su_llama_cache_context") == 3 * 4096 * 11008 / (2 * 32 * 128)
    # Llama-2 70B: d_model 8192, 64 query heads and 8 key/value heads of 128, d_ff 28672.
    assert glued(site, PAGE, "su_l2_flop_crossover") == 2 * 3 * 8192 * 28672 / (4 * 64 * 128)
    assert glued(site, PAGE, "su_l2_cache_context") == 3 * 8192 * 28672 / (2 * 8 * 128)
    batch = glued(site, PAGE, "su_serving_batch")
    assert glued(site, PAGE, "su_l2_cache_context_batch") == 3 * 8192 * 28672 / (2 * batch * 8 * 128)


def test_moe_facts_come_from_the_model_sheet(site):
    mixtral, deepseek = get_model("Mixtral 8x7B"), get_model("DeepSeek-V3")
    # Mixtral: 8 experts, top-2 (Jiang et al., 2024).
    assert (glued(site, PAGE, "su_mixtral_experts"), glued(site, PAGE, "su_mixtral_top_k")) == (8, 2)
    assert (
        glued(site, PAGE, "su_share_mixtral_active") == model_parameters.parameter_breakdown(mixtral).ffn_share_active
    )
    assert [
        glued(site, PAGE, k)
        for k in (
            "su_deepseek_routed",
            "su_deepseek_shared",
            "su_deepseek_top_k",
            "su_deepseek_moe_layers",
            "su_deepseek_layers",
        )
    ] == [
        deepseek.n_experts,
        deepseek.n_shared_experts,
        deepseek.experts_per_token,
        deepseek.n_moe_layers,
        deepseek.n_layers,
    ]


def test_attention_experts_and_the_nonlinearity_evidence_are_cited(site):
    text = re.sub(r"\s+([,.;:\]])", r"\1", page_text(site, PAGE))  # "et al. , 2022" as read
    # Published versions: SwitchHead NeurIPS 2024, RoFormer Neurocomputing 2024, ALiBi ICLR 2022.
    for citation in (
        "Zhang et al., 2022",
        "Csordás et al., 2024",
        "Dong et al., 2021",
        "Sukhbaatar et al., 2019",
        "Su et al., 2024",
        "Press et al., 2022",
    ):
        assert citation in text, citation


def test_reference_card(site):
    text = page_text(site, PAGE)
    d, f = 512, 2048
    for shape, count in (("(512, 2048)", d * f), ("(2048,)", f), ("(2048, 512)", f * d), ("(512,)", d)):
        assert f"{shape} {count:,}" in text
    assert "(10, 2048)" in text and "(10, 512)" in text  # hidden layer and output for T = 10


def test_every_section_is_linked(site):
    links = {a.get("href", "").split("#")[0] for a in soup_of(site, PAGE).find("article").find_all("a")}
    for page in chapter_order():
        if page != PAGE:
            assert f"{page}.html" in links, page
