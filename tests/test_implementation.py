"""The PyTorch side of the book: encoder-layer cross-check, precision, dropout, initialisation."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook

torch = pytest.importorskip("torch")
from ffnbook import implementation  # noqa: E402  (needs torch)


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh", "silu"])
def test_encoder_layer_ffn_path_equals_ffnbook_in_float64(small_params, tokens, activation):
    assert implementation.transformer_encoder_ffn_max_diff(small_params, tokens, activation, nhead=4) < 1e-12


def test_ff_block_is_linear2_of_activation_of_linear1(small_params, tokens):
    """Independent of _ff_block: compose the layer's own submodules by hand (dropout 0, eval)."""
    layer = implementation.encoder_layer_with(small_params, "relu", nhead=2)
    x = torch.from_numpy(tokens)
    with torch.no_grad():
        by_hand = layer.linear2(torch.relu(layer.linear1(x)))
        assert torch.equal(layer._ff_block(x), by_hand)
        assert torch.equal(layer.linear1.weight, torch.from_numpy(small_params.W1.T.copy()))
        assert tuple(layer.linear2.weight.shape) == (16, 64)  # (out, in) = (d_model, d_ff)


def test_ff_block_is_what_forward_adds_in_the_pre_norm_layer(small_params, tokens):
    """Whole layer with norm_first: out = h + ff(norm2(h)), h = x + sa(norm1(x)). Compare to ffnbook.ffn."""
    layer = implementation.encoder_layer_with(small_params, "gelu", nhead=2)
    layer.norm_first = True
    x = torch.from_numpy(tokens)
    with torch.no_grad():
        h = x + layer._sa_block(layer.norm1(x), None, None)
        normed = layer.norm2(h).numpy()
        expected = h.numpy() + ffnbook.ffn(normed, *small_params, activation="gelu")
        got = layer(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_dropout_modules_run_in_the_documented_order(small_params, tokens):
    layer = implementation.encoder_layer_with(small_params, "relu", nhead=2, dropout=0.1)
    order = []
    for name in ("linear1", "dropout", "linear2", "dropout2"):
        getattr(layer, name).register_forward_hook(lambda m, i, o, name=name: order.append(name))
    with torch.no_grad():
        layer._ff_block(torch.from_numpy(tokens))
    assert order == ["linear1", "dropout", "linear2", "dropout2"]


def test_linear_layout_matches_a_real_linear():
    layout = implementation.linear_layout(12, 40)
    assert layout.torch_weight == tuple(torch.nn.Linear(12, 40).weight.shape) == (40, 12)
    assert layout.numpy_W1 == ffnbook.init_ffn_params(12, 40).W1.shape


def test_linear_is_position_wise(tokens):
    assert implementation.linear_positionwise_max_diff(tokens) < 1e-12


def test_float32_difference_exceeds_float64_and_scales_with_epsilon():
    params = ffnbook.init_ffn_params(256, 1024, seed=0)
    x = ffnbook.random_tokens((6, 256), seed=0)
    c = implementation.precision_comparison(params, x, "gelu")
    assert c.float32 > c.float64 > 0
    assert c.eps32 == np.finfo(np.float32).eps and c.eps64 == np.finfo(np.float64).eps
    # Rounding, not a bug: each difference is a modest number of eps-sized steps of the output.
    assert c.ulps32 < 100 and c.ulps64 < 100
    # So the ratio is within two orders of magnitude of eps32/eps64 = 2**29.
    assert 2**29 / 100 < c.ratio < 2**29 * 100


def test_dropout_eval_is_deterministic_and_train_is_not(small_params, tokens):
    d = implementation.dropout_demo(small_params, tokens, "gelu", p=0.2, seed=1)
    assert d.eval_diff == 0.0
    assert d.eval_vs_ffn < 1e-12
    assert d.train_diff > 0.0
    # Inverted dropout: survivors are scaled by 1/(1-p), exactly up to rounding.
    assert d.hidden_scale == pytest.approx(1 / 0.8, rel=1e-12)
    # 2*7*64 = 896 hidden entries; the zeroed share is binomial around p (5 sigma ≈ 0.067).
    assert abs(d.hidden_zero_fraction - 0.2) < 0.07


def test_torch_default_init_is_uniform_within_one_over_sqrt_fan_in():
    p = implementation.init_params("torch_default", 64, 256, seed=0)
    for w, fan_in in ((p.W1, 64), (p.b1, 64), (p.W2, 256), (p.b2, 256)):
        bound = 1 / np.sqrt(fan_in)
        assert np.abs(w).max() <= bound
        assert np.abs(w).max() > 0.95 * bound  # the range is used up to its edge
    # Variance of U(-b, b) is b**2 / 3.
    assert np.var(p.W1) == pytest.approx(1 / (3 * 64), rel=0.03)


def test_output_scale_matches_closed_forms():
    d, f = 256, 1024
    s = implementation.init_output_scale(d, f, activation="relu", n_tokens=1024, seed=0)
    # Unit-variance input; ReLU keeps half the second moment of a symmetric pre-activation.
    pre = d / (3 * d) + 1 / (3 * d)  # weights and bias uniform on ±1/sqrt(d)
    torch_default = np.sqrt(f / (3 * f) * pre / 2 + 1 / (3 * f))
    xavier = np.sqrt(f * 2 / (d + f) * (d * 2 / (d + f)) / 2)
    he_lecun = 1.0
    assert s["torch_default"] == pytest.approx(torch_default, rel=0.05)
    assert s["ffnbook"] == pytest.approx(torch_default, rel=0.05)
    assert s["xavier_uniform"] == pytest.approx(xavier, rel=0.05)
    assert s["he_lecun"] == pytest.approx(he_lecun, rel=0.05)


def test_sources_shown_on_the_page_are_torch_methods():
    assert "def _ff_block" in implementation.ff_block_source()
    assert "dropout2" in implementation.ff_block_source()
    assert "def reset_parameters" in implementation.linear_init_source()


def test_init_figure_has_a_description():
    fig = implementation.init_scale_figure({"torch_default": 0.2, "he_lecun": 1.0})
    assert fig.description and "<svg" in fig.to_svg()


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda p, x: implementation.transformer_encoder_ffn_max_diff(p, x, "tanh"), ValueError, "unknown activation"),
        (lambda p, x: implementation.transformer_encoder_ffn_max_diff(p, x, "relu", nhead=3), ValueError, "divide"),
        (lambda p, x: implementation.transformer_encoder_ffn_max_diff(p, x[..., :5]), ValueError, "d_model=16"),
        (lambda p, x: implementation.dropout_demo(p, x, p=1.5), ValueError, "probability"),
        (lambda p, x: implementation.encoder_layer_with(p, dropout=-0.1), ValueError, "probability"),
        (lambda p, x: implementation.init_params("zeros", 4, 8), ValueError, "scheme must be one of"),
        (lambda p, x: implementation.linear_positionwise_max_diff(x[0]), ValueError, "batch, seq_len"),
        (lambda p, x: implementation.precision_comparison(p, x.astype(np.float32)), TypeError, "dtype"),
    ],
)
def test_bad_inputs_raise(small_params, tokens, call, error, message):
    with pytest.raises(error, match=message):
        call(small_params, tokens)


