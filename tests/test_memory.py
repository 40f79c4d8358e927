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
        (lambda m: memory.build_memory_ffn(m.keys.astype(str), m.values), TypeError, "float32 or float64"),
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


# --- linear associative memories: the same pairs in one matrix -------------------------------


def direct_recall(outputs, values):
    """Fraction of rows whose output has its largest cosine with its own value, by a plain loop."""
    hits = 0
    for i, out in enumerate(outputs):
        norm = np.linalg.norm(out)
        if norm == 0:
            continue
        cosines = [float(out @ v) / (norm * np.linalg.norm(v)) for v in values]
        hits += int(np.argmax(cosines) == i)
    return hits / len(outputs)


@pytest.mark.parametrize("n_memories", [16, 64, 200])  # fewer, as many and more pairs than dimensions
def test_least_squares_memory_equals_numpy_lstsq(n_memories):
    keys, values = memory.random_memories(n_memories, 64, seed=n_memories)
    expected, *_ = np.linalg.lstsq(keys, values, rcond=None)
    np.testing.assert_allclose(memory.least_squares_memory(keys, values), expected, rtol=0, atol=1e-10)


def test_least_squares_memory_for_noise_solves_the_augmented_least_squares_problem():
    # E‖(k + ε)W − v‖² = ‖kW − v‖² + noise²/d ‖W‖², so the fit is ordinary least squares on the
    # keys stacked over sqrt(n·noise²/d)·I with zero targets: an independent route to the same W.
    n, d, noise = 96, 32, 1.5
    keys, values = memory.random_memories(n, d, seed=3)
    stacked_keys = np.vstack([keys, np.sqrt(n * noise**2 / d) * np.eye(d)])
    stacked_values = np.vstack([values, np.zeros((d, d))])
    expected, *_ = np.linalg.lstsq(stacked_keys, stacked_values, rcond=None)
    np.testing.assert_allclose(memory.least_squares_memory(keys, values, noise=noise), expected, atol=1e-10)


def test_least_squares_memory_for_noise_has_the_least_expected_error_on_noisy_keys():
    # Monte Carlo over many noise draws: the noise-fitted map beats the exact fit, and small
    # perturbations of it do no better.
    n, d, noise = 48, 16, 1.0
    keys, values = memory.random_memories(n, d, seed=5)
    fitted = memory.least_squares_memory(keys, values, noise=noise)
    exact = memory.least_squares_memory(keys, values)

    def mean_error(W):
        return np.mean([np.sum((memory.noisy_queries(keys, noise, seed=s) @ W - values) ** 2) for s in range(400)])

    bump = np.random.default_rng(0).standard_normal((d, d)) * 0.05
    assert mean_error(fitted) < mean_error(exact)
    assert mean_error(fitted) < mean_error(fitted + bump) and mean_error(fitted) < mean_error(fitted - bump)


def test_correlation_memory_is_the_sum_of_outer_products_and_its_recall_matches_a_direct_computation():
    keys, values = memory.random_memories(300, 64, seed=2)
    W = memory.correlation_memory(keys, values)
    np.testing.assert_allclose(W, sum(np.outer(k, v) for k, v in zip(keys, values)), atol=1e-12)
    for noise in (0.0, 1.0):
        queries = memory.noisy_queries(keys, noise, seed=7)
        # The output for a query is Σ_i (query · k_i) v_i, computed pair by pair.
        outputs = np.array([sum(float(q @ k) * v for k, v in zip(keys, values)) for q in queries])
        assert memory.linear_recall(W, keys, values, noise, seed=7) == direct_recall(outputs, values)


def test_linear_maps_recall_most_but_store_few_pairs_exactly():
    keys, values = memory.random_memories(512, 128, seed=0)
    W = memory.least_squares_memory(keys, values)
    assert 0.95 < memory.linear_recall(W, keys, values, 0.0) < 1.0
    # Exactly stored would mean KW = V; for 512 random pairs in 128 dimensions the least-squares residual
    # of a unit value has length about sqrt(1 - 128/512) on average.
    residual = np.linalg.norm(keys @ W - values, axis=1)
    assert residual.mean() == pytest.approx(np.sqrt(1 - 128 / 512), abs=0.05) and residual.min() > 0.5


