"""Taking a trained tiny transformer apart: which part stores the facts, and how.

Measurements on a :class:`~ffnbook.tiny_transformer.TinyTransformer` trained
on a :mod:`~ffnbook.facts` world, each returning builtins (or arrays) ready
for the page:

* **ablation**: recall with a sublayer's output replaced by zero or by its
  average (:func:`ablation_study`);
* **the key–value reading**: for every FFN hidden unit, the facts that drive
  it at the ``→`` position (its key side) and the tokens its value vector
  promotes through the unembedding (its value side), and a label for what
  the unit reads as (:func:`read_neurons`);
* **position independence** on the trained weights (:func:`reshape_diffs`,
  :func:`influence_matrices`) and where the trained attention looks
  (:func:`attention_share_on_fact`);
* **capacity**: recall against the number of facts for a few FFN widths
  (:func:`capacity_sweep`).

This module imports torch.
"""

from __future__ import annotations

import copy
from typing import NamedTuple, Sequence

import numpy as np
import torch

from ._checks import (as_float_array, as_index_array, describe, require_choice, require_index, require_instance,
                      require_names, require_nonnegative_int, require_number, require_positive_int, require_sequence)
from .block import _influence_panels, influence_matrix
from .facts import FactWorld, Prompts, check_facts, check_world, make_world
from .plotting import PALETTE, BookFigure, new_figure, styled
from .position_independence import ffn_layer, reshape_max_diff
from .tiny_transformer import (
    ModelConfig,
    TinyTransformer,
    TrainConfig,
    check_prompts,
    check_transformer,
    layer_norm,
    guessed_objects,
    recall,
    train_on_facts,
)

# --- ablation ------------------------------------------------------------------------------

#: The two ways :func:`ablation_study` knocks a sublayer out.
ABLATION_METHODS = ("zero", "mean")


def mean_outputs(model: TinyTransformer, prompts: Prompts) -> dict[str, list[torch.Tensor]]:
    """Per block, each sublayer's average output at every position, ``(seq_len, d_model)``.

    The average runs over the prompts; it is what mean ablation writes in
    place of the sublayer's real output.
    """
    check_prompts(prompts, check_transformer(model))
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
    return {"ffn": [t.mean(dim=0) for t in trace.ffn_outputs],
            "attention": [t.mean(dim=0) for t in trace.attention_outputs]}


def ablation_study(model: TinyTransformer, world: FactWorld, prompts: Prompts) -> list[dict]:
    """Recall with the model intact and with sublayers knocked out.

    For each part (``"ffn"``, ``"attention"``), each method (``"zero"``:
    the sublayer adds nothing; ``"mean"``: it adds, at each position, its
    average output over ``prompts``, so only what is specific to a prompt is
    removed) and each block alone, then all blocks at once. Rows are dicts
    ``{"part", "blocks", "method", "recall"}``; the intact model is the row
    with part ``"none"``.
    """
    check_world(world)
    means = mean_outputs(model, prompts)
    n_blocks = len(model.blocks)
    rows = [{"part": "none", "blocks": (), "method": "none", "recall": recall(model, world, prompts)}]
    for part in ("ffn", "attention"):
        for method in ABLATION_METHODS:
            for blocks in [(b,) for b in range(n_blocks)] + [tuple(range(n_blocks))]:
                knock = {b: "zero" if method == "zero" else means[part][b] for b in blocks}
                value = recall(model, world, prompts, **{f"{part}_ablation": knock})
                rows.append({"part": part, "blocks": blocks, "method": method, "recall": value})
    return rows


def ablated_recall(rows: list[dict], part: str, blocks: Sequence[int] = (), method: str = "none") -> float:
    """The recall of one condition of :func:`ablation_study`.

    >>> ablated_recall([{"part": "ffn", "blocks": (0,), "method": "zero", "recall": 0.5}], "ffn", [0], "zero")
    0.5
    """
    rows = _ablation_rows(rows)
    require_choice(part, "part", ("none", "ffn", "attention"))
    require_choice(method, "method", ("none", *ABLATION_METHODS))
    blocks = tuple(require_sequence(blocks, "blocks", min_len=0, item=require_nonnegative_int))
    for row in rows:
        if row["part"] == part and tuple(row["blocks"]) == blocks and row["method"] == method:
            return row["recall"]
    raise ValueError(f"rows hold no ablation row for part={part!r}, blocks={blocks}, method={method!r}")


def _ablation_rows(rows) -> list[dict]:
    """Rows of :func:`ablation_study`: dicts with part, blocks, method and a recall in [0, 1]."""
    def row(r, label):
        if not isinstance(r, dict) or not {"part", "blocks", "method", "recall"} <= r.keys():
            raise TypeError(f"{label} must be a row of ablation_study(), a dict with keys part, blocks, method and "
                            f"recall, got {describe(r)}")
        require_number(r["recall"], f"{label}['recall']", low=0, high=1)
        return r
    return require_sequence(rows, "rows", expected="a list of ablation_study() rows", item=row)


