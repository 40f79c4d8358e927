"""A sparse mixture-of-experts (MoE) FFN layer in NumPy.

An MoE layer replaces the single FFN of a block by ``n_experts`` FFNs (the
*experts*) and a *router*, a ``d_model × n_experts`` matrix. For each token
the router scores every expert, keeps the ``top_k`` highest scores, turns just
those into weights with a softmax (the Mixtral recipe), and returns the
weighted sum of the chosen experts' outputs::

    logits = x @ W_router                      # (n_experts,) per token
    chosen = the top_k experts by logit
    weights = softmax(logits[chosen])          # sums to 1 over the chosen experts
    y = sum_j weights[j] * FFN_chosen[j](x)

Nothing in this recipe looks at another token, which is why it can be applied
to the position-wise FFN at all. Each expert here is the book's classic
:func:`~ffnbook.feedforward.ffn`; real models use gated experts (Mixtral and
DeepSeek-V3 use SwiGLU), which changes the expert, not the routing.

The layer itself has no capacity limit. The practical machinery of real
MoE layers is here as separate functions: :func:`expert_capacity` and
:func:`apply_capacity` (a fixed buffer per expert, and the token-slots that
overflow it are dropped, as in Switch Transformers and GShard),
:func:`switch_balance_loss` (the Switch Transformer's auxiliary
load-balancing loss) and :func:`capacity_drop_change` (with a capacity limit,
one token's routing can push another token out). Router noise is left out.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._checks import (
    as_float_array,
    describe,
    float_dtype,
    require_bool,
    require_bundle,
    require_finite,
    require_index,
    require_nonnegative_int,
    require_positive_int,
    require_positive_number,
    require_same_length,
    require_seed,
    require_sequence,
    require_tensor_size,
)
from .activations import get_activation
from .display import readable
from .feedforward import check_input, ffn, ffn_params_of, init_ffn_params
from .parameters import ffn_param_count
from .plotting import FFN_COLOUR, OTHER_COLOURS, BookFigure, new_figure, styled


class MoEParams(NamedTuple):
    """A router matrix and the experts' weights."""

    W_router: np.ndarray  #: ``(d_model, n_experts)``, no bias (as in Mixtral)
    experts: tuple  #: one :class:`~ffnbook.feedforward.FFNParams` per expert

    @property
    def n_experts(self) -> int:
        return len(self.experts)

    @property
    def d_model(self) -> int:
        return int(self.W_router.shape[0])

    @property
    def d_ff(self) -> int:
        return int(self.experts[0].W1.shape[1])


class Routing(NamedTuple):
    """Which experts each token was sent to, and with what weights."""

    experts: np.ndarray  #: integer array ``(..., top_k)``, highest router logit first
    weights: np.ndarray  #: float array ``(..., top_k)``, each row sums to 1
    logits: np.ndarray  #: the router's scores for all experts, ``(..., n_experts)``


