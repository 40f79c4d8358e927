"""The MoE layer against a brute-force, token-by-token reference, and its routing properties."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import ffnbook
from ffnbook import moe
from ffnbook.plotting import BookFigure

ROUNDING = 1e-12


@pytest.fixture
def params():
    return moe.init_moe_params(16, 48, 6, seed=5)


@pytest.fixture
def x():
    return ffnbook.random_tokens((3, 9, 16), seed=6)


def brute_force(x, params, top_k, activation="relu"):
    """One token at a time, every expert evaluated, choices made with Python's sorted()."""
    flat = x.reshape(-1, x.shape[-1])
    out = np.zeros_like(flat)
    for t, token in enumerate(flat):
        logits = [float(token @ params.W_router[:, e]) for e in range(params.n_experts)]
        chosen = sorted(range(len(logits)), key=lambda e: (-logits[e], e))[:top_k]
        exps = [math.exp(logits[e] - max(logits[c] for c in chosen)) for e in chosen]
        for e, w in zip(chosen, exps):
            out[t] += w / sum(exps) * ffnbook.ffn(token, *params.experts[e], activation=activation)
    return out.reshape(x.shape)


@pytest.mark.parametrize("top_k", [1, 2, 6])
def test_layer_equals_token_by_token_reference(params, x, top_k):
    y, _ = moe.moe_layer(x, params, top_k=top_k, activation="gelu")
    assert np.abs(y - brute_force(x, params, top_k, "gelu")).max() < ROUNDING


def test_one_expert_top_1_is_a_plain_ffn(x):
    single = moe.init_moe_params(16, 48, 1, seed=2)
    y, routing = moe.moe_layer(x, single, top_k=1)
    assert np.abs(y - ffnbook.ffn(x, *single.experts[0])).max() < ROUNDING
    assert np.all(routing.weights == 1.0)


def test_all_experts_is_a_softmax_mixture(params, x):
    y, _ = moe.moe_layer(x, params, top_k=params.n_experts)
    logits = x @ params.W_router
    gates = np.exp(logits - logits.max(-1, keepdims=True))
    gates /= gates.sum(-1, keepdims=True)
    dense = sum(gates[..., e, None] * ffnbook.ffn(x, *params.experts[e]) for e in range(params.n_experts))
    assert np.abs(y - dense).max() < ROUNDING


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_weights_sum_to_one_and_follow_the_logits(params, x, top_k):
    routing = moe.route(x, params.W_router, top_k)
    assert np.abs(routing.weights.sum(-1) - 1).max() < ROUNDING
    picked = np.take_along_axis(routing.logits, routing.experts, -1)
    assert np.all(np.diff(picked, axis=-1) <= 0)  # highest logit first
    # every unchosen expert scores no higher than the lowest chosen one
    unchosen = routing.logits.copy()
    np.put_along_axis(unchosen, routing.experts, -np.inf, -1)
    assert np.all(unchosen.max(-1) <= picked[..., -1])


def test_routing_of_a_token_ignores_the_other_tokens(params, x):
    before = moe.route(x, params.W_router, 2)
    other = x.copy()
    other[:, 1:] = ffnbook.random_tokens(other[:, 1:].shape, seed=99)  # everything but position 0
    after = moe.route(other, params.W_router, 2)
    assert np.array_equal(before.experts[:, 0], after.experts[:, 0])
    assert np.array_equal(before.weights[:, 0], after.weights[:, 0])
    change = moe.routing_change_one_token(params, x, 4, top_k=2)
    assert change.other_tokens_rerouted == 0 and change.other_weights_moved == 0.0


def test_layer_passes_the_position_independence_experiments(params, x):
    layer = moe.moe_as_layer(params, top_k=2, activation="gelu")
    assert ffnbook.permutation_max_diff(layer, x, [8, 0, 7, 1, 6, 2, 5, 3, 4]) < ROUNDING
    assert ffnbook.batch_vs_rows_max_diff(layer, x[0]) < ROUNDING
    assert ffnbook.reshape_max_diff(layer, x) < ROUNDING
    change = ffnbook.change_one_token(layer, x, 3)
    assert change.other_positions < ROUNDING and change.changed_position > 1e-3