def _condition_label(row: dict, n_blocks: int) -> str:
    if row["part"] == "none":
        return "intact model"
    part = "FFN" if row["part"] == "ffn" else "attention"
    where = "all blocks" if len(row["blocks"]) == n_blocks and n_blocks > 1 else f"block {row['blocks'][0]}"
    return f"{part}, {where}, {row['method']}"


@styled
def ablation_figure(rows: list[dict], chance: float) -> BookFigure:
    """Horizontal bars: recall for every condition of :func:`ablation_study`, with chance marked."""
    rows = _ablation_rows(rows)
    chance = require_number(chance, "chance", low=0, high=1, low_open=True)
    n_blocks = max(len(r["blocks"]) for r in rows)
    labels = [_condition_label(r, n_blocks) for r in rows]
    colours = [PALETTE[6] if r["part"] == "none" else PALETTE[1] if r["part"] == "ffn" else PALETTE[0]
               for r in rows]
    hatches = ["//" if r["method"] == "mean" else "" for r in rows]
    fig = new_figure(7.5, 0.36 * len(rows) + 1.4)
    ax = fig.subplots()
    y = np.arange(len(rows))[::-1]
    bars = ax.barh(y, [100 * r["recall"] for r in rows], color=colours, height=0.7, edgecolor="white")
    for bar, hatch in zip(bars, hatches):
        bar.set_hatch(hatch)
    ax.axvline(100 * chance, color="#222222", linestyle="--", linewidth=1.2,
               label=f"chance (1 in {round(1 / chance)})")
    ax.set_yticks(y, labels)
    ax.set_xlim(0, 100)
    ax.set_xlabel("facts recalled (%)")
    ax.set_title("Recall with one sublayer knocked out")
    ax.legend(loc="lower right")
    ax.grid(axis="y", visible=False)
    bars = "; ".join(f"{label}: {100 * r['recall']:.0f}%" for label, r in zip(labels, rows))
    return BookFigure(fig, (
        f"Horizontal bar chart of recall, one bar per condition, with a dashed line at chance "
        f"({100 * chance:.1f}%). The black bar is the intact model, orange bars FFN ablations, blue bars "
        f"attention ablations; hatched bars are mean ablations, plain bars zero ablations. {bars}."))


# --- the key–value reading --------------------------------------------------------------------

#: What a hidden unit can read as, in the order :func:`read_neurons` tests for it.
NEURON_KINDS = {
    "dead": "never active at the → position",
    "memory": "every fact that drives it strongly has one answer, and its value promotes that answer first",
    "subject": "driven strongly by two or more facts of one subject with different answers",
    "relation": "driven strongly by two or more facts of one relation with different answers",
    "mixed": "any other live unit: its strong facts share no one subject or relation, or share one answer "
             "that its value does not promote first",
}


#: A fact drives a unit *strongly* when it reaches this share of the unit's peak activation.
STRONG_SHARE = 0.5