def init_moe_params(
    d_model: int, d_ff: int, n_experts: int, *, seed: int = 0, dtype=np.float64
) -> MoEParams:
    """Random router and expert weights, reproducible from ``seed``.

    Each expert is drawn by :func:`~ffnbook.feedforward.init_ffn_params` with
    its own seed, so experts differ; the router uses ``nn.Linear``'s default
    scale, ``±1/sqrt(d_model)``.

    >>> p = init_moe_params(8, 32, 4, seed=0)
    >>> p.W_router.shape, p.n_experts, p.experts[0].W1.shape
    ((8, 4), 4, (8, 32))
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    n_experts = require_positive_int(n_experts, "n_experts")
    dtype = float_dtype(dtype)
    rng = np.random.default_rng(require_seed(seed))
    bound = 1.0 / np.sqrt(d_model)
    W_router = rng.uniform(-bound, bound, size=(d_model, n_experts)).astype(dtype)
    expert_seeds = rng.integers(0, 2**31, size=n_experts)
    experts = tuple(init_ffn_params(d_model, d_ff, seed=int(s), dtype=dtype) for s in expert_seeds)
    return MoEParams(W_router, experts)


def check_moe_params(params) -> MoEParams:
    """Validate a router and its experts against each other; return them as :class:`MoEParams`."""
    W_router, experts = require_bundle(params, "params", MoEParams._fields, "MoEParams")
    W_router = as_float_array(W_router, "W_router", finite=True)
    if W_router.ndim != 2:
        raise ValueError(f"W_router must be 2-D (d_model, n_experts), got shape {W_router.shape}")
    d_model, n_experts = W_router.shape
    experts = require_sequence(experts, "experts", expected="a tuple of FFNParams, one per expert")
    if len(experts) != n_experts:
        raise ValueError(f"W_router has {n_experts} columns but {len(experts)} experts were given")
    checked = []
    for i, e in enumerate(experts):
        e = ffn_params_of(e, f"expert {i}")
        if e.d_model != d_model:
            raise ValueError(f"expert {i} has d_model={e.d_model}, but W_router has {d_model} rows")
        if e.dtype != W_router.dtype:
            raise TypeError(f"expert {i} has dtype {e.dtype} but W_router is {W_router.dtype}")
        checked.append(e)
    return MoEParams(W_router, tuple(checked))


def _check_top_k(top_k, n_experts: int) -> int:
    top_k = require_positive_int(top_k, "top_k")
    if top_k > n_experts:
        raise ValueError(f"top_k must be at most n_experts={n_experts}, got {top_k}")
    return top_k


def route(x, W_router, top_k: int, *, selection_bias=None) -> Routing:
    """Pick each token's ``top_k`` experts and their softmax weights.

    ``x`` has shape ``(..., d_model)``; the result's arrays have the same
    leading shape. Ties between equal logits go to the lower expert index.
    ``selection_bias`` (one number per expert) is added to the logits for the
    choice of experts only, as in DeepSeek-V3's load balancing; the weights
    still come from the unbiased logits (see :func:`bias_balancing`).

    >>> W = np.array([[1.0, 0.0, -1.0]])  # one input feature, three experts
    >>> r = route(np.array([[2.0], [-2.0]]), W, top_k=2)
    >>> r.experts.tolist()
    [[0, 1], [2, 1]]
    >>> np.round(r.weights, 3).tolist()
    [[0.881, 0.119], [0.881, 0.119]]
    """
    W_router = as_float_array(W_router, "W_router", finite=True)
    if W_router.ndim != 2 or 0 in W_router.shape:
        raise ValueError(f"W_router must be 2-D (d_model, n_experts), at least one of each, got shape {W_router.shape}")
    top_k = _check_top_k(top_k, W_router.shape[1])
    x = check_input(x, W_router.shape[0], W_router.dtype)
    return route_logits(x @ W_router, top_k, selection_bias=selection_bias)


def route_logits(logits, top_k: int, *, selection_bias=None) -> Routing:
    """:func:`route` from router scores already computed, shape ``(..., n_experts)``.

    >>> route_logits(np.array([[0.0, 1.0, 2.0]]), 1, selection_bias=[3.0, 0.0, 0.0]).experts.tolist()
    [[0]]
    """
    # A NaN logit sorts as if it were the largest, so NaN or inf would silently pick or drop experts.
    logits = as_float_array(logits, "logits", finite=True)
    if logits.ndim < 1:
        raise ValueError(f"logits must have shape (..., n_experts), got {logits.shape}")
    top_k = _check_top_k(top_k, logits.shape[-1])
    scores = logits
    if selection_bias is not None:
        bias = as_float_array(selection_bias, "selection_bias")
        if bias.shape != (logits.shape[-1],):
            raise ValueError(f"selection_bias must have one value per expert ({logits.shape[-1]},), "
                             f"got shape {bias.shape}")
        require_finite(bias, "selection_bias")
        scores = logits + bias
    # A stable sort of the negated scores: highest first, ties to the lower index.
    chosen = np.argsort(-scores, axis=-1, kind="stable")[..., :top_k]
    picked = np.take_along_axis(logits, chosen, axis=-1)  # the weights ignore the selection bias
    weights = np.exp(picked - picked.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return Routing(chosen, weights, logits)


def moe_layer(x, params: MoEParams, top_k: int = 2, activation: str = "relu") -> tuple[np.ndarray, Routing]:
    """Apply a top-``k`` mixture-of-experts FFN to the last axis of ``x``.

    Parameters
    ----------
    x : numpy.ndarray
        Tokens, shape ``(..., d_model)``, float32 or float64.
    params : MoEParams
        The router and the experts.
    top_k : int
        Experts per token, between 1 and ``n_experts``.
    activation : str
        The experts' activation, a name accepted by :func:`~ffnbook.feedforward.ffn`.

    Returns
    -------
    y : numpy.ndarray
        The layer's output, same shape as ``x``.
    routing : Routing
        Expert indices and weights per token.

    Each expert runs only on the tokens routed to it, as a sparse layer does:
    the work per token is ``top_k`` experts, not ``n_experts``.

    >>> p = init_moe_params(8, 32, 4, seed=0)
    >>> y, r = moe_layer(np.ones((2, 5, 8)), p, top_k=2)
    >>> y.shape, r.experts.shape
    ((2, 5, 8), (2, 5, 2))
    """
    params = check_moe_params(params)
    get_activation(activation)
    x = check_input(x, params.d_model, params.W_router.dtype)
    top_k = _check_top_k(top_k, params.n_experts)
    routing = route(x, params.W_router, top_k)
    flat_x = x.reshape(-1, params.d_model)
    flat_experts = routing.experts.reshape(flat_x.shape[0], top_k)
    flat_weights = routing.weights.reshape(flat_x.shape[0], top_k)
    out = np.zeros_like(flat_x)
    for e, expert in enumerate(params.experts):
        tokens, slot = np.nonzero(flat_experts == e)  # which tokens chose e, and in which slot
        if tokens.size:
            out[tokens] += flat_weights[tokens, slot, None] * ffn(flat_x[tokens], *expert, activation=activation)
    return out.reshape(x.shape), routing


def moe_as_layer(params: MoEParams, top_k: int = 2, activation: str = "relu"):
    """The MoE layer with fixed weights as a one-argument layer (output only).

    Fits the experiments of :mod:`ffnbook.position_independence`.
    """
    params = check_moe_params(params)
    top_k = _check_top_k(top_k, params.n_experts)
    get_activation(activation)
    return lambda x: moe_layer(x, params, top_k, activation)[0]


def expert_load(routing: Routing, n_experts: int) -> list[int]:
    """How many token-slots each expert received: a list of ``n_experts`` ints.

    With top-``k`` routing each token fills ``k`` slots, so the counts add up
    to ``n_tokens · k``.

    >>> r = route(np.array([[2.0], [-2.0], [3.0]]), np.array([[1.0, 0.0, -1.0]]), top_k=1)
    >>> expert_load(r, 3)
    [2, 0, 1]
    """
    n_experts = require_positive_int(n_experts, "n_experts")
    experts = _routed_experts(routing, n_experts)
    return [int(c) for c in np.bincount(experts.ravel(), minlength=n_experts)]


def _routed_experts(routing, n_experts: int) -> np.ndarray:
    """The expert indices of a :class:`Routing`, each checked to lie in ``[0, n_experts)``."""
    if not isinstance(routing, Routing):
        raise TypeError(f"routing must be a Routing from moe_layer or route, got {describe(routing)}")
    experts = np.asarray(routing.experts)
    if experts.ndim < 1 or experts.dtype.kind not in "iu":
        raise ValueError(f"routing.experts must be an integer array (..., top_k), got {describe(experts)}")
    if experts.size and (experts.min() < 0 or experts.max() >= n_experts):
        raise ValueError(f"routing names experts from {int(experts.min())} to {int(experts.max())}, "
                         f"but n_experts={n_experts}")
    return experts


class RoutingChange(NamedTuple):
    """How routing moved when one token of the input was replaced."""

    changed_token_rerouted: bool  #: whether the edited token's experts changed
    other_tokens_rerouted: int  #: how many *other* tokens changed experts
    other_weights_moved: float  #: largest change of any other token's routing weights


def routing_change_one_token(params: MoEParams, x, position: int, top_k: int = 2, *, seed: int = 1) -> RoutingChange:
    """Replace the token at ``position`` (axis -2 of ``x``) and compare the routing before and after.

    The new token is a fresh random vector from ``seed``, scaled like ``x``.
    """
    params = check_moe_params(params)
    x = check_input(x, params.d_model, params.W_router.dtype)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq_len, d_model), got {x.shape}")
    seq_len = x.shape[-2]
    position = require_index(position, "position", seq_len, of="x's positions")
    top_k = _check_top_k(top_k, params.n_experts)
    edited = x.copy()
    rng = np.random.default_rng(require_seed(seed))
    edited[..., position, :] = rng.standard_normal(x[..., position, :].shape) * x.std()
    before = route(x, params.W_router, top_k)
    after = route(edited, params.W_router, top_k)
    same = np.all(before.experts == after.experts, axis=-1)  # (..., seq_len)
    others = np.delete(same, position, axis=-1)
    weight_moves = np.delete(np.abs(before.weights - after.weights).max(axis=-1), position, axis=-1)
    return RoutingChange(
        changed_token_rerouted=bool(not same[..., position].all()),
        other_tokens_rerouted=int(others.size - np.count_nonzero(others)),
        other_weights_moved=float(weight_moves.max()) if weight_moves.size else 0.0,
    )


def moe_param_counts(d_model: int, d_ff: int, n_experts: int, top_k: int, *, bias: bool = True) -> dict:
    """Stored and active parameters of one MoE layer with classic FFN experts.

    ``stored`` counts the router (``d_model · n_experts``) and every expert;
    ``active`` counts what one token uses: the router and ``top_k`` experts.

    >>> c = moe_param_counts(512, 2048, 8, 2)
    >>> c["stored"] == 512 * 8 + 8 * ffn_param_count(512, 2048)
    True
    >>> round(c["active_fraction"], 3)
    0.25
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    n_experts = require_positive_int(n_experts, "n_experts")
    top_k = _check_top_k(top_k, n_experts)
    bias = require_bool(bias, "bias")
    router = d_model * n_experts
    expert = ffn_param_count(d_model, d_ff, bias=bias)
    stored = router + n_experts * expert
    active = router + top_k * expert
    return {"router": router, "expert": expert, "stored": stored, "active": active,
            "active_fraction": active / stored}