def test_expert_load_counts_every_slot(params, x):
    routing = moe.route(x, params.W_router, 2)
    load = moe.expert_load(routing, params.n_experts)
    counts = Counter(int(e) for e in routing.experts.ravel())
    assert load == [counts.get(e, 0) for e in range(params.n_experts)]
    assert sum(load) == 3 * 9 * 2 and all(type(c) is int for c in load)


def test_stored_and_active_counts(params):
    counts = moe.moe_param_counts(16, 48, 6, 2)
    assert counts["stored"] == moe.count_stored_parameters(params)
    one_expert = 16 * 48 + 48 + 48 * 16 + 16  # W1, b1, W2, b2 written out
    assert counts["active"] == 16 * 6 + 2 * one_expert
    assert counts["active_fraction"] == pytest.approx(counts["active"] / counts["stored"])


def test_stored_count_matches_torch_modules():
    torch = pytest.importorskip("torch")
    with torch.device("meta"):
        layer = torch.nn.ModuleList(
            [torch.nn.Linear(32, 4, bias=False)]
            + [torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Linear(64, 32)) for _ in range(4)]
        )
    assert moe.moe_param_counts(32, 64, 4, 1)["stored"] == sum(p.numel() for p in layer.parameters())


def test_figure(params, x):
    routing = moe.route(x, params.W_router, 2)
    fig = moe.expert_load_figure(moe.expert_load(routing, 6), 2)
    assert isinstance(fig, BookFigure) and "<svg" in fig.to_svg()


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda p, x: moe.moe_layer(x, p, top_k=7), ValueError, "top_k must be at most n_experts=6, got 7"),
        (lambda p, x: moe.moe_layer(x, p, top_k=0), ValueError, "top_k must be a positive integer"),
        (lambda p, x: moe.moe_layer(x[..., :5], p), ValueError, "last axis d_model=16"),
        (lambda p, x: moe.moe_layer(x.astype(np.float32), p), TypeError, "dtype"),
        (lambda p, x: moe.moe_layer(x, (p.W_router, p.experts[:3])), ValueError, "6 columns but 3 experts"),
        (lambda p, x: moe.moe_layer(x, (p.W_router[:8], p.experts)), ValueError, "W_router has 8 rows"),
        (lambda p, x: moe.moe_layer(x, p.W_router), TypeError, "MoEParams"),
        (lambda p, x: moe.route(x, p.W_router[0], 1), ValueError, "W_router must be 2-D"),
        (lambda p, x: moe.expert_load(moe.route(x, p.W_router, 1), 2), ValueError, "n_experts=2"),
        (lambda p, x: moe.expert_load([1, 2], 6), TypeError, "Routing"),
        (lambda p, x: moe.routing_change_one_token(p, x, 9), ValueError, r"position must be an integer in \[0, 9\)"),
        (lambda p, x: moe.moe_param_counts(16, 48, 4, 5), ValueError, "top_k must be at most n_experts=4"),
        (lambda p, x: moe.expert_load_figure([], 2), ValueError, "at least one"),
        (lambda p, x: moe.init_moe_params(16, 48, 0), ValueError, "n_experts must be a positive integer"),
    ],
)
def test_bad_input_is_named(params, x, call, error, message):
    with pytest.raises(error, match=message):
        call(params, x)


# --- capacity, dropped tokens, the balancing loss and bias balancing -------------------------


def test_expert_capacity_by_hand():
    # Switch Transformers Eq. 3: tokens per batch / experts × capacity factor (top-1).
    assert moe.expert_capacity(1024, 8, 1.0) == 128
    assert moe.expert_capacity(1024, 8, 1.25) == 160
    assert moe.expert_capacity(256, 8, 1.25, top_k=2) == 80  # 2 slots per token
    assert moe.expert_capacity(10, 3, 1.0) == 4  # 3.33 rounded up
    with pytest.raises(ValueError, match="capacity_factor"):
        moe.expert_capacity(10, 3, 0.0)