def answer_activations(model: TinyTransformer, prompts: Prompts, n_contexts: int) -> list[np.ndarray]:
    """Per block, each hidden unit's activation at ``→``, averaged over a fact's contexts.

    ``prompts`` must come from :func:`ffnbook.facts.fact_prompts` with
    ``n_contexts`` (rows grouped fact by fact). Returns arrays of shape
    ``(n_facts, d_ff)``.
    """
    check_prompts(prompts, check_transformer(model))
    n_contexts = require_positive_int(n_contexts, "n_contexts")
    n = len(prompts.tokens)
    if n % n_contexts:
        raise ValueError(f"n_contexts={n_contexts} does not divide the {n} prompts into groups, one per fact")
    grouped = prompts.facts.reshape(n // n_contexts, n_contexts, 2)
    if not np.all(grouped == grouped[:, :1]):
        raise ValueError("prompts must be grouped fact by fact, as ffnbook.facts.fact_prompts makes them")
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden
    return [h[:, -1, :].numpy().astype(np.float64).reshape(n // n_contexts, n_contexts, -1).mean(axis=1)
            for h in hidden]


def _block(model, block) -> int:
    """``block`` checked as an index into ``model``'s blocks (no negative wrap)."""
    return require_index(block, "block", len(check_transformer(model).blocks), of="the model's blocks")


def value_logits(model: TinyTransformer, block: int) -> np.ndarray:
    """How much each hidden unit's value vector raises each token's logit: ``(d_ff, vocab_size)``.

    Value ``i`` is row ``i`` of the FFN's ``W2`` (NumPy convention). The
    final layer norm subtracts every vector's mean before the unembedding,
    so the value is centred the same way and then multiplied by the
    unembedding matrix. This ignores the norm's rescaling, which is shared
    by all tokens and so does not change which tokens a value favours.
    """
    block = _block(model, block)
    W2 = model.blocks[block].ffn.down.weight.detach().numpy().T.astype(np.float64)
    centred = W2 - W2.mean(axis=1, keepdims=True)
    return centred @ model.unembed.weight.detach().numpy().T.astype(np.float64)


class NeuronReading(NamedTuple):
    """The key–value reading of one hidden unit."""

    block: int  #: the block whose FFN holds the unit
    neuron: int  #: index of the hidden unit
    kind: str  #: one of NEURON_KINDS
    peak: float  #: its largest average activation over the facts
    strong: tuple  #: indices of the facts that drive it to at least ``strong`` × peak, strongest first
    n_answers: int  #: how many different answers those facts have
    promoted: tuple  #: token ids its value raises most, highest first


def read_neurons(activations, facts, answers, value_scores, object_tokens, *, strong: float = STRONG_SHARE,
                 n_promoted: int = 3, block: int = 0) -> list[NeuronReading]:
    """Read every hidden unit as a key–value memory and label it (see :data:`NEURON_KINDS`).

    Parameters
    ----------
    activations : ``(n_facts, d_ff)``, each unit's activation per fact (:func:`answer_activations`)
    facts : ``(n_facts, 2)`` (subject, relation) rows, in the same order
    answers : ``(n_facts,)`` object ids of those facts
    value_scores : ``(d_ff, vocab_size)``, what each value promotes (:func:`value_logits`)
    object_tokens : ``(n_objects,)`` the token id of each object id
    strong : a fact drives a unit *strongly* when it reaches this share of the unit's peak
    n_promoted : how many promoted tokens to keep per unit
    block : the block the units belong to, recorded in each reading

    A unit is ``"memory"`` when all its strong facts share one answer and its
    value raises that answer's token above every other token.

    >>> acts = np.array([[2.0, 0.0], [0.1, 1.0], [0.0, 1.0]])
    >>> facts = np.array([[0, 0], [0, 1], [1, 1]]); answers = np.array([0, 1, 0])
    >>> scores = np.array([[3.0, 0.0], [0.0, 1.0]])  # unit 0 promotes token 0, unit 1 token 1
    >>> [(r.kind, r.strong) for r in read_neurons(acts, facts, answers, scores, np.array([0, 1]))]
    [('memory', (0,)), ('relation', (1, 2))]
    """
    activations = as_float_array(activations, "activations", finite=True).astype(np.float64)
    facts = as_index_array(facts, "facts", what="(subject, relation) ids")
    value_scores = as_float_array(value_scores, "value_scores", finite=True).astype(np.float64)
    object_tokens = as_index_array(object_tokens, "object_tokens", ndim=1, what="token ids")
    answers = as_index_array(answers, "answers", high=len(object_tokens), what="object ids")
    if value_scores.ndim == 2 and object_tokens.size and object_tokens.max() >= value_scores.shape[1]:
        raise ValueError(f"object_tokens must be token ids below value_scores' vocabulary of {value_scores.shape[1]}, "
                         f"got {int(object_tokens.max())}")
    strong = require_number(strong, "strong", low=0, high=1, low_open=True)
    n_promoted = require_positive_int(n_promoted, "n_promoted")
    block = require_nonnegative_int(block, "block")
    if activations.ndim != 2 or facts.shape != (activations.shape[0], 2) or answers.shape != (activations.shape[0],):
        raise ValueError(f"activations (n_facts, d_ff), facts (n_facts, 2) and answers (n_facts,) must agree; "
                         f"got {activations.shape}, {facts.shape}, {answers.shape}")
    if value_scores.ndim != 2 or value_scores.shape[0] != activations.shape[1]:
        raise ValueError(f"value_scores must have shape (d_ff={activations.shape[1]}, vocab_size), "
                         f"got {value_scores.shape}")
    readings = []
    for i in range(activations.shape[1]):
        a = activations[:, i]
        peak = float(a.max())
        promoted = tuple(int(t) for t in np.argsort(-value_scores[i], kind="stable")[:n_promoted])
        if peak <= 0.0:
            readings.append(NeuronReading(block, i, "dead", peak, (), 0, promoted))
            continue
        chosen = np.flatnonzero(a >= strong * peak)
        chosen = chosen[np.argsort(-a[chosen], kind="stable")]
        kinds_of_answer = np.unique(answers[chosen])
        if len(kinds_of_answer) == 1 and promoted[0] == int(object_tokens[kinds_of_answer[0]]):
            kind = "memory"
        elif len(chosen) >= 2 and len(np.unique(facts[chosen, 0])) == 1:
            kind = "subject"
        elif len(chosen) >= 2 and len(np.unique(facts[chosen, 1])) == 1:
            kind = "relation"
        else:
            kind = "mixed"
        readings.append(NeuronReading(block, i, kind, peak, tuple(int(f) for f in chosen),
                                      len(kinds_of_answer), promoted))
    return readings


def kind_counts(readings: Sequence[NeuronReading]) -> dict[str, int]:
    """How many units read as each kind, in the order of :data:`NEURON_KINDS`."""
    readings = _readings(readings)
    return {kind: sum(r.kind == kind for r in readings) for kind in NEURON_KINDS}


def polysemantic_count(readings: Sequence[NeuronReading]) -> int:
    """How many units are driven strongly by facts with more than one answer."""
    readings = _readings(readings)
    return sum(r.n_answers > 1 for r in readings)


def _readings(readings, min_len: int = 0) -> list:
    return require_sequence(readings, "readings", min_len=min_len, expected="a list of NeuronReading",
                            item=lambda r, label: require_instance(r, label, NeuronReading))


class FiringSummary(NamedTuple):
    """How spread out the storage is: facts per unit and units per fact."""

    facts_per_unit: float  #: median number of facts that drive a live unit strongly
    units_per_fact: float  #: mean number of live units a fact drives strongly
    live_units: int  #: units active for at least one fact


def firing_summary(activations, *, strong: float = STRONG_SHARE) -> FiringSummary:
    """Facts per unit and units per fact for an ``(n_facts, d_ff)`` activation table.

    A fact drives a unit *strongly* when the unit's activation reaches
    ``strong`` times its peak over all facts (dead units are left out). For
    the hand-built memory of :mod:`ffnbook.memory`, queried with its own
    keys, both numbers are exactly one.

    >>> firing_summary(np.eye(3))
    FiringSummary(facts_per_unit=1.0, units_per_fact=1.0, live_units=3)
    """
    a = as_float_array(activations, "activations", finite=True).astype(np.float64)
    strong = require_number(strong, "strong", low=0, high=1, low_open=True)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"activations must have shape (n_facts, d_ff), at least one of each, got {a.shape}")
    peak = a.max(axis=0)
    live = peak > 0
    if not live.any():
        raise ValueError("no unit is active for any fact")
    strong_table = (a >= strong * peak) & live
    return FiringSummary(
        facts_per_unit=float(np.median(strong_table[:, live].sum(axis=0))),
        units_per_fact=float(strong_table.sum(axis=1).mean()),
        live_units=int(live.sum()),
    )


def ffn_direct_recall(model: TinyTransformer, world: FactWorld, prompts: Prompts, block: int) -> float:
    """Share of prompts for which one FFN's own output at ``→`` names the right object.

    The FFN's output (the sum of its values, each weighted by its unit's
    activation, plus ``b2``) is centred and read through the unembedding,
    as :func:`value_logits` reads single values; the object with the
    highest score is its guess. The rest of the residual stream is ignored.
    """
    check_world(world)
    check_prompts(prompts, check_transformer(model))
    block = _block(model, block)
    with torch.no_grad():
        out = model.trace(prompts.tokens).ffn_outputs[block][:, -1, :]
        scores = (out - out.mean(dim=-1, keepdim=True)) @ model.unembed.weight.T
    return float((guessed_objects(scores, world) == prompts.answers).mean())


def pick_examples(readings: Sequence[NeuronReading], kinds=("memory", "subject", "relation", "mixed")) -> list:
    """For each kind that occurs, the unit of that kind with the highest peak activation."""
    readings = _readings(readings)
    kinds = require_names(kinds, "kinds", NEURON_KINDS)
    picked = []
    for kind in kinds:
        of_kind = [r for r in readings if r.kind == kind]
        if of_kind:
            picked.append(max(of_kind, key=lambda r: (r.peak, -r.neuron)))
    return picked


def _fact_label(world: FactWorld, fact) -> str:
    s, r = (int(v) for v in fact)
    return f"s{s} r{r} → o{int(world.objects[s, r])}"


def _readings_fit(readings, n_facts: int, n_blocks: int | None = None) -> None:
    """Refuse readings that name facts beyond ``n_facts`` (or blocks beyond ``n_blocks``)."""
    for i, r in enumerate(readings):
        if any(not 0 <= f < n_facts for f in r.strong):
            raise ValueError(f"readings[{i}] names facts beyond the {n_facts} given in facts")
        if n_blocks is not None and not 0 <= r.block < n_blocks:
            raise ValueError(f"readings[{i}] is of block {r.block}, but activations holds {n_blocks} blocks")


def neuron_table(world: FactWorld, facts, readings: Sequence[NeuronReading], *, n_facts: int = 3):
    """A table of units: kind, how many facts drive each, the strongest ones, what the value promotes."""
    from .display import MarkdownTable

    facts = check_facts(world, facts)
    readings = _readings(readings, min_len=1)
    n_facts = require_positive_int(n_facts, "n_facts")
    _readings_fit(readings, len(facts))
    names = world.token_names()
    rows = [{
        "block": r.block, "unit": r.neuron, "kind": r.kind, "n_strong": len(r.strong), "n_answers": r.n_answers,
        "top": "; ".join(_fact_label(world, facts[f]) for f in r.strong[:n_facts]),
        "promoted": ", ".join(names[t] for t in r.promoted),
    } for r in readings]
    return MarkdownTable(rows, [("block", "block", "d"), ("unit", "unit", "d"), ("reads as", "kind", "s"),
                                ("facts driving it", "n_strong", "d"), ("their answers", "n_answers", "d"),
                                ("strongest facts (key side)", "top", "s"),
                                ("tokens its value promotes", "promoted", "s")])


@styled
def neuron_figure(world: FactWorld, facts, activations: Sequence, readings: Sequence[NeuronReading]) -> BookFigure:
    """One subject × relation heatmap per unit: how strongly each fact drives it at ``→``.

    ``activations[b]`` is block ``b``'s ``(n_facts, d_ff)`` table from
    :func:`answer_activations` for ``facts``. Facts left out of training
    are grey.
    """
    from matplotlib.colors import LinearSegmentedColormap

    facts = check_facts(world, facts)
    readings = _readings(readings, min_len=1)
    activations = require_sequence(activations, "activations", expected="a list of (n_facts, d_ff) arrays, one per block",
                                   item=lambda a, label: as_float_array(a, label, finite=True, ndim=2))
    for i, a in enumerate(activations):
        if a.shape[0] != len(facts):
            raise ValueError(f"activations[{i}] must have one row per fact ({len(facts)}), got shape {a.shape}")
    _readings_fit(readings, len(facts), len(activations))
    for i, r in enumerate(readings):
        if not 0 <= r.neuron < activations[r.block].shape[1]:
            raise ValueError(f"readings[{i}] names unit {r.neuron}, beyond block {r.block}'s "
                             f"{activations[r.block].shape[1]} units")
    cmap = LinearSegmentedColormap.from_list("ffnbook_orange", ["#ffffff", PALETTE[1], "#5a2700"]).with_extremes(
        bad="#bbbbbb")
    names = world.token_names()
    fig = new_figure(2.9 * len(readings) + 0.6, 3.7)
    axes = np.atleast_1d(fig.subplots(1, len(readings)))
    for ax, r in zip(axes, readings):
        grid = np.full((world.n_subjects, world.n_relations), np.nan)
        grid[facts[:, 0], facts[:, 1]] = np.asarray(activations[r.block])[:, r.neuron]
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=max(r.peak, 1e-12))
        ax.set_title(f"block {r.block}, unit {r.neuron}: {r.kind}\nvalue → {', '.join(names[t] for t in r.promoted)}",
                     fontsize=10)
        ax.set_xlabel("relation")
        ax.set_ylabel("subject")
        ax.grid(False)
        fig.colorbar(image, ax=ax, shrink=0.7).set_label("activation at →")
    units = " ".join(
        f"Block {r.block}, unit {r.neuron} ({r.kind}): driven strongly by {len(r.strong)} "
        f"fact{'s' if len(r.strong) != 1 else ''}, strongest {_fact_label(world, facts[r.strong[0]]) if r.strong else 'none'}; "
        f"its value promotes {', '.join(names[t] for t in r.promoted)}."
        for r in readings)
    return BookFigure(fig, (
        "Heatmaps, one per example FFN unit, of its activation at the query position for every fact, "
        "subjects as rows and relations as columns, darker for stronger, held-out facts grey. " + units))


