"""Normalisation layers against PyTorch's, and the position tests on each."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook
from ffnbook import normalisation
from ffnbook.block import layer_norm

torch = pytest.importorskip("torch")


@pytest.fixture
def x():
    return ffnbook.random_tokens((3, 5, 16), seed=6) * 2.0 + 0.5


def test_rms_norm_matches_torch(x):
    module = torch.nn.RMSNorm(16, eps=1e-6, dtype=torch.float64)  # gain initialised to one
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(normalisation.rms_norm(x), expected, rtol=1e-12)


def test_batch_norm_train_matches_torch_batchnorm1d(x):
    module = torch.nn.BatchNorm1d(16, affine=False, dtype=torch.float64).train()
    # BatchNorm1d wants channels first, (batch, features, length); it pools over batch and length.
    with torch.no_grad():
        expected = module(torch.from_numpy(x).transpose(1, 2)).transpose(1, 2).numpy()
    np.testing.assert_allclose(normalisation.batch_norm_train(x), expected, rtol=1e-10, atol=1e-12)


def test_batch_norm_eval_matches_torch_with_the_same_running_statistics(x):
    mean, var = np.linspace(-1, 1, 16), np.linspace(0.5, 2, 16)
    module = torch.nn.BatchNorm1d(16, affine=False, dtype=torch.float64).eval()
    module.running_mean.copy_(torch.from_numpy(mean))
    module.running_var.copy_(torch.from_numpy(var))
    with torch.no_grad():
        expected = module(torch.from_numpy(x).transpose(1, 2)).transpose(1, 2).numpy()
    np.testing.assert_allclose(normalisation.batch_norm_eval(x, mean, var), expected, rtol=1e-12)


def test_per_token_normalisations_pass_every_test_exactly(x):
    for layer in (layer_norm, normalisation.rms_norm):
        assert normalisation.position_tests(layer, x[0], x) == (0.0, 0.0, 0.0)


def test_training_batch_norm_fails_two_tests_and_passes_the_reshape(x):
    tests = normalisation.position_tests(normalisation.batch_norm_train, x[0], x)
    # Alone, a token is its own batch: its variance is zero and its output collapses to 0.
    alone = normalisation.batch_norm_train(x[0][:1])
    assert np.all(alone == 0.0)
    assert tests.one_at_a_time == pytest.approx(np.abs(normalisation.batch_norm_train(x[0])).max())
    assert tests.other_positions_moved > 0.01
    assert tests.reshape == 0.0  # the same tokens pooled either way


def test_position_test_rows_cover_the_four_layers(x):
    rows = normalisation.position_test_rows(x[0], x)
    assert [r["layer"] for r in rows] == [
        "LayerNorm",
        "RMSNorm",
        "BatchNorm, training mode",
        "BatchNorm, inference mode",
    ]
    assert all(type(v) is float for r in rows for k, v in r.items() if k != "layer")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: normalisation.rms_norm(np.float64(1.0)), "at least one axis"),
        (lambda: normalisation.batch_norm_train(np.array([[np.nan]])), "must be finite"),
        (lambda: normalisation.batch_norm_eval(np.ones((2, 3)), np.zeros(2), np.ones(3)), "shape \\(3,\\)"),
        (lambda: normalisation.batch_norm_eval(np.ones((2, 3)), np.zeros(3), -np.ones(3)), "non-negative"),
    ],
)
def test_bad_input_is_refused_clearly(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
