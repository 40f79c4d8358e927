"""The numbers on the built Mixture-of-experts page, looked up by glue key, against a fresh recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued

import ffnbook
from ffnbook import model_parameters, models, moe

PAGE = "mixture-of-experts"
D_MODEL, D_FF, N_EXPERTS, TOP_K, BATCH, SEQ_LEN = 64, 256, 8, 2, 4, 64


@pytest.fixture(scope="module")
def toy():
    params = moe.init_moe_params(D_MODEL, D_FF, N_EXPERTS, seed=0)
    x = ffnbook.random_tokens((BATCH, SEQ_LEN, D_MODEL), seed=1)
    _, routing = moe.moe_layer(x, params, top_k=TOP_K, activation="gelu")
    return params, x, routing


def test_why_the_ffn(site):
    assert glued(site, PAGE, "moe_classic_block_share") == pytest.approx(8 / 12)  # 8 d² against 4 d²


def test_toy_layer_numbers(site):
    counts = moe.moe_param_counts(D_MODEL, D_FF, N_EXPERTS, TOP_K)
    # router 64·8 plus 8 experts of 2·64·256 + 256 + 64.
    assert glued(site, PAGE, "moe_toy_stored") == 64 * 8 + 8 * (2 * 64 * 256 + 320) == counts["stored"]
    assert glued(site, PAGE, "moe_toy_active") == 64 * 8 + 2 * (2 * 64 * 256 + 320)
    assert glued(site, PAGE, "moe_n_tokens") == BATCH * SEQ_LEN
    assert glued(site, PAGE, "moe_single_diff") < 1e-12
    assert glued(site, PAGE, "moe_weight_sum_error") < 1e-12


def test_routing_is_local_on_the_page(site):
    assert glued(site, PAGE, "moe_others") < 1e-12
    assert glued(site, PAGE, "moe_rerouted") == 0
    assert glued(site, PAGE, "moe_changed") > 1e-3


def test_load_and_capacity(site, toy):
    _, _, routing = toy
    load = moe.expert_load(routing, N_EXPERTS)
    assert glued(site, PAGE, "moe_balanced") == BATCH * SEQ_LEN * TOP_K / N_EXPERTS
    assert (glued(site, PAGE, "moe_load_min"), glued(site, PAGE, "moe_load_max")) == (min(load), max(load))
    # Switch Eq. 3 with two slots per token: 256·2/8 · 1.0 = 64 slots.
    assert glued(site, PAGE, "moe_cap_slots_one") == 64
    # Dropped at factor 1: every slot beyond 64 at an expert, served first-choice first.
    capacity = 64
    dropped = moe.apply_capacity(routing, N_EXPERTS, capacity)
    assert dropped.dropped_slots >= sum(max(0, c - capacity) for c in load)
    assert glued(site, PAGE, "moe_cap_drop_one") == dropped.dropped_fraction
    assert glued(site, PAGE, "moe_cap_drop_low") > glued(site, PAGE, "moe_cap_drop_one")
    assert glued(site, PAGE, "moe_drop_changed") > 0 and glued(site, PAGE, "moe_drop_rerouted") == 0


def test_balancing_loss_and_bias(site, toy):
    _, _, routing = toy
    shift = np.zeros(N_EXPERTS)
    shift[glued(site, PAGE, "moe_favoured")] = glued(site, PAGE, "moe_shift")
    skewed = routing.logits + shift
    assert glued(site, PAGE, "moe_loss_even") == pytest.approx(moe.switch_balance_loss(routing.logits))
    assert glued(site, PAGE, "moe_loss_skewed") == pytest.approx(moe.switch_balance_loss(skewed))
    assert glued(site, PAGE, "moe_loss_skewed") > glued(site, PAGE, "moe_loss_even") >= 1.0  # 1 is the minimum
    assert glued(site, PAGE, "moe_capacity_skewed") == 80  # 256·2/8 · 1.25
    assert glued(site, PAGE, "moe_favoured_load") > glued(site, PAGE, "moe_capacity_skewed")
    assert glued(site, PAGE, "moe_bias_max_after") <= glued(site, PAGE, "moe_capacity_skewed")
    assert glued(site, PAGE, "moe_dropped_rebalanced") < glued(site, PAGE, "moe_dropped_skewed")
    assert glued(site, PAGE, "moe_bias_favoured") < 0  # the favoured expert's bias is pushed down


def breakdown(name):
    return model_parameters.parameter_breakdown(models.get_model(name))


def test_real_model_counts(site):
    mixtral, deepseek = breakdown("Mixtral 8x7B"), breakdown("DeepSeek-V3")
    assert glued(site, PAGE, "moe_mixtral_stored_b") == pytest.approx(mixtral.total / 1e9)
    assert glued(site, PAGE, "moe_mixtral_active_b") == pytest.approx(mixtral.total_active / 1e9)
    # The reported sizes (Mixtral paper: 47B / 13B; DeepSeek-V3 README: 671B / 37B).
    assert glued(site, PAGE, "moe_mixtral_reported_total") == 47.0
    assert glued(site, PAGE, "moe_mixtral_reported_active") == 13.0
    assert round(glued(site, PAGE, "moe_mixtral_stored_b")) == 47 and round(glued(site, PAGE, "moe_mixtral_active_b")) == 13
    assert glued(site, PAGE, "moe_deepseek_reported_total") == 671.0 == round(deepseek.total / 1e9)
    assert glued(site, PAGE, "moe_deepseek_active_b") > glued(site, PAGE, "moe_deepseek_reported_active") == 37.0
    assert (glued(site, PAGE, "moe_mixtral_experts"), glued(site, PAGE, "moe_mixtral_per_token")) == (8, 2)
    assert (glued(site, PAGE, "moe_deepseek_experts"), glued(site, PAGE, "moe_deepseek_shared")) == (256, 1)
    assert glued(site, PAGE, "moe_mixtral_fraction") > 2 / 8  # the prose: above 2/8


def test_figures_have_alt_text_from_their_values(site, toy):
    _, _, routing = toy
    imgs = figures(site, PAGE)
    assert len(imgs) == 2
    load_alt, balance_alt = (img.get("alt", "") for img in imgs)
    assert ", ".join(map(str, moe.expert_load(routing, N_EXPERTS))) in load_alt
    assert "capacity of 80" in balance_alt
