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
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import torch

from ._checks import (
    as_float_array,
    as_index_array,
    describe,
    require_choice,
    require_index,
    require_instance,
    require_names,
    require_nonnegative_int,
    require_number,
    require_positive_int,
    require_seed,
    require_sequence,
)
from .block import _influence_panels, influence_matrix
from .controls import additive_part, chance_recall, spread  # noqa: F401  (chance: the floor of every recall here)
from .facts import FactWorld, Prompts, check_facts, check_world, fact_prompts, make_world
from .plotting import FFN_COLOUR, OTHER_COLOURS, PALETTE, BookFigure, new_figure, styled
from .position_independence import ffn_layer, reshape_max_diff
from .tiny_transformer import (
    Knock,
    ModelConfig,
    TinyTransformer,
    TrainConfig,
    answer_logits,
    check_prompts,
    check_transformer,
    guessed_objects,
    layer_norm,
    recall,
)

# --- ablation, position by position ---------------------------------------------------------

#: The two ways :func:`ablation_study` knocks a sublayer out.
ABLATION_METHODS = ("zero", "mean")

#: The kinds of position in a prompt (the subject token, the relation token, the filler and the query ``→``).
POSITION_CLASSES = ("subject", "relation", "filler", "query")

#: Where :func:`ablation_study` knocks a sublayer out: at one kind of position, or at every position.
ABLATION_SITES = POSITION_CLASSES + ("all",)


def position_classes(prompts: Prompts) -> np.ndarray:
    """The kind of every position of every prompt, as indices into :data:`POSITION_CLASSES`, ``(n, seq_len)``.

    >>> from ffnbook.facts import make_world, fact_prompts
    >>> p = fact_prompts(make_world(2, 2, 3, n_filler=2, seed=0), [[0, 1]], 1, 5, seed=0)
    >>> [POSITION_CLASSES[c] for c in position_classes(p)[0]]
    ['subject', 'relation', 'filler', 'filler', 'query']
    """
    check_prompts(prompts)
    n, seq_len = prompts.tokens.shape
    classes = np.full((n, seq_len), POSITION_CLASSES.index("filler"))
    rows = np.arange(n)
    classes[rows, prompts.subject_position] = POSITION_CLASSES.index("subject")
    classes[rows, prompts.relation_position] = POSITION_CLASSES.index("relation")
    classes[:, -1] = POSITION_CLASSES.index("query")
    return classes


def _site_mask(prompts: Prompts, where: str) -> torch.Tensor:
    """Bool ``(n, seq_len)``: the positions of kind ``where`` (a name of :data:`ABLATION_SITES`)."""
    if where not in ABLATION_SITES:
        raise ValueError(f"where must be one of {ABLATION_SITES}, got {where!r}")
    classes = position_classes(prompts)
    if where == "all":
        return torch.ones(classes.shape, dtype=torch.bool)
    return torch.from_numpy(classes == POSITION_CLASSES.index(where))


def _class_means(outputs: torch.Tensor, classes: np.ndarray) -> torch.Tensor:
    """For every prompt and position, the mean of ``outputs`` over the prompts with the same kind of token there.

    ``outputs`` is ``(n, seq_len, d)``, ``classes`` the ``(n, seq_len)`` of
    :func:`position_classes`. Mean ablation writes this in place of a
    sublayer's output: it keeps what the sublayer adds to, say, every subject
    token at position 3, and removes which subject it was.
    """
    n, seq_len, _ = outputs.shape
    means = torch.empty_like(outputs)
    for t in range(seq_len):
        for c in np.unique(classes[:, t]):
            rows = torch.from_numpy(np.flatnonzero(classes[:, t] == c))
            means[rows, t] = outputs[rows, t].mean(dim=0)
    return means


def mean_outputs(model: TinyTransformer, prompts: Prompts) -> dict[str, list[torch.Tensor]]:
    """Per block, each sublayer's mean output for every prompt and position, ``(n, seq_len, d_model)``.

    The mean runs over the prompts with the same kind of position there
    (their class means); it is what mean ablation writes in place of the
    sublayer's real output.
    """
    check_prompts(prompts, check_transformer(model))
    classes = position_classes(prompts)
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
    return {"ffn": [_class_means(t, classes) for t in trace.ffn_outputs],
            "attention": [_class_means(t, classes) for t in trace.attention_outputs]}


def ablation_study(model: TinyTransformer, world: FactWorld, prompts: Prompts) -> list[dict]:
    """Recall with the model intact and with one kind of sublayer knocked out, position by position.

    For each part (``"ffn"``, ``"attention"``), each method (``"zero"``: the
    sublayer adds nothing; ``"mean"``: it adds its mean output for that kind
    of position, :func:`mean_outputs`, so only what is specific to the
    prompt is removed), each block alone at each site of
    :data:`ABLATION_SITES` (a kind of position, or all of them), and every
    block at once at every position.
    Rows are dicts ``{"part", "blocks", "method", "where", "recall"}``; the
    intact model is the row with part ``"none"``.
    """
    check_world(world)
    means = mean_outputs(model, prompts)
    masks = {where: _site_mask(prompts, where) for where in ABLATION_SITES}
    n_blocks = len(model.blocks)
    rows = [{"part": "none", "blocks": (), "method": "none", "where": "none",
             "recall": recall(model, world, prompts)}]
    for part in ("ffn", "attention"):
        for method in ABLATION_METHODS:
            for blocks in [(b,) for b in range(n_blocks)] + ([tuple(range(n_blocks))] if n_blocks > 1 else []):
                for where in ABLATION_SITES if len(blocks) == 1 else ("all",):
                    knock = {b: Knock("zero" if method == "zero" else means[part][b], masks[where]) for b in blocks}
                    value = recall(model, world, prompts, **{f"{part}_ablation": knock})
                    rows.append({"part": part, "blocks": blocks, "method": method, "where": where, "recall": value})
    return rows


def ablated_recall(rows: list[dict], part: str, blocks: Sequence[int] = (), method: str = "none",
                   where: str = "all") -> float:
    """The recall of one condition of :func:`ablation_study` (the intact model: part ``"none"``).

    >>> ablated_recall([{"part": "ffn", "blocks": (0,), "method": "zero", "where": "all", "recall": 0.5}],
    ...                "ffn", [0], "zero")
    0.5
    """
    rows = _ablation_rows(rows)
    require_choice(part, "part", ("none", "ffn", "attention"))
    require_choice(method, "method", ("none", *ABLATION_METHODS))
    require_choice(where, "where", ABLATION_SITES)
    blocks = tuple(require_sequence(blocks, "blocks", min_len=0, item=require_nonnegative_int))
    for row in rows:
        if row["part"] == part and (part == "none" or (tuple(row["blocks"]) == blocks and row["method"] == method
                                                      and row.get("where", "all") == where)):
            return row["recall"]
    raise ValueError(f"rows hold no ablation row for part={part!r}, blocks={blocks}, method={method!r}, "
                     f"where={where!r}")


def _ablation_rows(rows, name: str = "rows") -> list[dict]:
    """Rows of :func:`ablation_study`: dicts with part, blocks, method and a recall in [0, 1]."""
    def row(r, label):
        if not isinstance(r, dict) or not {"part", "blocks", "method", "recall"} <= r.keys():
            raise TypeError(f"{label} must be a row of ablation_study(), a dict with keys part, blocks, method and "
                            f"recall, got {describe(r)}")
        require_number(r["recall"], f"{label}['recall']", low=0, high=1)
        return r
    return require_sequence(rows, name, expected="a list of ablation_study() rows", item=row)


