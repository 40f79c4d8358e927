"""Position signals: the tables, RoPE and ALiBi against their definitions, and the shift experiment."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ffnbook import positional


def test_sinusoidal_table_matches_the_formula_entry_by_entry():
    table = positional.sinusoidal_table(50, 16)
    for pos, i in [(0, 0), (7, 3), (49, 7), (13, 5)]:
        angle = pos / 10000 ** (2 * i / 16)
        assert table[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-15)
        assert table[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-15)


def test_rope_is_a_rotation_of_each_pair():
    t = np.random.default_rng(0).standard_normal((3, 8))
    positions = [0, 5, 11]
    rotated = positional.rope(t, positions, base=100.0)
    np.testing.assert_allclose(rotated[0], t[0], atol=0)  # position zero: no turn
    # Pair i at position p turns by p·base^(-2i/d): check one pair with a 2x2 matrix.
    p, i = 11, 2
    theta = p * 100.0 ** (-2 * i / 8)
    matrix = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    np.testing.assert_allclose(rotated[2, 2 * i : 2 * i + 2], matrix @ t[2, 2 * i : 2 * i + 2], rtol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=-1), np.linalg.norm(t, axis=-1), rtol=1e-13)


def test_rope_scores_depend_only_on_the_distance():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((1, 16)), rng.standard_normal((1, 16))
    for shift in (1, 37, 500):
        near = positional.rope(q, [4])[0] @ positional.rope(k, [1])[0]
        far = positional.rope(q, [4 + shift])[0] @ positional.rope(k, [1 + shift])[0]
        assert far == pytest.approx(near, abs=1e-12)
    assert positional.rope(q, [9])[0] @ positional.rope(k, [1])[0] != pytest.approx(near, abs=1e-6)


def test_alibi_slopes_are_the_papers_geometric_sequence():
    # Press et al. (2021): for 8 heads the slopes are 1/2, 1/4, ..., 1/256.
    assert positional.alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    bias = positional.alibi_bias([3, 4, 5], 8)
    assert bias.shape == (8, 3, 3)
    assert bias[0, 2, 0] == -0.5 * 2 and bias[7, 1, 0] == -(2.0**-8)
    np.testing.assert_array_equal(bias, positional.alibi_bias([103, 104, 105], 8))


def test_causal_attention_without_positions_matches_a_loop():
    from ffnbook import init_attention_params

    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 8))
    params = init_attention_params(8, seed=3)
    got = positional.attention_with_positions(x, params, 2, range(5), "none")
    expected = np.zeros_like(x)
    heads = []
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)
        q, k, v = (x @ w[:, cols] for w in params[:3])
        out = np.zeros((5, 4))
        for i in range(5):
            scores = np.array([q[i] @ k[j] / 2.0 for j in range(i + 1)])
            weights = np.exp(scores - scores.max())
            out[i] = (weights / weights.sum()) @ v[: i + 1]
        heads.append(out)
    expected = np.concatenate(heads, axis=1) @ params.Wo
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.fixture(scope="module")
def model():
    return positional.tiny_model(vocab=20, d_model=32, d_ff=64, n_heads=2, n_positions=64, seed=5)


def test_absolute_positions_move_the_first_ffn_output_and_relative_ones_do_not(model):
    ids = [1, 7, 3, 12]
    for method in ("learned", "sinusoidal"):
        assert positional.shift_experiment(model, ids, range(0, 40, 3), method).max_change > 1e-3
    for method in ("rope", "alibi", "t5", "none"):
        assert positional.shift_experiment(model, ids, range(0, 40, 3), method).max_change < 1e-12


def test_first_ffn_output_is_ffn_of_the_normalised_stream(model):
    """With no positions and one token, attention returns the token's own value vector."""
    from ffnbook import ffn

    out = positional.first_ffn_output(model, [4], 0, "none")
    x = model.token_embeddings[[4]]

    def rms(t):
        return t / np.sqrt(np.mean(t**2, axis=-1, keepdims=True) + 1e-6)

    h = x + rms(x) @ model.attention.Wv @ model.attention.Wo
    np.testing.assert_allclose(out, ffn(rms(h), *model.ffn, activation="gelu"), rtol=1e-12)