def test_recall_comparison_matches_the_grid_and_direct_recomputation():
    d, ratios, levels, seeds = 32, [1, 4], [0.0, 1.0], [0, 3]
    c = memory.recall_comparison(d, ratios, levels, seeds=seeds)
    assert c.n_memories == (32, 128) and c.noise_levels == (0.0, 1.0) and c.seeds == (0, 3)
    grid = memory.accuracy_grid(d, ratios, levels)  # seed 0
    for i, row in enumerate(grid):
        assert list(c.recall["FFN memory"][i, :, 0]) == row["accuracy"]
    for i, n in enumerate(c.n_memories):
        for k, seed in enumerate(seeds):
            keys, values = memory.random_memories(n, d, seed=seed)
            for j, noise in enumerate(levels):
                queries = memory.noisy_queries(keys, noise, seed=seed + 1)
                exact, *_ = np.linalg.lstsq(keys, values, rcond=None)
                assert c.recall["least squares"][i, j, k] == direct_recall(queries @ exact, values)
                assert c.recall["correlation"][i, j, k] == direct_recall(queries @ keys.T @ values, values)
    assert np.array_equal(c.mean("correlation"), c.recall["correlation"].mean(axis=-1))
    assert np.all(c.low("least squares") <= c.mean("least squares"))
    assert np.all(c.mean("least squares") <= c.high("least squares"))


# --- ROME's covariance-weighted edit -----------------------------------------------------------


def constrained_least_squares_edit(hidden_inputs, h_star, residual):
    """The change to W2 that minimises Σ_j ‖h_j ΔW‖² subject to h* ΔW = residual, from the KKT system.

    Each output column c separately: minimise wᵀCw subject to h*·w = r_c, i.e. solve
    [[2C, h*], [h*ᵀ, 0]] [w; λ] = [0; r_c]. Independent of the SVD route in covariance_edit.
    """
    d_ff = h_star.size
    C = hidden_inputs.T @ hidden_inputs
    kkt = np.block([[2 * C, h_star[:, None]], [h_star[None, :], np.zeros((1, 1))]])
    rhs = np.vstack([np.zeros((d_ff, residual.size)), residual[None, :]])
    return np.linalg.solve(kkt, rhs)[:d_ff]


@pytest.mark.parametrize("threshold, seed", [(0.05, 0), (0.05, 1), (0.1, 2), (0.02, 3)])
def test_covariance_edit_stores_the_value_and_leaves_every_other_stored_key_unchanged(threshold, seed):
    mem = memory.random_memories(64, 128, seed=seed)
    new_value = memory.random_memories(1, 128, seed=100 + seed).values[0]
    params = memory.build_memory_ffn(*mem, threshold=threshold)
    before = memory.retrieve(params, mem.keys).output
    for slot in (0, 17, 63):
        edited = memory.covariance_edit(params, mem.keys[slot], new_value, mem.keys)
        after = memory.retrieve(edited, mem.keys).output
        np.testing.assert_allclose(after[slot], new_value, rtol=0, atol=1e-8)
        np.testing.assert_allclose(np.delete(after, slot, 0), np.delete(before, slot, 0), rtol=0, atol=1e-8)
        assert np.linalg.matrix_rank(edited.W2 - params.W2) == 1
        assert np.array_equal(edited.W1, params.W1) and np.array_equal(edited.b2, params.b2)


def test_covariance_edit_equals_the_constrained_least_squares_solution():
    mem = memory.random_memories(32, 48, seed=4)
    params = memory.build_memory_ffn(*mem, threshold=0.05)
    new_value = mem.values[9]
    # Statistics from more inputs than hidden units: C is invertible and the edit is the KKT optimum.
    extra = memory.random_memories(40, 48, seed=9).keys
    inputs = np.vstack([mem.keys, extra])
    hidden = np.maximum(inputs @ params.W1 + params.b1, 0)
    h_star = np.maximum(mem.keys[5] @ params.W1 + params.b1, 0)
    residual = new_value - ffnbook.ffn(mem.keys[5], *params, activation="relu")
    expected = constrained_least_squares_edit(hidden, h_star, residual)
    edited = memory.covariance_edit(params, mem.keys[5], new_value, inputs)
    np.testing.assert_allclose(edited.W2 - params.W2, expected, rtol=1e-8, atol=1e-10)