def count_stored_parameters(params: MoEParams) -> int:
    """The number of scalars actually held in ``params`` (router plus all experts' arrays)."""
    params = check_moe_params(params)
    return int(params.W_router.size + sum(a.size for e in params.experts for a in e))


@styled
def expert_load_figure(load, top_k: int) -> BookFigure:
    """Bar chart of token-slots per expert, with the perfectly balanced load as a line."""
    load = require_sequence(load, "load", expected="a list of token-slot counts", item=require_nonnegative_int)
    top_k = require_positive_int(top_k, "top_k")
    if sum(load) % top_k:
        raise ValueError(f"load must add up to a multiple of top_k={top_k} (each token fills top_k slots), "
                         f"got {sum(load)}")
    n_experts = len(load)
    balanced = sum(load) / n_experts
    fig = new_figure(6.5, 3.6)
    ax = fig.add_subplot()
    ax.bar(range(n_experts), load, color=FFN_COLOUR, width=0.7, label="token-slots received")
    ax.axhline(balanced, color=OTHER_COLOURS[2], linestyle="--", label=f"balanced load ({balanced:g})")
    ax.set_xticks(range(n_experts), [str(i) for i in range(n_experts)])
    ax.set_xlabel("expert")
    ax.set_ylabel(f"tokens routed (top-{top_k} slots)")
    ax.set_title(f"Expert load for {sum(load) // top_k} tokens, top-{top_k} of {n_experts} experts")
    ax.grid(axis="x", visible=False)
    ax.set_ylim(0, max(max(load), balanced) * 1.3)  # headroom for the legend
    ax.legend(loc="upper center", ncol=2, fontsize=9)
    return BookFigure(
        fig,
        f"Bar chart of the token-slots the router sent to each of {n_experts} untrained experts under "
        f"top-{top_k} routing of {sum(load) // top_k} random tokens, with a dashed line at the perfectly "
        f"balanced load of {balanced:g}. The counts are {', '.join(map(str, load))}, between "
        f"{min(load)} and {max(load)}.",
    )


