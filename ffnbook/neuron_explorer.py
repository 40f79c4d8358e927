"""The neuron explorer's data: for every FFN hidden unit of a trained tiny transformer, four readings.

The trained-FFN page lets a reader pick a block and a unit and see, without a
kernel, what :mod:`ffnbook.trained_ffn` measures about it:

* **where it acts**: its mean activation at each kind of position
  (:data:`~ffnbook.trained_ffn.POSITION_CLASSES`: subject, relation, filler, ``→``);
* **what drives it**: the facts whose prompts activate it most, read at the
  position where its block does its work (:func:`~ffnbook.trained_ffn.answer_activations`),
  with the label :func:`~ffnbook.trained_ffn.read_neurons` gives it;
* **what its value writes**: the tokens its value vector raises most through the
  unembedding, with the amount (:func:`~ffnbook.trained_ffn.value_logits`);
* **what the model needs of it**: how many prompts lose their right answer when the
  unit alone is silenced, at every position and at the position where its block acts
  (the counts behind :func:`~ffnbook.trained_ffn.unit_ablation_effect`, computed for
  all units of a block in a few batched passes).

:func:`explorer_data` returns all of it as one JSON-ready dict, rounded for the
browser; the page writes it to a file the explorer loads on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch

from ._checks import require_choice, require_names, require_positive_int
from .facts import FactWorld, Prompts, check_world
from .plotting import FFN_COLOUR
from .tiny_transformer import TinyTransformer, check_prompts, check_transformer, guessed_objects, layer_norm
from .trained_ffn import (
    ABLATION_SITES,
    NEURON_KINDS,
    POSITION_CLASSES,
    _block,
    _site_mask,
    answer_activations,
    position_classes,
    read_neurons,
    value_logits,
)

#: Where a unit's strongest facts can be read, a kind of position every prompt has once.
READ_SITES = ("query", "subject", "relation")

#: Decimal places kept for activations and logit contributions (the explorer shows two).
DECIMALS = 3

#: Units silenced together in one batched forward pass (bounds the memory of a pass).
UNITS_PER_PASS = 32


def class_means(model: TinyTransformer, prompts: Prompts) -> list[np.ndarray]:
    """Per block, each hidden unit's mean activation at each kind of position: ``(d_ff, 4)``.

    The columns follow :data:`~ffnbook.trained_ffn.POSITION_CLASSES`; the mean
    runs over every position of that kind in every prompt.
    """
    check_prompts(prompts, check_transformer(model))
    classes = position_classes(prompts)
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden
    masks = np.stack([classes == c for c in range(len(POSITION_CLASSES))]).astype(np.float64)  # (4, n, seq)
    counts = masks.sum(axis=(1, 2))
    return [np.einsum("cnt,ntu->uc", masks, h.numpy().astype(np.float64)) / counts for h in hidden]


class Silencing(NamedTuple):
    """What silencing each hidden unit of one block alone does to the answers (arrays indexed by unit)."""

    answers_lost: np.ndarray  #: how many prompts lose their right answer (negative when they gain it), ``(d_ff,)`` int
    margin_lost: np.ndarray  #: mean drop of the right object's logit lead over the best other object, ``(d_ff,)``
    n_prompts: int  #: how many prompts were asked


def _answer_margins(logits: torch.Tensor, world: FactWorld, answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Whether each row of ``logits`` ``(n, vocab)`` names its answer among the objects, and the right object's lead."""
    objects = torch.from_numpy(world.object_tokens())
    scores = logits[:, objects]
    right = torch.from_numpy(np.searchsorted(world.object_tokens(), answers))
    own = scores.gather(1, right[:, None])[:, 0]
    others = scores.scatter(1, right[:, None], float("-inf")).max(dim=1).values
    return (guessed_objects(logits, world) == answers), (own - others).numpy().astype(np.float64)


def _logits_after(model: TinyTransformer, block: int, residual: torch.Tensor) -> torch.Tensor:
    """The ``→`` logits when ``residual`` leaves block ``block``: the later blocks, the final norm, the unembedding.

    The rest of :meth:`~ffnbook.tiny_transformer.TinyTransformer.forward`, from that block on.
    """
    for later in model.blocks[block + 1:]:
        residual = later(residual)
    return model.unembed(layer_norm(residual[:, -1]))


