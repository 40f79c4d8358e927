"""A hand-built FFN that stores key→value pairs: the key–value reading made concrete.

Geva et al. (2021) read an FFN ``FFN(x) = φ(x W1 + b1) W2 + b2`` as a memory.
In ffnbook's row-vector convention, hidden unit ``i`` computes the dot product
of ``x`` with **column** ``i`` of ``W1`` (its *key*) and, once the activation
has decided how strongly it fires, adds that much of **row** ``i`` of ``W2``
(its *value*) to the output. The output is a weighted sum of values.

This module builds such an FFN by hand, with no training: unit-length keys go
into the columns of ``W1``, values into the rows of ``W2``, and a negative bias
makes a ReLU unit fire only when the input matches its key closely. It is a
toy that shows the mechanism; trained FFNs are not constructed like this.

Beside it stand the classic linear associative memories, which store the same
pairs in one ``d_model × d_model`` matrix (least squares and the correlation
matrix), and two ways to rewrite one stored value: the smallest rank-one change
to ``W2`` and ROME's covariance-weighted rank-one change (Meng et al., 2022).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ._checks import (
    as_float_array,
    describe,
    lookup,
    require_bundle,
    require_choice,
    require_finite,
    require_index,
    require_instance,
    require_number,
    require_positive_int,
    require_positive_number,
    require_seed,
    require_sequence,
    require_shape,
)
from .display import readable
from .feedforward import FFNParams, check_input, ffn, ffn_params_of
from .plotting import PALETTE, BookFigure, new_figure, styled


class Memories(NamedTuple):
    """Pairs to store: ``keys[i]`` should recall ``values[i]``."""

    keys: np.ndarray  #: shape (n_memories, d_model), unit-length rows
    values: np.ndarray  #: shape (n_memories, d_model)


class Retrieval(NamedTuple):
    """What the memory FFN did with a batch of queries."""

    preactivation: np.ndarray  #: ``x @ W1 + b1``, shape (n_queries, n_memories)
    hidden: np.ndarray  #: hidden activations after the ReLU, shape (n_queries, n_memories)
    output: np.ndarray  #: FFN output, shape (n_queries, d_model)


def _check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating)):
        raise TypeError(f"threshold must be a number in (0, 1), got {type(threshold).__name__}")
    if not 0.0 < float(threshold) < 1.0:
        raise ValueError(f"threshold must lie strictly between 0 and 1, got {threshold}")
    return float(threshold)


def _check_noise(noise) -> float:
    if isinstance(noise, bool) or not isinstance(noise, (int, float, np.floating, np.integer)):
        raise TypeError(f"noise must be a non-negative number, got {type(noise).__name__}")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite non-negative number, got {noise}")
    return float(noise)


def random_memories(n_memories: int, d_model: int, *, seed: int = 0) -> Memories:
    """Random unit-length keys and random values, reproducible from ``seed``.

    Values are standard normal vectors scaled to unit length as well, so that
    every stored value has the same size.

    >>> m = random_memories(8, 32, seed=0)
    >>> m.keys.shape, m.values.shape
    ((8, 32), (8, 32))
    >>> bool(np.allclose(np.linalg.norm(m.keys, axis=1), 1.0))
    True
    """
    n_memories = require_positive_int(n_memories, "n_memories")
    d_model = require_positive_int(d_model, "d_model")
    rng = np.random.default_rng(require_seed(seed))
    keys = rng.standard_normal((n_memories, d_model))
    values = rng.standard_normal((n_memories, d_model))
    keys /= np.linalg.norm(keys, axis=1, keepdims=True)
    values /= np.linalg.norm(values, axis=1, keepdims=True)
    return Memories(keys, values)


def _check_memories(keys, values) -> tuple[np.ndarray, np.ndarray]:
    keys = as_float_array(keys, "keys")
    values = as_float_array(values, "values")
    if keys.ndim != 2:
        raise ValueError(f"keys must have shape (n_memories, d_model), got {keys.shape}")
    if values.shape != keys.shape:
        raise ValueError(
            f"values must have the same shape as keys {keys.shape}, got {values.shape}"
        )
    if keys.dtype != values.dtype:
        raise TypeError(f"keys and values must share one dtype, got {keys.dtype} and {values.dtype}")
    require_finite(keys, "keys")
    require_finite(values, "values")
    norms = np.linalg.norm(keys, axis=1)
    if not np.allclose(norms, 1.0, atol=1e-6):
        worst = int(np.argmax(np.abs(norms - 1.0)))
        raise ValueError(
            f"keys must have unit length; key {worst} has length {norms[worst]:.6g}"
        )
    return keys, values


def _memories_of(memories) -> tuple[np.ndarray, np.ndarray]:
    """The keys and values of one ``memories`` argument (Memories or a pair), checked."""
    return _check_memories(*require_bundle(memories, "memories", Memories._fields, "Memories"))


def build_memory_ffn(keys, values, *, threshold: float = 0.5) -> FFNParams:
    """FFN weights that map each key to its value.

    Parameters
    ----------
    keys : array of shape ``(n_memories, d_model)`` with unit-length rows
    values : array of shape ``(n_memories, d_model)``, the stored values
    threshold : the match ``key · x`` a unit must exceed to fire, in (0, 1)

    Returns
    -------
    FFNParams with ``d_ff = n_memories``, for ``ffn(..., activation="relu")``.
    Hidden unit ``i`` computes ``relu((keys[i] · x - threshold) / (1 - threshold))``:
    zero below the threshold and exactly 1 when ``x`` is ``keys[i]`` itself.
    So ``W1`` holds the keys as its **columns** and ``W2`` the values as its
    **rows**.

    >>> m = random_memories(4, 16, seed=0)
    >>> p = build_memory_ffn(*m)
    >>> bool(np.allclose(p.W1[:, 2] * 0.5, m.keys[2])), bool(np.array_equal(p.W2[2], m.values[2]))
    (True, True)
    >>> build_memory_ffn(m.keys * 2, m.values)
    Traceback (most recent call last):
    ...
    ValueError: keys must have unit length; key 0 has length 2
    """
    keys, values = _check_memories(keys, values)
    threshold = _check_threshold(threshold)
    gain = 1.0 / (1.0 - threshold)  # rescales so a perfect match gives activation 1
    W1 = keys.T * gain
    b1 = np.full(keys.shape[0], -threshold * gain)
    W2 = values.copy()
    b2 = np.zeros(keys.shape[1])
    return FFNParams(W1, b1, W2, b2).astype(keys.dtype)


def retrieve(params: FFNParams, queries) -> Retrieval:
    """Run the memory FFN on ``queries`` (shape ``(n_queries, d_model)``) and expose its hidden layer.

    The output is what :func:`ffnbook.feedforward.ffn` computes with ReLU, the
    same products in the same order (the tests check they agree exactly),
    taken from the hidden layer computed here rather than computed twice; the
    hidden layer before and after the ReLU is returned alongside, so one can
    see which memories fired.

    >>> m = random_memories(4, 16, seed=0)
    >>> r = retrieve(build_memory_ffn(*m), m.keys[1:2])
    >>> [round(float(h), 6) for h in r.hidden[0]]
    [0.0, 1.0, 0.0, 0.0]
    """
    params = ffn_params_of(params)
    queries = check_input(queries, params.d_model, params.dtype, "queries")
    if queries.ndim != 2:
        raise ValueError(f"queries must have shape (n_queries, d_model), got {queries.shape}")
    preactivation = queries @ params.W1 + params.b1
    hidden = np.maximum(preactivation, 0.0)
    return Retrieval(preactivation, hidden, hidden @ params.W2 + params.b2)


def noisy_queries(keys, noise: float, *, seed: int = 0) -> np.ndarray:
    """Each key plus a random vector of length ``noise`` (relative to the unit key).

    The noise directions depend only on ``seed`` and the shape, so the same
    seed at a larger ``noise`` moves every query further along the same line.

    >>> k = random_memories(3, 8, seed=0).keys
    >>> q = noisy_queries(k, 0.5, seed=1)
    >>> bool(np.allclose(np.linalg.norm(q - k, axis=1), 0.5))
    True
    """
    keys = as_float_array(keys, "keys", finite=True)
    if keys.ndim != 2:
        raise ValueError(f"keys must have shape (n_memories, d_model), got {keys.shape}")
    noise = _check_noise(noise)
    directions = np.random.default_rng(require_seed(seed)).standard_normal(keys.shape)
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return (keys + noise * directions).astype(keys.dtype)


def decode(output, values) -> np.ndarray:
    """Index of the stored value each output row points to (largest cosine); -1 for a zero output.

    A zero output means no memory fired, which counts as a failed retrieval.

    >>> decode(np.array([[0.0, 2.0], [0.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])).tolist()
    [1, -1]
    """
    output = as_float_array(output, "output", finite=True)
    values = as_float_array(values, "values", finite=True)
    if output.ndim != 2 or values.ndim != 2 or output.shape[1] != values.shape[1]:
        raise ValueError(
            f"output (n, d) and values (m, d) must share d, got {output.shape} and {values.shape}"
        )
    if values.shape[0] == 0:
        raise ValueError("values must hold at least one stored value, got none")
    lengths = np.linalg.norm(values, axis=1, keepdims=True)
    if (lengths == 0).any():
        raise ValueError(f"values must have non-zero rows (a zero value has no direction), row "
                         f"{int(np.flatnonzero(lengths == 0)[0])} is zero")
    unit_values = values / lengths
    cosines = output @ unit_values.T
    best = np.argmax(cosines, axis=1)
    best[np.linalg.norm(output, axis=1) == 0.0] = -1
    return best


def retrieval_accuracy(keys, values, noise: float, *, threshold: float = 0.5, seed: int = 0) -> float:
    """Fraction of stored pairs recalled correctly when every key is queried with ``noise`` added.

    Builds the memory FFN, queries it with :func:`noisy_queries` and checks
    with :func:`decode` that each output points to the right value.

    >>> m = random_memories(16, 64, seed=0)
    >>> retrieval_accuracy(*m, 0.0)
    1.0
    """
    keys, values = _check_memories(keys, values)
    params = build_memory_ffn(keys, values, threshold=threshold)
    queries = noisy_queries(keys, noise, seed=seed)
    found = decode(retrieve(params, queries).output, values)
    return float(np.mean(found == np.arange(keys.shape[0])))


@readable
class QueryExample(NamedTuple):
    """One noisy query of one stored key, summarised for the page."""

    slot: int  #: which memory was queried
    n_fired: int  #: how many hidden units were non-zero
    fired: tuple  #: their indices
    activation: float  #: the hidden activation of the queried slot
    cosine: float  #: cosine between the output and the stored value
    error_over_activation: float  #: largest absolute difference between the output and activation × value
    best_other_cosine: float  #: the largest cosine between the output and any *other* stored value


def query_example(memories: Memories, slot: int, noise: float, *, threshold: float = 0.5,
                  seed: int = 0) -> QueryExample:
    """Query memory ``slot`` with noise and report which units fired and what came out.

    >>> m = random_memories(16, 64, seed=0)
    >>> ex = query_example(m, 3, 0.0)
    >>> ex.fired, round(ex.activation, 12), round(ex.cosine, 12)
    ((3,), 1.0, 1.0)
    """
    keys, values = _memories_of(memories)
    n = keys.shape[0]
    slot = require_index(slot, "slot", n, of="the stored memories")
    params = build_memory_ffn(keys, values, threshold=threshold)
    query = noisy_queries(keys[slot : slot + 1], noise, seed=seed)
    r = retrieve(params, query)
    hidden, out = r.hidden[0], r.output[0]
    fired = tuple(int(i) for i in np.flatnonzero(hidden))
    value = values[slot]
    norm = np.linalg.norm(out)
    cosine = float(out @ value / (norm * np.linalg.norm(value))) if norm > 0 else 0.0
    others = np.delete(values, slot, axis=0)
    other_cosines = others @ out / (np.linalg.norm(others, axis=1) * norm) if norm > 0 else np.zeros(1)
    return QueryExample(
        slot=int(slot),
        n_fired=len(fired),
        fired=fired,
        activation=float(hidden[slot]),
        cosine=cosine,
        error_over_activation=float(np.max(np.abs(out - hidden[slot] * value))),
        best_other_cosine=float(np.max(other_cosines)),
    )


def accuracy_grid(d_model: int, memory_ratios: Sequence[float], noise_levels: Sequence[float], *,
                  threshold: float = 0.5, seed: int = 0) -> list[dict]:
    """Retrieval accuracy for each number of memories (as a multiple of ``d_model``) and noise level.

    Returns one row per ratio: ``{"ratio", "n_memories", "accuracy": [...]}``
    with accuracies in the order of ``noise_levels``.

    >>> rows = accuracy_grid(32, [0.5], [0.0])
    >>> rows[0]["n_memories"], rows[0]["accuracy"]
    (16, [1.0])
    """
    d_model = require_positive_int(d_model, "d_model")
    memory_ratios = require_sequence(memory_ratios, "memory_ratios", item=require_positive_number)
    noise_levels = require_sequence(noise_levels, "noise_levels",
                                    item=lambda v, label: require_number(v, label, low=0))
    threshold = _check_threshold(threshold)
    seed = require_seed(seed)
    rows = []
    for ratio in memory_ratios:
        n = int(round(float(ratio) * d_model))
        if n < 1:
            raise ValueError(f"memory ratio {ratio} gives fewer than one memory at d_model={d_model}")
        mem = random_memories(n, d_model, seed=seed)
        acc = [retrieval_accuracy(*mem, noise, threshold=threshold, seed=seed + 1)
               for noise in noise_levels]
        rows.append({"ratio": float(ratio), "n_memories": n, "accuracy": acc})
    return rows


def _accuracy_row(row, label: str, n_levels: int) -> dict:
    """One row of :func:`accuracy_grid`: a dict whose ``accuracy`` holds one share in [0, 1] per noise level."""
    if not isinstance(row, dict) or "accuracy" not in row:
        raise TypeError(f"{label} must be a row of accuracy_grid(), a dict with key 'accuracy', got {describe(row)}")
    accuracy = require_sequence(row["accuracy"], f"{label}['accuracy']",
                                item=lambda v, lab: require_number(v, lab, low=0, high=1))
    if len(accuracy) != n_levels:
        raise ValueError(f"{label}['accuracy'] needs one accuracy per noise level ({n_levels}), got {len(accuracy)}")
    return row


def noise_recalled_perfectly(rows: list[dict], noise_levels: Sequence[float]) -> float:
    """The largest noise level up to which every memory of :func:`accuracy_grid` recalls every pair.

    Returns the last level before the first accuracy below one (in the order of
    ``noise_levels``); ``noise_levels[0]`` must itself be recalled perfectly.

    >>> rows = [{"accuracy": [1.0, 1.0, 0.9]}, {"accuracy": [1.0, 0.8, 0.5]}]
    >>> noise_recalled_perfectly(rows, [0.0, 1.0, 2.0])
    0.0
    """
    noise_levels = require_sequence(noise_levels, "noise_levels",
                                    item=lambda v, label: require_number(v, label, low=0))
    rows = require_sequence(rows, "rows", expected="a list of accuracy_grid() rows",
                            item=lambda r, label: _accuracy_row(r, label, len(noise_levels)))
    perfect = None
    for j, noise in enumerate(noise_levels):
        if all(r["accuracy"][j] == 1.0 for r in rows):
            perfect = float(noise)
        else:
            break
    if perfect is None:
        raise ValueError("not every pair is recalled even at the first noise level")
    return perfect


# --- the same pairs in one matrix: linear associative memories ------------------------------


def _check_seed(seed, name: str = "seed") -> int:
    return require_seed(seed, name)


def least_squares_memory(keys, values, *, noise: float = 0.0) -> np.ndarray:
    """The matrix ``W`` (``d_model × d_model``) whose outputs ``keys @ W`` come closest to ``values``.

    With ``noise = 0`` this is ``W = K⁺ V`` (``K⁺`` the Moore–Penrose
    pseudo-inverse): the least total squared error ``‖K W − V‖²``, and among
    all maps with that error the smallest one. Meng et al. (2022, §3.1) model an
    MLP's output matrix as exactly this kind of linear associative memory.

    With ``noise > 0`` it is the map with the least *expected* squared error when
    every key arrives with a random vector of length ``noise`` added, in a
    uniformly random direction (as :func:`noisy_queries` makes them). Such a
    vector ``ε`` has ``E[εᵀε] = noise²/d_model · I``, so over ``n`` keys the
    expected error is ``‖K W − V‖² + n·noise²/d_model · ‖W‖²``, minimised by
    ``W = (KᵀK + λ I)⁻¹ KᵀV`` with ``λ = n·noise²/d_model`` (ridge regression).

    >>> m = random_memories(16, 32, seed=0)
    >>> W = least_squares_memory(*m)  # fewer keys than dimensions: stored exactly
    >>> bool(np.allclose(m.keys @ W, m.values))
    True
    """
    keys, values = _check_memories(keys, values)
    noise = _check_noise(noise)
    if noise == 0.0:
        return np.linalg.pinv(keys) @ values
    n, d_model = keys.shape
    ridge = n * noise**2 / d_model
    return np.linalg.solve(keys.T @ keys + ridge * np.eye(d_model, dtype=keys.dtype), keys.T @ values)


def correlation_memory(keys, values) -> np.ndarray:
    """The correlation-matrix memory ``W = Kᵀ V``: the sum over pairs of ``outer(key, value)``.

    Reading it with a stored key gives that key's value plus every other value
    weighted by its key's overlap with the query (Kohonen, 1972; Anderson,
    1972); with orthonormal keys the overlaps vanish and storage is exact.

    >>> q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((8, 8)))
    >>> values = np.random.default_rng(1).standard_normal((4, 8))
    >>> bool(np.allclose(q.T[:4] @ correlation_memory(q.T[:4], values), values))
    True
    """
    keys, values = _check_memories(keys, values)
    return keys.T @ values


def linear_recall(W, keys, values, noise: float, *, seed: int = 0) -> float:
    """Fraction of pairs a linear memory ``W`` recalls: each key, with ``noise`` added, times ``W``.

    The test is the hand-built FFN's (:func:`retrieval_accuracy`): a pair counts
    as recalled when the output is closer in direction to its own value than to
    any other stored value (:func:`decode`), with the same noisy queries for the
    same ``seed``.

    >>> m = random_memories(16, 32, seed=0)
    >>> linear_recall(correlation_memory(*m), *m, 0.0)
    1.0
    """
    keys, values = _check_memories(keys, values)
    W = as_float_array(W, "W", finite=True)
    d_model = keys.shape[1]
    require_shape(W, (d_model, d_model), "W")
    require_finite(W, "W")
    queries = noisy_queries(keys, noise, seed=seed)
    found = decode(queries @ W, values)
    return float(np.mean(found == np.arange(keys.shape[0])))


#: The memories :func:`recall_comparison` puts side by side, in the order it reports them.
MEMORY_NAMES = ("FFN memory", "least squares", "least squares for the noise", "correlation")


class RecallComparison(NamedTuple):
    """Recall of the same pairs by the hand-built FFN and by linear memories, over seeds."""

    d_model: int
    n_memories: tuple  #: pairs stored, one entry per ratio
    noise_levels: tuple
    seeds: tuple
    recall: dict  #: memory name → array of shape (ratios, noise levels, seeds)

    def mean(self, name: str) -> np.ndarray:
        """Mean recall over seeds, shape (ratios, noise levels)."""
        return lookup(self.recall, name, "memory").mean(axis=-1)

    def low(self, name: str) -> np.ndarray:
        """Lowest recall over seeds, shape (ratios, noise levels)."""
        return lookup(self.recall, name, "memory").min(axis=-1)

    def high(self, name: str) -> np.ndarray:
        """Highest recall over seeds, shape (ratios, noise levels)."""
        return lookup(self.recall, name, "memory").max(axis=-1)


def recall_comparison(d_model: int, memory_ratios: Sequence[float], noise_levels: Sequence[float], *,
                      threshold: float = 0.5, seeds: Sequence[int] = (0,)) -> RecallComparison:
    """Recall of every memory in :data:`MEMORY_NAMES` on the same pairs and the same noisy queries.

    For each seed ``s`` and ratio, the pairs are ``random_memories(n, d_model, seed=s)``
    and the queries ``noisy_queries(keys, noise, seed=s + 1)``, as in
    :func:`accuracy_grid`, so seed 0 reproduces that grid's FFN numbers. The
    linear memories are :func:`least_squares_memory` (fitted for exact keys),
    the same fitted for each noise level, and :func:`correlation_memory`.

    >>> c = recall_comparison(32, [0.5], [0.0], seeds=[0, 1])
    >>> c.n_memories, float(c.mean("FFN memory")[0, 0]), float(c.mean("least squares")[0, 0])
    ((16,), 1.0, 1.0)
    """
    d_model = require_positive_int(d_model, "d_model")
    threshold = _check_threshold(threshold)
    ratios = require_sequence(memory_ratios, "memory_ratios", item=require_positive_number)
    levels = require_sequence(noise_levels, "noise_levels", item=lambda v, label: require_number(v, label, low=0))
    seeds = require_sequence(seeds, "seeds", item=require_seed)
    sizes = []
    for ratio in ratios:
        n = int(round(ratio * d_model))
        if n < 1:
            raise ValueError(f"memory_ratios: {ratio:g} gives fewer than one memory at d_model={d_model}")
        sizes.append(n)
    recall = {name: np.zeros((len(ratios), len(levels), len(seeds))) for name in MEMORY_NAMES}
    for i, n in enumerate(sizes):
        for k, seed in enumerate(seeds):
            keys, values = random_memories(n, d_model, seed=seed)
            params = build_memory_ffn(keys, values, threshold=threshold)
            exact_fit = least_squares_memory(keys, values)
            correlation = correlation_memory(keys, values)
            target = np.arange(n)
            for j, noise in enumerate(levels):
                queries = noisy_queries(keys, noise, seed=seed + 1)
                noise_fit = exact_fit if noise == 0.0 else least_squares_memory(keys, values, noise=noise)
                outputs = {"FFN memory": retrieve(params, queries).output,
                           "least squares": queries @ exact_fit,
                           "least squares for the noise": queries @ noise_fit,
                           "correlation": queries @ correlation}
                for name, output in outputs.items():
                    recall[name][i, j, k] = np.mean(decode(output, values) == target)
    return RecallComparison(d_model, tuple(sizes), tuple(levels), tuple(seeds), recall)


#: Colours of the memories. Orange is the FFN, as everywhere in the book; the linear
#: memories take another family (green for least squares, purple for correlation).
MEMORY_STYLES = {
    "FFN memory": dict(color=PALETTE[1], marker="o", linestyle="-"),
    "least squares": dict(color=PALETTE[2], marker="s", linestyle="-"),
    "least squares for the noise": dict(color=PALETTE[2], marker="^", linestyle="--"),
    "correlation": dict(color=PALETTE[3], marker="D", linestyle="-"),
}


def _percent(values) -> str:
    return ", ".join(f"{100 * v:.1f}%" for v in values)


@styled
def recall_comparison_figure(by_pairs: RecallComparison, by_noise: RecallComparison) -> BookFigure:
    """Two panels: recall against the number of pairs (exact keys), and against noise (one memory size)."""
    for value, name in ((by_pairs, "by_pairs"), (by_noise, "by_noise")):
        require_instance(value, name, RecallComparison, "a RecallComparison from recall_comparison")
    if len(by_noise.n_memories) != 1:
        raise ValueError(f"by_noise must hold one memory size, got {len(by_noise.n_memories)}")
    fig = new_figure(5.4, 7.4)
    top, bottom = fig.subplots(2, 1)
    ratios = np.array(by_pairs.n_memories) / by_pairs.d_model
    parts = []
    for name in MEMORY_NAMES:
        if name == "least squares for the noise":
            continue  # with exact keys it is the least-squares memory itself
        style = MEMORY_STYLES[name]
        mean, low, high = (100 * f(name)[:, 0] for f in (by_pairs.mean, by_pairs.low, by_pairs.high))
        top.plot(ratios, mean, label=name, **style)
        top.fill_between(ratios, low, high, color=style["color"], alpha=0.2, linewidth=0)
        parts.append(f"{name} {_percent(mean / 100)}")
    top.axvline(1.0, color=PALETTE[6], linestyle=":", linewidth=1.2)
    top.annotate("pairs = d_model", xy=(1.0, 0.04), xycoords=("data", "axes fraction"), xytext=(4, 0),
                 textcoords="offset points", fontsize=9, color=PALETTE[6])
    top.set_xscale("log", base=2)
    top.set_xticks(ratios, [f"{r:g}" for r in ratios])
    top.minorticks_off()
    top.set_xlabel("stored pairs ÷ d_model (queries are the exact keys)")
    top.set_ylabel("pairs recalled (%)")
    top.set_title(f"Recall by the number of pairs, d_model = {by_pairs.d_model}", fontsize=11)
    noise = np.array(by_noise.noise_levels)
    noise_parts = []
    for name in MEMORY_NAMES:
        style = MEMORY_STYLES[name]
        mean, low, high = (100 * f(name)[0] for f in (by_noise.mean, by_noise.low, by_noise.high))
        bottom.plot(noise, mean, label=name, **style)
        bottom.fill_between(noise, low, high, color=style["color"], alpha=0.2, linewidth=0)
        noise_parts.append(f"{name} {_percent(mean / 100)}")
    bottom.set_xlabel("noise length (key length = 1)")
    bottom.set_ylabel("pairs recalled (%)")
    bottom.set_title(f"Recall of {by_noise.n_memories[0]} pairs as the queries get noisier", fontsize=11)
    for ax in (top, bottom):
        ax.set_ylim(-3, 103)
    handles, labels = bottom.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=10)
    seeds = len(by_pairs.seeds)
    return BookFigure(
        fig,
        f"Two line charts of the percentage of stored pairs recalled, mean over {seeds} random sets of pairs "
        f"with the range shaded. Upper chart, queries equal to the stored keys, memories holding "
        f"{', '.join(str(n) for n in by_pairs.n_memories)} pairs in {by_pairs.d_model} dimensions: "
        + "; ".join(parts) + ". Lower chart, "
        f"{by_noise.n_memories[0]} pairs queried with noise of length "
        f"{', '.join(f'{v:g}' for v in by_noise.noise_levels)}: " + "; ".join(noise_parts) + ".",
    )


# --- rewriting one stored value --------------------------------------------------------------


def _hidden(params: FFNParams, inputs) -> np.ndarray:
    """The memory FFN's hidden activations (after the ReLU) for ``inputs``."""
    return np.maximum(inputs @ params.W1 + params.b1, 0.0)