# --- capacity, dropped tokens and the balancing loss ---------------------------------------------


def expert_capacity(n_tokens: int, n_experts: int, capacity_factor: float, top_k: int = 1) -> int:
    """Token-slots each expert can take: ``(n_tokens·top_k / n_experts) · capacity_factor``, rounded up.

    Switch Transformers set an expert's buffer to the tokens per batch over the
    number of experts, times a capacity factor (their Eq. 3, with top-1
    routing); with top-``k`` routing each token fills ``k`` slots, so the even
    share is ``n_tokens·top_k / n_experts``. A factor of one leaves no slack.

    >>> expert_capacity(256, 8, 1.0, top_k=2), expert_capacity(256, 8, 1.25, top_k=2)
    (64, 80)
    """
    n_tokens = require_positive_int(n_tokens, "n_tokens")
    n_experts = require_positive_int(n_experts, "n_experts")
    top_k = _check_top_k(top_k, n_experts)
    capacity_factor = require_positive_number(capacity_factor, "capacity_factor")
    capacity = int(math.ceil(n_tokens * top_k / n_experts * capacity_factor - 1e-9))
    if capacity < 1:
        raise ValueError(f"n_tokens={n_tokens}, top_k={top_k}, n_experts={n_experts} and "
                         f"capacity_factor={capacity_factor!r} leave each expert no slot; they must give at least one")
    return capacity


class CapacityDispatch(NamedTuple):
    """Which token-slots an expert with a fixed buffer accepted."""

    kept: np.ndarray  #: bool array ``(..., top_k)``: the slot reached its expert
    capacity: int  #: slots per expert
    dropped_slots: int  #: slots that found their expert full
    dropped_tokens: int  #: tokens that reached none of their experts
    n_slots: int  #: all token-slots

    @property
    def dropped_fraction(self) -> float:
        """Share of token-slots dropped."""
        return self.dropped_slots / self.n_slots


def apply_capacity(routing: Routing, n_experts: int, capacity: int) -> CapacityDispatch:
    """Give each expert at most ``capacity`` token-slots and drop the rest.

    Slots are served in a fixed order: every token's first choice before any
    token's second choice, and within a choice in the order of the tokens
    (positions of the flattened batch). A dropped slot contributes nothing; in a
    transformer block the token still passes on through the residual connection.

    >>> r = route(np.array([[2.0], [3.0], [-2.0]]), np.array([[1.0, 0.0, -1.0]]), top_k=1)
    >>> d = apply_capacity(r, 3, capacity=1)  # two tokens want expert 0; the first one gets it
    >>> d.kept.ravel().tolist(), d.dropped_slots
    ([True, False, True], 1)
    """
    n_experts = require_positive_int(n_experts, "n_experts")
    capacity = require_nonnegative_int(capacity, "capacity")
    experts = _routed_experts(routing, n_experts)
    flat = experts.reshape(-1, experts.shape[-1])
    kept = np.zeros(flat.shape, dtype=bool)
    used = np.zeros(n_experts, dtype=int)
    for slot in range(flat.shape[1]):
        for token in range(flat.shape[0]):
            e = flat[token, slot]
            if used[e] < capacity:
                used[e] += 1
                kept[token, slot] = True
    return CapacityDispatch(
        kept=kept.reshape(experts.shape),
        capacity=int(capacity),
        dropped_slots=int(kept.size - kept.sum()),
        dropped_tokens=int((~kept.any(axis=1)).sum()),
        n_slots=int(kept.size),
    )


def dropped_by_capacity(routing: Routing, n_experts: int, capacity_factors) -> list[dict]:
    """Share of token-slots dropped at each capacity factor, for one routing.

    >>> r = route(np.array([[2.0], [3.0], [-2.0]]), np.array([[1.0, 0.0, -1.0]]), top_k=1)
    >>> [row["dropped_fraction"] for row in dropped_by_capacity(r, 3, [1.0, 2.0])]
    [0.3333333333333333, 0.0]
    """
    n_experts = require_positive_int(n_experts, "n_experts")
    experts = _routed_experts(routing, n_experts)
    capacity_factors = require_sequence(capacity_factors, "capacity_factors", item=require_positive_number)
    n_tokens = int(np.prod(experts.shape[:-1]))
    top_k = int(experts.shape[-1])
    rows = []
    for factor in capacity_factors:
        capacity = expert_capacity(n_tokens, n_experts, factor, top_k)
        d = apply_capacity(routing, n_experts, capacity)
        rows.append({"capacity_factor": float(factor), "capacity": capacity,
                     "dropped_fraction": d.dropped_fraction, "dropped_tokens": d.dropped_tokens})
    return rows