def silencing(model: TinyTransformer, world: FactWorld, prompts: Prompts, block: int, *,
              where: str = "all") -> Silencing:
    """Silence each hidden unit of one block alone, at the positions of kind ``where``; count what the answers lose.

    Unit ``i``'s contribution ``m_i(x) v_i`` is removed from the FFN's output
    at the positions of kind ``where`` (one of
    :data:`~ffnbook.trained_ffn.ABLATION_SITES`), as
    :func:`~ffnbook.trained_ffn.unit_ablation_effect` does unit by unit
    (``answers_lost / n_prompts`` is its recall lost). Here the residual
    stream after the block is recorded once, and only the later blocks run
    again, for :data:`UNITS_PER_PASS` units in one batched pass. Besides the
    answers lost, it reports how much the right object's lead over the best
    other object shrinks on average: a unit can matter without flipping an answer.
    """
    check_world(world)
    check_prompts(prompts, check_transformer(model))
    block = _block(model, block)
    mask = _site_mask(prompts, require_choice(where, "where", ABLATION_SITES)).unsqueeze(-1)  # (n, seq, 1)
    n = len(prompts.tokens)
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
        after = trace.final if block == len(model.blocks) - 1 else trace.block_inputs[block + 1]
        hidden = trace.ffn_hidden[block]
        values = model.blocks[block].ffn.down.weight  # (d_model, d_ff): column i is unit i's value
        right, margin = _answer_margins(_logits_after(model, block, after), world, prompts.answers)
        d_ff = values.shape[1]
        lost, margin_lost = np.empty(d_ff, dtype=np.int64), np.empty(d_ff)
        for start in range(0, d_ff, UNITS_PER_PASS):
            units = torch.arange(start, min(start + UNITS_PER_PASS, d_ff))
            # (units, n, seq, d_model): each unit's contribution where it is silenced.
            contribution = hidden[..., units].permute(2, 0, 1).unsqueeze(-1) * values[:, units].T[:, None, None, :]
            silenced = (after - torch.where(mask, contribution, 0.0)).reshape(-1, *after.shape[1:])
            now_right, now_margin = _answer_margins(_logits_after(model, block, silenced), world,
                                                    np.tile(prompts.answers, len(units)))
            lost[units.numpy()] = int(right.sum()) - now_right.reshape(len(units), n).sum(axis=1)
            margin_lost[units.numpy()] = (margin - now_margin.reshape(len(units), n)).mean(axis=1)
    return Silencing(lost, margin_lost, n)


