"""Bad input fails loudly, naming what was expected and what came."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook


def test_wrong_width(small_params):
    with pytest.raises(ValueError, match=r"last axis d_model=16, got shape \(3, 15\)"):
        ffnbook.ffn(np.zeros((3, 15)), *small_params)


def test_scalar_input(small_params):
    with pytest.raises(ValueError, match="got a scalar"):
        ffnbook.ffn(np.float64(1.0), *small_params)


def test_integer_input_is_computed_in_the_weights_dtype(small_params):
    ints = np.arange(48).reshape(3, 16) % 5 - 2
    np.testing.assert_array_equal(ffnbook.ffn(ints, *small_params), ffnbook.ffn(ints.astype(np.float64), *small_params))
    p32 = small_params.astype(np.float32)
    assert ffnbook.ffn(ints, *p32).dtype == np.float32


def test_text_and_bool_arrays_are_refused(small_params):
    with pytest.raises(TypeError, match="x must be an array of real numbers"):
        ffnbook.ffn(np.full((3, 16), "a"), *small_params)
    with pytest.raises(TypeError, match="x must be an array of real numbers"):
        ffnbook.ffn(np.ones((3, 16), dtype=bool), *small_params)


def test_float16_is_refused(small_params):
    with pytest.raises(TypeError, match="float16"):
        ffnbook.ffn(np.zeros((3, 16), dtype=np.float16), *small_params)


def test_dtype_mismatch_between_input_and_weights(small_params):
    with pytest.raises(TypeError, match="x has dtype float32 but the weights are float64"):
        ffnbook.ffn(np.zeros((3, 16), dtype=np.float32), *small_params)


def test_weights_of_mixed_dtypes(small_params):
    W1, b1, W2, b2 = small_params
    with pytest.raises(TypeError, match="share one dtype.*b1=float32"):
        ffnbook.ffn(np.zeros((3, 16)), W1, b1.astype(np.float32), W2, b2)


@pytest.mark.parametrize(
    "field, bad_shape, message",
    [
        ("W1", (16,), r"W1 must be a 2-D array of shape \(d_model, d_ff\), got shape \(16,\)"),
        ("b1", (63,), r"b1 must have shape \(64,\), got \(63,\)"),
        ("W2", (16, 64), r"W2 must have shape \(64, 16\), got \(16, 64\)"),
        ("b2", (64,), r"b2 must have shape \(16,\), got \(64,\)"),
    ],
)
def test_mismatched_weight_shapes(small_params, field, bad_shape, message):
    broken = small_params._replace(**{field: np.zeros(bad_shape)})
    with pytest.raises(ValueError, match=message):
        ffnbook.ffn(np.zeros((3, 16)), *broken)


def test_nan_in_input(small_params):
    x = np.zeros((3, 16))
    x[1, 2] = np.nan
    with pytest.raises(ValueError, match="x must be finite, but 1 of its 48 entries"):
        ffnbook.ffn(x, *small_params)


def test_inf_in_weights(small_params):
    W1 = small_params.W1.copy()
    W1[0, 0] = np.inf
    with pytest.raises(ValueError, match="W1 must be finite"):
        ffnbook.ffn(np.zeros((3, 16)), *small_params._replace(W1=W1))


def test_unknown_activation(small_params):
    with pytest.raises(ValueError, match="unknown activation 'swish'; expected one of: gelu, "):
        ffnbook.ffn(np.zeros((3, 16)), *small_params, activation="swish")


def test_torch_tensor_given_to_numpy_ffn(small_params):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="got a torch tensor"):
        ffnbook.ffn(torch.zeros(3, 16), *small_params)


@pytest.mark.parametrize("bad", [0, -4, 2.5, True, "8"])
def test_widths_must_be_positive_integers(bad):
    with pytest.raises((TypeError, ValueError), match="d_ff must be a positive integer"):
        ffnbook.init_ffn_params(8, bad)


def test_attention_heads_must_divide_width():
    with pytest.raises(ValueError, match="d_model=10 must be divisible by n_heads=4"):
        ffnbook.attention_param_count(10, n_heads=4)


def test_bad_permutation(tokens, small_params):
    layer = ffnbook.ffn_layer(small_params)
    with pytest.raises(ValueError, match=r"permutation of range\(7\), got \[0, 0, 1, 2, 3, 4, 5\]"):
        ffnbook.permutation_max_diff(layer, tokens, [0, 0, 1, 2, 3, 4, 5])


def test_position_out_of_range(tokens, small_params):
    with pytest.raises(ValueError, match=r"position must be an integer in \[0, 7\), got 7"):
        ffnbook.change_one_token(ffnbook.ffn_layer(small_params), tokens, 7)


def test_reshape_test_needs_a_batch(small_params):
    with pytest.raises(ValueError, match=r"\(batch, seq_len, d_model\), got \(7, 16\)"):
        ffnbook.reshape_max_diff(ffnbook.ffn_layer(small_params), np.zeros((7, 16)))


def test_torch_module_rejects_wrong_width_and_dtype():
    torch = pytest.importorskip("torch")
    module = ffnbook.PositionwiseFFN(16, 64)
    with pytest.raises(ValueError, match=r"last axis d_model=16, got shape \(2, 15\)"):
        module(torch.zeros(2, 15))
    with pytest.raises(TypeError, match="torch.float64 but the module's weights are torch.float32"):
        module(torch.zeros(2, 16, dtype=torch.float64))


def test_markdown_table_missing_column():
    with pytest.raises(ValueError, match="column 'b' needs key 'b', missing in rows \\[0\\]"):
        ffnbook.MarkdownTable([{"a": 1}], [("b", "b", "d")])


def test_markdown_table_refuses_a_bad_format_when_built():
    with pytest.raises(ValueError, match="column 'n' cannot format row 0's value 0.5 with 'd'"):
        ffnbook.MarkdownTable([{"n": 0.5}], [("n", "n", "d")])