def _check_edit(params: FFNParams, key, new_value):
    params = ffn_params_of(params)
    key = check_input(key, params.d_model, params.dtype, "key")
    new_value = check_input(new_value, params.d_model, params.dtype, "new_value")
    if key.ndim != 1 or new_value.ndim != 1:
        raise ValueError(f"key and new_value must be single vectors, got shapes {key.shape} and {new_value.shape}")
    hidden = _hidden(params, key)
    if not np.any(hidden > 0):
        raise ValueError("no hidden unit fires for this key, so no change to W2 can alter its output")
    residual = new_value - ffn(key, *params, activation="relu")
    return params, hidden, residual


def rank_one_edit(params: FFNParams, key, new_value) -> FFNParams:
    """The smallest change to ``W2`` that makes the FFN output ``new_value`` for input ``key``.

    With ``h`` the hidden activation for ``key``, ``W2`` gains the rank-one
    term ``h (new_value - output)ᵀ / (h·h)``, the change of least Frobenius
    norm that does it: the output for ``key`` becomes ``new_value`` exactly, and
    any other input's output moves in proportion to how much its hidden
    activation overlaps with ``h``. :func:`covariance_edit` is ROME's choice of
    direction instead, which weighs that overlap by statistics of other inputs.

    >>> m = random_memories(4, 16, seed=0)
    >>> p = build_memory_ffn(*m)
    >>> new = rank_one_edit(p, m.keys[1], m.values[2])
    >>> bool(np.allclose(retrieve(new, m.keys[1:2]).output[0], m.values[2]))
    True
    """
    params, hidden, residual = _check_edit(params, key, new_value)
    W2 = params.W2 + np.outer(hidden, residual) / float(hidden @ hidden)
    return FFNParams(params.W1, params.b1, W2, params.b2)