# --- position independence on trained weights ------------------------------------------------

def _numpy_layer(module_fn):
    """A NumPy-in, NumPy-out function from a torch function on float64 tensors."""
    def layer(x):
        with torch.no_grad():
            return module_fn(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))).numpy()
    return layer


def sublayer_layers(model: TinyTransformer, block: int) -> dict:
    """The trained sublayers of one block as NumPy layers on the residual stream, in float64.

    ``"attention"`` is ``x ↦ Attention(LN(x))`` (causal), ``"ffn"`` is
    ``x ↦ FFN(LN(x))``: what each sublayer adds to the stream it reads.
    """
    block = _block(model, block)
    twin = copy.deepcopy(model).double()
    b = twin.blocks[block]
    return {"attention": _numpy_layer(lambda t: b.attention(layer_norm(t))),
            "ffn": _numpy_layer(lambda t: b.ffn(layer_norm(t)))}


def block_inputs(model: TinyTransformer, prompts: Prompts, block: int) -> np.ndarray:
    """The residual stream entering ``block``, float64 ``(n, seq_len, d_model)``."""
    check_prompts(prompts, check_transformer(model))
    block = _block(model, block)
    with torch.no_grad():
        return model.trace(prompts.tokens).block_inputs[block].numpy().astype(np.float64)


