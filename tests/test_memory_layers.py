"""Product-key lookup against scoring every key; the costs against counts made by hand."""

from __future__ import annotations

import numpy as np
import pytest

from ffnbook import memory_layers as ml


@pytest.mark.parametrize("n, d_key, k, seed", [(8, 4, 1, 0), (16, 8, 4, 1), (32, 16, 8, 2), (64, 6, 64, 3)])
def test_product_keys_find_exactly_the_best_keys(n, d_key, k, seed):
    keys = ml.random_product_keys(n, d_key, seed=seed)
    rng = np.random.default_rng(seed + 10)
    for _ in range(5):
        q = rng.standard_normal(d_key)
        fast = ml.product_key_topk(q, keys, k)
        # Every key written out: slot i·n + j is [first_i, second_j].
        full = np.array([np.concatenate([a, b]) for a in keys.first for b in keys.second])
        best = np.argsort(-(full @ q), kind="stable")[:k]
        np.testing.assert_array_equal(fast.slots, best)
        np.testing.assert_allclose(fast.scores, (full @ q)[best], atol=1e-12)
        assert fast.scored == 2 * n and ml.exhaustive_topk(q, keys, k).scored == n * n


def test_ties_go_to_the_lower_slot_in_both():
    keys = ml.ProductKeys(np.zeros((3, 1)), np.zeros((3, 1)))  # every key scores zero
    assert ml.product_key_topk(np.ones(2), keys, 2).slots.tolist() == [0, 1]
    assert ml.exhaustive_topk(np.ones(2), keys, 2).slots.tolist() == [0, 1]


def test_costs_by_hand():
    # n = 4, d_key = 6, d_model = 10, k = 2: values 16·10, sub-keys 2·4·3, query 10·6;
    # FLOPs: query 2·10·6, half-keys 2·(2·4·3), candidates 2², values 2·2·10.
    c = ml.memory_layer_cost(4, 6, 10, 2)
    assert (c.slots, c.parameters) == (16, 16 * 10 + 2 * 4 * 3 + 10 * 6)
    assert c.flops_per_token == 2 * 10 * 6 + 2 * 2 * 4 * 3 + 4 + 2 * 2 * 10
    d = ml.dense_memory_cost(16, 10)
    assert (d.parameters, d.flops_per_token) == (2 * 16 * 10, 2 * 2 * 16 * 10)


def test_clear_errors():
    with pytest.raises(ValueError, match="d_key must be even"):
        ml.random_product_keys(4, 5)
    keys = ml.random_product_keys(4, 6)
    with pytest.raises(ValueError, match=r"query must have shape \(6,\)"):
        ml.product_key_topk(np.ones(4), keys, 2)
    with pytest.raises(ValueError, match="k must be"):
        ml.product_key_topk(np.ones(6), keys, 5)  # more than the 4 sub-keys of a half
    with pytest.raises(TypeError, match="ProductKeys"):
        ml.product_key_topk(np.ones(6), (keys.first, keys.second), 2)