def covariance_edit(params: FFNParams, key, new_value, inputs) -> FFNParams:
    """ROME's rank-one edit of ``W2``: store ``new_value`` for ``key`` while moving the outputs of ``inputs`` least.

    Meng et al. (2022, §3.1, Eq. 2) treat the matrix after the activation as a
    linear associative memory whose keys are hidden activations, and insert a
    new pair ``(k*, v*)`` by minimising ``‖Ŵ K − V‖`` subject to ``Ŵ k* = v*``:
    ``Ŵ = W + Λ (C⁻¹ k*)ᵀ`` with ``C = K Kᵀ`` the keys' uncentred second moment
    and ``Λ = (v* − W k*) / ((C⁻¹ k*)ᵀ k*)``. In ffnbook's row convention, with
    ``h*`` the hidden activation of ``key``, ``y*`` its current output and ``H``
    the hidden activations of ``inputs`` (one row each)::

        C = Hᵀ H,   u = C⁻¹ h*,   W2 ← W2 + u (new_value − y*)ᵀ / (u · h*)

    The output for ``key`` becomes ``new_value``, and the outputs of ``inputs``
    change as little as possible in total squared length. When the hidden
    activations of ``inputs`` span fewer than ``d_ff`` dimensions, ``C`` is
    singular and its pseudo-inverse is used; ``h*`` must then lie in their
    span (include ``key`` in ``inputs``), or the edit would not be the optimum.

    >>> m = random_memories(16, 32, seed=0)
    >>> p = build_memory_ffn(*m, threshold=0.05)  # a spread-out code: many units per key
    >>> new = covariance_edit(p, m.keys[3], m.values[5], m.keys)
    >>> out, before = retrieve(new, m.keys).output, retrieve(p, m.keys).output
    >>> bool(np.allclose(out[3], m.values[5])), float(np.abs(np.delete(out - before, 3, axis=0)).max()) < 1e-12
    (True, True)
    """
    params, hidden, residual = _check_edit(params, key, new_value)
    inputs = check_input(inputs, params.d_model, params.dtype, "inputs")
    if inputs.ndim != 2 or inputs.shape[0] == 0:
        raise ValueError(f"inputs must have shape (n_inputs, d_model) with at least one input, got {inputs.shape}")
    # C⁺ h* through the SVD of H rather than of C = HᵀH, whose condition number is the square of H's.
    _, s, vt = np.linalg.svd(_hidden(params, inputs), full_matrices=False)
    rank = int(np.sum(s > s[0] * max(inputs.shape[0], params.d_ff) * np.finfo(s.dtype).eps))
    s, vt = s[:rank], vt[:rank]
    coordinates = vt @ hidden
    outside = np.linalg.norm(hidden - vt.T @ coordinates)
    if rank == 0 or outside > 1e-8 * np.linalg.norm(hidden):
        raise ValueError(
            "the key's hidden activation is not in the span of the hidden activations of inputs "
            f"(a part of length {outside:.3g} lies outside it); include the key in inputs"
        )
    direction = vt.T @ (coordinates / s**2)  # u = C⁺ h*
    W2 = params.W2 + np.outer(direction, residual) / float(direction @ hidden)
    return FFNParams(params.W1, params.b1, W2, params.b2)


