"""The whole-model part of the parameter-count page shows what the code computes."""

from __future__ import annotations

import pytest
from sitecheck import figures, glued_after, number

from ffnbook import model_parameters as mp
from ffnbook.models import get_model

PAGE = "parameter-count"


def breakdown(name):
    return mp.parameter_breakdown(get_model(name))


def test_exact_counts(site):
    assert number(glued_after(site, PAGE, "GPT-2 small comes to")) == 124_439_808
    assert number(glued_after(site, PAGE, "BERT-base comes to")) == 109_482_240


def test_block_counts(site):
    # A GPT-2 block: 12·768² weights, 9·768 biases (QKV 3, output 1, FFN 4 + 1)
    # and two LayerNorms of 2·768.
    assert number(glued_after(site, PAGE, "a GPT-2 block holds")) == 12 * 768**2 + 9 * 768 + 4 * 768
    # Mixtral: 4096²·(2 + 2/4) attention + 8 experts of 3·4096·14336 + router 8·4096 + 2 RMSNorms.
    d = 4096
    attention, expert = 2 * d * d + 2 * d * 1024, 3 * d * 14336
    assert number(glued_after(site, PAGE, "a Mixtral block")) == attention + 8 * expert + 8 * d + 2 * d
    assert number(glued_after(site, PAGE, "of which one token uses")) == attention + 2 * expert + 8 * d + 2 * d


def test_reported_sizes(site):
    assert number(glued_after(site, PAGE, "GPT-3 comes to")) == pytest.approx(breakdown("GPT-3 175B").total / 1e9, abs=0.05)
    assert number(glued_after(site, PAGE, "Mixtral 8x7B stores")) == pytest.approx(46.70, abs=0.005)
    assert number(glued_after(site, PAGE, "DeepSeek-V3 stores")) == pytest.approx(
        breakdown("DeepSeek-V3").total / 1e9, abs=0.005
    )


def test_two_thirds_shares(site):
    assert number(glued_after(site, PAGE, "its FFNs hold")) == pytest.approx(2 / 3, abs=5e-4)
    assert number(glued_after(site, PAGE, "so the FFN share is")) == pytest.approx(4 / 7, abs=5e-4)
    t5 = number(glued_after(site, PAGE, "T5-base v1.0 comes to"))
    assert t5 == pytest.approx(breakdown("T5-base v1.0").ffn_share_non_embedding, abs=5e-4)
    gpt2 = number(glued_after(site, PAGE, "Counted against everything, its FFNs hold only"))
    assert gpt2 == pytest.approx(breakdown("GPT-2 small").ffn_share, abs=5e-4)


def test_moe_shares(site):
    mixtral, deepseek = breakdown("Mixtral 8x7B"), breakdown("DeepSeek-V3")
    assert number(glued_after(site, PAGE, "Mixtral’s experts hold")) == pytest.approx(mixtral.ffn_share, abs=5e-4)
    assert number(glued_after(site, PAGE, "the FFNs a token passes through are")) == pytest.approx(
        mixtral.ffn_share_active, abs=5e-4
    )
    assert deepseek.ffn_share > 0.95 > 0.7 > deepseek.ffn_share_active


def test_gqa_block_units(site):
    # GQA with 8 of 32 KV heads: Q and O full, K and V a quarter -> 2.5 d²; SwiGLU at 3.5 d -> 10.5 d².
    assert number(glued_after(site, PAGE, "shrinks a block’s attention to")) == 2.5
    assert number(glued_after(site, PAGE, "widens its FFN to")) == 10.5


def test_figures_have_alt_text(site):
    imgs = figures(site, PAGE)
    assert len(imgs) >= 1 and all(img.get("alt", "").strip() for img in imgs)