def test_covariance_edit_with_identity_statistics_is_the_minimum_norm_edit():
    # Threshold 0.5: each stored key fires its own unit only, with activation 1, so H = I and C = I.
    mem = memory.random_memories(16, 64, seed=0)
    params = memory.build_memory_ffn(*mem, threshold=0.5)
    hidden = memory.retrieve(params, mem.keys).hidden
    np.testing.assert_allclose(hidden, np.eye(16), atol=1e-12)
    a = memory.covariance_edit(params, mem.keys[3], mem.values[8], mem.keys)
    b = memory.rank_one_edit(params, mem.keys[3], mem.values[8])
    np.testing.assert_allclose(a.W2, b.W2, atol=1e-12)


def test_covariance_edit_refuses_a_key_outside_the_span_of_its_statistics():
    mem = memory.random_memories(16, 64, seed=0)
    params = memory.build_memory_ffn(*mem, threshold=0.5)  # key 3 fires unit 3 only
    with pytest.raises(ValueError, match="not in the span"):
        memory.covariance_edit(params, mem.keys[3], mem.values[8], np.delete(mem.keys, 3, axis=0))


def test_edit_spill_with_the_covariance_method():
    mem = memory.random_memories(64, 128, seed=0)
    new_value = memory.random_memories(1, 128, seed=99).values[0]
    minimum = memory.edit_spill(mem, 7, new_value, threshold=0.05)
    rome = memory.edit_spill(mem, 7, new_value, threshold=0.05, method="covariance")
    assert minimum.method == "minimum norm" and rome.method == "covariance"
    assert max(rome.other_changes) < 1e-12 < 0.1 < max(minimum.other_changes)
    assert rome.edited_error < 1e-12 and rome.other_still_recalled == 1.0
    # Statistics from half the keys: the other half moves.
    half = memory.edit_spill(mem, 7, new_value, threshold=0.05, method="covariance", statistics=mem.keys[:32])
    assert max(half.other_changes[:31]) < 1e-12 and max(half.other_changes[31:]) > 0.01


def test_statistics_spill_against_an_independent_recomputation():
    mem = memory.random_memories(16, 32, seed=1)
    new_value = mem.values[4]
    threshold, slot, sizes = 0.05, 2, [4, 16, 17, 40]
    rows = memory.statistics_spill(mem, slot, new_value, sizes, threshold=threshold, seed=3, n_unseen=20)
    params = memory.build_memory_ffn(*mem, threshold=threshold)
    extra = np.random.default_rng([3, 1]).standard_normal((40 - 16 + 20, 32))
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    extra, unseen = extra[:-20], extra[-20:]

    def hidden(x):
        return np.maximum(x @ params.W1 + params.b1, 0)

    h_star = hidden(mem.keys[slot])
    residual = new_value - ffnbook.ffn(mem.keys[slot], *params, activation="relu")
    order = [slot] + [i for i in range(16) if i != slot]
    for row, m in zip(rows, sizes):
        covered = mem.keys[order[:m]] if m <= 16 else np.vstack([mem.keys[order], extra[: m - 16]])
        delta = np.linalg.pinv(hidden(covered).T @ hidden(covered)) @ h_star
        delta = np.outer(delta, residual) / (delta @ h_star)
        change = lambda x: np.linalg.norm(hidden(x) @ delta, axis=1)  # noqa: E731
        assert row.n_inputs == m
        assert row.covered_change == pytest.approx(change(covered[1:]).max(), abs=1e-9)
        assert row.unseen_change == pytest.approx(change(unseen).max(), rel=1e-9)
        if m < 16:
            assert row.outside_change == pytest.approx(change(mem.keys[order[m:]]).max(), rel=1e-9)
        else:
            assert np.isnan(row.outside_change)
        # forced: h* is a combination of the other covered activations (least-squares residual zero).
        coefficients, *_ = np.linalg.lstsq(hidden(covered[1:]).T, h_star, rcond=None)
        in_span = np.linalg.norm(hidden(covered[1:]).T @ coefficients - h_star) < 1e-9
        assert row.forced == in_span == (m > 16)
    assert rows[0].covered_change < 1e-12 and rows[2].covered_change > 1e-6


