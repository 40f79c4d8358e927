"""The built width page shows the numbers the code computes."""

from __future__ import annotations

from sitecheck import figures, glued_after, number

from ffnbook import width
from ffnbook.models import get_model

PAGE = "width"


def test_base_transformer_widths(site):
    base = get_model("Transformer base (Vaswani et al.)")
    assert number(glued_after(site, PAGE, "A model width of")) == base.d_model
    assert number(glued_after(site, PAGE, "a hidden width of")) == base.d_ff
    assert number(glued_after(site, PAGE, "the FFN is")) == 4


def test_llama_rounding_steps(site):
    # Meta's rule, written out here: int(8·4096/3) = 10922, rounded up to 256 -> 11008.
    assert number(glued_after(site, PAGE, "Two-thirds of")) == round(8 * 4096 / 3, 2)
    assert number(glued_after(site, PAGE, "truncated to")) == 8 * 4096 // 3
    assert number(glued_after(site, PAGE, "rounding up to a multiple of")) == 256
    d_ff = number(glued_after(site, PAGE, "gives"))
    assert d_ff == width.llama_ffn_width(4096) == get_model("LLaMA-1 7B").d_ff


def test_later_llama_widths(site):
    assert number(glued_after(site, PAGE, "the rule gives Llama-3 8B")) == get_model("Llama-3 8B").d_ff
    assert number(glued_after(site, PAGE, "it gives Llama-2 70B")) == get_model("Llama-2 70B").d_ff
    assert number(glued_after(site, PAGE, "With a multiplier of")) == 1.3


def test_gated_budget_numbers(site):
    # 2·768·3072 = 3·768·2048 = 4,718,592.
    assert number(glued_after(site, PAGE, "units wide both hold")) == 2 * 768 * 3072 == 3 * 768 * 2048


def test_classic_models_all_at_four(site):
    rows = width.width_rows()
    n_classic = sum(not r["gated"] for r in rows)
    assert number(glued_after(site, PAGE, "Of the")) == n_classic


def test_figure_has_alt_text(site):
    imgs = figures(site, PAGE)
    assert imgs and all(img.get("alt", "").strip() for img in imgs)
