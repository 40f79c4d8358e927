"""The hand-built key–value memory FFN, checked against independent derivations."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ffnbook
from ffnbook import memory


def brute_force_output(keys, values, threshold, x):
    """The memory's output from its definition, one memory at a time, no matrices."""
    out = np.zeros(values.shape[1])
    for k, v in zip(keys, values):
        coefficient = max(0.0, (float(np.dot(k, x)) - threshold) / (1.0 - threshold))
        out += coefficient * v
    return out


def test_keys_are_columns_of_W1_and_values_rows_of_W2():
    keys, values = memory.random_memories(10, 32, seed=1)
    t = 0.3
    p = memory.build_memory_ffn(keys, values, threshold=t)
    assert p.W1.shape == (32, 10) and p.W2.shape == (10, 32)
    for i in range(10):
        np.testing.assert_allclose(p.W1[:, i] * (1 - t), keys[i], rtol=0, atol=1e-15)
        np.testing.assert_array_equal(p.W2[i], values[i])


def test_ffn_output_equals_the_weighted_sum_of_values():
    keys, values = memory.random_memories(20, 16, seed=2)
    t = 0.4
    p = memory.build_memory_ffn(keys, values, threshold=t)
    queries = memory.noisy_queries(keys, 0.8, seed=5)
    got = memory.retrieve(p, queries).output
    for q, row in zip(queries, got):
        np.testing.assert_allclose(row, brute_force_output(keys, values, t, q), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_memories", [16, 64, 128, 512])
def test_exact_retrieval_at_zero_noise_when_keys_overlap_less_than_threshold(n_memories):
    keys, values = memory.random_memories(n_memories, 128, seed=0)
    overlaps = keys @ keys.T
    np.fill_diagonal(overlaps, -np.inf)
    # Precondition derived independently: no other key reaches the threshold.
    assert overlaps.max() < 0.5
    r = memory.retrieve(memory.build_memory_ffn(keys, values, threshold=0.5), keys)
    np.testing.assert_array_equal(r.hidden > 0, np.eye(n_memories, dtype=bool))
    np.testing.assert_allclose(r.output, values, rtol=0, atol=1e-12)
    assert memory.retrieval_accuracy(keys, values, 0.0) == 1.0


def test_orthonormal_keys_retrieve_exactly():
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((24, 24)))
    keys = q.T[:12]  # orthonormal rows: every cross-overlap is zero
    values = np.random.default_rng(1).standard_normal((12, 24))
    out = memory.retrieve(memory.build_memory_ffn(keys, values, threshold=0.9), keys).output
    np.testing.assert_allclose(out, values, rtol=0, atol=1e-12)


def test_single_firing_key_returns_a_multiple_of_its_value():
    mem = memory.random_memories(64, 128, seed=0)
    ex = memory.query_example(mem, 5, 0.7, seed=2)
    assert ex.fired == (5,)
    assert ex.cosine == pytest.approx(1.0, abs=1e-12)
    assert ex.error_over_activation < 1e-12
    # The coefficient is (k·x - t)/(1 - t) from the construction.
    x = memory.noisy_queries(mem.keys[5:6], 0.7, seed=2)[0]
    assert ex.activation == pytest.approx((mem.keys[5] @ x - 0.5) / 0.5, abs=1e-12)


def test_noise_has_the_requested_length():
    keys = memory.random_memories(7, 50, seed=3).keys
    q = memory.noisy_queries(keys, 2.5, seed=9)
    np.testing.assert_allclose(np.linalg.norm(q - keys, axis=1), 2.5, rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracy_does_not_increase_with_noise(seed):
    keys, values = memory.random_memories(128, 64, seed=seed)
    levels = [0.0, 1.0, 2.0, 3.0, 5.0, 8.0]
    acc = [memory.retrieval_accuracy(keys, values, n, seed=seed + 10) for n in levels]
    assert acc[0] == 1.0
    assert all(a >= b for a, b in zip(acc, acc[1:])), acc
    assert acc[-1] < 0.5  # noise eight times the key's length wrecks retrieval


def test_accuracy_grid_rows_match_retrieval_accuracy():
    rows = memory.accuracy_grid(32, [1, 2], [0.0, 3.0], seed=4)
    assert [r["n_memories"] for r in rows] == [32, 64]
    mem = memory.random_memories(64, 32, seed=4)
    assert rows[1]["accuracy"][1] == memory.retrieval_accuracy(*mem, 3.0, seed=5)


def test_decode_counts_silence_as_a_miss():
    keys, values = memory.random_memories(8, 16, seed=0)
    # A threshold of 0.99 and noise of length 1: the match drops below it for (almost) every query.
    acc = memory.retrieval_accuracy(keys, values, 1.0, threshold=0.99, seed=1)
    p = memory.build_memory_ffn(keys, values, threshold=0.99)
    out = memory.retrieve(p, memory.noisy_queries(keys, 1.0, seed=1)).output
    silent = np.linalg.norm(out, axis=1) == 0
    assert silent.any()
    assert acc <= 1 - silent.mean()


def test_figures_have_descriptions():
    mem = memory.random_memories(16, 32, seed=0)
    fig = memory.activation_figure(mem, 3, 1.0)
    assert isinstance(fig, ffnbook.plotting.BookFigure) and fig.description
    assert "<svg" in fig.to_svg()
    grid = memory.accuracy_grid(32, [0.5], [0.0, 1.0])
    assert memory.accuracy_figure(grid, [0.0, 1.0], 32).description


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: memory.build_memory_ffn(m.keys * 3, m.values), ValueError, "unit length"),
        (lambda m: memory.build_memory_ffn(m.keys, m.values[:3]), ValueError, "same shape"),
        (lambda m: memory.build_memory_ffn(m.keys[0], m.values[0]), ValueError, "n_memories, d_model"),
        (lambda m: memory.build_memory_ffn(m.keys, m.values, threshold=1.0), ValueError, "between 0 and 1"),
        (lambda m: memory.build_memory_ffn(m.keys, m.values, threshold="0.5"), TypeError, "threshold"),
        (lambda m: memory.build_memory_ffn(m.keys.astype(int), m.values), TypeError, "float32 or float64"),
        (lambda m: memory.noisy_queries(m.keys, -1.0), ValueError, "non-negative"),
        (lambda m: memory.query_example(m, 99, 0.0), ValueError, "slot"),
        (lambda m: memory.retrieve(memory.build_memory_ffn(*m), np.ones((2, 5))), ValueError, "d_model=8"),
        (lambda m: memory.random_memories(0, 8), ValueError, "n_memories"),
        (lambda m: memory.accuracy_grid(8, [0.01], [0.0]), ValueError, "fewer than one"),
    ],
)
def test_bad_inputs_raise_with_a_clear_message(call, error, message):
    mem = memory.random_memories(4, 8, seed=0)
    with pytest.raises(error, match=message):
        call(mem)


