"""Memory layers: the key–value reading built literally, with product keys.

A product-key memory (Lample et al., 2019) stores ``n²`` value vectors behind
``n²`` keys that are never stored as such: each key is the concatenation of a
first half from one set of ``n`` sub-keys and a second half from another. A
query's score against key ``(i, j)`` is the sum of its halves' scores against
sub-keys ``i`` and ``j``, so the ``k`` best of the ``n²`` keys are among the
``k × k`` pairs of the ``k`` best sub-keys of each half: scoring ``2n``
half-keys finds them exactly. :func:`product_key_topk` does that and
:func:`exhaustive_topk` scores every key, to check it; :func:`memory_layer_cost`
and :func:`dense_memory_cost` count what each costs per token.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, require_positive_int, require_seed

#: Lample et al. (2019, abstract); a model of 12 layers with a memory layer outperforms a
#: baseline transformer of 24 layers (and is faster at inference).
LAMPLE_LAYERS = (12, 24)
#: Berges et al. (2025, abstract); memory layers of up to 128B parameters, models pretrained on
#: 1 trillion tokens, beside base models of up to 8B parameters.
BERGES_MEMORY_PARAMS, BERGES_TOKENS, BERGES_BASE_PARAMS = 128e9, 1e12, 8e9
#: Berges et al. (2025, abstract); their models outperform dense models with more than twice
#: the computation budget.
BERGES_DENSE_COMPUTE_RATIO = 2
#: He (2024, abstract); a PEER layer retrieves from a pool of over a million tiny experts.
PEER_EXPERTS = 1_000_000


class ProductKeys(NamedTuple):
    """The two sets of sub-keys of a product-key memory, ``n`` of each, half the key width each."""

    first: np.ndarray  #: ``(n, d_key / 2)``
    second: np.ndarray  #: ``(n, d_key / 2)``


def random_product_keys(n, d_key: int, seed: int = 0) -> ProductKeys:
    """Random sub-keys for a memory of ``n²`` slots and keys ``d_key`` wide (``d_key`` even).

    >>> keys = random_product_keys(4, 6)
    >>> keys.first.shape, keys.second.shape
    ((4, 3), (4, 3))
    """
    n = require_positive_int(n, "n")
    d_key = require_positive_int(d_key, "d_key")
    if d_key % 2:
        raise ValueError(f"d_key must be even (two halves of equal width), got {d_key}")
    rng = np.random.default_rng(require_seed(seed))
    return ProductKeys(*(rng.standard_normal((n, d_key // 2)) for _ in range(2)))


def _checked(query, keys) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(keys, ProductKeys):
        raise TypeError(f"keys must be a ProductKeys (from random_product_keys), got {type(keys).__name__}")
    first = as_float_array(keys.first, "keys.first", finite=True, ndim=2)
    second = as_float_array(keys.second, "keys.second", finite=True, ndim=2)
    if first.shape != second.shape:
        raise ValueError(f"keys.first and keys.second must have one shape, got {first.shape} and {second.shape}")
    query = as_float_array(query, "query", finite=True, ndim=1)
    if query.shape != (2 * first.shape[1],):
        raise ValueError(f"query must have shape ({2 * first.shape[1]},), the key width, got {query.shape}")
    return query, first, second


class Lookup(NamedTuple):
    """The ``k`` best slots for a query, best first, and their scores."""

    slots: np.ndarray  #: slot ``i·n + j`` is the key made of first sub-key ``i`` and second sub-key ``j``
    scores: np.ndarray
    scored: int  #: key halves or keys the query was scored against


def product_key_topk(query, keys: ProductKeys, k) -> Lookup:
    """The ``k`` best of the ``n²`` keys, found by scoring only the ``2n`` sub-keys.

    The best ``k`` first halves and the best ``k`` second halves are found
    separately; every one of the ``k`` best keys pairs one of each, so the
    ``k²`` sums of those pairs hold them all. Ties in score are broken by the
    lower slot.

    >>> keys = random_product_keys(16, 8, seed=1)
    >>> q = np.random.default_rng(2).standard_normal(8)
    >>> fast, full = product_key_topk(q, keys, 4), exhaustive_topk(q, keys, 4)
    >>> bool(np.array_equal(fast.slots, full.slots)), fast.scored, full.scored
    (True, 32, 256)
    """
    query, first, second = _checked(query, keys)
    n, half = first.shape
    k = require_positive_int(k, "k", maximum=n)
    score_first, score_second = first @ query[:half], second @ query[half:]
    best_first = np.argsort(-score_first, kind="stable")[:k]
    best_second = np.argsort(-score_second, kind="stable")[:k]
    sums = score_first[best_first][:, None] + score_second[best_second][None, :]
    slots = (best_first[:, None] * n + best_second[None, :]).ravel()
    order = np.lexsort((slots, -sums.ravel()))[:k]
    return Lookup(slots[order], sums.ravel()[order], 2 * n)


def exhaustive_topk(query, keys: ProductKeys, k) -> Lookup:
    """The ``k`` best of the ``n²`` keys by scoring every one of them (the check on :func:`product_key_topk`)."""
    query, first, second = _checked(query, keys)
    n, half = first.shape
    k = require_positive_int(k, "k", maximum=n)
    full = np.concatenate([np.repeat(first, n, axis=0), np.tile(second, (n, 1))], axis=1)  # slot i·n + j
    scores = full @ query
    order = np.lexsort((np.arange(n * n), -scores))[:k]
    return Lookup(order, scores[order], n * n)


class LayerCost(NamedTuple):
    """Parameters and FLOPs per token of a layer that stores ``slots`` value vectors of width ``d_model``."""

    slots: int
    parameters: int
    flops_per_token: int


def memory_layer_cost(n, d_key: int, d_model: int, k) -> LayerCost:
    """A product-key memory of ``n²`` slots: parameters and FLOPs per token, one head.

    Parameters: the values (``n²·d_model``), the sub-keys (``2·n·d_key/2``)
    and the query projection (``d_model·d_key``). FLOPs, two per multiply-add:
    the query, the ``2n`` half-key scores, the ``k²`` candidate sums (one FLOP
    each) and the weighted sum of ``k`` values; finding the top ``k`` is not
    counted.

    >>> c = memory_layer_cost(512, 512, 1024, 32)
    >>> c.slots, c.flops_per_token
    (262144, 1639424)
    """
    n = require_positive_int(n, "n")
    d_key = require_positive_int(d_key, "d_key")
    d_model = require_positive_int(d_model, "d_model")
    k = require_positive_int(k, "k", maximum=n)
    if d_key % 2:
        raise ValueError(f"d_key must be even (two halves of equal width), got {d_key}")
    parameters = n * n * d_model + n * d_key + d_model * d_key
    flops = 2 * d_model * d_key + 2 * n * d_key + k * k + 2 * k * d_model
    return LayerCost(n * n, parameters, flops)


def dense_memory_cost(slots, d_model: int) -> LayerCost:
    """An FFN read as a memory of ``slots`` key–value pairs (``d_ff = slots``), without biases.

    Every key is scored and every value weighted for every token:
    ``2·slots·d_model`` parameters and twice that in FLOPs.

    >>> dense_memory_cost(262144, 1024).flops_per_token
    1073741824
    """
    slots = require_positive_int(slots, "slots")
    d_model = require_positive_int(d_model, "d_model")
    return LayerCost(slots, 2 * slots * d_model, 4 * slots * d_model)