def _top(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the ``k`` largest entries of each row (largest first, ties by index) and their values."""
    order = np.argsort(-values, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(values, order, axis=1)


def _rounded(a) -> list:
    """Rounded to :data:`DECIMALS` places, with no negative zero: a value that rounds to zero is written ``0.0``.

    (-0.0001 rounds to -0.0, which JSON keeps and JavaScript then shows as "0": one
    machine's rounding would otherwise decide how the file reads.)

    >>> _rounded([-0.0001, 0.00049, -1.23456])
    [0.0, 0.0, -1.235]
    """
    return (np.round(np.asarray(a, dtype=np.float64), DECIMALS) + 0.0).tolist()


def explorer_data(model: TinyTransformer, world: FactWorld, prompts: Prompts, n_contexts: int, *,
                  sites: Sequence[str] = ("subject", "query"), n_top: int = 5) -> dict:
    """Everything the neuron explorer shows, for every hidden unit of every block: a JSON-ready dict.

    ``prompts`` come from :func:`ffnbook.facts.fact_prompts` with ``n_contexts``
    (grouped fact by fact); ``sites`` names, per block, the kind of position
    where the block does its work (one of :data:`READ_SITES`). Its ``box`` holds
    what the explorer's controls need before the rest arrives: ``d_ff``, the
    ``sites``, the ``initial`` ``[block, unit]`` (the last block's unit whose
    silencing at its site costs the right answers most lead) and the FFN ``colour``. The dict names
    the position ``classes``, the unit ``kinds`` (:data:`~ffnbook.trained_ffn.NEURON_KINDS`),
    the ``tokens`` and the ``facts`` (``[subject, relation, answer]`` token ids, one
    row per fact of ``prompts``), and holds per block, unit by unit (lists indexed by unit):

    * ``act``: the mean activation at each kind of position (:func:`class_means`);
    * ``facts`` and ``fact_act``: the ``n_top`` facts that drive it most at its
      block's site and those activations (:func:`~ffnbook.trained_ffn.answer_activations`);
      ``kind`` (an index into ``kinds``) and ``strong`` (how many facts reach
      :data:`~ffnbook.trained_ffn.STRONG_SHARE` of its peak) from
      :func:`~ffnbook.trained_ffn.read_neurons`;
    * ``tokens`` and ``logit``: the ``n_top`` tokens its value raises most
      through the unembedding, and by how much per unit of activation
      (:func:`~ffnbook.trained_ffn.value_logits`);
    * ``lost`` and ``margin``: ``[every position, the site]``, the answers lost
      and the mean drop of the right answer's lead when the unit alone is
      silenced (:func:`silencing`), on one prompt per fact (``n_prompts`` of
      them; ``lead`` is the intact model's mean lead on them).

    Activations and logits are rounded to :data:`DECIMALS` places; counts are exact.
    """
    check_world(world)
    check_prompts(prompts, check_transformer(model))
    n_contexts = require_positive_int(n_contexts, "n_contexts")
    n_top = require_positive_int(n_top, "n_top")
    n_blocks = len(model.blocks)
    sites = require_names(sites, "sites", READ_SITES)
    if len(sites) != n_blocks:
        raise ValueError(f"sites must name one kind of position per block ({n_blocks}), got {len(sites)}")
    if model.config.vocab_size != world.vocab_size:
        raise ValueError(f"model must have world's vocabulary of {world.vocab_size} tokens, "
                         f"got {model.config.vocab_size}")
    if not np.array_equal(world.object_token(world.answers(prompts.facts)), prompts.answers):
        raise ValueError("prompts must be of this world: their answers are not world's objects for their facts")
    facts = np.asarray(prompts.facts)[::n_contexts]
    answers = world.answers(facts)
    object_tokens = world.object_tokens()
    means = class_means(model, prompts)
    asked = Prompts(*(np.asarray(field)[::n_contexts] for field in prompts))  # one prompt per fact
    with torch.no_grad():
        lead = _answer_margins(model.trace(asked.tokens).logits[:, -1], world, asked.answers)[1]
    blocks = []
    for b, site in enumerate(sites):
        acts = answer_activations(model, prompts, n_contexts, where=site)[b]  # checks the grouping
        scores = value_logits(model, b)
        readings = read_neurons(acts, facts, answers, scores, object_tokens, block=b)
        top_facts, top_acts = _top(acts.T, min(n_top, len(facts)))
        top_tokens, top_scores = _top(scores, min(n_top, scores.shape[1]))
        silenced = [silencing(model, world, asked, b, where=w) for w in ("all", site)]
        blocks.append({
            "block": b, "site": site, "act": _rounded(means[b]),
            "facts": top_facts.tolist(), "fact_act": _rounded(top_acts),
            "kind": [list(NEURON_KINDS).index(r.kind) for r in readings], "strong": [len(r.strong) for r in readings],
            "tokens": top_tokens.tolist(), "logit": _rounded(top_scores),
            "lost": np.stack([s.answers_lost for s in silenced], axis=1).tolist(),
            "margin": _rounded(np.stack([s.margin_lost for s in silenced], axis=1)),
        })
    last = blocks[-1]
    initial = [last["block"], int(np.argmax(np.asarray(last["margin"])[:, 1]))]
    return {
        "box": {"d_ff": int(model.config.d_ff), "sites": list(sites), "initial": initial, "colour": FFN_COLOUR},
        "classes": list(POSITION_CLASSES), "kinds": list(NEURON_KINDS), "tokens": world.token_names(),
        "facts": np.column_stack([world.subject_token(facts[:, 0]), world.relation_token(facts[:, 1]),
                                  world.object_token(answers)]).tolist(),
        "n_prompts": len(asked.tokens), "lead": round(float(lead.mean()), DECIMALS), "blocks": blocks,
    }
