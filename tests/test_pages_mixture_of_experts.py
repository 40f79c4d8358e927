"""The numbers on the built Mixture-of-experts page equal a fresh recomputation."""

from __future__ import annotations

from sitecheck import figures, glued_after, number

from ffnbook import model_parameters, models, moe

PAGE = "mixture-of-experts"


def test_toy_layer_numbers(site):
    counts = moe.moe_param_counts(64, 256, 8, 2)
    assert counts["stored"] == moe.count_stored_parameters(moe.init_moe_params(64, 256, 8, seed=0))
    assert glued_after(site, PAGE, "The toy layer stores") == f"{counts['stored']:,}"
    assert glued_after(site, PAGE, "parameters and uses") == f"{counts['active']:,}"
    assert number(glued_after(site, PAGE, "The one-expert layer and the plain FFN differ by")) < 1e-12
    assert number(glued_after(site, PAGE, "Each token’s weights add up to one within")) < 1e-12


def test_routing_is_local_on_the_page(site):
    assert number(glued_after(site, PAGE, "every other output by at most")) < 1e-12
    assert glued_after(site, PAGE, "the number of other tokens sent to different experts is") == "0"
    assert number(glued_after(site, PAGE, "Replacing one token moves its own output by up to")) > 1e-3


def breakdown(name):
    return model_parameters.parameter_breakdown(models.get_model(name))


def test_real_model_counts(site):
    mixtral, deepseek = breakdown("Mixtral 8x7B"), breakdown("DeepSeek-V3")
    assert glued_after(site, PAGE, "Counting its weights gives") == f"{mixtral.total / 1e9:.2f}"
    assert glued_after(site, PAGE, "billion stored and") == f"{mixtral.total_active / 1e9:.2f}"
    assert glued_after(site, PAGE, "We count") == f"{deepseek.total / 1e9:.2f}"
    # The reported sizes (Mixtral paper: 47B / 13B; DeepSeek-V3 README: 671B / 37B).
    assert glued_after(site, PAGE, "The paper reports") == "47"
    assert round(number(glued_after(site, PAGE, "Counting its weights gives"))) == 47
    assert round(number(glued_after(site, PAGE, "billion stored and"))) == 13
    assert round(deepseek.total / 1e9) == 671
    assert glued_after(site, PAGE, "report and repository give") == "671"
    # The page says our DeepSeek-V3 active count is above the reported figure.
    assert deepseek.total_active / 1e9 > 37


def test_figures_have_alt_text(site):
    imgs = figures(site, PAGE)
    assert imgs, "the page shows no figure"
    assert all(img.get("alt", "").strip() for img in imgs)