def test_apply_capacity_serves_first_choices_first():
    # Two tokens, top-2 over two experts; capacity 1 per expert.
    routing = moe.Routing(np.array([[0, 1], [1, 0]]), np.full((2, 2), 0.5), np.zeros((2, 2)))
    d = moe.apply_capacity(routing, 2, capacity=1)
    # First choices: token 0 -> expert 0, token 1 -> expert 1; both second choices find full buffers.
    assert d.kept.tolist() == [[True, False], [True, False]]
    assert (d.dropped_slots, d.dropped_tokens, d.dropped_fraction) == (2, 0, 0.5)


def test_apply_capacity_large_enough_drops_nothing(params, tokens):
    _, routing = moe.moe_layer(tokens, params, top_k=2)
    n_slots = routing.experts.size
    assert moe.apply_capacity(routing, params.n_experts, n_slots).dropped_slots == 0
    rows = moe.dropped_by_capacity(routing, params.n_experts, [0.5, 1.0, 4.0])
    # The buffers hold n_experts · capacity slots in all; at least the rest must be dropped.
    assert rows[0]["dropped_fraction"] >= 1 - params.n_experts * rows[0]["capacity"] / n_slots - 1e-12
    assert rows[-1]["dropped_fraction"] == 0.0
    assert [r["dropped_fraction"] for r in rows] == sorted((r["dropped_fraction"] for r in rows), reverse=True)


def test_switch_balance_loss_by_hand():
    # f = (1, 0), P = (p, 1 - p) with p = sigmoid(2): loss = 2 · p.
    logits = np.array([[2.0, 0.0], [2.0, 0.0]])
    p = 1 / (1 + math.exp(-2.0))
    assert moe.switch_balance_loss(logits) == pytest.approx(2 * p)
    assert moe.switch_balance_loss(logits, alpha=1e-2) == pytest.approx(2e-2 * p)
    # Uniform: every token picks a different expert with equal probabilities -> minimum 1.
    assert moe.switch_balance_loss(np.eye(4) * 3.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="finite"):
        moe.switch_balance_loss(np.array([[np.nan, 0.0]]))


def test_selection_bias_changes_choices_not_weights():
    logits = np.array([[2.0, 1.0, 0.0]])
    plain = moe.route_logits(logits, 2)
    biased = moe.route_logits(logits, 2, selection_bias=[0.0, 0.0, 5.0])
    assert plain.experts.tolist() == [[0, 1]] and biased.experts.tolist() == [[2, 0]]
    # Weights: softmax over the *unbiased* logits of the chosen experts (0 and 2).
    e = np.exp([0.0, 2.0])
    assert biased.weights.tolist()[0] == pytest.approx((e / e.sum()).tolist())
    with pytest.raises(ValueError, match="one value per expert"):
        moe.route_logits(logits, 2, selection_bias=[1.0])


def test_route_with_zero_bias_is_route(params, tokens):
    a = moe.route(tokens, params.W_router, 2)
    b = moe.route(tokens, params.W_router, 2, selection_bias=np.zeros(params.n_experts))
    assert np.array_equal(a.experts, b.experts) and np.array_equal(a.weights, b.weights)


def test_bias_balancing_evens_a_skewed_router():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((400, 8))
    logits[:, 3] += 1.0  # expert 3 favoured
    result = moe.bias_balancing(logits, 2, steps=300, speed=0.01)
    assert sum(result.load_before) == sum(result.load_after) == 800
    assert max(result.load_after) < max(result.load_before)
    assert result.bias[3] == min(result.bias)  # the favoured expert is pushed down most
    assert result.max_over_mean[-1] < result.max_over_mean[0]