def ablation_grid(studies: Sequence[list[dict]], method: str) -> dict:
    """Mean, lowest and highest recall over seeds, and the interval of the mean, for every (sublayer, site).

    ``studies`` holds one :func:`ablation_study` per seed, all of one
    ablation method. Returns ``{"rows": [(part, block), ...], "sites":
    ABLATION_SITES, "mean", "low", "high", "ci_low", "ci_high"}``, the last
    five ``(len(rows), len(sites))`` arrays (the interval as
    :func:`ffnbook.controls.spread` computes it); one row per block's FFN
    and attention, FFN first.
    """
    studies = _studies(studies)
    require_choice(method, "method", ABLATION_METHODS)
    n_blocks = 1 + max(b for r in studies[0] for b in r["blocks"])
    rows = [(part, b) for b in range(n_blocks) for part in ("ffn", "attention")]
    values = np.array([[[ablated_recall(study, part, (b,), method, where) for where in ABLATION_SITES]
                        for part, b in rows] for study in studies])
    cells = [[spread(values[:, i, j]) for j in range(values.shape[2])] for i in range(values.shape[1])]
    return {"rows": rows, "sites": ABLATION_SITES, "mean": values.mean(axis=0), "low": values.min(axis=0),
            "high": values.max(axis=0), "ci_low": np.array([[c.ci_low for c in row] for row in cells]),
            "ci_high": np.array([[c.ci_high for c in row] for row in cells])}


def _studies(studies, name: str = "studies") -> list:
    """One :func:`ablation_study` per seed, all with rows for the same blocks."""
    studies = require_sequence(studies, name, expected="a list of ablation_study() results, one per seed",
                               item=lambda rows, label: _ablation_rows(rows, label))
    if not any(r["blocks"] for r in studies[0]):
        raise ValueError(f"{name}[0] holds no ablation of any block")
    return studies


#: What :func:`ablation_grid` gives for every cell: over seeds, mean, range and the interval of the mean.
GRID_STATS = ("mean", "low", "high", "ci_low", "ci_high")


