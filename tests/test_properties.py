"""The chapter's invariants, on random shapes, sizes and seeds (Hypothesis).

Each property is a claim the chapter makes for every input, checked here on
generated ones instead of the few the pages show: the FFN and the
normalisations that the chapter calls position-wise are position-wise;
parameter formulas add up and match real modules; routing weights sum to one
over the chosen experts; the activations have the limits and the dtype
behaviour their docstrings state. Budgets come from the Hypothesis profile
(conftest.py): a few examples under ``make check``, more under ``make test``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ffnbook import activations, derivatives, feedforward, gated, model_parameters, moe, parameters
from ffnbook import position_independence as pi
from ffnbook.block import layer_norm
from ffnbook.explorables import model_variant
from ffnbook.models import load_models
from ffnbook.normalisation import batch_norm_train, rms_norm

sizes = st.integers(min_value=1, max_value=8)
seeds = st.integers(min_value=0, max_value=2**32 - 1)
ACTIVATION_NAMES = sorted(activations.ACTIVATIONS)


def _close(a, b, scale=1.0) -> bool:
    return bool(np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0) <= 1e-12 * max(1.0, scale))


# --- position independence ---------------------------------------------------------------------


@given(seq_len=sizes, d_model=sizes, d_ff=sizes, seed=seeds, activation=st.sampled_from(ACTIVATION_NAMES))
def test_the_ffn_is_position_wise_for_any_shape(seq_len, d_model, d_ff, seed, activation):
    params = feedforward.init_ffn_params(d_model, d_ff, seed=seed)
    x = pi.random_tokens((seq_len, d_model), seed=seed + 1)
    layer = pi.ffn_layer(params, activation)
    whole = layer(x)
    assert _close(whole, np.concatenate([layer(x[i : i + 1]) for i in range(seq_len)]), np.abs(whole).max())
    batch = pi.random_tokens((2, seq_len, d_model), seed=seed + 2)
    assert pi.reshape_max_diff(layer, batch) <= 1e-12 * max(1.0, float(np.abs(layer(batch)).max()))
    moved = pi.movement_by_position(layer, x, seq_len - 1, seed=seed + 3)
    assert max(moved[:-1], default=0.0) <= 1e-12 * max(1.0, float(np.abs(whole).max()))


@given(seq_len=sizes, d_model=sizes, seed=seeds)
def test_permuting_positions_permutes_the_ffn_output(seq_len, d_model, seed):
    params = feedforward.init_ffn_params(d_model, 2 * d_model, seed=seed)
    x = pi.random_tokens((seq_len, d_model), seed=seed + 1)
    perm = np.random.default_rng(seed).permutation(seq_len)
    layer = pi.ffn_layer(params)
    assert pi.permutation_max_diff(layer, x, perm) <= 1e-12 * max(1.0, float(np.abs(layer(x)).max()))


@given(seq_len=st.integers(2, 6), d_model=st.integers(2, 8), seed=seeds)
def test_layer_and_rms_norm_are_position_wise_and_batch_norm_is_not_guaranteed_to_be(seq_len, d_model, seed):
    x = pi.random_tokens((seq_len, d_model), seed=seed) * 3 + 1
    for norm in (layer_norm, rms_norm):
        rows = np.concatenate([norm(x[i : i + 1]) for i in range(seq_len)])
        assert _close(norm(x), rows, float(np.abs(rows).max()))
    y = layer_norm(x)
    assert np.allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    assert np.all(y.var(axis=-1) <= 1.0 + 1e-12)  # var / (var + eps) < 1
    z = batch_norm_train(x, eps=0.0)
    assert np.allclose(z.mean(axis=0), 0.0, atol=1e-10)  # each feature, over the tokens


@given(d_model=sizes, d_ff=sizes, seed=seeds, activation=st.sampled_from(sorted(gated.GATE_ACTIVATIONS)))
def test_the_gated_ffn_is_position_wise(d_model, d_ff, seed, activation):
    params = gated.init_gated_params(d_model, d_ff, seed=seed)
    x = pi.random_tokens((4, d_model), seed=seed + 1)
    layer = gated.gated_layer(params, activation)
    whole = layer(x)
    assert _close(whole, np.concatenate([layer(x[i : i + 1]) for i in range(4)]), float(np.abs(whole).max()))


# --- parameter counts ------------------------------------------------------------------------------


@given(d_model=st.integers(1, 4096), d_ff=st.integers(1, 16384), bias=st.booleans())
def test_ffn_counts_follow_the_matrices_and_the_two_thirds_rule(d_model, d_ff, bias):
    assert parameters.ffn_param_count(d_model, d_ff, bias) == 2 * d_model * d_ff + (d_ff + d_model if bias else 0)
    assert 2 * parameters.gated_ffn_param_count(d_model, d_ff) == 3 * parameters.ffn_param_count(d_model, d_ff, False)
    assert math.isclose(parameters.equal_parameter_width(d_ff) * 3, 2 * d_ff)


@given(d_model=st.integers(1, 64), d_ff=st.integers(1, 64), bias=st.booleans())
def test_ffn_counts_equal_the_torch_modules(d_model, d_ff, bias):
    pytest.importorskip("torch")
    from ffnbook.gated_torch import meta_classic_ffn, meta_gated_ffn

    count = parameters.count_module_parameters
    assert count(meta_classic_ffn(d_model, d_ff, bias=bias)) == parameters.ffn_param_count(d_model, d_ff, bias)
    assert count(meta_gated_ffn(d_model, d_ff)) == parameters.gated_ffn_param_count(d_model, d_ff)


@given(n_heads=st.integers(1, 16), head=st.integers(1, 16), group=st.integers(1, 4))
def test_attention_counts_split_into_q_k_v_o(n_heads, head, group):
    d_model = n_heads * head * group
    heads = n_heads * group
    full = parameters.attention_param_count(d_model, heads)
    assert full == 4 * d_model * d_model  # whatever the number of heads
    gqa = parameters.attention_param_count(d_model, heads, n_kv_heads=n_heads)
    assert gqa == 2 * d_model * d_model + 2 * d_model * n_heads * (d_model // heads)


MOE_MODELS = [m.name for m in load_models() if m.is_moe]
BREAKDOWN_MODELS = [m.name for m in load_models() if m.d_head is not None]


@given(name=st.sampled_from(BREAKDOWN_MODELS), vocab=st.integers(1, 300_000), scale=st.integers(1, 4))
def test_a_breakdown_adds_up_for_any_variant(name, vocab, scale):
    base = model_variant(name)
    variant = model_variant(name, vocab_size=vocab, d_model=base.n_heads * 8 * scale)
    b = model_parameters.parameter_breakdown(variant)
    assert b.total == b.embeddings + b.attention + b.ffn + b.router + b.norms + b.other
    assert b.total_active == b.total - b.ffn + b.ffn_active
    assert 0 < b.ffn_active <= b.ffn and 0 < b.ffn_share < 1


@given(name=st.sampled_from(MOE_MODELS), n_experts=st.integers(1, 64), data=st.data())
def test_moe_counts_add_up_for_any_mixture(name, n_experts, data):
    top_k = data.draw(st.integers(1, n_experts))
    variant = model_variant(name, n_experts=n_experts, experts_per_token=top_k)
    b = model_parameters.parameter_breakdown(variant)
    expert = model_parameters.model_ffn_param_count(variant, variant.d_ff)
    dense = variant.n_dense_layers * model_parameters.model_ffn_param_count(variant)
    per_layer = variant.n_experts + variant.n_shared_experts
    assert b.ffn == dense + variant.n_moe_layers * per_layer * expert
    assert b.ffn_active == dense + variant.n_moe_layers * (top_k + variant.n_shared_experts) * expert
    c = moe.moe_param_counts(variant.d_model, variant.d_ff, n_experts, top_k, bias=False)
    assert c["stored"] == c["router"] + n_experts * c["expert"]


# --- routing ---------------------------------------------------------------------------------------


@given(n_tokens=st.integers(1, 12), n_experts=st.integers(1, 8), seed=seeds, data=st.data())
def test_routing_weights_sum_to_one_over_the_top_k(n_tokens, n_experts, seed, data):
    top_k = data.draw(st.integers(1, n_experts), label="top_k")
    logits = np.random.default_rng(seed).standard_normal((n_tokens, n_experts)) * data.draw(
        st.sampled_from([1e-3, 1.0, 30.0]), label="scale"
    )
    r = moe.route_logits(logits, top_k)
    assert np.allclose(r.weights.sum(axis=-1), 1.0, atol=1e-12)
    assert np.all(r.weights > 0)
    assert all(len(set(row)) == top_k for row in r.experts.tolist())  # distinct experts
    chosen = np.take_along_axis(logits, r.experts, axis=-1)
    worst_chosen = chosen.min(axis=-1)
    for t in range(n_tokens):  # no expert left out scores higher than one chosen
        left_out = np.delete(logits[t], r.experts[t])
        assert left_out.size == 0 or left_out.max() <= worst_chosen[t]
    load = moe.expert_load(r, n_experts)
    assert sum(load) == n_tokens * top_k


@given(n_tokens=st.integers(1, 12), n_experts=st.integers(1, 6), factor=st.floats(0.1, 3.0), seed=seeds, data=st.data())
def test_capacity_is_never_exceeded(n_tokens, n_experts, factor, seed, data):
    top_k = data.draw(st.integers(1, n_experts))
    r = moe.route_logits(np.random.default_rng(seed).standard_normal((n_tokens, n_experts)), top_k)
    capacity = moe.expert_capacity(n_tokens, n_experts, factor, top_k)
    d = moe.apply_capacity(r, n_experts, capacity)
    kept = np.bincount(r.experts[d.kept], minlength=n_experts)
    assert kept.max(initial=0) <= capacity
    assert d.dropped_slots == d.n_slots - int(d.kept.sum())


# --- activations ---------------------------------------------------------------------------------------


@given(values=st.lists(st.integers(-50, 50), min_size=1, max_size=20), name=st.sampled_from(ACTIVATION_NAMES))
def test_integer_input_gives_the_float_result(values, name):
    f = activations.get_activation(name)
    ints = np.array(values)
    assert np.array_equal(f(ints), f(ints.astype(np.float64)))
    assert np.array_equal(derivatives.get_derivative(name)(ints), derivatives.get_derivative(name)(ints.astype(float)))


@pytest.mark.parametrize("name", ACTIVATION_NAMES)
def test_activations_and_slopes_reach_their_limits_at_infinity(name):
    f, df = activations.get_activation(name), derivatives.get_derivative(name)
    x = np.array([-np.inf, np.inf, np.nan])
    y, dy = f(x), df(x)
    assert y[0] == (-np.inf if name == "identity" else 0.0) and y[1] == np.inf
    assert dy[0] == (1.0 if name == "identity" else 0.0) and dy[1] == 1.0
    assert np.isnan(y[2]) and (name in ("relu", "identity") or np.isnan(dy[2]))


@given(x=st.floats(-1e300, 1e300), name=st.sampled_from(ACTIVATION_NAMES))
def test_activations_are_finite_for_finite_input(x, name):
    assert np.isfinite(activations.get_activation(name)(np.array([x]))).all()
    assert np.isfinite(derivatives.get_derivative(name)(np.array([x]))).all()