def reshape_diffs(model: TinyTransformer, prompts: Prompts, block: int) -> dict[str, float]:
    """The chapter's reshape test on one trained block: FFN and attention, on real inputs.

    Returns the largest difference between running each sublayer on the
    prompts as sequences and on every position folded into a sequence of
    its own (:func:`ffnbook.position_independence.reshape_max_diff`):
    ``"ffn_numpy"`` for the exported weights in :func:`ffnbook.feedforward.ffn`
    (float32, on the FFN's real inputs), ``"ffn"`` and ``"attention"`` for
    the trained sublayers in float64 on the stream entering the block.
    """
    check_prompts(prompts, check_transformer(model))
    block = _block(model, block)
    with torch.no_grad():
        ffn_inputs = model.trace(prompts.tokens).ffn_inputs[block].numpy()
    x = block_inputs(model, prompts, block)
    layers = sublayer_layers(model, block)
    exported = model.blocks[block].ffn.to_numpy()
    return {"ffn_numpy": reshape_max_diff(ffn_layer(exported, "relu"), ffn_inputs),
            "ffn": reshape_max_diff(layers["ffn"], x),
            "attention": reshape_max_diff(layers["attention"], x)}


def influence_matrices(model: TinyTransformer, prompts: Prompts, block: int, index: int = 0) -> dict:
    """Influence matrices (:func:`ffnbook.block.influence_matrix`) of one block's trained sublayers for one prompt."""
    inputs = block_inputs(model, prompts, block)
    x = inputs[require_index(index, "index", len(inputs), of="the prompts")]
    return {name: influence_matrix(layer, x) for name, layer in sublayer_layers(model, block).items()}