def test_capacity_drop_change_pushes_another_token_out():
    params = moe.init_moe_params(32, 64, 4, seed=0)
    x = ffnbook.random_tokens((2, 32, 32), seed=1)
    change = moe.capacity_drop_change(params, x, top_k=1, capacity_factor=1.0)
    assert change.other_tokens_rerouted == 0  # routing itself stays per token
    # Without a limit nothing else can change.
    roomy = moe.capacity_drop_change(params, x, top_k=1, capacity_factor=4.0)
    assert roomy.other_tokens_changed == 0
    with pytest.raises(ValueError, match="position"):
        moe.capacity_drop_change(params, x, position=99)


def test_balancing_figure_alt_counts_overflow():
    fig = moe.balancing_figure([10, 2], [6, 6], capacity=7, top_k=1)
    assert "3 slots above capacity" in fig.alt and "0 slots above capacity" in fig.alt


# --- expert-choice routing (Zhou et al. 2022) ---------------------------------------------------


def _expert_choice_by_brute_force(logits, capacity):
    """For every expert, walk the tokens in order of affinity, ties to the lower index."""
    logits = np.asarray(logits, dtype=float)
    chosen = []
    for e in range(logits.shape[1]):
        affinity = [np.exp(row[e]) / np.exp(row).sum() for row in logits]
        order = sorted(range(len(affinity)), key=lambda t: (-affinity[t], t))
        chosen.append(order[:capacity])
    return chosen


def test_expert_choice_equals_brute_force():
    logits = np.random.default_rng(3).standard_normal((40, 6))
    for capacity in (1, 5, 13, 40):
        ec = moe.expert_choice_route(logits, capacity)
        assert ec.tokens.tolist() == _expert_choice_by_brute_force(logits, capacity)
        # Every expert gets exactly `capacity` tokens: balanced by construction.
        assert ec.tokens.shape == (6, capacity)
        assert sum(ec.experts_per_token()) == 6 * capacity
        np.testing.assert_allclose(ec.gates, np.take_along_axis(ec.affinity.T, ec.tokens, axis=1))
        np.testing.assert_allclose(ec.affinity.sum(axis=1), 1.0)


def test_expert_choice_lets_tokens_have_zero_one_or_several_experts():
    logits = np.random.default_rng(4).standard_normal((64, 8))
    counts = moe.expert_choice_route(logits, 8).experts_per_token()  # capacity factor 1
    assert 0 in counts and max(counts) >= 2 and sum(counts) == 64


def test_expert_choice_layer_by_hand(params, tokens):
    x = tokens.reshape(-1, params.d_model)
    y, ec = moe.expert_choice_layer(x, params, capacity=10)
    expected = np.zeros_like(x)
    for e in range(params.n_experts):
        for slot, t in enumerate(ec.tokens[e]):
            expected[t] += ec.gates[e, slot] * ffnbook.ffn(x[t], *params.experts[e])
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-14)


def test_expert_choice_depends_on_the_batch_and_top_k_does_not():
    params = moe.init_moe_params(32, 64, 8, seed=0)
    x = ffnbook.random_tokens((256, 32), seed=1)
    dependence = moe.expert_choice_batch_dependence(params, x, capacity=64)
    assert dependence.edited_position == 255
    assert dependence.others_changed_top_k == 0
    assert dependence.earlier_changed_expert_choice > 0  # a later token moved earlier tokens' experts
    assert dependence.earlier_changed_expert_choice == dependence.others_changed_expert_choice  # last token


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: moe.expert_choice_route(np.zeros((4, 2)), 5), ValueError, "capacity must be at most"),
        (lambda: moe.expert_choice_route(np.zeros((4, 2)), 0), ValueError, "capacity"),
        (lambda: moe.expert_choice_route(np.zeros(4), 1), ValueError, "n_tokens, n_experts"),
        (lambda: moe.expert_choice_route(np.array([[np.nan, 0.0]]), 1), ValueError, "logits must be finite"),
        (lambda: moe.expert_choice_route(np.zeros((4, 2)), 1).experts_of(4), ValueError, "token must be"),
    ],
)
def test_expert_choice_rejects_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- finer experts and the router z-loss ----------------------------------------------------------


