"""The numbers on the built Compute page equal a fresh recomputation (timings excepted)."""

from __future__ import annotations

from sitecheck import figures, glued_after, number, page_text

from ffnbook import compute, models

PAGE = "compute"


def test_flop_counts_on_the_page(site):
    ffn = compute.ffn_flops_per_token(768, 3072)
    assert ffn == 4 * 768 * 3072  # the algebra, independently
    assert glued_after(site, PAGE, "the formula gives") == f"{ffn:,}"
    assert glued_after(site, PAGE, "the counter finds") == f"{ffn:,}"
    projections = compute.attention_projection_flops_per_token(768, 12)
    scores = compute.attention_score_flops_per_token(1024, 12, d_model=768)
    assert glued_after(site, PAGE, "Attention’s projections cost") == f"{projections:,}"
    assert glued_after(site, PAGE, "and its scores") == f"{scores:,}"
    ratio = number(glued_after(site, PAGE, "At this length the FFN still does"))
    assert ratio == round(ffn / (projections + scores), 2)


def crossover(name):
    return compute.model_crossover(models.get_model(name))["crossover"]


def test_crossovers_on_the_page(site):
    assert glued_after(site, PAGE, "the FFN dominates up to about") == f"{crossover('GPT-2 small'):,.0f}"
    assert glued_after(site, PAGE, "the same model’s crossover is") == f"{2 * crossover('GPT-2 small'):,.0f}"
    assert glued_after(site, PAGE, "pushes the crossover to") == f"{crossover('GPT-3 175B'):,.0f}"
    assert glued_after(site, PAGE, "LLaMA’s SwiGLU FFN") == f"{crossover('LLaMA-1 7B'):,.0f}"
    assert glued_after(site, PAGE, "Llama-2 70B gets to") == f"{crossover('Llama-2 70B'):,.0f}"
    assert glued_after(site, PAGE, "reaches the same") == f"{crossover('Mixtral 8x7B'):,.0f}"
    assert glued_after(site, PAGE, "bring its crossover down to") == f"{crossover('DeepSeek-V3'):,.0f}"
    # The reference examples (references.md item 9): ≈3k, ≈49k, ≈16.5k and ≈43k tokens.
    assert number(glued_after(site, PAGE, "pushes the crossover to")) == 49152
    assert abs(number(glued_after(site, PAGE, "reaches the same")) - 43000) < 100


def test_crossover_table_on_the_page(site):
    text = page_text(site, PAGE)
    for row in compute.crossover_rows():
        if row["crossover"] is not None:
            assert f"{row['crossover']:,.0f}" in text


def test_flop_model_crossover_of_the_timing(site):
    # The FLOP-model crossover of the timed widths is d_ff; the timings themselves vary.
    shown = glued_after(site, PAGE, "The FLOP model puts the crossover at")
    default_d_ff = compute.time_ffn_vs_attention.__kwdefaults__["d_ff"]
    assert number(shown) == default_d_ff
    assert number(glued_after(site, PAGE, "the curves cross at about")) > 0


def test_figures_have_alt_text(site):
    imgs = figures(site, PAGE)
    assert imgs, "the page shows no figure"
    assert all(img.get("alt", "").strip() for img in imgs)