def grid_value(grid: dict, part: str, block: int, where: str, stat: str = "mean") -> float:
    """One cell of :func:`ablation_grid`: ``stat`` (mean, low, high, ci_low or ci_high) for a sublayer and site."""
    if not isinstance(grid, dict) or not {"rows", "sites", *GRID_STATS} <= grid.keys():
        raise TypeError(f"grid must be the dict of ablation_grid(), got {describe(grid)}")
    require_choice(part, "part", ("ffn", "attention"))
    block = require_index(block, "block", len(grid["rows"]) // 2, of="the grid's blocks")
    require_choice(where, "where", grid["sites"])
    require_choice(stat, "stat", GRID_STATS)
    return float(grid[stat][grid["rows"].index((part, block)), grid["sites"].index(where)])


def _mean_pm(values, scale: float = 100.0, digits: int = 0, unit: str = "%") -> str:
    """``values`` over seeds as "mean ± half-width of its 95% interval" (the mean alone when all are equal)."""
    s = spread([float(v) for v in values])
    text = f"{scale * s.mean:.{digits}f}{unit}"
    return text if s.low == s.high else f"{text} ± {scale * s.half_width:.{digits}f}"


def _site_label(where: str) -> str:
    return {"query": "→", "all": "all"}.get(where, where)


def _part_label(part: str, block: int) -> str:
    return f"{'FFN' if part == 'ffn' else 'attention'} {block}"


@styled
def ablation_figure(studies: Sequence[list[dict]], chance: float) -> BookFigure:
    """Two heatmaps, zero and mean ablation: recall (mean over seeds) with one sublayer knocked out at one site.

    Rows: each block's FFN (orange labels) and attention (blue labels);
    columns: the kind of position where it is knocked out, then all of them.
    """
    from matplotlib.colors import LinearSegmentedColormap

    studies = _studies(studies)
    chance = require_number(chance, "chance", low=0, high=1, low_open=True)
    cmap = LinearSegmentedColormap.from_list("ffnbook_recall", ["#3b1e00", PALETTE[1], "#fff4e6"])
    intact = float(np.mean([ablated_recall(s, "none") for s in studies]))
    fig = new_figure(6.4, 7.4)
    axes = fig.subplots(2, 1)
    described = []
    for ax, method in zip(axes, ABLATION_METHODS):
        grid = ablation_grid(studies, method)
        image = ax.imshow(100 * grid["mean"], cmap=cmap, vmin=0, vmax=100, aspect="auto")
        for i in range(grid["mean"].shape[0]):
            for j in range(grid["mean"].shape[1]):
                value = 100 * grid["mean"][i, j]
                ax.text(j, i, f"{value:.0f}", ha="center", va="center", fontsize=11,
                        color="white" if value < 55 else "#222222")
        labels = [_part_label(part, b) for part, b in grid["rows"]]
        ax.set_yticks(range(len(labels)), labels)
        for tick, (part, _) in zip(ax.get_yticklabels(), grid["rows"]):
            tick.set_color(PALETTE[1] if part == "ffn" else PALETTE[0])
            tick.set_fontweight("bold")
        ax.set_xticks(range(len(grid["sites"])), [_site_label(w) for w in grid["sites"]])
        ax.set_title(f"{method} ablation: recall (%) with one sublayer knocked out", fontsize=11)
        ax.grid(False)
        ax.tick_params(length=0)
        described.append(f"{method} ablation: " + "; ".join(
            f"{label}: " + ", ".join(f"{_site_label(w)} {100 * grid['mean'][i, j]:.0f}%"
                                     for j, w in enumerate(grid["sites"]))
            for i, label in enumerate(labels)))
    fig.colorbar(image, ax=list(axes), shrink=0.6, location="bottom", pad=0.08).set_label("recall (%)")
    return BookFigure(fig, (
        f"Two heatmaps of recall, mean over {len(studies)} seeds, one row per sublayer (FFN and attention of "
        f"each block), one column per kind of position where that sublayer's output is knocked out (subject, "
        f"relation, filler, the query →, and all positions). The intact model recalls {100 * intact:.0f}%, "
        f"chance is {100 * chance:.1f}%. " + ". ".join(described) + "."))


def held_out_hits(model: TinyTransformer, world: FactWorld, held_out_facts, *, n_contexts: int = 4,
                  seed: int) -> int:
    """How many held-out facts the model names, one answer per fact.

    Each fact is asked in ``n_contexts`` fresh prompts of the model's length; the model's scores
    are averaged over them and the highest-scoring object is its answer. One
    answer per fact makes the count a sum of independent trials: a model that
    knows nothing of these facts is right for each with probability
    ``1 / n_objects``, since their objects were drawn at random.
    """
    check_transformer(model)
    held_out_facts = check_facts(world, held_out_facts, "held_out_facts")
    n_contexts = require_positive_int(n_contexts, "n_contexts", maximum=10_000)
    prompts = fact_prompts(world, held_out_facts, n_contexts, model.config.seq_len, seed=seed)
    logits = answer_logits(model, prompts)
    mean = logits.reshape(len(held_out_facts), n_contexts, -1).mean(dim=1)
    return int((guessed_objects(mean, world) == world.object_token(world.answers(held_out_facts))).sum())


def object_score_grid(model: TinyTransformer, world: FactWorld, *, n_contexts: int, seed: int,
                      ffns: str = "intact") -> np.ndarray:
    """The model's score for every object, for every (subject, relation) pair: ``(n_subjects, n_relations, n_objects)``.

    Every pair of the world, stored fact or not, is asked in ``n_contexts``
    fresh prompts; the logits of the object tokens at ``→`` are averaged over
    them. ``ffns="mean"`` mean-ablates every block's FFN at every position
    (class means over these same prompts, as :func:`ablation_study` does), so
    the grid shows what the rest of the model computes without them. Split
    with :func:`ffnbook.controls.additive_part` into what needs no
    interaction of subject and relation and what does.
    """
    check_transformer(model)
    check_world(world)
    n_contexts = require_positive_int(n_contexts, "n_contexts", maximum=1000)
    require_choice(ffns, "ffns", ("intact", "mean"))
    prompts = fact_prompts(world, world.all_facts(), n_contexts, model.config.seq_len, seed=require_seed(seed))
    knocks = {}
    if ffns == "mean":
        means = mean_outputs(model, prompts)["ffn"]
        knocks = {"ffn_ablation": {b: means[b] for b in range(len(model.blocks))}}
    logits = answer_logits(model, prompts, **knocks)[:, torch.from_numpy(world.object_tokens())]
    mean = logits.double().reshape(world.n_facts, n_contexts, world.n_objects).mean(dim=1).numpy()
    return mean.reshape(world.n_subjects, world.n_relations, world.n_objects)


class AffineComparison(NamedTuple):
    """An FFN's output against the best affine map of its input, on the prompts whose input names a wrong object."""

    n_prompts: int  #: prompts on which the FFN's input, read through the unembedding, names a wrong object
    share: float  #: their share of all prompts
    ffn: float  #: share of those on which the FFN's output alone names the right object
    affine: float  #: share on which the best affine map of the input names it
    r2: float  #: share of the FFN output's variance (over all prompts) that the affine map explains


def _readout(vectors: torch.Tensor, model: TinyTransformer, world: FactWorld) -> np.ndarray:
    """Object guesses of output vectors read through the unembedding, centred as the final layer norm centres."""
    scores = (vectors - vectors.mean(dim=-1, keepdim=True)) @ model.unembed.weight.double().T
    return guessed_objects(scores, world)


def ffn_against_affine(model: TinyTransformer, world: FactWorld, prompts: Prompts, block: int) -> AffineComparison:
    """Does an FFN compute the answer, or pass on what its input already says? Its output against an affine map.

    At ``→``, take the FFN's input ``x`` (the normalised residual stream)
    and its output ``y``. Read the stream entering the FFN through the final
    layer norm and the unembedding (the logit lens): on the prompts where it
    names a wrong object, how often does ``y`` alone, read the same way
    (:func:`ffn_direct_recall`), name the right one, and how often does the
    best affine map of ``x``, fitted to ``y`` by least squares over all the
    prompts (in sample, so as good as an affine map can be here)? An output
    right where any affine map of the input is wrong was computed by the
    FFN's nonlinear units: the answer is in its weights, not in its input.
    """
    check_world(world)
    check_prompts(prompts, check_transformer(model))
    block = _block(model, block)
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
        x = trace.ffn_inputs[block][:, -1, :].double()
        y = trace.ffn_outputs[block][:, -1, :].double()
        stream = (trace.block_inputs[block] + trace.attention_outputs[block])[:, -1, :].double()
        lens = guessed_objects(layer_norm(stream) @ model.unembed.weight.double().T, world)
        # x sums to zero across its features (layer norm centres it), so the design's columns are
        # dependent: an SVD-based least-squares fit, which takes the minimum-norm solution.
        design = np.hstack([x.numpy(), np.ones((len(x), 1))])
        fitted = torch.from_numpy(design @ np.linalg.lstsq(design, y.numpy(), rcond=None)[0])
    answers = prompts.answers
    wrong = lens != answers
    residual = float(((y - fitted) ** 2).sum())
    total = float(((y - y.mean(dim=0)) ** 2).sum())
    n = int(wrong.sum())
    ffn_right = (_readout(y, model, world) == answers)[wrong]
    affine_right = (_readout(fitted, model, world) == answers)[wrong]
    return AffineComparison(n, n / len(answers), float(ffn_right.mean()) if n else float("nan"),
                            float(affine_right.mean()) if n else float("nan"), 1.0 - residual / total)


class ProbeReading(NamedTuple):
    """What a linear probe reads from an FFN's input at ``→``, on fresh prompts."""

    recall: float  #: share of the fresh prompts whose answer it names
    where_lens_wrong: float  #: the same share on the prompts whose logit lens before the FFN names a wrong object


def probe_ffn_input(model: TinyTransformer, world: FactWorld, train_prompts: Prompts, test_prompts: Prompts,
                    block: int, *, shuffle_seed: int | None = None) -> ProbeReading:
    """Can the answer be read from an FFN's input by an affine map? A linear probe, fitted and tested apart.

    The FFN's input at ``→`` (the normalised residual stream) of
    ``train_prompts`` is the probe's training set
    (:func:`ffnbook.controls.fit_linear_probe`, to each prompt's object);
    it is scored on ``test_prompts``, the same facts in fresh filler. With
    ``shuffle_seed``, every fact's object is replaced by another training
    fact's (one permutation of the objects over the facts, the same for both
    sets of prompts): a *control task* in Hewitt and Liang's sense, whose
    labels the input cannot hold, so the probe's score on it is what it gets
    by memorising which prompts belong together. A probe that names the real
    answers far more often than the shuffled ones reads the answer from the
    vector, not only the fact's identity.
    """
    from .controls import fit_linear_probe

    check_world(world)
    for prompts, label in ((train_prompts, "train_prompts"), (test_prompts, "test_prompts")):
        check_prompts(prompts, check_transformer(model), label)
    block = _block(model, block)
    objects = world.objects.copy()
    if shuffle_seed is not None:
        seen = np.unique(train_prompts.facts, axis=0)
        shuffled = np.random.default_rng(require_seed(shuffle_seed, "shuffle_seed")).permutation(len(seen))
        objects[seen[:, 0], seen[:, 1]] = world.objects[seen[shuffled, 0], seen[shuffled, 1]]

    def inputs_and_lens(prompts):
        with torch.no_grad():
            trace = model.trace(prompts.tokens)
        stream = (trace.block_inputs[block] + trace.attention_outputs[block])[:, -1, :].double()
        lens = guessed_objects(layer_norm(stream) @ model.unembed.weight.double().T, world)
        return trace.ffn_inputs[block][:, -1, :].double().numpy(), lens

    x, _ = inputs_and_lens(train_prompts)
    probe = fit_linear_probe(x, objects[train_prompts.facts[:, 0], train_prompts.facts[:, 1]], world.n_objects)
    x_test, lens = inputs_and_lens(test_prompts)
    right = probe.predict(x_test) == objects[test_prompts.facts[:, 0], test_prompts.facts[:, 1]]
    wrong = lens != test_prompts.answers
    return ProbeReading(float(right.mean()), float(right[wrong].mean()) if wrong.any() else float("nan"))


def bits_held(model: TinyTransformer, world: FactWorld, facts, *, n_contexts: int = 2, seed: int = 0) -> float:
    """How many bits the model holds about the objects of ``facts``: ``Σ (log2 n_objects − cross-entropy in bits)``.

    Each fact's object was drawn uniformly from ``n_objects``, so naming it
    takes ``log2 n_objects`` bits without the model; with the model, the
    cross-entropy of the right object under its scores for the objects
    (a softmax over the object tokens at ``→``, averaged over
    ``n_contexts`` fresh prompts). The difference, summed over the facts, is
    what the model saves, a lower bound on what it stores about them in the
    sense of Allen-Zhu and Li's knowledge capacity (ICLR 2025), who divide
    such bits by the number of parameters. A fact the model is sure of counts
    ``log2 n_objects`` bits; one it guesses at random, zero; one it gets
    confidently wrong, less than zero.
    """
    check_transformer(model)
    facts = check_facts(world, facts, "facts")
    n_contexts = require_positive_int(n_contexts, "n_contexts", maximum=1000)
    prompts = fact_prompts(world, facts, n_contexts, model.config.seq_len, seed=require_seed(seed))
    logits = answer_logits(model, prompts)[:, torch.from_numpy(world.object_tokens())].double()
    log_p = torch.log_softmax(logits, dim=-1)[torch.arange(len(prompts.answers)),
                                               torch.from_numpy(world.answers(prompts.facts))]
    cross_entropy_bits = -log_p.reshape(len(facts), n_contexts).mean(dim=1) / np.log(2.0)
    return float(np.sum(np.log2(world.n_objects) - cross_entropy_bits.numpy()))


# --- activation patching -------------------------------------------------------------------------

def patching_study(model: TinyTransformer, world: FactWorld, prompts: Prompts, donors: Prompts,
                   sites: Sequence[str] = ABLATION_SITES) -> list[dict]:
    """Move one sublayer's output from a donor prompt into a prompt, at one kind of position.

    ``donors`` are the same prompts asking about other facts with other
    answers (:func:`ffnbook.facts.swap_facts`): same filler, same positions.
    For each part, block and site, the sublayer's output there is replaced
    by the donor's and the answer read. Rows ``{"part", "block", "where",
    "moved", "kept"}``: the share of prompts now answered with the donor's
    object, and with their own. A sublayer whose output carries the fact
    moves the answer; one that only routes or formats does not.
    """
    check_prompts(prompts, check_transformer(model))
    check_world(world)
    if not isinstance(donors, Prompts):
        raise TypeError(f"donors must be Prompts from ffnbook.facts.swap_facts, got {describe(donors)}")
    sites = require_names(sites, "sites", ABLATION_SITES)
    if not (donors.tokens.shape == prompts.tokens.shape
            and np.array_equal(prompts.subject_position, donors.subject_position)
            and np.array_equal(prompts.relation_position, donors.relation_position)):
        raise ValueError("donors must have the prompts' shape and positions (make them with ffnbook.facts.swap_facts)")
    with torch.no_grad():
        donor_trace = model.trace(donors.tokens)
    outputs = {"ffn": donor_trace.ffn_outputs, "attention": donor_trace.attention_outputs}
    rows = []
    for block in range(len(model.blocks)):
        for part in ("ffn", "attention"):
            for where in sites:
                knock = {block: Knock(outputs[part][block], _site_mask(prompts, where))}
                guess = guessed_objects(answer_logits(model, prompts, **{f"{part}_ablation": knock}), world)
                rows.append({"part": part, "block": block, "where": where,
                             "moved": float(np.mean(guess == donors.answers)),
                             "kept": float(np.mean(guess == prompts.answers))})
    return rows


def patched(rows: list[dict], part: str, block: int, where: str, key: str = "moved") -> float:
    """One value (``"moved"`` or ``"kept"``) of :func:`patching_study`."""
    rows = _patching_rows(rows)
    require_choice(part, "part", ("ffn", "attention"))
    block = require_nonnegative_int(block, "block")
    require_choice(where, "where", ABLATION_SITES)
    require_choice(key, "key", ("moved", "kept"))
    for row in rows:
        if row["part"] == part and row["block"] == block and row["where"] == where:
            return row[key]
    raise ValueError(f"rows hold no patching row for part={part!r}, block={block}, where={where!r}")


def _patching_rows(rows, name: str = "rows") -> list[dict]:
    """Rows of :func:`patching_study`: dicts with part, block, where, moved and kept."""
    def row(r, label):
        if not isinstance(r, dict) or not {"part", "block", "where", "moved", "kept"} <= r.keys():
            raise TypeError(f"{label} must be a row of patching_study(), a dict with keys part, block, where, moved "
                            f"and kept, got {describe(r)}")
        for key in ("moved", "kept"):
            require_number(r[key], f"{label}[{key!r}]", low=0, high=1)
        return r
    return require_sequence(rows, name, expected="a list of patching_study() rows", item=row)


def patching_table(studies: Sequence[list[dict]], conditions: Sequence[tuple[str, int, str]]):
    """Mean over seeds of :func:`patching_study`, ± half its 95% interval: one row per ``(part, block, where)``."""
    from .display import MarkdownTable

    studies = require_sequence(studies, "studies", expected="a list of patching_study() results, one per seed",
                               item=lambda rows, label: _patching_rows(rows, label))

    def condition(c, label):
        if not isinstance(c, (tuple, list)) or len(c) != 3:
            raise TypeError(f"{label} must be a (part, block, where) tuple, got {describe(c)}")
        return (require_choice(c[0], f"{label}[0]", ("ffn", "attention")), require_nonnegative_int(c[1], f"{label}[1]"),
                require_choice(c[2], f"{label}[2]", ABLATION_SITES))

    conditions = require_sequence(conditions, "conditions", item=condition)
    rows = []
    for part, block, where in conditions:
        moved = np.array([patched(s, part, block, where, "moved") for s in studies])
        kept = np.array([patched(s, part, block, where, "kept") for s in studies])
        rows.append({"sublayer": _part_label(part, block), "where": _site_label(where),
                     "moved": _mean_pm(moved), "kept": _mean_pm(kept)})
    return MarkdownTable(rows, [("output moved", "sublayer", "s"), ("at", "where", "s"),
                                ("answer becomes the donor's", "moved", "s"), ("answer stays", "kept", "s")])


# --- the key–value reading --------------------------------------------------------------------

#: What a hidden unit can read as, in the order :func:`read_neurons` tests for it.
NEURON_KINDS = {
    "dead": "never active at the position read",
    "memory": "every fact that drives it strongly has one answer, and its value promotes that answer first",
    "subject": "driven strongly by two or more facts, all of one subject, with different answers",
    "relation": "driven strongly by two or more facts, all of one relation, with different answers",
    "polysemantic": "selective (fewer than half of all facts drive it strongly), and responds to two or more "
                    "unrelated input features (subjects or relations, each with most of its facts driving the unit "
                    "strongly) that together, but none alone, explain all its strong facts",
    "distributed": "any other live unit: no input features it responds to explain its strong facts",
}


#: A fact drives a unit *strongly* when it reaches this share of the unit's peak activation.
STRONG_SHARE = 0.5

#: A unit is *selective* when fewer than this share of all facts drive it strongly. One driven by
#: most facts "responds" to nearly every subject and relation, so it would pass the test for
#: unrelated features by firing for everything; at initialisation many units do.
SELECTIVE_SHARE = 0.5


def answer_activations(model: TinyTransformer, prompts: Prompts, n_contexts: int, *,
                       where: str = "query") -> list[np.ndarray]:
    """Per block, each hidden unit's activation at one kind of position, averaged over a fact's contexts.

    ``where`` is ``"query"`` (the ``→``), ``"subject"`` or ``"relation"``:
    a kind every prompt has once. ``prompts`` must come from
    :func:`ffnbook.facts.fact_prompts` with ``n_contexts`` (rows grouped
    fact by fact). Returns arrays of shape ``(n_facts, d_ff)``.
    """
    check_prompts(prompts, check_transformer(model))
    n_contexts = require_positive_int(n_contexts, "n_contexts")
    require_choice(where, "where", ("query", "subject", "relation"))
    n = len(prompts.tokens)
    if n % n_contexts:
        raise ValueError(f"n_contexts={n_contexts} does not divide the {n} prompts into groups, one per fact")
    grouped = prompts.facts.reshape(n // n_contexts, n_contexts, 2)
    if not np.all(grouped == grouped[:, :1]):
        raise ValueError("prompts must be grouped fact by fact, as ffnbook.facts.fact_prompts makes them")
    position = {"query": np.full(n, prompts.tokens.shape[1] - 1), "subject": prompts.subject_position,
                "relation": prompts.relation_position}[where]
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden
    rows = np.arange(n)
    return [h.numpy()[rows, position].astype(np.float64).reshape(n // n_contexts, n_contexts, -1).mean(axis=1)
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


def _detected_features(facts: np.ndarray, chosen: np.ndarray) -> list[tuple[str, int]]:
    """The input features a unit responds to: subjects and relations more than half of whose facts are ``chosen``.

    ``facts`` is the ``(n_facts, 2)`` table the unit was read on, ``chosen``
    the indices of its strong facts. A unit that fires for most of subject
    3's facts, whatever their relation, responds to subject 3.

    >>> table = np.array([[s, r] for s in range(3) for r in range(2)])  # facts (0, 0), (0, 1), (1, 0), ...
    >>> _detected_features(table, np.array([0, 1, 4]))  # both facts of subject 0, one of subject 2
    [('subject', 0), ('relation', 0)]
    """
    facts, chosen = np.asarray(facts), np.asarray(chosen)
    found = []
    for column, name in ((0, "subject"), (1, "relation")):
        for value in np.unique(facts[:, column]):
            of_feature = facts[:, column] == value
            if np.sum(of_feature[chosen]) > 0.5 * np.sum(of_feature):
                found.append((name, int(value)))
    return found


def _explained_by_unrelated_features(facts: np.ndarray, chosen: np.ndarray) -> bool:
    """Whether two or more detected features, and no single one, hold every strong fact."""
    features = _detected_features(facts, chosen)
    if len(features) < 2:
        return False
    columns = {"subject": 0, "relation": 1}
    held = [facts[chosen, columns[name]] == value for name, value in features]
    return bool(np.logical_or.reduce(held).all() and not any(h.all() for h in held))


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
    value raises that answer's token above every other token. It is
    ``"polysemantic"`` only when a test for unrelated features passes: it
    responds to two or more input features (:func:`_detected_features`: a
    subject or a relation most of whose facts drive it strongly),
    and those features, but no single one of them, hold all its strong
    facts, and fewer than :data:`SELECTIVE_SHARE` of all facts drive it
    strongly. A live unit that fails both tests is ``"distributed"``: it
    takes part in several facts without responding to nameable features.

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
        elif len(chosen) < SELECTIVE_SHARE * len(a) and _explained_by_unrelated_features(facts, chosen):
            kind = "polysemantic"
        else:
            kind = "distributed"
        readings.append(NeuronReading(block, i, kind, peak, tuple(int(f) for f in chosen),
                                      len(kinds_of_answer), promoted))
    return readings


def kind_counts(readings: Sequence[NeuronReading]) -> dict[str, int]:
    """How many units read as each kind, in the order of :data:`NEURON_KINDS`."""
    readings = _readings(readings)
    return {kind: sum(r.kind == kind for r in readings) for kind in NEURON_KINDS}


def _readings(readings, min_len: int = 0, name: str = "readings") -> list:
    return require_sequence(readings, name, min_len=min_len, expected="a list of NeuronReading",
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


def unit_ablation_effect(model: TinyTransformer, world: FactWorld, prompts: Prompts, block: int, *,
                         where: str = "query") -> np.ndarray:
    """Recall lost when one hidden unit of one FFN is silenced at one kind of position: ``(d_ff,)``.

    For each unit ``i``, its contribution ``m_i(x) v_i`` is removed from the
    FFN's output at the positions of kind ``where`` (a name of
    :data:`ABLATION_SITES`) and recall on ``prompts`` measured again; the
    entry is the intact recall minus that. A per-unit companion of
    :func:`ablation_study`, for exploring single units (it runs one forward
    pass per unit).
    """
    check_world(world)
    check_prompts(prompts, check_transformer(model))
    block = _block(model, block)
    require_choice(where, "where", ABLATION_SITES)
    mask = _site_mask(prompts, where).unsqueeze(-1)
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
        hidden, output = trace.ffn_hidden[block], trace.ffn_outputs[block]
        values = model.blocks[block].ffn.down.weight  # (d_model, d_ff): column i is unit i's value
        intact = recall(model, world, prompts)
        effects = np.empty(values.shape[1])
        for i in range(values.shape[1]):
            without = output - torch.where(mask, hidden[..., i:i + 1] * values[:, i], 0.0)
            effects[i] = intact - recall(model, world, prompts, ffn_ablation={block: without})
    return effects


def pick_examples(readings: Sequence[NeuronReading],
                  kinds=("memory", "subject", "relation", "polysemantic", "distributed")) -> list:
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
def neuron_figure(world: FactWorld, facts, activations: Sequence, readings: Sequence[NeuronReading], *,
                  where: Sequence[str] | str = "query") -> BookFigure:
    """One subject × relation heatmap per unit, stacked: how strongly each fact drives it.

    ``activations[b]`` is block ``b``'s ``(n_facts, d_ff)`` table from
    :func:`answer_activations` for ``facts``, read at ``where`` (one site
    for every block, or one per block). Facts left out of training are grey.
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
    sites = [require_choice(where, "where", ("query", "subject", "relation"))] * len(activations) \
        if isinstance(where, str) else require_names(where, "where", ("query", "subject", "relation"))
    if len(sites) != len(activations):
        raise ValueError(f"where must name one site per block of activations ({len(activations)}), got {len(sites)}")
    cmap = LinearSegmentedColormap.from_list("ffnbook_orange", ["#ffffff", PALETTE[1], "#5a2700"]).with_extremes(
        bad="#bbbbbb")
    names = world.token_names()
    n_cols, n_rows = 1, len(readings)  # stacked: legible at a phone's width
    fig = new_figure(4.0, 3.5 * n_rows)
    axes = np.atleast_1d(fig.subplots(n_rows, n_cols)).ravel()
    for ax, r in zip(axes, readings):
        grid = np.full((world.n_subjects, world.n_relations), np.nan)
        grid[facts[:, 0], facts[:, 1]] = np.asarray(activations[r.block])[:, r.neuron]
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=max(r.peak, 1e-12))
        ax.set_title(f"block {r.block}, unit {r.neuron}: {r.kind}\nat {_site_label(sites[r.block])}; "
                     f"value → {', '.join(names[t] for t in r.promoted[:2])}", fontsize=9.5)
        ax.set_xlabel("relation")
        ax.set_ylabel("subject")
        ax.set_xticks(range(0, world.n_relations, 5))
        ax.set_yticks(range(0, world.n_subjects, 5))
        ax.grid(False)
        fig.colorbar(image, ax=ax, shrink=0.75).set_label("activation")
    for ax in axes[len(readings):]:
        ax.set_visible(False)
    units = " ".join(
        f"Block {r.block}, unit {r.neuron} ({r.kind}, read at {_site_label(sites[r.block])}): driven strongly by "
        f"{len(r.strong)} fact{'s' if len(r.strong) != 1 else ''}, strongest "
        f"{_fact_label(world, facts[r.strong[0]]) if r.strong else 'none'}; "
        f"its value promotes {', '.join(names[t] for t in r.promoted)}."
        for r in readings)
    return BookFigure(fig, (
        "Heatmaps, one per example FFN unit, of its activation for every fact, subjects as rows and relations "
        "as columns, darker for stronger, held-out facts grey. " + units))


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
    cmaps = {"attention": LinearSegmentedColormap.from_list("ffnbook_blue", ["#ffffff", PALETTE[0], "#002a47"]),
             "ffn": LinearSegmentedColormap.from_list("ffnbook_orange", ["#ffffff", PALETTE[1], "#5a2700"])}
    names = world.token_names()
    labels = [names[int(t)] for t in prompts.tokens[index]]
    fig = new_figure(5.2, 8.6)
    axes = fig.subplots(2, 1)
    titles = {"attention": f"trained attention, block {block}", "ffn": f"trained FFN, block {block}"}
    for ax, (key, title) in zip(axes, titles.items()):
        m = np.asarray(influences[key])
        image = ax.imshow(m, cmap=cmaps[key], vmin=0.0, vmax=float(m.max()) or 1.0)
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


# --- training curves, sparsity and capacity over seeds -----------------------------------------

# The model without FFN in a figure, grey: it is neither the FFN (orange) nor attention alone (blue).
NO_FFN_COLOUR = OTHER_COLOURS[3]


# Recall of held-out facts in a figure, green: a measurement of neither sublayer.
HELD_OUT_COLOUR = OTHER_COLOURS[0]


def _band(ax, steps, runs, colour, label, marker="o", linestyle="-"):
    """Mean line with the 95% interval of the mean shaded: ``runs`` is a list of equal-length lists, one per seed."""
    values = np.asarray(runs, dtype=np.float64)
    intervals = [spread(column) for column in values.T]
    ax.fill_between(steps, [i.ci_low for i in intervals], [i.ci_high for i in intervals], color=colour, alpha=0.22,
                    linewidth=0)
    ax.plot(steps, values.mean(axis=0), color=colour, marker=marker, markersize=3, label=label, linestyle=linestyle)


#: How training_figure draws its models: the model with FFNs, then the controls without (grey, told apart by line).
_RUN_STYLES = ((FFN_COLOUR, "-", "o"), (NO_FFN_COLOUR, "-", "o"), (NO_FFN_COLOUR, "--", "^"), (NO_FFN_COLOUR, ":", "v"))


def _first_full(history: dict) -> int | None:
    for step, value in zip(history["step"], history["recall"]):
        if value >= 1.0:
            return int(step)
    return None


def _runs(runs) -> dict:
    """``{label: [TrainResult, ...]}``: each label's training results, one per seed, with equally long histories."""
    from .tiny_transformer import TrainResult

    if not isinstance(runs, dict) or not runs:
        raise TypeError(f"runs must be a non-empty dict {{label: list of TrainResult}}, got {describe(runs)}")
    for label, results in runs.items():
        if not isinstance(label, str):
            raise TypeError(f"runs' labels must be strings, got {describe(label)}")
        results = require_sequence(results, f"runs[{label!r}]", expected="a list of TrainResult",
                                   item=lambda r, name: require_instance(r, name, TrainResult))
        lengths = {len(r.history["step"]) for r in results}
        if len(lengths) != 1 or lengths.pop() < 2:
            raise ValueError(f"runs[{label!r}] must hold histories of one length, two records or more")
    return runs


@styled
def training_figure(runs: dict, chance: float) -> BookFigure:
    """Loss (top) and recall (bottom) against the training step, mean and 95% interval over seeds.

    ``runs`` maps a label (``"with FFNs"``, ``"without FFNs"``, ...) to a
    list of :class:`~ffnbook.tiny_transformer.TrainResult`, one per seed; the
    model with FFNs (the first label) is drawn in orange, the models without
    FFNs in grey, the second solid, the third dashed, a fourth dotted.
    Recall of the held-out facts of the first label is drawn in green.
    """
    runs = _runs(runs)
    chance = require_number(chance, "chance", low=0, high=1, low_open=True)
    if len(runs) > len(_RUN_STYLES):
        raise ValueError(f"runs must hold at most {len(_RUN_STYLES)} labels, got {len(runs)}")
    fig = new_figure(6.2, 7.0)
    loss_ax, recall_ax = fig.subplots(2, 1, sharex=True)
    described = []
    for i, (label, results) in enumerate(runs.items()):
        colour, linestyle, marker = _RUN_STYLES[i]
        steps = results[0].history["step"]
        _band(loss_ax, steps[1:], [r.history["loss"][1:] for r in results], colour, label, marker, linestyle)
        _band(recall_ax, steps, [[100 * v for v in r.history["recall"]] for r in results], colour,
              f"{label}, trained facts", marker, linestyle)
        firsts = [_first_full(r.history) for r in results]
        finals = [r.history["recall"][-1] for r in results]
        reached = ", ".join("never" if f is None else str(f) for f in firsts)
        described.append(f"{label}: loss from {np.mean([r.history['loss'][1] for r in results]):.2f} to "
                         f"{np.mean([r.history['loss'][-1] for r in results]):.3f} (mean), recall of the trained facts "
                         f"{100 * min(finals):.0f} to {100 * max(finals):.0f}% at the end, all of them first "
                         f"recalled at step {reached}")
        if i == 0 and results[0].history.get("held_out_recall"):
            _band(recall_ax, steps, [[100 * v for v in r.history["held_out_recall"]] for r in results], HELD_OUT_COLOUR,
                  f"{label}, held-out facts", marker="s")
    loss_ax.set_yscale("log")
    loss_ax.set_ylabel("cross-entropy loss")
    loss_ax.set_title("Training loss (mean; band: 95% interval)", fontsize=11)
    loss_ax.legend(loc="lower left", fontsize=9)  # the curves start high and fall to the right
    recall_ax.axhline(100 * chance, color="#222222", linestyle="--", linewidth=1.0, label="chance")
    recall_ax.set_ylim(-3, 103)
    recall_ax.set_xlabel("training step")
    recall_ax.set_ylabel("facts recalled (%)")
    recall_ax.set_title("Recall on fresh prompts", fontsize=11)
    # Below the curves once they have risen, above the held-out line and chance near zero.
    recall_ax.legend(loc="lower right", bbox_to_anchor=(1.0, 0.08), fontsize=8.5)
    n = len(next(iter(runs.values())))
    return BookFigure(fig, (
        f"Two line charts against the training step, each line the mean over {n} seeds with its 95% interval "
        f"shaded. Top: training loss on a logarithmic scale. Bottom: recall on fresh prompts, with a dashed line at "
        f"chance ({100 * chance:.1f}%). " + "; ".join(described) + "."))


def active_share_by_site(model: TinyTransformer, prompts: Prompts) -> list[dict[str, float]]:
    """Per block, the share of FFN units with a non-zero activation, per token, at each kind of position.

    Keys: the kinds of :data:`POSITION_CLASSES` and ``"all"`` (every position).
    """
    check_prompts(prompts, check_transformer(model))
    classes = torch.from_numpy(position_classes(prompts))
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden
    shares = []
    for h in hidden:
        active = (h > 0).double().mean(dim=-1)  # (n, seq_len): share of units on, per token
        row = {c: float(active[classes == i].mean()) for i, c in enumerate(POSITION_CLASSES)}
        row["all"] = float(active.mean())
        shares.append(row)
    return shares


def _shares(shares, name: str) -> list:
    """One :func:`active_share_by_site` per seed: lists of ``{site: share}`` dicts, one per block."""
    def seed(blocks, label):
        def block(row, where):
            if not isinstance(row, dict) or not set(ABLATION_SITES) <= row.keys():
                raise TypeError(f"{where} must be a dict with keys {', '.join(ABLATION_SITES)}, got {describe(row)}")
            for site in ABLATION_SITES:
                require_number(row[site], f"{where}[{site!r}]", low=0, high=1)
            return row
        return require_sequence(blocks, label, expected="a list of per-block dicts", item=block)
    shares = require_sequence(shares, name, expected="a list of active_share_by_site() results, one per seed",
                              item=seed)
    if len({len(s) for s in shares}) != 1:
        raise ValueError(f"{name} must hold the same number of blocks for every seed")
    return shares


def sparsity_table(at_init: Sequence[list[dict]], trained: Sequence[list[dict]]):
    """Share of FFN units active per token, at initialisation and after training, by kind of position.

    Each argument holds one :func:`active_share_by_site` per seed; cells show
    the mean over seeds and, after training, ± half its 95% interval.
    """
    from .display import MarkdownTable

    at_init, trained = _shares(at_init, "at_init"), _shares(trained, "trained")
    if len(at_init[0]) != len(trained[0]):
        raise ValueError(f"at_init and trained must have the same blocks, got {len(at_init[0])} and {len(trained[0])}")
    rows = []
    for block in range(len(trained[0])):
        row = {"block": f"FFN {block}"}
        for site in ABLATION_SITES:
            before = np.mean([s[block][site] for s in at_init])
            row[site] = f"{100 * before:.0f} → {_mean_pm([s[block][site] for s in trained], unit='')}"
        rows.append(row)
    return MarkdownTable(rows, [("units on (%)", "block", "s")] + [(_site_label(w), w, "s") for w in ABLATION_SITES])


def kind_table(by_site: dict, at_init: dict | None = None) -> object:
    """Unit counts per kind, mean over seeds ± half its 95% interval: ``by_site[(block, where)]``, one reading per seed.

    ``at_init``, with the same keys: the same reading of the models before
    training, one row each after the trained rows, the baseline every count
    is read against.
    """
    from .display import MarkdownTable

    tables = {"trained": by_site} if at_init is None else {"trained": by_site, "at initialisation": at_init}
    for name, table in tables.items():
        if not isinstance(table, dict) or not table:
            raise TypeError(f"{'by_site' if name == 'trained' else 'at_init'} must be a non-empty dict "
                            f"{{(block, where): readings per seed}}, got {describe(table)}")
        for key, per_seed in table.items():
            if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str)):
                raise TypeError(f"by_site's and at_init's keys must be (block, where) tuples, got {describe(key)}")
            require_sequence(per_seed, f"by_site[{key!r}]", expected="a list of read_neurons() results, one per seed",
                             item=lambda r, label: _readings(r, name=label))
    rows = []
    for name, table in tables.items():
        for (block, where), per_seed in table.items():
            counts = np.array([[kind_counts(r)[k] for k in NEURON_KINDS] for r in per_seed])
            row = {"units": f"FFN {block} at {_site_label(where)}" + ("" if name == "trained" else f", {name}")}
            for j, kind in enumerate(NEURON_KINDS):
                row[kind] = _mean_pm(counts[:, j], scale=1.0, digits=1, unit="")
            rows.append(row)
    return MarkdownTable(rows, [("units read", "units", "s")] + [(k, k, "s") for k in NEURON_KINDS])


def capacity_sweep(widths: Sequence[int], n_subjects: Sequence[int], *, n_relations: int, n_objects: int,
                   d_model: int, n_heads: int, n_blocks: int, seq_len: int, train_config: TrainConfig,
                   seeds: Sequence[int] = (0,)) -> list[dict]:
    """Train one model per FFN width, world size and seed (width 0: no FFN); recall and bits on all its facts.

    Worlds have ``n_relations`` relations and each number of subjects in
    ``n_subjects``; world and seed go together (seed ``s`` draws world
    ``s``, the model's initial weights and its batches). The models of one
    seed share every initial weight outside their FFNs, whatever their
    width (:func:`~ffnbook.tiny_transformer.train_replicas`), so a
    difference between widths is the FFN's, not another draw's. Every model
    gets the same ``train_config`` and trains on every fact of its world;
    all the models of one world size train together. Rows: ``{"d_ff",
    "n_facts", "seed", "recall", "history", "bits", "parameters"}``:
    ``recall`` on fresh prompts at the end (``history`` has it at every
    record, for smaller budgets), ``bits`` what the final model holds about
    its facts (:func:`bits_held`), ``parameters`` its trainable
    parameters (without FFN for width 0).
    """
    from .tiny_transformer import Replica, parameter_count, train_replicas

    widths = require_sequence(widths, "widths", item=lambda w, label: require_nonnegative_int(w, label, maximum=4096))
    n_subjects = require_sequence(n_subjects, "n_subjects",
                                  item=lambda n, label: require_positive_int(n, label, maximum=4096))
    seeds = require_sequence(seeds, "seeds", item=lambda v, label: require_seed(v, label))
    require_instance(train_config, "train_config", TrainConfig)
    if len(widths) * len(seeds) > 256:
        raise ValueError(f"widths and seeds make {len(widths) * len(seeds)} models per world size; at most 256 train "
                         f"together")
    rows = []
    for subjects in n_subjects:
        replicas = []
        for d_ff in widths:
            for seed in seeds:
                world = make_world(subjects, n_relations, n_objects, seed=seed)
                replicas.append(Replica(world, world.all_facts(), seed, None, d_ff))
        config = ModelConfig(vocab_size=replicas[0].world.vocab_size, seq_len=seq_len, d_model=d_model,
                             n_heads=n_heads, d_ff=max(max(widths), 1), n_blocks=n_blocks)
        for replica, result in zip(replicas, train_replicas(replicas, config, train_config)):
            world = replica.world
            rows.append({"d_ff": replica.d_ff, "n_facts": world.n_facts, "seed": replica.seed,
                         "recall": result.history["recall"][-1], "history": result.history,
                         "bits": bits_held(result.model, world, world.all_facts(), seed=replica.seed),
                         "parameters": parameter_count(result.model.config, ffn=replica.d_ff > 0)})
    return rows


def capacity_matched_controls(widths: Sequence[int], n_subjects: int, *, n_relations: int, n_objects: int,
                              d_model: int, n_heads: int, n_blocks: int, seq_len: int, train_config: TrainConfig,
                              seeds: Sequence[int] = (0,)) -> list[dict]:
    """For each FFN width of :func:`capacity_sweep`, models without FFN as large: the parameter-matched controls.

    For every width ``w > 0`` and seed, a model without FFN whose residual
    stream is widened (:func:`~ffnbook.tiny_transformer.matched_width_without_ffn`)
    until it has as many trainable parameters as the sweep's model of width
    ``w``, trained on the same world with the same ``train_config``. If the
    FFN's units helped only by adding parameters, these would recall as
    much. Rows: ``{"matched_to", "d_model", "n_facts", "seed", "recall",
    "history", "parameters"}``.
    """
    from .tiny_transformer import Replica, matched_width_without_ffn, parameter_count, train_replicas

    widths = require_sequence(widths, "widths", item=lambda w, label: require_positive_int(w, label, maximum=4096))
    n_subjects = require_positive_int(n_subjects, "n_subjects", maximum=4096)
    seeds = require_sequence(seeds, "seeds", item=lambda v, label: require_seed(v, label))
    require_instance(train_config, "train_config", TrainConfig)
    worlds = [make_world(n_subjects, n_relations, n_objects, seed=seed) for seed in seeds]
    rows = []
    for width in widths:
        with_ffn = ModelConfig(vocab_size=worlds[0].vocab_size, seq_len=seq_len, d_model=d_model, n_heads=n_heads,
                               d_ff=width, n_blocks=n_blocks)
        matched = replace(with_ffn, d_model=matched_width_without_ffn(with_ffn))
        replicas = [Replica(w, w.all_facts(), seed, None, 0) for w, seed in zip(worlds, seeds)]
        for replica, result in zip(replicas, train_replicas(replicas, matched, train_config)):
            rows.append({"matched_to": width, "d_model": matched.d_model, "n_facts": replica.world.n_facts,
                         "seed": replica.seed, "recall": result.history["recall"][-1], "history": result.history,
                         "parameters": parameter_count(matched, ffn=False)})
    return rows


def _capacity_rows(rows, keys=("d_ff", "n_facts", "seed", "recall")) -> list[dict]:
    """Rows of :func:`capacity_sweep` with at least ``keys``."""
    def row(r, label):
        if not isinstance(r, dict) or not set(keys) <= r.keys():
            raise TypeError(f"{label} must be a row of capacity_sweep(), a dict with keys {', '.join(keys)}, "
                            f"got {describe(r)}")
        require_nonnegative_int(r["d_ff"], f"{label}['d_ff']")
        require_positive_int(r["n_facts"], f"{label}['n_facts']")
        require_number(r["recall"], f"{label}['recall']", low=0, high=1)
        return r
    return require_sequence(rows, "rows", expected="a list of capacity_sweep() rows", item=row)


def _recall_at(row: dict, step: int | None) -> float:
    """A capacity row's recall at a recorded training step (None: at the end)."""
    if step is None:
        return row["recall"]
    history = row.get("history")
    if not isinstance(history, dict) or step not in history.get("step", ()):
        raise ValueError(f"step {step} is not a recorded step of the rows' histories")
    return history["recall"][history["step"].index(step)]


def unit_gains(rows: list[dict], d_ff: int, step: int | None = None, n_facts: int | None = None) -> list[float]:
    """Each seed's recalled facts gained per FFN unit over its own model without FFN, in the order of the seeds.

    ``(recall(d_ff) - recall(0)) * n_facts / d_ff`` for every seed that has
    both models in ``rows`` (:func:`capacity_sweep`), at the end or at a
    recorded ``step``; ``n_facts`` picks a world size (needed when the rows
    hold several).

    >>> rows = [{"d_ff": 0, "n_facts": 100, "seed": 0, "recall": 0.5},
    ...         {"d_ff": 10, "n_facts": 100, "seed": 0, "recall": 0.75}]
    >>> unit_gains(rows, 10)
    [2.5]
    """
    rows = _capacity_rows(rows)
    d_ff = require_positive_int(d_ff, "d_ff")
    sizes = sorted({r["n_facts"] for r in rows})
    if n_facts is None and len(sizes) > 1:
        raise ValueError(f"rows hold several world sizes {sizes}: pass n_facts")
    n_facts = sizes[0] if n_facts is None else require_positive_int(n_facts, "n_facts")
    if step is not None:
        step = require_nonnegative_int(step, "step")
    base = {r["seed"]: _recall_at(r, step) for r in rows if r["d_ff"] == 0 and r["n_facts"] == n_facts}
    mine = sorted((r for r in rows if r["d_ff"] == d_ff and r["n_facts"] == n_facts and r["seed"] in base),
                  key=lambda r: r["seed"])
    if not mine:
        raise ValueError(f"rows hold no seed with both d_ff={d_ff} and d_ff=0 at n_facts={n_facts} "
                         f"(their world sizes: {sizes})")
    return [(_recall_at(r, step) - base[r["seed"]]) * n_facts / d_ff for r in mine]


def capacity_table(rows: list[dict], step: int | None = None) -> dict:
    """Per (d_ff, n_facts): recall over seeds, and the facts each FFN unit adds, at the end or at a recorded ``step``.

    Each entry holds recall's :func:`~ffnbook.controls.spread` fields
    (``mean``, ``low``, ``high``, ``ci_low``, ``ci_high``) and ``n``; for
    ``d_ff > 0`` also the gain per unit, ``(recall(d_ff) - recall(0)) *
    n_facts / d_ff``, each seed's model against the no-FFN model of the
    same seed (same world, same initial weights outside the FFN): its mean
    as ``gain_per_unit`` and ``gain_low``, ``gain_high``, ``gain_ci_low``,
    ``gain_ci_high``. Where the rows carry ``bits`` and ``parameters`` (at
    the end only), also ``bits_per_parameter``, its mean over seeds.
    """
    rows = _capacity_rows(rows)
    if step is not None:
        step = require_nonnegative_int(step, "step")
    table = {}
    for d_ff, n_facts in sorted({(r["d_ff"], r["n_facts"]) for r in rows}):
        mine = sorted((r for r in rows if r["d_ff"] == d_ff and r["n_facts"] == n_facts), key=lambda r: r["seed"])
        recall_spread = spread([_recall_at(r, step) for r in mine])
        entry = {key: getattr(recall_spread, key) for key in ("mean", "low", "high", "ci_low", "ci_high")}
        entry.update(n=len(mine), gain_per_unit=None, gain_low=None, gain_high=None, gain_ci_low=None,
                     gain_ci_high=None, bits_per_parameter=None)
        if d_ff > 0 and any(r["d_ff"] == 0 and r["n_facts"] == n_facts for r in rows):
            gain = spread(unit_gains(rows, d_ff, step, n_facts))
            entry.update(gain_per_unit=gain.mean, gain_low=gain.low, gain_high=gain.high,
                         gain_ci_low=gain.ci_low, gain_ci_high=gain.ci_high)
        if step is None and all("bits" in r and "parameters" in r for r in mine):
            entry["bits_per_parameter"] = float(np.mean([r["bits"] / r["parameters"] for r in mine]))
        table[(d_ff, n_facts)] = entry
    return table


@styled
def capacity_figure(rows: list[dict], chance: float, d_model: int) -> BookFigure:
    """Top: recall against the FFN width (0: no FFN), one line per world size; bottom: the loss curves."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    rows = _capacity_rows(rows, ("d_ff", "n_facts", "seed", "recall", "history"))
    table = capacity_table(rows)
    chance = require_number(chance, "chance", low=0, high=1, low_open=True)
    d_model = require_positive_int(d_model, "d_model")
    widths = sorted({k[0] for k in table})
    sizes = sorted({k[1] for k in table})
    fig = new_figure(6.2, 7.2)
    recall_ax, loss_ax = fig.subplots(2, 1)
    x = np.arange(len(widths))
    markers = "osD^v"
    greys = ["#222222", "#666666", "#999999"]
    described = []
    for i, n_facts in enumerate(sizes):
        mean = [100 * table[(w, n_facts)]["mean"] for w in widths]
        low = [100 * table[(w, n_facts)]["ci_low"] for w in widths]
        high = [100 * table[(w, n_facts)]["ci_high"] for w in widths]
        colour = FFN_COLOUR if len(sizes) == 1 else greys[i % len(greys)]
        error = np.array([np.subtract(mean, low), np.subtract(high, mean)])
        with_ffn = [j for j, w in enumerate(widths) if w > 0]  # the model without FFN is not drawn as an FFN
        recall_ax.errorbar(x[with_ffn], np.take(mean, with_ffn), yerr=error[:, with_ffn], color=colour,
                           marker=markers[i % len(markers)], capsize=4,
                           label=f"{n_facts} facts" if len(sizes) > 1 else None)
        if widths[0] == 0:
            recall_ax.errorbar(x[:1], mean[:1], yerr=error[:, :1], color=NO_FFN_COLOUR if len(sizes) == 1 else colour,
                               marker=markers[i % len(markers)], capsize=4, linestyle="none")
        described.append(f"{n_facts} facts: " + ", ".join(
            f"d_ff {w}: {m:.0f}% ({lo:.0f} to {hi:.0f})" for w, m, lo, hi in zip(widths, mean, low, high)))
    recall_ax.axhline(100 * chance, color="#222222", linestyle="--", linewidth=1.0, label="chance")
    recall_ax.set_xticks(x, ["0\n(no FFN)" if w == 0 else str(w) for w in widths])
    recall_ax.set_ylim(-3, 103)
    recall_ax.set_xlabel(f"FFN width d_ff (d_model = {d_model})")
    recall_ax.set_ylabel("facts recalled (%)")
    recall_ax.set_title(f"Recall of {' / '.join(map(str, sizes))} facts (mean; bars: 95% interval)",
                        fontsize=11)
    recall_ax.legend(loc="upper left", fontsize=9)
    shades = [NO_FFN_COLOUR if w == 0 else FFN_COLOUR for w in widths]
    alphas = [1.0] + list(np.linspace(0.45, 1.0, len(widths) - 1))
    for w, colour, alpha in zip(widths, shades, alphas):
        runs = [r for r in rows if r["d_ff"] == w and r["n_facts"] == sizes[-1]]
        steps = runs[0]["history"]["step"][1:]
        loss_ax.plot(steps, np.mean([r["history"]["loss"][1:] for r in runs], axis=0), color=colour, alpha=alpha,
                     marker="o", markersize=3, label="no FFN" if w == 0 else f"d_ff = {w}")
    loss_ax.set_yscale("log")
    loss_ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    loss_ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    loss_ax.yaxis.set_minor_formatter(NullFormatter())
    loss_ax.set_xlabel("training step")
    loss_ax.set_ylabel("cross-entropy loss")
    loss_ax.set_title(f"Training loss with {sizes[-1]} facts (mean over seeds)", fontsize=11)
    loss_ax.legend(loc="lower left", fontsize=9)
    return BookFigure(fig, (
        f"Top: recall at the end of training against the FFN width, 0 meaning no FFN, mean over seeds with the "
        f"95% interval of the mean as bars, chance dashed at {100 * chance:.1f}%. " + "; ".join(described) + ". Bottom: the mean "
        "training loss of each width against the step, on a logarithmic scale: the model without FFN in grey, "
        "the FFN widths in orange."))