#: The two edits :func:`edit_spill` can make.
EDIT_METHODS = ("minimum norm", "covariance")


class EditSpill(NamedTuple):
    """What a rank-one edit of one stored pair did to the others."""

    threshold: float
    units_per_key: float  #: mean number of hidden units that fire for a stored key
    edited_error: float  #: largest difference between the edited key's output and its new value
    other_changes: list  #: for every other stored key, the length of the change in its output
    other_still_recalled: float  #: share of the other pairs still recalled after the edit
    method: str = "minimum norm"  #: the edit made, one of EDIT_METHODS


def edit_spill(memories: Memories, slot: int, new_value, *, threshold: float = 0.5,
               method: str = "minimum norm", statistics=None) -> EditSpill:
    """Store ``new_value`` for key ``slot`` and measure what happened to the other pairs.

    ``method="minimum norm"`` uses :func:`rank_one_edit`; ``method="covariance"``
    uses :func:`covariance_edit` with the second moment of ``statistics``
    (default: all stored keys).

    >>> m = random_memories(16, 64, seed=0)
    >>> e = edit_spill(m, 3, m.values[5])
    >>> e.units_per_key, max(e.other_changes)
    (1.0, 0.0)
    """
    keys, values = _memories_of(memories)
    n = keys.shape[0]
    slot = require_index(slot, "slot", n, of="the stored memories")
    require_choice(method, "method", EDIT_METHODS)
    threshold = _check_threshold(threshold)
    new_value = check_input(new_value, keys.shape[1], keys.dtype, "new_value")
    if statistics is not None and method != "covariance":
        raise ValueError(f"statistics are used only by method='covariance', not by {method!r}")
    params = build_memory_ffn(keys, values, threshold=threshold)
    before = retrieve(params, keys)
    if method == "covariance":
        inputs = keys if statistics is None else statistics
        edited = covariance_edit(params, keys[slot], new_value, inputs)
    else:
        edited = rank_one_edit(params, keys[slot], new_value)
    after = retrieve(edited, keys)
    others = np.delete(np.arange(n), slot)
    changes = np.linalg.norm(after.output[others] - before.output[others], axis=1)
    recalled = decode(after.output[others], values) == others
    return EditSpill(
        threshold=float(threshold),
        units_per_key=float((before.hidden > 0).sum(axis=1).mean()),
        edited_error=float(np.max(np.abs(after.output[slot] - np.asarray(new_value)))),
        other_changes=[float(c) for c in changes],
        other_still_recalled=float(np.mean(recalled)),
        method=method,
    )


