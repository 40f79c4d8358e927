"""The built Summary page: glued numbers equal a recomputation, answers are folded."""

from __future__ import annotations

from sitecheck import glued_after, glued_in, number, page_text, soup_of

import ffnbook
from ffnbook import compute, model_parameters
from ffnbook.models import get_model

PAGE = "summary"




def test_interview_answers_are_folded(site):
    section = soup_of(site, PAGE).find("section", id="interview-follow-up-questions")
    boxes = section.find_all("details", class_="sd-dropdown")
    assert len(boxes) >= 5
    assert all(not box.has_attr("open") for box in boxes)
    assert all(box.find("summary").get_text(strip=True).endswith("?") for box in boxes)


def test_tldr_ratio(site):
    shown = glued_after(site, PAGE, "it holds about")
    # 2·512·2048 + 2048 + 512 over 4·512², written out.
    assert shown == f"{(2 * 512 * 2048 + 2048 + 512) / (4 * 512**2):.1f}" == "2.0"


def test_parameter_shares_of_real_models(site):
    shown = glued_in(site, PAGE, "common-mistakes-don-t-say-this")
    names = ("GPT-2 small", "GPT-3 175B", "Mistral 7B", "Mixtral 8x7B")
    shares = [model_parameters.parameter_breakdown(get_model(n)).ffn_share for n in names]
    assert shown == [f"{s:.1%}" for s in shares]
    # The point of the bullet: the share is nowhere near one fixed two-thirds.
    values = [number(s) for s in shown]
    assert min(values) < 0.5 < 0.9 < max(values)
    # GPT-2 small independently: 12 blocks of 2·768·3072 + 3072 + 768 FFN parameters in a model
    # of 124,439,808 (the project's recount of the released checkpoint, models_notes.md).
    assert shown[0] == f"{12 * (2 * 768 * 3072 + 3072 + 768) / 124_439_808:.1%}"


def test_moe_facts_come_from_the_model_sheet(site):
    shown = glued_in(site, PAGE, "where-you-meet-the-ffn-in-practice")
    mixtral, deepseek = get_model("Mixtral 8x7B"), get_model("DeepSeek-V3")
    active = model_parameters.parameter_breakdown(mixtral).ffn_share_active
    assert shown == [str(mixtral.n_experts), str(mixtral.experts_per_token), f"{active:.1%}",
                     str(deepseek.n_experts), str(deepseek.n_shared_experts),
                     str(deepseek.n_moe_layers), str(deepseek.n_layers),
                     str(deepseek.experts_per_token)]
    assert shown[:2] == ["8", "2"]  # Mixtral: 8 experts, top-2 (Jiang et al., 2024)


def test_reference_card(site):
    d, f = 512, 2048
    ffn, attn = 2 * d * f + f + d, 4 * d * d
    shown = glued_in(site, PAGE, "reference-card")
    assert shown == [str(d), str(f), f"{ffn:,}", "8", f"{attn:,}", f"{ffn / attn:.3f}",
                     f"{ffn / (ffn + attn):.1%}", f"{4 * d * f:,}"]
    assert ffnbook.ffn_param_count(d, f) == ffn
    assert compute.ffn_flops_per_token(d, f) == 4 * d * f
    text = page_text(site, PAGE)
    for shape, count in (("(512, 2048)", d * f), ("(2048,)", f), ("(2048, 512)", f * d), ("(512,)", d)):
        assert f"{shape} {count:,}" in text
    assert "(10, 2048)" in text and "(10, 512)" in text  # hidden layer and output for T = 10


def test_every_section_is_linked(site):
    links = {a.get("href", "").split("#")[0] for a in soup_of(site, PAGE).find("article").find_all("a")}
    for page in ("transformer-block", "anatomy", "width", "position-independence", "activations",
                 "gated-ffn", "parameter-count", "compute", "key-value-memory",
                 "mixture-of-experts", "implementation", "exercises"):
        assert f"{page}.html" in links, page
