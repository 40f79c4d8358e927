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
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ._checks import as_float_array, require_finite, require_positive_int
from .feedforward import FFNParams, check_input, check_params, ffn
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
    rng = np.random.default_rng(seed)
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

    The output is computed by :func:`ffnbook.feedforward.ffn` with ReLU; the
    hidden layer before and after the ReLU is returned alongside, so one can
    see which memories fired.

    >>> m = random_memories(4, 16, seed=0)
    >>> r = retrieve(build_memory_ffn(*m), m.keys[1:2])
    >>> [round(float(h), 6) for h in r.hidden[0]]
    [0.0, 1.0, 0.0, 0.0]
    """
    params = check_params(*params)
    queries = check_input(queries, params.d_model, params.dtype, "queries")
    if queries.ndim != 2:
        raise ValueError(f"queries must have shape (n_queries, d_model), got {queries.shape}")
    preactivation = queries @ params.W1 + params.b1
    hidden = np.maximum(preactivation, 0.0)
    output = ffn(queries, *params, activation="relu")
    return Retrieval(preactivation, hidden, output)


def noisy_queries(keys, noise: float, *, seed: int = 0) -> np.ndarray:
    """Each key plus a random vector of length ``noise`` (relative to the unit key).

    The noise directions depend only on ``seed`` and the shape, so the same
    seed at a larger ``noise`` moves every query further along the same line.

    >>> k = random_memories(3, 8, seed=0).keys
    >>> q = noisy_queries(k, 0.5, seed=1)
    >>> bool(np.allclose(np.linalg.norm(q - k, axis=1), 0.5))
    True
    """
    keys = as_float_array(keys, "keys")
    if keys.ndim != 2:
        raise ValueError(f"keys must have shape (n_memories, d_model), got {keys.shape}")
    noise = _check_noise(noise)
    directions = np.random.default_rng(seed).standard_normal(keys.shape)
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return (keys + noise * directions).astype(keys.dtype)


def decode(output, values) -> np.ndarray:
    """Index of the stored value each output row points to (largest cosine); -1 for a zero output.

    A zero output means no memory fired, which counts as a failed retrieval.

    >>> decode(np.array([[0.0, 2.0], [0.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])).tolist()
    [1, -1]
    """
    output = as_float_array(output, "output")
    values = as_float_array(values, "values")
    if output.ndim != 2 or values.ndim != 2 or output.shape[1] != values.shape[1]:
        raise ValueError(
            f"output (n, d) and values (m, d) must share d, got {output.shape} and {values.shape}"
        )
    unit_values = values / np.linalg.norm(values, axis=1, keepdims=True)
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
    keys, values = _check_memories(*memories)
    n = keys.shape[0]
    if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)) or not 0 <= slot < n:
        raise ValueError(f"slot must be an integer in [0, {n}), got {slot!r}")
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
    if not len(memory_ratios) or not len(noise_levels):
        raise ValueError("memory_ratios and noise_levels must each hold at least one value")
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


def noise_recalled_perfectly(rows: list[dict], noise_levels: Sequence[float]) -> float:
    """The largest noise level up to which every memory of :func:`accuracy_grid` recalls every pair.

    Returns the last level before the first accuracy below one (in the order of
    ``noise_levels``); ``noise_levels[0]`` must itself be recalled perfectly.

    >>> rows = [{"accuracy": [1.0, 1.0, 0.9]}, {"accuracy": [1.0, 0.8, 0.5]}]
    >>> noise_recalled_perfectly(rows, [0.0, 1.0, 2.0])
    0.0
    """
    if not rows or any(len(r["accuracy"]) != len(noise_levels) for r in rows):
        raise ValueError("each row needs one accuracy per noise level")
    perfect = None
    for j, noise in enumerate(noise_levels):
        if all(r["accuracy"][j] == 1.0 for r in rows):
            perfect = float(noise)
        else:
            break
    if perfect is None:
        raise ValueError("not every pair is recalled even at the first noise level")
    return perfect


def rank_one_edit(params: FFNParams, key, new_value) -> FFNParams:
    """The smallest change to ``W2`` that makes the FFN output ``new_value`` for input ``key``.

    With ``h`` the hidden activation for ``key``, ``W2`` gains the rank-one
    term ``h (new_value - output)ᵀ / (h·h)``: the output for ``key`` becomes
    ``new_value`` exactly, and any other input's output moves in proportion to
    how much its hidden activation overlaps with ``h``. Editing methods for
    trained models such as ROME also change one layer's weights by a rank-one
    term, chosen with statistics of other keys to limit that spill-over.

    >>> m = random_memories(4, 16, seed=0)
    >>> p = build_memory_ffn(*m)
    >>> new = rank_one_edit(p, m.keys[1], m.values[2])
    >>> bool(np.allclose(retrieve(new, m.keys[1:2]).output[0], m.values[2]))
    True
    """
    params = check_params(*params)
    key = check_input(np.asarray(key), params.d_model, params.dtype, "key")
    new_value = check_input(np.asarray(new_value), params.d_model, params.dtype, "new_value")
    if key.ndim != 1 or new_value.ndim != 1:
        raise ValueError(f"key and new_value must be single vectors, got shapes {key.shape} and {new_value.shape}")
    hidden = np.maximum(key @ params.W1 + params.b1, 0.0)
    norm2 = float(hidden @ hidden)
    if norm2 == 0.0:
        raise ValueError("no hidden unit fires for this key, so no change to W2 can alter its output")
    current = ffn(key, *params, activation="relu")
    W2 = params.W2 + np.outer(hidden, new_value - current) / norm2
    return FFNParams(params.W1, params.b1, W2, params.b2)


class EditSpill(NamedTuple):
    """What a rank-one edit of one stored pair did to the others."""

    threshold: float
    units_per_key: float  #: mean number of hidden units that fire for a stored key
    edited_error: float  #: largest difference between the edited key's output and its new value
    other_changes: list  #: for every other stored key, the length of the change in its output
    other_still_recalled: float  #: share of the other pairs still recalled after the edit


def edit_spill(memories: Memories, slot: int, new_value, *, threshold: float = 0.5) -> EditSpill:
    """Store ``new_value`` for key ``slot`` with :func:`rank_one_edit` and measure the other pairs.

    >>> m = random_memories(16, 64, seed=0)
    >>> e = edit_spill(m, 3, m.values[5])
    >>> e.units_per_key, max(e.other_changes)
    (1.0, 0.0)
    """
    keys, values = _check_memories(*memories)
    n = keys.shape[0]
    if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)) or not 0 <= slot < n:
        raise ValueError(f"slot must be an integer in [0, {n}), got {slot!r}")
    params = build_memory_ffn(keys, values, threshold=threshold)
    before = retrieve(params, keys)
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
    )


@styled
def edit_spill_figure(spills: Sequence[EditSpill], slot: int) -> BookFigure:
    """For each threshold, the change in every other stored key's output after editing ``slot``."""
    if not spills:
        raise ValueError("spills must hold at least one EditSpill")
    fig = new_figure(7.5, 3.8)
    ax = fig.add_subplot()
    width = 0.8 / len(spills)
    parts = []
    for i, spill in enumerate(spills):
        xs = np.arange(len(spill.other_changes)) + (i - (len(spills) - 1) / 2) * width
        ax.bar(xs, spill.other_changes, width=width, color=PALETTE[i % len(PALETTE)],
               label=f"threshold {spill.threshold:g} ({spill.units_per_key:.1f} units per key)")
        parts.append(f"at threshold {spill.threshold:g}, with {spill.units_per_key:.1f} hidden units firing "
                     f"per stored key, the other outputs move by at most {max(spill.other_changes):.3f} "
                     f"and {spill.other_still_recalled:.0%} of the other pairs are still recalled")
    ax.set_xlabel(f"the other stored keys (all but slot {slot})")
    ax.set_ylabel("length of the change in the output")
    ax.set_title(f"Rewriting the value of slot {slot} with a rank-one change to W2")
    ax.grid(axis="x", visible=False)
    ax.legend(loc="upper right", fontsize=9)
    return BookFigure(
        fig,
        f"Bar chart of how far each other stored key's output moves when the value of slot {slot} is "
        "rewritten by a rank-one change to W2, for memories built with different thresholds: "
        + "; ".join(parts) + ".",
    )


@styled
def activation_figure(memories: Memories, slot: int, noise: float, *, threshold: float = 0.5,
                      seed: int = 0) -> BookFigure:
    """Two bar charts for one noisy query: key–query match per slot, and the hidden activation per slot."""
    keys, values = _check_memories(*memories)
    ex = query_example(memories, slot, noise, threshold=threshold, seed=seed)
    params = build_memory_ffn(keys, values, threshold=threshold)
    query = noisy_queries(keys[slot : slot + 1], noise, seed=seed)
    r = retrieve(params, query)
    scores = keys @ query[0]  # plain dot products, before the bias and gain
    n = keys.shape[0]
    idx = np.arange(n)
    colours = [PALETTE[1] if i == slot else PALETTE[0] for i in idx]
    fig = new_figure(7.5, 5.0)
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
    fig = new_figure(7.0, 4.0)
    ax = fig.subplots()
    markers = "osD^v"
    for i, row in enumerate(rows):
        ax.plot(noise_levels, [100 * a for a in row["accuracy"]], marker=markers[i % len(markers)],
                color=PALETTE[i % len(PALETTE)],
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