def test_routing_combinations_of_deepseekmoe_s_example():
    # DeepSeekMoE §3.1: 16 experts, top-2 gives C(16, 2) = 120; split four ways, C(64, 8) = 4,426,165,368.
    assert moe.routing_combinations(16, 2) == 16 * 15 // 2 == 120
    assert moe.routing_combinations(64, 8) == 4_426_165_368


def test_fine_grained_split_keeps_weights_and_multiplies_choices():
    s = moe.fine_grained_split(64, 256, 16, 2, 4, gated=True)
    assert s["stored"] == s["stored_fine"] == 16 * 3 * 64 * 256
    assert s["active"] == s["active_fine"] == 2 * 3 * 64 * 256
    assert s["combinations_fine"] > s["combinations"]
    with pytest.raises(ValueError, match="m must divide d_ff=256"):
        moe.fine_grained_split(64, 256, 16, 2, 3)


def test_router_z_loss_by_hand():
    logits = np.array([[0.0, np.log(3.0)], [1.0, 1.0]])
    # log(1 + 3) and 1 + log 2, squared and averaged.
    expected = (np.log(4.0) ** 2 + (1 + np.log(2.0)) ** 2) / 2
    assert moe.router_z_loss(logits) == pytest.approx(expected, rel=1e-12)
    # Large logits are penalised even when the softmax and the choice do not change.
    shifted = logits + 10.0
    assert moe.route_logits(shifted, 1).experts.tolist() == moe.route_logits(logits, 1).experts.tolist()
    assert moe.router_z_loss(shifted) > moe.router_z_loss(logits)
    with pytest.raises(ValueError, match="finite"):
        moe.router_z_loss(np.array([[np.inf, 0.0]]))


# --- distinct experts per decoding step ------------------------------------------------------------


def _distinct_by_enumeration(n_experts, top_k, batch_size):
    """Exact expectation by listing every way the batch's tokens can choose their experts."""
    from itertools import combinations, product

    subsets = list(combinations(range(n_experts), top_k))
    total = sum(len(set().union(*choice)) for choice in product(subsets, repeat=batch_size))
    return total / len(subsets) ** batch_size


@pytest.mark.parametrize("n_experts, top_k, batch_size", [(4, 2, 3), (5, 1, 4), (6, 3, 2), (4, 4, 2)])
def test_expected_distinct_experts_by_enumeration(n_experts, top_k, batch_size):
    assert moe.expected_distinct_experts(n_experts, top_k, batch_size) == pytest.approx(
        _distinct_by_enumeration(n_experts, top_k, batch_size), rel=1e-12
    )


@pytest.mark.parametrize("n_experts, top_k, batch_size", [(8, 2, 8), (256, 8, 32), (64, 6, 3)])
def test_expected_distinct_experts_by_monte_carlo(n_experts, top_k, batch_size):
    mean, stderr = moe.simulate_distinct_experts(n_experts, top_k, batch_size, trials=1000, seed=2)
    expected = moe.expected_distinct_experts(n_experts, top_k, batch_size)
    assert abs(mean - expected) < 5 * stderr + 1e-9


def test_distinct_experts_grow_towards_all_of_them():
    values = [moe.expected_distinct_experts(256, 8, b) for b in (1, 4, 16, 64, 256, 1024)]
    assert values[0] == 8 and all(a < b for a, b in zip(values, values[1:])) and values[-1] < 256
    with pytest.raises(ValueError, match="top_k must be at most n_experts=8"):
        moe.expected_distinct_experts(8, 9, 4)
    with pytest.raises(ValueError, match="batch_size"):
        moe.expected_distinct_experts(8, 2, 0)


def test_uneven_routing_uses_fewer_distinct_experts():
    # Σ_e 1 - (1 - p_e)^B with Σ p_e = k is largest at p_e = k/E (concavity): skewed choices use fewer.
    rng = np.random.default_rng(5)
    E, k, B = 8, 2, 6
    for _ in range(20):
        p = rng.dirichlet(np.ones(E)) * k
        if p.max() > 1:
            continue
        assert np.sum(1 - (1 - p) ** B) <= moe.expected_distinct_experts(E, k, B) + 1e-12