def test_spill_figures_describe_their_values():
    mem = memory.random_memories(32, 64, seed=0)
    new_value = mem.values[1]
    spills = [memory.edit_spill(mem, 3, new_value, threshold=0.05, method=m) for m in memory.EDIT_METHODS]
    alt = memory.edit_spill_figure(spills, 3).alt
    assert f"largest change {max(spills[0].other_changes):.2g}" in alt and "31 other stored keys" in alt
    rows = memory.statistics_spill(mem, 3, new_value, [8, 32, 64], threshold=0.05)
    alt = memory.statistics_spill_figure(rows, 32, max(spills[0].other_changes)).alt
    assert "(8, 32, 64)" in alt and "d_ff = 32" in alt
    c = memory.recall_comparison(32, [0.5, 1], [0.0, 1.0], seeds=[0])
    alt = memory.recall_comparison_figure(
        memory.recall_comparison(32, [0.5, 1], [0.0], seeds=[0]),
        memory.recall_comparison(32, [1], [0.0, 1.0], seeds=[0]),
    ).alt
    assert "16, 32 pairs in 32 dimensions" in alt and "32 pairs queried with noise of length 0, 1" in alt
    with pytest.raises(ValueError, match="one memory size"):
        memory.recall_comparison_figure(c, c)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: memory.least_squares_memory(*m, noise=-1.0), ValueError, "noise"),
        (lambda m: memory.least_squares_memory(m.keys, m.values[:2]), ValueError, "same shape"),
        (lambda m: memory.correlation_memory(m.keys * 2, m.values), ValueError, "unit length"),
        (lambda m: memory.linear_recall(np.eye(5), *m, 0.0), ValueError, "W must have shape"),
        (lambda m: memory.linear_recall(np.full((8, 8), np.nan), *m, 0.0), ValueError, "W must be finite"),
        (lambda m: memory.recall_comparison(8, [1], [0.0], seeds=[-1]), ValueError, "seed"),
        (lambda m: memory.recall_comparison(8, [1], [-0.5]), ValueError, "noise"),
        (lambda m: memory.recall_comparison(8, [], [0.0]), ValueError, "at least one"),
        (lambda m: memory.recall_comparison(8, [1], [0.0]).mean("ridge"), ValueError, "unknown memory"),
        (
            lambda m: memory.covariance_edit(memory.build_memory_ffn(*m), m.keys[0], m.values[1], m.keys[0]),
            ValueError,
            "inputs must have shape",
        ),
        (
            lambda m: memory.covariance_edit(memory.build_memory_ffn(*m), m.keys[0], m.values[1], np.ones((2, 5))),
            ValueError,
            "inputs must have last axis",
        ),
        (lambda m: memory.edit_spill(m, 0, m.values[1], method="rome"), ValueError, "method must be one of"),
        (lambda m: memory.edit_spill(m, 0, m.values[1], statistics=m.keys), ValueError, "method='covariance'"),
        (
            lambda m: memory.statistics_spill(m, 0, m.values[1], [0]),
            ValueError,
            r"sizes\[0\] must be a positive integer",
        ),
        (lambda m: memory.statistics_spill(m, 9, m.values[1], [4]), ValueError, "slot"),
        (lambda m: memory.statistics_spill(m, 0, m.values[1], [4], seed=-2), ValueError, "seed"),
    ],
)
def test_new_functions_refuse_bad_input_with_a_clear_message(call, error, message):
    mem = memory.random_memories(4, 8, seed=0)
    with pytest.raises(error, match=message):
        call(mem)


def test_retrieve_output_is_exactly_the_ffn_output():
    mem = memory.random_memories(40, 32, seed=6)
    params = memory.build_memory_ffn(*mem, threshold=0.2)
    queries = memory.noisy_queries(mem.keys, 0.7, seed=2)
    assert np.array_equal(memory.retrieve(params, queries).output, ffnbook.ffn(queries, *params, activation="relu"))


@pytest.mark.parametrize("method", memory.EDIT_METHODS)
@pytest.mark.parametrize("threshold", [0.05, 0.5])
def test_largest_spills_match_one_edit_per_slot(method, threshold):
    mem = memory.random_memories(24, 48, seed=8)
    new_value = memory.random_memories(1, 48, seed=11).values[0]
    fast = memory.largest_spills(mem, new_value, threshold=threshold, method=method)
    slow = [
        max(memory.edit_spill(mem, s, new_value, threshold=threshold, method=method).other_changes) for s in range(24)
    ]
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="method must be one of"):
        memory.largest_spills(mem, new_value, method="rome")