def largest_spills(memories: Memories, new_value, *, threshold: float = 0.5,
                   method: str = "minimum norm") -> list[float]:
    """For every slot, the largest change in another stored key's output when that slot is rewritten.

    The same numbers as ``max(edit_spill(memories, slot, new_value, ...).other_changes)``
    for each slot in turn, from closed forms instead of one edit per slot. An
    edit along ``u`` moves output ``j`` by ``(h_j · u) / (h_s · u)`` times the
    residual ``new_value − y_s``. The minimum-norm edit has ``u = h_s``, so the
    factors are the Gram matrix ``H Hᵀ`` divided by its diagonal; ROME's edit,
    with the stored keys as its statistics, has ``u = C⁺ h_s``, so the factors
    are the projection ``H C⁺ Hᵀ`` divided by its diagonal.

    >>> m = random_memories(16, 64, seed=0)
    >>> largest_spills(m, m.values[0]) == [0.0] * 16  # one unit per key: nothing else moves
    True
    """
    keys, values = _memories_of(memories)
    require_choice(method, "method", EDIT_METHODS)
    params = build_memory_ffn(keys, values, threshold=threshold)
    new_value = check_input(new_value, params.d_model, params.dtype, "new_value")
    if new_value.ndim != 1:
        raise ValueError(f"new_value must be a single vector, got shape {new_value.shape}")
    retrieval = retrieve(params, keys)
    hidden = retrieval.hidden
    if not np.all(np.any(hidden > 0, axis=1)):
        raise ValueError("some stored key fires no hidden unit, so no change to W2 can alter its output")
    if method == "covariance":
        u, s, _ = np.linalg.svd(hidden, full_matrices=False)
        u = u[:, s > s[0] * max(hidden.shape) * np.finfo(s.dtype).eps]
        factors = u @ u.T  # H C⁺ Hᵀ, the projection onto the span of H's columns
    else:
        factors = hidden @ hidden.T
    moved = np.abs(factors) / np.diag(factors)[None, :]  # column s: the edit of slot s
    moved *= np.linalg.norm(new_value - retrieval.output, axis=1)[None, :]
    np.fill_diagonal(moved, 0.0)
    return [float(v) for v in moved.max(axis=0)]


