"""Quantising and pruning one matrix product, against arithmetic written out again."""

from __future__ import annotations

import numpy as np
import pytest

from ffnbook import compression as c


def test_quantize_rounds_to_symmetric_levels():
    x = np.array([[0.1, -2.0], [1.0, 0.49]])
    # 8-bit, one scale: max 2.0 over 127 levels.
    scale = 2.0 / 127
    np.testing.assert_allclose(c.quantize(x, 8), np.round(x / scale) * scale)
    # One scale per column: 1.0/127 and 2.0/127.
    per_column = np.stack(
        [np.round(x[:, j] / (np.abs(x[:, j]).max() / 127)) * (np.abs(x[:, j]).max() / 127) for j in range(2)], axis=1
    )
    np.testing.assert_allclose(c.quantize(x, 8, axis=0), per_column)
    assert np.all(c.quantize(np.zeros((2, 2)), 8, axis=0) == 0)


def test_smoothing_is_exact_before_rounding_and_helps_after():
    x = c.outlier_inputs(128, 64, 3, 40.0, seed=2)
    W = np.random.default_rng(3).standard_normal((64, 32))
    s = c.smoothing_scales(x, W)
    np.testing.assert_allclose(s, np.sqrt(np.abs(x).max(axis=0)) / np.sqrt(np.abs(W).max(axis=1)))
    np.testing.assert_allclose((x / s) @ (W * s[:, None]), x @ W, rtol=1e-12, atol=1e-10)
    plain = c.relative_error(c.quantize(x, 8) @ c.quantize(W, 8, axis=0), x @ W)
    assert c.w8a8_error(x, W) == pytest.approx(plain)
    assert c.w8a8_error(x, W, smooth=True) < plain / 2


def test_outliers_sit_where_outlier_features_says():
    x = c.outlier_inputs(512, 32, 2, 100.0, seed=5)
    big = c.outlier_features(32, 2, seed=5)
    norms = np.linalg.norm(x, axis=0)
    assert set(np.argsort(-norms)[:2]) == set(big.tolist())


def test_pruning_keeps_half_by_the_right_score():
    rng = np.random.default_rng(4)
    W, x = rng.standard_normal((8, 3)), rng.standard_normal((5, 8))
    feature_norms = np.linalg.norm(x, axis=0)
    for score, importance in (("magnitude", np.abs(W)), ("wanda", np.abs(W) * feature_norms[:, None])):
        kept = c.prune(W, x, score=score)
        assert kept.kept == 0.5
        for j in range(3):  # per output column: the four largest scores survive
            survivors = set(np.flatnonzero(kept.W[:, j]))
            assert survivors == set(np.argsort(-importance[:, j])[:4])
        pattern = c.prune(W, x, score=score, pattern="2:4").W
        for j in range(3):
            for g in range(2):  # two of every four consecutive weights, the two best
                block = importance[4 * g : 4 * g + 4, j]
                assert set(np.flatnonzero(pattern[4 * g : 4 * g + 4, j])) == set(np.argsort(-block)[:2])


def test_clear_errors():
    with pytest.raises(ValueError, match="bits must be at least 2"):
        c.quantize(np.ones(3), 1)
    with pytest.raises(ValueError, match="W must have 4 rows"):
        c.w8a8_error(np.ones((2, 4)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="multiple of 4 rows"):
        c.prune(np.ones((6, 2)), np.ones((1, 6)), pattern="2:4")
    with pytest.raises(ValueError, match="score"):
        c.prune(np.ones((4, 2)), np.ones((1, 4)), score="random")
