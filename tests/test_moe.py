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
        (lambda p, x: moe.expert_load_figure([], 2), ValueError, "non-empty"),
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