class StatisticsSpill(NamedTuple):
    """A covariance-weighted edit made with the statistics of ``n_inputs`` inputs, and what moved."""

    n_inputs: int  #: inputs whose second moment the edit used (the edited key among them)
    covered_change: float  #: largest output change among those inputs, the edited key excluded
    outside_change: float  #: largest output change among stored keys left out of the statistics (nan if none)
    unseen_change: float  #: largest output change among fresh random inputs the statistics never saw
    forced: bool  #: the edited key's hidden activation is a combination of the other covered inputs'
    #: Summed squared output change over the covered inputs (the edited key excluded), under ROME's edit.
    covered_total: float = 0.0
    #: The same sum under the minimum-norm edit, which is never smaller than ROME's.
    minimum_norm_total: float = 0.0


#: The most inputs :func:`statistics_spill` draws (each is a random vector of width ``d_model``).
MAX_INPUTS = 1_000_000


def statistics_spill(memories: Memories, slot: int, new_value, sizes: Sequence[int], *,
                     threshold: float = 0.5, seed: int = 0, n_unseen: int = 256) -> list[StatisticsSpill]:
    """Edit ``slot`` with :func:`covariance_edit` using statistics of more and more inputs.

    For a size ``m`` up to the number of stored pairs ``n``, the statistics
    cover the edited key and the first ``m − 1`` other stored keys; above ``n``,
    all stored keys and ``m − n`` extra inputs drawn the way the keys were
    (random unit vectors, from a generator seeded with ``[seed, 1]`` so that
    they never repeat the stored keys). The change is also measured on
    ``n_unseen`` further random inputs that no statistics include.

    When ``forced`` is true, every change to ``W2`` that alters the edited
    key's output alters some covered input's output too: if
    ``h* = Σ c_j h_j`` over the other covered inputs, the output change for the
    key is the same combination of theirs. ROME's edit then minimises the
    covered inputs' summed squared change (``covered_total``), which is never
    more than the minimum-norm edit's on the same inputs (``minimum_norm_total``).

    >>> m = random_memories(16, 32, seed=0)
    >>> rows = statistics_spill(m, 0, m.values[1], [8, 16, 24], threshold=0.05)
    >>> [(r.n_inputs, r.covered_change < 1e-12, r.forced) for r in rows]
    [(8, True, False), (16, True, False), (24, False, True)]
    """
    keys, values = _memories_of(memories)
    n, d_model = keys.shape
    slot = require_index(slot, "slot", n, of="the stored memories")
    sizes = require_sequence(sizes, "sizes", item=lambda m, label: require_positive_int(m, label, maximum=MAX_INPUTS))
    seed = _check_seed(seed)
    n_unseen = require_positive_int(n_unseen, "n_unseen", maximum=MAX_INPUTS)
    threshold = _check_threshold(threshold)
    new_value = check_input(new_value, d_model, keys.dtype, "new_value")
    params = build_memory_ffn(keys, values, threshold=threshold)
    # A stream of its own ([seed, 1] never equals random_memories' seed), so no extra input repeats a key.
    extra = np.random.default_rng([seed, 1]).standard_normal((max(max(sizes) - n, 0) + n_unseen, d_model))
    extra = (extra / np.linalg.norm(extra, axis=1, keepdims=True)).astype(keys.dtype)
    extra, unseen = extra[: len(extra) - n_unseen], extra[len(extra) - n_unseen :]
    order = [slot] + [i for i in range(n) if i != slot]
    probes = np.vstack([keys, extra, unseen])
    before = retrieve(params, probes).output
    rows = []
    for m in sizes:
        covered = keys[order[:m]] if m <= n else np.vstack([keys[order], extra[: m - n]])
        edited = covariance_edit(params, keys[slot], new_value, covered)
        change = np.linalg.norm(retrieve(edited, probes).output - before, axis=1)
        plain = np.linalg.norm(retrieve(rank_one_edit(params, keys[slot], new_value), covered[1:]).output
                               - retrieve(params, covered[1:]).output, axis=1)
        stored, extra_change, unseen_change = change[:n], change[n : n + len(extra)], change[n + len(extra) :]
        covered_change = stored[order[1:m]] if m <= n else np.concatenate([np.delete(stored, slot),
                                                                           extra_change[: m - n]])
        outside = stored[order[m:]] if m < n else np.array([np.nan])
        hidden = _hidden(params, covered)
        others_rank = np.linalg.matrix_rank(hidden[1:]) if m > 1 else 0
        rows.append(StatisticsSpill(
            n_inputs=m,
            covered_change=float(covered_change.max()) if covered_change.size else 0.0,
            outside_change=float(outside.max()),
            unseen_change=float(unseen_change.max()),
            forced=bool(m > 1 and np.linalg.matrix_rank(hidden) == others_rank),
            covered_total=float(np.sum(covered_change**2)),
            minimum_norm_total=float(np.sum(plain**2)),
        ))
    return rows


