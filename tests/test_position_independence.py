"""The experiments report what the algebra says: zero interaction for the FFN, not for attention."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook

ROUNDING = 1e-12  # float64 rounding of O(1) values summed over O(1e3) terms stays far below this


@pytest.fixture
def layers(small_params):
    ffn = ffnbook.ffn_layer(small_params, "gelu")
    attn = ffnbook.attention_layer(ffnbook.init_attention_params(16, seed=7), n_heads=4)
    return ffn, attn


def test_ffn_passes_every_test(layers, tokens):
    ffn, _ = layers
    assert ffnbook.batch_vs_rows_max_diff(ffn, tokens[0]) < ROUNDING
    assert ffnbook.reshape_max_diff(ffn, tokens) < ROUNDING
    assert ffnbook.permutation_max_diff(ffn, tokens, [6, 5, 4, 3, 2, 1, 0]) < ROUNDING
    change = ffnbook.change_one_token(ffn, tokens, 2)
    assert change.other_positions < ROUNDING
    assert change.changed_position > 1e-3  # the edit itself was visible


def test_attention_fails_the_interaction_tests(layers, tokens):
    _, attn = layers
    assert ffnbook.batch_vs_rows_max_diff(attn, tokens[0]) > 1e-3
    assert ffnbook.reshape_max_diff(attn, tokens) > 1e-3
    assert ffnbook.change_one_token(attn, tokens, 2).other_positions > 1e-3
    # ...but without positional information it is still permutation-equivariant.
    assert ffnbook.permutation_max_diff(attn, tokens, [6, 5, 4, 3, 2, 1, 0]) < ROUNDING


def test_a_layer_that_mixes_positions_is_caught(tokens):
    """A hand-made cumulative-sum layer mixes positions; the tests must catch it."""
    cumulative = lambda x: np.cumsum(x, axis=-2)  # noqa: E731
    assert ffnbook.reshape_max_diff(cumulative, tokens) > 1e-3
    assert ffnbook.permutation_max_diff(cumulative, tokens, [1, 0, 2, 3, 4, 5, 6]) > 1e-3
    change = ffnbook.change_one_token(cumulative, tokens, 0)
    assert change.other_positions > 1e-3


def test_results_are_plain_python_floats(layers, tokens):
    ffn, _ = layers
    values = [
        ffnbook.batch_vs_rows_max_diff(ffn, tokens[0]),
        ffnbook.reshape_max_diff(ffn, tokens),
        *ffnbook.change_one_token(ffn, tokens, 1),
    ]
    # numpy 2 scalars break format specs in glue; these must be builtin floats.
    assert all(type(v) is float for v in values)


def test_self_attention_matches_torch(tokens):
    torch = pytest.importorskip("torch")
    p = ffnbook.init_attention_params(16, seed=8)
    mha = torch.nn.MultiheadAttention(16, 4, bias=False, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([p.Wq.T, p.Wk.T, p.Wv.T])))
        mha.out_proj.weight.copy_(torch.from_numpy(p.Wo.T.copy()))
        x = torch.from_numpy(tokens)
        expected, _ = mha(x, x, x, need_weights=False)
    np.testing.assert_allclose(ffnbook.self_attention(tokens, p, n_heads=4), expected.numpy(), atol=1e-12)


# --- what size of difference is rounding ---------------------------------------------------


def test_rounding_gap_is_the_batch_versus_rows_difference_on_more_scales(small_params, tokens):
    from ffnbook import position_independence as pi

    x = tokens[0]
    gap = pi.ffn_rounding_gap(small_params, x, "gelu")
    assert gap.max_abs_diff == ffnbook.batch_vs_rows_max_diff(ffnbook.ffn_layer(small_params, "gelu"), x)
    # Reordering a sum of n terms moves it by at most about n·eps·(sum of |terms|): d_ff = 64 here.
    assert gap.in_eps_of_terms < 64
    assert 0.0 <= gap.share_differing <= 1.0


def test_a_single_position_takes_the_same_code_path_exactly(small_params, tokens):
    from ffnbook import position_independence as pi

    rows = pi.rounding_sweep(16, 64, seq_lens=(1,), seeds=range(3))
    assert [r["max_abs_diff"] for r in rows] == [0.0, 0.0, 0.0]


def test_summation_orders_against_exact_rational_arithmetic():
    from fractions import Fraction

    from ffnbook import position_independence as pi

    values = np.random.default_rng(4).standard_normal(500) * 10.0 ** np.random.default_rng(5).integers(-3, 3, 500)
    exact = sum(Fraction(v) for v in values)
    orders = pi.summation_orders(values)
    eps = np.finfo(float).eps
    bound = len(values) * eps * np.abs(values).sum()  # the worst case for any order of additions
    for name, error in orders.items():
        assert abs(error) <= bound, name
    # The reference, math.fsum, is the exact sum correctly rounded; left to right is Python's sum().
    import math

    assert math.fsum(values.tolist()) == float(exact)
    assert orders["left to right"] == sum(values.tolist()) - float(exact)


def test_blas_library_is_named():
    from ffnbook import position_independence as pi

    assert isinstance(pi.blas_library(), str) and pi.blas_library().strip()