def strongest_inputs(matrix, output_position: int, k: int = 2) -> list[int]:
    """The ``k`` input positions, other than ``output_position`` itself, with the largest influence on it.

    >>> strongest_inputs(np.array([[1.0, 0, 0], [0, 1, 0], [0.5, 0.1, 1.0]]), 2, k=1)
    [0]
    """
    matrix = as_float_array(matrix, "matrix", finite=True, ndim=2).astype(np.float64)
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"matrix must be square, got shape {matrix.shape}")
    output_position = require_index(output_position, "output_position", matrix.shape[0], of="the matrix's rows")
    k = require_positive_int(k, "k", maximum=max(matrix.shape[0] - 1, 1))
    row = matrix[output_position].copy()
    row[output_position] = -np.inf
    return sorted(int(j) for j in np.argsort(-row, kind="stable")[:k])


def attention_share_on_fact(model: TinyTransformer, prompts: Prompts) -> list[float]:
    """Per block, the share of the ``→`` position's attention that lands on the subject and relation.

    Averaged over heads and prompts. Spread evenly over the positions it can
    see, the share would be :func:`uniform_share_on_fact`.
    """
    check_prompts(prompts, check_transformer(model))
    with torch.no_grad():
        weights = model.trace(prompts.tokens).attention_weights
    rows = np.arange(len(prompts.tokens))
    shares = []
    for w in weights:
        last = w[:, :, -1, :].mean(dim=1).numpy()  # (n, seq_len), averaged over heads
        shares.append(float((last[rows, prompts.subject_position] + last[rows, prompts.relation_position]).mean()))
    return shares


def uniform_share_on_fact(seq_len: int) -> float:
    """The share :func:`attention_share_on_fact` would find if attention were spread evenly.

    The ``→`` position is last, so it sees all ``seq_len`` positions; two of them
    (the subject and the relation) carry the fact.

    >>> uniform_share_on_fact(8)
    0.25
    """
    seq_len = require_positive_int(seq_len, "seq_len")
    if seq_len < 3:
        raise ValueError(f"a prompt holds a subject, a relation and the → token, so seq_len >= 3; got {seq_len}")
    return 2 / seq_len


