"""NumPy and PyTorch compute the same FFN; weights move between them losslessly."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh", "silu", "identity"])
def test_numpy_and_torch_agree_in_float64(small_params, tokens, activation):
    # float64 throughout: the only differences left are summation order, ~1e-16 relative.
    assert ffnbook.numpy_torch_max_diff(tokens, small_params, activation) < 1e-12


def test_numpy_and_torch_agree_in_float32(small_params, tokens):
    p32 = small_params.astype(np.float32)
    x32 = tokens.astype(np.float32)
    # float32 has ~6e-8 relative precision; outputs are O(1), sums of 64 terms.
    assert ffnbook.numpy_torch_max_diff(x32, p32, "gelu") < 1e-5


def test_round_trip_is_exact(small_params):
    back = ffnbook.PositionwiseFFN.from_numpy(small_params, "relu").to_numpy()
    for name, a, b in zip(ffnbook.FFNParams._fields, small_params, back):
        assert np.array_equal(a, b), name


def test_module_equals_plain_torch_layers_with_copied_weights(small_params, tokens):
    """Independent of our module: nn.Sequential built from torch's own pieces."""
    W1, b1, W2, b2 = (torch.from_numpy(a) for a in small_params)
    plain = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 16)).double()
    with torch.no_grad():
        plain[0].weight.copy_(W1.T)
        plain[0].bias.copy_(b1)
        plain[2].weight.copy_(W2.T)
        plain[2].bias.copy_(b2)
        ours = ffnbook.PositionwiseFFN.from_numpy(small_params, "gelu")
        x = torch.from_numpy(tokens)
        assert torch.equal(ours(x), plain(x))


def test_torch_module_is_position_wise(small_params, tokens):
    module = ffnbook.PositionwiseFFN.from_numpy(small_params, "silu")
    x = torch.from_numpy(tokens)
    with torch.no_grad():
        whole = module(x)
        one_by_one = torch.stack([module(x[:, t]) for t in range(x.shape[1])], dim=1)
    assert torch.allclose(whole, one_by_one, rtol=0, atol=1e-12)


def test_importing_ffnbook_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, ffnbook; ffnbook.ffn; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