def switch_balance_loss(logits, alpha: float = 1.0) -> float:
    """The Switch Transformer load-balancing loss, ``alpha · N · Σ_i f_i · P_i``.

    ``logits`` are a router's scores ``(..., N)``. ``f_i`` is the fraction of
    tokens whose highest-scoring expert is ``i`` (ties to the lower index),
    ``P_i`` the mean softmax probability the router gives expert ``i``
    (Fedus et al., Eqs. 4-6). Under uniform routing both are ``1/N`` and the
    unscaled loss (``alpha = 1``) is 1; if every token goes to one expert with
    certainty it is ``N``. The paper uses ``alpha = 1e-2``.

    >>> round(switch_balance_loss(np.array([[5.0, 0.0], [0.0, 5.0]])), 12)  # balanced: f = P = (1/2, 1/2)
    1.0
    >>> round(switch_balance_loss(np.array([[50.0, 0.0], [50.0, 0.0]])), 6)  # collapsed on expert 0
    2.0
    """
    logits = as_float_array(logits, "logits")
    if logits.ndim < 1 or logits.shape[-1] < 1:
        raise ValueError(f"logits must have shape (..., n_experts), got {logits.shape}")
    require_finite(logits, "logits")
    if logits.size == 0:
        raise ValueError(f"logits must hold at least one token, got shape {logits.shape}")
    alpha = require_positive_number(alpha, "alpha")
    flat = logits.reshape(-1, logits.shape[-1])
    n_experts = flat.shape[1]
    probs = np.exp(flat - flat.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    f = np.bincount(np.argmax(flat, axis=1), minlength=n_experts) / flat.shape[0]
    P = probs.mean(axis=0)
    return float(alpha * n_experts * np.sum(f * P))


@readable
class DropChange(NamedTuple):
    """How a capacity limit lets one token's edit change other tokens' fate."""

    edited_position: int  #: the token that was replaced (in the first sequence)
    expert: int  #: the expert it was sent to, the most requested one
    other_tokens_changed: int  #: other tokens whose set of reached experts changed
    other_tokens_rerouted: int  #: other tokens whose chosen experts changed; none, as routing is per token


def capacity_drop_change(params: MoEParams, x, *, top_k: int = 2, capacity_factor: float = 1.0,
                         position: int = 0) -> DropChange:
    """Replace one token with a copy of a token bound for the busiest expert and compare the drops.

    The replaced token (at ``position`` of the first sequence, served early)
    now competes for the busiest expert's full buffer, so another token that
    used to get in is pushed out, although no other token's routing changed.
    """
    params = check_moe_params(params)
    x = check_input(x, params.d_model, params.W_router.dtype)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq_len, d_model), got {x.shape}")
    flat = x.reshape(-1, params.d_model)
    position = require_index(position, "position", x.shape[-2], of="the first sequence's positions")
    top_k = _check_top_k(top_k, params.n_experts)
    capacity_factor = require_positive_number(capacity_factor, "capacity_factor")
    before = route(flat, params.W_router, top_k)
    demand = np.bincount(before.experts[:, 0], minlength=params.n_experts)
    busiest = int(np.argmax(demand))
    donors = [t for t in np.flatnonzero(before.experts[:, 0] == busiest) if t != position]
    if not donors:
        raise ValueError("x: no other token chose the busiest expert first; use a larger batch")
    edited = flat.copy()
    edited[position] = flat[donors[-1]]
    after = route(edited, params.W_router, top_k)
    capacity = expert_capacity(flat.shape[0], params.n_experts, capacity_factor, top_k)
    kept_before = apply_capacity(before, params.n_experts, capacity).kept
    kept_after = apply_capacity(after, params.n_experts, capacity).kept

    def reached(routing, kept, t):
        return frozenset(int(e) for e, k in zip(routing.experts[t], kept[t]) if k)

    others = [t for t in range(flat.shape[0]) if t != position]
    changed = sum(reached(before, kept_before, t) != reached(after, kept_after, t) for t in others)
    rerouted = sum(not np.array_equal(before.experts[t], after.experts[t]) for t in others)
    return DropChange(int(position), busiest, int(changed), int(rerouted))


#: The most steps :func:`bias_balancing` takes (each routes the whole batch twice, and the loads
#: settle within a few hundred steps at the speeds the chapter uses).
MAX_BALANCING_STEPS = 100_000


class BiasBalancing(NamedTuple):
    """Loads before and after DeepSeek-V3-style bias balancing of one batch."""

    bias: np.ndarray  #: the selection bias reached, one value per expert
    load_before: list  #: token-slots per expert without a bias
    load_after: list  #: token-slots per expert with the final bias
    max_over_mean: list  #: the busiest expert's load over the mean load, at every step


