"""The built gated-FFN page shows what ffnbook computes now."""

from __future__ import annotations

from sitecheck import figures, glued_after, number

import ffnbook
from ffnbook import gated

PAGE = "gated-ffn"


def test_t5_counts_on_the_page(site):
    # 2·768·3072 = 3·768·2048: the classic and the gated FFN cost the same.
    expected = f"{2 * 768 * 3072:,}"
    assert expected == f"{3 * 768 * 2048:,}" == "4,718,592"
    assert expected == f"{ffnbook.ffn_param_count(768, 3072, bias=False):,}"
    assert glued_after(site, PAGE, "ReLU FFN with") == "3072"
    assert glued_after(site, PAGE, "GEGLU FFN with") == "2048"
    assert glued_after(site, PAGE, "parameters per layer (the bias-free module holds") == expected
    assert glued_after(site, PAGE, "(module:") == expected
    assert number(glued_after(site, PAGE, "The width ratio is")) == round(2 / 3, 4)


def test_cross_checks_on_the_page(site):
    torch_diff = glued_after(site, PAGE, "NumPy and PyTorch agree to")
    assert number(torch_diff) < 1e-12
    loop = glued_after(site, PAGE, "the whole sequence against one position at a time to")
    assert number(loop) < 1e-12
    assert number(glued_after(site, PAGE, "and every other position")) < 1e-12
    assert number(glued_after(site, PAGE, "moves that position")) > 1e-3


def test_gate_numbers_on_the_page(site):
    params = gated.init_gated_params(768, 2048, seed=0)
    x = ffnbook.random_tokens((2, 6, 768), seed=0)
    sample = gated.hidden_values(x, params, "relu")
    assert glued_after(site, PAGE, "the gate closes") == f"{float((sample.gate == 0).mean()):.1%}"
    assert glued_after(site, PAGE, "completely, and") == f"{float((sample.product < 0).mean()):.1%}"
