"""The FFN split across devices: tensor parallelism, simulated in NumPy.

Megatron-LM's split (Shoeybi et al., 2019, §3): device ``i`` of ``p`` holds a
block of ``W1``'s columns (and of ``b1``), so it computes the activation of its
own hidden units with no communication, and the matching block of ``W2``'s
rows, so it produces a partial output of full width ``d_model``. One
all-reduce (a sum over devices) gives every device the output; ``b2`` is added
once, after it. The devices here are the entries of a list: each runs the same
NumPy code on its own block, and the all-reduce is a sum, or
:func:`ring_all_reduce`, which also counts what each device sends.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, require_bool, require_choice, require_positive_int
from .activations import get_activation
from .feedforward import check_input, ffn, ffn_params_of
from .gated import gated_ffn, gated_params_of, get_gate_activation
from .inference import BYTES_PER_VALUE
from .models import check_model


class FFNShard(NamedTuple):
    """What one device holds of an FFN: its block of hidden units (``b2`` is added after the sum)."""

    W1: np.ndarray  #: columns of W1, ``(d_model, d_ff / p)``
    b1: np.ndarray  #: the same block of b1
    W2: np.ndarray  #: the matching rows of W2, ``(d_ff / p, d_model)``


def _blocks(size: int, n_devices, what: str = "d_ff") -> list[slice]:
    """``n_devices`` equal blocks of ``size`` (the width ``what`` that is split)."""
    n_devices = require_positive_int(n_devices, "n_devices")
    if size % n_devices:
        raise ValueError(f"n_devices must divide {what}={size} (each device holds an equal block), "
                         f"got {n_devices}")
    width = size // n_devices
    return [slice(i * width, (i + 1) * width) for i in range(n_devices)]


def shard_ffn(params, n_devices: int) -> list[FFNShard]:
    """Megatron's split of an FFN over ``n_devices``: W1 (and b1) by columns, W2 by rows.

    Device ``i`` gets hidden units ``i·d_ff/p`` to ``(i+1)·d_ff/p``, the same
    block in all three arrays. ``n_devices`` must divide ``d_ff``.

    >>> from ffnbook.feedforward import init_ffn_params
    >>> [s.W1.shape for s in shard_ffn(init_ffn_params(4, 8), 2)]
    [(4, 4), (4, 4)]
    """
    params = ffn_params_of(params)
    return [FFNShard(params.W1[:, b], params.b1[b], params.W2[b, :]) for b in _blocks(params.d_ff, n_devices)]


class ShardedRun(NamedTuple):
    """One forward pass of a split FFN: each device's partial output and their sum."""

    partials: np.ndarray  #: ``(p, ..., d_model)``: what each device holds before the all-reduce
    output: np.ndarray  #: the all-reduced sum, plus ``b2``


def tensor_parallel_ffn(x, params, n_devices: int, activation: str = "relu") -> ShardedRun:
    """The FFN computed by ``n_devices`` devices that each hold one block of hidden units.

    Device ``i`` computes ``activation(x W1_i + b1_i) W2_i`` from the full
    input: the activation acts on each hidden unit alone, so its own block is
    all it needs. The sum of the partials plus ``b2`` is the FFN's output
    (:func:`ffnbook.feedforward.ffn`), to rounding.

    >>> from ffnbook.feedforward import ffn, init_ffn_params
    >>> p = init_ffn_params(8, 32, seed=0)
    >>> x = np.ones((3, 8))
    >>> run = tensor_parallel_ffn(x, p, 4, "gelu")
    >>> run.partials.shape, bool(np.allclose(run.output, ffn(x, *p, activation="gelu")))
    ((4, 3, 8), True)
    """
    act = get_activation(activation)
    params = ffn_params_of(params)
    x = check_input(x, params.d_model, params.dtype)
    partials = np.stack([act(x @ s.W1 + s.b1) @ s.W2 for s in shard_ffn(params, n_devices)])
    return ShardedRun(partials, partials.sum(axis=0) + params.b2)


def row_split_ffn(x, params, n_devices: int, activation: str = "relu") -> np.ndarray:
    """The split that does not work: W1 by rows (the input's features), the activation before the sum.

    Device ``i`` holds rows ``i·d/p`` to ``(i+1)·d/p`` of W1 and the same
    slice of the input, so it has only a partial pre-activation
    ``x_i W1_i`` (device 0 adds ``b1``). Applying the activation to each
    partial and summing afterwards gives ``Σ act(x_i W1_i)``, which differs
    from ``act(Σ x_i W1_i)`` unless the activation is linear: this split must
    sum the pre-activations (``d_ff`` numbers per token) before the
    activation. ``n_devices`` must divide ``d_model``.

    >>> from ffnbook.feedforward import ffn, init_ffn_params
    >>> p, x = init_ffn_params(8, 16, seed=0), np.linspace(-1, 1, 8)
    >>> bool(np.allclose(row_split_ffn(x, p, 2, "identity"), ffn(x, *p, activation="identity")))
    True
    >>> bool(np.allclose(row_split_ffn(x, p, 2, "relu"), ffn(x, *p, activation="relu")))
    False
    """
    act = get_activation(activation)
    params = ffn_params_of(params)
    x = check_input(x, params.d_model, params.dtype)
    blocks = _blocks(params.d_model, n_devices, "d_model")
    hidden = sum(act(x[..., b] @ params.W1[b, :] + (params.b1 if i == 0 else 0.0)) for i, b in enumerate(blocks))
    return hidden @ params.W2 + params.b2