def bias_balancing(logits, top_k: int, *, steps: int = 200, speed: float = 0.01) -> BiasBalancing:
    """Balance the experts' loads with a per-expert selection bias instead of a loss.

    DeepSeek-V3 adds a bias ``b_i`` to each expert's score when choosing the
    top-``k`` experts (only then: the gating weights use the unbiased scores),
    and after each training step lowers ``b_i`` by ``speed`` if expert ``i`` was
    overloaded and raises it by ``speed`` if it was underloaded (its report,
    §2.1.2). Here the same rule is applied ``steps`` times to one fixed batch of
    router scores, to show what it does to the loads; no weight is trained.

    >>> r = bias_balancing(np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.5], [1.0, 0.2]]), 1, steps=100, speed=0.05)
    >>> r.load_before, r.load_after
    ([4, 0], [2, 2])
    """
    logits = as_float_array(logits, "logits", finite=True)
    if logits.ndim < 1 or logits.size == 0:
        raise ValueError(f"logits must have shape (..., n_experts) with at least one token, got {logits.shape}")
    flat = logits.reshape(-1, logits.shape[-1])
    n_experts = flat.shape[1]
    top_k = _check_top_k(top_k, n_experts)
    steps = require_positive_int(steps, "steps", maximum=MAX_BALANCING_STEPS)
    speed = require_positive_number(speed, "speed")
    bias = np.zeros(n_experts)

    def load(b):
        return np.bincount(route_logits(flat, top_k, selection_bias=b).experts.ravel(), minlength=n_experts)

    before = load(bias)
    mean = flat.shape[0] * top_k / n_experts
    ratios = [float(before.max() / mean)]
    for _ in range(steps):
        current = load(bias)
        bias = bias - speed * np.sign(current - mean)
        ratios.append(float(load(bias).max() / mean))
    return BiasBalancing(bias, [int(c) for c in before], [int(c) for c in load(bias)], ratios)


@styled
def balancing_figure(load_before, load_after, capacity: int, top_k: int) -> BookFigure:
    """Token-slots per expert before and after bias balancing, with one expert's capacity marked."""
    before = require_sequence(load_before, "load_before", expected="a list of token-slot counts",
                              item=require_nonnegative_int)
    after = require_sequence(load_after, "load_after", expected="a list of token-slot counts",
                             item=require_nonnegative_int)
    require_same_length({"load_before": before, "load_after": after})
    if sum(before) != sum(after):
        raise ValueError(f"load_before and load_after must count the same token-slots, got {sum(before)} "
                         f"and {sum(after)}")
    capacity = require_positive_int(capacity, "capacity")
    top_k = require_positive_int(top_k, "top_k")
    n_experts = len(before)
    xs = np.arange(n_experts)
    fig = new_figure(7.0, 3.8)
    ax = fig.add_subplot()
    ax.bar(xs - 0.2, before, width=0.4, color=OTHER_COLOURS[1], label="skewed router")
    ax.bar(xs + 0.2, after, width=0.4, color=OTHER_COLOURS[0], edgecolor="white",
           label="with the selection bias")
    ax.axhline(capacity, color="#222222", linestyle="--", linewidth=1.2, label=f"capacity ({capacity})")
    ax.set_xticks(xs, [str(i) for i in xs])
    ax.set_xlabel("expert")
    ax.set_ylabel(f"token-slots (top-{top_k})")
    ax.set_ylim(0, max(max(before), capacity) * 1.3)
    ax.grid(axis="x", visible=False)
    ax.legend(loc="upper center", ncol=3, fontsize=9)
    over_before = sum(max(0, c - capacity) for c in before)
    over_after = sum(max(0, c - capacity) for c in after)
    return BookFigure(
        fig,
        f"Grouped bar chart of token-slots per expert for {n_experts} experts under top-{top_k} routing, "
        f"with a dashed line at each expert's capacity of {capacity}. The skewed router's loads are "
        f"{', '.join(map(str, before))}: {over_before} slots above capacity. With the balancing bias "
        f"they are {', '.join(map(str, after))}: {over_after} slots above capacity.",
    )


# --- beyond top-k: expert choice, finer experts, the router z-loss -----------------------------


class ExpertChoice(NamedTuple):
    """Which tokens each expert chose (expert-choice routing), and the gates it mixes them with."""

    tokens: np.ndarray  #: ``(n_experts, capacity)`` token indices, the expert's highest affinity first
    gates: np.ndarray  #: ``(n_experts, capacity)`` the chosen tokens' affinities (softmax over experts)
    affinity: np.ndarray  #: ``(n_tokens, n_experts)``, each row a softmax over the experts

    def experts_of(self, token: int) -> frozenset:
        """The experts that chose ``token`` (possibly none)."""
        n_tokens = self.affinity.shape[0]
        if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= token < n_tokens:
            raise ValueError(f"token must be an integer in [0, {n_tokens}), got {token!r}")
        return frozenset(int(e) for e in np.flatnonzero((self.tokens == token).any(axis=1)))

    def experts_per_token(self) -> list[int]:
        """How many experts chose each token: zero, one or several."""
        return [int(c) for c in np.bincount(self.tokens.ravel(), minlength=self.affinity.shape[0])]


