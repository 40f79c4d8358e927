"""The FFN split across devices, against the whole FFN and against counts made by hand."""

from __future__ import annotations

import numpy as np
import pytest

from ffnbook import parallel
from ffnbook.activations import get_activation
from ffnbook.feedforward import ffn, init_ffn_params
from ffnbook.gated import gated_ffn, init_gated_params
from ffnbook.models import get_model


def inputs(d_model: int, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((5, d_model))


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu", "identity"])
@pytest.mark.parametrize("n_devices", [1, 2, 4, 8])
def test_columns_then_rows_equals_the_whole_ffn(activation, n_devices):
    params, x = init_ffn_params(8, 32, seed=1), inputs(8)
    run = parallel.tensor_parallel_ffn(x, params, n_devices, activation)
    assert run.partials.shape == (n_devices, 5, 8)
    np.testing.assert_allclose(run.output, ffn(x, *params, activation=activation), rtol=0, atol=1e-12)


def test_each_device_needs_only_its_own_units():
    # Device i's partial is its block of hidden units through its rows of W2, computed here
    # from the whole FFN's hidden layer: nothing of another device's block enters it.
    params, x = init_ffn_params(6, 12, seed=2), inputs(6)
    hidden = get_activation("gelu")(x @ params.W1 + params.b1)
    run = parallel.tensor_parallel_ffn(x, params, 3, "gelu")
    for i in range(3):
        block = slice(4 * i, 4 * i + 4)
        np.testing.assert_allclose(run.partials[i], hidden[:, block] @ params.W2[block], atol=1e-12)


def test_splitting_the_first_matrix_by_rows_breaks_unless_the_activation_is_linear():
    # Shoeybi et al. (2019, §3): GeLU(X1 A1 + X2 A2) != GeLU(X1 A1) + GeLU(X2 A2).
    params, x = init_ffn_params(8, 16, seed=4), inputs(8)
    linear = parallel.row_split_ffn(x, params, 2, "identity")
    np.testing.assert_allclose(linear, ffn(x, *params, activation="identity"), atol=1e-12)
    for activation in ("relu", "gelu", "silu"):
        wrong = parallel.row_split_ffn(x, params, 2, activation)
        assert np.max(np.abs(wrong - ffn(x, *params, activation=activation))) > 1e-2, activation
    # The same in two numbers: the activation of a sum is not the sum of the activations.
    gelu = get_activation("gelu")
    assert gelu(np.array(1.0 + -2.0)) != pytest.approx(gelu(np.array(1.0)) + gelu(np.array(-2.0)))


def test_a_gated_ffn_splits_gate_and_up_by_the_same_columns():
    params, x = init_gated_params(8, 12, seed=5), inputs(8)
    whole = gated_ffn(x, *params)
    for n in (1, 2, 3, 4, 6):
        assert parallel.gated_split_error(x, params, n) < 1e-12
        assert parallel.gated_split_error(x, params, n, packing="interleaved") < 1e-12
        concatenated = parallel.gated_split_error(x, params, n, packing="concatenated")
        assert (concatenated < 1e-12) == (n == 1), n  # one device holds both halves: right
    # Two devices and [W | V] cut down the middle: device 0 holds every gate and no up.
    packed = parallel.pack_gate_up(params, "concatenated")
    np.testing.assert_array_equal(packed[:, :12], params.W)
    run = parallel.tensor_parallel_gated_ffn(x, params, 2, packing="concatenated")
    gate, up = params.W, params.W[:, 6:]  # device 0 reads its block's halves: W[:, :6] and W[:, 6:]
    silu = get_activation("silu")
    np.testing.assert_allclose(run.partials[0], (silu(x @ gate[:, :6]) * (x @ up)) @ params.W2[:6], atol=1e-12)
    assert np.max(np.abs(run.output - whole)) > 1e-3


def test_interleaved_packing_puts_each_units_gate_beside_its_up():
    params = init_gated_params(4, 3, seed=0)
    packed = parallel.pack_gate_up(params, "interleaved")
    for j in range(3):
        np.testing.assert_array_equal(packed[:, 2 * j], params.W[:, j])
        np.testing.assert_array_equal(packed[:, 2 * j + 1], params.V[:, j])


@pytest.mark.parametrize("p, n", [(1, 5), (2, 8), (3, 12), (4, 8), (8, 64), (3, 7)])
def test_ring_all_reduce_sums_and_sends_two_p_minus_one_chunks(p, n):
    vectors = np.random.default_rng(p * 100 + n).standard_normal((p, n))
    r = parallel.ring_all_reduce(vectors)
    np.testing.assert_allclose(r.result, np.broadcast_to(vectors.sum(axis=0), (p, n)), atol=1e-12)
    assert r.steps == 2 * (p - 1)
    if n % p == 0:
        assert r.sent_per_device == 2 * (p - 1) * n // p
    else:  # chunks of ceil(n / p) at most
        assert r.sent_per_device <= 2 * (p - 1) * -(-n // p)


def test_communication_of_a_real_ffn_by_hand():
    # Llama-2 70B (the sheet): d_model 8192, SwiGLU of width 28672. On 8 devices in bfloat16 a ring
    # all-reduce of one token's output sends 2·7/8 · 8192 · 2 bytes from each device, and each device
    # does an eighth of 3 · 2 · 8192 · 28672 FLOPs.
    c = parallel.tensor_parallel_cost(get_model("Llama-2 70B"), 8)
    assert c.values_per_token == 8192
    assert c.bytes_sent_per_device == 2 * 7 / 8 * 8192 * 2
    assert c.ffn_flops_per_device == 3 * 2 * 8192 * 28672 / 8
    assert c.flops_per_byte == c.ffn_flops_per_device / c.bytes_sent_per_device
    # The simulated ring agrees with the formula for that vector.
    assert parallel.ring_all_reduce(np.zeros((8, 8192))).sent_per_device * 2 == c.bytes_sent_per_device
    # One device alone sends nothing.
    assert parallel.tensor_parallel_cost(get_model("Llama-2 70B"), 1).bytes_sent_per_device == 0.0


def test_glu_elementwise_traffic_by_hand():
    # Unfused: write act(a), read it and b, write the product, after reading a: 5 · d_ff.
    assert parallel.glu_elementwise_values(100, fused=False) == 5 * 100
    assert parallel.glu_elementwise_values(100, fused=True) == 3 * 100


def test_clear_errors():
    params = init_ffn_params(8, 12, seed=0)
    with pytest.raises(ValueError, match="n_devices must divide d_ff=12"):
        parallel.shard_ffn(params, 5)
    with pytest.raises(ValueError, match="n_devices must divide d_model=8"):
        parallel.row_split_ffn(inputs(8), init_ffn_params(8, 12), 3)
    with pytest.raises(ValueError, match="mixture of experts"):
        parallel.tensor_parallel_cost(get_model("Mixtral 8x7B"), 2)
    with pytest.raises(ValueError, match="packing"):
        parallel.pack_gate_up(init_gated_params(4, 2), "diagonal")