#: Colours for the two edits (a distinction between methods, not between FFN and attention).
EDIT_STYLES = {"minimum norm": dict(color=PALETTE[2], marker="o", label="minimum-norm edit"),
               "covariance": dict(color=PALETTE[3], marker="D", label="covariance-weighted edit (ROME)")}
#: Changes below this are drawn on the floor of the logarithmic axis.
_FLOOR = 1e-18


def _log_axis(ax, top: float = 3.0) -> None:
    """A logarithmic y-axis from just below ``_FLOOR`` to ``top``, labelled every fourth power of ten."""
    from matplotlib.ticker import LogLocator

    ax.set_yscale("log")
    ax.set_ylim(_FLOOR / 3, top)
    ax.yaxis.set_major_locator(LogLocator(base=1e4))
    ax.yaxis.set_minor_locator(LogLocator(base=10.0, numticks=40))
    ax.tick_params(axis="y", which="minor", labelleft=False)


@styled
def edit_spill_figure(spills: Sequence[EditSpill], slot: int) -> BookFigure:
    """How far each other stored key's output moves under each edit, on a logarithmic axis."""
    spills = require_sequence(spills, "spills", expected="a list of EditSpill",
                              item=lambda e, label: require_instance(e, label, EditSpill))
    n_memories = len(spills[0].other_changes) + 1
    if any(len(spill.other_changes) + 1 != n_memories for spill in spills):
        raise ValueError("spills must all come from memories of one size")
    slot = require_index(slot, "slot", n_memories, of="the edited memories")
    fig = new_figure(5.4, 4.4)
    ax = fig.add_subplot()
    parts = []
    for spill in spills:
        changes = np.array(spill.other_changes)
        style = EDIT_STYLES[spill.method]
        label = style["label"]
        ax.plot(np.arange(len(changes)), np.maximum(changes, _FLOOR), linestyle="none", markersize=4, **style)
        exact_zero = int(np.sum(changes == 0.0))
        parts.append(f"{label}: largest change {changes.max():.2g}, median {np.median(changes):.2g}"
                     + (f", {exact_zero} exactly zero" if exact_zero else "")
                     + f"; {spill.other_still_recalled:.0%} of the other pairs still recalled")
    eps = float(np.finfo(np.float64).eps)
    ax.axhline(eps, color=PALETTE[6], linestyle=":", linewidth=1.2)
    # The label sits well above the line, in the empty band between rounding and real changes.
    ax.annotate("float64 rounding (dotted)", xy=(0.02, eps * 1e4), xycoords=("axes fraction", "data"),
                fontsize=10, color=PALETTE[6])
    _log_axis(ax)
    ax.set_xlabel(f"the other stored keys (all but slot {slot})")
    ax.set_ylabel("length of the change in the output")
    ax.set_title(f"Rewriting slot {slot}: spread-out code, "
                 f"{spills[0].units_per_key:.0f} units per key", fontsize=11)
    fig.legend(loc="outside lower center", ncol=2, fontsize=10)
    return BookFigure(
        fig,
        f"Dot chart, on a logarithmic axis, of how far the output of each of the {len(spills[0].other_changes)} "
        f"other stored keys moves when the value of slot {slot} is rewritten by a rank-one change to W2, in a "
        f"memory with about {spills[0].units_per_key:.0f} hidden units firing per key. "
        + "; ".join(parts) + f". A dotted line marks float64 rounding, {eps:.1e}.",
    )


