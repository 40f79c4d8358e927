"""The FFN's three steps: shapes from the widths, the hidden layer, and the convolution view."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook
from ffnbook import anatomy
from ffnbook.plotting import BookFigure


@pytest.mark.parametrize("leading", [(), (5,), (2, 7), (2, 3, 4)])
def test_shape_trace_follows_from_the_widths(small_params, leading):
    d_model, d_ff = small_params.d_model, small_params.d_ff
    x = ffnbook.random_tokens((*leading, d_model), seed=1)
    rows = anatomy.shape_trace(x, small_params, "gelu")
    assert [r["stage"] for r in rows] == ["input", "expand", "activate", "compress"]
    assert [r["shape"] for r in rows] == [(*leading, d_model), (*leading, d_ff), (*leading, d_ff), (*leading, d_model)]


def test_shape_trace_table_renders_every_stage(small_params, tokens):
    text = anatomy.shape_trace_table(tokens, small_params)._repr_markdown_()
    assert "| expand | `x W1 + b1` | (2, 7, 64) |" in text
    assert "| compress | `h W2 + b2` | (2, 7, 16) |" in text


def test_hidden_layer_is_the_first_half_of_the_ffn(small_params, tokens):
    h = anatomy.hidden_layer(tokens, small_params, "relu")
    p = small_params
    np.testing.assert_array_equal(h.pre, tokens @ p.W1 + p.b1)
    np.testing.assert_array_equal(h.post, np.maximum(h.pre, 0))
    # Finishing by hand with W2 and b2 gives the FFN.
    np.testing.assert_allclose(h.post @ p.W2 + p.b2, ffnbook.ffn(tokens, *p), atol=1e-14)


def test_active_fraction_counts_positive_pre_activations(small_params, tokens):
    p = small_params
    # A brute-force loop over positions and units, independent of the vectorised code.
    counts = []
    for vec in tokens.reshape(-1, p.d_model):
        counts.append(sum(1 for k in range(p.d_ff) if float(vec @ p.W1[:, k] + p.b1[k]) > 0) / p.d_ff)
    got = anatomy.active_fraction(tokens, p, "relu")
    assert got.mean == pytest.approx(np.mean(counts), abs=1e-12)
    assert (got.lowest, got.highest) == (min(counts), max(counts))
    assert all(type(v) is float for v in got)


def test_identity_activation_leaves_every_unit_active(small_params, tokens):
    assert anatomy.active_fraction(tokens, small_params, "identity").mean == 1.0


@pytest.mark.parametrize("activation", sorted(ffnbook.ACTIVATIONS))
def test_conv1d_equals_ffn(small_params, tokens, activation):
    assert anatomy.conv1d_equivalence_max_diff(small_params, tokens, activation) < 1e-12


def test_conv1d_check_accepts_float32_weights_and_computes_in_float64(tokens):
    p32 = ffnbook.init_ffn_params(16, 64, seed=2, dtype=np.float32)
    assert anatomy.conv1d_equivalence_max_diff(p32, tokens.astype(np.float32)) < 1e-12


def test_kernel_size_one_convolution_is_a_per_position_matmul(small_params, tokens):
    """Independent of ffnbook's function: torch's functional conv1d with W1 as a (d_ff, d_model, 1) kernel."""
    torch = pytest.importorskip("torch")
    p = small_params
    kernel = torch.from_numpy(p.W1.T.copy()).unsqueeze(-1)
    out = torch.nn.functional.conv1d(torch.from_numpy(tokens).transpose(1, 2), kernel, torch.from_numpy(p.b1))
    np.testing.assert_allclose(out.transpose(1, 2).numpy(), tokens @ p.W1 + p.b1, atol=1e-13)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda p, x: anatomy.shape_trace(x[..., :5], p), ValueError, "x must have last axis d_model=16"),
        (lambda p, x: anatomy.shape_trace(x, p, "tanh"), ValueError, "unknown activation 'tanh'"),
        (lambda p, x: anatomy.hidden_layer(x.astype(str), p), TypeError, "x must be an array of real numbers"),
        (
            lambda p, x: anatomy.conv1d_equivalence_max_diff(p, x[0]),
            ValueError,
            r"x must have shape \(batch, seq_len, d_model\), with at least one position, got \(7, 16\)",
        ),
        (lambda p, x: anatomy.conv1d_equivalence_max_diff(p, x, "swish"), ValueError, "unknown activation 'swish'"),
        (
            lambda p, x: anatomy.conv1d_equivalence_max_diff(p[:3], x),
            TypeError,
            r"params must be FFNParams, a tuple \(W1, b1, W2, b2\), got tuple",
        ),
        (lambda p, x: anatomy.hidden_layer_figure(x[0, 0], p), ValueError, "x must have shape"),
    ],
)
def test_bad_input_raises_clear_errors(small_params, tokens, call, error, message):
    with pytest.raises(error, match=message):
        call(small_params, tokens)


def test_hidden_layer_figure(small_params, tokens):
    fig = anatomy.hidden_layer_figure(tokens, small_params)
    assert isinstance(fig, BookFigure)
    left, right = fig.figure.axes
    assert left.get_xlabel() and right.get_ylabel() == "fraction of hidden units active"
    assert len(right.patches) == tokens.shape[0] * tokens.shape[1]  # one bar per position
    assert fig.description.strip()


def test_hidden_layer_figure_alt_text_states_what_was_measured(small_params, tokens):
    """The alt text's numbers are the active fractions, counted here from the pre-activations."""
    text = anatomy.hidden_layer_figure(tokens, small_params).description
    pre = tokens @ small_params.W1 + small_params.b1
    per_position = (pre > 0).mean(axis=-1).reshape(-1)
    assert f"between {per_position.min():.1%} and {per_position.max():.1%}" in text
    assert f"the mean, {per_position.mean():.1%}" in text
    assert f"{float(np.mean(pre <= 0)):.1%} of them sit in one tall bar at zero" in text
