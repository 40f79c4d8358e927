"""The numbers on the built Mixture-of-experts page, looked up by glue key, against a fresh recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from hand_counts import MIXTRAL
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
    assert (
        round(glued(site, PAGE, "moe_mixtral_stored_b")) == 47
        and round(glued(site, PAGE, "moe_mixtral_active_b")) == 13
    )
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


def test_decoding_a_batch(site):
    """E·(1 − (1 − k/E)^B) experts per layer; the bytes of a step against the stored bytes."""
    for key, name, (batch, what) in (
        ("mixtral", "Mixtral 8x7B", (4, "experts_small")),
        ("mixtral", "Mixtral 8x7B", (16, "experts_mid")),
        ("deepseek", "DeepSeek-V3", (16, "experts_mid")),
        ("deepseek", "DeepSeek-V3", (256, "experts_large")),
    ):
        m = models.get_model(name)
        E, k = m.n_experts, m.experts_per_token
        assert glued(site, PAGE, f"moe_step_{key}_{what}") == pytest.approx(E * (1 - (1 - k / E) ** batch))
    assert [glued(site, PAGE, f"moe_step_{s}_batch") for s in ("small", "mid", "large")] == [4, 16, 256]

    def of_stored(name, batch):
        m = models.get_model(name)
        counts = model_parameters.parameter_breakdown(m)
        expert = 3 * m.d_model * m.d_ff  # one SwiGLU expert
        routed = m.n_moe_layers * m.n_experts * expert
        rest = counts.total - counts.embeddings - routed + m.vocab_size * m.d_model + batch * m.d_model
        used = m.n_moe_layers * m.n_experts * (1 - (1 - m.experts_per_token / m.n_experts) ** batch) * expert
        return (rest + used) / counts.total, 2 * (rest + used)

    for key, name, batches in (
        ("mixtral", "Mixtral 8x7B", {"one": 1, "mid": 16}),
        ("deepseek", "DeepSeek-V3", {"one": 1, "mid": 16, "large": 256}),
    ):
        for label, batch in batches.items():
            assert glued(site, PAGE, f"moe_step_{key}_of_stored_{label}") == pytest.approx(of_stored(name, batch)[0])
    assert glued(site, PAGE, "moe_step_deepseek_gb_one") == pytest.approx(of_stored("DeepSeek-V3", 1)[1] / 1e9)
    assert glued(site, PAGE, "moe_step_deepseek_gb_large") == pytest.approx(of_stored("DeepSeek-V3", 256)[1] / 1e9)
    assert glued(site, PAGE, "moe_step_deepseek_per_token_large") == pytest.approx(
        of_stored("DeepSeek-V3", 256)[1] / 256 / 1e9
    )


def test_finer_experts(site):
    # DeepSeekMoE §3.1: top-2 of 16 experts, 120 sets; each split 4 ways, top-8 of 64.
    assert [glued(site, PAGE, k) for k in ("moe_fine_experts", "moe_fine_top_k", "moe_fine_m")] == [16, 2, 4]
    assert glued(site, PAGE, "moe_fine_combinations") == 120
    assert glued(site, PAGE, "moe_fine_combinations_split") == 4_426_165_368


def test_expert_choice_on_the_toy_tokens(site, toy):
    params, x, _ = toy
    flat = x.reshape(-1, D_MODEL)
    capacity = 2 * flat.shape[0] // N_EXPERTS  # capacity factor 2 (Zhou et al. 2022)
    assert glued(site, PAGE, "moe_ec_capacity") == capacity

    def choose(batch):
        logits = batch @ params.W_router
        affinity = np.exp(logits - logits.max(axis=1, keepdims=True))
        affinity /= affinity.sum(axis=1, keepdims=True)
        experts = [set() for _ in range(len(batch))]
        for e in range(N_EXPERTS):
            for t in sorted(range(len(batch)), key=lambda t: (-affinity[t, e], t))[:capacity]:
                experts[t].add(e)
        return experts

    before = choose(flat)
    counts = [len(s) for s in before]
    assert (glued(site, PAGE, "moe_ec_min_experts"), glued(site, PAGE, "moe_ec_max_experts")) == (
        min(counts),
        max(counts),
    )
    last = flat.shape[0] - 1
    edited = flat.copy()
    edited[last] = np.random.default_rng(1).standard_normal(D_MODEL) * flat.std()
    after = choose(edited)
    assert glued(site, PAGE, "moe_ec_edited") == last
    assert glued(site, PAGE, "moe_ec_earlier_changed") == sum(a != b for a, b in zip(before[:last], after[:last])) > 0
    assert glued(site, PAGE, "moe_ec_top_k_changed") == 0


def test_router_z_loss_on_the_toy_router(site, toy):
    _, _, routing = toy
    logits = routing.logits.reshape(-1, N_EXPERTS)

    def z(values):
        top = values.max(axis=1)
        return float(np.mean((top + np.log(np.exp(values - top[:, None]).sum(axis=1))) ** 2))

    assert glued(site, PAGE, "moe_z_factor") == 4
    assert glued(site, PAGE, "moe_z_plain") == pytest.approx(z(logits), rel=1e-12)
    assert glued(site, PAGE, "moe_z_scaled") == pytest.approx(z(4 * logits), rel=1e-12)


def test_the_toy_layers_settings_and_its_capacity_sweep(site, toy):
    settings = ("moe_d_model", "moe_d_ff", "moe_n_experts", "moe_top_k", "moe_seq_len")
    assert [glued(site, PAGE, key) for key in settings] == [D_MODEL, D_FF, N_EXPERTS, TOP_K, SEQ_LEN]
    expert = 2 * D_MODEL * D_FF + D_FF + D_MODEL
    assert glued(site, PAGE, "moe_toy_fraction") == pytest.approx(
        (D_MODEL * N_EXPERTS + TOP_K * expert) / (D_MODEL * N_EXPERTS + N_EXPERTS * expert), rel=1e-12
    )
    # Per token: whole sequence against one token at a time, and shuffled positions, agree to
    # rounding; no other token's routing weight moves when one token changes.
    assert glued(site, PAGE, "moe_rows_diff") < 1e-12 and glued(site, PAGE, "moe_perm_diff") < 1e-12
    assert glued(site, PAGE, "moe_weights_moved") < 1e-12
    _, _, routing = toy
    factors = [0.75, 1.0, 1.25, 1.5, 2.0]
    dropped = {
        row["capacity_factor"]: row["dropped_fraction"] for row in moe.dropped_by_capacity(routing, N_EXPERTS, factors)
    }
    assert (glued(site, PAGE, "moe_cap_factor_low"), glued(site, PAGE, "moe_cap_factor_one")) == (0.75, 1.0)
    assert glued(site, PAGE, "moe_cap_no_drop") == min(f for f in factors if dropped[f] == 0)
    assert glued(site, PAGE, "moe_cap_factor_skewed") == 1.25
    assert glued(site, PAGE, "moe_bias_steps") == 200


def test_mixtral_shares_from_a_hand_count(site):
    total, active, ffn, ffn_active, _ = MIXTRAL
    assert glued(site, PAGE, "moe_mixtral_ffn_stored") == pytest.approx(ffn / total, rel=1e-12)
    assert glued(site, PAGE, "moe_mixtral_ffn_active") == pytest.approx(ffn_active / active, rel=1e-12)
    assert glued(site, PAGE, "moe_mixtral_shared") == 0  # arXiv:2401.04088: 8 experts, no shared one


def test_deepseek_v3_against_its_reported_sizes(site):
    # deepseek-ai/DeepSeek-V3 config_671B.json: n_activated_experts 8; arXiv:2412.19437: 671B, 37B.
    assert glued(site, PAGE, "moe_deepseek_per_token") == 8
    stored, active = glued(site, PAGE, "moe_deepseek_stored_b"), glued(site, PAGE, "moe_deepseek_active_b")
    assert stored == pytest.approx(671, rel=0.005) and active == pytest.approx(37, rel=0.03)
    assert glued(site, PAGE, "moe_deepseek_fraction") == pytest.approx(active / stored, rel=1e-12)


def test_the_open_models_of_2025(site):
    # From the sheet (each row's source): Qwen3-235B-A22B 128 experts of 1536, 8 per token; Llama 4
    # 8192-wide experts, Scout 16 in all 48 layers, Maverick 128 in 24 of 48; gpt-oss-120b 4 of 128.
    assert (glued(site, PAGE, "moe_qwen_experts"), glued(site, PAGE, "moe_qwen_per_token")) == (128, 8)
    assert glued(site, PAGE, "moe_qwen_width") == 1536
    assert (glued(site, PAGE, "moe_scout_experts"), glued(site, PAGE, "moe_maverick_experts")) == (16, 128)
    assert (glued(site, PAGE, "moe_maverick_moe_layers"), glued(site, PAGE, "moe_maverick_layers")) == (24, 48)
    assert glued(site, PAGE, "moe_llama4_width") == 8192
    assert (glued(site, PAGE, "moe_oss_experts"), glued(site, PAGE, "moe_oss_per_token")) == (128, 4)
    # Maverick per token, written out: attention 48·(2·5120² + 2·5120·1024), embeddings 2·202048·5120,
    # norms 97·5120, routers 24·128·5120, experts 24·2·3·5120·8192, dense FFNs 24·3·5120·16384.
    d = 5120
    active = (
        48 * (2 * d * d + 2 * d * 1024)
        + 2 * 202048 * d
        + 97 * d
        + 24 * 128 * d
        + 24 * 2 * 3 * d * 8192
        + 24 * 3 * d * 16384
    )
    stored = active + 24 * 127 * 3 * d * 8192
    assert glued(site, PAGE, "moe_maverick_fraction") == pytest.approx(active / stored)
    # gpt-oss-120b: the README's 5.1B active leaves the embedding table (201088 · 2880) out.
    oss = models.get_model("gpt-oss-120b")
    b = model_parameters.parameter_breakdown(oss)
    assert glued(site, PAGE, "moe_oss_active_b") == pytest.approx(b.total_active / 1e9)
    assert glued(site, PAGE, "moe_oss_active_without_table_b") == pytest.approx((b.total_active - 201088 * 2880) / 1e9)
    assert glued(site, PAGE, "moe_oss_reported_active") == 5.1
    assert round(glued(site, PAGE, "moe_oss_active_without_table_b"), 1) == 5.1
