"""How position reaches the FFN: added to the residual stream, or only inside attention.

The FFN has no position input: it maps each vector to a vector. Whether its
input carries position information depends on where the model puts it.

* **Absolute position embeddings** add a vector per position to each token's
  embedding before the first block: the sinusoidal table of the original
  transformer (:func:`sinusoidal_table`) or a learned table as in GPT-2 and
  BERT (:func:`learned_table` draws a random stand-in). The residual stream, and
  so every FFN's input, then depends on the absolute position.
* **Rotary embeddings** (RoPE, :func:`rope`) rotate queries and keys by angles
  proportional to their positions, **ALiBi** (:func:`alibi_bias`) adds a
  distance penalty to the attention scores, and **T5's relative bias**
  (:func:`t5_bias`) adds a learned scalar per head and bucket of offsets. All
  act only inside attention and depend only on *relative* positions, so the
  residual stream carries position only through what attention wrote into it.
* **No positional encoding** at all (NoPE). With a causal mask, attention can
  still tell positions apart: a token averages over as many earlier tokens as
  precede it (:func:`predecessor_experiment`).

:func:`first_ffn_output` runs a one-block pre-norm model and returns what its
FFN produces; :func:`shift_experiment` moves the same tokens to later
positions and reports how the FFN's output for the last token changes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import (
    as_float_array,
    as_index_array,
    require_bool,
    require_finite,
    require_index,
    require_instance,
    require_nonnegative_int,
    require_positive_int,
    require_positive_number,
    require_seed,
    require_sequence,
)
from .activations import get_activation
from .attention import AttentionParams, attend, check_attention_params, merge_heads, split_heads
from .feedforward import FFNParams, check_params, ffn
from .plotting import OTHER_COLOURS, BookFigure, new_figure, styled

#: The ways :func:`first_ffn_output` can give the model positions, and where each acts.
POSITION_METHODS = {
    "learned": "a learned vector per position, added to the token embedding",
    "sinusoidal": "a fixed sinusoidal vector per position, added to the token embedding",
    "rope": "queries and keys rotated by position, inside attention",
    "alibi": "a distance penalty added to the attention scores",
    "t5": "a learned scalar per head and offset bucket, added to the attention scores",
    "none": "no position information at all",
}
#: Methods that add a position vector to the residual stream before the first block.
ABSOLUTE_METHODS = ("learned", "sinusoidal")


def _positions(positions, name: str = "positions") -> np.ndarray:
    p = as_index_array(positions, name, what="integers", ndim=1)
    if p.size == 0:
        raise ValueError(f"{name} must hold at least one position, got none")
    return p


def sinusoidal_table(n_positions: int, d_model: int) -> np.ndarray:
    """The original transformer's position encodings, shape ``(n_positions, d_model)``.

    Row ``pos`` holds ``sin(pos / 10000^(2i/d_model))`` in column ``2i`` and
    ``cos(pos / 10000^(2i/d_model))`` in column ``2i + 1``.

    >>> table = sinusoidal_table(4, 6)
    >>> table.shape, table[0].tolist()
    ((4, 6), [0.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    """
    n_positions = require_positive_int(n_positions, "n_positions")
    d_model = require_positive_int(d_model, "d_model")
    if d_model % 2:
        raise ValueError(f"d_model must be even for sine/cosine pairs, got {d_model}")
    pos = np.arange(n_positions)[:, None]
    freq = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    table = np.empty((n_positions, d_model))
    table[:, 0::2] = np.sin(pos * freq)
    table[:, 1::2] = np.cos(pos * freq)
    return table


def learned_table(n_positions: int, d_model: int, *, seed: int = 0) -> np.ndarray:
    """A stand-in for a trained position table: standard-normal rows, reproducible from ``seed``.

    A real model learns these rows; for the question "does the FFN's input
    depend on the position?" any distinct rows give the same answer.
    """
    n_positions = require_positive_int(n_positions, "n_positions")
    d_model = require_positive_int(d_model, "d_model")
    return np.random.default_rng([require_seed(seed), n_positions]).standard_normal((n_positions, d_model))


def rope(t, positions, base: float = 10000.0) -> np.ndarray:
    """Rotate consecutive feature pairs of ``t`` by position-dependent angles (RoPE).

    ``t`` has shape ``(..., T, d_head)`` with ``d_head`` even and ``positions``
    gives the ``T`` positions. Pair ``(2i, 2i+1)`` at position ``p`` turns by the
    angle ``p · base^(-2i/d_head)``. A rotation keeps lengths, and the dot
    product of a query rotated for ``p`` and a key rotated for ``p'`` depends on
    ``p - p'`` only.

    >>> v = np.array([[1.0, 0.0]])
    >>> np.round(rope(v, [1], base=1.0), 6).tolist()  # turned by one radian
    [[0.540302, 0.841471]]
    """
    t = as_float_array(t, "t", finite=True)
    base = require_positive_number(base, "base")
    p = _positions(positions)
    if t.ndim < 2 or t.shape[-2] != p.size or t.shape[-1] % 2:
        raise ValueError(f"t must have shape (..., {p.size}, even d_head), got {t.shape}")
    d_head = t.shape[-1]
    angle = p[:, None] * base ** (-np.arange(0, d_head, 2) / d_head)  # (T, d_head/2)
    cos, sin = np.cos(angle), np.sin(angle)
    even, odd = t[..., 0::2], t[..., 1::2]
    out = np.empty_like(t)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's per-head slopes: the geometric sequence ``2^(-8h/n_heads)``, ``h = 1..n_heads``.

    >>> alibi_slopes(8).tolist()[:3]
    [0.5, 0.25, 0.125]
    """
    n_heads = require_positive_int(n_heads, "n_heads")
    return 2.0 ** (-8.0 * np.arange(1, n_heads + 1) / n_heads)


def alibi_bias(positions, n_heads: int) -> np.ndarray:
    """ALiBi's score penalty, shape ``(n_heads, T, T)``: ``-slope · (p_query - p_key)``.

    Only the distance between the two positions enters, never where they are.
    """
    p = _positions(positions).astype(float)
    distance = p[:, None] - p[None, :]
    return -alibi_slopes(n_heads)[:, None, None] * distance


def t5_relative_bucket(offset, *, bidirectional: bool = False, num_buckets: int = 32,
                       max_distance: int = 128) -> np.ndarray:
    """T5's bucket for each key-minus-query offset: exact near zero, logarithmic further out.

    T5 adds to every attention score a learned scalar chosen by the offset
    between key and query, one per head and bucket, with bucket ranges that
    grow logarithmically up to ``max_distance``; beyond it all offsets share a
    bucket (Raffel et al. 2020, §2.1, 32 buckets up to 128). As in T5's code,
    half of the buckets (``num_buckets // 2``, per direction) hold one offset
    each and the other half share out the distances up to ``max_distance`` on a
    log scale. A causal decoder (``bidirectional=False``) uses the distance to
    earlier keys only (later ones are masked); an encoder splits the buckets
    between the two directions.

    >>> t5_relative_bucket([0, -1, -15, -16, -20, -127, -128, -1000]).tolist()
    [0, 1, 15, 16, 17, 31, 31, 31]
    >>> t5_relative_bucket([-3, 3], bidirectional=True).tolist()
    [3, 19]
    """
    bidirectional = require_bool(bidirectional, "bidirectional")
    num_buckets = require_positive_int(num_buckets, "num_buckets")
    max_distance = require_positive_int(max_distance, "max_distance")
    offset = np.asarray(offset)
    if not np.issubdtype(offset.dtype, np.integer):
        raise TypeError(f"offset must hold integers, got dtype {offset.dtype}")
    buckets = num_buckets // 2 if bidirectional else num_buckets
    exact = buckets // 2
    if exact < 1 or max_distance <= exact:
        raise ValueError(f"need num_buckets >= {4 if bidirectional else 2} and max_distance above "
                         f"the {exact} exact buckets, got num_buckets={num_buckets}, max_distance={max_distance}")
    if bidirectional:
        base = np.where(offset > 0, buckets, 0)
        distance = np.abs(offset)
    else:
        base = np.zeros_like(offset)
        distance = np.maximum(-offset, 0)
    scaled = np.log(np.maximum(distance, exact) / exact) / np.log(max_distance / exact) * (buckets - exact)
    far = np.minimum(exact + scaled.astype(int), buckets - 1)
    return base + np.where(distance < exact, distance, far)


def t5_bias(positions, table, *, bidirectional: bool = False, max_distance: int = 128) -> np.ndarray:
    """T5's score bias, shape ``(n_heads, T, T)``: ``table[h, bucket(p_key - p_query)]``.

    ``table`` holds one learned scalar per head and bucket, shape
    ``(n_heads, num_buckets)``; T5 shares it across all layers. Like ALiBi's
    penalty it depends on the two positions only through their offset.
    """
    p = _positions(positions)
    table = as_float_array(table, "table")
    if table.ndim != 2:
        raise ValueError(f"table must have shape (n_heads, num_buckets), got {table.shape}")
    require_finite(table, "table")
    offsets = p[None, :] - p[:, None]  # key minus query
    buckets = t5_relative_bucket(offsets, bidirectional=bidirectional, num_buckets=table.shape[1],
                                 max_distance=max_distance)
    return table[:, buckets]


def attention_with_positions(x, params: AttentionParams, n_heads: int, positions, method: str,
                             *, relative_table=None, causal: bool = True) -> np.ndarray:
    """Multi-head self-attention of ``x`` (``(T, d_model)``) with position ``method``, causal by default.

    ``"rope"`` rotates queries and keys, ``"alibi"`` and ``"t5"`` bias the
    scores (``"t5"`` with ``relative_table``, one scalar per head and bucket);
    every other method leaves attention itself free of positions (absolute
    methods act on ``x`` before it arrives here).
    """
    _method(method)
    causal = require_bool(causal, "causal")
    params, d_model = check_attention_params(params, n_heads)
    x = as_float_array(x, "x", finite=True)
    if x.ndim != 2 or x.shape[-1] != d_model or x.shape[0] == 0:
        raise ValueError(f"x must have shape (seq_len >= 1, {d_model}), got {x.shape}")
    p = _positions(positions)
    if p.size != x.shape[0]:
        raise ValueError(f"positions must give one position per token of x: x has {x.shape[0]} tokens, "
                         f"positions {p.size}")
    q, k, v = (split_heads(x @ w, n_heads) for w in (params.Wq, params.Wk, params.Wv))
    bias = None
    if method == "rope":
        q, k = rope(q, p), rope(k, p)
    elif method == "alibi":
        bias = alibi_bias(p, n_heads)
    elif method == "t5":
        if relative_table is None:
            raise ValueError('method "t5" needs relative_table, one scalar per head and bucket')
        relative_table = as_float_array(relative_table, "relative_table", finite=True)
        if relative_table.ndim != 2 or relative_table.shape[0] != n_heads:
            raise ValueError(f"relative_table must have shape ({n_heads}, num_buckets), got {relative_table.shape}")
        bias = t5_bias(p, relative_table, bidirectional=not causal)
    return merge_heads(attend(q, k, v, score_bias=bias, causal=causal)) @ params.Wo


def _method(method: str) -> str:
    if method not in POSITION_METHODS:
        raise ValueError(f"unknown position method {method!r}; expected one of: {', '.join(POSITION_METHODS)}")
    return method


def _rms_norm(t: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    return t / np.sqrt(np.mean(t**2, axis=-1, keepdims=True) + eps)


class TinyModel(NamedTuple):
    """The embedding tables and first block of a small decoder, for position experiments."""

    token_embeddings: np.ndarray  #: ``(vocab, d_model)``
    position_tables: dict  #: ``{"learned": (n_positions, d_model), "sinusoidal": ...}``
    attention: AttentionParams
    ffn: FFNParams
    n_heads: int
    #: T5's relative-position scalars, ``(n_heads, 32)``: a random stand-in for the learned ones.
    relative_table: np.ndarray | None = None


def tiny_model(vocab: int = 50, d_model: int = 64, d_ff: int = 256, n_heads: int = 4,
               n_positions: int = 128, seed: int = 0) -> TinyModel:
    """Random weights for :func:`first_ffn_output`, reproducible from ``seed``."""
    from .attention import init_attention_params
    from .feedforward import init_ffn_params

    vocab = require_positive_int(vocab, "vocab")
    d_model = require_positive_int(d_model, "d_model")
    n_heads = require_positive_int(n_heads, "n_heads")
    seed = require_seed(seed)
    if d_model % n_heads:
        raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
    if (d_model // n_heads) % 2:
        raise ValueError(f"RoPE needs an even head width, got d_model/n_heads = {d_model}/{n_heads}")
    rng = np.random.default_rng([seed, 1])
    return TinyModel(
        token_embeddings=rng.standard_normal((vocab, d_model)),
        position_tables={"learned": learned_table(n_positions, d_model, seed=seed),
                         "sinusoidal": sinusoidal_table(n_positions, d_model)},
        attention=init_attention_params(d_model, seed=seed + 1),
        ffn=init_ffn_params(d_model, d_ff, seed=seed + 2),
        n_heads=n_heads,
        relative_table=rng.standard_normal((n_heads, 32)),
    )


def first_ffn_output(model: TinyModel, token_ids, start: int, method: str, activation: str = "gelu",
                     *, causal: bool = True) -> np.ndarray:
    """The first block's FFN output for tokens ``token_ids`` placed at ``start, start+1, ...``.

    The block is pre-norm, as in GPT-2 and LLaMA: ``h = x + Attn(N(x))`` and the
    FFN reads ``N(h)``, with ``N`` an RMS normalisation. ``x`` is the token
    embedding, plus the position table's row for the absolute methods.
    Attention is causal, as in a decoder, unless ``causal=False``.
    Returns shape ``(len(token_ids), d_model)``.
    """
    _method(method)
    require_instance(model, "model", TinyModel, "a TinyModel from ffnbook.positional.tiny_model")
    get_activation(activation)
    ids = _positions(token_ids, "token_ids")
    if (ids >= model.token_embeddings.shape[0]).any():
        raise ValueError(f"token_ids must be below the vocabulary size {model.token_embeddings.shape[0]}")
    start = require_nonnegative_int(start, "start")
    positions = np.arange(start, start + ids.size)
    x = model.token_embeddings[ids]
    if method in ABSOLUTE_METHODS:
        table = model.position_tables[method]
        if positions[-1] >= table.shape[0]:
            raise ValueError(f"start={start} puts the last token at position {positions[-1]}, beyond the "
                             f"{method} table's {table.shape[0]} rows")
        x = x + table[positions]
    h = x + attention_with_positions(_rms_norm(x), model.attention, model.n_heads, positions, method,
                                     relative_table=model.relative_table, causal=causal)
    params = check_params(*model.ffn)
    out = ffn(_rms_norm(h), *params, activation=activation)
    require_finite(out, "FFN output")
    return out


class ShiftResult(NamedTuple):
    """How the first FFN's output for the last token moved as the sequence was shifted."""

    method: str
    starts: list  #: the first position of the sequence in each run
    feature: list  #: one feature of the last token's FFN output, per start
    max_change: float  #: largest change of any feature, against the run at ``starts[0]``


def shift_experiment(model: TinyModel, token_ids, starts, method: str, feature: int = 0) -> ShiftResult:
    """Place the same tokens at each start position; track the last token's first-FFN output.

    With an absolute position table the FFN's input changes with the start,
    so its output does; with RoPE, ALiBi or T5's bias only relative positions
    enter, and shifting the whole sequence leaves the output unchanged up to
    rounding.
    """
    starts = [int(s) for s in _positions(starts, "starts")]
    require_instance(model, "model", TinyModel, "a TinyModel from ffnbook.positional.tiny_model")
    feature = require_index(feature, "feature", model.token_embeddings.shape[1], of="the model's features")
    outputs = [first_ffn_output(model, token_ids, s, method)[-1] for s in starts]
    change = max(float(np.max(np.abs(o - outputs[0]))) for o in outputs)
    return ShiftResult(method, starts, [float(o[feature]) for o in outputs], change)


@styled
def shift_figure(results: list[ShiftResult]) -> BookFigure:
    """One feature of the last token's first-FFN output against the sequence's start position.

    The description is the figure's alt text, with the measured ranges.
    """
    results = require_sequence(results, "results", expected="a list of ShiftResult",
                               item=lambda r, label: require_instance(r, label, ShiftResult))
    labels = {"learned": "learned table", "sinusoidal": "sinusoidal table", "rope": "RoPE",
              "alibi": "ALiBi", "t5": "T5 relative bias", "none": "no positions"}
    styles = ("-", "--", "-.", ":")
    fig = new_figure(7.0, 3.8)
    ax = fig.add_subplot()
    for i, r in enumerate(results):
        ax.plot(r.starts, r.feature, color=OTHER_COLOURS[i % len(OTHER_COLOURS)], linestyle=styles[i % 4],
                linewidth=2, label=labels.get(r.method, r.method))
    ax.set_xlabel("position of the sequence's first token")
    ax.set_ylabel("first FFN output, last token, one feature")
    ax.legend(loc="upper right")
    parts = []
    for r in results:
        lo, hi = min(r.feature), max(r.feature)
        if r.max_change > 1e-9:
            parts.append(f"for the {labels.get(r.method, r.method)} the curve wanders between "
                         f"{lo:.2f} and {hi:.2f}")
        else:
            parts.append(f"for {labels.get(r.method, r.method)} it is a flat line at {lo:.2f}")
    description = (
        "Line plot of one feature of the first FFN's output for the last token of the same "
        f"short sequence, as the sequence starts at positions {r.starts[0]} to {r.starts[-1]}: "
        + "; ".join(parts) + "."
    )
    return BookFigure(fig, description)


class PredecessorCount(NamedTuple):
    """The first FFN's outputs for one token repeated after a different first token, no positions."""

    n_copies: int  #: how many times the repeated token follows the first one
    causal_outputs: np.ndarray  #: ``(n_copies, d_model)``: the copies' FFN outputs with a causal mask
    causal_spread: float  #: largest difference between two copies' outputs, with the mask
    bidirectional_spread: float  #: the same without the mask (every copy sees the whole sequence)


def predecessor_experiment(model: TinyModel, first_id: int, repeated_id: int, n_copies: int,
                           activation: str = "gelu") -> PredecessorCount:
    """Can a model with no positional encoding tell the copies of a repeated token apart?

    The sequence is ``first_id`` followed by ``n_copies`` copies of
    ``repeated_id``, run through the first block with no position information
    at all (method ``"none"``). Every copy has the same input vector. With a
    causal mask, copy ``t`` attends to the first token and to ``t`` copies, so
    the first token's share of its attention falls as ``t`` grows and the
    copies' FFN outputs differ: the count of predecessors is a position signal.
    Without the mask every copy attends to the same set and gets the same output.
    """
    require_instance(model, "model", TinyModel, "a TinyModel from ffnbook.positional.tiny_model")
    n_copies = require_positive_int(n_copies, "n_copies", maximum=4096)
    if n_copies < 2:
        raise ValueError(f"n_copies must be at least 2 to compare copies, got {n_copies}")
    vocab = model.token_embeddings.shape[0]
    first_id = require_index(first_id, "first_id", vocab, of="the model's token ids")
    repeated_id = require_index(repeated_id, "repeated_id", vocab, of="the model's token ids")
    if first_id == repeated_id:
        raise ValueError(f"first_id and repeated_id must differ, got {first_id} twice")
    ids = [first_id] + [repeated_id] * n_copies

    def spread(outputs):
        copies = outputs[1:]
        return float(np.max(np.abs(copies[:, None, :] - copies[None, :, :])))

    causal = first_ffn_output(model, ids, 0, "none", activation, causal=True)
    bidirectional = first_ffn_output(model, ids, 0, "none", activation, causal=False)
    return PredecessorCount(n_copies, causal[1:], spread(causal), spread(bidirectional))