def test_shift_figure_description_reports_the_measured_ranges(model):
    results = [positional.shift_experiment(model, [1, 2, 3], range(10), m) for m in ("learned", "rope")]
    text = positional.shift_figure(results).description
    learned = results[0]
    assert f"between {min(learned.feature):.2f} and {max(learned.feature):.2f}" in text
    assert f"flat line at {results[1].feature[0]:.2f}" in text
    assert "positions 0 to 9" in text


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: positional.first_ffn_output(m, [1], 0, "xpos"), ValueError, "unknown position method"),
        (lambda m: positional.first_ffn_output(m, [1], 70, "learned"), ValueError, "beyond the learned table"),
        (lambda m: positional.first_ffn_output(m, [99], 0, "rope"), ValueError, "below the vocabulary size"),
        (lambda m: positional.first_ffn_output(m, [1], -1, "rope"), ValueError, "start must be"),
        (lambda m: positional.rope(np.ones((2, 3)), [0, 1]), ValueError, "even d_head"),
        (lambda m: positional.sinusoidal_table(4, 5), ValueError, "must be even"),
        (lambda m: positional.tiny_model(d_model=12, n_heads=4), ValueError, "even head width"),
        (lambda m: positional.shift_figure([]), ValueError, "at least one"),
    ],
)
def test_bad_input_is_refused_clearly(model, call, error, message):
    with pytest.raises(error, match=message):
        call(model)


# --- T5's relative position bias (Raffel et al. 2020, §2.1) ------------------------------------


def _bucket_by_hand(distance, buckets=32, max_distance=128):
    """The scheme written out for one distance back: 16 exact buckets, then 16 spread
    logarithmically over distances 16 to 128, everything beyond in the last one."""
    import math

    exact = buckets // 2
    if distance < exact:
        return distance
    return min(
        exact + int(math.log(distance / exact) / math.log(max_distance / exact) * (buckets - exact)), buckets - 1
    )


def test_t5_bucket_equals_the_scheme_by_hand_for_every_distance():
    distances = np.arange(0, 400)
    got = positional.t5_relative_bucket(-distances)
    assert got.tolist() == [_bucket_by_hand(int(d)) for d in distances]


def test_t5_buckets_are_exact_near_zero_monotone_and_saturate():
    got = positional.t5_relative_bucket(-np.arange(0, 1000))
    assert got[:16].tolist() == list(range(16))  # one offset per bucket near zero
    assert np.all(np.diff(got) >= 0)  # farther never maps to a nearer bucket
    assert set(got.tolist()) == set(range(32))  # every one of the 32 buckets is used
    assert np.all(got[128:] == 31)  # "beyond which we assign all relative positions to the same embedding"
    # A causal decoder masks later keys; they all fall in bucket 0, which the mask then hides.
    assert np.all(positional.t5_relative_bucket(np.arange(1, 50)) == 0)


def test_t5_bidirectional_buckets_split_by_direction():
    back = positional.t5_relative_bucket(-np.arange(0, 300), bidirectional=True)
    ahead = positional.t5_relative_bucket(np.arange(1, 300), bidirectional=True)
    assert back.max() == 15 and ahead.min() == 16 + 1 and ahead.max() == 31  # offset +1: bucket 16 + 1
    assert back.tolist()[1:] == [b - 16 for b in ahead.tolist()]  # the same scheme, mirrored


def test_t5_bias_depends_on_the_offset_only():
    table = np.random.default_rng(0).standard_normal((2, 32))
    near = positional.t5_bias([3, 4, 5, 9], table)
    far = positional.t5_bias([103, 104, 105, 109], table)
    np.testing.assert_array_equal(near, far)
    assert near[1, 3, 0] == table[1, positional.t5_relative_bucket(-6)]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: positional.t5_relative_bucket([1.5]), TypeError, "offset must hold integers"),
        (lambda: positional.t5_relative_bucket([1], num_buckets=2, bidirectional=True), ValueError, "num_buckets"),
        (lambda: positional.t5_relative_bucket([1], max_distance=8), ValueError, "max_distance"),
        (lambda: positional.t5_relative_bucket([1], bidirectional=1), TypeError, "bidirectional"),
        (lambda: positional.t5_bias([0, 1], np.zeros(32)), ValueError, "table must have shape"),
    ],
)
def test_t5_rejects_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- no positional encoding: the causal mask counts predecessors (Haviv et al. 2022) -----------


def test_predecessor_count_separates_copies_only_with_a_causal_mask(model):
    count = positional.predecessor_experiment(model, first_id=2, repeated_id=9, n_copies=6)
    assert count.causal_outputs.shape == (6, 32)
    assert count.causal_spread > 1e-3 and count.bidirectional_spread < 1e-12
    # Brute force: each copy's causal output equals the FFN output of the prefix ending at that copy,
    # run on its own (the mask means a copy cannot see what follows it).
    for t in range(1, 7):
        prefix = positional.first_ffn_output(model, [2] + [9] * t, 0, "none")
        np.testing.assert_allclose(count.causal_outputs[t - 1], prefix[-1], rtol=1e-10, atol=1e-12)


def test_predecessor_experiment_rejects_bad_input(model):
    with pytest.raises(ValueError, match="n_copies must be at least 2"):
        positional.predecessor_experiment(model, 1, 2, 1)
    with pytest.raises(ValueError, match="must differ"):
        positional.predecessor_experiment(model, 4, 4, 3)
    with pytest.raises(TypeError, match="first_id must be an integer in"):
        positional.predecessor_experiment(model, 1.0, 2, 3)