#: How a gated FFN's gate and up projections are packed into one matrix, as kernels fuse them.
PACKINGS = ("concatenated", "interleaved")


def pack_gate_up(params, packing: str) -> np.ndarray:
    """The gate matrix ``W`` and up matrix ``V`` of a gated FFN as one ``(d_model, 2·d_ff)`` matrix.

    ``"concatenated"``: ``[W | V]``, the gates of all units, then the ups
    (Megatron-Core's fused SwiGLU chunks its input into these two halves).
    ``"interleaved"``: gate and up of unit ``j`` in columns ``2j`` and
    ``2j+1`` (gpt-oss's ``swiglu`` reads ``x[..., ::2]`` and ``x[..., 1::2]``).

    >>> from ffnbook.gated import init_gated_params
    >>> pack_gate_up(init_gated_params(4, 3), "interleaved").shape
    (4, 6)
    """
    params = gated_params_of(params)
    require_choice(packing, "packing", PACKINGS)
    if packing == "concatenated":
        return np.concatenate([params.W, params.V], axis=1)
    packed = np.empty((params.d_model, 2 * params.d_ff), dtype=params.dtype)
    packed[:, 0::2], packed[:, 1::2] = params.W, params.V
    return packed


def _unpack_gate_up(block: np.ndarray, packing: str) -> tuple[np.ndarray, np.ndarray]:
    """Read a device's block of a packed matrix as that packing's layout, gates and ups."""
    if packing == "concatenated":
        half = block.shape[1] // 2
        return block[:, :half], block[:, half:]
    return block[:, 0::2], block[:, 1::2]


def tensor_parallel_gated_ffn(x, params, n_devices: int, activation: str = "silu",
                              packing: str | None = None) -> ShardedRun:
    """A gated FFN over ``n_devices``: gate and up split by the same column blocks, W2 by rows.

    With ``packing=None`` each device takes the same block of units from ``W``
    and from ``V``, and the result is the gated FFN's output. With a packing
    of :data:`PACKINGS`, each device takes a contiguous block of the packed
    matrix (as a framework that splits one fused weight would) and reads it
    in that packing's layout: interleaved, its block holds gate and up of the
    same units and the result is right; concatenated, device 0 holds only
    gates and the last device only ups, and the result is wrong for more than
    one device.

    >>> from ffnbook.gated import gated_ffn, init_gated_params
    >>> p, x = init_gated_params(8, 12, seed=0), np.linspace(-1, 1, 8)
    >>> want = gated_ffn(x, *p)
    >>> [bool(np.allclose(tensor_parallel_gated_ffn(x, p, 2, packing=k).output, want)) for k in (None, *PACKINGS)]
    [True, False, True]
    """
    act = get_gate_activation(activation)
    params = gated_params_of(params)
    x = check_input(x, params.d_model, params.dtype)
    blocks = _blocks(params.d_ff, n_devices)
    if packing is None:
        pairs = [(params.W[:, b], params.V[:, b]) for b in blocks]
    else:
        packed = pack_gate_up(params, packing)
        pairs = [_unpack_gate_up(packed[:, 2 * b.start: 2 * b.stop], packing) for b in blocks]
    partials = np.stack([(act(x @ W) * (x @ V)) @ params.W2[b, :] for (W, V), b in zip(pairs, blocks)])
    return ShardedRun(partials, partials.sum(axis=0))


class AllReduce(NamedTuple):
    """The result of a ring all-reduce and what it cost."""

    result: np.ndarray  #: ``(p, n)``: every device's copy of the sum
    sent_per_device: int  #: numbers each device sent
    steps: int  #: communication steps (each device sends one chunk per step)