@styled
def influence_figure(world: FactWorld, prompts: Prompts, influences: dict, *, index: int = 0,
                     block: int = 0) -> BookFigure:
    """Two heatmaps for one prompt: who influences whom in a trained attention and a trained FFN."""
    from matplotlib.colors import LinearSegmentedColormap

    check_world(world)
    check_prompts(prompts)
    index = require_index(index, "index", len(prompts.tokens), of="the prompts")
    block = require_nonnegative_int(block, "block")
    seq_len = np.asarray(prompts.tokens).shape[1]
    influences = _influence_panels(influences, {"attention": None, "ffn": None})
    for key, m in influences.items():
        if m.shape != (seq_len, seq_len):
            raise ValueError(f"influences[{key!r}] must be ({seq_len}, {seq_len}), one row per position, got {m.shape}")
    cmap = LinearSegmentedColormap.from_list("ffnbook_blue", ["#ffffff", PALETTE[0], "#002a47"])
    names = world.token_names()
    labels = [names[int(t)] for t in prompts.tokens[index]]
    fig = new_figure(9.5, 4.2)
    axes = fig.subplots(1, 2)
    titles = {"attention": f"trained attention, block {block}", "ffn": f"trained FFN, block {block}"}
    for ax, (key, title) in zip(axes, titles.items()):
        m = np.asarray(influences[key])
        image = ax.imshow(m, cmap=cmap, vmin=0.0, vmax=float(m.max()) or 1.0)
        ax.set_title(title)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xlabel("input position (nudged)")
        ax.set_ylabel("output position")
        ax.grid(False)
        fig.colorbar(image, ax=ax, shrink=0.8).set_label("output change per unit nudge")
    attention, ffn = np.asarray(influences["attention"]), np.asarray(influences["ffn"])
    last = len(labels) - 1
    sources = " and ".join(f"{labels[j]} (position {j})" for j in strongest_inputs(attention, last))
    ffn_off = float(np.max(np.abs(ffn[~np.eye(len(labels), dtype=bool)])))
    return BookFigure(fig, (
        f"Two square heatmaps of influence for the prompt {' '.join(labels)}, with its tokens as row and "
        f"column labels. Trained attention of block {block}: zero above the diagonal, since a position cannot "
        f"see later ones; in the bottom row, the query position, the strongest inputs other than itself are "
        f"{sources}. Trained FFN of block {block}: only the diagonal is non-zero (largest off-diagonal entry "
        f"{ffn_off:.1e})."))


# --- training curves --------------------------------------------------------------------------

@styled
def training_figure(history: dict, chance: float) -> BookFigure:
    """Three panels against the training step: loss, recall (trained and held-out facts), FFN units active."""
    history = _history(history)
    chance = require_number(chance, "chance", low=0, high=1, low_open=True)
    steps = history["step"]
    fig = new_figure(10.5, 3.6)
    loss_ax, recall_ax, share_ax = fig.subplots(1, 3)
    loss_ax.plot(steps[1:], history["loss"][1:], color=PALETTE[0], marker="o", markersize=3)
    loss_ax.set_yscale("log")
    loss_ax.set_xlabel("training step")
    loss_ax.set_ylabel("cross-entropy loss")
    loss_ax.set_title("Training loss")
    recall_ax.plot(steps, [100 * v for v in history["recall"]], color=PALETTE[1], marker="o", markersize=3,
                   label="trained facts, fresh prompts")
    if history.get("held_out_recall"):
        recall_ax.plot(steps, [100 * v for v in history["held_out_recall"]], color=PALETTE[2], marker="s",
                       markersize=3, label="held-out facts")
    recall_ax.axhline(100 * chance, color="#222222", linestyle="--", linewidth=1.0, label="chance")
    recall_ax.set_ylim(-3, 103)
    recall_ax.set_xlabel("training step")
    recall_ax.set_ylabel("facts recalled (%)")
    recall_ax.set_title("Recall")
    recall_ax.legend(loc="center right", fontsize=9)
    for block, shares in enumerate(history["active_share"]):
        share_ax.plot(steps, [100 * v for v in shares], color=PALETTE[3 + block], marker="o", markersize=3,
                      label=f"block {block}")
    share_ax.set_xlabel("training step")
    share_ax.set_ylabel("FFN units active per token (%)")
    share_ax.set_title("FFN sparsity")
    share_ax.legend(loc="center right", fontsize=9)
    shares = "; ".join(f"block {b} from {100 * v[0]:.0f}% to {100 * v[-1]:.0f}%"
                       for b, v in enumerate(history["active_share"]))
    held = (f", and of held-out facts from {100 * history['held_out_recall'][0]:.0f}% to "
            f"{100 * history['held_out_recall'][-1]:.0f}%" if history.get("held_out_recall") else "")
    return BookFigure(fig, (
        f"Three line charts against the training step, up to step {steps[-1]}. Left: the training loss on a "
        f"logarithmic scale, from {history['loss'][1]:.2f} to {history['loss'][-1]:.4f}. Middle: recall of the "
        f"trained facts on fresh prompts, from {100 * history['recall'][0]:.0f}% to "
        f"{100 * history['recall'][-1]:.0f}%{held}, with a dashed line at chance ({100 * chance:.1f}%). Right: "
        f"the share of FFN units active per token over all positions, {shares}."))