def test_memory_module_does_not_import_torch():
    code = "import sys, ffnbook, ffnbook.memory; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the page's derived numbers, and editing a stored value ----------------------------------


def test_noise_recalled_perfectly_by_hand():
    rows = [{"accuracy": [1.0, 1.0, 1.0, 0.5]}, {"accuracy": [1.0, 1.0, 0.9, 0.1]}]
    assert memory.noise_recalled_perfectly(rows, [0.0, 1.0, 2.0, 3.0]) == 1.0
    with pytest.raises(ValueError, match="first noise level"):
        memory.noise_recalled_perfectly([{"accuracy": [0.9]}], [0.0])
    with pytest.raises(ValueError, match="one accuracy per noise level"):
        memory.noise_recalled_perfectly([{"accuracy": [1.0]}], [0.0, 1.0])


def test_best_other_cosine_is_below_the_right_one():
    mem = memory.random_memories(32, 64, seed=0)
    ex = memory.query_example(mem, 4, 0.0)
    # Exact query: the output is the value itself, so the best other cosine is the largest
    # cosine between value 4 and any other value, computed here directly.
    values = mem.values
    others = np.delete(values, 4, axis=0)
    assert ex.best_other_cosine == pytest.approx(float(np.max(others @ values[4])))
    assert ex.cosine == pytest.approx(1.0)
    assert ex.cosine > ex.best_other_cosine


def test_rank_one_edit_stores_the_new_value_and_is_rank_one():
    mem = memory.random_memories(16, 32, seed=1)
    params = memory.build_memory_ffn(*mem, threshold=0.2)
    new_value = mem.values[0] * 2.0
    edited = memory.rank_one_edit(params, mem.keys[5], new_value)
    assert np.allclose(ffnbook.ffn(mem.keys[5], *edited, activation="relu"), new_value, atol=1e-12)
    assert np.linalg.matrix_rank(edited.W2 - params.W2) == 1
    assert np.array_equal(edited.W1, params.W1) and np.array_equal(edited.b2, params.b2)
    with pytest.raises(ValueError, match="no hidden unit fires"):
        memory.rank_one_edit(params, np.zeros(32), new_value)  # every unit sits below its threshold


def test_edit_spill_is_zero_for_one_unit_per_key_and_grows_when_codes_overlap():
    mem = memory.random_memories(32, 64, seed=2)
    new_value = memory.random_memories(1, 64, seed=3).values[0]
    sparse = memory.edit_spill(mem, 3, new_value, threshold=0.5)
    spread = memory.edit_spill(mem, 3, new_value, threshold=0.05)
    assert sparse.units_per_key == 1.0 and max(sparse.other_changes) == 0.0
    assert spread.units_per_key > 1.0 and max(spread.other_changes) > 0.0
    assert sparse.edited_error < 1e-12 and spread.edited_error < 1e-12
    assert len(sparse.other_changes) == 31


def test_memory_figures_describe_their_values():
    mem = memory.random_memories(64, 128, seed=0)
    fig = memory.activation_figure(mem, 7, 2.0, seed=3)
    ex = memory.query_example(mem, 7, 2.0, seed=3)
    assert f"slot 7 reaches {ex.activation:.2f}" in fig.alt and "64 memory slots" in fig.alt
    grid = memory.accuracy_grid(32, [0.5, 1], [0.0, 1.0])
    acc = memory.accuracy_figure(grid, [0.0, 1.0], 32)
    assert "16, 32 pairs in 32 dimensions" in acc.alt