def ring_all_reduce(vectors) -> AllReduce:
    """Sum ``p`` devices' vectors so that each ends with the total, around a ring.

    The vectors are cut into ``p`` chunks. In ``p − 1`` steps of a
    reduce-scatter each device passes one chunk to its neighbour, which adds
    it to its own, until device ``i`` holds the full sum of one chunk; in
    ``p − 1`` steps of an all-gather the summed chunks travel on around the
    ring. Each device sends ``2(p − 1)`` chunks, ``2(p − 1)/p`` of the vector
    when ``p`` divides its length, which is as little as any all-reduce can
    send (Patarasuk and Yuan, 2009).

    >>> r = ring_all_reduce(np.arange(12.0).reshape(3, 4))
    >>> r.result[0].tolist(), r.sent_per_device, r.steps
    ([12.0, 15.0, 18.0, 21.0], 6, 4)
    """
    vectors = as_float_array(vectors, "vectors", finite=True, ndim=2)
    p, n = vectors.shape
    if p == 0:
        raise ValueError(f"vectors must hold one row per device, at least one, got shape {vectors.shape}")
    chunks = np.array_split(np.arange(n), p)
    held = [v.copy() for v in vectors]
    sent = [0] * p
    for step in range(p - 1):  # reduce-scatter: device i sends chunk (i - step) to device i + 1
        outgoing = [(i, (i - step) % p, held[i][chunks[(i - step) % p]].copy()) for i in range(p)]
        for i, c, values in outgoing:
            held[(i + 1) % p][chunks[c]] += values
            sent[i] += values.size
    for step in range(p - 1):  # all-gather: device i passes on the summed chunk (i + 1 - step)
        outgoing = [(i, (i + 1 - step) % p, held[i][chunks[(i + 1 - step) % p]].copy()) for i in range(p)]
        for i, c, values in outgoing:
            held[(i + 1) % p][chunks[c]] = values
            sent[i] += values.size
    return AllReduce(np.stack(held), max(sent), 2 * (p - 1))


class TensorParallelCost(NamedTuple):
    """The communication of one FFN, per token, on ``n_devices`` devices, against its arithmetic."""

    model: str
    n_devices: int
    values_per_token: int  #: numbers all-reduced per token (the output, d_model of them)
    bytes_sent_per_device: float  #: by a ring all-reduce, per token, in the dtype
    ffn_flops_per_device: float  #: the FFN's multiply-adds times two, per token, one device's share
    flops_per_byte: float  #: ffn_flops_per_device / bytes_sent_per_device


def tensor_parallel_cost(model, n_devices: int, dtype: str = "bfloat16") -> TensorParallelCost:
    """What Megatron's split of one of ``model``'s FFNs costs per token on ``n_devices`` devices.

    The forward pass all-reduces ``d_model`` numbers per token (the
    backward pass one more of the same size); a ring sends ``2(p − 1)/p`` of
    them from each device. Each device does ``1/p`` of the FFN's arithmetic,
    ``2·d_model·d_ff`` FLOPs per matrix (three matrices gated, two classic), of
    the dense FFN; a mixture of experts is split differently (by experts) and
    is refused.

    >>> from ffnbook.models import get_model
    >>> c = tensor_parallel_cost(get_model("Llama-2 70B"), 8)
    >>> c.values_per_token, c.bytes_sent_per_device  # 8192 numbers of 2 bytes, 7/4 of them
    (8192, 28672.0)
    """
    model = check_model(model)
    if model.is_moe:
        raise ValueError(f"model {model.name} is a mixture of experts, whose experts are split across "
                         "devices by expert, not by hidden unit; choose a dense model")
    require_choice(dtype, "dtype", BYTES_PER_VALUE)
    p = require_positive_int(n_devices, "n_devices")
    if model.d_ff_dense % p:
        raise ValueError(f"n_devices must divide {model.name}'s d_ff={model.d_ff_dense}, got {p}")
    values = model.d_model
    sent = 2 * (p - 1) / p * values * BYTES_PER_VALUE[dtype]
    flops = (3 if model.gated else 2) * 2 * model.d_model * model.d_ff_dense / p
    return TensorParallelCost(model.name, p, values, float(sent), float(flops),
                              float(flops / sent) if sent else float("inf"))


def glu_elementwise_values(d_ff: int, fused: bool) -> int:
    """Numbers a gated FFN's elementwise step reads and writes in memory per token.

    From the two projections ``a`` (gate) and ``b`` (up), both ``d_ff`` wide,
    to ``act(a) ⊙ b``. Unfused, one kernel writes ``act(a)`` and a second
    reads it back with ``b`` and writes the product: 5·d_ff. A fused kernel
    reads ``a`` and ``b`` and writes the product: 3·d_ff.

    >>> glu_elementwise_values(14336, fused=False), glu_elementwise_values(14336, fused=True)
    (71680, 43008)
    """
    d_ff = require_positive_int(d_ff, "d_ff")
    return (3 if require_bool(fused, "fused") else 5) * d_ff


def split_equals_whole(x, params, n_devices: int, activation: str = "relu") -> float:
    """The largest difference between Megatron's split and the whole FFN (rounding only).

    >>> from ffnbook.feedforward import init_ffn_params
    >>> split_equals_whole(np.ones((2, 8)), init_ffn_params(8, 32), 8, "gelu") < 1e-12
    True
    """
    params = ffn_params_of(params)
    whole = ffn(x, *params, activation=activation)
    return float(np.max(np.abs(tensor_parallel_ffn(x, params, n_devices, activation).output - whole), initial=0.0))


def gated_split_error(x, params, n_devices: int, packing: str | None = None, activation: str = "silu") -> float:
    """The largest difference between a split gated FFN (:func:`tensor_parallel_gated_ffn`) and the whole."""
    params = gated_params_of(params)
    whole = gated_ffn(x, *params, activation=activation)
    run = tensor_parallel_gated_ffn(x, params, n_devices, activation, packing)
    return float(np.max(np.abs(run.output - whole), initial=0.0))