def _history(history) -> dict:
    """A training history of :func:`~ffnbook.tiny_transformer.train_on_facts`: equally long series."""
    needed = ("step", "loss", "recall", "active_share")
    if not isinstance(history, dict) or not set(needed) <= history.keys():
        raise TypeError(f"history must be a training history, a dict with keys {', '.join(needed)}, "
                        f"got {describe(history)}")
    n = len(require_sequence(history["step"], "history['step']", min_len=2))
    series = {"loss": history["loss"], "recall": history["recall"],
              **{f"active_share[{b}]": v for b, v in enumerate(history["active_share"])}}
    if history.get("held_out_recall"):
        series["held_out_recall"] = history["held_out_recall"]
    for key, values in series.items():
        if len(require_sequence(values, f"history[{key!r}]")) != n:
            raise ValueError(f"history[{key!r}] must have one value per step ({n}), got {len(values)}")
    return history


# --- capacity ---------------------------------------------------------------------------------

def capacity_sweep(widths: Sequence[int], n_subjects: Sequence[int], *, n_relations: int, n_objects: int,
                   d_model: int, n_heads: int, n_blocks: int, seq_len: int, train_config: TrainConfig,
                   seed: int = 0) -> list[dict]:
    """Train one model per FFN width and world size; return its recall on all its facts.

    Worlds have ``n_relations`` relations and each number of subjects in
    ``n_subjects``; every model gets the same ``train_config`` (the same
    number of steps), trains on every fact of its world and is scored on
    fresh prompts. Rows: ``{"d_ff", "n_facts", "recall"}``.
    """
    widths = require_sequence(widths, "widths", item=require_positive_int)
    n_subjects = require_sequence(n_subjects, "n_subjects", item=require_positive_int)
    require_instance(train_config, "train_config", TrainConfig)
    rows = []
    for d_ff in widths:
        for subjects in n_subjects:
            world = make_world(subjects, n_relations, n_objects, seed=seed)
            config = ModelConfig(vocab_size=world.vocab_size, seq_len=seq_len, d_model=d_model,
                                 n_heads=n_heads, d_ff=d_ff, n_blocks=n_blocks)
            result = train_on_facts(world, world.all_facts(), config, train_config)
            rows.append({"d_ff": int(d_ff), "n_facts": world.n_facts, "recall": result.history["recall"][-1]})
    return rows


@styled
def capacity_figure(rows: list[dict], chance: float, d_model: int) -> BookFigure:
    """Recall against the number of facts, one line per FFN width."""

    def row(r, label):
        if not isinstance(r, dict) or not {"d_ff", "n_facts", "recall"} <= r.keys():
            raise TypeError(f"{label} must be a row of capacity_sweep(), a dict with keys d_ff, n_facts and "
                            f"recall, got {describe(r)}")
        require_positive_int(r["d_ff"], f"{label}['d_ff']")
        require_positive_int(r["n_facts"], f"{label}['n_facts']")
        require_number(r["recall"], f"{label}['recall']", low=0, high=1)
        return r

    rows = require_sequence(rows, "rows", item=row)
    chance = require_number(chance, "chance", low=0, high=1, low_open=True)
    d_model = require_positive_int(d_model, "d_model")
    fig = new_figure(7.0, 4.0)
    ax = fig.subplots()
    markers = "osD^v"
    for i, d_ff in enumerate(sorted({r["d_ff"] for r in rows})):
        mine = sorted((r for r in rows if r["d_ff"] == d_ff), key=lambda r: r["n_facts"])
        ax.plot([r["n_facts"] for r in mine], [100 * r["recall"] for r in mine], marker=markers[i % len(markers)],
                color=PALETTE[i % len(PALETTE)], label=f"d_ff = {d_ff} ({d_ff / d_model:g} × d_model)")
    ax.axhline(100 * chance, color="#222222", linestyle="--", linewidth=1.0, label="chance")
    ax.set_xscale("log", base=2)
    n_facts = sorted({r["n_facts"] for r in rows})
    ax.set_xticks(n_facts, [str(n) for n in n_facts])
    ax.minorticks_off()
    ax.set_ylim(-3, 103)
    ax.set_xlabel("facts in the world")
    ax.set_ylabel("facts recalled (%)")
    ax.set_title(f"Trained recall against the number of facts, d_model = {d_model}")
    ax.legend(loc="center left")
    lines = "; ".join(
        f"d_ff = {d_ff}: " + ", ".join(f"{r['recall']:.0%} of {r['n_facts']}"
                                       for r in sorted((r for r in rows if r["d_ff"] == d_ff),
                                                       key=lambda r: r["n_facts"]))
        for d_ff in sorted({r["d_ff"] for r in rows}))
    return BookFigure(fig, (
        f"Line chart of the share of facts recalled against the number of facts in the world, on a "
        f"logarithmic axis, one line per FFN width, with a dashed line at chance ({100 * chance:.1f}%). "
        f"{lines}."))


def chance_recall(world: FactWorld) -> float:
    """The recall of guessing an object at random: ``1 / n_objects``."""
    return 1.0 / check_world(world).n_objects