@styled
def statistics_spill_figure(rows: Sequence[StatisticsSpill], d_ff: int, minimum_norm_change: float) -> BookFigure:
    """The largest output change against the number of inputs in the edit's statistics."""
    rows = require_sequence(rows, "rows", expected="a list of StatisticsSpill",
                            item=lambda r, label: require_instance(r, label, StatisticsSpill))
    d_ff = require_positive_int(d_ff, "d_ff")
    minimum_norm_change = require_positive_number(minimum_norm_change, "minimum_norm_change")
    fig = new_figure(5.4, 4.8)
    ax = fig.add_subplot()
    sizes = np.array([r.n_inputs for r in rows])
    series = (
        ("inputs in the statistics", [r.covered_change for r in rows], dict(color=PALETTE[3], marker="D")),
        ("stored keys left out", [r.outside_change for r in rows], dict(color=PALETTE[2], marker="o")),
        ("random inputs never seen", [r.unseen_change for r in rows],
         dict(color=PALETTE[6], marker="^", linestyle="--")),
    )
    parts = []
    for label, values, style in series:
        values = np.array(values)
        shown = ~np.isnan(values)
        ax.plot(sizes[shown], np.maximum(values[shown], _FLOOR), label=label, **style)
        parts.append(f"{label}: " + ", ".join(f"{v:.2g}" for v in values[shown]))
    ax.axhline(minimum_norm_change, color=PALETTE[2], linestyle=":", linewidth=1.2)
    ax.annotate("dotted: minimum-norm edit", xy=(0.98, minimum_norm_change * 8), xycoords=("axes fraction", "data"),
                ha="right", fontsize=10, color=PALETTE[2])
    ax.axvline(d_ff, color=PALETTE[6], linestyle=":", linewidth=1.2)
    ax.annotate("inputs = d_ff", xy=(d_ff, 1e-9), xytext=(4, 0), textcoords="offset points", fontsize=10,
                color=PALETTE[6])
    ax.set_xscale("log", base=2)
    # Ticks at the powers of two only: sizes just past d_ff would print on top of each other.
    ticks = [int(v) for v in sizes if v & (v - 1) == 0]
    ax.set_xticks(ticks, [str(v) for v in ticks])
    ax.minorticks_off()
    _log_axis(ax, top=1e3)
    ax.set_xlabel("inputs whose statistics the edit used")
    ax.set_ylabel("largest change in an output")
    ax.set_title(f"ROME's edit with more and more statistics, d_ff = {d_ff}", fontsize=11)
    fig.legend(loc="outside lower center", ncol=2, fontsize=10)
    return BookFigure(
        fig,
        f"Line chart, on logarithmic axes, of the largest change in an output after a covariance-weighted "
        f"edit, against the number of inputs whose statistics the edit used "
        f"({', '.join(str(s) for s in sizes)}), with a dotted line at d_ff = {d_ff} and another at the "
        f"minimum-norm edit's largest change to a stored key, {minimum_norm_change:.2g}. "
        + "; ".join(parts) + ".",
    )


#: Memory slots other than the queried one: grey, so that orange (the FFN's colour) marks the slot asked for.
_OTHER_SLOTS = "#8a8a8a"


def _ffn_shades(n: int) -> list:
    """``n`` shades of the FFN's orange, light to dark, for lines that are all FFN memories."""
    from matplotlib.colors import LinearSegmentedColormap

    ramp = LinearSegmentedColormap.from_list("ffn_orange", ["#F0A868", PALETTE[1], "#7A2E00"])
    return [ramp(x) for x in (np.linspace(0.0, 1.0, n) if n > 1 else [0.5])]


@styled
def activation_figure(memories: Memories, slot: int, noise: float, *, threshold: float = 0.5,
                      seed: int = 0) -> BookFigure:
    """Two bar charts for one noisy query: key–query match per slot, and the hidden activation per slot."""
    keys, values = _memories_of(memories)
    ex = query_example(memories, slot, noise, threshold=threshold, seed=seed)
    params = build_memory_ffn(keys, values, threshold=threshold)
    query = noisy_queries(keys[slot : slot + 1], noise, seed=seed)
    r = retrieve(params, query)
    scores = keys @ query[0]  # plain dot products, before the bias and gain
    n = keys.shape[0]
    idx = np.arange(n)
    colours = [PALETTE[1] if i == slot else _OTHER_SLOTS for i in idx]
    fig = new_figure(5.6, 4.6)
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.bar(idx, scores, color=colours, width=0.8)
    top.axhline(threshold, color=PALETTE[6], linestyle="--", linewidth=1.2,
                label=f"threshold = {threshold:g}")
    top.set_ylabel("match key · query")
    top.legend(loc="upper right")
    top.set_title(f"Query: key {slot} plus noise of length {noise:g}")
    bottom.bar(idx, r.hidden[0], color=colours, width=0.8)
    bottom.set_ylabel("hidden activation")
    bottom.set_xlabel("memory slot (hidden unit)")
    bottom.annotate(f"slot {slot}", xy=(slot, r.hidden[0, slot]), xytext=(8, -4),
                    textcoords="offset points", color=PALETTE[1])
    others = [i for i in ex.fired if i != slot]
    fired = ("no other slot fires" if not others
             else f"{len(others)} other slot{'s' if len(others) > 1 else ''} ({', '.join(map(str, others))}) "
                  f"fire{'' if len(others) > 1 else 's'} with activations up to {max(r.hidden[0, others]):.2f}")
    return BookFigure(
        fig,
        f"Two bar charts over the {n} memory slots of the hand-built FFN, for one query made of key {slot} "
        f"plus noise of length {noise:g}. The upper chart shows each key's dot product with the query, "
        f"with a dashed line at the threshold {threshold:g}: slot {slot}, in orange, reaches "
        f"{scores[slot]:.2f}, and the largest other match is {np.max(np.delete(scores, slot)):.2f}. The lower "
        f"chart shows the hidden activations after the ReLU: slot {slot} reaches {ex.activation:.2f}, and "
        f"{fired}.",
    )


@styled
def accuracy_figure(rows: list[dict], noise_levels: Sequence[float], d_model: int) -> BookFigure:
    """Retrieval accuracy against noise, one line per number of stored memories."""
    noise_levels = require_sequence(noise_levels, "noise_levels",
                                    item=lambda v, label: require_number(v, label, low=0))
    rows = require_sequence(rows, "rows", expected="a list of accuracy_grid() rows",
                            item=lambda r, label: _accuracy_row(r, label, len(noise_levels)))
    for i, row in enumerate(rows):
        if not {"ratio", "n_memories"} <= row.keys():
            raise ValueError(f"rows[{i}] must have the keys 'ratio' and 'n_memories' of accuracy_grid()")
    d_model = require_positive_int(d_model, "d_model")
    fig = new_figure(5.6, 4.0)
    ax = fig.subplots()
    markers = "osD^v"
    shades = _ffn_shades(len(rows))
    for i, row in enumerate(rows):
        ax.plot(noise_levels, [100 * a for a in row["accuracy"]], marker=markers[i % len(markers)],
                color=shades[i],
                label=f"{row['n_memories']} memories ({row['ratio']:g} × d_model)")
    ax.set_xlabel("noise length (key length = 1)")
    ax.set_ylabel("pairs recalled correctly (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(f"Retrieval from a hand-built memory FFN, d_model = {d_model}")
    ax.legend(loc="lower left")
    lines = "; ".join(
        f"{row['n_memories']} pairs: " + ", ".join(f"{100 * a:.0f}%" for a in row["accuracy"]) for row in rows
    )
    return BookFigure(
        fig,
        f"Line chart of the percentage of stored pairs recalled correctly against the length of the noise "
        f"added to each key, at noise lengths {', '.join(f'{v:g}' for v in noise_levels)}, for memories "
        f"holding {', '.join(str(r['n_memories']) for r in rows)} pairs in {d_model} dimensions. "
        f"Accuracies in order of noise: {lines}.",
    )
