"""Gated FFNs: NumPy against PyTorch against a per-position loop; parameter counts against modules."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import erf, expit

import ffnbook
from ffnbook import gated
from ffnbook.models import get_model

VARIANTS = ["sigmoid", "relu", "gelu", "silu", "identity"]

# Scalar activations written from their textbook definitions, independent of ffnbook.
SCALAR = {
    "sigmoid": lambda z: 1.0 / (1.0 + math.exp(-z)),
    "relu": lambda z: max(z, 0.0),
    "gelu": lambda z: 0.5 * z * (1.0 + math.erf(z / math.sqrt(2.0))),
    "silu": lambda z: z / (1.0 + math.exp(-z)),
    "identity": lambda z: z,
}


@pytest.fixture
def params():
    return gated.init_gated_params(6, 10, seed=11)


@pytest.fixture
def x():
    return ffnbook.random_tokens((2, 4, 6), seed=12)


def _loop(x, p, act):
    """Position by position, unit by unit, with Python floats."""
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        xi = x[idx]
        hidden = [SCALAR[act](float(xi @ p.W[:, j])) * float(xi @ p.V[:, j]) for j in range(p.d_ff)]
        out[idx] = np.array(hidden) @ p.W2
    return out


@pytest.mark.parametrize("act", VARIANTS)
def test_gated_ffn_equals_a_per_position_loop(params, x, act):
    np.testing.assert_allclose(gated.gated_ffn(x, *params, activation=act), _loop(x, params, act), atol=1e-13)


@pytest.mark.parametrize("act", VARIANTS)
def test_gated_ffn_equals_torch(params, x, act):
    pytest.importorskip("torch")
    from ffnbook import gated_torch

    assert gated_torch.numpy_torch_max_diff(x, params, act) < 1e-12


def test_torch_module_equals_plain_functional_torch(params, x):
    """Independent of GatedFFN: the formula written with torch.nn.functional."""
    torch = pytest.importorskip("torch")
    from ffnbook import gated_torch

    F = torch.nn.functional
    W, V, W2 = (torch.from_numpy(a) for a in params)
    xt = torch.from_numpy(x)
    expected = F.linear(F.silu(F.linear(xt, W.T)) * F.linear(xt, V.T), W2.T)
    with torch.no_grad():
        got = gated_torch.GatedFFN.from_numpy(params, "silu")(xt)
    assert torch.allclose(got, expected, atol=1e-13, rtol=0)


def test_glu_with_sigmoid_uses_the_logistic_function(params, x):
    h = expit(x @ params.W) * (x @ params.V)
    np.testing.assert_allclose(gated.gated_ffn(x, *params, activation="sigmoid"), h @ params.W2, atol=1e-14)
    g = 0.5 * (x @ params.W) * (1 + erf((x @ params.W) / np.sqrt(2)))
    np.testing.assert_allclose(
        gated.gated_ffn(x, *params, activation="gelu"), (g * (x @ params.V)) @ params.W2, atol=1e-14
    )


def test_gated_ffn_is_position_wise(params, x):
    layer = gated.gated_layer(params, "silu")
    change = ffnbook.change_one_token(layer, x, 1)
    assert change.other_positions < 1e-12
    assert change.changed_position > 1e-3
    assert ffnbook.reshape_max_diff(layer, x) < 1e-12


def test_float32_is_kept(params, x):
    y = gated.gated_ffn(x.astype(np.float32), *params.astype(np.float32))
    assert y.dtype == np.float32


@pytest.mark.parametrize("d_model, d_ff", [(1, 1), (6, 10), (768, 2048), (4096, 11008)])
def test_param_count_equals_meta_modules(d_model, d_ff):
    torch = pytest.importorskip("torch")
    from ffnbook import gated_torch

    ours = gated_torch.meta_gated_ffn(d_model, d_ff, "gelu")
    with torch.device("meta"):  # and three nn.Linear built here, not through ffnbook
        plain = torch.nn.ModuleList(
            [
                torch.nn.Linear(d_model, d_ff, bias=False),
                torch.nn.Linear(d_model, d_ff, bias=False),
                torch.nn.Linear(d_ff, d_model, bias=False),
            ]
        )
    expected = sum(p.numel() for p in plain.parameters())
    assert gated.gated_ffn_param_count(d_model, d_ff) == expected
    assert ffnbook.count_module_parameters(ours) == expected
    assert all(p.device.type == "meta" for p in ours.parameters())


def test_t5_v10_and_v11_ffns_hold_the_same_parameters():
    # The reason: 2·d·3072 = 3·d·2048 because 2·3072 = 6144 = 3·2048, for any d (here 768).
    assert 2 * 768 * 3072 == 3 * 768 * 2048 == 4_718_592
    v10, v11 = get_model("T5-base v1.0"), get_model("T5-base v1.1")
    assert (v10.d_model, v10.d_ff, v11.d_model, v11.d_ff) == (768, 3072, 768, 2048)
    classic = ffnbook.ffn_param_count(v10.d_model, v10.d_ff, bias=False)
    gated_count = gated.gated_ffn_param_count(v11.d_model, v11.d_ff)
    assert classic == gated_count == 4_718_592
    assert gated.equal_parameter_width(v10.d_ff) == v11.d_ff


def test_t5_counts_equal_meta_modules():
    pytest.importorskip("torch")
    from ffnbook import gated_torch

    v10, v11 = get_model("T5-base v1.0"), get_model("T5-base v1.1")
    classic = gated_torch.meta_classic_ffn(v10.d_model, v10.d_ff, "relu", bias=False)
    geglu = gated_torch.meta_gated_ffn(v11.d_model, v11.d_ff, "gelu")
    assert ffnbook.count_module_parameters(classic) == ffnbook.count_module_parameters(geglu)
    assert ffnbook.count_module_parameters(geglu) == 3 * 768 * 2048


def test_importing_gated_does_not_import_torch():
    code = "import sys, ffnbook; from ffnbook import gated; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "make_args, exc, message",
    [
        (lambda p, x: (x[..., :5], *p), ValueError, r"last axis d_model=6, got shape \(2, 4, 5\)"),
        (lambda p, x: (x.astype(np.float32), *p), TypeError, "x has dtype float32 but the weights are float64"),
        (lambda p, x: (x.astype(str), *p), TypeError, "float32 or float64"),
        (lambda p, x: (x, p.W, p.V[:, :9], p.W2), ValueError, r"V must have shape \(6, 10\), got \(6, 9\)"),
        (lambda p, x: (x, p.W, p.V, p.W2.T), ValueError, r"W2 must have shape \(10, 6\), got \(6, 10\)"),
        (lambda p, x: (x, p.W[0], p.V, p.W2), ValueError, "W must be a 2-D array"),
        (lambda p, x: (x, p.W, p.V.astype(np.float32), p.W2), TypeError, "share one dtype.*V=float32"),
    ],
)
def test_bad_input_is_refused(params, x, make_args, exc, message):
    with pytest.raises(exc, match=message):
        gated.gated_ffn(*make_args(params, x))


def test_integer_input_is_computed_in_float(params, x):
    ints = np.round(3 * x).astype(np.int64)
    np.testing.assert_array_equal(gated.gated_ffn(ints, *params), gated.gated_ffn(ints.astype(np.float64), *params))


def test_nan_and_unknown_activation_are_refused(params, x):
    bad = x.copy()
    bad[0, 1, 2] = np.nan
    with pytest.raises(ValueError, match="x must be finite, but 1 of its 48 entries"):
        gated.gated_ffn(bad, *params)
    W = params.W.copy()
    W[0, 0] = np.inf
    with pytest.raises(ValueError, match="W must be finite"):
        gated.gated_ffn(x, W, params.V, params.W2)
    with pytest.raises(ValueError, match="unknown gate activation 'tanh'"):
        gated.gated_ffn(x, *params, activation="tanh")
    with pytest.raises(ValueError, match="d_ff must be a positive integer, got 0"):
        gated.gated_ffn_param_count(8, 0)
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        gated.init_gated_params(4, 4, dtype=np.float16)


def test_torch_module_refuses_bad_input():
    torch = pytest.importorskip("torch")
    from ffnbook import gated_torch

    m = gated_torch.GatedFFN(6, 10, "silu")
    with pytest.raises(ValueError, match="last axis d_model=6"):
        m(torch.zeros(3, 5))
    with pytest.raises(TypeError, match="dtype"):
        m(torch.zeros(3, 6, dtype=torch.float64))
    with pytest.raises(ValueError, match="unknown gate activation"):
        gated_torch.GatedFFN(6, 10, "swish")


def test_figures(params, x):
    budget = gated.parameter_budget_figure(768, 3072)
    assert "4,718,592" in budget.description and budget.to_svg().lstrip().startswith("<?xml")
    hist = gated.gate_histogram_figure(x, params, "relu")
    assert hist.description.strip() and "<svg" in hist.to_svg()
    sample = gated.hidden_values(x, params, "relu")
    np.testing.assert_array_equal(sample.product, sample.gate * sample.linear)
    assert sample.gate.min() >= 0