def expert_choice_route(logits, capacity: int) -> ExpertChoice:
    """Expert-choice routing (Zhou et al. 2022): every expert picks its ``capacity`` best tokens.

    ``logits`` are the router's scores for a batch, shape ``(n_tokens,
    n_experts)``. Each token's scores become affinities with a softmax over
    the experts, ``S = softmax(x W_r)``; then each *expert* takes the
    ``capacity`` tokens with the highest affinity for it (ties to the lower
    token index), and uses those affinities as the tokens' gates. Every expert
    gets exactly ``capacity`` tokens, so the load is balanced by construction;
    a token may be chosen by several experts or by none, and which experts
    choose it depends on every other token in the batch. The paper sets
    ``capacity = n_tokens · c / n_experts`` with a capacity factor ``c``
    (:func:`expert_capacity` with that factor and ``top_k=1``).

    >>> ec = expert_choice_route(np.log(np.array([[4.0, 1.0], [3.0, 1.0], [1.0, 2.0]])), capacity=1)
    >>> ec.tokens.tolist(), ec.experts_per_token()
    ([[0], [2]], [1, 0, 1])
    """
    logits = as_float_array(logits, "logits")
    if logits.ndim != 2:
        raise ValueError(f"logits must have shape (n_tokens, n_experts), got {logits.shape}")
    require_finite(logits, "logits")
    n_tokens, n_experts = logits.shape
    capacity = require_positive_int(capacity, "capacity")
    if capacity > n_tokens:
        raise ValueError(f"capacity must be at most the batch's n_tokens={n_tokens} (the rows of logits), "
                         f"got {capacity}")
    affinity = np.exp(logits - logits.max(axis=1, keepdims=True))
    affinity /= affinity.sum(axis=1, keepdims=True)
    # For every expert (a column), a stable sort of the negated affinities: best first, ties to lower index.
    tokens = np.argsort(-affinity.T, axis=1, kind="stable")[:, :capacity]
    gates = np.take_along_axis(affinity.T, tokens, axis=1)
    return ExpertChoice(tokens, gates, affinity)


def expert_choice_layer(x, params: MoEParams, capacity: int, activation: str = "relu") -> tuple[np.ndarray, ExpertChoice]:
    """An MoE layer with expert-choice routing over the tokens of ``x`` (``(n_tokens, d_model)``).

    Each expert runs on the tokens it chose; a token's output is the
    gate-weighted sum over the experts that chose it, and zero for a token no
    expert chose (its vector passes on through the residual connection).
    """
    params = check_moe_params(params)
    x = check_input(x, params.d_model, params.W_router.dtype)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"x must have shape (n_tokens >= 1, d_model): expert choice routes one batch, got {x.shape}")
    choice = expert_choice_route(x @ params.W_router, capacity)
    out = np.zeros_like(x)
    for e, expert in enumerate(params.experts):
        chosen = choice.tokens[e]
        out[chosen] += choice.gates[e, :, None] * ffn(x[chosen], *expert, activation=activation)
    return out, choice


@readable
class BatchDependence(NamedTuple):
    """How replacing one token changed the other tokens' experts, under two routing schemes."""

    edited_position: int  #: the token that was replaced
    earlier_changed_expert_choice: int  #: earlier tokens whose set of experts changed, expert choice
    others_changed_expert_choice: int  #: all other tokens whose set of experts changed, expert choice
    others_changed_top_k: int  #: the same under top-k routing, always zero since it routes each token alone
    unchosen_tokens: int  #: tokens no expert chose, before the edit


def expert_choice_batch_dependence(params: MoEParams, x, *, capacity: int, top_k: int = 2,
                                   position: int | None = None, seed: int = 1) -> BatchDependence:
    """Replace one token of the batch ``x`` (``(n_tokens, d_model)``) and see whose experts change.

    By default the *last* token is replaced, by a fresh random vector from
    ``seed`` scaled like ``x``: under expert choice, tokens *before* it can lose
    or gain experts, which is why a decoder that must route a token before its
    successors exist cannot use the scheme as it is. Under top-``k`` routing no
    other token's experts change.
    """
    params = check_moe_params(params)
    x = check_input(x, params.d_model, params.W_router.dtype)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (n_tokens, d_model), got {x.shape}")
    n_tokens = x.shape[0]
    if n_tokens == 0:
        raise ValueError(f"x must hold at least one token, got shape {x.shape}")
    position = n_tokens - 1 if position is None else require_index(position, "position", n_tokens, of="x's tokens")
    capacity = require_positive_int(capacity, "capacity")
    top_k = _check_top_k(top_k, params.n_experts)
    edited = x.copy()
    edited[position] = np.random.default_rng(require_seed(seed)).standard_normal(params.d_model) * x.std()
    before = expert_choice_route(x @ params.W_router, capacity)
    after = expert_choice_route(edited @ params.W_router, capacity)
    others = [t for t in range(n_tokens) if t != position]
    changed = [t for t in others if before.experts_of(t) != after.experts_of(t)]
    top_before, top_after = route(x, params.W_router, top_k), route(edited, params.W_router, top_k)
    top_changed = sum(not np.array_equal(top_before.experts[t], top_after.experts[t]) for t in others)
    return BatchDependence(int(position), sum(t < position for t in changed), len(changed), int(top_changed),
                           before.experts_per_token().count(0))


def routing_combinations(n_experts: int, top_k: int) -> int:
    """How many different sets of ``top_k`` experts a router can pick from ``n_experts``: ``C(n, k)``.

    DeepSeekMoE's fine-grained experts split each expert into ``m`` narrower
    ones and route to ``m·k`` of them: the same parameters and FLOPs, far more
    combinations.

    >>> routing_combinations(16, 2), routing_combinations(64, 8)
    (120, 4426165368)
    """
    n_experts = require_positive_int(n_experts, "n_experts")
    top_k = _check_top_k(top_k, n_experts)
    return math.comb(n_experts, top_k)