def test_import_ffnbook_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, ffnbook; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- number formats ---------------------------------------------------------------------------


def test_dtype_rows_limits_match_the_formats():
    params = ffnbook.init_ffn_params(32, 128, seed=0)
    x = ffnbook.random_tokens((6, 32), seed=1)
    rows = {r["dtype"]: r for r in implementation.dtype_rows(params, x, "gelu")}
    # bfloat16: 8 exponent bits like float32, 7 fraction bits -> eps 2^-7; float16: 10 fraction bits.
    assert rows["bfloat16"]["eps"] == 2.0**-7 and rows["float16"]["eps"] == 2.0**-10
    assert rows["float32"]["eps"] == 2.0**-23 and rows["float64"]["eps"] == 2.0**-52
    assert rows["float16"]["max"] == 65504.0 and rows["float16"]["tiny"] == 2.0**-14
    assert rows["bfloat16"]["tiny"] == rows["float32"]["tiny"] == 2.0**-126
    assert {r["bits"] for r in rows.values()} == {64, 32, 16}
    # Accuracy against float64 follows the precision: float32 < float16 < bfloat16.
    assert rows["float64"]["rel_error"] == 0.0
    assert rows["float32"]["rel_error"] < rows["float16"]["rel_error"] < rows["bfloat16"]["rel_error"]
    assert rows["bfloat16"]["rel_error"] < 10 * rows["bfloat16"]["eps"]  # a few roundings, not garbage


def test_dtype_rows_rejects_unknown_formats():
    params = ffnbook.init_ffn_params(8, 16, seed=0)
    with pytest.raises(ValueError, match=r"dtypes\[0\] must be one of"):
        implementation.dtype_rows(params, np.ones((2, 8)), dtypes=("float8",))


def test_stored_as_shows_float16_underflow():
    stored = implementation.stored_as(1e-8)
    assert stored["float16"] == 0.0  # below float16's smallest subnormal, 2^-24 ≈ 6e-8
    assert stored["bfloat16"] == pytest.approx(1e-8, rel=2.0**-7)
    assert implementation.stored_as(70000.0)["float16"] == float("inf")  # above 65504


def test_predicted_default_output_std():
    assert implementation.predicted_default_output_std() == pytest.approx((1 / 18) ** 0.5)
    # And it matches the measured scale of PyTorch's default within a few percent.
    measured = implementation.init_output_scale(512, 2048, schemes=("torch_default",))["torch_default"]
    assert measured == pytest.approx(implementation.predicted_default_output_std(), rel=0.1)