def fine_grained_split(d_model: int, d_ff: int, n_experts: int, top_k: int, m: int, *, gated: bool = False) -> dict:
    """DeepSeekMoE's fine-grained segmentation: ``n_experts`` experts of width ``d_ff`` split ``m`` ways.

    Each expert becomes ``m`` experts of width ``d_ff / m`` and each token uses
    ``m·top_k`` of them. Returns the expert weights stored and used per token
    before and after (equal: the split moves no weight) and the number of
    expert sets the router can choose from (:func:`routing_combinations`).
    Biases and the router are left out.

    >>> s = fine_grained_split(512, 2048, 16, 2, 4)
    >>> s["stored"] == s["stored_fine"], s["active"] == s["active_fine"], s["combinations_fine"]
    (True, True, 4426165368)
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    n_experts = require_positive_int(n_experts, "n_experts")
    top_k = _check_top_k(top_k, n_experts)
    m = require_positive_int(m, "m")
    if d_ff % m:
        raise ValueError(f"m must divide d_ff={d_ff} so the narrower experts have whole widths, got {m}")
    gated = require_bool(gated, "gated")
    matrices = 3 if gated else 2

    def expert(width):
        return matrices * d_model * width

    return {
        "stored": n_experts * expert(d_ff), "active": top_k * expert(d_ff),
        "stored_fine": n_experts * m * expert(d_ff // m), "active_fine": top_k * m * expert(d_ff // m),
        "combinations": routing_combinations(n_experts, top_k),
        "combinations_fine": routing_combinations(n_experts * m, top_k * m),
    }


def router_z_loss(logits) -> float:
    """ST-MoE's router z-loss: the mean over tokens of ``(log Σ_j exp(logit_j))²``.

    It penalises large router logits, which Zoph et al. (2022) found to
    destabilise training through roundoff in the exponentials; it is added to
    the training loss with a small coefficient. ``logits`` has shape
    ``(..., n_experts)``. Shifting all of a token's logits by a constant changes
    neither its softmax nor its top-``k`` choice, but does change the z-loss.

    >>> round(router_z_loss(np.zeros((3, 4))), 12) == round(float(np.log(4.0)) ** 2, 12)  # log Σ e^0, four experts
    True
    """
    logits = as_float_array(logits, "logits")
    if logits.ndim < 1 or logits.shape[-1] < 1:
        raise ValueError(f"logits must have shape (..., n_experts), got {logits.shape}")
    require_finite(logits, "logits")
    top = logits.max(axis=-1, keepdims=True)
    log_z = (top + np.log(np.exp(logits - top).sum(axis=-1, keepdims=True)))[..., 0]
    return float(np.mean(log_z**2))


# --- serving: experts touched by a batch of tokens ----------------------------------------------


def expected_distinct_experts(n_experts: int, top_k: int, batch_size: int) -> float:
    """Expected number of distinct experts a batch of tokens uses in one MoE layer.

    Assumes each token picks its ``top_k`` of ``n_experts`` experts uniformly
    at random and independently of the other tokens: a given expert is missed
    by one token with probability ``1 - k/E``, by all ``B`` with ``(1 - k/E)^B``,
    so ``E · (1 - (1 - k/E)^B)`` are used on average. For independent tokens
    this is the most any router can use: with uneven chances ``p_e`` (summing
    to ``k``) the expectation is ``Σ_e 1 - (1 - p_e)^B``, a concave function of
    the ``p_e``, largest when all are ``k/E``. DeepSeek-V3's limit on the groups
    of experts a token may use leaves each expert's chance at ``k/E`` when the
    choice is otherwise uniform, and so does not change this value.

    >>> expected_distinct_experts(8, 2, 1), expected_distinct_experts(8, 8, 5)
    (2.0, 8.0)
    """
    n_experts = require_positive_int(n_experts, "n_experts")
    top_k = _check_top_k(top_k, n_experts)
    batch_size = require_positive_int(batch_size, "batch_size")
    return float(n_experts * (1.0 - (1.0 - top_k / n_experts) ** batch_size))


def simulate_distinct_experts(n_experts: int, top_k: int, batch_size: int, *, trials: int = 2000,
                              seed: int = 0) -> tuple[float, float]:
    """Monte Carlo estimate of :func:`expected_distinct_experts`: (mean, standard error) over ``trials``.

    Every token of every trial draws ``top_k`` distinct experts uniformly at random.
    """
    n_experts = require_positive_int(n_experts, "n_experts")
    top_k = _check_top_k(top_k, n_experts)
    batch_size = require_positive_int(batch_size, "batch_size")
    trials = require_positive_int(trials, "trials")
    if trials < 2:
        raise ValueError(f"trials must be at least 2 for a standard error, got {trials}")
    require_tensor_size({"trials": trials, "batch_size": batch_size, "n_experts": n_experts},
                        ("trials", "batch_size", "n_experts"))
    rng = np.random.default_rng(require_seed(seed))
    # For each token, the top_k smallest of n_experts uniform draws are a uniform random k-subset.
    draws = rng.random((trials, batch_size, n_experts))
    picked = np.argpartition(draws, top_k - 1, axis=-1)[..., :top_k]
    hit = np.zeros((trials, batch_size, n_experts), dtype=bool)
    np.put_along_axis(hit, picked, True, axis=-1)
    counts = hit.any(axis=1).sum(axis=1)
    return float(counts.mean()), float(counts.std(ddof=1) / np.sqrt(trials))
